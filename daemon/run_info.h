/*
 * run_info.h - what a daemon-side step learns about its run: the records the
 * daemon writes into its params.tsv and the host serves through
 * rl_each_run_info (include/rooflined/plugin.h).
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
 * Slurm steps get none: nothing on a compute node needs them, and a launch
 * of many jobs stays one query per batch.  The records are a snapshot taken
 * when the attempt is prepared: the step itself is `submitting` in it.
 */
#ifndef ROOFLINE_RUN_INFO_H
#define ROOFLINE_RUN_INFO_H

#include "db.h"
#include "job_host.h"

/*
 * Add the run-info records of run `run_id` to spec, the params of step
 * instance `step_id` (steps.id), whose inputs (the instances the step
 * needs) are already set.  0 or -EIO (db_error says why).
 */
int run_info_add(struct db *db, long run_id, long step_id,
		 struct job_spec *spec);

#endif
