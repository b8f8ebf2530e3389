/*
 * rp_advice.h - one or two sentences per kernel on what to try next, from
 * where the kernel sits on the hierarchical roofline, in the terms of the
 * seeds (NERSC "Roofline on NVIDIA GPUs", GTC 2019: kernel_A, B, C):
 *
 *   latency-bound            occupancy and parallelism (kernel_B)
 *   bandwidth-bound at DRAM  little reuse in L1/L2 (DRAM AI under twice the
 *                            L1 AI): blocking and fusion (kernel_C); with
 *                            reuse: fewer bytes
 *   bandwidth-bound at L2/L1 reuse closer to the SM; register blocking
 *   compute-bound            at or under the no-FMA ceiling with a low FMA
 *                            ratio: instruction mix (kernel_A); else the
 *                            datapath (tensor cores, precision)
 *
 * The thresholds are named in docs/report.md.
 */
#ifndef ROOFLINE_RP_ADVICE_H
#define ROOFLINE_RP_ADVICE_H

#include "rp_model.h"
#include "strbuf.h"

/* Append k's advice as HTML text (escaped; no markup) to sb. */
void rp_advice(struct strbuf *sb, const struct rp_model *m,
	       const struct rp_kernel *k);

/* A short tag for the table: "occupancy", "blocking/fusion", "bytes",
 * "cache reuse", "instruction mix", "datapath", or "" when unknown. */
const char *rp_advice_tag(const struct rp_model *m, const struct rp_kernel *k);

#endif
