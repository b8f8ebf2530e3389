/*
 * app_env.h - on the compute node, before a step's plugin runs: apply the
 * step's `env` and `modules` to this process's environment and check its
 * `workdir` (docs/pipelines.md, "Your own program").
 *
 * The daemon hands the keys over in params.tsv as `app`, `env` and `module`
 * records (daemon/pipeline_app.h writes them); job_host keeps them as text
 * and calls app_env_apply once, in the job process, which runs one step, so
 * the changed environment is that step's and reaches every program its
 * plugin starts.
 *
 * Modules are loaded by /bin/bash with the module system's own init script
 * ($MODULESHOME/init/bash, set by the node's profile or by `env`, else
 * Lmod's or Environment Modules' usual places), then `env -0` is read back;
 * a module that `module load` did not put into $LOADEDMODULES is an error.
 * Its words go to OUT_DIR/modules.log.
 *
 * libc only.
 */
#ifndef ROOFLINE_APP_ENV_H
#define ROOFLINE_APP_ENV_H

#include <stddef.h>

#include "strbuf.h"

/* The keys a step's plugin can ask for (rl_step_setting); NULL when unset.
 * workdir is absolute and was a directory when checked. */
struct app_env {
	char *workdir, *tasks, *tasks_per_node, *gpus_per_task, *launcher;
};

/*
 * records: the `app`, `env` and `module` records of params.tsv (may be
 * empty: nothing to do).  Sets the variables, loads the modules, resolves
 * the workdir ("~" and "~/..." from the user's home, a relative one from
 * run_dir) into out (zeroed by the caller).  0, or -errno with one line
 * naming what failed (the path, the module, the node) appended to err.
 */
int app_env_apply(const char *records, const char *run_dir,
		  const char *out_dir, struct app_env *out, struct strbuf *err);

/* The setting `key` of a (see struct app_env), or NULL. */
const char *app_env_get(const struct app_env *a, const char *key);

void app_env_release(struct app_env *a);

#endif
