/*
 * gp_findings_model.h - the findings' records (issue 11) read into the chart
 * model: the fleet tonight, one GPU's ceilings over the nights with its
 * fleet's band, and the record that labels a kernel's trajectory.  Drawn by
 * gp_findings.h (fleet, gpu_history) and gp_draw.h (the trajectory's step).
 *
 * Part of the gnuplot plugin (plugins/gnuplot.c), linked into gnuplot.so and
 * its tests.  libc and libm only.  Records read (docs/charts.md):
 *
 *   fleet_gpu        the `fleet` plugin's: one per (GPU, ceiling) tonight:
 *                    node gpu_index gpu_uuid gpu_name ceiling value
 *                    fleet_median pct_of_median flagged (0/1)
 *   fleet_summary    the `fleet` plugin's: night (the chart's title)
 *   gpu_night        `roofline plot --gpu`'s: one per (ceiling, night) of
 *                    one GPU: night ceiling unit value fleet_median
 *                    fleet_min fleet_max fleet_n flagged gpu_uuid node
 *                    gpu_index gpu_name
 *   trajectory_step  `roofline plot --trajectory`'s: kernel from to class
 *                    levels ai_change_pct gflops_change_pct (the last
 *                    step's judge_point class, drawn by gp_draw)
 */
#ifndef ROOFLINE_GP_FINDINGS_MODEL_H
#define ROOFLINE_GP_FINDINGS_MODEL_H

#include <stddef.h>

#include "gp_model.h"

/* Take one record of the kinds above into c (others: ignored).  0, or
 * -ENOMEM.  Rows without a ceiling or a usable number are counted in
 * c->skipped. */
int gp_findings_take(struct gp_chart *c, const char *kind, const struct rl_field *f);

/* The rows read for mode (GP_FLEET or GP_GPU_HISTORY). */
size_t gp_findings_rows(const struct gp_chart *c, int mode);

/* Keep the rows of c->mode (and of the `ceilings` option's ceilings, when
 * set); 0, or -ENODATA after logging what is missing. */
int gp_findings_check(struct gp_chart *c);

/* Compute ceilings first (CUDA cores, then tensor), then memory: a rank for
 * sorting panels (names not listed: after them).  The drawing files
 * (gp_findings.c, gp_fleetdist.c) order their panels by it. */
int gp_findings_ceiling_rank(const char *name);

/* Free what gp_findings_take allocated (rows, units, step, night, uuid). */
void gp_findings_release(struct gp_chart *c);

#endif
