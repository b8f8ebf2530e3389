/* engine.c - the tick, step state changes and finished attempts.  See engine.h. */
#include "engine.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "partitions.h"
#include "log.h"
#include "migrate.h"
#include "notify.h"
#include "util.h"

/* Say who holds the session ("rooflined pid N on HOST"), so that a second
 * daemon can name us. */
static void name_session(struct db *db)
{
	char name[128], host[64] = "?";
	const char *params[] = { name };

	gethostname(host, sizeof(host) - 1);
	snprintf(name, sizeof(name), "rooflined pid %ld on %s", (long)getpid(),
		 host);
	db_exec(db, "select set_config('application_name', $1, false)", 1,
		params);
}

void engine_name_session(struct engine *e)
{
	name_session(e->db);
	if (e->lock_db)
		name_session(e->lock_db);
}

/* Who holds the lock, for the message: "NAME, PostgreSQL backend PID". */
static void describe_holder(struct db *db, struct strbuf *err)
{
	struct db_result *r = db_query(db,
		"select a.application_name, a.pid, a.usename from pg_locks l join"
		" pg_stat_activity a using (pid) where l.locktype = 'relation' and"
		" l.granted and l.relation = to_regclass('public." ENGINE_LOCK_TABLE
		"') and l.mode = 'ShareUpdateExclusiveLock'", 0, NULL);

	strbuf_addf(err, "another rooflined already runs on this database"
		    " (%s, PostgreSQL backend %s, role %s): one daemon per database",
		    r && db_rows(r) ? db_value(r, 0, 0) : "unknown",
		    r && db_rows(r) ? db_value(r, 0, 1) : "?",
		    r && db_rows(r) ? db_value(r, 0, 2) : "?");
	db_result_free(r);
}

/*
 * Take the one-daemon lock (engine.h) in a session of its own, made here
 * (again after that session broke).  0, -EEXIST (held by another session:
 * err says by whom) or -EIO.
 */
static int take_daemon_lock(struct engine *e, struct strbuf *err)
{
	long rc;

	if (e->lock_db && !db_ok(e->lock_db)) {
		db_close(e->lock_db);
		e->lock_db = NULL;
	}
	if (!e->lock_db) {
		e->lock_db = db_connect(e->cfg->database, err);
		if (!e->lock_db)
			return -EIO;
	}
	name_session(e->lock_db);
	/* The transaction stays open for the daemon's life: no limit of the
	 * database's or the role's may end it.  The table is made by the
	 * first daemon (before the migrations, which this lock serialises);
	 * its owner alone has privileges on it. */
	if (db_exec_script(e->lock_db,
			   "set idle_in_transaction_session_timeout = 0;"
			   " set statement_timeout = 0; set lock_timeout = 0;"
			   " create table if not exists public." ENGINE_LOCK_TABLE " ();"
			   " revoke all on public." ENGINE_LOCK_TABLE " from public") < 0) {
		strbuf_addf(err, "cannot make the daemon lock's table: %s",
			    db_error(e->lock_db));
		/* two daemons making it at once: the loser tries again */
		return -EEXIST;
	}
	db_rollback(e->lock_db);
	if (db_begin(e->lock_db) < 0) {
		strbuf_addf(err, "cannot take the daemon lock: %s",
			    db_error(e->lock_db));
		return -EIO;
	}
	rc = db_exec(e->lock_db, "lock table public." ENGINE_LOCK_TABLE
		     " in share update exclusive mode nowait", 0, NULL);
	if (rc >= 0)
		return 0;
	db_rollback(e->lock_db);
	if (rc == -EBUSY) {
		describe_holder(e->lock_db, err);
		return -EEXIST;
	}
	strbuf_addf(err, "cannot take the daemon lock: %s", db_error(e->lock_db));
	return -EIO;
}

/* Whether the lock's session still stands; when it broke, take the lock
 * again (-EEXIST: another daemon has it now). */
static int check_daemon_lock(struct engine *e, struct strbuf *err)
{
	if (e->lock_db && db_ok(e->lock_db) &&
	    db_drain_notifications(e->lock_db) >= 0)
		return 0;
	log_error("the session holding the daemon lock broke: taking the lock again");
	return take_daemon_lock(e, err);
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

int engine_init(struct engine *e, const struct config *cfg, struct strbuf *err)
{
	int rc;

	memset(e, 0, sizeof(*e));
	e->cfg = cfg;
	e->fan_in_dirty = true; /* a predecessor may have left one to resolve */
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
	name_session(e->db);
	/* A predecessor killed a moment ago may still hold the lock until its
	 * backend notices: a few seconds' grace before refusing. */
	for (int i = 0; (rc = take_daemon_lock(e, err)) == -EEXIST &&
			i < LOCK_TRIES; i++) {
		strbuf_reset(err);
		poll(NULL, 0, LOCK_RETRY_MS);
	}
	if (rc == 0 && migrate_apply(e->db, err) < 0)
		rc = -EIO;
	/* Not fatal: the migration made partitions ahead, and a failed pass is
	 * logged and tried again within the hour. */
	if (rc == 0)
		partitions_tick(e->db, cfg, &e->partitions_due);
	if (rc == 0)
		rc = listen_for_runs(e, err);
	if (rc == 0)
		notify_recover(e);
	if (rc < 0)
		engine_release(e);
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
	db_close(e->lock_db); /* ends the transaction: the lock is free */
	e->lock_db = NULL;
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
	rc = check_daemon_lock(e, &err);
	if (rc == -EEXIST) {
		log_error("%s; stopping", err.buf);
		e->lost_lock = true;
	}
	strbuf_release(&err);
	if (rc < 0)
		goto unreachable;
	if (db_ok(e->db))
		return true;
	if (db_reconnect(e->db) == 0) {
		strbuf_init(&err);
		name_session(e->db);
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
