/*
 * robust.c - median and median absolute deviation as PostgreSQL computes
 * them.  See robust.h.
 */
#include "robust.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/* a < b in float8 order: NaN above every number and equal to NaN
 * (PostgreSQL's float8_cmp_internal), so that a NaN lands where
 * percentile_cont puts it. */
static inline bool float8_lt(double a, double b)
{
	if (isnan(a))
		return false;
	return isnan(b) || a < b;
}

static int float8_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return float8_lt(b, a) - float8_lt(a, b);
}

static inline void swap(double *v, size_t i, size_t j)
{
	double t = v[i];

	v[i] = v[j];
	v[j] = t;
}

/*
 * Reorder v[0..n) so that v[k] holds what a sort would put there, nothing
 * before it is above it and nothing after it below it (quickselect,
 * median-of-three pivots).  After 2 log2(n) + 8 rounds without an end (an
 * input made to defeat the pivots), the rest is sorted: O(n log n) at worst.
 */
static void select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1, rounds = 8;

	for (size_t m = n; m > 1; m >>= 1)
		rounds += 2;
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i, j;
		double pivot;

		if (rounds-- == 0) {
			qsort(v + lo, hi - lo + 1, sizeof(*v), float8_cmp);
			return;
		}
		/* v[lo] <= v[mid] <= v[hi], then the pivot sits at lo */
		if (float8_lt(v[mid], v[lo]))
			swap(v, mid, lo);
		if (float8_lt(v[hi], v[lo]))
			swap(v, hi, lo);
		if (float8_lt(v[hi], v[mid]))
			swap(v, hi, mid);
		swap(v, lo, mid);
		pivot = v[lo];
		/* Hoare's partition of v[lo+1..hi] around the pivot */
		i = lo;
		j = hi + 1;
		for (;;) {
			do
				i++;
			while (i <= hi && float8_lt(v[i], pivot));
			do
				j--;
			while (float8_lt(pivot, v[j]));
			if (i >= j)
				break;
			swap(v, i, j);
		}
		swap(v, lo, j);
		/* v[lo..j) <= v[j] = pivot <= v(j..hi] */
		if (j == k)
			return;
		if (k < j)
			hi = j - 1;
		else
			lo = j + 1;
	}
}

double robust_median(double *v, size_t n)
{
	size_t lo = (n - 1) / 2, hi = n / 2;
	double a, b;

	select_kth(v, n, lo);
	a = v[lo];
	if (lo == hi)
		return a;
	/* the next value in order: the least of those after lo */
	b = v[hi];
	for (size_t i = hi + 1; i < n; i++)
		if (float8_lt(v[i], b))
			b = v[i];
	/* percentile_cont's float8_lerp at proportion 0.5 */
	return a + 0.5 * (b - a);
}

void robust_median_mad(double *v, size_t n, double *scratch, double *median,
		       double *mad)
{
	double m = robust_median(v, n);

	for (size_t i = 0; i < n; i++)
		scratch[i] = fabs(v[i] - m);
	*median = m;
	*mad = robust_median(scratch, n);
}
