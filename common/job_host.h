/*
 * job_host.h - run one plugin for one step attempt: the host side of the ABI.
 *
 * Used by roofline-job on a compute node and by rooflined's child process for
 * `on: daemon` steps, so both behave the same.  A step attempt is described
 * by a job_spec (read from the params.tsv the daemon writes into the step's
 * directory).  Running it writes into spec->out_dir, atomically:
 *
 *   records.tsv   every record the plugin emitted (only when it returned OK),
 *                 after one `missing_input` record (step, why) per needed
 *                 instance the step runs without
 *   exit.tsv      one `exit` record, always written last: status (ok, retry,
 *                 fail), node, started, ended (epoch seconds), records, error
 *
 * so a reader that sees exit.tsv sees everything the attempt produced, and a
 * job that died before writing it left nothing that looks complete.
 */
#ifndef ROOFLINE_JOB_HOST_H
#define ROOFLINE_JOB_HOST_H

#include <stdbool.h>
#include <time.h>

#include "rooflined/plugin.h"
#include "strbuf.h"

#define JOB_PARAMS_FILE "params.tsv"
#define JOB_RECORDS_FILE "records.tsv"
#define JOB_EXIT_FILE "exit.tsv"

struct job_pair {
	char *a; /* option key, or input step id */
	char *b; /* option value, or input directory */
};

struct job_spec {
	char *plugin;   /* plugin name as the pipeline wrote it */
	char *step_id;
	char *run_dir;
	char *out_dir;
	long run_id;
	int attempt;
	struct job_pair *opts; /* in order; list options repeat their key */
	size_t n_opts;
	struct job_pair *inputs; /* needed step id -> its output directory */
	size_t n_inputs;
	struct job_pair *missing; /* needed instance ("ceilings@n3") that did
				   * not succeed -> why; the step runs over the
				   * others (a fan-in after `nodes: each`) */
	size_t n_missing;
	struct strbuf run_info; /* the daemon's `run`, `run_step` and `baseline`
				 * records about the run (RUN_INFO_KINDS), as
				 * params.tsv lines, served to the plugin by
				 * each_run_info; empty for Slurm steps */
	struct strbuf app;      /* the step's `app`, `env` and `module` records
				 * (workdir, env, modules, tasks, ...), as
				 * params.tsv lines; applied on the node by
				 * common/app_env.h; empty when none */
};

/* The kinds of app record params.tsv may carry. */
bool job_spec_is_app(const char *kind);
/* Append an app record (kind: see job_spec_is_app).  0 or -EINVAL. */
int job_spec_add_app(struct job_spec *spec, const char *kind,
		     const struct rl_field *fields);

/* The kinds of run-info record params.tsv may carry. */
bool job_spec_is_run_info(const char *kind);

void job_spec_init(struct job_spec *spec);
void job_spec_release(struct job_spec *spec);
/* Setters copy their arguments. */
void job_spec_set(char **field, const char *value);
void job_spec_add_option(struct job_spec *spec, const char *key,
			 const char *value);
void job_spec_add_input(struct job_spec *spec, const char *step,
			const char *dir);

void job_spec_add_missing(struct job_spec *spec, const char *step,
			  const char *why);
/* Append a run-info record (kind: see job_spec_is_run_info).  0 or -EINVAL
 * when the kind is not one or the record cannot be written. */
int job_spec_add_run_info(struct job_spec *spec, const char *kind,
			  const struct rl_field *fields);
/* Serialise spec as params.tsv records into out. */
void job_spec_format(const struct job_spec *spec, struct strbuf *out);

/* Read params.tsv at path into spec (initialised by the caller).  0 or -errno
 * with "path:line:col: why" appended to err. */
int job_spec_load(struct job_spec *spec, const char *path, struct strbuf *err);

/* Run the spec's plugin (from plugin_dir) and write records.tsv and exit.tsv
 * into spec->out_dir, which must exist.  Returns the plugin's result, RL_FAIL
 * when the plugin could not be loaded or configured, or RL_RETRY when the
 * outputs could not be written. */
enum rl_result job_host_run(const struct job_spec *spec, const char *plugin_dir);

/* An attempt's exit record, as read back by the daemon.  The attempt's
 * user can write anything there: node and error are escaped as
 * utf8_sanitize() does (and cut to fit), and a time outside 1970 to the
 * end of 9999 (JOB_EXIT_TIME_MAX) is read as 0, unknown. */
struct job_exit {
	enum rl_result status;
	char node[256];
	time_t started, ended;
	long records;
	char error[1024];
};
#define JOB_EXIT_TIME_MAX 253402300799L /* 9999-12-31 23:59:59 UTC */

/* Read out_dir/exit.tsv.  0, -ENOENT when the attempt has not finished (or
 * died before writing it), or -EINVAL when it is malformed. */
int job_exit_read(const char *out_dir, struct job_exit *exit_rec);

/* Parse an exit record held in buf (modified in place); name is for error
 * messages.  0 or -EINVAL. */
int job_exit_parse(char *buf, const char *name, struct job_exit *exit_rec);

/* "ok", "retry", "fail". */
const char *job_result_name(enum rl_result r);

#endif
