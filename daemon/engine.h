/*
 * engine.h - the pipeline engine: turns runs into Slurm jobs and daemon-side
 * plugin runs, follows them, ingests what they produce and finishes runs.
 *
 * All state lives in PostgreSQL (sql/001_core.sql); the engine keeps nothing
 * in memory that a restart would miss, so `kill -9` of the daemon loses
 * nothing: on the next start the engine picks up every step where the
 * database says it is, repairing the one window a crash can leave open (a
 * step marked 'submitting' whose Slurm job may or may not exist) through the
 * job's name, rl.<step>.<attempt>.
 *
 * A step's state changes only through engine_step_set_state(), which also
 * writes the step_events row and the log line.
 *
 * Layers, each calling only those below it (scripts/layering holds the
 * loops out):
 *
 *   engine.c       the tick: init, the one-daemon lock, wake-ups, one pass
 *   schedule.c     facility pipelines and cron (queues runs through runs.c)
 *   runs.c         starting, cancelling and finishing runs
 *   launch.c       Slurm jobs and daemon children, followed to their end
 *   ingest.c       an ended attempt: its records into PostgreSQL, or the
 *                  step retried or failed
 *   engine_state.c the shared struct, step and attempt rows, state
 *                  transitions, the identity a run runs as (engine_state.h)
 *
 * partitions.c (partitions and retention of the history tables) and
 * notify.c are called by the tick; spool_space.c (a full spool) by ingest.c
 * and launch.c, over engine_state.c; leader.c (the one-daemon lock session)
 * and session_pool.c (the sessions ingest.c stores ended attempts through,
 * several at once) are the shared struct's members.
 */
#ifndef ROOFLINE_ENGINE_H
#define ROOFLINE_ENGINE_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "engine_state.h"
#include "job_host.h"
#include "leader.h"
#include "strbuf.h"

#define ENGINE_JOB_PREFIX "rl."

/* While submissions wait (a backlog of queued runs or ready steps), Slurm's
 * jobs are polled, and the finished ones ingested, at most once per this many
 * seconds: submitting comes first, so that a burst of runs reaches Slurm at
 * the rate Slurm accepts jobs, not at that rate less the ingest. */
#define ENGINE_BACKLOG_POLL_S 30

/* What makes one daemon per database: SHARE UPDATE EXCLUSIVE on this
 * table, held by a session of the daemon's own for its whole life (an open
 * transaction that does nothing else).  No other role has any privilege on
 * the table, and the modes another role can take without one do not
 * conflict with it (sql/019_security.sql: rooflined_daemon_pid() names the
 * holder).  An advisory lock, which any role may take, was used before. */
#define ENGINE_LOCK_TABLE LEADER_LOCK_TABLE
/* The channel new runs and cancellations are announced on. */
#define ENGINE_CHANNEL "rooflined"

/* ---- engine.c ---- */

/* Connect, take the one-daemon lock, apply migrations, make the history
 * partitions ahead and apply the retention (partitions.h), listen for new runs.
 * 0, -EEXIST (another daemon holds this database: err names it; e stays
 * connected, for engine_standby() or engine_release()) or -errno with err
 * set (e released). */
int engine_init(struct engine *e, const struct config *cfg, struct strbuf *err);

/* Wait as a standby (leader.h) until the active daemon's lock session ends,
 * then lead: the migrations, LISTEN and the rest of engine_init, after
 * which engine_tick() picks every step up where the database says it is,
 * as after a restart.  Also after a tick returned -EEXIST (another daemon
 * took over while this one's lock session was broken).  0 (leading),
 * -EINTR (*stop was set) or -EIO with err. */
int engine_standby(struct engine *e, volatile sig_atomic_t *stop,
		   struct strbuf *err);
void engine_release(struct engine *e);

/* Tell PostgreSQL who holds this session ("rooflined pid N on HOST"), so
 * that a second daemon can name the first; again after a fork. */
void engine_name_session(struct engine *e);

/* Whether the notifications that woke the daemon announced work: a run
 * newer than the last full pass saw, or a different number of pending
 * cancellations.  Any role may NOTIFY the channel; a wake-up without new
 * work costs this one index lookup, not a full pass.  Drains the
 * notifications. */
bool engine_wakeup_has_work(struct engine *e);

/* One pass over everything, or, with children_only (a daemon child ended
 * and nothing else called), over the daemon children and what their end
 * makes ready: no look at queued runs, cancellations, Slurm or schedules,
 * which the database's notifications and the poll interval bring.  Returns 1 when work was left for the next
 * pass (more queued runs or ready steps than one pass takes: call again at
 * once), 0 when nothing waits, -EIO when the database went away (the
 * caller waits and calls again: the next tick reconnects), or -EEXIST when
 * a reconnect found another daemon holding the database (stop). */
int engine_tick(struct engine *e, bool children_only);

/* The socket on which the database announces new runs and cancellations
 * (poll it for input), -1 while disconnected; engine_wakeup_has_work()
 * drops what it announced once woken. */
int engine_wakeup_fd(struct engine *e);

/* ---- runs.c ---- */
/* Start up to max (at most RUNS_START_MAX) queued runs (the oldest first),
 * in one transaction; a run that cannot be started, or whose start cannot
 * be recorded, fails at once with the reason.  Returns how many left the
 * queue (started or failed). */
#define RUNS_START_MAX 200
#define RUNS_START_CHUNK 25 /* while a pass's jobs are in flight (engine.c) */
#define ENGINE_LAUNCH_MAX 500 /* ready steps launched per pass */
#define ENGINE_STR_(x) #x
#define ENGINE_STR(x) ENGINE_STR_(x) /* a number macro as SQL text */
int runs_start_queued(struct engine *e, int max);
void runs_handle_cancels(struct engine *e);
void runs_finish_done(struct engine *e);
/* SQL condition on step row `s`: every instance it needs has succeeded
 * (steps.waiting_on, kept by a trigger, is 0); a fan-in instead needs every
 * per-node instance ended and, of each needed step, at least min_success of
 * them (and at least one) succeeded. */
#define RUNS_NEEDS_MET \
	"s.waiting_on = 0 and not exists (select 1 from steps n where" \
	" n.id = any(s.needs) and n.node <> '' and s.node = '' group by" \
	" n.step_id having count(*) filter (where n.state = 'succeeded') <" \
	" greatest(1, ceil(coalesce(s.min_success, 0) * count(*))))"

/* Skip each waiting fan-in whose needed instances can no longer succeed in
 * the numbers it asks for, saying how many did. */
void runs_resolve_fan_in(struct engine *e);
/* Queue a run of a pipeline as the facility (scheduled).  Returns run id or
 * -EIO. */
long runs_queue_facility(struct engine *e, long pipeline_id, const char *name,
			 const char *yaml);

/* ---- launch.c ---- */
/*
 * Launch the next attempt of each ready step (state 'waiting' or
 * 'retry_wait'), in two halves so that the caller can work while
 * slurmctld takes the jobs: launch_begin() marks rows 'submitting' (the
 * fence: only while this daemon holds the lock) and hands each Slurm step's
 * request, as soon as its attempt directory is made, to threads that submit
 * them (slurm_submit_stream); launch_end() waits for them, records the jobs
 * 'pending' (refusals as failed attempts) and then starts the daemon
 * children.  Between the two the caller may use the database but must not
 * fork, nor touch rows, and should start nothing new once
 * launch_in_flight() is false (the jobs are recorded 'pending' only then;
 * engine_tick expands queued runs and polls Slurm there); every launch_begin() is
 * followed by launch_end() in
 * the same tick (steps left 'submitting' in between are this process's own:
 * launch_repair_submitting() must not run then).  Updates rows.
 */
struct job_request;
struct slurm_submit_stream;
struct launch_batch {
	struct step_row *rows;   /* borrowed */
	int n;
	bool marked;             /* rows marked 'submitting' */
	struct slurm_submit_stream *stream; /* NULL: no Slurm step */
	struct job_request *jr;  /* [deferred] the requests in flight */
	struct strbuf *errs;     /* [deferred] */
	uint32_t *ids;           /* [deferred] what slurmctld answered */
	int *row;                /* [deferred] their rows */
	uint32_t *jobs;          /* [n] the job of each row, 0: none */
	int deferred;
	int threads;             /* requests in flight at once */
	struct timespec t0, made; /* CLOCK_MONOTONIC: begun, last request made */
};
void launch_begin(struct engine *e, struct step_row *rows, int n,
		  struct launch_batch *b);
void launch_end(struct engine *e, struct launch_batch *b);
/* Whether some request of b has not been answered yet. */
bool launch_in_flight(const struct launch_batch *b);
/* Steps left 'submitting' by a crash: adopt their job or submit again,
 * once they have been so for ENGINE_SUBMIT_GRACE_S: a daemon that lost the
 * lock (a standby took over) while it submitted has finished or given up
 * by then (a Slurm RPC waits at most MessageTimeout, 10 s by default), so
 * the job it may have submitted is found by its name, not submitted again. */
#define ENGINE_SUBMIT_GRACE_S 15
void launch_repair_submitting(struct engine *e);
/* Follow Slurm jobs (one poll) and daemon children. */
void launch_poll(struct engine *e);
/* Follow daemon children only. */
void launch_poll_children(struct engine *e);
/* Cancel a step's job or child; 0 or -EIO. */
int launch_cancel(const struct step_row *s);

/* ---- ingest.c ---- */
/* How an attempt's job ended, as Slurm (or the daemon) tells it. */
struct attempt_end {
	const char *state;   /* "COMPLETED", "NODE_FAIL", "TIMEOUT", ... */
	int exit_code;       /* of the batch script, -1: unknown */
	int signal;          /* that ended it, 0: none */
	const char *node;    /* where it ran, NULL or "": unknown */
	const char *trouble; /* what Slurm says is wrong with that node
			      * ("node n2 is DOWN* (Not responding)"), NULL:
			      * nothing */
};

/* The attempts one look at Slurm (or at the daemon's children) found
 * ended, gathered so that their records are stored through several
 * PostgreSQL sessions at once: a night's node jobs end together. */
struct ended_attempt;
struct ingest_ended {
	struct ended_attempt *a; /* owned */
	size_t n, cap;
};
#define INGEST_ENDED_INIT { NULL, 0, 0 }
/* Add step s's attempt, ended as end says: what Slurm said, NULL when
 * Slurm forgot the job, or for daemon steps.  end's strings are copied; s
 * is borrowed until ingest_ended_run(). */
void ingest_ended_add(struct ingest_ended *l, const struct step_row *s,
		      const struct attempt_end *end);
/* Read each attempt's exit record, then store its records or retry or fail
 * the step.  Each attempt's records are stored in one transaction that
 * also marks the step succeeded (idempotent: an attempt already stored adds
 * nothing), through cfg->db_sessions sessions of e->pool when there are
 * several; a database that went away leaves the step for the next tick.
 * Empties l. */
void ingest_ended_run(struct engine *e, struct ingest_ended *l);
/* The same for one attempt. */
void ingest_step_finished(struct engine *e, const struct step_row *s,
			  const struct attempt_end *end);
/* Read the attempt's exit record, refusing anything but a regular file
 * owned by uid of at most cfg->ingest_max_line + 1 bytes.  0, -ENOENT (no
 * exit record), -EFBIG (too large: err, when not NULL, names the file and
 * the limit; the attempt is failed) or -EINVAL (unreadable or malformed). */
int ingest_read_exit(const struct config *cfg, const char *dir, uid_t uid,
		     struct job_exit *ex, struct strbuf *err);
/* Open path for reading only if it is a regular file owned by uid (not a
 * symlink): user-owned directories are read by a root daemon.  fd or -errno. */
int ingest_open_owned(const char *path, uid_t uid);

/* ---- schedule.c ---- */
/* Load the facility pipelines from cfg->pipeline_dir into the pipelines
 * table (new, changed, removed).  0 or -EIO. */
int schedule_load_pipelines(struct engine *e);
/* Fire each scheduled pipeline whose slot has come (once, however many slots
 * were missed). */
void schedule_fire_due(struct engine *e);

#endif
