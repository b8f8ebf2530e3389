/*
 * step_inputs.h - what the daemon knows that a daemon-side step may read,
 * beyond the records of the steps it needs: one mechanism for all of it.
 *
 * Before each attempt of a daemon-side step (Slurm steps get nothing:
 * nothing on a compute node needs it, and a launch of many jobs stays one
 * query per batch), the daemon runs the queries of the sets below with the
 * run's own id, each keeping to what the run's owner may see (runs of the
 * same pipeline, owner and facility flag: sql/011_findings.sql), and turns
 * every row into a record, a field per column.  The records are a snapshot
 * taken when the attempt is prepared (the step itself is `submitting` in
 * it); the plugin never touches the database.  Two sets, handed over the two
 * ways the ABI has (include/rooflined/plugin.h), and nothing else:
 *
 *   set        to                       written to            read with
 *   the run    every daemon-side step   params.tsv            rl_each_run_info
 *   history    a plugin that declares   history/records.tsv,  rl_each_input
 *              sets (rl_plugin.history)  the input "history"   (step "history")
 *
 * The run (every column a field, empty or not):
 *
 *   run       id pipeline owner facility trigger submitted_at started_at
 *             spool_dir  (times as PostgreSQL's timestamptz text)
 *   run_step  step node plugin on (daemon|slurm) state attempt slurm_job
 *             exec_node started_at ended_at error, one per step instance
 *             this step needs, in creation order (not every step of the
 *             run: a 1,000-step chain stays linear)
 *   baseline  run step dir submitted_at: the previous succeeded run of the
 *             same pipeline and owner, and the attempt directory there of
 *             each step this step needs that succeeded in it (same step id)
 *
 *
 * The history sets a plugin declares (docs/findings.md has the fields; a
 * `run` record first: run pipeline night owner facility; empty columns are
 * left out), in a file owned by the run's user (0600 in a 0700 directory,
 * like every attempt file):
 *
 *   gpu_history     one `gpu_history` record per GPU and ceiling of this
 *                   run: its figures over the latest `nights` earlier nights
 *                   (option of the plugin's table)
 *   kernel_points   a `baseline` record (option `baseline`, else the
 *                   previous successful run on the same GPU model),
 *                   `run_point` and `baseline_point` records (one per kernel,
 *                   level and precision) and `kernel_noise` records over the
 *                   latest `lookback` earlier runs
 */
#ifndef ROOFLINE_STEP_INPUTS_H
#define ROOFLINE_STEP_INPUTS_H

#include <sys/types.h>

#include "engine_state.h"
#include "job_host.h"
#include "strbuf.h"

/*
 * Add what the daemon knows to the params of attempt dir of step s (dir is
 * open at dir_fd, still root's: spool_dirs.h), whose options and inputs are
 * already read into spec: the run's snapshot, and the history sets of s's
 * plugin written into dir/history and added as the input "history".
 * Nothing for a Slurm step.  0, or -errno with the reason in err: the
 * attempt fails then.
 */
int step_inputs_prepare(struct engine *e, const struct step_row *s, int dir_fd,
			const char *dir, uid_t uid, gid_t gid,
			struct job_spec *spec, struct strbuf *err);

#endif /* ROOFLINE_STEP_INPUTS_H */
