/*
 * ir_model.c - the instruction plugin's model: a kernel's point at a level
 * on a GPU (ir_model.h).  Below plugins/instruction.c (which fills the
 * model and emits the points) and ir_chart.c (which draws them).
 */
#include <math.h>
#include <stdbool.h>

#include "instruction/instr_math.h"
#include "instruction/ir_model.h"

const char *const ir_level_names[IR_LEVELS] = {
	"l1_global", "l1_shared", "l2", "dram", "global", "shared",
};

/* The numerator and denominator sums of a level. */
static const int level_inst[IR_LEVELS] = { S_INST, S_INST, S_INST, S_INST,
					   S_INST_GLOBAL, S_INST_SHARED };
static const int level_txn[IR_LEVELS] = { S_TXN_L1G, S_TXN_SHARED, S_TXN_L2, S_TXN_DRAM,
					  S_TXN_L1G, S_TXN_SHARED };

bool ir_point(const struct ir_kernel *k, const struct ir_gpu *g, int level,
	      struct ir_point_values *p)
{
	int si = level_inst[level], st = level_txn[level];
	double time_s = k->sum[S_TIME_NS] * 1e-9;

	if (!k->has[si] || !k->has[st] || !k->has[S_TIME_NS] || !(k->sum[st] > 0) ||
	    !(k->sum[si] > 0) || !(time_s > 0))
		return false;
	p->inst = k->sum[si];
	p->txn = k->sum[st];
	p->intensity = irm_intensity(p->inst, p->txn);
	p->time_s = time_s;
	p->gips = irm_gips(p->inst, time_s);
	p->peak = isfinite(g->peak_measured) ? g->peak_measured : g->peak_theory;
	p->peak_method = isfinite(g->peak_measured) ? "empirical" : "theoretical";
	p->roof = irm_roof(p->peak, g->gtxn[level], p->intensity);
	p->compute_bound = isfinite(p->roof) && p->roof >= p->peak;
	return true;
}
