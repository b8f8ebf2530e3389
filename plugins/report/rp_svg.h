/*
 * rp_svg.h - the hierarchical roofline as inline SVG.
 *
 * Log-log axes (arithmetic intensity in FLOP/byte across, GFLOP/s up) over
 * whole decades; one bandwidth roof per memory level up to the highest
 * compute ceiling, the compute ceilings of the precisions shown (FMA peak
 * solid, no-FMA dashed) from the highest bandwidth roof on, each labelled
 * with its value; per kernel (its primary precision) one marker per level
 * (L1 triangle, L2 square, DRAM circle) on one horizontal line, coloured
 * from the Okabe-Ito palette by the kernel's number, which is written next
 * to its rightmost marker; a legend of the level shapes.  Every marker has a
 * <title> (kernel, level, AI, GFLOP/s) and class "pt"; the page's kernel key
 * (rp_html) maps numbers and colours to names.
 *
 * Roofs of one GPU are drawn (the first kernel's); the others' are listed
 * in the ceilings table.  All record text is escaped (rp_text).
 */
#ifndef ROOFLINE_RP_SVG_H
#define ROOFLINE_RP_SVG_H

#include "rp_model.h"
#include "strbuf.h"

#define RP_N_COLOURS 8
/* The Okabe-Ito colours, in the order kernels get them. */
extern const char *const rp_colours[RP_N_COLOURS];

/* Append the chart, <svg ...>...</svg>, width x height pixels. */
void rp_svg_chart(struct strbuf *sb, const struct rp_model *m, int width,
		  int height);

#endif
