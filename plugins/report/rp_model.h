/*
 * rp_model.h - the report's model: what the records of the needed steps and
 * the daemon's run records say, gathered for the page (rp_html) and the
 * chart (rp_svg).
 *
 * Read: `point` and `roof` (hierarchical), `ipoint` (instruction), `ceiling` (ert, spec), `kernel`
 * and `collect_summary` (ncu, ncu-import), and the run records `run`,
 * `run_step`, `baseline` (include/rooflined/plugin.h, each_run_info).  Only
 * aggregate points (invocation=all) are kept; a kernel is one row per
 * (step, kernel, GPU) at its primary precision (the hierarchical plugin's
 * `primary`, else the first precision seen).
 *
 * Ownership: the model owns every string it holds (copies of the records'
 * text); rp_model_release frees them all.
 */
#ifndef ROOFLINE_RP_MODEL_H
#define ROOFLINE_RP_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "rooflined/plugin.h"
#include "rp_instr.h"

enum { RP_L1, RP_L2, RP_DRAM, RP_LEVELS };

extern const char *const rp_level_names[RP_LEVELS]; /* l1 l2 dram */

/* One kernel at one precision (its points at the three levels). */
struct rp_kernel {
	char *step, *name, *precision, *gpu_uuid, *gpu_name, *node;
	double ai[RP_LEVELS];
	bool has_ai[RP_LEVELS];
	double gflops;
	double pct_of_bound;      /* % of the binding roof */
	char *bound_level;        /* l1 l2 dram compute */
	char *bound_ceiling;
	char *verdict;            /* compute-bound, bandwidth-bound, latency-bound */
	double alpha;             /* FMA ratio; < 0: unknown (tensor points) */
	double compute_gflops;    /* the precision's peak */
	double partial_fma_gflops; /* peak x (1 + alpha) / 2; 0: unknown */
	double tensor_share;      /* % of its work on tensor datapaths */
	double share_pct;         /* this precision's share */
	char *caveat;
	bool primary;
	int number;               /* 1.. in the chart's key (primary rows) */
};

/* A roof the hierarchical step drew its points under. */
struct rp_roof {
	char *name, *kind, *role, *precision, *level, *method, *gpu_uuid;
	double value;             /* GFLOP/s or GB/s */
};

/* One ceiling of one GPU, measured beside theoretical. */
struct rp_ceiling {
	char *name, *kind, *gpu_uuid, *gpu_name, *node, *unit, *synthetic;
	double measured, theoretical;  /* in the records' unit; 0: none */
	double spread_pct;             /* measured trials' spread; < 0: none */
	double sm_clock_mhz, mem_clock_mhz;
	char *driver, *cuda;
};

/* A step instance of the run (run_step records). */
struct rp_step {
	char *step, *node, *plugin, *on, *state, *attempt, *slurm_job,
	     *exec_node, *started, *ended;
};

/* A baseline kernel: the same kernel's primary point in the baseline run. */
struct rp_base {
	char *name, *precision;
	double gflops, ai[RP_LEVELS];
	bool has_ai[RP_LEVELS];
};

struct rp_model {
	struct rp_kernel *k;
	size_t nk, ak;
	size_t nprimary;          /* kernels with primary set */
	struct rp_roof *roofs;
	size_t nroofs, aroofs;
	struct rp_ceiling *ceil;
	size_t nceil, aceil;
	struct rp_step *steps;
	size_t nsteps, asteps;
	/* run metadata; NULL when the daemon gave none */
	char *run_id, *pipeline, *owner, *submitted, *started, *trigger;
	/* collection */
	char *ncu_version, *collect_source, *collect_file, *clock_control;
	long passes;              /* -1: unknown */
	char *profile_step;       /* the step whose kernel records came first */
	/* baseline (previous run of the pipeline) */
	char *base_run, *base_when;
	struct rp_base *base;
	size_t nbase, abase;
	char **base_dirs;         /* `baseline` record dirs of analysis steps */
	size_t nbase_dirs;
	long skipped;             /* point records without usable numbers */
	struct rp_instr instr;    /* `ipoint` records (rp_instr.h) */
};

void rp_model_init(struct rp_model *m);
void rp_model_release(struct rp_model *m);

/* each_input / each_run_info callback: take one record into m (arg).
 * Always 0 (unusable records are counted in m->skipped). */
int rp_model_take(void *arg, const char *step, const char *kind,
		  const struct rl_field *fields);

/* After every record is in: primary rows, numbers, tensor shares.  Then read
 * the baseline directories' records.tsv for the baseline kernels.  0, or
 * -errno when a baseline file exists but cannot be read. */
int rp_model_finish(struct rp_model *m);

/* The baseline kernel matching k (name and precision), or NULL. */
const struct rp_base *rp_model_base_of(const struct rp_model *m,
				       const struct rp_kernel *k);

/* The value of a roof for k's precision and role (peak, no_fma), 0 if none. */
double rp_model_compute_roof(const struct rp_model *m, const char *precision,
			     const char *role);

#endif
