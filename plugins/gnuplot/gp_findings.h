/*
 * gp_findings.h - the gnuplot plugin's charts of the findings (issue 11):
 * the fleet tonight and one GPU's ceilings over the nights with its fleet's
 * band; and the record that labels a kernel's trajectory.
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
 *
 * Charts (multiplot, one panel per ceiling, ordered compute then memory):
 *   fleet        (more than 64 GPUs: gp_fleetdist.h, one box per model)
 *                each GPU's value as % of its model's median (a GPU per x
 *                position, labelled node/index, a stem from 100 %); flagged
 *                GPUs a vermillion triangle named beside it, the others
 *                blue circles (Okabe-Ito: colour-blind safe, and the shapes
 *                differ too)
 *   gpu_history  the GPU's value per night (black), its model's fleet that
 *                night: median (dashed) and min-max (shaded band); nights it
 *                was flagged for that ceiling marked as in the fleet chart
 * Files: fleet.gp / gpu_history.gp, the data in <base>.dat, and the images.
 * As everywhere in the plugin, node, GPU and kernel names reach gnuplot only
 * through the data files (gp_text_data_quote), never the script.
 */
#ifndef ROOFLINE_GP_FINDINGS_H
#define ROOFLINE_GP_FINDINGS_H

#include <stddef.h>

#include "gp_chart.h"

/* Take one record of the kinds above into c (others: ignored).  0, or
 * -ENOMEM.  Rows without a ceiling or a usable number are counted in
 * c->skipped. */
int gp_findings_take(struct gp_chart *c, const char *kind, const struct rl_field *f);

/* The rows read for mode (GP_FLEET or GP_GPU_HISTORY). */
size_t gp_findings_rows(const struct gp_chart *c, int mode);

/* Keep the rows of c->mode (and of the `ceilings` option's ceilings, when
 * set); 0, or -ENODATA after logging what is missing. */
int gp_findings_check(struct gp_chart *c);

/* Write the chart's data and script into c->ctx->out_dir; sets
 * c->out_height (the image grows with the panels).  0 or -errno. */
int gp_findings_write(struct gp_chart *c);

/* Compute ceilings first (CUDA cores, then tensor), then memory: a rank for
 * sorting panels (names not listed: after them). */
int gp_findings_ceiling_rank(const char *name);

/* Free what gp_findings_take allocated (rows, units, step, night, uuid). */
void gp_findings_release(struct gp_chart *c);

#endif
