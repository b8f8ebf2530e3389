/*
 * gp_model.h - the gnuplot plugin's model: the types every chart is read
 * into (the config, points, roofs, trends, the fleet's rows, the chart) and
 * their small helpers (name tables, string tables, growable arrays).
 *
 * The bottom of the plugin's one-way flow (docs/architecture.md, "Layers"):
 *
 *   model     gp_model  <- gp_findings_model (fleet, GPU history, trajectory
 *             step records) <- gp_chart (points, roofs, trends; selection,
 *             mode, roofs drawn, ranges)
 *   layout    gp_layout (margins, key, roof labels)
 *   drawing   gp_draw (roofline, compare, history, trajectory), gp_findings
 *             (fleet, gpu_history): scripts and data files
 *   terminal  gp_term (gnuplot's output device lines); gp_exec runs gnuplot
 *
 * Each file uses only those above it in this list, and gp_text, the text
 * helpers under all of them; none calls back up.
 *
 * Part of the gnuplot plugin (plugins/gnuplot.c), linked into gnuplot.so and
 * its test.  libc only.
 */
#ifndef ROOFLINE_GP_MODEL_H
#define ROOFLINE_GP_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "rooflined/plugin.h"

/* The plugin's config, filled by the host from gnuplot.c's option table. */
struct gp_config {
	char *gnuplot;
	struct rl_strlist formats, precisions, levels, ceilings, labels;
	char *mode, *title, *kernel;
	long width, height, name_max, timeout_s;
	int arrows, per_invocation, partial_fma;
	double xmin, xmax, ymin, ymax;
};

enum { GP_L1, GP_L2, GP_DRAM, GP_N_LEVELS };
/* Precisions as the hierarchical plugin names them; tc_* are tensor-core
 * work (their roof has the same name), tensor any tensor work. */
enum {
	GP_FP64, GP_FP32, GP_FP16, GP_TC_FP64, GP_TC_FP16, GP_TC_BF16, GP_TC_TF32,
	GP_TC_FP8, GP_TC_INT8, GP_TENSOR, GP_ALL, GP_N_PRECS
};
enum {
	GP_AUTO, GP_ROOFLINE, GP_COMPARE, GP_HISTORY, GP_FLEET, GP_GPU_HISTORY,
	GP_TRAJECTORY, GP_N_MODES
};
#define GP_MAX_DRAWN 24
#define GP_NONE ((size_t)-1)

extern const char *const gp_level_names[GP_N_LEVELS]; /* l1 l2 dram */
extern const char *const gp_prec_names[GP_N_PRECS];   /* fp64 ... tensor all */
extern const char *const gp_mode_names[GP_N_MODES];   /* auto ... trajectory */

/* Index of s in names[0..n), or -1 (also for s == NULL). */
int gp_name_index(const char *const *names, int n, const char *s);

struct gp_strtab { char **v; size_t n, cap; };

/* Index of s in t, added (a copy) when absent; GP_NONE when out of memory. */
size_t gp_strtab_index(struct gp_strtab *t, const char *s);

/* Append item (size bytes) to the growable array base of *n items, *cap
 * allocated; the new base, or NULL when out of memory (base is kept). */
void *gp_push(void *base, size_t *n, size_t *cap, size_t size, const void *item);

struct gp_point {
	size_t name, series, entry; /* into names, series, ents */
	size_t roof[2];             /* into roof_names: the compute and the
	                               bandwidth ceiling it used, or NONE */
	int prec, level, is_all;
	int primary; /* the point's `primary` field: 1, 0, or -1 when absent */
	double ai, gflops;
	double flops, alpha, partial; /* 0 when the point lacks them */
};
struct gp_entry { size_t name; int prec; }; /* one key number: a kernel at a precision */
struct gp_roof {
	char *name, *unit;
	int compute, empirical;
	size_t series;
	double value; /* base units: FLOP/s, OP/s or B/s */
};
struct gp_trend { double t, gflops, ai[GP_N_LEVELS]; size_t node; };
/* One GPU's one ceiling: tonight's (`fleet_gpu`: pct of its model's median,
 * t unused) or one night's (`gpu_night`: value and the fleet's band). */
struct gp_gpurow {
	size_t gpu, ceiling;       /* into gpus, ceilings */
	size_t model;              /* into models (fleet) */
	double t, value, pct, median, lo, hi;
	double thr;                /* fleet: the fleet threshold %, NAN if none */
	int flagged, mode;         /* GP_FLEET or GP_GPU_HISTORY */
};

/* The trajectory's last step, as `roofline plot --trajectory` judged it
 * (common/judge.h judge_point, the rule of `roofline regressions`). */
struct gp_step {
	char *kernel, *from, *to, *class, *levels;
	double ai_change, gflops_change; /* %, NAN when unknown */
};

struct gp_chart {
	const struct gp_config *cfg; /* borrowed */
	struct rl_ctx *ctx;          /* borrowed, for logging */
	struct gp_strtab names, series, nodes, roof_names;
	struct gp_point *pts;
	size_t npts, cap_pts;
	struct gp_roof *roofs;
	size_t nroofs, cap_roofs;
	struct gp_trend *trends;
	size_t ntrends, cap_trends;
	struct gp_entry *ents;
	size_t nents, cap_ents;
	int *rank;   /* per series: its order among those with points, or -1 */
	size_t nser; /* series with points */
	struct gp_strtab gpus, ceilings; /* fleet, gpu_history: "node/index", names */
	struct gp_strtab models;         /* fleet: the GPU models (gpu_name) */
	char **units;                    /* per ceiling (gpu_history), owned */
	struct gp_gpurow *rows;
	size_t nrows, cap_rows;
	char *night, *uuid;              /* fleet: its night; gpu_history: the GPU */
	struct gp_step *step;            /* trajectory: the last step's class */
	long out_height;                 /* the images' height when not cfg's */
	char *gpu_name, *trend_kernel;
	unsigned precs, levels; /* bit masks of what is shown */
	int nprec;              /* precisions the drawn points have */
	bool by_primary;        /* each kernel at its primary precision only */
	long skipped, other_kernels;
	int mode;
	const struct gp_roof *drawn[GP_MAX_DRAWN];
	size_t ndrawn;
	double xmin, xmax, ymin, ymax; /* AI; GFLOP/s */
};

/* Free the strings of t and its array (t itself is the caller's). */
void gp_strtab_free(struct gp_strtab *t);

#endif
