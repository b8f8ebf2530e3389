/*
 * ranks.h - the hierarchical plugin's view of an MPI program: its kernels
 * per rank and over all ranks, and the ranks that differ (load imbalance).
 *
 * Kernels whose records carry a `rank` (the ncu plugin's MPI path,
 * ncu_import's rank_files) are already points of their own, one per rank
 * (the kernel's key holds the rank; points carry `rank`).  For each kernel
 * name seen on two or more ranks, ranks_emit adds one `rank_balance` record
 * per rank and one for all of them:
 *
 *   kernel rank node gpu_uuid invocations time_s flops gflops pct_of_mean
 *   imbalanced                     (per rank: its summed GPU time and FLOPs
 *                                   of every precision; imbalanced=1 when
 *                                   its time is more than imbalance_pct off
 *                                   the ranks' mean)
 *   kernel rank=all ranks invocations time_s flops gflops mean_s min_s
 *   max_s imbalance_pct imbalanced_ranks
 *                                  (the aggregate: sums, and the load
 *                                   imbalance max/mean - 1 in %, the usual
 *                                   measure; imbalanced_ranks lists them)
 *
 * libc and the plugin's own job (points.h); nothing exported.
 */
#ifndef ROOFLINE_HIER_RANKS_H
#define ROOFLINE_HIER_RANKS_H

#include "hierarchical/points.h"

/* Emit the rank_balance records of j's kernels; 0 or rl_emit's error. */
int ranks_emit(struct job *j, double imbalance_pct);

#endif
