/* judge.c - see judge.h. */
#include "judge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double judge_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double judge_mad(const double *v, size_t n, double med, double *scratch)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = fabs(v[i] - med);
	return judge_median(scratch, n);
}

double judge_trial_sd_pct(double spread_pct, long trials)
{
	/* d2(n): expected range of n standard normal samples */
	static const double d2[] = { 0, 0, 1.128, 1.693, 2.059, 2.326, 2.534,
				     2.704, 2.847, 2.970, 3.078, 3.173, 3.258,
				     3.336, 3.407, 3.472, 3.532 };
	size_t last = sizeof(d2) / sizeof(d2[0]) - 1;

	if (trials < 2 || !(spread_pct >= 0))
		return 0;
	return spread_pct / d2[(size_t)trials < last ? (size_t)trials : last];
}

double judge_threshold(const struct judge_params *p, double a_pct,
		       double b_pct, double c_pct, double *noise_pct)
{
	double noise = sqrt(a_pct * a_pct + b_pct * b_pct + c_pct * c_pct);

	if (noise_pct)
		*noise_pct = noise;
	return fmax(p->floor_pct, p->k * noise);
}

static double drop_pct(double reference, double value)
{
	return reference > 0 ? 100 * (reference - value) / reference : NAN;
}

void judge_ceiling(const struct judge_params *p,
		   const struct judge_ceiling_in *in, struct judge_verdict *v)
{
	double fleet_noise = 0, hist_noise = 0;

	memset(v, 0, sizeof(*v));
	v->fleet_drop_pct = v->fleet_threshold_pct = NAN;
	v->hist_drop_pct = v->hist_threshold_pct = NAN;
	if (in->fleet_n >= (size_t)p->min_fleet && in->fleet_median > 0) {
		double fleet_sd = 100 * 1.4826 * in->fleet_mad / in->fleet_median;

		v->fleet_drop_pct = drop_pct(in->fleet_median, in->value);
		v->fleet_threshold_pct = judge_threshold(p, in->trial_sd_pct,
							 fleet_sd, 0, &fleet_noise);
	}
	if (in->hist_n >= p->min_history && in->hist_median > 0) {
		double hist_sd = 100 * in->hist_sd / in->hist_median;

		v->hist_drop_pct = drop_pct(in->hist_median, in->value);
		v->hist_threshold_pct = judge_threshold(p, in->trial_sd_pct,
							hist_sd, 0, &hist_noise);
	}
	if (v->fleet_drop_pct > v->fleet_threshold_pct) {
		v->class = "fleet outlier";
		v->reference = in->fleet_median;
		v->drop_pct = v->fleet_drop_pct;
		v->threshold_pct = v->fleet_threshold_pct;
		v->noise_pct = fleet_noise;
	} else if (v->hist_drop_pct > v->hist_threshold_pct) {
		v->class = "own history";
		v->reference = in->hist_median;
		v->drop_pct = v->hist_drop_pct;
		v->threshold_pct = v->hist_threshold_pct;
		v->noise_pct = hist_noise;
	} else {
		return;
	}
	v->flagged = true;
	v->critical = v->drop_pct >= 3 * v->threshold_pct;
}

static double change_pct(double base, double now)
{
	return base > 0 ? 100 * (now - base) / base : NAN;
}

void judge_point(const struct judge_params *p, const struct judge_point *now,
		 const struct judge_point *base,
		 const struct judge_point_noise *noise,
		 struct judge_point_result *r)
{
	bool hist = noise && noise->n >= p->min_history;
	double ai_noise = hist ? 100 * noise->ai_cv : 0;
	double g_noise = hist ? 100 * noise->gflops_cv : 0;

	memset(r, 0, sizeof(*r));
	r->ai_change_pct = r->gflops_change_pct = r->roof_change_pct = NAN;
	r->ai_threshold_pct = judge_threshold(p, ai_noise, 0, 0, NULL);
	r->gflops_threshold_pct = judge_threshold(p, g_noise, 0, 0, &r->noise_pct);
	if (!base || !now) {
		r->class = base ? JUDGE_GONE : JUDGE_NEW;
		return;
	}
	r->ai_change_pct = change_pct(base->ai, now->ai);
	r->gflops_change_pct = change_pct(base->gflops, now->gflops);
	if (base->roof > 0 && now->roof > 0)
		r->roof_change_pct = change_pct(base->roof, now->roof);
	if (-r->ai_change_pct > r->ai_threshold_pct)
		r->class = JUDGE_MOVED_LEFT;
	else if (-r->gflops_change_pct > r->gflops_threshold_pct)
		r->class = -r->roof_change_pct > p->floor_pct ? JUDGE_ROOF_CHANGED
							      : JUDGE_DROPPED;
	else if (r->gflops_change_pct > r->gflops_threshold_pct)
		r->class = JUDGE_FASTER;
	else
		r->class = JUDGE_UNCHANGED;
}

const char *judge_class_name(enum judge_class c)
{
	static const char *const names[] = {
		[JUDGE_UNCHANGED] = "unchanged", [JUDGE_FASTER] = "faster",
		[JUDGE_DROPPED] = "dropped", [JUDGE_MOVED_LEFT] = "moved left",
		[JUDGE_ROOF_CHANGED] = "roof changed", [JUDGE_NEW] = "new",
		[JUDGE_GONE] = "gone",
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

bool judge_class_regressed(enum judge_class c)
{
	return c == JUDGE_DROPPED || c == JUDGE_MOVED_LEFT ||
	       c == JUDGE_ROOF_CHANGED;
}
