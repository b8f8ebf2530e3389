/*
 * ingest.c - a finished attempt's records into PostgreSQL, in one
 * transaction, idempotently; the attempts one poll found ended are judged
 * on the engine's session and stored through the session pool's, several
 * at once (session_pool.h).  See engine.h.
 *
 * The attempt directory belongs to the run's user and the daemon reads it as
 * root, so files are opened without following links or blocking (a FIFO)
 * and must be regular files owned by that user: a user cannot make the
 * daemon read someone else's file.  Their size, their lines and the number
 * of records are bounded by the configuration (ingest_max_bytes,
 * ingest_max_line, ingest_max_records), and a record that is not UTF-8 is
 * refused: past any of them the attempt fails, and the error names the file
 * and the key.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "log.h"
#include "records.h"
#include "spool_space.h"
#include "utf8.h"
#include "util.h"

int ingest_open_owned(const char *path, uid_t uid)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != uid ||
	    st.st_nlink != 1) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Append "PATH: N bytes, over the limit of M bytes (KEY)" to err. */
static int over_limit(struct strbuf *err, const char *path, long long size,
		      long limit, const char *key)
{
	if (err)
		strbuf_addf(err, "%s: %lld bytes, over the limit of %ld bytes (%s)",
			    path, size, limit, key);
	return -EFBIG;
}

/* Read a whole owned file of at most max bytes; caller frees *out.  0,
 * -errno, -EPERM (not a regular file of uid's) or -EFBIG (err says so). */
static int read_owned(const char *path, uid_t uid, long max, char **out,
		      struct strbuf *err)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int fd = ingest_open_owned(path, uid);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -EIO;
	}
	if (st.st_size > max) {
		close(fd);
		return over_limit(err, path, (long long)st.st_size, max,
				  "ingest_max_line: exit.tsv is one line");
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	return 0;
}

int ingest_read_exit(const struct config *cfg, const char *dir, uid_t uid,
		     struct job_exit *ex, struct strbuf *err)
{
	char *path = xasprintf("%s/%s", dir, JOB_EXIT_FILE), *buf;
	/* one line and its LF */
	int rc = read_owned(path, uid, cfg->ingest_max_line + 1, &buf, err);

	if (rc == 0) {
		rc = job_exit_parse(buf, path, ex);
		free(buf);
	} else if (rc != -ENOENT && rc != -EFBIG) {
		log_warn("ignoring %s: %s", path,
			 rc == -EPERM ? "not a regular file owned by the run's user"
				      : strerror(-rc));
		rc = -EINVAL;
	}
	free(path);
	return rc;
}

/* JSON string literal of s. */
static void json_string(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			strbuf_addf(sb, "\\%c", c);
		else if (c < 0x20)
			strbuf_addf(sb, "\\u%04x", c);
		else
			strbuf_addch(sb, (char)c);
	}
	strbuf_addch(sb, '"');
}

struct copy_state {
	struct db *db;
	const struct step_row *s;
	const char *node;
	const char *path;
	struct strbuf row, json;
	struct strbuf *err;
	long seq;
	int rc;
};

/* PostgreSQL stores only well-formed UTF-8: a record with anything else
 * fails the attempt here, naming it, rather than the COPY. */
static int check_text(struct copy_state *cs, const struct rl_field *f)
{
	for (; f->key; f++) {
		if (!utf8_valid(f->value, strlen(f->value))) {
			strbuf_addf(cs->err, "%s:%ld: field '%s' is not valid "
				    "UTF-8", cs->path, cs->seq + 1, f->key);
			return -EILSEQ;
		}
	}
	return 0;
}

/* One record -> one COPY row: step, attempt, seq, run_id, kind, node, fields. */
static int copy_record(void *arg, const char *kind, const struct rl_field *f)
{
	struct copy_state *cs = arg;

	if (check_text(cs, f) < 0)
		return -EILSEQ;
	strbuf_reset(&cs->row);
	strbuf_reset(&cs->json);
	strbuf_addch(&cs->json, '{');
	for (const struct rl_field *p = f; p->key; p++) {
		if (p != f)
			strbuf_addch(&cs->json, ',');
		json_string(&cs->json, p->key);
		strbuf_addch(&cs->json, ':');
		json_string(&cs->json, p->value);
	}
	strbuf_addch(&cs->json, '}');
	strbuf_addf(&cs->row, "%ld\t%d\t%ld\t%ld\t", cs->s->id, cs->s->attempt,
		    cs->seq++, cs->s->run_id);
	db_copy_escape(&cs->row, kind);
	strbuf_addch(&cs->row, '\t');
	db_copy_escape(&cs->row, cs->node);
	strbuf_addch(&cs->row, '\t');
	db_copy_escape(&cs->row, cs->json.buf);
	strbuf_addch(&cs->row, '\n');
	if (db_copy_put(cs->db, cs->row.buf, cs->row.len) < 0) {
		cs->rc = -EIO;
		return -EIO;
	}
	return 0;
}

/* Lock the step row; true when this attempt is still waiting for ingest. */
static int claim_step(struct db *db, const struct step_row *s)
{
	char id[32], att[32];
	const char *params[] = { id, att };
	struct db_result *r;
	int claimed;

	snprintf(id, sizeof(id), "%ld", s->id);
	snprintf(att, sizeof(att), "%d", s->attempt);
	r = db_query(db, "select 1 from steps where id = $1 and attempt = $2"
			    " and state in ('pending', 'running') for update",
		     2, params);
	if (!r)
		return -EIO;
	claimed = db_rows(r) == 1;
	db_result_free(r);
	return claimed;
}

/* The configuration key of the limit behind records_each_limited()'s
 * rc, or NULL when rc is not a limit's. */
static const char *limit_key(int rc)
{
	switch (rc) {
	case -EFBIG: return "ingest_max_bytes";
	case -EMSGSIZE: return "ingest_max_line";
	case -E2BIG: return "ingest_max_records";
	}
	return NULL;
}

static int copy_records(struct db *db, const struct config *cfg,
			const struct step_row *s, FILE *in, const char *path,
			const char *node, struct strbuf *err)
{
	struct copy_state cs = { .db = db, .s = s, .node = node, .path = path,
				 .err = err };
	const struct records_limits lim = {
		.max_bytes = (size_t)cfg->ingest_max_bytes,
		.max_line = (size_t)cfg->ingest_max_line,
		.max_records = (size_t)cfg->ingest_max_records,
	};
	int rc;

	strbuf_init(&cs.row);
	strbuf_init(&cs.json);
	if (db_copy_begin(db, "copy step_records (step, attempt, seq, run_id,"
				 " kind, node, fields) from stdin") < 0) {
		rc = -EIO;
		goto out;
	}
	rc = in ? records_each_limited(in, path, NULL, &lim, copy_record, &cs,
				       err) : 0;
	if (limit_key(rc))
		strbuf_addf(err, " (%s)", limit_key(rc));
	if (rc == -EINVAL || rc == -EILSEQ || limit_key(rc)) {
		db_copy_end(db); /* ends the COPY; the caller rolls back */
		rc = -EINVAL;
		goto out;
	}
	if (db_copy_end(db) < 0 || cs.rc < 0) {
		strbuf_addf(err, "cannot store the records of %s: %s", path,
			    db_error(db));
		rc = -EINVAL; /* e.g. a trigger refused a record */
		if (!db_ok(db))
			rc = -EIO;
	}
out:
	strbuf_release(&cs.row);
	strbuf_release(&cs.json);
	return rc;
}

/* Store attempt dir's records.tsv for step s in one transaction on session
 * db and mark the step succeeded (node and start time from its exit record
 * ex).  Idempotent: an attempt already stored adds nothing.  Touches
 * nothing but db (a session of the pool may run it, in a thread of its
 * own).  0, -EIO (database: try again later) or -EINVAL (bad output, with
 * err). */
static int store_attempt(struct db *db, const struct config *cfg,
			 const struct step_row *s, const char *dir,
			 const struct job_exit *ex, uid_t owner,
			 struct strbuf *err)
{
	char *path = xasprintf("%s/%s", dir, JOB_RECORDS_FILE);
	struct step_change c = STEP_CHANGE_NONE;
	FILE *in = NULL;
	int rc = ingest_open_owned(path, owner), claimed;

	if (rc >= 0) {
		struct stat st;

		if (fstat(rc, &st) == 0 && st.st_size > cfg->ingest_max_bytes) {
			close(rc);
			over_limit(err, path, (long long)st.st_size,
				   cfg->ingest_max_bytes, "ingest_max_bytes");
			rc = -EINVAL;
			goto out;
		}
		in = fdopen(rc, "r");
		if (!in) {
			close(rc);
			rc = -errno;
		}
	}
	if (rc == -ENOENT) {
		rc = 0; /* a step may emit nothing */
	} else if (rc < 0) {
		strbuf_addf(err, "cannot read %s: %s", path,
			    rc == -EPERM ? "not a regular file owned by the run's user"
					 : strerror(-rc));
		rc = -EINVAL;
		goto out;
	}
	rc = -EIO;
	if (db_begin(db) < 0)
		goto out;
	claimed = claim_step(db, s);
	if (claimed <= 0) {
		db_rollback(db);
		rc = claimed; /* 0: already ingested, nothing to do */
		goto out;
	}
	rc = copy_records(db, cfg, s, in, path, ex->node, err);
	if (rc < 0)
		goto out_rollback;
	c.exec_node = ex->node;
	c.started_epoch = (long)ex->started;
	c.ended = true;
	c.job_id = -1;
	c.detail = "ingested";
	if (engine_step_record_state(db, s, "succeeded", &c) < 0 ||
	    db_commit(db) < 0) {
		rc = -EIO;
		goto out_rollback;
	}
	rc = 0;
	goto out;
out_rollback:
	db_rollback(db);
out:
	if (in)
		fclose(in);
	free(path);
	return rc;
}

/* ---- an ended attempt: ingested, retried or failed ---------------------- */

/* "9 (SIGKILL)" */
static void describe_signal(struct strbuf *sb, int sig)
{
	const char *abbrev = sigabbrev_np(sig);

	strbuf_addf(sb, "%d", sig);
	if (abbrev)
		strbuf_addf(sb, " (SIG%s)", abbrev);
}

static void describe_slurm_end(struct strbuf *sb, const struct step_row *s,
			       const struct attempt_end *end)
{
	if (s->on_daemon) {
		if (end)
			strbuf_addf(sb, "timed out after %ld s", s->timeout_s);
		else
			strbuf_addstr(sb, "daemon child ended without an exit record");
		return;
	}
	if (!end) {
		strbuf_addf(sb, "Slurm job %u vanished without an exit record",
			    s->job_id);
		return;
	}
	strbuf_addf(sb, "Slurm job %u ended %s", s->job_id, end->state);
	if (end->node && *end->node)
		strbuf_addf(sb, " on %s", end->node);
	if (end->signal > 0) {
		strbuf_addstr(sb, ", killed by signal ");
		describe_signal(sb, end->signal);
	} else if (end->exit_code > 0) {
		strbuf_addf(sb, " (exit code %d)", end->exit_code);
	}
	strbuf_addstr(sb, " without an exit record");
	if (end->trouble && *end->trouble)
		strbuf_addf(sb, ": %s", end->trouble);
}

/* ---- the attempts one poll found ended ----------------------------------- */

struct ended_attempt {
	const struct step_row *s;  /* borrowed until ingest_ended_run() */
	struct attempt_end end;    /* its strings are the three below */
	bool has_end;              /* end is Slurm's word (else none) */
	char *state, *node, *trouble; /* owned */
	char *dir;                 /* the attempt directory, owned */
	struct job_exit ex;        /* its exit record */
	uid_t uid;                 /* the run's user */
	int rc;                    /* store_attempt()'s */
	struct strbuf err;
};

void ingest_ended_add(struct ingest_ended *l, const struct step_row *s,
		      const struct attempt_end *end)
{
	struct ended_attempt *a;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->a = xrealloc(l->a, l->cap * sizeof(*l->a));
	}
	a = &l->a[l->n++];
	*a = (struct ended_attempt){ .s = s, .has_end = end != NULL };
	if (end) {
		a->end = *end;
		a->end.state = a->state = end->state ? xstrdup(end->state) : NULL;
		a->end.node = a->node = end->node ? xstrdup(end->node) : NULL;
		a->end.trouble = a->trouble =
			end->trouble ? xstrdup(end->trouble) : NULL;
	}
	a->dir = engine_attempt_dir(s, s->attempt);
	strbuf_init(&a->err);
}

/* Whether a's records are to be stored (store_attempt); any other end is
 * dealt with here: the step failed, retried, given back to wait for spool
 * space, or cancelled. */
static bool judge_ended(struct engine *e, struct ended_attempt *a)
{
	const struct step_row *s = a->s;
	const struct attempt_end *end = a->has_end ? &a->end : NULL;
	const char *slurm_state = end ? end->state : NULL;
	struct job_exit *ex = &a->ex;
	struct strbuf *err = &a->err;
	gid_t gid = 0;
	int rc;

	if (engine_run_identity(e, s, &a->uid, &gid, err) < 0) {
		engine_step_failed(e, s, err->buf, false);
		return false;
	}
	rc = ingest_read_exit(e->cfg, a->dir, a->uid, ex, err);
	if (rc == -EFBIG) { /* what the user left there: no retry */
		engine_step_failed(e, s, err->buf, false);
		return false;
	}
	if (rc == 0 && ex->status == RL_OK &&
	    (!slurm_state || strcmp(slurm_state, "COMPLETED") == 0))
		return true;
	/* A full spool failed it (records or exit record unwritable): not
	 * the step's fault; it waits for space (spool_space.h) */
	if ((rc != 0 || ex->status != RL_OK) &&
	    spool_space_give_back(e, s, a->dir, rc == 0 ? ex->error : NULL))
		return false;
	/* Past its timeout, whoever ended it (our SIGTERM, Slurm's limit, the
	 * child's alarm) and however Slurm names the end: a time-out. */
	if (rc != 0 && s->timeout_s > 0 && s->run_s >= s->timeout_s) {
		strbuf_addf(err, "timed out after %ld s", s->timeout_s);
		if (end && !s->on_daemon)
			strbuf_addf(err, " (Slurm job %u ended %s)", s->job_id,
				    end->state);
		engine_step_failed(e, s, err->buf, true);
		return false;
	}
	if (slurm_state && strcmp(slurm_state, "CANCELLED") == 0) {
		struct step_change c = STEP_CHANGE_NONE;

		c.ended = true;
		c.error = "cancelled";
		c.detail = "Slurm job cancelled";
		engine_step_set_state(e, s, "cancelled", &c);
		engine_skip_dependents(e, s);
		return false;
	}
	if (rc == 0) {
		strbuf_addstr(err, ex->error[0] ? ex->error : "plugin failed");
		if (slurm_state && strcmp(slurm_state, "COMPLETED") != 0)
			strbuf_addf(err, " (Slurm: %s)", slurm_state);
		engine_step_failed(e, s, err->buf, ex->status == RL_RETRY);
	} else {
		describe_slurm_end(err, s, end);
		engine_step_failed_on(e, s, err->buf, true,
				      end && end->trouble && *end->trouble
					      ? end->node : NULL);
	}
	return false;
}

/* The attempts to store, for session_pool_for(). */
struct store_list {
	const struct config *cfg;
	struct ended_attempt **a;
};

static void store_one(struct db *db, size_t i, void *arg)
{
	const struct store_list *l = arg;
	struct ended_attempt *a = l->a[i];

	a->rc = store_attempt(db, l->cfg, a->s, a->dir, &a->ex, a->uid,
			      &a->err);
}

/* Store the attempts of l: through the pool's sessions when there are
 * several, else (or when the pool has none) on the engine's own. */
static void store_all(struct engine *e, struct store_list *l, size_t n)
{
	struct timespec t0, t1;
	int sessions = 0;

	if (n == 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (n > 1 && e->cfg->db_sessions > 1)
		sessions = session_pool_for(&e->pool, e->cfg,
					    (int)e->cfg->db_sessions, n,
					    store_one, l);
	if (sessions == 0)
		for (size_t i = 0; i < n; i++)
			store_one(e->db, i, l);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (n > 1)
		log_info("stored the records of %zu ended attempts through %d "
			 "session%s in %.0f ms", n, sessions ? sessions : 1,
			 sessions > 1 ? "s" : "",
			 1e3 * util_seconds_between(&t0, &t1));
}

void ingest_ended_run(struct engine *e, struct ingest_ended *el)
{
	struct store_list l = { .cfg = e->cfg };
	size_t n = 0;

	l.a = xcalloc(el->n ? el->n : 1, sizeof(*l.a));
	for (size_t i = 0; i < el->n; i++)
		if (judge_ended(e, &el->a[i]))
			l.a[n++] = &el->a[i];
	store_all(e, &l, n);
	/* -EIO: the database went away; the next tick tries again */
	for (size_t i = 0; i < n; i++)
		if (l.a[i]->rc == -EINVAL)
			engine_step_failed(e, l.a[i]->s, l.a[i]->err.buf, false);
	for (size_t i = 0; i < el->n; i++) {
		struct ended_attempt *a = &el->a[i];

		free(a->state);
		free(a->node);
		free(a->trouble);
		free(a->dir);
		strbuf_release(&a->err);
	}
	free(l.a);
	free(el->a);
	*el = (struct ingest_ended)INGEST_ENDED_INIT;
}

void ingest_step_finished(struct engine *e, const struct step_row *s,
			  const struct attempt_end *end)
{
	struct ingest_ended l = INGEST_ENDED_INIT;

	ingest_ended_add(&l, s, end);
	ingest_ended_run(e, &l);
}
