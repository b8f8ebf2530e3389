/*
 * step_inputs.c - what the daemon knows, handed to a daemon-side step as
 * records: the run's snapshot and the history sets.  See step_inputs.h.
 */
#include "step_inputs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "options.h"
#include "plugin_loader.h"
#include "records.h"
#include "session_pool.h"
#include "site_files.h"
#include "spool_dirs.h"
#include "util.h"

#define HISTORY_INPUT "history"

/* The step's own value of option key, else the plugin's default. */
static const char *option_value(const struct job_spec *spec,
				const struct rl_plugin *p, const char *key)
{
	const struct rl_option *o;
	const char *v = NULL;

	for (size_t i = 0; i < spec->n_opts; i++)
		if (!strcmp(spec->opts[i].a, key))
			v = spec->opts[i].b;
	if (v)
		return v;
	o = options_find(p, key);
	return o ? o->default_value : NULL;
}

/* Append one record of `kind` per row of r, a field per column: every
 * column (keep_empty: the run's snapshot, whose fields are always there), or
 * those with a value (the history sets). */
static int rows_as_records(struct strbuf *out, const char *kind,
			   const struct db_result *r, bool keep_empty)
{
	int ncol = db_columns(r);
	struct rl_field *f = xcalloc((size_t)ncol + 1, sizeof(*f));
	int rc = 0;

	for (int row = 0; row < db_rows(r) && rc == 0; row++) {
		int n = 0;

		for (int c = 0; c < ncol; c++) {
			const char *v = db_value(r, row, c);

			if (v && (*v || keep_empty)) {
				f[n].key = db_column_name(r, c);
				f[n++].value = v;
			}
		}
		f[n].key = NULL;
		rc = records_format(out, kind, f);
	}
	free(f);
	return rc;
}

/* Run sql and append its rows as records (rows_as_records); -EIO with err
 * set ("cannot read the <what>: ..."). */
static int query_rows(struct engine *e, struct strbuf *out, const char *kind,
		      bool keep_empty, const char *what, const char *sql,
		      int nparams, const char *const *params, struct strbuf *err)
{
	struct db_result *r = db_query(e->db, sql, nparams, params);
	int rc;

	if (!r) {
		strbuf_addf(err, "cannot read the %s: %s", what, db_error(e->db));
		return -EIO;
	}
	rc = rows_as_records(out, kind, r, keep_empty);
	db_result_free(r);
	if (rc < 0)
		strbuf_addf(err, "a %s row does not make a record", what);
	return rc < 0 ? -EIO : 0;
}

/*
 * The history file being written (dir/history/records.tsv): records are
 * formatted into buf, and buf goes to the file whenever it passes
 * HISTORY_CHUNK bytes.  The queries are read HISTORY_BATCH rows at a time
 * (db_query_batches), so a set of any size (325,000 kernels' points, 144,000
 * GPU histories) costs the daemon a chunk and a batch of memory, never the
 * set (issue 27: the daemon's peak RSS under 64 MiB).
 */
#define HISTORY_CHUNK (1 << 20)
#define HISTORY_BATCH 10000

struct history_out {
	struct site_file file;
	struct strbuf buf;
	const char *dir;  /* dir/history, for messages */
	const char *kind; /* of the set being read */
};

static int history_flush(struct history_out *h)
{
	int rc = site_file_add(&h->file, h->buf.buf, h->buf.len);

	strbuf_reset(&h->buf);
	return rc;
}

/* db_query_batches' callback: a batch of the set's rows as records. */
static int history_rows(void *arg, const struct db_result *r)
{
	struct history_out *h = arg;

	if (rows_as_records(&h->buf, h->kind, r, false) < 0)
		return -EINVAL;
	return h->buf.len >= HISTORY_CHUNK ? history_flush(h) : 0;
}

/* A history set's query on session db: rows of kind, empty columns left
 * out, into h.  0, or -EIO with err set. */
static int query_records(struct db *db, struct history_out *h,
			 const char *kind, const char *sql, int nparams,
			 const char *const *params, struct strbuf *err)
{
	int rc;

	h->kind = kind;
	rc = db_query_batches(db, sql, nparams, params, HISTORY_BATCH,
			      history_rows, h);
	if (rc == -EIO)
		strbuf_addf(err, "cannot read the %s history: %s", kind,
			    db_error(db));
	else if (rc == -EINVAL)
		strbuf_addf(err, "a %s history row does not make a record", kind);
	else if (rc < 0)
		strbuf_addf(err, "cannot write %s/%s: %s", h->dir,
			    JOB_RECORDS_FILE, strerror(-rc));
	return rc < 0 ? -EIO : 0;
}

/*
 * Several queries of a history set, read at once through the engine's
 * session pool (session_pool.h), each on a session of its own: the
 * regressions' three (325,000 points of the run, as many of its baseline,
 * and their noise) are each seconds of the server's work at 50,000
 * kernels, and so is the fleet's one at 8,000 GPUs, read in parts (issue
 * 27).  The first query's records go to the history file
 * itself, each other's to an unnamed file of its own in the history
 * directory, appended to the history file, in order, once all are read:
 * the file is what reading them one after another writes, byte for byte.
 * With one session (db_sessions: 1), or when the pool or an unnamed file
 * cannot be had, they are read one after another on the engine's session.
 */
struct history_query {
	const char *kind, *sql;
	const char *params[4];
	int nparams;
	struct strbuf head;      /* records written before its rows */
	struct history_out part; /* the unnamed file (query 0: unused) */
	struct history_out *to;  /* where its records go */
	struct strbuf err;
	int rc;
};

#define HISTORY_QUERIES_MAX 4

/* session_pool_for()'s item: one query, on its own session. */
static void read_query(struct db *db, size_t i, void *arg)
{
	struct history_query *q = (struct history_query *)arg + i;

	strbuf_add(&q->to->buf, q->head.buf, q->head.len);
	q->rc = query_records(db, q->to, q->kind, q->sql, q->nparams,
			      q->params, &q->err);
	if (q->rc == 0 && i > 0 && (q->rc = history_flush(q->to)) < 0)
		strbuf_addf(&q->err, "cannot write %s/%s: %s", q->to->dir,
			    JOB_RECORDS_FILE, strerror(-q->rc));
}

/* Append the unnamed file fd (read from its start) to h's file. */
static int append_part(struct history_out *h, int fd)
{
	char buf[1 << 16];
	ssize_t n;
	int rc = history_flush(h);

	if (rc == 0 && lseek(fd, 0, SEEK_SET) < 0)
		rc = -errno;
	while (rc == 0 && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0)
			rc = errno == EINTR ? 0 : -errno;
		else
			rc = site_file_add(&h->file, buf, (size_t)n);
	}
	return rc;
}

/* Read q[0..n) into out, in that order: through the pool when it can.
 * Releases q's heads. */
static int read_queries(struct engine *e, struct history_out *out,
			struct history_query *q, int n, struct strbuf *err)
{
	int sessions = n < e->cfg->db_sessions ? n : (int)e->cfg->db_sessions;
	int rc = 0, parts = 1;
	bool pooled;

	for (int i = 0; i < n; i++) {
		q[i].to = out;
		strbuf_init(&q[i].err);
		q[i].part = (struct history_out){ .dir = out->dir };
		strbuf_init(&q[i].part.buf);
		q[i].part.file.fd = -1;
	}
	/* an unnamed file for each query but the first, in the history
	 * directory (owned by root, 0700 until handed over) */
	for (; sessions > 1 && parts < n; parts++) {
		q[parts].part.file.fd = openat(out->file.dir_fd, ".",
					       O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (q[parts].part.file.fd < 0) {
			log_warn("%s: no unnamed file (O_TMPFILE) in the spool's "
				 "file system: %s; the step's history queries are "
				 "read one after another", out->dir, strerror(errno));
			break;
		}
		q[parts].to = &q[parts].part;
	}
	pooled = sessions > 1 && parts == n &&
		 session_pool_for(&e->pool, e->cfg, sessions, (size_t)n,
				  read_query, q) > 0;
	/* else one after another on the engine's session, into the file */
	for (int i = 0; !pooled && i < n && (i == 0 || q[i - 1].rc == 0); i++) {
		q[i].to = out;
		read_query(e->db, (size_t)i, q);
	}
	for (int i = 0; i < n && rc == 0; i++) {
		rc = q[i].rc;
		if (rc < 0)
			strbuf_add(err, q[i].err.buf, q[i].err.len);
		else if (pooled && i > 0 && (rc = append_part(out, q[i].part.file.fd)) < 0)
			strbuf_addf(err, "cannot write %s/%s: %s", out->dir,
				    JOB_RECORDS_FILE, strerror(-rc));
	}
	for (int i = 0; i < n; i++) {
		if (q[i].part.file.fd >= 0)
			close(q[i].part.file.fd);
		strbuf_release(&q[i].part.buf);
		strbuf_release(&q[i].err);
		strbuf_release(&q[i].head);
	}
	return rc < 0 ? -EIO : 0;
}

static int run_record(struct engine *e, struct history_out *out,
		      const char *run, struct strbuf *err)
{
	const char *params[] = { run };

	return query_records(e->db, out, "run",
		"select id as run, pipeline_name as pipeline, night, owner, "
		"facility from runs where id = $1::bigint", 1, params, err);
}

/* ---- the run's snapshot: every daemon-side step ------------------------- */

/* The instance names of spec's inputs as a PostgreSQL text[] literal. */
static void needs_array(const struct job_spec *spec, struct strbuf *sb)
{
	strbuf_addch(sb, '{');
	for (size_t i = 0; i < spec->n_inputs; i++) {
		strbuf_addstr(sb, i ? ",\"" : "\"");
		for (const char *p = spec->inputs[i].a; *p; p++) {
			if (*p == '"' || *p == '\\')
				strbuf_addch(sb, '\\');
			strbuf_addch(sb, *p);
		}
		strbuf_addch(sb, '"');
	}
	strbuf_addch(sb, '}');
}

/*
 * The run's snapshot (step_inputs.h: run, run_step, baseline), every column
 * a field, into spec's run_info (params.tsv, rl_each_run_info).
 */
static int run_snapshot(struct engine *e, const struct step_row *s,
			struct job_spec *spec, struct strbuf *err)
{
	struct strbuf *out = &spec->run_info;
	const char *what = "run's records";
	long run_id = s->run_id, step_id = s->id;
	char id[32], step[32];
	struct strbuf needs = STRBUF_INIT;
	const char *p1[] = { id };
	const char *p2[2], *p3[] = { step };
	int rc;

	snprintf(id, sizeof(id), "%ld", run_id);
	snprintf(step, sizeof(step), "%ld", step_id);
	strbuf_init(&needs);
	needs_array(spec, &needs);
	p2[0] = id;
	p2[1] = needs.buf;
	rc = query_rows(e, out, "run", true, what,
		"select id, pipeline_name as pipeline, owner, facility, trigger,"
		" submitted_at, coalesce(started_at::text, '') as started_at,"
		" coalesce(spool_dir, '') as spool_dir from runs where id = $1",
		1, p1, err);
	if (rc == 0)
		rc = query_rows(e, out, "run_step", true, what,
			"select step_id as step, node, plugin, case when on_daemon"
			" then 'daemon' else 'slurm' end as \"on\", state, attempt,"
			" coalesce(slurm_job_id::text, '') as slurm_job,"
			" coalesce(exec_node, '') as exec_node,"
			" coalesce(started_at::text, '') as started_at,"
			" coalesce(ended_at::text, '') as ended_at,"
			" coalesce(error, '') as error"
			" from steps where id = any((select needs from steps"
			"  where id = $1::bigint)::bigint[]) order by id", 1, p3, err);
	/* the baseline run (sql/011_findings.sql rl_baseline_run: the previous
	 * succeeded run of the same pipeline, owner and facility flag on the
	 * same GPU model, as the regressions plugin and `roofline regressions`
	 * take it), and the attempt directories of the instances this step
	 * needs there */
	if (rc == 0)
		rc = query_rows(e, out, "baseline", true, what,
			"select b.id as run, s.step_id || case when s.node = '' then ''"
			" else '@' || s.node end as step, b.spool_dir || '/' || s.step_id ||"
			" case when s.node = '' then '' else '@' || s.node end ||"
			" '/attempt-' || s.attempt as dir, b.submitted_at"
			" from (select p.id, p.spool_dir, p.submitted_at from runs p"
			"  where p.id = rl_baseline_run($1::bigint)"
			"  and p.spool_dir is not null) b"
			" join steps s on s.run_id = b.id and s.state = 'succeeded'"
			" and s.step_id || case when s.node = '' then '' else '@' ||"
			" s.node end = any($2::text[]) order by s.id", 2, p2, err);
	strbuf_release(&needs);
	return rc;
}

/* ---- the history sets: the plugins that declare them ---------------------- */

/* The fleet's set: the run's GPUs' histories, in as many parts as there
 * are sessions to read them (sql/032_gpu_history_parts.sql: parts of the
 * run's GPUs in gpu_uuid order, which read in order are the whole). */
static int gpu_history(struct engine *e, const struct job_spec *spec,
		       const struct rl_plugin *p, const char *run,
		       struct history_out *out, struct strbuf *err)
{
	const char *nights = option_value(spec, p, "nights");
	struct history_query q[HISTORY_QUERIES_MAX];
	char nums[HISTORY_QUERIES_MAX][2][16];
	int n = e->cfg->db_sessions < HISTORY_QUERIES_MAX
			? (int)e->cfg->db_sessions : HISTORY_QUERIES_MAX;

	for (int i = 0; i < n; i++) {
		snprintf(nums[i][0], sizeof(nums[i][0]), "%d", i + 1);
		snprintf(nums[i][1], sizeof(nums[i][1]), "%d", n);
		q[i] = (struct history_query){ .kind = "gpu_history",
			.sql = "select * from rl_gpu_history($1::bigint,"
			       " $2::integer, $3::integer, $4::integer)",
			.params = { run, nights ? nights : "14", nums[i][0],
				    nums[i][1] },
			.nparams = 4 };
		strbuf_init(&q[i].head);
	}
	return read_queries(e, out, q, n, err);
}

/* The baseline run: the step's option, which must be a run the owner may
 * see, else the previous one on the same GPU model ("" when none). */
static int baseline_of(struct engine *e, const struct job_spec *spec,
		       const struct rl_plugin *p, const char *run,
		       char *baseline, size_t size, struct strbuf *err)
{
	const char *opt = option_value(spec, p, "baseline");
	const char *params[] = { run, opt };
	struct db_result *r;
	long b = 0;

	baseline[0] = '\0';
	if (opt && *opt && strcmp(opt, "0") && (util_parse_long(opt, &b) < 0 || b <= 0)) {
		strbuf_addf(err, "baseline '%s' is not a run number", opt);
		return -EINVAL;
	}
	if (b > 0)
		r = db_query(e->db,
			"select b.id from runs b, runs me where me.id = $1::bigint "
			"and b.id = $2::bigint and b.owner = me.owner "
			"and b.facility = me.facility", 2, params);
	else
		r = db_query(e->db, "select rl_baseline_run($1::bigint)", 1, params);
	if (!r) {
		strbuf_addf(err, "cannot find the baseline run: %s", db_error(e->db));
		return -EIO;
	}
	if (db_rows(r) == 1 && db_value(r, 0, 0))
		snprintf(baseline, size, "%s", db_value(r, 0, 0));
	db_result_free(r);
	if (b > 0 && !baseline[0]) {
		strbuf_addf(err, "baseline run %ld is not a run of this pipeline's "
			    "owner", b);
		return -EPERM;
	}
	return 0;
}

/* The regressions' set: the baseline run and its points, the run's
 * points, their noise over the lookback; three queries read at once. */
static int kernel_points(struct engine *e, const struct job_spec *spec,
			 const struct rl_plugin *p, const char *run,
			 struct history_out *out, struct strbuf *err)
{
	const char *lookback = option_value(spec, p, "lookback");
	char baseline[32];
	struct rl_field f[] = { { "run", baseline }, { NULL, NULL } };
	struct history_query q[HISTORY_QUERIES_MAX];
	int rc, n = 0;

	rc = baseline_of(e, spec, p, run, baseline, sizeof(baseline), err);
	if (rc < 0)
		return rc;
	if (baseline[0]) {
		q[n] = (struct history_query){ .kind = "baseline_point",
			.sql = "select * from rl_run_points($1::bigint)",
			.params = { baseline }, .nparams = 1 };
		strbuf_init(&q[n].head);
		if (records_format(&q[n++].head, "baseline", f) < 0) {
			strbuf_release(&q[0].head);
			strbuf_addf(err, "baseline run '%s' does not make a record",
				    baseline);
			return -EIO;
		}
	}
	q[n] = (struct history_query){ .kind = "run_point",
		.sql = "select * from rl_run_points($1::bigint)",
		.params = { run }, .nparams = 1 };
	strbuf_init(&q[n++].head);
	q[n] = (struct history_query){ .kind = "kernel_noise",
		.sql = "select * from rl_kernel_noise($1::bigint, $2::integer)",
		.params = { run, lookback ? lookback : "10" }, .nparams = 2 };
	strbuf_init(&q[n++].head);
	return read_queries(e, out, q, n, err);
}

static int write_set(struct engine *e, const struct job_spec *spec,
		     const struct rl_plugin *p, const char *set,
		     const char *run, struct history_out *out, struct strbuf *err)
{
	if (!strcmp(set, "gpu_history"))
		return gpu_history(e, spec, p, run, out, err);
	if (!strcmp(set, "kernel_points"))
		return kernel_points(e, spec, p, run, out, err);
	strbuf_addf(err, "plugin %s reads history set '%s', which this daemon "
		    "does not know", p->name, set);
	return -EINVAL;
}

/* The history sets s's plugin declares, written into dir/history (made
 * fresh in the attempt directory open at dir_fd, which is still root's,
 * and handed to the user) and added to spec as the input "history". */
static int history_sets(struct engine *e, const struct step_row *s, int dir_fd,
			const char *dir, uid_t uid, gid_t gid,
			struct job_spec *spec, struct strbuf *err)
{
	const struct site_owner owner = { uid, gid, 0700, 0600 };
	struct history_out out = { .buf = STRBUF_INIT };
	struct plugin_handle *h;
	const char *const *sets;
	char run[32], *hdir = NULL;
	int rc = 0, fd = -1;

	h = plugin_loader_find(e->cfg->plugin_dir, s->plugin, err);
	if (!h)
		return -ENOENT;
	sets = plugin_history_sets(h->plugin);
	if (!sets || !sets[0])
		goto out;
	hdir = xasprintf("%s/%s", dir, HISTORY_INPUT);
	out.dir = hdir;
	fd = spool_dir_fresh(dir_fd, HISTORY_INPUT);
	rc = fd < 0 ? fd : site_file_open(&out.file, fd, JOB_RECORDS_FILE);
	if (rc < 0)
		goto out_write;
	snprintf(run, sizeof(run), "%ld", s->run_id);
	rc = run_record(e, &out, run, err);
	for (; rc == 0 && *sets; sets++)
		rc = write_set(e, spec, h->plugin, *sets, run, &out, err);
	if (rc < 0) { /* err says why */
		site_file_close(&out.file, &owner, false);
		goto out;
	}
	rc = history_flush(&out);
	if (rc == 0)
		rc = site_file_close(&out.file, &owner, true);
	else
		site_file_close(&out.file, &owner, false);
	if (rc == 0)
		rc = spool_dir_hand_over(fd, uid, gid, 0700);
	if (rc == 0) {
		job_spec_add_input(spec, HISTORY_INPUT, hdir);
		goto out;
	}
out_write:
	strbuf_addf(err, "cannot write %s/%s: %s", hdir, JOB_RECORDS_FILE,
		    strerror(-rc));
out:
	strbuf_release(&out.buf);
	if (fd >= 0)
		close(fd);
	free(hdir);
	plugin_loader_close(h);
	return rc;
}

int step_inputs_prepare(struct engine *e, const struct step_row *s, int dir_fd,
			const char *dir, uid_t uid, gid_t gid,
			struct job_spec *spec, struct strbuf *err)
{
	int rc;

	if (!s->on_daemon)
		return 0;
	rc = history_sets(e, s, dir_fd, dir, uid, gid, spec, err);
	if (rc == 0)
		rc = run_snapshot(e, s, spec, err);
	return rc;
}
