/*
 * gp_chart.h - what the gnuplot plugin draws: the records of the needed
 * steps read into a chart model, the points and roofs chosen, the ranges.
 *
 * The model's top (gp_model.h has the types and the plugin's flow).  Part
 * of the gnuplot plugin (plugins/gnuplot.c), linked into gnuplot.so and its
 * test.  libc and libm only.  The life of a chart:
 *
 *   gp_chart_init -> rl_each_input(ctx, NULL, gp_chart_take, chart)
 *   -> gp_chart_select -> gp_chart_pick_mode -> gp_chart_choose_roofs
 *   -> gp_chart_ranges -> (gp_draw) -> gp_chart_release
 */
#ifndef ROOFLINE_GP_CHART_H
#define ROOFLINE_GP_CHART_H

#include <stdbool.h>
#include <stddef.h>

#include "gp_model.h"

/* A zeroed chart for cfg; both borrowed. */
void gp_chart_init(struct gp_chart *c, const struct gp_config *cfg,
		   struct rl_ctx *ctx);
void gp_chart_release(struct gp_chart *c);

/*
 * rl_each_input callback (arg: the chart): takes `point`, `roof` (and the
 * ceilings stage's `ceiling`) and `trend` records (the kernel_trend view's
 * rows: kernel, at or run_at, gflops, ai_l1, ai_l2, ai_dram, node), the
 * fleet's (`fleet_gpu`, `fleet_summary`, `gpu_night`, see gp_findings_model.h) and a
 * trajectory's `trajectory_step`; counts unusable ones in skipped.  0, or
 * -ENOMEM (which stops the reading).
 */
int gp_chart_take(void *arg, const char *step, const char *kind,
		  const struct rl_field *fields);

/*
 * Keep the points to draw (aggregate or per-invocation, precisions, levels),
 * give each its key entry, rank the series.  0 or -ENOMEM.
 */
int gp_chart_select(struct gp_chart *c);

/* The chart kind from the `mode` option and the inputs, into c->mode; 0, or
 * -ENODATA after logging what is missing. */
int gp_chart_pick_mode(struct gp_chart *c);

/* The roofs to draw into c->drawn (the `ceilings` option, or by precision
 * and level); warns about asked-for roofs the inputs lack. */
void gp_chart_choose_roofs(struct gp_chart *c);

/* Axis ranges in whole decades around the points and the ridges; the
 * option overrides win. */
void gp_chart_ranges(struct gp_chart *c);

/* True for the modes drawn as a comparison of series (compare, trajectory). */
bool gp_chart_compares(const struct gp_chart *c);

/* The highest drawn compute ceiling (compute) or bandwidth, in G/s; 0: none. */
double gp_chart_top(const struct gp_chart *c, bool compute);

#endif
