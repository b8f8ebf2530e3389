/*
 * rooflined/plugin.h - the whole plugin ABI of rooflined: the public header
 * (installed as <rooflined/plugin.h> by rooflined-dev), libc only; it
 * includes nothing of the tree.
 *
 * A plugin is one shared object, plugins/<name>.so, that exports exactly one
 * symbol, ROOFLINE_PLUGIN_SYMBOL, a const struct rl_plugin.  The loader
 * (common/plugin_loader.c) reads the ABI number first and refuses a mismatch
 * before any plugin code runs, then checks the struct size (fields may only be
 * appended), that the name equals the file name, the stage, and the option
 * table.
 *
 * The host (roofline-job on a compute node, rooflined for daemon-side steps,
 * or a test's stand-in) reaches the plugin only through the struct; the plugin
 * reaches the host only through the struct rl_ctx it is handed, never through
 * globals, so a test can stand in for the daemon.
 *
 * Options are data: a const table of key, type, default, offset and help.  The
 * host parses a step's `with:` map against the table, refuses unknown keys,
 * and fills a zeroed config struct of config_size bytes at the given offsets.
 * The same table prints a plugin's --help.
 *
 * Records: a plugin's results are records, a kind plus ordered key/value text
 * fields, written by the host as one line each of escaped TSV (see
 * common/records.h) into the step's output directory.  The daemon ingests
 * them into PostgreSQL in one transaction per step attempt.
 *
 * Bump ROOFLINE_PLUGIN_ABI on any incompatible change; appending a field at the
 * end of struct rl_plugin or struct rl_host is compatible.
 */
#ifndef ROOFLINED_PLUGIN_H
#define ROOFLINED_PLUGIN_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define ROOFLINE_PLUGIN_ABI 1u
#define ROOFLINE_PLUGIN_SYMBOL "rooflined_plugin"

#if defined(__GNUC__)
#define RL_EXPORT __attribute__((visibility("default")))
#define RL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RL_EXPORT
#define RL_PRINTF(a, b)
#endif

/* Where a plugin sits in a pipeline. */
enum rl_stage {
	RL_STAGE_CEILINGS = 1, /* measures or derives roofs */
	RL_STAGE_COLLECT,      /* collects kernel metrics */
	RL_STAGE_ANALYZE,      /* derives roofline points */
	RL_STAGE_RENDER,       /* draws charts */
	RL_STAGE_UTILITY,      /* anything else (smoke tests, helpers) */
};

/* What a run returns.  The daemon, not the plugin, owns retries and backoff. */
enum rl_result {
	RL_OK = 0,
	RL_RETRY = 1, /* transient: try the step again later */
	RL_FAIL = 2,  /* permanent: do not retry */
};

enum rl_log_level {
	RL_LOG_ERROR = 0,
	RL_LOG_WARNING,
	RL_LOG_INFO,
	RL_LOG_DEBUG,
};

/* Option types.  The config field at `offset` has the C type in brackets. */
enum rl_opt_type {
	RL_OPT_STRING = 1, /* [char *]  owned by the host, NULL when absent */
	RL_OPT_INT,        /* [long] */
	RL_OPT_DOUBLE,     /* [double] */
	RL_OPT_BOOL,       /* [int] 0 or 1 */
	RL_OPT_LIST,       /* [struct rl_strlist] a YAML sequence of scalars */
	RL_OPT_PATH,       /* [char *]  relative path that must stay inside the
	                      run directory (no "..", not absolute) */
	RL_OPT_COMMAND,    /* [struct rl_strlist] argv; argv[0] may be absolute
	                      (a program), other elements are plain strings */
};

/*
 * Or'ed into the type of a string, path or list option: the option names a
 * program the plugin runs, or what it tells that program (a command option
 * is one whatever its type says).  A user's run may not set such an option
 * on a step `on: daemon`, where rooflined runs the facility's programs
 * (rooflined.yaml: user_daemon_steps, ncu_program, gnuplot_program).  The
 * loader refuses it on another type; a host older than it refuses the
 * plugin's option table (an unknown type), so a plugin using it says so.
 * RL_OPT_TYPE() is the type without it.
 */
#define RL_OPT_PROGRAM 0x100
#define RL_OPT_TYPE(type) ((enum rl_opt_type)((type) & 0xff))

/* A list option's value; the host owns the strings. */
struct rl_strlist {
	size_t n;
	char **v;
};

/* One entry of a plugin's option table; the table ends with key == NULL. */
struct rl_option {
	const char *key;
	enum rl_opt_type type;
	const char *default_value; /* text as it would appear in YAML, or NULL;
	                              lists take comma-separated items */
	size_t offset;             /* offsetof(config struct, field) */
	const char *help;          /* one line, shown by `roofline plugins` */
	int required;              /* nonzero: the step must set it */
};

/* One field of a record.  Arrays of fields end with key == NULL. */
struct rl_field {
	const char *key;
	const char *value;
};

struct rl_ctx;

/*
 * The host's side of the ABI, reached through ctx->host.  Plugins call the
 * inline wrappers below rather than these pointers.
 */
struct rl_host {
	size_t size; /* sizeof(struct rl_host) of the host build */
	/* Log a line, prefixed by the host with who is speaking. */
	void (*log)(struct rl_ctx *ctx, enum rl_log_level level, const char *fmt,
		    va_list ap);
	/* Append one record of `kind` to the step's output; 0 or -errno. */
	int (*emit)(struct rl_ctx *ctx, const char *kind,
		    const struct rl_field *fields);
	/*
	 * Call fn once per record of `kind` (NULL: every kind) that the steps
	 * this step needs have emitted, in order; stop early and return fn's
	 * value when it is nonzero.  Returns 0, fn's nonzero value, or -errno.
	 */
	int (*each_input)(struct rl_ctx *ctx, const char *kind,
			  int (*fn)(void *arg, const char *step, const char *kind,
				    const struct rl_field *fields),
			  void *arg);
	/*
	 * Path of file `name` written by needed step `step` into its output
	 * directory, or NULL when there is no such step or file.  The string
	 * lives as long as ctx.
	 */
	const char *(*input_path)(struct rl_ctx *ctx, const char *step,
				  const char *name);
	/*
	 * Appended (hosts older than it lack it: call rl_each_run_info, which
	 * checks size).  Call fn once per record of `kind` (NULL: every kind)
	 * that the daemon wrote about the run this step belongs to: one `run`
	 * record, one `run_step` record per step instance this step needs, and
	 * `baseline`
	 * records (docs/report.md lists their fields).  Only `on: daemon` steps
	 * get them; for others there are none.  Returns 0, fn's nonzero value,
	 * or -errno.
	 */
	int (*each_run_info)(struct rl_ctx *ctx, const char *kind,
			     int (*fn)(void *arg, const char *step,
				       const char *kind,
				       const struct rl_field *fields),
			     void *arg);
	/*
	 * Appended (hosts older than it lack it: call rl_step_setting, which
	 * checks size).  How the step runs its user's program, from the
	 * step's keys (docs/pipelines.md, "Your own program"): "workdir"
	 * (absolute, checked to be a directory, before the plugin runs; the
	 * env and modules are applied to the host's environment by then),
	 * "tasks", "tasks_per_node", "gpus_per_task" (decimal), "launcher"
	 * ("srun" or "mpirun").  NULL when the step does not set it.  The
	 * string lives as long as ctx.
	 */
	const char *(*setting)(struct rl_ctx *ctx, const char *key);
};

/*
 * What a plugin run is handed.  Everything is borrowed from the host and lives
 * until run() (or fini()) returns.
 */
struct rl_ctx {
	const struct rl_host *host;
	void *host_data;       /* the host's, opaque to plugins */
	const char *run_dir;   /* the run's spool directory */
	const char *out_dir;   /* this step's output directory (files go here) */
	const char *step_id;
	const char *node;      /* host name the step runs on */
	long run_id;
	int attempt;
};

/* The one exported struct. */
struct rl_plugin {
	uint32_t abi;          /* ROOFLINE_PLUGIN_ABI: read first */
	uint32_t size;         /* sizeof(struct rl_plugin) when built */
	const char *name;      /* must equal the file name without ".so" */
	const char *version;
	enum rl_stage stage;
	const char *summary;   /* one line */
	const struct rl_option *options; /* may be NULL: no options */
	size_t config_size;    /* bytes of the config struct the table fills */
	/*
	 * init (optional): check the config and allocate state; return 0 or
	 * -errno and log why.  *state is passed to run and fini.
	 */
	int (*init)(struct rl_ctx *ctx, const void *config, void **state);
	/* run (required): do the work, emit records, write files to out_dir. */
	enum rl_result (*run)(struct rl_ctx *ctx, const void *config, void *state);
	/* fini (optional): free state; called whenever init succeeded. */
	void (*fini)(void *state);
	/*
	 * history (optional; appended in 0.3, read only when size covers it):
	 * the names of the history sets a daemon-side plugin reads,
	 * NULL-terminated.  Before each attempt the daemon writes them from
	 * the database, with the history the run's owner may see, as the
	 * records of an input named "history"; each_input() reaches them like
	 * a needed step's.  The sets, their parameters (options of the
	 * plugin's own table) and their records: docs/findings.md.
	 */
	const char *const *history;
};

/* Helpers for plugins. */
static inline RL_PRINTF(3, 4) void rl_log(struct rl_ctx *ctx,
					  enum rl_log_level level,
					  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctx->host->log(ctx, level, fmt, ap);
	va_end(ap);
}

#define rl_error(ctx, ...) rl_log((ctx), RL_LOG_ERROR, __VA_ARGS__)
#define rl_warn(ctx, ...) rl_log((ctx), RL_LOG_WARNING, __VA_ARGS__)
#define rl_info(ctx, ...) rl_log((ctx), RL_LOG_INFO, __VA_ARGS__)
#define rl_debug(ctx, ...) rl_log((ctx), RL_LOG_DEBUG, __VA_ARGS__)

static inline int rl_emit(struct rl_ctx *ctx, const char *kind,
			  const struct rl_field *fields)
{
	return ctx->host->emit(ctx, kind, fields);
}

static inline int rl_each_input(struct rl_ctx *ctx, const char *kind,
				int (*fn)(void *arg, const char *step,
					  const char *kind,
					  const struct rl_field *fields),
				void *arg)
{
	return ctx->host->each_input(ctx, kind, fn, arg);
}

static inline const char *rl_input_path(struct rl_ctx *ctx, const char *step,
					const char *name)
{
	return ctx->host->input_path(ctx, step, name);
}

/* The run's own records (struct rl_host, each_run_info); -ENOSYS when the
 * host predates them. */
static inline int rl_each_run_info(struct rl_ctx *ctx, const char *kind,
				   int (*fn)(void *arg, const char *step,
					     const char *kind,
					     const struct rl_field *fields),
				   void *arg)
{
	if (ctx->host->size < offsetof(struct rl_host, each_run_info) +
				      sizeof(ctx->host->each_run_info) ||
	    !ctx->host->each_run_info)
		return -ENOSYS;
	return ctx->host->each_run_info(ctx, kind, fn, arg);
}

/* A step setting (struct rl_host, setting); NULL when unset or when the
 * host predates them. */
static inline const char *rl_step_setting(struct rl_ctx *ctx, const char *key)
{
	if (ctx->host->size < offsetof(struct rl_host, setting) +
				      sizeof(ctx->host->setting) ||
	    !ctx->host->setting)
		return NULL;
	return ctx->host->setting(ctx, key);
}

/* Look a field up by key in a record; NULL when absent. */
static inline const char *rl_field_get(const struct rl_field *fields,
				       const char *key)
{
	for (; fields && fields->key; fields++) {
		const char *a = fields->key, *b = key;

		while (*a && *a == *b)
			a++, b++;
		if (*a == *b)
			return fields->value;
	}
	return NULL;
}

/* A field of a record as a number: dflt when the key is absent, empty or
 * not wholly a number (strtod's syntax). */
static inline double rl_field_double(const struct rl_field *fields,
				     const char *key, double dflt)
{
	const char *v = rl_field_get(fields, key);
	char *end;
	double d;

	if (!v || !*v)
		return dflt;
	d = strtod(v, &end);
	return *end ? dflt : d;
}

/* Declare a plugin:  RL_PLUGIN_DEFINE = { .name = "ert", ... }; */
#define RL_PLUGIN_DEFINE \
	RL_EXPORT const struct rl_plugin rooflined_plugin

#define RL_PLUGIN_HEADER \
	.abi = ROOFLINE_PLUGIN_ABI, .size = sizeof(struct rl_plugin)

#endif /* ROOFLINED_PLUGIN_H */
