/* rp_advice.c - see rp_advice.h. */
#include "rp_advice.h"

#include <string.h>

#include "rp_text.h"

#define LOW_REUSE 2.0  /* DRAM AI / L1 AI under this: little L1/L2 reuse */
#define LOW_ALPHA 0.5  /* FMA ratio under this: a low FMA share */
#define AT_NO_FMA 1.05 /* GFLOP/s up to 5% over the no-FMA ceiling: "at" it */

enum tip { TIP_NONE, TIP_LATENCY, TIP_BLOCKING, TIP_BYTES, TIP_CACHE,
	   TIP_REGISTERS, TIP_MIX, TIP_DATAPATH };

static bool is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

/* The no-FMA ceiling of k's precision: the roof when drawn, else half the
 * FMA peak (CUDA-core precisions only); 0 for tensor work. */
static double no_fma(const struct rp_model *m, const struct rp_kernel *k)
{
	double v = rp_model_compute_roof(m, k->precision, "no_fma");

	if (v > 0 || strncmp(k->precision, "tc_", 3) == 0 || is(k->precision, "all"))
		return v;
	return k->compute_gflops / 2;
}

static enum tip tip_of(const struct rp_model *m, const struct rp_kernel *k)
{
	double nf;

	if (is(k->verdict, "latency-bound"))
		return TIP_LATENCY;
	if (is(k->verdict, "bandwidth-bound")) {
		if (is(k->bound_level, "dram"))
			return k->has_ai[RP_L1] && k->has_ai[RP_DRAM] &&
					       k->ai[RP_DRAM] < LOW_REUSE * k->ai[RP_L1]
				       ? TIP_BLOCKING : TIP_BYTES;
		return is(k->bound_level, "l2") ? TIP_CACHE : TIP_REGISTERS;
	}
	if (!is(k->verdict, "compute-bound"))
		return TIP_NONE;
	nf = no_fma(m, k);
	if (nf > 0 && k->gflops <= AT_NO_FMA * nf && k->alpha >= 0 && k->alpha < LOW_ALPHA)
		return TIP_MIX;
	return TIP_DATAPATH;
}

const char *rp_advice_tag(const struct rp_model *m, const struct rp_kernel *k)
{
	static const char *const tags[] = {
		"", "occupancy", "blocking/fusion", "fewer bytes", "cache reuse",
		"register blocking", "instruction mix", "datapath",
	};

	return tags[tip_of(m, k)];
}

static void pct(struct strbuf *sb, double v)
{
	rp_num(sb, v);
	strbuf_addch(sb, '%');
}

void rp_advice(struct strbuf *sb, const struct rp_model *m,
	       const struct rp_kernel *k)
{
	double reuse = k->has_ai[RP_L1] && k->ai[RP_L1] > 0 ? k->ai[RP_DRAM] / k->ai[RP_L1] : 0;

	switch (tip_of(m, k)) {
	case TIP_LATENCY:
		strbuf_addstr(sb, "Latency-bound: at ");
		pct(sb, k->pct_of_bound);
		strbuf_addstr(sb, " of its binding roof it is far under every roof, so neither "
			      "bandwidth nor FLOPs limit it. Expose more parallelism: raise "
			      "occupancy (more threads and blocks per SM, fewer registers or less "
			      "shared memory per thread) and independent work per thread (ILP).");
		break;
	case TIP_BLOCKING:
		strbuf_addstr(sb, "Bandwidth-bound at DRAM (");
		pct(sb, k->pct_of_bound);
		strbuf_addstr(sb, " of the HBM roof) with little reuse in L1/L2: its DRAM AI is only ");
		rp_num(sb, reuse);
		strbuf_addstr(sb, "x its L1 AI. Block (tile) its loops so data is reused from "
			      "cache or shared memory, and fuse it with kernels that stream the same "
			      "arrays, to raise its DRAM arithmetic intensity.");
		break;
	case TIP_BYTES:
		strbuf_addstr(sb, "Bandwidth-bound at DRAM (");
		pct(sb, k->pct_of_bound);
		strbuf_addstr(sb, " of the HBM roof) although the caches already filter its traffic "
			      "(DRAM AI ");
		rp_num(sb, reuse);
		strbuf_addstr(sb, "x its L1 AI). Move fewer bytes: narrower data types, fusion with "
			      "neighbouring kernels, or a working set that stays in L2.");
		break;
	case TIP_CACHE:
		strbuf_addstr(sb, "Bound by L2 bandwidth (");
		pct(sb, k->pct_of_bound);
		strbuf_addstr(sb, " of the L2 roof): reuse data closer to the SMs, by tiling in "
			      "shared memory and coalescing accesses so that L1 serves more of them.");
		break;
	case TIP_REGISTERS:
		strbuf_addstr(sb, "Bound by L1/shared-memory bandwidth (");
		pct(sb, k->pct_of_bound);
		strbuf_addstr(sb, " of the L1 roof): keep reused values in registers (register "
			      "blocking), use vector loads and avoid shared-memory bank conflicts.");
		break;
	case TIP_MIX:
		strbuf_addstr(sb, "Compute-bound at or under the no-FMA ceiling (");
		rp_giga(sb, no_fma(m, k), "FLOP/s");
		strbuf_addstr(sb, ") with an FMA ratio of ");
		rp_num(sb, k->alpha);
		strbuf_addstr(sb, ": the instruction mix caps it. Fusing its adds and multiplies "
			      "into FMAs raises the ceiling towards the FMA peak (");
		rp_giga(sb, k->compute_gflops, "FLOP/s");
		strbuf_addstr(sb, ").");
		break;
	case TIP_DATAPATH:
		strbuf_addstr(sb, "Compute-bound at ");
		pct(sb, k->pct_of_bound);
		strbuf_addstr(sb, " of its ");
		rp_esc(sb, k->precision);
		strbuf_addstr(sb, " peak: little headroom is left on this datapath; a faster one "
			      "(tensor cores, a lower precision) or fewer FLOPs is what remains.");
		break;
	case TIP_NONE:
		strbuf_addstr(sb, "No verdict in its records: nothing to advise.");
		break;
	}
	if (is(k->caveat, "hfma2.mma"))
		strbuf_addstr(sb, " Its fp16 FLOPs may be HFMA2.MMA register moves, not math "
			      "(docs/collect.md).");
}
