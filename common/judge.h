/*
 * judge.h - is a figure worse than its references, beyond their noise?
 *
 * Pure functions, libc and libm only: linked into the `fleet` and
 * `regressions` plugins, `roofline regressions` and their tests, so that
 * every place judges with the same rule.  docs/findings.md has the method
 * with the formulas; in short, every figure is judged against the noise
 * that was measured for it, never against a fixed guess alone:
 *
 *   noise %      = sqrt(sum of the relative standard deviations^2) x 100
 *                  of the sources that apply (a ceiling's trial spread,
 *                  the fleet's robust spread, the figure's own history)
 *   threshold %  = max(floor %, k x noise %)
 *   drop %       = 100 (reference - value) / reference
 *   flagged      when drop % > threshold %
 *   critical     when drop % >= 3 x threshold %
 *
 * The trial spread of a ceiling is (max - min) / median over its trials: a
 * range, turned into a standard deviation by dividing by d2(trials), the
 * expected range of that many normal samples in standard deviations (the
 * control-chart constant; 2.970 for 9 trials).  The fleet's spread is the
 * median absolute deviation scaled by 1.4826 (a standard deviation for
 * normal data, unmoved by the outliers being looked for).
 */
#ifndef ROOFLINE_JUDGE_H
#define ROOFLINE_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

/* Defaults, as the plugins' option tables and `roofline regressions` write
 * them. */
#define JUDGE_DEFAULT_K "4"
#define JUDGE_DEFAULT_FLOOR_PCT "3"
#define JUDGE_DEFAULT_MIN_FLEET "3"
#define JUDGE_DEFAULT_MIN_HISTORY "3"

struct judge_params {
	double k;         /* noise multiplier */
	double floor_pct; /* smallest threshold, % */
	long min_fleet;   /* GPUs of a model for a fleet comparison */
	long min_history; /* earlier figures for a history comparison */
};

/* The median of v[0..n) (sorted in place); NAN when n == 0. */
double judge_median(double *v, size_t n);

/* The median absolute deviation of v[0..n) from med (v is not changed;
 * scratch must hold n doubles); NAN when n == 0. */
double judge_mad(const double *v, size_t n, double med, double *scratch);

/* A trial spread (% range over `trials` trials) as a relative standard
 * deviation in %; 0 when unknown (trials < 2 or spread < 0). */
double judge_trial_sd_pct(double spread_pct, long trials);

/* max(floor, k x sqrt(a^2 + b^2 + c^2)); noise_pct gets the root. */
double judge_threshold(const struct judge_params *p, double a_pct,
		       double b_pct, double c_pct, double *noise_pct);

/* ---- a GPU's ceiling ---------------------------------------------------- */

struct judge_ceiling_in {
	double value;
	double trial_sd_pct;  /* judge_trial_sd_pct() of its trials */
	size_t fleet_n;       /* GPUs of its model with this ceiling tonight */
	double fleet_median;
	double fleet_mad;
	long hist_n;          /* its own earlier nights */
	double hist_median;
	double hist_sd;       /* robust: 1.4826 x median absolute deviation */
};

struct judge_verdict {
	bool flagged;
	bool critical;
	const char *class;    /* "fleet outlier", "own history"; NULL when
	                         not flagged */
	double reference;     /* fleet median, or history median */
	double drop_pct;
	double threshold_pct;
	double noise_pct;
	/* both comparisons, for the record (NAN when not made) */
	double fleet_drop_pct, fleet_threshold_pct;
	double hist_drop_pct, hist_threshold_pct;
};

/* Judge one ceiling: against the fleet when fleet_n >= min_fleet, against
 * its history when hist_n >= min_history; the fleet's verdict first. */
void judge_ceiling(const struct judge_params *p,
		   const struct judge_ceiling_in *in, struct judge_verdict *v);

/* ---- a kernel's point against its baseline --------------------------------- */

enum judge_class {
	JUDGE_UNCHANGED,
	JUDGE_FASTER,
	JUDGE_DROPPED,      /* same AI, lower FLOP/s */
	JUDGE_MOVED_LEFT,   /* AI fell: more traffic per FLOP */
	JUDGE_ROOF_CHANGED, /* slower, and the node's own roof moved with it */
	JUDGE_NEW,
	JUDGE_GONE,
};

struct judge_point {
	double ai;
	double gflops;
	double roof;     /* the empirical ceiling that bounds it; <= 0 unknown */
};

struct judge_point_noise {
	long n;          /* earlier runs it was seen in */
	double ai_cv;    /* robust relative standard deviations (fractions:
	                    1.4826 x MAD / median) */
	double gflops_cv;
};

struct judge_point_result {
	enum judge_class class;
	double ai_change_pct;     /* 100 (now - base) / base */
	double gflops_change_pct;
	double roof_change_pct;   /* NAN when a roof is unknown */
	double ai_threshold_pct;
	double gflops_threshold_pct;
	double noise_pct;         /* the FLOP/s noise (history) */
};

/*
 * Classify `now` against `base` (either may be NULL: new, gone) with the
 * point's history noise (NULL or n < min_history: the floor alone).  In
 * this order: moved left (AI fell beyond its threshold), roof changed
 * (FLOP/s fell beyond its threshold and the roof fell by more than the
 * floor), dropped, faster, unchanged.
 */
void judge_point(const struct judge_params *p, const struct judge_point *now,
		 const struct judge_point *base,
		 const struct judge_point_noise *noise,
		 struct judge_point_result *r);

/* "unchanged", "faster", "dropped", "moved left", "roof changed", "new",
 * "gone". */
const char *judge_class_name(enum judge_class c);

/* Whether a class is a regression (dropped, moved left, roof changed). */
bool judge_class_regressed(enum judge_class c);

#endif /* ROOFLINE_JUDGE_H */
