/*
 * robust.h - the median and the median absolute deviation of a set of
 * doubles, exactly as PostgreSQL's percentile_cont(0.5) computes them, so
 * that a function of the server extension (rooflined_stats.c) and the SQL it
 * replaces give the same bits.
 *
 * The rule (PostgreSQL 15, orderedsetaggs.c, percentile_cont): the values in
 * float8 order (NaN above every number, NaN equal to NaN), n of them; rank
 * r = 0.5 * (n - 1), counted from 0; the result is the value at floor(r)
 * when r is whole, else lo + 0.5 * (hi - lo) with lo and hi the values at
 * floor(r) and ceil(r).  The deviation is that median of |v - median|.
 *
 * Pure functions: no allocation, no I/O, no globals.  Libc and libm only, so
 * that the unit tests run them under the sanitizers outside the server.
 */
#ifndef ROOFLINE_ROBUST_H
#define ROOFLINE_ROBUST_H

#include <stddef.h>

/* The median of v[0..n), n > 0, by selection (no full sort): v is
 * reordered. */
double robust_median(double *v, size_t n);

/*
 * The median and the median absolute deviation (unscaled) of v[0..n), n > 0.
 * v is reordered; scratch holds n doubles (the deviations) and is
 * overwritten.  O(n) expected: quickselect, with a full sort as the fallback
 * for an input that defeats its pivots.
 */
void robust_median_mad(double *v, size_t n, double *scratch, double *median,
		       double *mad);

#endif /* ROOFLINE_ROBUST_H */
