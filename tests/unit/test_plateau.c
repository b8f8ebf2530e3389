/*
 * test_plateau.c - the plateau detector (common/plateau.c): the rule on
 * made-up curves, its errors, level picking, and the rule on the working-set
 * sweeps recorded on seven H100 SXMs (50 MiB L2: tests/fixtures/ert/h100-*.tsv
 * and issue13/h100-*.tsv), and on those real sweeps with every size and the
 * L2 size scaled to a 60 MiB L2 (the H200's; no H200 was lent for issue 13:
 * every request was served by an H100), a 96 and a 126 MiB one
 * (SYNTHETIC: real values, sizes stretched, labelled so in the output).
 *
 * Expected values are computed here from the inputs (medians of the points a
 * plateau must hold, the HBM peak from the recorded attributes), never
 * copied from the detector's output.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plateau.h"

#define FIXTURE "tests/fixtures/ert/h100-quick.tsv"
#define FIXDIR "tests/fixtures/ert/"

/* Real sweeps: every L2 plateau test runs on each. */
static const char *const recorded[] = {
	FIXDIR "h100-quick.tsv",               FIXDIR "h100-full.tsv",
	FIXDIR "issue13/h100-quick.tsv",       FIXDIR "issue13/h100-full.tsv",
	FIXDIR "issue13/h100-run4-quick.tsv",  FIXDIR "issue13/h100-run4-full.tsv",
	FIXDIR "issue13/h100-run5-quick.tsv",  FIXDIR "issue13/h100-run5-full.tsv",
	FIXDIR "issue13/h100-run1-quick.tsv",  FIXDIR "issue13/h100-run1-full.tsv",
	FIXDIR "issue13/h100-run9-quick.tsv",  FIXDIR "issue13/h100-run9-full.tsv",
	FIXDIR "issue13/h100-run11-quick.tsv", FIXDIR "issue13/h100-run11-full.tsv",
	FIXDIR "issue13/h100-run14-quick.tsv", FIXDIR "issue13/h100-run14-full.tsv",
	FIXDIR "issue13/h100-run16-quick.tsv", FIXDIR "issue13/h100-run16-full.tsv",
	NULL,
};

static const struct plateau_rule rule10 = { 0.10, 3 };

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of values[first..last], computed independently. */
static double median_of(const double *values, size_t first, size_t last)
{
	double v[512];
	size_t n = last - first + 1;

	assert_true(n <= 512);
	memcpy(v, values + first, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fill(struct plateau_point *pts, const double *ws,
		 const double *val, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		pts[i].ws = ws[i];
		pts[i].value = val[i];
		pts[i].min = 0;
		pts[i].max = 0;
	}
}

/* Three levels joined by falling transitions, 2 % noise. */
static void test_three_levels(void **state)
{
	static const double ws[] = { 1e3, 2e3, 4e3, 8e3, 16e3, 32e3, 64e3,
				     128e3, 256e3, 512e3, 1e6, 2e6, 4e6, 8e6,
				     16e6, 32e6 };
	static const double v[] = { 20.0, 20.3, 19.8, 20.1, 14.0, 9.1, 9.0,
				    9.2, 8.9, 9.05, 6.0, 4.2, 3.0, 3.05, 2.97,
				    3.01 };
	struct plateau_point pts[16];
	struct plateau p[8];
	int n;

	(void)state;
	fill(pts, ws, v, 16);
	n = plateau_find(pts, 16, &rule10, p, 8);
	assert_int_equal(n, 3);
	/* L1-like: points 0-3; 14.0 is a transition point on its own */
	assert_int_equal(p[0].first, 0);
	assert_int_equal(p[0].last, 3);
	assert_true(p[0].value == median_of(v, 0, 3));
	assert_true(p[0].ws_min == 1e3 && p[0].ws_max == 8e3);
	assert_true(p[0].min == 19.8 && p[0].max == 20.3);
	/* L2-like: points 5-9 */
	assert_int_equal(p[1].first, 5);
	assert_int_equal(p[1].last, 9);
	assert_true(p[1].value == median_of(v, 5, 9));
	/* DRAM-like: 6.0 and 4.2 are transition points; points 12-15 */
	assert_int_equal(p[2].first, 12);
	assert_int_equal(p[2].last, 15);
	assert_true(p[2].value == median_of(v, 12, 15));
	assert_int_equal(p[2].npoints, 4);
}

/* The tolerance is against the running median: 9.5 % joins, 10.5 % does not. */
static void test_tolerance_edge(void **state)
{
	static const double ws[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const double in[] = { 100, 100, 100, 109.5, 100, 100, 100, 100 };
	static const double out[] = { 100, 100, 100, 89.5, 89.5, 89.5, 89.5, 89.5 };
	struct plateau_point pts[8];
	struct plateau p[4];

	(void)state;
	fill(pts, ws, in, 8);
	assert_int_equal(plateau_find(pts, 8, &rule10, p, 4), 1);
	assert_int_equal(p[0].npoints, 8);
	fill(pts, ws, out, 8);
	assert_int_equal(plateau_find(pts, 8, &rule10, p, 4), 2);
	assert_int_equal(p[0].last, 2);
	assert_int_equal(p[1].first, 3);
	assert_true(p[1].value == 89.5);
}

/* Shoulders: a segment's end points farther than tol/2 are trimmed. */
static void test_trim(void **state)
{
	static const double ws[] = { 1, 2, 3, 4, 5, 6 };
	static const double v[] = { 93, 100, 100.5, 99.5, 100, 92 };
	struct plateau_point pts[6];
	struct plateau p[2];

	(void)state;
	fill(pts, ws, v, 6);
	assert_int_equal(plateau_find(pts, 6, &rule10, p, 2), 1);
	assert_int_equal(p[0].first, 1);
	assert_int_equal(p[0].last, 4);
	assert_true(p[0].value == median_of(v, 1, 4));
}

/* Too short a segment is no plateau; per-point min/max widen the range. */
static void test_min_points_and_spread(void **state)
{
	static const double ws[] = { 1, 2, 3, 4, 5 };
	static const double v[] = { 10, 10.2, 5, 5.1, 5.05 };
	struct plateau_point pts[5];
	struct plateau p[2];
	struct plateau_rule r2 = { 0.10, 2 };

	(void)state;
	fill(pts, ws, v, 5);
	pts[3].min = 4.5;
	pts[3].max = 5.6;
	assert_int_equal(plateau_find(pts, 5, &rule10, p, 2), 1);
	assert_int_equal(p[0].first, 2);
	assert_true(p[0].min == 4.5 && p[0].max == 5.6);
	assert_int_equal(plateau_find(pts, 5, &r2, p, 2), 2);
}

static void test_errors(void **state)
{
	static const double ws[] = { 1, 3, 2 };
	static const double v[] = { 1, 1, 1 };
	struct plateau_point pts[3];
	struct plateau p[1];
	struct plateau_rule bad = { 1.5, 3 }, bad2 = { 0.1, 1 };

	(void)state;
	fill(pts, ws, v, 3);
	assert_int_equal(plateau_find(pts, 3, &rule10, p, 1), -EINVAL);
	pts[1].ws = 2;
	pts[2].ws = 3;
	pts[1].value = 0;
	assert_int_equal(plateau_find(pts, 3, &rule10, p, 1), -EINVAL);
	pts[1].value = NAN;
	assert_int_equal(plateau_find(pts, 3, &rule10, p, 1), -EINVAL);
	pts[1].value = 1;
	assert_int_equal(plateau_find(pts, 3, &bad, p, 1), -EINVAL);
	assert_int_equal(plateau_find(pts, 3, &bad2, p, 1), -EINVAL);
	assert_int_equal(plateau_find(NULL, 0, &rule10, p, 1), 0);
	assert_int_equal(plateau_find(pts, 3, &rule10, p, 0), -E2BIG);
	assert_int_equal(plateau_find(pts, 3, &rule10, p, 1), 1);
}

static void test_pick(void **state)
{
	struct plateau p[3];

	(void)state;
	memset(p, 0, sizeof(p));
	p[0] = (struct plateau){ .ws_min = 1e3, .ws_max = 1e5, .value = 30,
				 .npoints = 5 };
	p[1] = (struct plateau){ .ws_min = 1e6, .ws_max = 4e7, .value = 10,
				 .npoints = 9 };
	p[2] = (struct plateau){ .ws_min = 2e8, .ws_max = 1e9, .value = 3,
				 .npoints = 4 };
	/* centres: 1e4, 6.3e6, 4.5e8 */
	assert_ptr_equal(plateau_pick(p, 3, 0, 5e7, PLATEAU_WIDEST), &p[1]);
	assert_ptr_equal(plateau_pick(p, 3, 0, 5e7, PLATEAU_MAX_VALUE), &p[0]);
	assert_ptr_equal(plateau_pick(p, 3, 5e7, 1e300, PLATEAU_LARGEST_WS),
			 &p[2]);
	assert_ptr_equal(plateau_pick(p, 3, 0, 5e3, PLATEAU_WIDEST), NULL);
	/* a plateau straddling the bound counts by its centre */
	assert_ptr_equal(plateau_pick(p, 3, 0, 7e6, PLATEAU_LARGEST_WS), &p[1]);
	assert_ptr_equal(plateau_pick(p, 3, 0, 6e6, PLATEAU_LARGEST_WS), &p[0]);
}

/*
 * PLATEAU_MOST_INSIDE: the widest overlap with the window wins, not the
 * most points.  The shape of the H100 sweep of run 14 (full): a plateau of
 * small sets, 1.4-5.7 MiB, five points, overlapping a [3.1, 50] MiB window
 * by 3.1-5.7 MiB, and the L2's own, 8-22.6 MiB, four points, inside it.
 */
static void test_pick_most_inside(void **state)
{
	const double mib = 1048576;
	struct plateau p[3];

	(void)state;
	memset(p, 0, sizeof(p));
	p[0] = (struct plateau){ .ws_min = 1.41 * mib, .ws_max = 5.66 * mib,
				 .value = 10, .npoints = 5 };
	p[1] = (struct plateau){ .ws_min = 8 * mib, .ws_max = 22.6 * mib,
				 .value = 8, .npoints = 4 };
	p[2] = (struct plateau){ .ws_min = 64 * mib, .ws_max = 1024 * mib,
				 .value = 3, .npoints = 9 };
	assert_ptr_equal(plateau_pick(p, 3, 0, 50 * mib, PLATEAU_WIDEST), &p[0]);
	assert_ptr_equal(plateau_pick(p, 3, 50 * mib / 16, 50 * mib,
				      PLATEAU_MOST_INSIDE), &p[1]);
	/* no overlap at all: none */
	assert_ptr_equal(plateau_pick(p, 3, 30 * mib, 50 * mib,
				      PLATEAU_MOST_INSIDE), NULL);
	/* equal overlaps: more points, then the higher value */
	p[0] = (struct plateau){ .ws_min = 8 * mib, .ws_max = 16 * mib,
				 .value = 9, .npoints = 3 };
	p[1] = (struct plateau){ .ws_min = 8 * mib, .ws_max = 16 * mib,
				 .value = 8, .npoints = 3 };
	assert_ptr_equal(plateau_pick(p, 2, 1 * mib, 50 * mib,
				      PLATEAU_MOST_INSIDE), &p[0]);
}

/* ---- the recorded H100 sweep ---- */

struct rec_series {
	double ws[128], val[128];
	size_t n;
	double l2_bytes;
	double hbm_peak;      /* bus width / 8 x memory clock x 2, B/s */
};

/* Minimal reader of the fixture (independent of the plugin's parser). */
static const char *field(const char *line, const char *key, char *buf,
			 size_t size)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\t%s=", key);
	p = strstr(line, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	snprintf(buf, size, "%.*s", (int)strcspn(p, "\t\n"), p);
	return buf;
}

static void read_series(const char *path, const char *series,
			struct rec_series *s)
{
	FILE *f = fopen(path, "r");
	char line[4096], b1[64], b2[64], b3[64];

	if (!f)
		fail_msg("%s: cannot open", path);
	memset(s, 0, sizeof(*s));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "attr\t", 5) &&
		    field(line, "l2_bytes", b1, sizeof(b1)) &&
		    field(line, "bus_width_bits", b2, sizeof(b2)) &&
		    field(line, "mem_clock_max_mhz", b3, sizeof(b3))) {
			s->l2_bytes = strtod(b1, NULL);
			s->hbm_peak = strtod(b2, NULL) / 8 *
				      strtod(b3, NULL) * 1e6 * 2;
		}
		if (strncmp(line, "sweep\t", 6) ||
		    strcmp(field(line, "series", b1, sizeof(b1)), series))
			continue;
		assert_true(s->n < 128);
		s->ws[s->n] = strtod(field(line, "ws_bytes", b2, sizeof(b2)), NULL);
		s->val[s->n] = strtod(field(line, "value", b3, sizeof(b3)), NULL);
		s->n++;
	}
	fclose(f);
}

/* The rule's invariants on a found plateau, checked against the raw data. */
static void check_plateau(const struct rec_series *s, const struct plateau *p)
{
	assert_true(p->npoints >= 3);
	assert_true(p->value == median_of(s->val, p->first, p->last));
	assert_true(p->ws_min == s->ws[p->first]);
	assert_true(p->ws_max == s->ws[p->last]);
	for (size_t i = p->first; i <= p->last; i++)
		assert_true(fabs(s->val[i] - p->value) <= rule10.tol * p->value);
}

/* Sizes and L2 size times k: a real curve on a larger cache (synthetic). */
static void stretch(struct rec_series *s, double k)
{
	for (size_t i = 0; i < s->n; i++)
		s->ws[i] *= k;
	s->l2_bytes *= k;
}

static void plateaus_of(struct rec_series *s, struct plateau *p, int *n)
{
	struct plateau_point pts[128];

	assert_true(s->n >= 20);
	assert_true(s->l2_bytes > 0);
	fill(pts, s->ws, s->val, s->n);
	*n = plateau_find(pts, s->n, &rule10, p, 16);
	assert_true(*n >= 2);
	for (int i = 0; i < *n; i++)
		check_plateau(s, &p[i]);
}

static void find_recorded(const char *series, struct rec_series *s,
			  struct plateau *p, int *n)
{
	read_series(FIXTURE, series, s);
	plateaus_of(s, p, n);
}

/*
 * The L2 and HBM levels of one sweep: the L2 plateau lies inside the L2,
 * holds a size between an eighth and half of the L2 (the bulk of the cache,
 * not the small sets of the sweep's first megabytes) and runs at more than
 * twice the HBM rate; the HBM plateau reaches the largest size, starts above
 * the L2 and stays under the memory's theoretical peak.
 */
static void check_levels(const char *what, struct rec_series *s)
{
	struct plateau p[16];
	const struct plateau *l2, *hbm;
	int n;

	print_message("%s: L2 %.0f MiB, %zu points\n", what,
		      s->l2_bytes / 1048576, s->n);
	plateaus_of(s, p, &n);
	/* as plugins/ert.c picks them */
	l2 = plateau_pick(p, (size_t)n, s->l2_bytes / 16, s->l2_bytes,
			  PLATEAU_MOST_INSIDE);
	hbm = plateau_pick(p, (size_t)n, s->l2_bytes, 1e300, PLATEAU_LARGEST_WS);
	assert_non_null(l2);
	assert_non_null(hbm);
	assert_true(l2->ws_min >= 256 * 1024.0 && l2->ws_max <= s->l2_bytes);
	assert_true(l2->ws_min <= s->l2_bytes / 2 &&
		    l2->ws_max >= s->l2_bytes / 8);
	assert_true(l2->value > 2 * hbm->value);
	assert_true(hbm->ws_max == s->ws[s->n - 1]);
	assert_true(hbm->ws_min > s->l2_bytes);
	assert_true(hbm->value > 0.5 * s->hbm_peak &&
		    hbm->value < s->hbm_peak * 1.001);
}

/* Every recorded sweep: seven H100s (50 MiB L2). */
static void test_recorded_l2_and_hbm(void **state)
{
	struct rec_series s;

	(void)state;
	for (int i = 0; recorded[i]; i++) {
		read_series(recorded[i], "cg", &s);
		check_levels(recorded[i], &s);
	}
}

/*
 * SYNTHETIC: the same real sweeps stretched to a 60 MiB (the H200's), a 96
 * and a 126 MiB L2: the rule has no size of its own but the L2 size.
 */
static void test_stretched_l2_and_hbm(void **state)
{
	static const double l2_mib[] = { 60, 96, 126 };
	struct rec_series s;
	char what[256];

	(void)state;
	for (int i = 0; recorded[i]; i++)
		for (int k = 0; k < 3; k++) {
			double f;

			read_series(recorded[i], "cg", &s);
			f = l2_mib[k] * 1048576 / s.l2_bytes;
			stretch(&s, f);
			snprintf(what, sizeof(what), "SYNTHETIC: %s stretched x%.3f",
				 recorded[i], f);
			check_levels(what, &s);
		}
}

static void test_h100_l1(void **state)
{
	struct rec_series s;
	struct plateau p[16];
	const struct plateau *l1;
	int n;

	(void)state;
	find_recorded("ca", &s, p, &n);
	/* the first point's level is L1: it must head the first plateau */
	assert_int_equal(p[0].first, 0);
	l1 = plateau_pick(p, (size_t)n, 0, s.l2_bytes, PLATEAU_WIDEST);
	assert_ptr_equal(l1, &p[0]);
	assert_true(l1->value > 3 * p[n - 1].value);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_levels),
		cmocka_unit_test(test_tolerance_edge),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_min_points_and_spread),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_pick_most_inside),
		cmocka_unit_test(test_recorded_l2_and_hbm),
		cmocka_unit_test(test_stretched_l2_and_hbm),
		cmocka_unit_test(test_h100_l1),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
