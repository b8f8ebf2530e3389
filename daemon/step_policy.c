/* step_policy.c - see step_policy.h. */
#include "step_policy.h"

#include <errno.h>
#include <string.h>

int step_policy_check(const struct config *cfg, const struct pipeline *p,
		      bool facility, struct strbuf *err)
{
	if (facility)
		return 0;
	for (size_t i = 0; i < p->n_steps; i++) {
		const struct pipeline_step *st = &p->steps[i];

		if (!st->on_daemon)
			continue;
		if (!cfg->user_daemon_steps) {
			strbuf_addf(err, "step '%s' runs on the daemon, which this "
				    "facility does not allow users' runs "
				    "(user_daemon_steps: false)", st->id);
			return -EPERM;
		}
		if (st->program_option) {
			const char *key = st->program_option;

			strbuf_addf(err, "option '%s' of step '%s' names a program, "
				    "which a user's step on the daemon may not: "
				    "it runs the facility's (rooflined.yaml%s)",
				    key, st->id,
				    strcmp(key, "gnuplot") == 0 ? ": gnuplot_program"
				    : strcmp(key, "ncu") == 0   ? ": ncu_program" : "");
			return -EPERM;
		}
	}
	return 0;
}

void step_policy_programs(const struct config *cfg, const struct step_row *s,
			  struct job_spec *spec)
{
	if (s->facility || !s->on_daemon)
		return;
	if ((strcmp(s->plugin, "gnuplot") == 0 || strcmp(s->plugin, "instruction") == 0) &&
	    cfg->gnuplot_program[0])
		job_spec_add_option(spec, "gnuplot", cfg->gnuplot_program);
	if (strcmp(s->plugin, "ncu") == 0 && cfg->ncu_program[0])
		job_spec_add_option(spec, "ncu", cfg->ncu_program);
}
