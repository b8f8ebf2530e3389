/*
 * test_robust.c - the median and median absolute deviation of the server
 * extension (pgext/robust.c) on sets worked out by hand from the rule in
 * robust.h (odd and even counts, ties, one value, negative values, NaN),
 * on random sets against a straightforward count (a median m of n values
 * has at most n/2 values on either side of it), and on sets ordered to
 * defeat the selection's pivots (sorted, reversed, organ-pipe, all equal)
 * against qsort's order.  The bit-for-bit
 * comparison with PostgreSQL's percentile_cont is tests/integration/
 * robust-stats.t's.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "robust.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void check(const double *in, size_t n, double want_median, double want_mad)
{
	double v[16], scratch[16], median, mad;

	assert_true(n <= 16);
	memcpy(v, in, n * sizeof(*v));
	robust_median_mad(v, n, scratch, &median, &mad);
	if (isnan(want_median))
		assert_true(isnan(median));
	else
		assert_true(median == want_median);
	if (isnan(want_mad))
		assert_true(isnan(mad));
	else
		assert_true(mad == want_mad);
}

static void test_hand_worked(void **state)
{
	(void)state;
	/* sorted 1 2 3: median 2; deviations 1 0 1: 1 */
	check((const double[]){ 3, 1, 2 }, 3, 2, 1);
	/* sorted 1 2 3 10: median 2 + (3 - 2) / 2; deviations 1.5 0.5 0.5 7.5,
	 * sorted 0.5 0.5 1.5 7.5: 0.5 + (1.5 - 0.5) / 2 */
	check((const double[]){ 3, 1, 2, 10 }, 4, 2.5, 1.0);
	/* one value: itself, no deviation */
	check((const double[]){ 42.5 }, 1, 42.5, 0);
	/* ties: 5 5 5 9 -> 5; deviations 0 0 0 4 -> 0 */
	check((const double[]){ 5, 9, 5, 5 }, 4, 5, 0);
	/* negatives: -4 -1 0 6 -> -0.5; deviations 3.5 0.5 0.5 6.5 -> 2 */
	check((const double[]){ 0, -4, 6, -1 }, 4, -0.5, 2);
	/* NaN sorts above every number: 1 2 NaN -> 2; deviations 1 0 NaN -> 1 */
	check((const double[]){ NAN, 2, 1 }, 3, 2, 1);
	/* ... and with an even count the upper middle is NaN: NaN */
	check((const double[]){ NAN, 2 }, 2, NAN, NAN);
}

/* How many of v[0..n) lie below and above m. */
static void count_sides(const double *v, size_t n, double m, size_t *below, size_t *above)
{
	*below = *above = 0;
	for (size_t i = 0; i < n; i++) {
		*below += v[i] < m;
		*above += v[i] > m;
	}
}

static void test_random_sets(void **state)
{
	double v[301], copy[301], scratch[301], dev[301], median, mad;
	size_t below, above;

	(void)state;
	srand(27);
	for (int round = 0; round < 2000; round++) {
		size_t n = 1 + (size_t)rand() % 301;

		for (size_t i = 0; i < n; i++)	/* ties are common: 0..49 */
			v[i] = (double)(rand() % 50) * 0.25 + 1000.0;
		memcpy(copy, v, n * sizeof(*v));
		robust_median_mad(v, n, scratch, &median, &mad);
		count_sides(copy, n, median, &below, &above);
		assert_true(below <= n / 2 && above <= n / 2);
		for (size_t i = 0; i < n; i++)
			dev[i] = fabs(copy[i] - median);
		count_sides(dev, n, mad, &below, &above);
		assert_true(below <= n / 2 && above <= n / 2);
		assert_true(mad >= 0);
	}
}

/* The median from a full sort, by robust.h's rule. */
static double sorted_median(double *v, size_t n)
{
	size_t lo = (n - 1) / 2, hi = n / 2;

	qsort(v, n, sizeof(*v), cmp_double);
	return lo == hi ? v[lo] : v[lo] + 0.5 * (v[hi] - v[lo]);
}

static void test_hard_orders(void **state)
{
	enum { N = 1001 };
	static double v[N], ref[N];

	(void)state;
	for (int shape = 0; shape < 4; shape++) {
		for (size_t n = 1; n <= N; n += 97) {
			for (size_t i = 0; i < n; i++)
				v[i] = shape == 0 ? (double)i : shape == 1 ? (double)(n - i)
				     : shape == 2 ? (double)(i < n / 2 ? i : n - i) : 7.0;
			memcpy(ref, v, n * sizeof(*v));
			assert_true(robust_median(v, n) == sorted_median(ref, n));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_worked),
		cmocka_unit_test(test_random_sets),
		cmocka_unit_test(test_hard_orders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
