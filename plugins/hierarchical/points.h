/*
 * points.h - the hierarchical plugin's private state, and its emitting half
 * (points.c): `roof` and `point` records from the sums the plugin gathered.
 * plugins/hierarchical.c documents the records; docs/analysis.md the
 * formulas.  Nothing here is exported from the .so (-fvisibility=hidden).
 */
#ifndef ROOFLINE_HIERARCHICAL_POINTS_H
#define ROOFLINE_HIERARCHICAL_POINTS_H

#include <stdbool.h>
#include <stddef.h>

#include "ncu/ncu_table.h"
#include "roofline_math.h"
#include "rooflined/plugin.h"

/* The options (plugins/hierarchical.c has the table). */
struct hier_config {
	struct rl_strlist precisions;
	char *bytes;
	double latency_pct;
	int invocations;
	struct rl_strlist ceil_names[RLM_LEVELS];
	struct rl_strlist methods;
	char *time;
	char *missing_ceilings;
	int same_node;
	char *metrics_table;
	double imbalance_pct;
};

/* ---- precisions ---------------------------------------------------------- */

enum prec { P_FP64, P_FP32, P_FP16, P_TC_FP64, P_TC_FP16, P_TC_BF16,
	    P_TC_TF32, P_TC_FP8, P_TC_INT8, N_PREC, P_ALL = N_PREC };

struct prec_info {
	const char *name;
	int role[3];       /* add, mul, fma; a tensor precision: its role, -1, -1 */
	const char *peak;  /* compute ceiling */
	const char *nofma; /* no-FMA ceiling (CUDA cores), or NULL */
};


#define IS_TENSOR(p) ((p) >= P_TC_FP64)
#define TENSOR_BITS (((1u << P_TC_INT8) - 1) & ~((1u << P_TC_FP64) - 1))

extern const struct prec_info points_precs[N_PREC];

/* ---- state ----------------------------------------------------------------- */

/* What init derives from the config. */
struct hier_state {
	unsigned prec_sel;            /* bit per enum prec, P_ALL included */
	bool bytes_ncu, time_cycles, skip_missing;
	char **names[RLM_LEVELS];     /* owned word lists */
	size_t n_names[RLM_LEVELS];
	char **methods;
	size_t n_methods;
};

/* The ceilings of one GPU that the points may use, use, and miss. */
struct gpu_plan {
	const struct rlm_ceil *bw[RLM_LEVELS], *peak[N_PREC], *nofma[N_PREC];
	bool bw_used[RLM_LEVELS], prec_used[N_PREC];
	bool bw_miss[RLM_LEVELS], prec_miss[N_PREC];
};

/* What one kernel gets. */
struct kplan {
	long gpu;                     /* index into job.gpus, -1: none */
	unsigned prec_ok;             /* precisions that get points */
	bool level_ok[RLM_LEVELS];
	bool caveat_hfma;
	bool incomplete;              /* a selected precision lacks a metric:
	                                 no combined point */
	char uncounted[64];           /* tensor datapaths of its GPU left out
	                                 ("fp16,tf32"): when the kernel did
	                                 tensor work, its points say so */
	bool tensor_uncounted;
};

struct step_node {
	char *step, *node;
};

struct job {
	struct rl_ctx *ctx;
	const struct hier_config *cfg;
	const struct hier_state *st;
	struct ncu_table *table;
	struct rlm_arch **archs;
	size_t n_archs;
	char cc_last[16];             /* the cc of the last arch_for() */
	struct rlm_arch *cc_arch;     /* its arch (borrowed from archs) */
	struct rlm_gpus gpus;
	struct gpu_plan *gplan;       /* [gpus.n] */
	struct rlm_kernels kernels;
	struct kplan *kplan;          /* [kernels.n] */
	struct step_node *steps;
	size_t n_steps;
	long n_nameless, n_points, n_roofs;
};

/* ---- helpers shared by both halves ---- */

static inline const char *or_empty(const char *s)
{
	return s ? s : "";
}

static inline int byte_role(const struct job *j, int lv)
{
	static const int nersc[RLM_LEVELS] = { RLM_B_L1, RLM_B_L2, RLM_B_DRAM };
	static const int ncu[RLM_LEVELS] = { RLM_B_L1_NCU, RLM_B_L2_NCU, RLM_B_DRAM };

	return j->st->bytes_ncu ? ncu[lv] : nersc[lv];
}

static inline double prec_flops(const struct rlm_sample *s, int p)
{
	double f = 0;

	for (int i = 0; i < 3 && points_precs[p].role[i] >= 0; i++)
		f += s->sum[points_precs[p].role[i]];
	return f;
}

/* Append printf-style text to the string in buf (size bytes), truncating. */
void points_cat(char *buf, size_t size, const char *fmt, ...) RL_PRINTF(3, 4);

/* Emit one `roof` record per ceiling that a point uses (and the no-FMA
 * ceilings of the CUDA-core precisions used).  0 or rl_emit's -errno. */
int points_emit_roofs(struct job *j);

/*
 * Emit every point of sample s of kernel k (its sums, or one invocation's
 * counts), labelled invocation ("all" for the sums; borrowed).  The kernel's
 * plan (j->kplan) says which precisions and levels.  0 or rl_emit's -errno.
 */
int points_emit_sample(struct job *j, const struct rlm_kernel *k,
		       const struct rlm_sample *s, const char *invocation);

/*
 * A kernel with uncounted tensor work and no point at all (no counted FLOPs)
 * still gets one record, so that it is never silently absent: a `point` of
 * precision `tensor`, level `none`, verdict `incomplete`, primary, with its
 * time, GPU and `tensor_uncounted`.  0 or rl_emit's -errno.
 */
int points_emit_uncounted(struct job *j, const struct rlm_kernel *k);

#endif
