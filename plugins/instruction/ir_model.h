/*
 * ir_model.h - the instruction plugin's model: per GPU its roofs, per kernel
 * its sums (plugins/instruction.c fills it from the input records; the
 * chart, plugins/instruction/ir_chart.c, draws it).  libc only; nothing
 * exported from the .so.
 */
#ifndef ROOFLINE_IR_MODEL_H
#define ROOFLINE_IR_MODEL_H

#include <stdbool.h>
#include <stddef.h>

/* The levels of a point: total warp instructions over the transactions of
 * one level (IR_L1G .. IR_DRAM), or the load/store instructions of a space
 * over its transactions (IR_GLOBAL, IR_SHARED: the memory-wall charts). */
enum ir_level { IR_L1G, IR_L1S, IR_L2, IR_DRAM, IR_GLOBAL, IR_SHARED, IR_LEVELS };

/* The sums a kernel needs (roles of etc/ncu-metrics.tsv, set instruction). */
enum ir_sum { S_TIME_NS, S_INST, S_INST_INT, S_INST_GLOBAL, S_INST_SHARED,
	      S_TXN_L1G, S_TXN_SHARED, S_TXN_L2, S_TXN_DRAM, S_FLOP, S_SUMS };

extern const char *const ir_level_names[IR_LEVELS];

struct ir_gpu {
	char key[160];        /* gpu_uuid, else "index:name" */
	char name[96], uuid[96], index[16];
	double sms, schedulers, clock_hz; /* from the device record */
	double peak_theory;   /* warp GIPS, NAN when unknown */
	double peak_measured; /* ert inst_warp / 1e9, NAN when none */
	double gtxn[IR_LEVELS]; /* per level, NAN when no ceiling; GLOBAL and
	                           SHARED share L1G's and L1S's */
	char bw_name[IR_LEVELS][32];
};

struct ir_kernel {
	char *name;           /* owned */
	char gpu[160];        /* ir_gpu.key */
	long invocations;
	double sum[S_SUMS];
	bool has[S_SUMS];
};

/* One point's values (ir_point). */
struct ir_point_values {
	double inst, txn, intensity, time_s, gips, peak, roof;
	const char *peak_method; /* "empirical" (ert) or "theoretical" */
	bool compute_bound;
};

/*
 * The point of kernel k at level on GPU g (its roofs): false when a sum it
 * needs is unknown or zero.  The peak is g's measured one when there is
 * one, else the theoretical; roof NAN when the level has no ceiling.
 */
bool ir_point(const struct ir_kernel *k, const struct ir_gpu *g, int level,
	      struct ir_point_values *p);

#endif
