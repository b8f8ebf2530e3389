/*
 * roofline_math.h - the arithmetic of one hierarchical roofline point.
 *
 * Pure functions, libc only: linked into the `hierarchical` plugin, its
 * tests and its benchmark: everything of the analysis that needs no host.
 * Four parts: the point arithmetic (no allocation); the reading of `kernel`
 * records (docs/collect.md) into counts by the roles and factors of the
 * metric table (plugins/ncu/ncu_table.h); those counts summed per kernel and GPU;
 * and the `ceiling` records of each GPU (docs/ceilings.md).  Units: FLOPs, bytes, seconds, FLOP/s
 * and B/s in; GFLOP/s (1e9, not 1024^3) out.  docs/analysis.md has the
 * formulas with their sources (the seeds: NERSC's roofline-on-nvidia-gpus,
 * the GTC 2019 and SC20 talks).
 *
 * For one point (one kernel or invocation, one precision):
 *
 *   GFLOP/s          = flops / time_s / 1e9
 *   AI(level)        = flops / bytes(level)                 [FLOP/byte]
 *   roof(level)      = min(peak, AI(level) x bandwidth(level))
 *   bound roof       = the lowest roof over the levels; the bound level is
 *                      the level it belongs to, or "compute" when every
 *                      level's roof is the peak (AI x bandwidth >= peak)
 *   % of roof        = GFLOP/s / roof x 100
 *   verdict          = latency-bound when GFLOP/s is under latency_pct % of
 *                      the bound roof (so under that share of every level's
 *                      roof), else compute-bound or bandwidth-bound (at the
 *                      bound level)
 *
 * and the FMA ratio of the CUDA-core instructions (SC20, slide "Final
 * Results for GPP"):
 *
 *   alpha            = FMA / (FMA + ADD + MUL)             [instructions]
 *   partial-FMA peak = peak x (2 alpha + (1 - alpha)) / 2 = peak x (1 + alpha) / 2
 */
#ifndef ROOFLINE_MATH_H
#define ROOFLINE_MATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ncu/ncu_table.h"
#include "rooflined/plugin.h"

/* Memory levels, innermost first.  RLM_COMPUTE is "no level binds". */
enum {
	RLM_L1 = 0,
	RLM_L2,
	RLM_DRAM,
	RLM_LEVELS,
	RLM_COMPUTE = -1,
};

enum rlm_verdict {
	RLM_COMPUTE_BOUND = 0,
	RLM_BANDWIDTH_BOUND,
	RLM_LATENCY_BOUND,
};

/* What a point is computed from; the caller fills every field. */
struct roofline_math_in {
	double flops;                  /* > 0 */
	double time_s;                 /* > 0 */
	double bytes[RLM_LEVELS];      /* bytes moved at each level */
	bool has_bytes[RLM_LEVELS];    /* false: not measured, level left out */
	double peak;                   /* compute ceiling, FLOP/s, > 0 */
	double bw[RLM_LEVELS];         /* bandwidth ceilings, B/s */
	bool has_bw[RLM_LEVELS];       /* false: no ceiling, level left out */
	double latency_pct;            /* latency-bound under this % of roof */
};

/* What it gives. */
struct roofline_math_point {
	double gflops;
	/* A level takes part when it has bytes > 0 and a ceiling > 0; the
	 * other fields of a level are 0 when it does not. */
	bool level_ok[RLM_LEVELS];
	double ai[RLM_LEVELS];
	double roof_gflops[RLM_LEVELS];
	double pct_of_roof[RLM_LEVELS];
	int bound_level;               /* RLM_COMPUTE or an RLM_ level */
	double bound_gflops;           /* the lowest roof */
	double pct_of_bound;
	enum rlm_verdict verdict;
};

/*
 * Compute a point.  Levels without bytes > 0 or without a bandwidth > 0 do
 * not take part (with no level at all, the roof is the peak).  Returns 0, or
 * -EINVAL when flops, time_s or peak is not > 0 (out is zeroed then).
 */
int roofline_math_point(const struct roofline_math_in *in,
			struct roofline_math_point *out);

/* FMA ratio from instruction counts; NAN when all three are 0. */
double roofline_math_alpha(double fma, double add, double mul);

/* The partial-FMA ceiling, peak x (1 + alpha) / 2, for 0 <= alpha <= 1. */
double roofline_math_partial_fma(double peak, double alpha);

/*
 * The peak of a mix of n kinds of work, each running at its own peak one
 * after another: sum(flops) / sum(flops[i] / peaks[i]).  Kinds with
 * flops[i] <= 0 are left out; 0 when none is left or a peak is not > 0.
 */
double roofline_math_mix_peak(const double *flops, const double *peaks,
			      size_t n);

/*
 * Parse a number as the collect plugins write it (ncu's base units: plain
 * digits, or a decimal such as "1978436448.73", an exponent).  Digits with
 * at most one '.' and 15 significant digits take a fast path that gives
 * strtod's result.  0, or -EINVAL for an empty, partial, non-finite or
 * "n/a" value.
 */
int roofline_math_number(const char *s, double *out);

/* "l1", "l2", "dram", or "compute" for RLM_COMPUTE. */
const char *roofline_math_level_name(int level);

/* "compute-bound", "bandwidth-bound", "latency-bound". */
const char *roofline_math_verdict_name(enum rlm_verdict v);

/* ---- kernel records -> counts ---------------------------------------------
 *
 * A kernel record holds every collected metric under its ncu name; the
 * metric table of the record's architecture (its `cc` field) says which
 * role each one plays and by which factor its value becomes FLOPs or bytes.
 * A role of one record is
 *   present        the metric's value is a number and not in `missing`;
 *   missing        listed in `missing`, n/a or not a number, or absent
 *                  although the table has a default-set row for it;
 *   not collected  absent, and the table has no row or an extra-set row
 *                  (e.g. Hopper's tensor_fp16 unless the ncu step asked);
 *                  a tensor datapath that is absent is never missing, only
 *                  not collected, whatever its set (a collection made with
 *                  another table's default set): the analysis reports such
 *                  datapaths as uncounted (roofline_math_uncounted()).
 * A tensor datapath may have several rows (parts, plugins/ncu/ncu_table.h): its
 * value is the sum of the parts' value x factor, present only when every
 * part is.
 */
enum rlm_role {
	RLM_TIME, RLM_CYCLES, RLM_SM_HZ,
	RLM_DP_ADD, RLM_DP_MUL, RLM_DP_FMA, RLM_SP_ADD, RLM_SP_MUL, RLM_SP_FMA,
	RLM_HP_ADD, RLM_HP_MUL, RLM_HP_FMA,
	RLM_TC_FP64, RLM_TC_FP16, RLM_TC_BF16, RLM_TC_TF32, RLM_TC_FP8,
	RLM_TC_INT8, RLM_TENSOR_INST, RLM_TENSOR_HFMA2,
	RLM_B_L1, RLM_B_L2, RLM_B_DRAM, RLM_B_L1_NCU, RLM_B_L2_NCU,
	RLM_ROLES
};

/* Identity fields of a kernel record, numbered after the roles. */
enum rlm_id {
	RLM_ID_KERNEL, RLM_ID_INVOCATION, RLM_ID_GPU_INDEX, RLM_ID_GPU_NAME,
	RLM_ID_GPU_UUID, RLM_ID_NODE, RLM_ID_CC, RLM_ID_MISSING,
	RLM_ID_RANK, /* an MPI rank's records (ncu's tasks, ncu_import's rank_files) */
	RLM_IDS
};

/* Rows beyond the first that the tensor datapaths of one arch may have. */
#define RLM_MAX_PARTS 16

/* The roles of one architecture, and the key order of its last record (a
 * cache: records of one source list their fields in the same order). */
struct rlm_arch {
	char arch[8];                    /* "90", "" for the "*" rows only */
	const char *metric[RLM_ROLES];   /* borrowed from the table; NULL: no row */
	double factor[RLM_ROLES];
	bool extra[RLM_ROLES];           /* the row is of the extra set */
	struct rlm_part {                /* a datapath's second and later rows */
		const char *metric;      /* borrowed from the table */
		int role;
		double factor;
	} part[RLM_MAX_PARTS];
	size_t n_parts;
	char **lay_key;                  /* owned */
	int *lay_slot;                   /* owned */
	size_t lay_n;
};

/* One kernel record, read (strings borrowed from the record's fields). */
struct rlm_inv {
	const char *id[RLM_IDS];         /* NULL when absent */
	double v[RLM_ROLES];             /* value x factor, when present */
	uint32_t present, bad;           /* bit per role: present; listed or
	                                    unreadable */
	double pv[RLM_MAX_PARTS];        /* the parts' value x factor */
	uint32_t ppresent, pbad;         /* bit per part */
};

/* Counts summed over invocations. */
struct rlm_sample {
	long n;
	double sum[RLM_ROLES];
	long n_present[RLM_ROLES], n_missing[RLM_ROLES];
	double time_s;                   /* over the invocations with a time */
	long n_time, n_dur, n_cyc;       /* with a time; from each source */
};

/* The table's role name of r ("time_ns", "flop_dp_fma", ...). */
const char *roofline_math_role_name(enum rlm_role r);

/* Fill a (zeroed by the caller) with arch's rows of t, which a borrows and
 * must outlive it.  0, or -ENOMEM. */
int roofline_math_arch_init(struct rlm_arch *a, const struct ncu_table *t,
			    const char *arch);
void roofline_math_arch_release(struct rlm_arch *a);

/* Read one kernel record with a's roles into iv.  0, or -ENOMEM. */
int roofline_math_read(struct rlm_arch *a, const struct rl_field *fields,
		       struct rlm_inv *iv);

/* True when role r of iv is missing (not merely not collected). */
bool roofline_math_is_missing(const struct rlm_arch *a,
			      const struct rlm_inv *iv, enum rlm_role r);

/*
 * The invocation's time in seconds: time_ns x 1e-9, or sm_cycles /
 * sm_clock_hz when prefer_cycles or time_ns is not present.  *cycles says
 * which.  false when neither is available.
 */
bool roofline_math_time(const struct rlm_inv *iv, bool prefer_cycles,
			double *time_s, bool *cycles);

/*
 * The tensor datapaths of kernel sample s that arch a has rows for but that
 * s does not count in every invocation (not collected, or missing), as
 * their names without "tensor_" ("fp16,tf32"), comma-separated into buf
 * (size bytes); "" when every datapath is counted.  Returns how many.
 */
int roofline_math_uncounted(const struct rlm_arch *a, const struct rlm_sample *s,
			    char *buf, size_t size);

/*
 * Tensor-pipe warp instructions of s that are matrix math: tensor_inst less
 * the HFMA2.MMA register moves, counted by tensor_inst_hfma2 when collected,
 * else estimated as the HFMA thread instructions / 32 (HFMA2.MMA counts as
 * HFMA too; docs/collect.md), not below 0.  NAN when tensor_inst is not
 * counted in every invocation.
 */
double roofline_math_mma_inst(const struct rlm_arch *a, const struct rlm_sample *s);

/* Add iv to s (zeroed by the caller before the first). */
void roofline_math_sample_add(struct rlm_sample *s, const struct rlm_arch *a,
			      const struct rlm_inv *iv, bool prefer_cycles);

/* True when role r was present in every invocation of s. */
static inline bool roofline_math_usable(const struct rlm_sample *s,
					enum rlm_role r)
{
	return s->n > 0 && s->n_present[r] == s->n;
}

/* ---- kernels, summed per GPU ----------------------------------------------
 *
 * A kernel is its name on one GPU of one node: (node, gpu_index, gpu_uuid,
 * gpu_name, kernel), each "" when unknown.  Same-named launches with other
 * grids are the same kernel (Nsight Compute and NERSC's scripts do so too).
 */
struct rlm_kernel {
	const char *node, *gpu_index, *gpu_uuid, *gpu_name, *kernel, *cc;
	const char *rank;                /* "" when its records have none */
	const struct rlm_arch *arch;     /* of its first record */
	struct rlm_sample s;
	size_t index;                    /* order of first appearance */
	char *key;                       /* owned: the ids above point into it */
	size_t key_len;
	uint64_t hash;
};

struct rlm_kernels {
	struct rlm_kernel **v;           /* owned, in order of appearance */
	size_t n;
	uint32_t *slots;                 /* open addressing: index + 1, 0 free */
	size_t n_slots;
	char *scratch;
	size_t scratch_cap;
};

/*
 * The kernel of record iv (read with a) measured on node (NULL: ""),
 * added when add is true.  NULL when it is absent and add is false, or out
 * of memory.  The table owns the kernel.
 */
struct rlm_kernel *roofline_math_kernel(struct rlm_kernels *t,
					const struct rlm_arch *a,
					const struct rlm_inv *iv,
					const char *node, bool add);

void roofline_math_kernels_release(struct rlm_kernels *t);

/* ---- ceilings per GPU ------------------------------------------------------ */

struct rlm_ceil {
	char *name, *method, *unit;      /* owned; "" when the record had none */
	double value;                    /* > 0, in the record's unit */
};

/* A GPU: its uuid, or when the records have none its node, index and name. */
struct rlm_gpu {
	char *node, *uuid, *name, *index, *cc; /* owned, "" when unknown */
	struct rlm_ceil *c;
	size_t n, cap;
};

struct rlm_gpus {
	struct rlm_gpu *v;               /* owned */
	size_t n;
	long n_records, n_ignored;       /* ceilings read; without name or value */
};

/*
 * Add one `ceiling` record measured on node (NULL: "").  The first record of
 * a (name, method) on a GPU wins; a record without a name or a value > 0 is
 * only counted in n_ignored.  0, or -ENOMEM.
 */
int roofline_math_add_ceiling(struct rlm_gpus *gs, const char *node,
			      const struct rl_field *f);

/* The ceiling name measured by method on g, or NULL. */
const struct rlm_ceil *roofline_math_ceiling(const struct rlm_gpu *g,
					     const char *name,
					     const char *method);

/*
 * The GPU whose ceilings apply to kernel k, or -1.  Same uuid when both
 * know one; else, with same_node, none; otherwise (or when a uuid is
 * unknown) the same gpu_name (when both know it) and, with same_node, the
 * same node and gpu_index (when both know them).  Of several,
 * the one that agrees on most known fields, then the first.
 */
long roofline_math_match(const struct rlm_gpus *gs, const struct rlm_kernel *k,
			 bool same_node);

void roofline_math_gpus_release(struct rlm_gpus *gs);

#endif
