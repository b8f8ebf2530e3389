/*
 * plateau.c - plateau detection on a working-set sweep; the rule is stated
 * in plateau.h.  libc only (no libm: ert.so links nothing else).
 */
#include "plateau.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of the values of pts[first..last]; tmp holds at least that many. */
static double median_values(const struct plateau_point *pts, size_t first,
			    size_t last, double *tmp)
{
	size_t n = last - first + 1;

	for (size_t i = 0; i < n; i++)
		tmp[i] = pts[first + i].value;
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

static double rel_dev(double v, double ref)
{
	double d = (v - ref) / ref;

	return d < 0 ? -d : d;
}

static int check_input(const struct plateau_point *pts, size_t n,
		       const struct plateau_rule *rule)
{
	if ((!pts && n) || !rule || !(rule->tol > 0 && rule->tol < 1) ||
	    rule->min_points < 2)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(pts[i].value) || pts[i].value <= 0 ||
		    !isfinite(pts[i].ws) || pts[i].ws <= 0)
			return -EINVAL;
		if (i && pts[i].ws < pts[i - 1].ws)
			return -EINVAL;
	}
	return 0;
}

/* Fill *p from the trimmed segment pts[first..last]. */
static void make_plateau(const struct plateau_point *pts, size_t first,
			 size_t last, double *tmp, struct plateau *p)
{
	memset(p, 0, sizeof(*p));
	p->first = first;
	p->last = last;
	p->npoints = last - first + 1;
	p->ws_min = pts[first].ws;
	p->ws_max = pts[last].ws;
	p->value = median_values(pts, first, last, tmp);
	p->min = p->max = p->value;
	for (size_t i = first; i <= last; i++) {
		double lo = pts[i].min > 0 ? pts[i].min : pts[i].value;
		double hi = pts[i].max > 0 ? pts[i].max : pts[i].value;

		if (lo < p->min)
			p->min = lo;
		if (hi > p->max)
			p->max = hi;
	}
}

/*
 * Trim segment [*first, *last] (step 3); returns false when fewer than
 * min_points remain.
 */
static int trim_segment(const struct plateau_point *pts, size_t *first,
			size_t *last, const struct plateau_rule *rule,
			double *tmp)
{
	double med = median_values(pts, *first, *last, tmp);

	while (*first < *last && rel_dev(pts[*first].value, med) > rule->tol / 2)
		(*first)++;
	while (*last > *first && rel_dev(pts[*last].value, med) > rule->tol / 2)
		(*last)--;
	return *last - *first + 1 >= rule->min_points;
}

int plateau_find(const struct plateau_point *pts, size_t n,
		 const struct plateau_rule *rule, struct plateau *out,
		 size_t max_out)
{
	double *tmp;
	size_t start = 0, found = 0;
	int err = check_input(pts, n, rule);

	if (err)
		return err;
	if (n == 0)
		return 0;
	if (!out && max_out)
		return -EINVAL;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (size_t i = 1; i <= n; i++) {
		size_t first = start, last = i - 1;

		if (i < n && rel_dev(pts[i].value,
				     median_values(pts, start, i - 1, tmp)) <=
				     rule->tol)
			continue; /* point i joins the segment */
		start = i;
		if (!trim_segment(pts, &first, &last, rule, tmp))
			continue;
		if (found == max_out) {
			err = -E2BIG;
			goto out_free_tmp;
		}
		make_plateau(pts, first, last, tmp, &out[found++]);
	}
	err = (int)found;
out_free_tmp:
	free(tmp);
	return err;
}

/*
 * How much of [lo, hi] p covers, as the ratio of the overlap's ends (1: a
 * single size; < 1: none).  Comparing ratios compares log-size widths
 * without libm.
 */
static double overlap(const struct plateau *p, double lo, double hi)
{
	double a = p->ws_min > lo ? p->ws_min : lo;
	double b = p->ws_max < hi ? p->ws_max : hi;

	return b / a;
}

/* True when a beats b under policy. */
static int better(const struct plateau *a, const struct plateau *b,
		  enum plateau_policy policy, double lo, double hi)
{
	switch (policy) {
	case PLATEAU_MOST_INSIDE: {
		double oa = overlap(a, lo, hi), ob = overlap(b, lo, hi);

		if (oa != ob)
			return oa > ob;
		return a->npoints > b->npoints ||
		       (a->npoints == b->npoints && a->value > b->value);
	}
	case PLATEAU_WIDEST:
		return a->npoints > b->npoints ||
		       (a->npoints == b->npoints && a->value > b->value);
	case PLATEAU_MAX_VALUE:
		return a->value > b->value;
	case PLATEAU_LARGEST_WS:
		return a->ws_max > b->ws_max;
	}
	return 0;
}

const struct plateau *plateau_pick(const struct plateau *p, size_t n,
				   double ws_lo, double ws_hi,
				   enum plateau_policy policy)
{
	const struct plateau *best = NULL;

	for (size_t i = 0; i < n; i++) {
		/* geometric centre in [lo, hi], compared squared (no sqrt) */
		double c2 = p[i].ws_min * p[i].ws_max;

		if (policy == PLATEAU_MOST_INSIDE) {
			if (overlap(&p[i], ws_lo, ws_hi) < 1)
				continue;
		} else if (c2 < ws_lo * ws_lo || c2 > ws_hi * ws_hi) {
			continue;
		}
		if (!best || better(&p[i], best, policy, ws_lo, ws_hi))
			best = &p[i];
	}
	return best;
}
