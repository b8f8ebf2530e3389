/*
 * engine_state.c - the engine's state: step and attempt rows, their state
 * transitions (each with its step_events row), the identity a run runs as.
 * See engine_state.h.
 *
 * The bottom of the engine: the files that drive it (engine.c's tick,
 * launch.c, runs.c, ingest.c, schedule.c) call it, and it calls none of
 * them back.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_state.h"
#include "log.h"
#include "utf8.h"
#include "util.h"

static void copy_text(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

struct step_row *engine_steps_query(struct engine *e, const char *sql,
				    int nparams, const char *const *params,
				    int *count)
{
	struct db_result *r = db_query(e->db, sql, nparams, params);
	struct step_row *rows;
	int n;

	*count = 0;
	if (!r)
		return NULL;
	n = db_rows(r);
	rows = xcalloc((size_t)(n ? n : 1), sizeof(*rows));
	for (int i = 0; i < n; i++) {
		struct step_row *s = &rows[i];

		s->id = db_long(r, i, 0);
		s->run_id = db_long(r, i, 1);
		copy_text(s->step_id, sizeof(s->step_id), db_value(r, i, 2));
		copy_text(s->node, sizeof(s->node), db_value(r, i, 3));
		copy_text(s->plugin, sizeof(s->plugin), db_value(r, i, 4));
		s->on_daemon = db_value(r, i, 5)[0] == 't';
		copy_text(s->state, sizeof(s->state), db_value(r, i, 6));
		s->attempt = (int)db_long(r, i, 7);
		s->retries = (int)db_long(r, i, 8);
		s->timeout_s = db_long(r, i, 9);
		s->job_id = (uint32_t)db_long(r, i, 10);
		s->daemon_pid = (pid_t)db_long(r, i, 11);
		copy_text(s->owner, sizeof(s->owner), db_value(r, i, 12));
		s->facility = db_value(r, i, 13)[0] == 't';
		s->spool_dir = xstrdup(db_value(r, i, 14));
		s->options = xstrdup(db_value(r, i, 15));
		s->n_needs = (int)db_long(r, i, 16);
		s->state_s = db_long(r, i, 17);
		s->run_s = db_long(r, i, 18);
		s->pending_limit_s = db_long(r, i, 19);
		copy_text(s->exec_node, sizeof(s->exec_node), db_value(r, i, 20));
		s->avoid_nodes = xstrdup(db_value(r, i, 21));
		s->slurm_reason = xstrdup(db_value(r, i, 22));
	}
	db_result_free(r);
	*count = n;
	return rows;
}

void engine_steps_free(struct step_row *rows, int count)
{
	for (int i = 0; i < count; i++) {
		free(rows[i].spool_dir);
		free(rows[i].options);
		free(rows[i].avoid_nodes);
		free(rows[i].slurm_reason);
	}
	free(rows);
}

static void log_transition(const struct step_row *s, const char *from,
			   const char *to, const char *detail)
{
	char who[256];

	if (!log_enabled(RL_LOG_INFO))
		return;
	snprintf(who, sizeof(who), "run=%ld step=%s%s%s", s->run_id, s->step_id,
		 s->node[0] ? "@" : "", s->node);
	log_msg(RL_LOG_INFO, who, "%s -> %s%s%s", from, to, detail ? ": " : "",
		detail ? detail : "");
}

/* s, or when it is not well-formed UTF-8 (text a user wrote: PostgreSQL
 * would refuse the whole statement, at every tick) s escaped into *copy
 * (caller frees). */
static const char *storable(const char *s, char **copy)
{
	size_t n;

	if (!s || utf8_valid(s, (n = strlen(s))))
		return s;
	*copy = xmalloc(4 * n + 1); /* at most 4 bytes ("\xNN") a byte */
	utf8_sanitize(*copy, 4 * n + 1, s);
	return *copy;
}

int engine_step_record_state(struct db *db, const struct step_row *s,
			     const char *state, const struct step_change *c)
{
	static const char *const sql =
		"with u as (update steps set state = $2,"
		" attempt = coalesce($3::int, attempt),"
		" slurm_job_id = case when $4::bigint is null then slurm_job_id"
		"   when $4::bigint = 0 then null else $4::bigint end,"
		" daemon_pid = case when $5::int is null then daemon_pid"
		"   when $5::int = 0 then null else $5::int end,"
		" exec_node = coalesce($6, exec_node),"
		" error = coalesce($7, error),"
		" started_at = case when $8::bool then now() when $12::bigint > 0"
		"   then coalesce(started_at, to_timestamp($12::bigint))"
		"   else started_at end,"
		" ended_at = case when $9::bool then now() else ended_at end,"
		" next_try_at = case when $10::int is null then null"
		"   else now() + $10::int * interval '1 second' end,"
		" state_since = case when state = $2 then state_since else now() end,"
		" slurm_reason = case when $13::text is null then slurm_reason"
		"   when $13 = '' then null else $13 end,"
		" avoid_nodes = case when $14::text is null then avoid_nodes"
		"   when avoid_nodes = '' then $14 else avoid_nodes || ',' || $14 end"
		" where id = $1 returning id, attempt)"
		" insert into step_events (step, state, attempt, detail)"
		" select id, $2, attempt, $11 from u";
	char id[32], att[32], job[32], pid[32], retry[32], t0[32];
	char *copies[4] = { NULL, NULL, NULL, NULL };
	const char *params[14];
	long rc;

	snprintf(id, sizeof(id), "%ld", s->id);
	snprintf(att, sizeof(att), "%d", c->attempt);
	snprintf(job, sizeof(job), "%ld", c->job_id);
	snprintf(pid, sizeof(pid), "%ld", c->daemon_pid);
	snprintf(retry, sizeof(retry), "%ld", c->retry_in_s);
	params[0] = id;
	params[1] = state;
	params[2] = c->attempt >= 0 ? att : NULL;
	params[3] = c->job_id >= 0 ? job : NULL;
	params[4] = c->daemon_pid >= 0 ? pid : NULL;
	params[5] = storable(c->exec_node, &copies[0]);
	params[6] = storable(c->error, &copies[1]);
	params[7] = c->started ? "true" : "false";
	params[8] = c->ended ? "true" : "false";
	params[9] = c->retry_in_s >= 0 ? retry : NULL;
	params[10] = storable(c->detail, &copies[2]);
	snprintf(t0, sizeof(t0), "%ld", c->started_epoch);
	params[11] = t0;
	params[12] = c->slurm_reason;
	params[13] = storable(c->avoid_node, &copies[3]);
	rc = db_exec(db, sql, 14, params);
	if (rc >= 0)
		log_transition(s, s->state, state, params[10]);
	for (size_t i = 0; i < ARRAY_SIZE(copies); i++)
		free(copies[i]);
	if (rc < 0) {
		log_error("cannot record step %ld state %s: %s", s->id, state,
			  db_error(db));
		return -EIO;
	}
	return 0;
}

int engine_step_set_state(struct engine *e, const struct step_row *s,
			  const char *state, const struct step_change *c)
{
	if (engine_step_record_state(e->db, s, state, c) < 0)
		return -EIO;
	if (strcmp(state, "failed") == 0 || strcmp(state, "skipped") == 0 ||
	    strcmp(state, "cancelled") == 0)
		e->fan_in_dirty = true;
	return 0;
}

/* "{1,2,3}" of rows' ids (where keep[i], or all when keep is NULL). */
static void id_array(struct strbuf *sb, const struct step_row *rows,
		     const uint32_t *keep, int n)
{
	bool first = true;

	strbuf_addch(sb, '{');
	for (int i = 0; i < n; i++) {
		if (keep && !keep[i])
			continue;
		strbuf_addf(sb, "%s%ld", first ? "" : ",", rows[i].id);
		first = false;
	}
	strbuf_addch(sb, '}');
}

int engine_steps_mark_submitting(struct engine *e, struct step_row *rows,
				 int n)
{
	struct strbuf ids = STRBUF_INIT;
	struct db_result *r;
	const char *params[2];
	char backend[32];

	strbuf_init(&ids);
	id_array(&ids, rows, NULL, n);
	params[0] = ids.buf;
	snprintf(backend, sizeof(backend), "%ld", e->lead.backend);
	params[1] = backend;
	/* The fence: rows are marked only while our lock session holds the
	 * lock (a daemon whose session was cut off marks nothing; the standby
	 * that took over repairs what was marked before, ENGINE_SUBMIT_GRACE_S) */
	r = db_query(e->db,
		"with u as (update steps set state = 'submitting',"
		" attempt = attempt + 1, next_try_at = null, state_since = now(),"
		" slurm_reason = null, exec_node = null"
		" where id = any($1::bigint[]) and state in ('waiting', 'retry_wait')"
		" and exists (select 1 from pg_locks l where l.pid = $2::int and"
		" l.granted and l.locktype = 'relation' and l.relation ="
		" to_regclass('public." LEADER_LOCK_TABLE "'))"
		" returning id, attempt, on_daemon)"
		" insert into step_events (step, state, attempt, detail)"
		" select id, 'submitting', attempt, case when on_daemon then"
		" 'starting daemon child' else 'submitting' end from u"
		" returning step, attempt", 2, params);
	strbuf_release(&ids);
	if (!r) {
		log_error("cannot mark steps submitting: %s", db_error(e->db));
		return -EIO;
	}
	for (int i = 0; i < n; i++) {
		int k;

		for (k = 0; k < db_rows(r) && db_long(r, k, 0) != rows[i].id; k++)
			;
		if (k == db_rows(r)) {
			rows[i].state[0] = '\0';
			continue;
		}
		log_transition(&rows[i], rows[i].state, "submitting", NULL);
		rows[i].attempt = (int)db_long(r, k, 1);
		strcpy(rows[i].state, "submitting");
	}
	db_result_free(r);
	return 0;
}

int engine_steps_set_pending(struct engine *e, const struct step_row *rows,
			     const uint32_t *jobs, int n)
{
	struct strbuf ids = STRBUF_INIT, job_ids = STRBUF_INIT;
	const char *params[2];
	bool any = false;
	long rc;

	strbuf_init(&ids);
	strbuf_init(&job_ids);
	id_array(&ids, rows, jobs, n);
	strbuf_addch(&job_ids, '{');
	for (int i = 0; i < n; i++) {
		if (!jobs[i])
			continue;
		strbuf_addf(&job_ids, "%s%u", any ? "," : "", jobs[i]);
		any = true;
	}
	strbuf_addch(&job_ids, '}');
	params[0] = ids.buf;
	params[1] = job_ids.buf;
	rc = any ? db_exec(e->db,
		"with v as (select * from unnest($1::bigint[], $2::bigint[])"
		" as v(id, job)), u as (update steps s set state = 'pending',"
		" slurm_job_id = v.job, state_since = now() from v where s.id = v.id"
		" returning s.id, s.attempt, v.job)"
		" insert into step_events (step, state, attempt, detail)"
		" select id, 'pending', attempt, 'Slurm job ' || job from u",
		2, params) : 0;
	if (rc < 0)
		log_error("cannot record submitted Slurm jobs (the next start finds "
			  "them by name): %s", db_error(e->db));
	for (int i = 0; rc >= 0 && i < n; i++) {
		char detail[64];

		if (!jobs[i])
			continue;
		snprintf(detail, sizeof(detail), "Slurm job %u", jobs[i]);
		log_transition(&rows[i], "submitting", "pending", detail);
	}
	strbuf_release(&ids);
	strbuf_release(&job_ids);
	return rc < 0 ? -EIO : 0;
}

char *engine_attempt_dir(const struct step_row *s, int attempt)
{
	return xasprintf("%s/%s%s%s/attempt-%d", s->spool_dir, s->step_id,
			 s->node[0] ? "@" : "", s->node, attempt);
}

int engine_run_identity(const struct engine *e, const struct step_row *s,
			uid_t *uid, gid_t *gid, struct strbuf *err)
{
	return engine_user_identity(e, s->facility, s->owner, uid, gid, err);
}

int engine_user_identity(const struct engine *e, bool facility,
			 const char *owner, uid_t *uid, gid_t *gid,
			 struct strbuf *err)
{
	const char *user = facility ? e->cfg->facility_user : owner;
	struct passwd *pw;

	/* A run queued through the daemon's own database role has no person
	 * behind it: it must not run as whoever shares that name. */
	if (!facility && strcmp(owner, db_user(e->db)) == 0) {
		strbuf_addf(err, "run owned by the daemon's own role '%s': refusing "
			    "to run it as anyone", owner);
		return -EPERM;
	}
	pw = getpwnam(user);

	if (!pw) {
		strbuf_addf(err, "no operating-system user '%s' to run as", user);
		return -ENOENT;
	}
	if (pw->pw_uid == 0 || pw->pw_uid == getuid()) {
		strbuf_addf(err, "refusing to run jobs as %s (user '%s')",
			    pw->pw_uid == 0 ? "root" : "the daemon's user", user);
		return -EPERM;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

/* Delay before attempt n+1: backoff, 2*backoff, 4*backoff, ... (capped). */
static long retry_delay(const struct engine *e, int attempt)
{
	long d = e->cfg->retry_backoff_s;

	for (int i = 1; i < attempt && d < 3600; i++)
		d *= 2;
	return d;
}

long engine_pending_limit(const struct engine *e, const struct step_row *s)
{
	return s->pending_limit_s > 0 ? s->pending_limit_s
				      : e->cfg->pending_limit_s;
}

void engine_step_failed(struct engine *e, const struct step_row *s,
			const char *error, bool retryable)
{
	engine_step_failed_on(e, s, error, retryable, NULL);
}

void engine_step_failed_on(struct engine *e, const struct step_row *s,
			   const char *error, bool retryable,
			   const char *bad_node)
{
	struct step_change c = STEP_CHANGE_NONE;

	/* A step pinned to its node has nowhere else to go. */
	if (bad_node && *bad_node && !s->node[0])
		c.avoid_node = bad_node;
	c.error = error;
	c.detail = error;
	c.job_id = 0;
	c.daemon_pid = 0;
	if (retryable && s->attempt <= s->retries) {
		c.retry_in_s = retry_delay(e, s->attempt);
		engine_step_set_state(e, s, "retry_wait", &c);
		return;
	}
	c.ended = true;
	if (engine_step_set_state(e, s, "failed", &c) == 0)
		engine_skip_dependents(e, s);
}

void engine_skip_dependents(struct engine *e, const struct step_row *s)
{
	char run[32], id[32], why[256];
	const char *params[] = { run, id, s->node };
	struct step_row *deps;
	int n;

	snprintf(run, sizeof(run), "%ld", s->run_id);
	snprintf(id, sizeof(id), "%ld", s->id);
	snprintf(why, sizeof(why), "needs %s%s%s, which did not succeed",
		 s->step_id, s->node[0] ? "@" : "", s->node);
	deps = engine_steps_query(e,
		"with recursive dep(id, node) as (select id, node from steps where"
		" run_id = $1 and $2::bigint = any(needs) and not (node = '' and"
		" $3 <> '') union select s.id, s.node from steps s join dep d on"
		" d.id = any(s.needs) where s.run_id = $1 and not (s.node = '' and"
		" d.node <> ''))"
		" select " ENGINE_STEP_COLUMNS " from steps s join runs r on"
		" r.id = s.run_id where s.id in (select id from dep) and s.state in"
		" ('waiting', 'retry_wait')", 3, params, &n);
	for (int i = 0; deps && i < n; i++) {
		struct step_change c = STEP_CHANGE_NONE;

		c.error = why;
		c.detail = why;
		c.ended = true;
		engine_step_set_state(e, &deps[i], "skipped", &c);
	}
	engine_steps_free(deps, n);
}
