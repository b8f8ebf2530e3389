/*
 * gp_draw.h - write a chart as a gnuplot script and its data files.
 *
 * Part of the gnuplot plugin (plugins/gnuplot.c), linked into gnuplot.so and
 * its test.  libc and libm only.
 *
 * Into the step's out_dir, for base = the chart kind (roofline, compare,
 * history, trajectory): base.gp, base.points.dat, base.roofs.dat,
 * base.arrows.dat, base.keys.dat (roofline, compare, trajectory; and
 * base.step.dat for a trajectory) or base.dat, base.ai.dat, base.keys.dat
 * (history), and kernels.txt; the fleet's charts (fleet, gpu_history) are
 * gp_findings.h's.  The script names files relative to out_dir
 * (gnuplot runs there) and holds no record text other than through
 * gp_text_script_quote; kernel, series and node names are in the data files
 * only, read back by `title columnheader`.
 */
#ifndef ROOFLINE_GP_DRAW_H
#define ROOFLINE_GP_DRAW_H

#include <stdio.h>

#include "gp_chart.h"

/*
 * Write the files of c (selected, mode picked, roofs chosen, ranges set).
 * The script draws every format of c->cfg->formats (png, svg) into
 * base.<format>.  0 or -errno.
 */
int gp_draw_write(struct gp_chart *c);

#endif
