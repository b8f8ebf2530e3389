/*
 * pipeline_app.h - how a Slurm step runs the user's own program: the step
 * keys workdir, env, modules, tasks, tasks_per_node, gpus_per_task and
 * launcher (docs/pipelines.md, "Your own program").
 *
 * pipeline_app_load reads them from a step's mapping and reports every
 * mistake at its position, like the rest of the loader; they are refused
 * on `on: daemon` steps (a daemon step runs the facility's programs in the
 * run directory).  What can only be judged on the compute node (the
 * workdir exists, the modules load) is checked there by common/app_env.h.
 *
 * Uses libc, yaml_tree and records; no libpq, no libslurm.
 */
#ifndef ROOFLINE_PIPELINE_APP_H
#define ROOFLINE_PIPELINE_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "job_host.h" /* struct job_pair */
#include "strbuf.h"
#include "yaml_tree.h"

#define PIPELINE_TASKS_MAX 100000
#define PIPELINE_GPUS_PER_TASK_MAX 64
#define PIPELINE_ENV_MAX 256
#define PIPELINE_MODULES_MAX 64

struct pipeline_app {
	char *workdir;          /* as written ("/abs", "~", "~/x", "rel");
	                           NULL: the run directory */
	struct job_pair *env;   /* name -> value, in file order */
	size_t n_env;
	char **modules;         /* in load order */
	size_t n_modules;
	long tasks;             /* 0: not an MPI step (the program runs once,
	                           without a launcher) */
	long tasks_per_node;    /* 0: Slurm's choice */
	long gpus_per_task;     /* 0: none asked */
	char *launcher;         /* "srun" or "mpirun"; NULL: srun when tasks */
};

/* Read the keys of step mapping `step` into app (zeroed by the caller);
 * errors go to e with `where` (" in step 'x'") spliced in. */
void pipeline_app_load(struct ytree_errors *e, struct pipeline_app *app,
		       const struct ytree_node *step, bool on_daemon,
		       const char *where);

/* Check tasks against the pipeline's node count (count: the number of nodes
 * each job asks, written explicitly or not); reported at `tasks`. */
void pipeline_app_check_nodes(struct ytree_errors *e,
			      const struct pipeline_app *app,
			      const struct ytree_node *step, long count,
			      bool count_written, const char *where);

/* The nodes one job of this step asks for: the written count, else enough
 * for tasks at tasks_per_node, else 1. */
long pipeline_app_nodes(const struct pipeline_app *app, long count,
			bool count_written);

/* Append the keys as records to out (the step's steps.options text): one
 * `app` record (workdir, tasks, tasks_per_node, gpus_per_task, launcher;
 * only when some key is set), one `env` record (name, value) per variable,
 * one `module` record (name) per module. */
void pipeline_app_format(const struct pipeline_app *app, struct strbuf *out);

/* True when the step sets any of the keys. */
bool pipeline_app_is_set(const struct pipeline_app *app);

void pipeline_app_release(struct pipeline_app *app);

#endif
