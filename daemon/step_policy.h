/*
 * step_policy.h - what a user's run may make the service node run.
 *
 * A step `on: daemon` runs roofline-job on the service node as the run's
 * user.  For a user's run (not the facility's) the daemon allows only the
 * programs the facility installed: an option that names a program to run
 * or steers one (the plugin's option table says so: RL_OPT_PROGRAM, and
 * every command option; ncu's `ncu`, `command` and `extra`, gnuplot's and
 * instruction's `gnuplot`, ert's `bench`) is refused on a daemon-side
 * step, and the daemon's configuration
 * (ncu_program, gnuplot_program) says which program runs instead.  With
 * `user_daemon_steps: false` a user's run may have no daemon-side step.
 * Facility runs are the facility's own and are not limited.
 */
#ifndef ROOFLINE_STEP_POLICY_H
#define ROOFLINE_STEP_POLICY_H

#include <stdbool.h>

#include "config.h"
#include "engine_state.h"
#include "job_host.h"
#include "pipeline.h"
#include "strbuf.h"

/* Is pipeline p allowed for a run (facility: the facility's)?  0, or
 * -EPERM with the reason in err (the run fails to start). */
int step_policy_check(const struct config *cfg, const struct pipeline *p,
		      bool facility, struct strbuf *err);

/* Add the facility's programs to the options of a daemon-side step of a
 * user's run (s), as its spec is prepared. */
void step_policy_programs(const struct config *cfg, const struct step_row *s,
			  struct job_spec *spec);

#endif
