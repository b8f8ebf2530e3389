/*
 * engine_state.h - the bottom of the pipeline engine: the shared struct, a
 * step instance's row, its state transitions and the identity its run runs
 * as.  engine.h has the files that drive it (the tick, launch, runs,
 * ingest, schedule); this layer calls none of them.
 *
 * A step's state changes only through engine_step_set_state() (or its
 * many-rows forms), which writes the step_events row in the same statement
 * and the log line; a failed step's dependents are skipped here too
 * (engine_skip_dependents), so that every transition of a row lives in one
 * file.
 */
#ifndef ROOFLINE_ENGINE_STATE_H
#define ROOFLINE_ENGINE_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "config.h"
#include "db.h"
#include "leader.h"
#include "session_pool.h"
#include "strbuf.h"

struct engine {
	const struct config *cfg; /* borrowed; replaced on reload */
	struct db *db;            /* owned */
	struct leader lead;       /* owned: the session that holds the
				   * one-daemon lock, nothing else (leader.h) */
	struct session_pool pool; /* owned: the sessions that ingest a
				   * poll's ended attempts in parallel */
	long work_seen_id;        /* newest run id at the last full pass */
	long work_seen_cancels;   /* its cancellations pending then */
	time_t last_schedule_check;
	bool lost_lock;           /* another daemon holds the database */
	bool fan_in_dirty;        /* a step failed, was skipped or cancelled
				   * since the last runs_resolve_fan_in() */
	time_t partitions_due;       /* next partitions/retention pass (partitions.h);
				   * 0: at the next tick */
	bool backlog;             /* the last pass left queued runs or ready
				   * steps for the next one */
	struct timespec last_slurm_poll; /* CLOCK_MONOTONIC */
};

/* A step instance as the engine reads it from the database. */
struct step_row {
	long id;
	long run_id;
	char step_id[72];
	char node[72];
	char plugin[72];
	bool on_daemon;
	char state[16];
	int attempt;
	int retries;
	long timeout_s;
	uint32_t job_id;
	pid_t daemon_pid;
	char owner[72];
	bool facility;
	int n_needs;     /* how many step instances it waits for */
	char *spool_dir; /* the run's directory, owned */
	char *options;   /* `option` records, owned */
	long state_s;    /* seconds in its current state */
	long run_s;      /* seconds since it started running, -1: not yet */
	long pending_limit_s; /* its own pending limit, 0: the daemon's */
	char exec_node[72];   /* where the attempt runs or ran, "" unknown */
	char *avoid_nodes;    /* nodes retries avoid ("a,b"), owned */
	char *slurm_reason;   /* what Slurm last said of it, owned */
};

/* Change a step's state, with optional column updates, record the event and
 * log it.  NULL/negative arguments leave a column alone.  0 or -EIO. */
struct step_change {
	int attempt;            /* -1: keep */
	long job_id;            /* -1: keep; 0: clear */
	long daemon_pid;        /* -1: keep; 0: clear */
	const char *exec_node;  /* NULL: keep */
	const char *error;      /* NULL: keep */
	bool started, ended;    /* stamp started_at / ended_at now */
	long retry_in_s;        /* >= 0: next_try_at = now + this */
	long started_epoch;     /* > 0: started_at, if not yet set */
	const char *detail;     /* for step_events and the log */
	const char *slurm_reason; /* NULL: keep; "": clear */
	const char *avoid_node; /* add to the nodes retries avoid; NULL: none */
};
#define STEP_CHANGE_NONE { .attempt = -1, .job_id = -1, .daemon_pid = -1, \
			   .retry_in_s = -1 }
int engine_step_set_state(struct engine *e, const struct step_row *s,
			  const char *state, const struct step_change *c);
/* The same on session db, touching nothing of the engine's: for a session
 * of the pool (session_pool.h), in a thread of its own, and for a
 * transition that leaves the fan-ins alone (to 'succeeded'). */
int engine_step_record_state(struct db *db, const struct step_row *s,
			     const char *state, const struct step_change *c);

/* The many-rows forms of engine_step_set_state for the launch path:
 * mark rows 'submitting' with attempt + 1 (rows whose state changed under us
 * get state "" and are left alone), and record rows[i] 'pending' with Slurm
 * job jobs[i] (entries with job 0 are skipped).  0 or -EIO. */
int engine_steps_mark_submitting(struct engine *e, struct step_row *rows,
				 int n);
int engine_steps_set_pending(struct engine *e, const struct step_row *rows,
			     const uint32_t *jobs, int n);

/* The directory of attempt n of step s (caller frees). */
char *engine_attempt_dir(const struct step_row *s, int attempt);

/* A failed attempt (s->attempt): retry after a backoff when retryable and
 * the step has retries left, else fail the step and skip what needs it. */
void engine_step_failed(struct engine *e, const struct step_row *s,
			const char *error, bool retryable);
/* The same for an attempt that died with its node: a retry of a step not
 * pinned to that node (`nodes: each`) avoids it. */
void engine_step_failed_on(struct engine *e, const struct step_row *s,
			   const char *error, bool retryable,
			   const char *bad_node);

/* The pending limit that applies to s, in seconds. */
long engine_pending_limit(const struct engine *e, const struct step_row *s);

/* Read rows of `select <STEP_COLUMNS> ... ` into step_rows; caller frees
 * with engine_steps_free.  NULL on a database error. */
#define ENGINE_STEP_COLUMNS \
	"s.id, s.run_id, s.step_id, s.node, s.plugin, s.on_daemon, s.state, " \
	"s.attempt, s.retries, coalesce(s.timeout_s, 0), " \
	"coalesce(s.slurm_job_id, 0), coalesce(s.daemon_pid, 0), r.owner, " \
	"r.facility, coalesce(r.spool_dir, ''), s.options, " \
	"cardinality(s.needs), " \
	"coalesce(extract(epoch from now() - s.state_since)::bigint, 0), " \
	"coalesce(extract(epoch from now() - s.started_at)::bigint, -1), " \
	"coalesce(s.pending_limit_s, 0), coalesce(s.exec_node, ''), " \
	"s.avoid_nodes, coalesce(s.slurm_reason, '')"
struct step_row *engine_steps_query(struct engine *e, const char *sql,
				    int nparams, const char *const *params,
				    int *count);
void engine_steps_free(struct step_row *rows, int count);

/* The OS identity a run's jobs run as: its owner, or the facility user for
 * facility runs.  Refuses root.  0 or -EPERM/-ENOENT with err. */
int engine_run_identity(const struct engine *e, const struct step_row *s,
			uid_t *uid, gid_t *gid, struct strbuf *err);
/* The same from a run's facility flag and owner. */
int engine_user_identity(const struct engine *e, bool facility,
			 const char *owner, uid_t *uid, gid_t *gid,
			 struct strbuf *err);

/* Skip every step that (transitively) needs step s, but for a fan-in (a
 * step without a node that needs instances of a `nodes: each` step): that
 * one runs over the instances that succeeded (runs_resolve_fan_in). */
void engine_skip_dependents(struct engine *e, const struct step_row *s);

#endif
