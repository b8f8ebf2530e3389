/*
 * history.h - the history sets that daemon-side plugins read.
 *
 * A plugin declares the sets it reads (struct rl_plugin.history).  Before
 * each attempt of a daemon-side step whose plugin declares any, the daemon
 * runs their queries and writes the rows as records into the attempt's
 * `history/records.tsv` (owned by the run's user, 0600 in a 0700 directory,
 * like every attempt file), and adds the input "history" to the step's
 * job_spec, so the plugin reads them with each_input() like a needed
 * step's records.  Every query keeps to what the run's owner may see: runs
 * of the same pipeline, owner and facility flag (sql/011_findings.sql).
 *
 * The sets (docs/findings.md has the fields):
 *
 *   gpu_history     a `run` record, then one `gpu_history` record per GPU
 *                   and ceiling of this run: its figures over the latest
 *                   `nights` earlier nights (option of the plugin's table)
 *   kernel_points   a `run` record, a `baseline` record (option `baseline`,
 *                   else the previous successful run on the same GPU model),
 *                   `run_point` and `baseline_point` records (one per kernel,
 *                   level and precision) and `kernel_noise` records over the
 *                   latest `lookback` earlier runs
 */
#ifndef ROOFLINE_HISTORY_H
#define ROOFLINE_HISTORY_H

#include <sys/types.h>

#include "engine_state.h"
#include "job_host.h"
#include "strbuf.h"

/*
 * Write the history sets of s's plugin into dir/history (dir is open at
 * dir_fd, still root's: spool_dirs.h) and add the input
 * to spec (whose options are already read).  0 (also when the plugin reads
 * none), or -errno with the reason in err: the attempt fails then.
 */
int history_prepare(struct engine *e, const struct step_row *s, int dir_fd,
		    const char *dir, uid_t uid, gid_t gid,
		    struct job_spec *spec, struct strbuf *err);

#endif /* ROOFLINE_HISTORY_H */
