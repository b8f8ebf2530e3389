/*
 * instr_math.h - the formulas of the Instruction Roofline Model (Ding and
 * Williams, "An Instruction Roofline Model for GPUs", PMBS'19), libc only.
 *
 * Performance is warp instructions per second (warp GIPS); instruction
 * intensity is warp instructions per transaction at a level of the memory
 * hierarchy.  A transaction is a 32-byte sector at L1 (global), L2 and HBM,
 * a wavefront (up to 32 banks x 4 bytes = 128 bytes) in shared memory.  A
 * level's roof is min(peak GIPS, intensity x GTXN/s), GTXN/s being its
 * bandwidth over its transaction size.  The memory walls are intensities
 * of the load/store instructions alone: global from 1 (every thread of a
 * warp on one sector) over 1/4 (unit stride, 4-byte words) to 1/32 (each
 * thread its own sector), shared from 1 (no bank conflict) to 1/32 (32-way).
 * docs/instruction-roofline.md has the measurements.
 *
 * Every function is pure; a result that is undefined (a zero or negative
 * denominator, a non-finite input) is NAN.
 */
#ifndef ROOFLINE_INSTR_MATH_H
#define ROOFLINE_INSTR_MATH_H

/* Bytes per transaction: L1 global, L2 and HBM sectors; shared wavefronts. */
#define IRM_SECTOR_BYTES 32.0
#define IRM_WAVEFRONT_BYTES 128.0
/* Warp schedulers per SM from sm_70 on (one warp instruction each per
 * cycle), for a device record without num_schedulers_per_multiprocessor. */
#define IRM_SCHEDULERS_PER_SM 4
#define IRM_WARP_SIZE 32
#define IRM_SHARED_BANKS 32

/* Theoretical warp GIPS: sms x schedulers x clock_hz / 1e9. */
double irm_peak_gips(double sms, double schedulers, double clock_hz);

/* Warp instructions per transaction. */
double irm_intensity(double warp_inst, double transactions);

/* Warp GIPS: warp_inst / time_s / 1e9. */
double irm_gips(double warp_inst, double time_s);

/* Giga-transactions per second of a bandwidth (bytes/s). */
double irm_gtxn(double bytes_per_s, double txn_bytes);

/* The roof at an intensity: min(peak_gips, intensity x gtxn). */
double irm_roof(double peak_gips, double gtxn, double intensity);

/* The intensity where the bandwidth roof meets the peak: peak / gtxn. */
double irm_ridge(double peak_gips, double gtxn);

/*
 * The global wall of a warp's access: one load or store instruction over
 * the sectors it touches, when each of the 32 threads accesses a word of
 * word_bytes at index lane x stride (stride 0: all on one word), the
 * warp's first word at the start of a sector.  Sectors = 1 for stride 0,
 * else min(32, ceil(32 x stride x word_bytes / 32)) for stride x word_bytes
 * <= 32 (every sector of the span is touched), 32 beyond.  NAN for
 * word_bytes outside 1..32 or stride < 0.
 */
double irm_global_wall(int word_bytes, int stride);

/* The shared wall of a `ways`-way bank conflict: 1 / ways (1..32), NAN
 * otherwise. */
double irm_shared_wall(int ways);

#endif
