/*
 * instruction - the Instruction Roofline of every profiled kernel (Ding and
 * Williams, PMBS'19; docs/instruction-roofline.md).
 *
 * Stage analyze, an `on: daemon` step.  Inputs: the `kernel` and `device`
 * records of ncu / ncu_import steps that collected the instruction rows
 * (`extra: [instruction]`, etc/ncu-metrics.tsv set "instruction"), and the
 * `ceiling` records of an ert step (the bandwidths, and inst_warp when ert
 * ran with `precisions: [..., inst]`).  Per kernel (name, on one GPU),
 * summed over its invocations, it emits one `ipoint` record per level:
 *
 *   level        l1_global l1_shared l2 dram: every warp instruction over
 *                that level's transactions (32-byte sectors; shared:
 *                wavefronts); global shared: the load/store instructions of
 *                that space over its transactions (the memory-wall charts)
 *   kernel invocations warp_inst transactions intensity time_s gips
 *   roof_gips pct_of_roof  min(peak, intensity x GTXN/s), gips as a % of it
 *   peak_gips peak_method  the measured peak (ert inst_warp) when there is
 *                one, else the theoretical (SMs x schedulers x clock)
 *   bound        compute, or the level when its bandwidth roof is lower
 *   integer_only 1 when the kernel ran integer instructions and no FLOP
 *   gpu_name gpu_uuid gpu_index ceilings_gpu (the UUID the ceilings came
 *                from: the kernel's, else another GPU of the same name,
 *                with a warning)
 *
 * before them, per GPU, `iroof` records (name peak_theoretical, inst_warp,
 * or a level's bandwidth; value in warp GIPS or GTXN/s; method theoretical
 * or empirical) and `iwall` records (space global: stride 0, unit stride
 * and uncoalesced for 4-byte words; shared: no conflict to 32-way;
 * theoretical, from plugins/instruction/instr_math.h).  With `chart: true` it draws
 * instruction.svg, the first GPU's, with gnuplot
 * (plugins/instruction/ir_chart.c; no chart is a warning, not a failure).  A kernel
 * without the instruction metrics is left out with a warning; no kernel at
 * all with them fails the step.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instruction/instr_math.h"
#include "instruction/ir_chart.h"
#include "instruction/ir_model.h"
#include "ncu/ncu_table.h"
#include "ncu/ncu_value.h"
#include "rooflined/plugin.h"

struct ir_config {
	char *metrics_table;
	char *inst_ceiling;
	struct rl_strlist bw[4]; /* l1 global, shared, l2, dram ceiling names */
	int chart;
	char *gnuplot;
};

static const struct rl_option ir_options[] = {
	{ "metrics_table", RL_OPT_STRING, NULL, offsetof(struct ir_config, metrics_table),
	  "metric table (default $ROOFLINE_ETC/ncu-metrics.tsv)", 0 },
	{ "inst_ceiling", RL_OPT_STRING, "inst_warp", offsetof(struct ir_config, inst_ceiling),
	  "measured warp-instruction ceiling (ert precisions: [inst])", 0 },
	{ "l1_ceilings", RL_OPT_LIST, "l1", offsetof(struct ir_config, bw[0]),
	  "L1 bandwidth ceiling names (32-byte sectors), first found wins", 0 },
	{ "shared_ceilings", RL_OPT_LIST, "shared", offsetof(struct ir_config, bw[1]),
	  "shared-memory bandwidth ceiling names (128-byte wavefronts)", 0 },
	{ "l2_ceilings", RL_OPT_LIST, "l2", offsetof(struct ir_config, bw[2]),
	  "L2 bandwidth ceiling names", 0 },
	{ "dram_ceilings", RL_OPT_LIST, "hbm_read,hbm_triad", offsetof(struct ir_config, bw[3]),
	  "DRAM bandwidth ceiling names", 0 },
	{ "chart", RL_OPT_BOOL, "true", offsetof(struct ir_config, chart),
	  "draw instruction.svg with gnuplot", 0 },
	{ "gnuplot", RL_OPT_STRING | RL_OPT_PROGRAM, "gnuplot", offsetof(struct ir_config, gnuplot),
	  "the gnuplot program (name on PATH, or a path)", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};


/* Which sum a role feeds, or -1. */
static int sum_of_role(const char *role)
{
	static const struct { const char *role; int sum; } map[] = {
		{ "time_ns", S_TIME_NS }, { "inst_warp", S_INST }, { "inst_int", S_INST_INT },
		{ "inst_global", S_INST_GLOBAL }, { "inst_shared", S_INST_SHARED },
		{ "txn_l1_global", S_TXN_L1G }, { "txn_shared", S_TXN_SHARED },
		{ "txn_l2", S_TXN_L2 }, { "txn_dram", S_TXN_DRAM },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].role, role) == 0)
			return map[i].sum;
	if (strncmp(role, "flop_", 5) == 0 || ncu_table_is_datapath(role))
		return S_FLOP;
	return -1;
}

/* ---- the run's state ------------------------------------------------------- */

#define IR_MAX_ARCHS 8

struct ir_arch {
	char arch[8];
	const struct ncu_table_row **sel;
	long n;
};

struct ir_job {
	struct rl_ctx *ctx;
	const struct ir_config *cfg;
	struct ncu_table *table;
	struct ir_arch archs[IR_MAX_ARCHS];
	size_t n_archs;
	struct ir_gpu *gpus;
	size_t n_gpus;
	struct ir_kernel *kernels;
	size_t n_kernels;
	long skipped;
};

static const char *field(const struct rl_field *f, const char *key)
{
	const char *v = rl_field_get(f, key);

	return v ? v : "";
}

static double number(const struct rl_field *f, const char *key)
{
	double x;

	return ncu_value_parse(rl_field_get(f, key), &x) == 0 ? x : NAN;
}

static void gpu_key(const struct rl_field *f, char *key, size_t size)
{
	const char *uuid = rl_field_get(f, "gpu_uuid");

	if (uuid && *uuid)
		snprintf(key, size, "%s", uuid);
	else
		snprintf(key, size, "%s:%s", field(f, "gpu_index"), field(f, "gpu_name"));
}

static struct ir_gpu *gpu_find(struct ir_job *j, const char *key)
{
	for (size_t i = 0; i < j->n_gpus; i++)
		if (strcmp(j->gpus[i].key, key) == 0)
			return &j->gpus[i];
	return NULL;
}

/* The GPU of a record, added when new; NULL: out of memory. */
static struct ir_gpu *gpu_of(struct ir_job *j, const struct rl_field *f)
{
	char key[160];
	struct ir_gpu *g, *more;

	gpu_key(f, key, sizeof(key));
	if ((g = gpu_find(j, key)))
		return g;
	more = realloc(j->gpus, (j->n_gpus + 1) * sizeof(*more));
	if (!more)
		return NULL;
	j->gpus = more;
	g = &j->gpus[j->n_gpus++];
	memset(g, 0, sizeof(*g));
	snprintf(g->key, sizeof(g->key), "%s", key);
	snprintf(g->name, sizeof(g->name), "%s", field(f, "gpu_name"));
	snprintf(g->uuid, sizeof(g->uuid), "%s", field(f, "gpu_uuid"));
	snprintf(g->index, sizeof(g->index), "%s", field(f, "gpu_index"));
	g->sms = g->schedulers = g->clock_hz = NAN;
	g->peak_theory = g->peak_measured = NAN;
	for (int l = 0; l < IR_LEVELS; l++)
		g->gtxn[l] = NAN;
	return g;
}

static int on_device(void *arg, const char *step, const char *kind, const struct rl_field *f)
{
	struct ir_job *j = arg;
	struct ir_gpu *g = gpu_of(j, f);
	double khz = number(f, "device__attribute_max_gpu_frequency_khz");

	(void)step, (void)kind;
	if (!g)
		return -ENOMEM;
	if (!isfinite(khz))
		khz = number(f, "device__attribute_clock_rate");
	g->sms = number(f, "device__attribute_multiprocessor_count");
	g->schedulers = number(f, "device__attribute_num_schedulers_per_multiprocessor");
	if (!isfinite(g->schedulers))
		g->schedulers = IRM_SCHEDULERS_PER_SM;
	g->clock_hz = khz * 1e3;
	g->peak_theory = irm_peak_gips(g->sms, g->schedulers, g->clock_hz);
	return 0;
}

/* The selected rows of arch (the instruction rows included), cached. */
static struct ir_arch *arch_rows(struct ir_job *j, const char *cc)
{
	static const char *const extra[] = { "all", NCU_TABLE_SET_INSTRUCTION };
	char arch[8];
	struct ir_arch *a;

	if (!ncu_table_arch_of_cc(cc, arch, sizeof(arch)))
		return NULL;
	for (size_t i = 0; i < j->n_archs; i++)
		if (strcmp(j->archs[i].arch, arch) == 0)
			return &j->archs[i];
	if (j->n_archs == IR_MAX_ARCHS)
		return NULL;
	a = &j->archs[j->n_archs];
	a->n = ncu_table_select(j->table, arch, extra, 2, &a->sel);
	if (a->n < 0)
		return NULL;
	snprintf(a->arch, sizeof(a->arch), "%s", arch);
	j->n_archs++;
	return a;
}

static struct ir_kernel *kernel_of(struct ir_job *j, const char *name, const char *gpu)
{
	struct ir_kernel *k, *more;

	for (size_t i = 0; i < j->n_kernels; i++)
		if (strcmp(j->kernels[i].name, name) == 0 && strcmp(j->kernels[i].gpu, gpu) == 0)
			return &j->kernels[i];
	more = realloc(j->kernels, (j->n_kernels + 1) * sizeof(*more));
	if (!more)
		return NULL;
	j->kernels = more;
	k = &j->kernels[j->n_kernels];
	memset(k, 0, sizeof(*k));
	if (!(k->name = strdup(name)))
		return NULL;
	snprintf(k->gpu, sizeof(k->gpu), "%s", gpu);
	for (int s = 0; s < S_SUMS; s++)
		k->has[s] = true;
	j->n_kernels++;
	return k;
}

/* One launch into its kernel's sums: each role's parts x factor.  A part
 * the record lacks makes that sum unknown. */
static int on_kernel(void *arg, const char *step, const char *kind, const struct rl_field *f)
{
	struct ir_job *j = arg;
	struct ir_arch *a = arch_rows(j, rl_field_get(f, "cc"));
	const char *name = rl_field_get(f, "kernel");
	struct ir_kernel *k;
	struct ir_gpu *g;

	(void)step, (void)kind;
	if (!name || !a) {
		j->skipped++;
		return 0;
	}
	if (!(g = gpu_of(j, f)) || !(k = kernel_of(j, name, g->key)))
		return -ENOMEM;
	k->invocations++;
	for (long i = 0; i < a->n; i++) {
		int s = sum_of_role(a->sel[i]->role);
		double v, factor;

		if (s < 0)
			continue;
		v = number(f, a->sel[i]->metric);
		if (ncu_value_parse(a->sel[i]->factor, &factor))
			factor = 1;
		if (!isfinite(v)) {
			if (s != S_FLOP || strcmp(a->sel[i]->set, "default") == 0)
				k->has[s] = false;
			continue;
		}
		k->sum[s] += v * factor;
	}
	return 0;
}

/* The rank of name in a list (lower: preferred), or -1. */
static long rank_in(const struct rl_strlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], name) == 0)
			return (long)i;
	return -1;
}

struct ceil_pass {
	struct ir_job *j;
	struct ir_gpu *g;       /* the GPU whose ceilings are wanted */
	bool by_name;           /* match the GPU's name, not its key */
	long rank[4];
	bool found;
	char from[96];          /* the ceilings' UUID */
};

static int on_ceiling(void *arg, const char *step, const char *kind, const struct rl_field *f)
{
	static const int level_of[4] = { IR_L1G, IR_L1S, IR_L2, IR_DRAM };
	static const double bytes[4] = { IRM_SECTOR_BYTES, IRM_WAVEFRONT_BYTES,
					 IRM_SECTOR_BYTES, IRM_SECTOR_BYTES };
	struct ceil_pass *c = arg;
	const char *name = field(f, "name");
	char key[160];
	double v = number(f, "value");

	(void)step, (void)kind;
	gpu_key(f, key, sizeof(key));
	if (c->by_name ? strcmp(field(f, "gpu_name"), c->g->name) != 0 : strcmp(key, c->g->key) != 0)
		return 0;
	if (!isfinite(v) || v <= 0)
		return 0;
	if (strcmp(name, c->j->cfg->inst_ceiling) == 0) {
		c->g->peak_measured = v / 1e9;
		c->found = true;
		snprintf(c->from, sizeof(c->from), "%s", field(f, "gpu_uuid"));
	}
	for (int b = 0; b < 4; b++) {
		long r = rank_in(&c->j->cfg->bw[b], name);

		if (r < 0 || (c->rank[b] >= 0 && r >= c->rank[b]))
			continue;
		c->rank[b] = r;
		c->g->gtxn[level_of[b]] = irm_gtxn(v, bytes[b]);
		snprintf(c->g->bw_name[level_of[b]], sizeof(c->g->bw_name[0]), "%s", name);
		c->found = true;
		snprintf(c->from, sizeof(c->from), "%s", field(f, "gpu_uuid"));
	}
	return 0;
}

/* The ceilings of g: its own, else those of a GPU of the same name. */
static int gpu_ceilings(struct ir_job *j, struct ir_gpu *g, char *from, size_t size)
{
	struct ceil_pass c = { j, g, false, { -1, -1, -1, -1 }, false, "" };
	int rc = rl_each_input(j->ctx, "ceiling", on_ceiling, &c);

	if (!rc && !c.found) {
		c.by_name = true;
		rc = rl_each_input(j->ctx, "ceiling", on_ceiling, &c);
		if (!rc && c.found)
			rl_warn(j->ctx, "GPU %s '%s' has no ceilings of its own: those of %s, a GPU of the same name",
				g->uuid[0] ? g->uuid : g->index, g->name, c.from);
	}
	g->gtxn[IR_GLOBAL] = g->gtxn[IR_L1G];
	g->gtxn[IR_SHARED] = g->gtxn[IR_L1S];
	snprintf(g->bw_name[IR_GLOBAL], sizeof(g->bw_name[0]), "%s", g->bw_name[IR_L1G]);
	snprintf(g->bw_name[IR_SHARED], sizeof(g->bw_name[0]), "%s", g->bw_name[IR_L1S]);
	snprintf(from, size, "%s", c.from);
	if (!rc && !c.found)
		rl_warn(j->ctx, "no ceilings for GPU '%s': points carry no roof", g->name);
	return rc;
}

/* ---- records ------------------------------------------------------------------ */

/* A record under construction: fields whose value is undefined left out. */
struct rec {
	struct rl_field f[32];
	char num[32][32];
	size_t n;
};

static void put(struct rec *r, const char *key, const char *value)
{
	if (value && r->n < 31)
		r->f[r->n++] = (struct rl_field){ key, value };
	r->f[r->n] = (struct rl_field){ NULL, NULL };
}

static void putd(struct rec *r, const char *key, double v)
{
	if (!isfinite(v) || r->n >= 31)
		return;
	snprintf(r->num[r->n], sizeof(r->num[0]), "%.15g", v);
	put(r, key, r->num[r->n]);
}

static void put_gpu(struct rec *r, const struct ir_gpu *g)
{
	put(r, "gpu_name", g->name);
	if (g->uuid[0])
		put(r, "gpu_uuid", g->uuid);
	put(r, "gpu_index", g->index);
}

static int emit_roof(struct rl_ctx *ctx, const struct ir_gpu *g, const char *name,
		     const char *kind, const char *level, double value, const char *unit,
		     const char *method)
{
	struct rec r = { .n = 0 };

	if (!isfinite(value))
		return 0;
	put_gpu(&r, g);
	put(&r, "name", name);
	put(&r, "kind", kind);
	if (level)
		put(&r, "level", level);
	putd(&r, "value", value);
	put(&r, "unit", unit);
	put(&r, "method", method);
	return rl_emit(ctx, "iroof", r.f);
}

static int emit_wall(struct rl_ctx *ctx, const struct ir_gpu *g, const char *space,
		     const char *label, double intensity)
{
	struct rec r = { .n = 0 };

	put_gpu(&r, g);
	put(&r, "space", space);
	put(&r, "label", label);
	putd(&r, "intensity", intensity);
	put(&r, "method", "theoretical");
	return rl_emit(ctx, "iwall", r.f);
}

/* A GPU's roofs and walls. */
static int emit_gpu(struct rl_ctx *ctx, const struct ir_gpu *g)
{
	static const struct { const char *label; int ways; } shared[] = {
		{ "no conflict", 1 }, { "2-way", 2 }, { "4-way", 4 }, { "8-way", 8 },
		{ "16-way", 16 }, { "32-way", 32 },
	};
	int rc = emit_roof(ctx, g, "peak_theoretical", "peak", NULL, g->peak_theory, "warp GIPS",
			   "theoretical");

	if (!rc)
		rc = emit_roof(ctx, g, "inst_warp", "peak", NULL, g->peak_measured, "warp GIPS",
			       "empirical");
	for (int l = IR_L1G; !rc && l <= IR_DRAM; l++)
		rc = emit_roof(ctx, g, g->bw_name[l], "bandwidth", ir_level_names[l], g->gtxn[l],
			       "GTXN/s", "empirical");
	if (!rc)
		rc = emit_wall(ctx, g, "global", "stride 0", irm_global_wall(4, 0));
	if (!rc)
		rc = emit_wall(ctx, g, "global", "unit stride", irm_global_wall(4, 1));
	if (!rc)
		rc = emit_wall(ctx, g, "global", "uncoalesced", irm_global_wall(4, 32));
	for (size_t i = 0; !rc && i < sizeof(shared) / sizeof(shared[0]); i++)
		rc = emit_wall(ctx, g, "shared", shared[i].label, irm_shared_wall(shared[i].ways));
	return rc;
}

static int emit_points(struct rl_ctx *ctx, const struct ir_kernel *k, const struct ir_gpu *g,
		       const char *from)
{
	bool int_only = k->has[S_FLOP] && k->sum[S_FLOP] == 0 && k->has[S_INST_INT] &&
			k->sum[S_INST_INT] > 0;
	int rc = 0;

	for (int l = 0; !rc && l < IR_LEVELS; l++) {
		struct ir_point_values p;
		struct rec r = { .n = 0 };

		if (!ir_point(k, g, l, &p))
			continue;
		put(&r, "kernel", k->name);
		putd(&r, "invocations", (double)k->invocations);
		put(&r, "level", ir_level_names[l]);
		putd(&r, "warp_inst", p.inst);
		putd(&r, "transactions", p.txn);
		putd(&r, "intensity", p.intensity);
		putd(&r, "time_s", p.time_s);
		putd(&r, "gips", p.gips);
		putd(&r, "roof_gips", p.roof);
		putd(&r, "pct_of_roof", p.gips / p.roof * 100);
		putd(&r, "peak_gips", p.peak);
		put(&r, "peak_method", p.peak_method);
		if (isfinite(p.roof))
			put(&r, "bound", p.compute_bound ? "compute" : ir_level_names[l]);
		put(&r, "integer_only", int_only ? "1" : "0");
		put_gpu(&r, g);
		if (from && *from)
			put(&r, "ceilings_gpu", from);
		rc = rl_emit(ctx, "ipoint", r.f);
	}
	return rc;
}

/* ---- plugin ------------------------------------------------------------------- */

static int ir_init(struct rl_ctx *ctx, const void *config, void **state)
{
	const struct ir_config *cfg = config;
	const char *etc = getenv("ROOFLINE_ETC");
	char err[NCU_TABLE_ERRLEN], path[4096];
	struct ncu_table *t = NULL;
	int rc;

	if (!cfg->metrics_table && !(etc && *etc)) {
		rl_error(ctx, "no metric table: set metrics_table or ROOFLINE_ETC");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s%s", cfg->metrics_table ? cfg->metrics_table : etc,
		 cfg->metrics_table ? "" : "/ncu-metrics.tsv");
	rc = ncu_table_load(path, &t, err, sizeof(err));
	if (rc) {
		rl_error(ctx, "%s", rc == -ENOMEM ? "out of memory" : err);
		return rc;
	}
	*state = t;
	return 0;
}

static void ir_fini(void *state)
{
	ncu_table_free(state);
}

static void job_release(struct ir_job *j)
{
	for (size_t i = 0; i < j->n_archs; i++)
		free(j->archs[i].sel);
	for (size_t i = 0; i < j->n_kernels; i++)
		free(j->kernels[i].name);
	free(j->kernels);
	free(j->gpus);
}

/* Every GPU's roofs, then every kernel's points; the chart. */
static enum rl_result emit_all(struct ir_job *j)
{
	size_t with = 0;
	char (*from)[96] = calloc(j->n_gpus + 1, sizeof(*from));

	if (!from)
		return RL_RETRY;
	for (size_t i = 0; i < j->n_gpus; i++)
		if (gpu_ceilings(j, &j->gpus[i], from[i], sizeof(from[i])) ||
		    emit_gpu(j->ctx, &j->gpus[i]))
			goto out_retry;
	for (size_t i = 0; i < j->n_kernels; i++) {
		const struct ir_kernel *k = &j->kernels[i];
		struct ir_gpu *g = gpu_find(j, k->gpu);

		if (!k->has[S_INST] || !k->has[S_TIME_NS]) {
			rl_warn(j->ctx, "kernel '%s': no instruction metrics (ncu step option extra: [instruction]): left out",
				k->name);
			continue;
		}
		with++;
		if (emit_points(j->ctx, k, g, from[g - j->gpus]))
			goto out_retry;
	}
	free(from);
	if (!with) {
		rl_error(j->ctx, "no kernel has the instruction metrics (ncu step option extra: [instruction])");
		return RL_FAIL;
	}
	rl_info(j->ctx, "%zu kernel(s) on %zu GPU(s)", with, j->n_gpus);
	return RL_OK;
out_retry:
	free(from);
	rl_error(j->ctx, "cannot emit records");
	return RL_RETRY;
}

static enum rl_result ir_run(struct rl_ctx *ctx, const void *config, void *state)
{
	struct ir_job j = { .ctx = ctx, .cfg = config, .table = state };
	enum rl_result r = RL_FAIL;
	char err[256];

	if (rl_each_input(ctx, "device", on_device, &j) ||
	    rl_each_input(ctx, "kernel", on_kernel, &j)) {
		rl_error(ctx, "cannot read the input records (out of memory)");
		goto out;
	}
	if (j.skipped)
		rl_warn(ctx, "%ld kernel record(s) without a name or a known cc: left out", j.skipped);
	r = emit_all(&j);
	if (r == RL_OK && j.cfg->chart && j.n_gpus &&
	    ir_chart_draw(ctx->out_dir, j.cfg->gnuplot, &j.gpus[0], j.kernels, j.n_kernels, err,
			  sizeof(err)))
		rl_warn(ctx, "no chart: %s", err);
out:
	job_release(&j);
	return r;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "instruction",
	.version = "1.0",
	.stage = RL_STAGE_ANALYZE,
	.summary = "Instruction Roofline: warp GIPS against warp instructions per transaction, with the memory walls",
	.options = ir_options,
	.config_size = sizeof(struct ir_config),
	.init = ir_init,
	.run = ir_run,
	.fini = ir_fini,
};
