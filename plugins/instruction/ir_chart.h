/*
 * ir_chart.h - the Instruction Roofline chart of one GPU (gnuplot, SVG):
 * three panels - the hierarchical chart (warp GIPS against warp
 * instructions per transaction at L1 global, L1 shared, L2 and DRAM, under
 * the peaks and each level's bandwidth roof), the global-memory walls and
 * the shared-memory walls (load/store instructions per transaction, with
 * the theoretical walls of plugins/instruction/instr_math.h as vertical lines; kernel
 * names label the points of the wall panels only).
 * Writes instruction.gp (the script, data inline) into dir and runs gnuplot
 * there (plugins/gnuplot_run/gp_exec.h), which writes instruction.svg.  Borrows
 * everything.  Nothing exported from the .so.
 */
#ifndef ROOFLINE_IR_CHART_H
#define ROOFLINE_IR_CHART_H

#include <stddef.h>

#include "instruction/ir_model.h"

/* 0, or -errno with err (size bytes) saying why (gnuplot missing or
 * failing, the script not writable).  Kernels of other GPUs are left out. */
int ir_chart_draw(const char *dir, const char *gnuplot, const struct ir_gpu *g,
		  const struct ir_kernel *k, size_t n, char *err, size_t size);

/* The label of a kernel on the chart: its name without a leading "void "
 * and without its parameters, at most max-1 bytes, quotes and backslashes
 * replaced by '_' (gnuplot strings).  Into out (max bytes). */
void ir_chart_label(const char *kernel, char *out, size_t max);

#endif
