/*
 * gp_findings.h - the gnuplot plugin's charts of the findings (issue 11):
 * the fleet tonight and one GPU's ceilings over the nights with its fleet's
 * band, drawn from the rows gp_findings_model.h read (the drawing layer).
 *
 * Part of the gnuplot plugin (plugins/gnuplot.c), linked into gnuplot.so and
 * its tests.  libc and libm only.  The records: gp_findings_model.h.
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

#include "gp_model.h"

/* Write the chart's data and script into c->ctx->out_dir; sets
 * c->out_height (the image grows with the panels).  0 or -errno. */
int gp_findings_write(struct gp_chart *c);

#endif
