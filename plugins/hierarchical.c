/*
 * hierarchical - the hierarchical roofline of every profiled kernel.
 *
 * Stage analyze, an `on: daemon` step.  Inputs: the `ceiling` records of the
 * needed ert (method empirical) and spec (method theoretical) steps, and the
 * `kernel` records of the needed ncu / ncu_import steps (one per launch,
 * every metric under its ncu name, see docs/collect.md).  The metric table
 * (etc/ncu-metrics.tsv) says what each metric is: FLOPs = value x factor of
 * the flop_* and tensor_* roles (so add + mul + 2 fma, 512 per V100 tensor
 * instruction, Hopper's tensor datapaths as counted), bytes = value x factor
 * of the bytes_* roles, time = time_ns (or sm_cycles / sm_clock_hz).
 * docs/analysis.md has the formulas, thresholds and sources.
 *
 * For each kernel (name, on one GPU of one node), summed over its
 * invocations, and per invocation when `invocations: true`, it emits one
 * `point` record per precision and memory level, with these fields in this
 * order (plugins/hierarchical/points.c builds them):
 *
 *   kernel invocation     the name as ncu printed it; ncu's launch ID, or
 *                         "all" for the sum over the kernel's invocations
 *   invocations           how many invocations the point sums (1 or more)
 *   precision             fp64 fp32 fp16 (CUDA cores), tc_fp64 tc_fp16
 *                         tc_bf16 tc_tf32 tc_fp8 tc_int8 (tensor datapaths,
 *                         never summed into the CUDA-core points), or all
 *                         (the sum of the others but tc_int8)
 *   level                 l1 l2 dram
 *   bytes ai              bytes at the level; AI = flops / bytes
 *   roof_gflops           min(compute_gflops, ai x bandwidth_gbs) at this level
 *   pct_of_roof           gflops / roof_gflops x 100
 *   bandwidth_ceiling bandwidth_gbs bandwidth_method   the level's ceiling
 *   flops time_s gflops   FLOPs (operations for tc_int8), seconds (summed),
 *                         GFLOP/s = flops / time_s / 1e9
 *   bound_level           the level of the lowest roof over the levels, or
 *                         "compute" when the peak is lowest (the same for
 *                         every level of a kernel and precision)
 *   bound_ceiling bound_gflops pct_of_bound   that roof's ceiling, value,
 *                         and gflops as a % of it
 *   verdict               latency-bound (pct_of_bound < latency_pct),
 *                         compute-bound, or bandwidth-bound (at bound_level)
 *   alpha                 FMA / (FMA + ADD + MUL) instructions (CUDA cores)
 *   partial_fma_gflops pct_of_partial_fma   compute_gflops x (1 + alpha) / 2
 *                         and gflops as a % of it (not for tensor points)
 *   compute_ceiling compute_gflops compute_method   the compute ceiling (for
 *                         "all": the mix of its parts' peaks, names joined
 *                         by "+", method "mixed" when they differ)
 *   share_pct primary     this precision's share of the time the kernel's
 *                         work needs at the peaks (flops / peak); primary=1
 *                         on the precision with the largest share
 *   byte_definition       nersc or ncu;  time_source: duration, cycles, mixed
 *   gpu_name gpu_uuid gpu_index node cc     the GPU (uuid from the ceilings)
 *   caveat                hfma2.mma: the fp16 FLOPs may be HFMA2.MMA register
 *                         moves (docs/collect.md), not half-precision math
 *   rank                  an MPI rank's kernel (its records carried `rank`):
 *                         each rank's are points of their own
 *
 * For a kernel profiled on two or more ranks, `rank_balance` records per
 * rank and over all ranks flag the ranks whose time is more than
 * imbalance_pct off the mean (load imbalance; plugins/hierarchical/ranks.h).
 *
 * Numbers are %.15g; a field whose value is undefined is left out.  And one
 * `roof` record per ceiling used per GPU, emitted first: gpu_name gpu_uuid
 * gpu_index node cc name kind (compute|bandwidth) role (peak|no_fma|
 * bandwidth) precision (compute) or level (bandwidth), value (GFLOP/s, GOP/s
 * or GB/s) unit method.
 *
 * Ceilings come from the same node and GPU (gpu_uuid, else node + gpu_index
 * + gpu_name; the node is a record's `node` field, else its step's
 * "step@node" name, else the node in the step's exit.tsv), the first of the
 * option `methods` (empirical, theoretical) that has one of the level's
 * ceiling names, in the order of the options l1/l2/dram_ceilings.  A kernel
 * without ceilings, or a ceiling a point needs that is missing, fails the
 * step with a message naming it (missing_ceilings: skip leaves the point
 * out).  Metrics a kernel record lacks (its `missing` field, n/a, absent)
 * leave that precision or level out, with a warning; nothing is made up.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hierarchical/points.h"
#include "hierarchical/ranks.h"
#include "ncu/ncu_table.h"
#include "hierarchical/roofline_math.h"
#include "rooflined/plugin.h"

#define TABLE_NAME "ncu-metrics.tsv"

static const char *const level_upper[RLM_LEVELS] = { "L1", "L2", "DRAM" };

static const struct rl_option hier_options[] = {
	{ "precisions", RL_OPT_LIST, "fp64,fp32,fp16,tensor,all",
	  offsetof(struct hier_config, precisions),
	  "points: fp64 fp32 fp16, tensor (tc_fp64 tc_fp16 tc_bf16 tc_tf32 tc_fp8) or each tc_*, tc_int8, all (combined)", 0 },
	{ "bytes", RL_OPT_STRING, "nersc", offsetof(struct hier_config, bytes),
	  "byte definition: nersc (l1tex__t_bytes, lts__t_bytes, dram__bytes) or ncu (Nsight Compute's charts)", 0 },
	{ "latency_pct", RL_OPT_DOUBLE, "10", offsetof(struct hier_config, latency_pct),
	  "latency-bound: under this % of the binding (lowest) roof, so of every level's roof", 0 },
	{ "invocations", RL_OPT_BOOL, "false", offsetof(struct hier_config, invocations),
	  "also emit points per invocation, not only summed per kernel", 0 },
	{ "l1_ceilings", RL_OPT_LIST, "l1,shared", offsetof(struct hier_config, ceil_names[RLM_L1]),
	  "L1 bandwidth ceiling names, first found wins", 0 },
	{ "l2_ceilings", RL_OPT_LIST, "l2", offsetof(struct hier_config, ceil_names[RLM_L2]),
	  "L2 bandwidth ceiling names, first found wins", 0 },
	{ "dram_ceilings", RL_OPT_LIST, "hbm_read,hbm_triad",
	  offsetof(struct hier_config, ceil_names[RLM_DRAM]),
	  "DRAM bandwidth ceiling names, first found wins", 0 },
	{ "methods", RL_OPT_LIST, "empirical,theoretical", offsetof(struct hier_config, methods),
	  "ceiling methods, in order of preference", 0 },
	{ "time", RL_OPT_STRING, "duration", offsetof(struct hier_config, time),
	  "duration (gpu__time_duration) or cycles (sm__cycles_elapsed.avg / its rate)", 0 },
	{ "missing_ceilings", RL_OPT_STRING, "fail", offsetof(struct hier_config, missing_ceilings),
	  "fail: a needed ceiling that is missing fails the step; skip: leave its points out", 0 },
	{ "same_node", RL_OPT_BOOL, "true", offsetof(struct hier_config, same_node),
	  "ceilings only from the kernel's node and GPU (false: any GPU of the same name)", 0 },
	{ "metrics_table", RL_OPT_STRING, NULL, offsetof(struct hier_config, metrics_table),
	  "metric table (default $ROOFLINE_ETC/ncu-metrics.tsv)", 0 },
	{ "imbalance_pct", RL_OPT_DOUBLE, "10", offsetof(struct hier_config, imbalance_pct),
	  "MPI ranks: flag a rank whose time of a kernel is more than this % off the ranks' mean", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* ---- configuration ------------------------------------------------------- */

/* Append the words of a list (items may hold comma-separated words). */
static int add_words(const struct rl_strlist *l, char ***out, size_t *n)
{
	for (size_t i = 0; i < l->n; i++) {
		for (const char *p = l->v[i] + strspn(l->v[i], ", "); *p;
		     p += strspn(p, ", ")) {
			size_t len = strcspn(p, ", ");
			char **v = realloc(*out, (*n + 1) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			*out = v;
			if (!(v[*n] = strndup(p, len)))
				return -ENOMEM;
			(*n)++;
			p += len;
		}
	}
	return 0;
}

static void free_words(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int prec_bits(struct rl_ctx *ctx, char **w, size_t n, unsigned *bits)
{
	for (size_t i = 0; i < n; i++) {
		int p;

		if (strcmp(w[i], "tensor") == 0) {
			*bits |= TENSOR_BITS;
			continue;
		}
		if (strcmp(w[i], "all") == 0) {
			*bits |= 1u << P_ALL;
			continue;
		}
		for (p = 0; p < N_PREC && strcmp(points_precs[p].name, w[i]); p++)
			;
		if (p == N_PREC) {
			rl_error(ctx, "option 'precisions': unknown '%s' (expected fp64, fp32, "
				 "fp16, tensor, tc_fp64, tc_fp16, tc_bf16, tc_tf32, tc_fp8, "
				 "tc_int8 or all)", w[i]);
			return -EINVAL;
		}
		*bits |= 1u << p;
	}
	return 0;
}

/* Check that opt's value is one of two words; *second = it is the second. */
static int one_of(struct rl_ctx *ctx, const char *opt, const char *v,
		  const char *a, const char *b, bool *second)
{
	*second = v && strcmp(v, b) == 0;
	if (v && (strcmp(v, a) == 0 || *second))
		return 0;
	rl_error(ctx, "option '%s': '%s' is neither %s nor %s", opt, v ? v : "", a, b);
	return -EINVAL;
}

static void hier_fini(void *state)
{
	struct hier_state *st = state;

	if (!st)
		return;
	for (int lv = 0; lv < RLM_LEVELS; lv++)
		free_words(st->names[lv], st->n_names[lv]);
	free_words(st->methods, st->n_methods);
	free(st);
}

static int hier_init(struct rl_ctx *ctx, const void *config, void **state)
{
	const struct hier_config *cfg = config;
	struct hier_state *st = calloc(1, sizeof(*st));
	char **w = NULL;
	size_t n = 0;
	int rc = -ENOMEM;

	if (!st || add_words(&cfg->precisions, &w, &n) < 0)
		goto out;
	rc = -EINVAL;
	if (prec_bits(ctx, w, n, &st->prec_sel) < 0 ||
	    one_of(ctx, "bytes", cfg->bytes, "nersc", "ncu", &st->bytes_ncu) < 0 ||
	    one_of(ctx, "time", cfg->time, "duration", "cycles", &st->time_cycles) < 0 ||
	    one_of(ctx, "missing_ceilings", cfg->missing_ceilings, "fail", "skip",
		   &st->skip_missing) < 0)
		goto out;
	if (!st->prec_sel || !(cfg->latency_pct >= 0 && cfg->latency_pct <= 100)) {
		rl_error(ctx, "options: 'precisions' must name one, 0 <= latency_pct <= 100");
		goto out;
	}
	rc = -ENOMEM;
	for (int lv = 0; lv < RLM_LEVELS; lv++)
		if (add_words(&cfg->ceil_names[lv], &st->names[lv], &st->n_names[lv]) < 0)
			goto out;
	if (add_words(&cfg->methods, &st->methods, &st->n_methods) < 0)
		goto out;
	rc = 0;
out:
	free_words(w, n);
	if (rc == -ENOMEM)
		rl_error(ctx, "out of memory");
	if (rc)
		hier_fini(st);
	else
		*state = st;
	return rc;
}

/* "GPU 0 'NVIDIA H100 80GB HBM3' on node 'n1'" */
/* "GPU 0 'NAME' (UUID) on node 'N'": the UUID too where known, since two
 * GPUs of one name, index and node (two jobs' CUDA indices) differ by it. */
static const char *gpu_words(const char *index, const char *name, const char *uuid,
			     const char *node, char *buf, size_t size)
{
	snprintf(buf, size, "GPU %s '%s'%s%s%s on node '%s'", *or_empty(index) ? index : "?",
		 or_empty(name), *or_empty(uuid) ? " (" : "", or_empty(uuid),
		 *or_empty(uuid) ? ")" : "", *or_empty(node) ? node : "?");
	return buf;
}


/* ---- reading the inputs -------------------------------------------------------- */

/* The node in a needed step's exit.tsv, or "". */
static void exit_node(struct rl_ctx *ctx, const char *step, char *buf, size_t size)
{
	const char *path = rl_input_path(ctx, step, "exit.tsv");
	char text[4096], *p;
	size_t n;
	FILE *f;

	buf[0] = '\0';
	if (!path || !(f = fopen(path, "r")))
		return;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	p = strstr(text, "\tnode=");
	if (p) {
		p += strlen("\tnode=");
		snprintf(buf, size, "%.*s", (int)strcspn(p, "\t\n"), p);
	}
}

/* The node a needed step ran on: "step@node", else its exit.tsv; cached.
 * NULL when out of memory. */
static const char *step_node(struct job *j, const char *step)
{
	struct step_node *v;
	char buf[256];

	for (size_t i = 0; i < j->n_steps; i++)
		if (j->steps[i].step == step || strcmp(j->steps[i].step, step) == 0)
			return j->steps[i].node;
	if (strchr(step, '@'))
		snprintf(buf, sizeof(buf), "%s", strchr(step, '@') + 1);
	else
		exit_node(j->ctx, step, buf, sizeof(buf));
	v = realloc(j->steps, (j->n_steps + 1) * sizeof(*v));
	if (!v)
		return NULL;
	j->steps = v;
	v[j->n_steps] = (struct step_node){ strdup(step), strdup(buf) };
	if (!v[j->n_steps].step || !v[j->n_steps].node) {
		free(v[j->n_steps].step);
		free(v[j->n_steps].node);
		return NULL;
	}
	return v[j->n_steps++].node;
}

/* The role map of the architecture of compute capability cc ("9.0"). */
static struct rlm_arch *arch_lookup(struct job *j, const char *cc)
{
	struct rlm_arch **v, *a;
	char arch[8];

	if (!cc || !ncu_table_arch_of_cc(cc, arch, sizeof(arch)))
		arch[0] = '\0';
	for (size_t i = 0; i < j->n_archs; i++)
		if (strcmp(j->archs[i]->arch, arch) == 0)
			return j->archs[i];
	v = realloc(j->archs, (j->n_archs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	j->archs = v;
	if (!(a = calloc(1, sizeof(*a))))
		return NULL;
	if (roofline_math_arch_init(a, j->table, arch) < 0) {
		free(a);
		return NULL;
	}
	return j->archs[j->n_archs++] = a;
}

/* arch_lookup, remembering the last cc: the records of a step are of one
 * GPU, mostly. */
static struct rlm_arch *arch_for(struct job *j, const char *cc)
{
	struct rlm_arch *a;

	if (cc && j->cc_arch && strcmp(cc, j->cc_last) == 0)
		return j->cc_arch;
	a = arch_lookup(j, cc);
	if (a && cc && strlen(cc) < sizeof(j->cc_last)) {
		strcpy(j->cc_last, cc);
		j->cc_arch = a;
	}
	return a;
}

/* Read a kernel record; the kernel it belongs to (added when add), or NULL
 * with *err = -ENOMEM, or 0 when it has no name or (not add) is unknown. */
static struct rlm_kernel *read_kernel(struct job *j, const char *step,
				      const struct rl_field *f, bool add,
				      struct rlm_inv *iv, struct rlm_arch **a, int *err)
{
	const char *node;
	struct rlm_kernel *k;

	*err = -ENOMEM;
	if (!(*a = arch_for(j, rl_field_get(f, "cc"))) ||
	    roofline_math_read(*a, f, iv) < 0)
		return NULL;
	*err = 0;
	if (!iv->id[RLM_ID_KERNEL]) {
		j->n_nameless += add;
		return NULL;
	}
	node = iv->id[RLM_ID_NODE];
	if (!node && !(node = step_node(j, step))) {
		*err = -ENOMEM;
		return NULL;
	}
	k = roofline_math_kernel(&j->kernels, *a, iv, node, add);
	if (!k && add)
		*err = -ENOMEM;
	return k;
}

/* Pass 1: every ceiling into its GPU, every kernel record into its sums. */
static int on_input(void *arg, const char *step, const char *kind,
		    const struct rl_field *f)
{
	struct job *j = arg;
	struct rlm_kernel *k;
	struct rlm_arch *a;
	struct rlm_inv iv;
	const char *node;
	int err;

	if (strcmp(kind, "ceiling") == 0) {
		node = rl_field_get(f, "node");
		if (!node && !(node = step_node(j, step)))
			return -ENOMEM;
		return roofline_math_add_ceiling(&j->gpus, node, f);
	}
	if (strcmp(kind, "kernel") != 0)
		return 0;
	k = read_kernel(j, step, f, true, &iv, &a, &err);
	if (k)
		roofline_math_sample_add(&k->s, a, &iv, j->st->time_cycles);
	return err;
}

/* ---- matching kernels to ceilings ------------------------------------------------ */

static const struct rlm_ceil *pick_one(const struct job *j, const struct rlm_gpu *g,
				       const char *name)
{
	const struct rlm_ceil *c = NULL;

	for (size_t m = 0; !c && name && m < j->st->n_methods; m++)
		c = roofline_math_ceiling(g, name, j->st->methods[m]);
	return c;
}

/* The level's first ceiling name (in option order) of the first method. */
static const struct rlm_ceil *pick_level(const struct job *j, const struct rlm_gpu *g,
					 int lv)
{
	const struct rlm_ceil *c = NULL;

	for (size_t m = 0; !c && m < j->st->n_methods; m++)
		for (size_t i = 0; !c && i < j->st->n_names[lv]; i++)
			c = roofline_math_ceiling(g, j->st->names[lv][i], j->st->methods[m]);
	return c;
}

static void resolve_ceilings(struct job *j)
{
	for (size_t i = 0; i < j->gpus.n; i++) {
		struct gpu_plan *gp = &j->gplan[i];

		for (int lv = 0; lv < RLM_LEVELS; lv++)
			gp->bw[lv] = pick_level(j, &j->gpus.v[i], lv);
		for (int p = 0; p < N_PREC; p++) {
			gp->peak[p] = pick_one(j, &j->gpus.v[i], points_precs[p].peak);
			gp->nofma[p] = pick_one(j, &j->gpus.v[i], points_precs[p].nofma);
		}
	}
}

/* Match every kernel to a GPU; fail naming the kernels that have none. */
static int match_kernels(struct job *j)
{
	char msg[2048] = "", buf[512];
	long unmatched = 0;

	for (size_t i = 0; i < j->kernels.n; i++) {
		const struct rlm_kernel *k = j->kernels.v[i];

		j->kplan[i].gpu = roofline_math_match(&j->gpus, k, j->cfg->same_node);
		if (j->kplan[i].gpu >= 0 || unmatched++)
			continue;
		points_cat(msg, sizeof(msg), "no ceilings for %s, where kernel '%s' ran",
		    gpu_words(k->gpu_index, k->gpu_name, k->gpu_uuid, k->node, buf, sizeof(buf)),
		    k->kernel);
	}
	if (!unmatched)
		return 0;
	if (unmatched > 1)
		points_cat(msg, sizeof(msg), " (and %ld other kernels)", unmatched - 1);
	points_cat(msg, sizeof(msg), "; the needed steps measured:");
	for (size_t g = 0; g < j->gpus.n && g < 8; g++)
		points_cat(msg, sizeof(msg), "%s %s", g ? "," : "",
		    gpu_words(j->gpus.v[g].index, j->gpus.v[g].name, j->gpus.v[g].uuid,
			      j->gpus.v[g].node, buf, sizeof(buf)));
	rl_error(j->ctx, "%s%s", msg, j->cfg->same_node ? " (same_node: false takes "
		 "ceilings of any GPU of the same name)" : "");
	return -ENOENT;
}

/* ---- what each kernel gets ------------------------------------------------------- */

/* Warn that `what` of kernel k is left out because role r is unusable. */
static void warn_unusable(const struct job *j, const struct rlm_kernel *k, int r,
			  const char *what)
{
	const struct rlm_sample *s = &k->s;
	const char *metric = k->arch->metric[r];

	if (!metric)
		rl_warn(j->ctx, "kernel '%s': %s left out: the metric table has no "
			"%s row for arch '%s'", k->kernel, what,
			roofline_math_role_name((enum rlm_role)r), k->arch->arch);
	else if (s->n_missing[r])
		rl_warn(j->ctx, "kernel '%s': %s left out: '%s' is missing in %ld of "
			"%ld invocations", k->kernel, what, metric, s->n_missing[r], s->n);
	else
		rl_warn(j->ctx, "kernel '%s': %s left out: '%s' was not collected "
			"(ncu step option extra: [%s])", k->kernel, what, metric,
			roofline_math_role_name((enum rlm_role)r));
}

static void plan_levels(struct job *j, const struct rlm_kernel *k, struct kplan *kp,
			struct gpu_plan *gp)
{
	for (int lv = 0; lv < RLM_LEVELS; lv++) {
		int r = byte_role(j, lv);

		if (!roofline_math_usable(&k->s, (enum rlm_role)r)) {
			warn_unusable(j, k, r, level_upper[lv]);
		} else if (!(k->s.sum[r] > 0)) {
			rl_info(j->ctx, "kernel '%s': no traffic at %s (%s = 0): no %s point",
				k->kernel, level_upper[lv], k->arch->metric[r], level_upper[lv]);
		} else if (!gp->bw[lv]) {
			gp->bw_miss[lv] = true;
		} else {
			kp->level_ok[lv] = true;
			gp->bw_used[lv] = true;
		}
	}
}

/* Can precision p of k be counted?  1 yes, 0 not collected (a tensor
 * datapath the ncu step did not ask for: no loss), -1 missing (warned). */
static int prec_counted(const struct job *j, const struct rlm_kernel *k, int p)
{
	for (int i = 0; i < 3 && points_precs[p].role[i] >= 0; i++) {
		int r = points_precs[p].role[i];

		if (roofline_math_usable(&k->s, (enum rlm_role)r))
			continue;
		if (IS_TENSOR(p) && !k->s.n_missing[r])
			return 0;
		warn_unusable(j, k, r, points_precs[p].name);
		return -1;
	}
	return 1;
}

/* kernel_C's case (docs/collect.md): HFMA2.MMA moves registers on the tensor
 * pipe and counts as HFMA; no tensor FLOPs and few enough tensor-pipe
 * instructions to hold every HFMA make the fp16 point suspect. */
static bool hfma_suspect(const struct rlm_kernel *k)
{
	const struct rlm_sample *s = &k->s;
	double hfma, warps;

	if (!roofline_math_usable(s, RLM_HP_FMA) || !roofline_math_usable(s, RLM_TENSOR_INST))
		return false;
	for (int p = P_TC_FP64; p < N_PREC; p++)
		if (s->sum[points_precs[p].role[0]] > 0)
			return false;
	hfma = s->sum[RLM_HP_FMA] / k->arch->factor[RLM_HP_FMA];
	warps = s->sum[RLM_TENSOR_INST] / k->arch->factor[RLM_TENSOR_INST];
	return hfma > 0 && hfma <= 32 * warps;
}

/*
 * Tensor work the metric set did not count: datapaths of the kernel's GPU
 * that its records lack, while it ran tensor-pipe instructions other than
 * HFMA2.MMA moves (or nobody counted those).  Its points then carry
 * tensor_uncounted: the work shown may be short of the kernel's.
 */
static void plan_uncounted(struct job *j, const struct rlm_kernel *k, struct kplan *kp)
{
	double mma;

	if (!roofline_math_uncounted(k->arch, &k->s, kp->uncounted, sizeof(kp->uncounted)))
		return;
	mma = roofline_math_mma_inst(k->arch, &k->s);
	if (!isnan(mma) && !(mma > 0))
		return;
	kp->tensor_uncounted = true;
	if (isnan(mma))
		rl_warn(j->ctx, "kernel '%s': tensor datapaths %s were not counted and no "
			"tensor-pipe instruction count tells whether it used them: its points "
			"carry tensor_uncounted=%s", k->kernel, kp->uncounted, kp->uncounted);
	else
		rl_warn(j->ctx, "kernel '%s': %.15g tensor-pipe instructions, and tensor "
			"datapaths %s were not counted: its tensor work may be more than its "
			"points show (tensor_uncounted=%s; ncu step option extra: [all] counts "
			"every datapath, at more replay passes)", k->kernel, mma, kp->uncounted,
			kp->uncounted);
}

static void plan_kernel(struct job *j, size_t i)
{
	const struct rlm_kernel *k = j->kernels.v[i];
	struct kplan *kp = &j->kplan[i];
	struct gpu_plan *gp = &j->gplan[kp->gpu];

	if (k->s.n_time < k->s.n) {
		rl_warn(j->ctx, "kernel '%s': left out: %ld of %ld invocations have no time "
			"(%s, or %s and %s)", k->kernel, k->s.n - k->s.n_time, k->s.n,
			or_empty(k->arch->metric[RLM_TIME]), or_empty(k->arch->metric[RLM_CYCLES]),
			or_empty(k->arch->metric[RLM_SM_HZ]));
		return;
	}
	plan_levels(j, k, kp, gp);
	for (int p = 0; p < N_PREC; p++) {
		int counted = j->st->prec_sel & (1u << p) ? prec_counted(j, k, p) : 0;

		kp->incomplete |= counted < 0;
		if (counted <= 0 || !(prec_flops(&k->s, p) > 0))
			continue;
		if (!gp->peak[p]) {
			gp->prec_miss[p] = true;
			continue;
		}
		kp->prec_ok |= 1u << p;
		gp->prec_used[p] = true;
	}
	plan_uncounted(j, k, kp);
	kp->caveat_hfma = (kp->prec_ok & (1u << P_FP16)) && hfma_suspect(k);
	if (kp->caveat_hfma)
		rl_warn(j->ctx, "kernel '%s': its %.15g HFMA may all be HFMA2.MMA register "
			"moves on the tensor pipe, not half-precision math: fp16 points "
			"carry caveat=hfma2.mma", k->kernel,
			k->s.sum[RLM_HP_FMA] / k->arch->factor[RLM_HP_FMA]);
	if (!kp->prec_ok || !(kp->level_ok[0] || kp->level_ok[1] || kp->level_ok[2]))
		rl_info(j->ctx, "kernel '%s': no point (no counted FLOPs or no level)",
			k->kernel);
}

/* Ceilings that points need and the GPU lacks: fail, or (skip) warn. */
static int check_missing(struct job *j)
{
	char msg[2048] = "", buf[512];

	for (size_t g = 0; g < j->gpus.n; g++) {
		const struct gpu_plan *gp = &j->gplan[g];
		const struct rlm_gpu *gpu = &j->gpus.v[g];
		size_t start = strlen(msg);

		for (int lv = 0; lv < RLM_LEVELS; lv++) {
			if (!gp->bw_miss[lv])
				continue;
			points_cat(msg, sizeof(msg), "%s%s bandwidth (", strlen(msg) > start ?
				   ", " : "", level_upper[lv]);
			for (size_t i = 0; i < j->st->n_names[lv]; i++)
				points_cat(msg, sizeof(msg), "%s%s", i ? " or " : "",
					   j->st->names[lv][i]);
			points_cat(msg, sizeof(msg), ")");
		}
		for (int p = 0; p < N_PREC; p++)
			if (gp->prec_miss[p])
				points_cat(msg, sizeof(msg), "%s%s compute (%s)", strlen(msg) > start ?
				    ", " : "", points_precs[p].name, points_precs[p].peak);
		if (strlen(msg) > start)
			points_cat(msg, sizeof(msg), " for %s; ", gpu_words(gpu->index, gpu->name,
								   gpu->uuid, gpu->node, buf, sizeof(buf)));
	}
	if (!*msg)
		return 0;
	if (j->st->skip_missing) {
		rl_warn(j->ctx, "no ceiling for %sthose points are left out", msg);
		return 0;
	}
	rl_error(j->ctx, "missing ceilings: %sadd a step that measures them (ert, spec) "
		 "to this step's needs, or set missing_ceilings: skip", msg);
	return -ENOENT;
}
/* Pass 2 (invocations: true): the points of every invocation. */
static int on_invocation(void *arg, const char *step, const char *kind,
			 const struct rl_field *f)
{
	struct job *j = arg;
	struct rlm_sample s;
	struct rlm_kernel *k;
	struct rlm_arch *a;
	struct rlm_inv iv;
	int err;

	(void)kind;
	k = read_kernel(j, step, f, false, &iv, &a, &err);
	if (!k || j->kplan[k->index].gpu < 0 || !j->kplan[k->index].prec_ok)
		return err;
	memset(&s, 0, sizeof(s));
	roofline_math_sample_add(&s, a, &iv, j->st->time_cycles);
	return points_emit_sample(j, k, &s, or_empty(iv.id[RLM_ID_INVOCATION]));
}

/* ---- the run ------------------------------------------------------------------------ */

static int load_table(struct job *j)
{
	const char *etc = getenv("ROOFLINE_ETC");
	char err[NCU_TABLE_ERRLEN], path[4096];
	int rc;

	if (!j->cfg->metrics_table && !(etc && *etc)) {
		rl_error(j->ctx, "no metric table: set metrics_table or ROOFLINE_ETC");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s%s%s", j->cfg->metrics_table ? "" : etc,
		 j->cfg->metrics_table ? "" : "/",
		 j->cfg->metrics_table ? j->cfg->metrics_table : TABLE_NAME);
	rc = ncu_table_load(path, &j->table, err, sizeof(err));
	if (rc)
		rl_error(j->ctx, "%s", rc == -ENOMEM ? "out of memory" : err);
	return rc;
}

static void job_release(struct job *j)
{
	for (size_t i = 0; i < j->n_archs; i++) {
		roofline_math_arch_release(j->archs[i]);
		free(j->archs[i]);
	}
	for (size_t i = 0; i < j->n_steps; i++) {
		free(j->steps[i].step);
		free(j->steps[i].node);
	}
	free(j->archs);
	free(j->steps);
	free(j->gplan);
	free(j->kplan);
	roofline_math_kernels_release(&j->kernels);
	roofline_math_gpus_release(&j->gpus);
	ncu_table_free(j->table);
}

/* Pass 1 and its checks; RL_OK when there is something to emit. */
static enum rl_result read_inputs(struct job *j)
{
	int rc = rl_each_input(j->ctx, NULL, on_input, j);

	if (rc) {
		rl_error(j->ctx, "cannot read the inputs: %s", strerror(rc < 0 ? -rc : EIO));
		return rc == -ENOMEM ? RL_RETRY : RL_FAIL;
	}
	if (j->n_nameless || j->gpus.n_ignored)
		rl_warn(j->ctx, "ignored %ld kernel records without a name and %ld ceiling "
			"records without a name or a value > 0", j->n_nameless, j->gpus.n_ignored);
	if (!j->kernels.n) {
		rl_error(j->ctx, "no kernel records in the inputs: this step needs a step "
			 "that profiles kernels (ncu, ncu_import)");
		return RL_FAIL;
	}
	if (!j->gpus.n) {
		rl_error(j->ctx, "no ceiling records in the inputs: this step needs a step "
			 "that measures ceilings (ert) or derives them (spec)");
		return RL_FAIL;
	}
	j->gplan = calloc(j->gpus.n, sizeof(*j->gplan));
	j->kplan = calloc(j->kernels.n, sizeof(*j->kplan));
	if (!j->gplan || !j->kplan) {
		rl_error(j->ctx, "out of memory");
		return RL_RETRY;
	}
	return RL_OK;
}

static enum rl_result emit_all(struct job *j)
{
	long records = 0;
	int rc = points_emit_roofs(j);

	for (size_t i = 0; !rc && i < j->kernels.n; i++) {
		const struct kplan *kp = &j->kplan[i];

		if (kp->prec_ok)
			rc = points_emit_sample(j, j->kernels.v[i], &j->kernels.v[i]->s, "all");
		else if (kp->tensor_uncounted && kp->gpu >= 0 && j->kernels.v[i]->s.time_s > 0)
			rc = points_emit_uncounted(j, j->kernels.v[i]);
		records += j->kernels.v[i]->s.n;
	}
	if (!rc && j->cfg->invocations)
		rc = rl_each_input(j->ctx, "kernel", on_invocation, j);
	if (!rc)
		rc = ranks_emit(j, j->cfg->imbalance_pct);
	if (rc) {
		rl_error(j->ctx, "cannot emit records: %s", strerror(rc < 0 ? -rc : EIO));
		return RL_RETRY;
	}
	rl_info(j->ctx, "%zu kernels (%ld invocations) on %zu GPUs, %ld ceilings: "
		"%ld points, %ld roofs", j->kernels.n, records, j->gpus.n,
		j->gpus.n_records, j->n_points, j->n_roofs);
	return RL_OK;
}

static enum rl_result hier_run(struct rl_ctx *ctx, const void *config, void *state)
{
	struct job j = { .ctx = ctx, .cfg = config, .st = state };
	enum rl_result r = RL_FAIL;

	if (load_table(&j) < 0)
		goto out;
	r = read_inputs(&j);
	if (r != RL_OK)
		goto out;
	r = RL_FAIL;
	if (match_kernels(&j) < 0)
		goto out;
	resolve_ceilings(&j);
	for (size_t i = 0; i < j.kernels.n; i++)
		plan_kernel(&j, i);
	if (check_missing(&j) < 0)
		goto out;
	r = emit_all(&j);
out:
	job_release(&j);
	return r;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "hierarchical",
	.version = "1.0",
	.stage = RL_STAGE_ANALYZE,
	.summary = "hierarchical roofline points (AI at L1/L2/DRAM, GFLOP/s, bound, % of roof, FMA ratio) per kernel",
	.options = hier_options,
	.config_size = sizeof(struct hier_config),
	.init = hier_init,
	.run = hier_run,
	.fini = hier_fini,
};
