/*
 * ncu_import - import an existing Nsight Compute CSV export.
 *
 * For users who already have reports: `ncu --csv ... > x.csv` (details page,
 * ncu's default), `ncu --csv --page raw`, or `ncu -i x.ncu-rep --csv [--page
 * raw]`, with or without --print-units base.  The file (an RL_OPT_PATH inside
 * the run directory) is parsed with plugins/ncu/ncu_csv.h and turned into records
 * with plugins/ncu/ncu_record.h; every distinct GPU becomes a `device` record (its
 * device__attribute_*, nvlink__*, numa__*, c2clink__* columns, once) and
 * every launch a `kernel` record like the ncu plugin's, with
 * source=ncu-import, holding the metrics of the metric table
 * (etc/ncu-metrics.tsv, plugins/ncu/ncu_table.h) that the file has for the
 * launch's architecture (its CC column).  Nothing is invented: the
 * default-set metrics the file lacks are listed in `missing`; values that ncu
 * printed with a unit prefix (default units: "4.61 Kbyte") are converted to
 * base units and listed in `rounded`, since ncu rounded them.  CSV exports do
 * not say which ncu wrote them: ncu_version comes from the option of that
 * name, or is missing.  A damaged file fails the step and emits nothing.
 *
 * Reports made under srun, one per rank (NERSC's `srun ncu -o
 * report.%q{SLURM_PROCID} ...`, each exported to CSV): option `rank_files`
 * instead of `file`, one CSV per rank, in rank order or with `ranks` naming
 * each file's rank (and `nodes` each rank's node, when known); every
 * device, kernel and collect_summary record of a file carries its `rank`
 * (and `node`), as the ncu plugin's MPI path does.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncu/ncu_csv.h"
#include "ncu/ncu_record.h"
#include "ncu/ncu_table.h"
#include "ncu/ncu_value.h"
#include "ncu/perturb.h"
#include "rooflined/plugin.h"

#define NCU_TABLE_NAME "ncu-metrics.tsv"
#define MAX_ARCHS 8

struct import_config {
	char *file;
	struct rl_strlist rank_files, ranks, nodes;
	char *metrics_table;
	char *ncu_version;
	struct rl_strlist perturb;
};

static const struct rl_option import_options[] = {
	{ "file", RL_OPT_PATH, NULL, offsetof(struct import_config, file),
	  "the ncu --csv export (raw or details page), relative to the run directory (or rank_files)", 0 },
	{ "rank_files", RL_OPT_LIST, NULL, offsetof(struct import_config, rank_files),
	  "one export per MPI rank (relative to the run directory), in rank order unless ranks says", 0 },
	{ "ranks", RL_OPT_LIST, NULL, offsetof(struct import_config, ranks),
	  "with rank_files: the rank of each file", 0 },
	{ "nodes", RL_OPT_LIST, NULL, offsetof(struct import_config, nodes),
	  "with rank_files: the node each file's rank ran on", 0 },
	{ "metrics_table", RL_OPT_STRING, NULL,
	  offsetof(struct import_config, metrics_table),
	  "metric table (default $ROOFLINE_ETC/ncu-metrics.tsv)", 0 },
	{ "ncu_version", RL_OPT_STRING, NULL, offsetof(struct import_config, ncu_version),
	  "the Nsight Compute version that wrote the file, when known", 0 },
	{ "perturb", RL_OPT_LIST, NULL, offsetof(struct import_config, perturb),
	  "declared changes for tests of the regression analysis: \"KERNEL_GLOB "
	  "METRIC_GLOB +N%\" (plugins/ncu/perturb.h); changed records are "
	  "labelled synthetic", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* The columns of one architecture: default rows, then extra rows. */
struct arch_columns {
	char arch[8];
	struct ncu_record_column *cols;
	size_t n, n_default;
};

struct import_job {
	struct ncu_table *table;
	const char **names; /* every metric of the table: the parse selection */
	long n_names;
	struct ncu_csv *csv;
	struct arch_columns archs[MAX_ARCHS];
	size_t n_archs;
	struct ncu_record_column *scratch; /* one launch's columns */
	const char *file;  /* the export being read (cfg's file or a rank's) */
	const char *rank, *node; /* its rank and node; NULL: not per rank */
};

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static size_t slot_of(const struct import_job *j, const char *metric)
{
	long i;

	for (i = 0; i < j->n_names; i++)
		if (strcmp(j->names[i], metric) == 0)
			return (size_t)i;
	return (size_t)-1;
}

static struct ncu_record_column column(const struct import_job *j,
				       const struct ncu_table_row *m)
{
	return (struct ncu_record_column){ m->metric, m->role, slot_of(j, m->metric) };
}

/* Build (once) the columns of arch: its default rows, then its extra rows. */
static const struct arch_columns *columns_for(struct import_job *j,
					      const char *arch)
{
	const struct ncu_table_row **all = NULL;
	struct arch_columns *a;
	long n, i;
	size_t k = 0;

	for (i = 0; i < (long)j->n_archs; i++)
		if (strcmp(j->archs[i].arch, arch) == 0)
			return &j->archs[i];
	if (j->n_archs == MAX_ARCHS)
		return NULL;
	n = ncu_table_select(j->table, arch,
			     (const char *const[]){ "all", NCU_TABLE_SET_INSTRUCTION }, 2, &all);
	if (n < 0)
		return NULL;
	a = &j->archs[j->n_archs];
	a->cols = calloc((size_t)n + 1, sizeof(*a->cols));
	if (!a->cols) {
		free(all);
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (strcmp(all[i]->set, "default") == 0)
			a->cols[k++] = column(j, all[i]);
	a->n_default = k;
	for (i = 0; i < n; i++)
		if (strcmp(all[i]->set, "default") != 0)
			a->cols[k++] = column(j, all[i]);
	a->n = k;
	free(all);
	snprintf(a->arch, sizeof(a->arch), "%s", arch);
	j->n_archs++;
	return a;
}

/*
 * One launch's columns: every default row (absent ones become `missing`)
 * and the extra rows the file has.  Returns the count in j->scratch.
 */
static size_t launch_columns(struct import_job *j, const struct arch_columns *a,
			     const struct ncu_csv_launch *l)
{
	size_t i, n = a->n_default;

	memcpy(j->scratch, a->cols, a->n_default * sizeof(*a->cols));
	for (i = a->n_default; i < a->n; i++)
		if (a->cols[i].slot != (size_t)-1 && l->values[a->cols[i].slot])
			j->scratch[n++] = a->cols[i];
	return n;
}

static void job_release(struct import_job *j)
{
	size_t i;

	for (i = 0; i < j->n_archs; i++)
		free(j->archs[i].cols);
	free(j->scratch);
	free(j->names);
	ncu_csv_free(j->csv);
	ncu_table_free(j->table);
}

static int load_table(struct rl_ctx *ctx, const struct import_config *cfg,
		      struct import_job *j)
{
	const char *etc = getenv("ROOFLINE_ETC");
	char err[NCU_TABLE_ERRLEN], *path;
	int rc;

	if (!cfg->metrics_table && !(etc && *etc)) {
		rl_error(ctx, "no metric table: set metrics_table or ROOFLINE_ETC");
		return -EINVAL;
	}
	path = cfg->metrics_table ? strdup(cfg->metrics_table) : join(etc, NCU_TABLE_NAME);
	rc = path ? ncu_table_load(path, &j->table, err, sizeof(err)) : -ENOMEM;
	free(path);
	if (rc) {
		rl_error(ctx, "%s", rc == -ENOMEM ? "out of memory" : err);
		return rc;
	}
	j->n_names = ncu_table_names(j->table, &j->names);
	j->scratch = calloc((size_t)j->table->n + 1, sizeof(*j->scratch));
	if (j->n_names < 0 || !j->scratch) {
		rl_error(ctx, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int parse_file(struct rl_ctx *ctx, const struct import_config *cfg,
		      struct import_job *j)
{
	char err[NCU_CSV_ERRLEN], *path = join(ctx->run_dir, j->file);
	int rc;

	(void)cfg;
	if (!path)
		return -ENOMEM;
	rc = ncu_csv_read_file(path, j->names, (size_t)j->n_names, &j->csv, err,
			       sizeof(err));
	free(path);
	if (rc) {
		rl_error(ctx, "%s", rc == -ENOMEM ? "out of memory" : err);
		if (strstr(err, "has no value for any"))
			rl_info(ctx, "a details page made with --section names metrics by their labels; "
				"export the raw page instead: ncu -i REPORT --csv --page raw --print-units base");
	}
	return rc;
}

/* The architecture of a launch from its CC column ("" when unknown). */
static const char *launch_arch(struct rl_ctx *ctx, const struct ncu_csv_launch *l,
			       char *buf, size_t size, bool *warned)
{
	if (ncu_table_arch_of_cc(l->cc, buf, size))
		return buf;
	if (!*warned)
		rl_warn(ctx, "launch %s has no usable CC column ('%s'): using the table's '*' rows",
			l->id, l->cc ? l->cc : "");
	*warned = true;
	buf[0] = '\0';
	return buf;
}

/* The device records, then the kernel records. */
/* Emit a kernel record, through the declared perturbations when any. */
static int emit_kernel(struct rl_ctx *ctx, const struct perturb_rules *rules,
		       const struct rl_field *fields)
{
	struct rl_field *out;
	size_t nf = 0, textsize;
	char *text;
	int rc;

	if (!rules->n)
		return rl_emit(ctx, "kernel", fields);
	while (fields[nf].key)
		nf++;
	textsize = 64 * nf + 4096;
	out = calloc(nf + 2, sizeof(*out));
	text = malloc(textsize);
	rc = out && text ? perturb_apply(rules, fields, out, nf + 2, text, textsize)
			 : -ENOMEM;
	if (rc >= 0)
		rc = rl_emit(ctx, "kernel", out);
	free(out);
	free(text);
	return rc;
}

static int emit_kernels(struct rl_ctx *ctx, const struct import_config *cfg,
			const struct perturb_rules *rules, struct import_job *j,
			long *passes)
{
	struct rl_field extra[6] = {
		{ "source", "ncu-import" }, { "file", j->file },
	};
	size_t x = 2;
	struct ncu_record rec = { 0 };
	bool warned = false;
	size_t i, k, n;
	int err = 0;

	if (cfg->ncu_version)
		extra[x++] = (struct rl_field){ "ncu_version", cfg->ncu_version };
	if (j->rank)
		extra[x++] = (struct rl_field){ "rank", j->rank };
	if (j->node)
		extra[x++] = (struct rl_field){ "node", j->node };
	*passes = -1;
	for (i = 0; !err && i < j->csv->n_devices; i++) {
		err = ncu_record_device(j->csv, i, extra, &rec);
		if (!err)
			err = rl_emit(ctx, "device", rec.fields);
	}
	for (i = 0; !err && i < j->csv->n_launches; i++) {
		const struct ncu_csv_launch *l = &j->csv->launches[i];
		char arch[8];
		const struct arch_columns *a =
			columns_for(j, launch_arch(ctx, l, arch, sizeof(arch), &warned));

		if (!a) {
			err = -ENOMEM;
			break;
		}
		n = launch_columns(j, a, l);
		err = ncu_record_kernel(j->csv, i, j->scratch, n, extra, &rec);
		if (!err)
			err = emit_kernel(ctx, rules, rec.fields);
		for (k = 0; k < n; k++) {
			double p;

			if (j->scratch[k].role && strcmp(j->scratch[k].role, "passes") == 0 &&
			    j->scratch[k].slot != (size_t)-1 &&
			    !ncu_value_parse(l->values[j->scratch[k].slot], &p) && p > *passes)
				*passes = (long)p;
		}
	}
	ncu_record_release(&rec);
	return err;
}

static long distinct_kernels(const struct ncu_csv *t)
{
	size_t i, j;
	long n = 0;

	for (i = 0; i < t->n_launches; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(t->launches[j].kernel, t->launches[i].kernel) == 0)
				break;
		n += j == i;
	}
	return n;
}

static int emit_summary(struct rl_ctx *ctx, const struct import_config *cfg,
			const struct import_job *j, long passes)
{
	(void)cfg;
	char kern[24], inv[24], pas[24], skip[24];
	struct rl_field f[12];
	size_t n = 0;

	snprintf(kern, sizeof(kern), "%ld", distinct_kernels(j->csv));
	snprintf(inv, sizeof(inv), "%zu", j->csv->n_launches);
	snprintf(pas, sizeof(pas), "%ld", passes);
	snprintf(skip, sizeof(skip), "%zu", j->csv->skipped_lines);
	f[n++] = (struct rl_field){ "source", "ncu-import" };
	f[n++] = (struct rl_field){ "file", j->file };
	if (j->rank)
		f[n++] = (struct rl_field){ "rank", j->rank };
	if (j->node)
		f[n++] = (struct rl_field){ "node", j->node };
	f[n++] = (struct rl_field){ "layout",
				    j->csv->layout == NCU_CSV_RAW ? "raw" : "details" };
	f[n++] = (struct rl_field){ "kernels", kern };
	f[n++] = (struct rl_field){ "invocations", inv };
	if (passes >= 0)
		f[n++] = (struct rl_field){ "passes", pas };
	f[n++] = (struct rl_field){ "skipped_lines", skip };
	/* An export knows neither ncu's wall time nor its command line. */
	f[n++] = (struct rl_field){ "missing", passes >= 0 ? "wall_s,command" :
							     "passes,wall_s,command" };
	f[n] = (struct rl_field){ NULL, NULL };
	return rl_emit(ctx, "collect_summary", f);
}

/* A rank file's path: relative, no ".." (as the validator checks `file`). */
static bool contained(const char *p)
{
	const char *c = p;

	if (!*p || *p == '/')
		return false;
	while (*c) {
		size_t n = strcspn(c, "/");

		if (n == 2 && c[0] == '.' && c[1] == '.')
			return false;
		c += n;
		while (*c == '/')
			c++;
	}
	return true;
}

/* Check the file options; 0 or -EINVAL (logged). */
static int check_files(struct rl_ctx *ctx, const struct import_config *cfg)
{
	const struct rl_strlist *rf = &cfg->rank_files;

	if (!cfg->file == !rf->n) {
		rl_error(ctx, "give either file or rank_files (one export per rank)");
		return -EINVAL;
	}
	if ((cfg->ranks.n && cfg->ranks.n != rf->n) || (cfg->nodes.n && cfg->nodes.n != rf->n)) {
		rl_error(ctx, "ranks and nodes must name one rank and one node per item of rank_files (%zu)",
			 rf->n);
		return -EINVAL;
	}
	for (size_t i = 0; i < rf->n; i++)
		if (!contained(rf->v[i])) {
			rl_error(ctx, "rank_files: path '%s' leaves the run directory", rf->v[i]);
			return -EINVAL;
		}
	return 0;
}

/* One export: parsed, then its records. */
static enum rl_result import_one(struct rl_ctx *ctx, const struct import_config *cfg,
				 const struct perturb_rules *rules, struct import_job *j)
{
	long passes;

	for (size_t i = 0; i < j->n_archs; i++)
		free(j->archs[i].cols); /* slots of the previous file's columns */
	j->n_archs = 0;
	ncu_csv_free(j->csv);
	j->csv = NULL;
	if (parse_file(ctx, cfg, j))
		return RL_FAIL;
	rl_info(ctx, "%s: %zu kernel launches (%s page)%s%s", j->file, j->csv->n_launches,
		j->csv->layout == NCU_CSV_RAW ? "raw" : "details",
		j->rank ? ", rank " : "", j->rank ? j->rank : "");
	if (emit_kernels(ctx, cfg, rules, j, &passes) ||
	    emit_summary(ctx, cfg, j, passes)) {
		rl_error(ctx, "cannot emit records");
		return RL_RETRY;
	}
	return RL_OK;
}

static enum rl_result import_run(struct rl_ctx *ctx, const void *config,
				 void *state)
{
	const struct import_config *cfg = config;
	struct import_job j;
	struct perturb_rules rules = { NULL, 0 };
	enum rl_result r = RL_FAIL;
	char err[512], rank[24];

	(void)state;
	memset(&j, 0, sizeof(j));
	if (check_files(ctx, cfg) || load_table(ctx, cfg, &j))
		goto out;
	if (perturb_parse(cfg->perturb.v, cfg->perturb.n, &rules, err, sizeof(err)) < 0) {
		rl_error(ctx, "%s", err);
		goto out;
	}
	if (cfg->file) {
		j.file = cfg->file;
		r = import_one(ctx, cfg, &rules, &j);
	}
	for (size_t i = 0, n = cfg->rank_files.n; i < n && (i == 0 || r == RL_OK); i++) {
		snprintf(rank, sizeof(rank), "%zu", i);
		j.file = cfg->rank_files.v[i];
		j.rank = cfg->ranks.n ? cfg->ranks.v[i] : rank;
		j.node = cfg->nodes.n ? cfg->nodes.v[i] : NULL;
		r = import_one(ctx, cfg, &rules, &j);
	}
out:
	perturb_release(&rules);
	job_release(&j);
	return r;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "ncu_import",
	.version = "1.0",
	.stage = RL_STAGE_COLLECT,
	.summary = "import an existing ncu --csv export (raw or details page) as kernel records",
	.options = import_options,
	.config_size = sizeof(struct import_config),
	.run = import_run,
};
