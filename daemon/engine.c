/* engine.c - the tick, step state changes and finished attempts.  See engine.h. */
#include "engine.h"

#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leader.h"
#include "log.h"
#include "partitions.h"
#include "spool_space.h"
#include "migrate.h"
#include "notify.h"
#include "utf8.h"
#include "util.h"

void engine_name_session(struct engine *e)
{
	leader_name_session(e->db, !e->lead.backend);
	if (e->lead.db)
		leader_name_session(e->lead.db, !e->lead.backend);
}

/* LISTEN for new runs and cancellations.  0 or -EIO with err. */
static int listen_for_runs(struct engine *e, struct strbuf *err)
{
	if (db_exec(e->db, "listen " ENGINE_CHANNEL, 0, NULL) >= 0)
		return 0;
	strbuf_addf(err, "cannot listen for new runs: %s", db_error(e->db));
	return -EIO;
}

/* A new main session (a reconnect): listen.  0 or -EIO with err. */
static int setup_session(struct engine *e, struct strbuf *err)
{
	return listen_for_runs(e, err);
}

#define LOCK_TRIES 20
#define LOCK_RETRY_MS 250

/* What the active daemon does once the lock is its own: migrations, the
 * history partitions, LISTEN, and the notifications a predecessor left.
 * 0 or -EIO with err. */
static int engine_lead(struct engine *e, struct strbuf *err)
{
	int rc = 0;

	if (!db_ok(e->db) && db_reconnect(e->db) < 0) {
		strbuf_addf(err, "cannot reconnect to PostgreSQL: %s", db_error(e->db));
		return -EIO;
	}
	leader_name_session(e->db, false);
	if (migrate_apply(e->db, err) < 0)
		rc = -EIO;
	/* Not fatal: the migration made partitions ahead, and a failed pass is
	 * logged and tried again within the hour. */
	if (rc == 0)
		partitions_tick(e->db, e->cfg, &e->partitions_due);
	if (rc == 0)
		rc = listen_for_runs(e, err);
	if (rc == 0)
		notify_recover(e);
	e->fan_in_dirty = true; /* a predecessor may have left one to resolve */
	return rc;
}

int engine_init(struct engine *e, const struct config *cfg, struct strbuf *err)
{
	int rc;

	memset(e, 0, sizeof(*e));
	e->cfg = cfg;
	e->db = db_connect(cfg->database, err);
	if (!e->db)
		return -ECONNREFUSED;
	if (db_set_timeouts(e->db, cfg->db_lock_timeout_ms,
			    cfg->db_statement_timeout_ms) < 0) {
		strbuf_addf(err, "cannot set the session's timeouts: %s",
			    db_error(e->db));
		engine_release(e);
		return -EIO;
	}
	leader_name_session(e->db, true);
	/* A predecessor killed a moment ago may still hold the lock until its
	 * backend notices: a few seconds' grace before refusing. */
	for (int i = 0; (rc = leader_take(&e->lead, cfg->database, err)) == -EEXIST &&
			i < LOCK_TRIES; i++) {
		strbuf_reset(err);
		poll(NULL, 0, LOCK_RETRY_MS);
	}
	if (rc == -EEXIST)
		return rc; /* connected: engine_standby() or engine_release() */
	if (rc == 0)
		rc = engine_lead(e, err);
	if (rc < 0)
		engine_release(e);
	return rc;
}

int engine_standby(struct engine *e, volatile sig_atomic_t *stop,
		   struct strbuf *err)
{
	int rc;

	e->lost_lock = false;
	leader_name_session(e->db, true);
	rc = leader_wait(&e->lead, e->cfg->database, stop);
	/* the main session may have died unnoticed while it waited (libpq
	 * sees that only when it next reads): a fresh one */
	if (rc == 0 && db_reconnect(e->db) < 0) {
		strbuf_addf(err, "cannot reconnect to PostgreSQL: %s", db_error(e->db));
		rc = -EIO;
	}
	if (rc == 0)
		rc = engine_lead(e, err);
	if (rc == -EIO)
		leader_release(&e->lead); /* let another one lead meanwhile */
	return rc;
}

int engine_wakeup_fd(struct engine *e)
{
	return e->db && db_ok(e->db) ? db_socket(e->db) : -1;
}

void engine_release(struct engine *e)
{
	db_close(e->db);
	e->db = NULL;
	leader_release(&e->lead); /* the lock is free for a standby */
}

/* The newest run and the pending cancellations (runs_active_idx): what a
 * notification may announce. */
static int work_signature(struct engine *e, long *id, long *cancels)
{
	struct db_result *r = db_query(e->db,
		"select (select coalesce(max(id), 0) from runs),"
		" count(*) filter (where cancel_requested) from runs"
		" where state in ('queued', 'running')", 0, NULL);

	if (!r || db_rows(r) != 1) {
		db_result_free(r);
		return -EIO;
	}
	*id = db_long(r, 0, 0);
	*cancels = db_long(r, 0, 1);
	db_result_free(r);
	return 0;
}

bool engine_wakeup_has_work(struct engine *e)
{
	long id, cancels;

	if (!e->db || !db_ok(e->db))
		return true;
	db_drain_notifications(e->db);
	if (work_signature(e, &id, &cancels) < 0)
		return true; /* cannot tell: a full pass will */
	return id != e->work_seen_id || cancels != e->work_seen_cancels;
}

static bool engine_connected(struct engine *e)
{
	static time_t last_complaint;
	struct strbuf err = STRBUF_INIT;
	int rc;

	strbuf_init(&err);
	rc = leader_check(&e->lead, e->cfg->database, &err);
	if (rc == -EEXIST) {
		log_error("%s; this one stops leading", err.buf);
		e->lost_lock = true;
	}
	strbuf_release(&err);
	if (rc < 0)
		goto unreachable;
	if (db_ok(e->db))
		return true;
	if (db_reconnect(e->db) == 0) {
		strbuf_init(&err);
		leader_name_session(e->db, false);
		rc = setup_session(e, &err);
		if (rc == 0)
			log_info("reconnected to PostgreSQL");
		else
			log_error("%s", err.buf);
		strbuf_release(&err);
		return rc == 0;
	}
unreachable:
	/* rate-limit: once a minute */
	if (!e->lost_lock && time(NULL) - last_complaint >= 60) {
		log_error("PostgreSQL is unreachable: %.*s; retrying",
			  (int)strlen(db_error(e->db)), db_error(e->db));
		last_complaint = time(NULL);
	}
	return false;
}

/* Whether this full pass polls Slurm: always, but while a backlog of
 * submissions drains, once per ENGINE_BACKLOG_POLL_S (engine.h). */
static bool slurm_poll_due(struct engine *e)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (e->backlog && e->last_slurm_poll.tv_sec &&
	    now.tv_sec - e->last_slurm_poll.tv_sec < ENGINE_BACKLOG_POLL_S)
		return false;
	e->last_slurm_poll = now;
	return true;
}

int engine_tick(struct engine *e, bool children_only)
{
	int more = 0;

	if (!engine_connected(e))
		return e->lost_lock ? -EEXIST : -EIO;
	if (!children_only) {
		/* before reading the runs: what arrives after is news */
		if (work_signature(e, &e->work_seen_id,
				   &e->work_seen_cancels) < 0)
			e->work_seen_id = -1;
		more = runs_start_queued(e) >= RUNS_START_MAX;
		runs_handle_cancels(e);
		if (slurm_poll_due(e))
			launch_poll(e);
		else
			launch_poll_children(e);
		launch_repair_submitting(e);
	} else {
		launch_poll_children(e);
	}
	runs_resolve_fan_in(e);

	int n = 0;
	struct step_row *ready = engine_steps_query(e,
		"select " ENGINE_STEP_COLUMNS " from steps s join runs r on r.id = s.run_id "
		"where r.state = 'running' and not r.cancel_requested and ("
		"  (s.state = 'waiting' and " RUNS_NEEDS_MET ")"
		"  or (s.state = 'retry_wait' and s.next_try_at <= now())) "
		"order by s.id limit " ENGINE_STR(ENGINE_LAUNCH_MAX), 0, NULL, &n);

	launch_steps(e, ready, n);
	engine_steps_free(ready, n);
	more |= n >= ENGINE_LAUNCH_MAX;
	runs_finish_done(e);
	if (!children_only) {
		schedule_fire_due(e);
		notify_pending(e);
		partitions_tick(e->db, e->cfg, &e->partitions_due);
	}
	e->backlog = more;
	return db_ok(e->db) ? more : -EIO;
}

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

int engine_step_set_state(struct engine *e, const struct step_row *s,
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
	rc = db_exec(e->db, sql, 14, params);
	if (rc >= 0)
		log_transition(s, s->state, state, params[10]);
	for (size_t i = 0; i < ARRAY_SIZE(copies); i++)
		free(copies[i]);
	if (rc < 0) {
		log_error("cannot record step %ld state %s: %s", s->id, state,
			  db_error(e->db));
		return -EIO;
	}
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
		" to_regclass('public." ENGINE_LOCK_TABLE "'))"
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
		runs_skip_dependents(e, s);
}

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

void engine_step_finished(struct engine *e, const struct step_row *s,
			  const struct attempt_end *end)
{
	char *dir = engine_attempt_dir(s, s->attempt);
	const char *slurm_state = end ? end->state : NULL;
	struct strbuf err = STRBUF_INIT;
	struct job_exit ex;
	uid_t uid = 0;
	gid_t gid = 0;
	int rc;

	strbuf_init(&err);
	if (engine_run_identity(e, s, &uid, &gid, &err) < 0) {
		engine_step_failed(e, s, err.buf, false);
		goto out;
	}
	rc = ingest_read_exit(e->cfg, dir, uid, &ex, &err);
	if (rc == -EFBIG) { /* what the user left there: no retry */
		engine_step_failed(e, s, err.buf, false);
		goto out;
	}
	if (rc == 0 && ex.status == RL_OK &&
	    (!slurm_state || strcmp(slurm_state, "COMPLETED") == 0)) {
		rc = ingest_attempt(e, s, dir, &ex, uid, &err);
		if (rc == -EINVAL)
			engine_step_failed(e, s, err.buf, false);
		/* -EIO: the database went away; the next tick tries again */
		goto out;
	}
	/* A full spool failed it (records or exit record unwritable): not
	 * the step's fault; it waits for space (spool_space.h) */
	if ((rc != 0 || ex.status != RL_OK) &&
	    spool_space_give_back(e, s, dir, rc == 0 ? ex.error : NULL))
		goto out;
	/* Past its timeout, whoever ended it (our SIGTERM, Slurm's limit, the
	 * child's alarm) and however Slurm names the end: a time-out. */
	if (rc != 0 && s->timeout_s > 0 && s->run_s >= s->timeout_s) {
		strbuf_addf(&err, "timed out after %ld s", s->timeout_s);
		if (end && !s->on_daemon)
			strbuf_addf(&err, " (Slurm job %u ended %s)", s->job_id,
				    end->state);
		engine_step_failed(e, s, err.buf, true);
		goto out;
	}
	if (slurm_state && strcmp(slurm_state, "CANCELLED") == 0) {
		struct step_change c = STEP_CHANGE_NONE;

		c.ended = true;
		c.error = "cancelled";
		c.detail = "Slurm job cancelled";
		engine_step_set_state(e, s, "cancelled", &c);
		runs_skip_dependents(e, s);
		goto out;
	}
	if (rc == 0) {
		strbuf_addstr(&err, ex.error[0] ? ex.error : "plugin failed");
		if (slurm_state && strcmp(slurm_state, "COMPLETED") != 0)
			strbuf_addf(&err, " (Slurm: %s)", slurm_state);
		engine_step_failed(e, s, err.buf, ex.status == RL_RETRY);
	} else {
		describe_slurm_end(&err, s, end);
		engine_step_failed_on(e, s, err.buf, true,
				      end && end->trouble && *end->trouble
					      ? end->node : NULL);
	}
out:
	strbuf_release(&err);
	free(dir);
}
