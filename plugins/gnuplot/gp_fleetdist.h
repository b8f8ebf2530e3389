/*
 * gp_fleetdist.h - the fleet tonight at facility scale (issue 27): when a
 * fleet chart has more GPUs than one x tick each can show, one panel per
 * ceiling and, in it, one box per GPU model of its GPUs' figures as % of
 * that model's median: the box from the 25th to the 75th percentile, the
 * median a bar, whiskers from the 1st to the 99th percentile, the lowest
 * and highest GPU small grey dots, the noise band (100 % +- the median of
 * the fleet thresholds the fleet plugin judged with: `threshold_pct` of its
 * fleet_gpu records) shaded; flagged GPUs vermillion triangles, the lowest
 * few named (node/index and %), the others counted ("+N flagged").
 *
 * Part of the gnuplot plugin's drawing layer (gp_model.h), under
 * gp_findings.c, which hands it the fleet chart above 64 GPUs; libc and libm
 * only; names reach gnuplot only
 * through the data file (gp_text_data_quote).
 */
#ifndef ROOFLINE_GP_FLEETDIST_H
#define ROOFLINE_GP_FLEETDIST_H

#include "gp_model.h"

#define GP_FLEETDIST_NAMED 5 /* flagged GPUs named per panel and model */

/* Write <base>.dat and <base>.gp for c's fleet rows (c->mode GP_FLEET,
 * rows checked by gp_findings_check) into c->ctx->out_dir; sets
 * c->out_height.  0 or -errno. */
int gp_fleetdist_write(struct gp_chart *c, const char *base);

#endif
