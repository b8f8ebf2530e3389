/* engine.c - the tick, step state changes and finished attempts.  See engine.h. */
#include "engine.h"

#include <errno.h>
#include <poll.h>
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
#include "site_child.h"
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
	session_pool_close(&e->pool);
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
 * submissions drains, once per ENGINE_BACKLOG_POLL_S (engine.h); then
 * beside the pass's jobs in flight (engine_tick). */
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
	bool late_start = false; /* queued runs left for after launch_begin */
	bool poll_now, late_poll = false; /* the Slurm poll: now, after launch_begin */

	if (!engine_connected(e))
		return e->lost_lock ? -EEXIST : -EIO;
	if (!children_only) {
		/* before reading the runs: what arrives after is news */
		if (work_signature(e, &e->work_seen_id,
				   &e->work_seen_cancels) < 0)
			e->work_seen_id = -1;
		/* In a backlog the queued runs are started below, while this
		 * pass's jobs are in flight, not before them */
		if (e->backlog)
			late_start = true;
		else
			more = runs_start_queued(e, RUNS_START_MAX) >=
			       RUNS_START_MAX;
		runs_handle_cancels(e);
		/* In a backlog the poll too (and the ingest of what it finds
		 * ended) waits for this pass's jobs to be in flight: slurmctld
		 * is the bottleneck then, and must not wait for the daemon */
		poll_now = slurm_poll_due(e);
		late_poll = poll_now && e->backlog;
		if (poll_now && !late_poll)
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
		/* Slurm jobs first: what a pass leaves for the next is daemon
		 * children (forked after the pass's submissions) */
		"order by s.on_daemon, s.id limit " ENGINE_STR(ENGINE_LAUNCH_MAX),
		0, NULL, &n);

	struct launch_batch batch;

	launch_begin(e, ready, n, &batch);
	/* launch_begin's contract allows it: the poll neither forks nor
	 * touches the pass's rows, which are 'submitting', not followed */
	if (late_poll && launch_in_flight(&batch)) {
		launch_poll(e);
		late_poll = false;
	}
	/* A backlog (more queued runs than a pass starts, or more ready
	 * steps than it launches): the queued runs are expanded while
	 * slurmctld takes this pass's jobs, not between two passes; their
	 * steps go in the next pass, which `more` asks for at once. */
	if ((more || late_start) && batch.stream) {
		/* a few at a time, until the last job is answered: the pass's
		 * jobs are recorded 'pending' only after this */
		int gone, started = 0;

		do {
			gone = runs_start_queued(e, RUNS_START_CHUNK);
			started += gone;
		} while (gone == RUNS_START_CHUNK && started < RUNS_START_MAX &&
			 launch_in_flight(&batch));
		more |= started > 0;
		late_start = false;
	}
	launch_end(e, &batch);
	if (late_poll) /* no job of this pass to overlap */
		launch_poll(e);
	if (late_start)
		more |= runs_start_queued(e, RUNS_START_MAX) > 0;
	engine_steps_free(ready, n);
	more |= n >= ENGINE_LAUNCH_MAX;
	runs_finish_done(e);
	site_child_poll(e->cfg); /* a rebuild asked for while one ran */
	if (!children_only) {
		schedule_fire_due(e);
		notify_pending(e);
		partitions_tick(e->db, e->cfg, &e->partitions_due);
	}
	e->backlog = more;
	return db_ok(e->db) ? more : -EIO;
}
