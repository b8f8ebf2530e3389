/*
 * plateau.h - find the flat stretches ("plateaus") of a bandwidth-versus-
 * working-set curve, as an ERT sweep draws it: one plateau per level of the
 * memory hierarchy (L1, L2, DRAM), joined by falling transitions.
 *
 * The rule (pure functions, no I/O, no globals):
 *  1. Points come sorted by working-set size, ascending; every value > 0.
 *  2. Segment: walk the points in order; each point joins the current
 *     segment when its value lies within tol (a fraction, e.g. 0.10) of the
 *     median of the values already in the segment, otherwise it starts a new
 *     segment.  (On a log-size axis a level change is a drop of tens of
 *     percent between neighbouring sizes; noise is a few percent.)
 *  3. Trim: from each segment drop leading and trailing points farther than
 *     tol/2 from the segment's median (the shoulders of a transition).
 *  4. A trimmed segment of at least min_points points is a plateau: its value
 *     is the median of its points' values, min/max the extremes of its
 *     points' min/max, and its range the first and last points' sizes.
 * Picking a level: plateau_pick() looks at the plateaus whose geometric
 * centre sqrt(ws_min*ws_max) lies in [ws_lo, ws_hi] and takes, by policy,
 * the one with the most points (a cache level: the rate over most of its
 * sizes; ties go to the higher value), the highest value (the best rate seen
 * at any size), or the one that reaches the largest size (DRAM: past every
 * cache).  PLATEAU_MOST_INSIDE looks instead at every plateau whose range
 * overlaps [ws_lo, ws_hi] and takes the one with the widest overlap, in log
 * size (ties: more points, then the higher value): a cache level seen over
 * the sizes where it should show, so that a plateau of small sets, whose
 * rate a sweep inflates, cannot win by having more points outside them.
 */
#ifndef ROOFLINE_PLATEAU_H
#define ROOFLINE_PLATEAU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One sweep point.  min/max: spread of its trials (0 = use value). */
struct plateau_point {
	double ws;
	double value;
	double min;
	double max;
};

struct plateau {
	size_t first, last;   /* indexes of its first and last point */
	size_t npoints;
	double ws_min, ws_max;
	double value;         /* median of the points' values */
	double min, max;
};

struct plateau_rule {
	double tol;           /* relative tolerance, 0 < tol < 1 */
	size_t min_points;    /* at least 2 */
};

#define PLATEAU_TOL_DEFAULT 0.10
#define PLATEAU_MIN_POINTS_DEFAULT 3

enum plateau_policy {
	PLATEAU_WIDEST,       /* most points, then highest value: a cache */
	PLATEAU_MAX_VALUE,    /* highest value */
	PLATEAU_LARGEST_WS,   /* reaches the largest size: DRAM */
	PLATEAU_MOST_INSIDE,  /* widest overlap with [ws_lo, ws_hi]: a cache */
};

/*
 * Find the plateaus of pts[0..n) by the rule above and write them, in size
 * order, to out[0..max_out).  Returns the number found (0 is possible), or
 * -EINVAL (NULL arguments, unsorted sizes, a value <= 0 or not finite, a bad
 * rule), -E2BIG (more than max_out plateaus) or -ENOMEM.  Borrows pts.
 */
int plateau_find(const struct plateau_point *pts, size_t n,
		 const struct plateau_rule *rule, struct plateau *out,
		 size_t max_out);

/*
 * The plateau of p[0..n) that a level with working sets in [ws_lo, ws_hi]
 * owns, by policy (see above), or NULL when none has its centre there (for
 * PLATEAU_MOST_INSIDE: when none overlaps it).  Returns a pointer into p.
 */
const struct plateau *plateau_pick(const struct plateau *p, size_t n,
				   double ws_lo, double ws_hi,
				   enum plateau_policy policy);

#ifdef __cplusplus
}
#endif

#endif /* ROOFLINE_PLATEAU_H */
