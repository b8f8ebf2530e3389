/*
 * pipeline.h - a pipeline file, loaded and checked (docs/pipelines.md).
 *
 * pipeline_load turns YAML text into a struct pipeline, checking everything
 * that can be checked without Slurm or the database: YAML syntax, types,
 * required and unknown keys (with a did-you-mean), names, step ids and their
 * `needs` (unknown, self, cycles), `on`, cron schedule, durations, nodes,
 * gres, retries, and each step's plugin (it must load from plugin_dir) and
 * its `with:` options against the plugin's option table, including paths
 * that would leave the run's directory.  It reports EVERY error it finds,
 * each as one line "file:line:col: message", sorted by position.  An invalid
 * pipeline gives NULL, so nothing of it can be submitted.
 *
 * Uses libc, yaml_tree, cron, options and plugin_loader; no libpq, no
 * libslurm.
 */
#ifndef ROOFLINE_PIPELINE_H
#define ROOFLINE_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "cron.h"
#include "job_host.h" /* struct job_pair */
#include "pipeline_app.h"
#include "strbuf.h"

#define PIPELINE_NAME_MAX 64
#define PIPELINE_STEP_ID_MAX 64
/* Step ids that name an entry of the run directory itself (a step's
 * directory is <spool>/run-N/<id>[@node]): inputs/ holds the user's
 * attachments.  Refused at validation. */
#define PIPELINE_RESERVED_STEP_IDS "inputs"
/* The longest duration (timeout, pending_limit, slurm time): the database
 * keeps them in integer columns (sql/001_core.sql, 006_hardening.sql). */
#define PIPELINE_DURATION_MAX 2147483647
#define PIPELINE_RETRIES_MAX 10
#define PIPELINE_STEPS_MAX 1000
/* A gres count that asks for every one of each node's devices
 * ("gpu:all", "gpu:h100:all"), with `nodes: each` only. */
#define PIPELINE_GRES_ALL "all"
#define PIPELINE_NODES_MAX 100000
/* Timeout of an `on: daemon` step that sets none. */
#define PIPELINE_DAEMON_TIMEOUT_DEFAULT 3600

/* Where a value was written: 1-based line and column; 0:0 when absent. */
struct pipeline_pos {
	unsigned line, col;
};

/* `slurm.nodes`: what the daemon makes of a Slurm step. */
enum pipeline_nodes {
	PIPELINE_NODES_COUNT = 1, /* one job of node_count nodes (default 1) */
	PIPELINE_NODES_EACH,      /* one job per node of the partition, listed
	                             when the run starts */
	PIPELINE_NODES_LIST,      /* one job per node in node_names */
};

struct pipeline_slurm {
	char *partition;   /* NULL when absent: Slurm's default partition */
	char *gres;        /* e.g. "gpu:1", "gpu:h100:2"; NULL when absent */
	char *account;     /* NULL when absent */
	char *qos;         /* NULL when absent */
	char *constraint;  /* NULL when absent */
	char *time_text;   /* as written; NULL when absent */
	long time_s;       /* seconds; 0 when absent (the partition's limit) */
	enum pipeline_nodes nodes;
	long node_count;   /* PIPELINE_NODES_COUNT: >= 1 (default 1) */
	char **node_names; /* PIPELINE_NODES_LIST: host names, in order */
	size_t n_node_names;
	/* where the values were written (for checks against the cluster) */
	struct pipeline_pos partition_at, gres_at, time_at, nodes_at;
	struct pipeline_pos *node_names_at; /* one per node_names[i] */
};

struct pipeline_step {
	char *id;
	char *plugin;           /* as written, e.g. "ncu-import" */
	char **needs;           /* step ids, in order */
	size_t *needs_idx;      /* the same steps as indexes into steps[] */
	size_t n_needs;
	bool on_daemon;         /* `on: daemon`; false: a Slurm job */
	struct job_pair *opts;  /* `with:` as key/value text, in order; a list
	                           option repeats its key once per item */
	size_t n_opts;
	char *program_option;   /* the first `with:` key whose option names a
	                           program (options_names_program: the plugin's
	                           RL_OPT_PROGRAM or a command); NULL: none, or
	                           the plugins were not opened (no plugin_dir) */
	int retries;            /* 0..PIPELINE_RETRIES_MAX, default 0 */
	long timeout_s;         /* effective: the step's `timeout`, else
	                           slurm.time_s for Slurm steps (0: the
	                           partition's limit), else
	                           PIPELINE_DAEMON_TIMEOUT_DEFAULT */
	char *timeout_text;     /* `timeout` as written; NULL when absent */
	long pending_limit_s;   /* `pending_limit` (Slurm steps): longest wait
	                           in Slurm's queue; 0: the daemon's */
	char *pending_limit_text; /* as written; NULL when absent */
	double min_success;     /* `min_success`: fraction (0, 1] of a needed
	                           fanned-out step's instances that must
	                           succeed; 0: at least one */
	struct pipeline_pos timeout_at; /* where; 0:0 when absent */
	struct pipeline_app app; /* Slurm steps: workdir, env, modules, tasks,
	                            ... (pipeline_app.h); zero when unset */
	unsigned line, col;     /* where the step's mapping starts */
};

struct pipeline {
	char *file;             /* the name given to pipeline_load */
	char *name;
	char *description;      /* NULL when absent */
	char *schedule_text;    /* NULL when absent: runs only when submitted */
	struct cron schedule;   /* valid when schedule_text is set */
	struct pipeline_slurm slurm;
	struct pipeline_step *steps; /* in file order */
	size_t n_steps;
	char *yaml;             /* the text loaded (NUL-terminated copy) */
	size_t yaml_len;
};

/*
 * Load and check the pipeline in text (len bytes; need not be
 * NUL-terminated), calling it `file` in messages.  Plugins are opened from
 * plugin_dir to check names and options (and closed again); a NULL
 * plugin_dir skips those checks (for tests and tools without plugins).
 * Returns the pipeline (caller frees with pipeline_free), or NULL with every
 * error appended to errors, one "file:line:col: message\n" line each, in
 * line/column order.
 */
struct pipeline *pipeline_load(const char *file, const char *text, size_t len,
			       const char *plugin_dir, struct strbuf *errors);

/* pipeline_load on the contents of path ("-": standard input, named
 * "<stdin>").  An unreadable or too large file gives NULL and one
 * "path: cannot read: why\n" line. */
struct pipeline *pipeline_load_file(const char *path, const char *plugin_dir,
				    struct strbuf *errors);

void pipeline_free(struct pipeline *p);

/* Is id one of PIPELINE_RESERVED_STEP_IDS? */
bool pipeline_step_id_reserved(const char *id);

/* The step with this id, or NULL.  Borrowed from p. */
const struct pipeline_step *pipeline_step_find(const struct pipeline *p,
					       const char *id);

/*
 * Fill order[0..n_steps-1] with step indexes such that every step comes
 * after the steps it needs: each time, the first step in file order whose
 * needs are all placed.
 * order must hold p->n_steps entries.  0, or -ELOOP when the needs have a
 * cycle (never for a pipeline from pipeline_load).
 */
int pipeline_topo_order(const struct pipeline *p, size_t *order);

/* One gres item, NAME[:TYPE][:COUNT], of a pipeline's request or of a
 * node's gres in Slurm's node record ("gpu:h100:2(S:0-1)"). */
struct pipeline_gres {
	char *name, *type; /* type NULL: any */
	long count;        /* 1 when not given, or "all" */
};

/* Parse comma-separated gres text into items (socket suffixes "(S:..)"
 * dropped).  Caller frees with pipeline_gres_free. */
struct pipeline_gres *pipeline_gres_parse(const char *text, size_t *n);
void pipeline_gres_free(struct pipeline_gres *items, size_t n);
/* How many of gres `name` the text declares, summed over its items (0 when
 * none; NULL text: none). */
long pipeline_gres_count(const char *gres, const char *name);

/* True when gres text asks for all of a device ("gpu:all"). */
bool pipeline_gres_wants_all(const char *gres);
/* gres with every "all" count replaced by count ("gpu:all" -> "gpu:2");
 * caller frees. */
char *pipeline_gres_resolve(const char *gres, long count);

#endif
