/*
 * test_judge - common/judge.c: medians and MADs, the trial spread as a
 * standard deviation, thresholds from noise with a floor, a ceiling judged
 * against its fleet and its history, and the classes of a kernel's point.
 * The figures are small hand-made numbers chosen so that each rule shows
 * (labelled: synthetic, not measurements).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "judge.h"

static const struct judge_params P = { 4, 3, 3, 3 };

static void test_median_mad(void **state)
{
	double v[] = { 5, 1, 3, 100, 2 }, even[] = { 4, 1, 3, 2 }, s[5];

	(void)state;
	assert_true(judge_median(v, 5) == 3);
	assert_true(judge_median(even, 4) == 2.5);
	/* |1-3| |2-3| |3-3| |5-3| |100-3| -> 2 1 0 2 97: median 2; the outlier
	 * does not move it */
	assert_true(judge_mad(v, 5, 3, s) == 2);
	assert_true(isnan(judge_median(v, 0)));
}

static void test_trial_sd(void **state)
{
	(void)state;
	assert_true(fabs(judge_trial_sd_pct(2.970, 9) - 1) < 1e-12);
	assert_true(judge_trial_sd_pct(1, 1) == 0);
	assert_true(judge_trial_sd_pct(-1, 9) == 0);
	/* beyond the table: its last entry */
	assert_true(judge_trial_sd_pct(3.532, 100) == 1);
}

static void test_threshold(void **state)
{
	double noise;

	(void)state;
	assert_true(judge_threshold(&P, 0.1, 0.2, 0, &noise) == 3); /* floor */
	assert_true(fabs(noise - sqrt(0.05)) < 1e-12);
	assert_true(fabs(judge_threshold(&P, 3, 4, 0, &noise) - 20) < 1e-12);
	assert_true(noise == 5);
}

static void test_ceiling(void **state)
{
	struct judge_ceiling_in in = { .value = 88, .trial_sd_pct = 0.1,
				       .fleet_n = 8, .fleet_median = 100,
				       .fleet_mad = 0.2 };
	struct judge_verdict v;

	(void)state;
	judge_ceiling(&P, &in, &v);
	assert_true(v.flagged);
	assert_string_equal(v.class, "fleet outlier");
	assert_true(fabs(v.drop_pct - 12) < 1e-9);
	assert_true(v.threshold_pct == 3);
	assert_true(v.critical); /* 12 >= 3 x 3 */
	/* 2 % down: under the floor */
	in.value = 98;
	judge_ceiling(&P, &in, &v);
	assert_false(v.flagged);
	/* a noisy fleet (MAD 3 -> sd 4.4 %) raises the threshold to 17.8 % */
	in.value = 88, in.fleet_mad = 3;
	judge_ceiling(&P, &in, &v);
	assert_false(v.flagged);
	assert_true(v.fleet_threshold_pct > 17 && v.fleet_threshold_pct < 18);
	/* too few GPUs of the model: history only */
	in.fleet_n = 2, in.fleet_mad = 0.2;
	in.hist_n = 5, in.hist_median = 100, in.hist_sd = 0.5;
	judge_ceiling(&P, &in, &v);
	assert_true(v.flagged);
	assert_string_equal(v.class, "own history");
	assert_true(isnan(v.fleet_drop_pct));
	/* and with too little history, nothing is judged */
	in.hist_n = 2;
	judge_ceiling(&P, &in, &v);
	assert_false(v.flagged);
	/* faster is never a finding */
	in.hist_n = 5, in.value = 120;
	judge_ceiling(&P, &in, &v);
	assert_false(v.flagged);
}

static void test_point(void **state)
{
	struct judge_point base = { 10, 1000, 5000 }, now = base;
	struct judge_point_noise quiet = { 5, 0.001, 0.002 }, noisy = { 5, 0.01, 0.1 };
	struct judge_point_result r;

	(void)state;
	judge_point(&P, &now, &base, &quiet, &r);
	assert_int_equal(r.class, JUDGE_UNCHANGED);
	now.gflops = 800; /* -20 %, same AI */
	judge_point(&P, &now, &base, &quiet, &r);
	assert_int_equal(r.class, JUDGE_DROPPED);
	assert_true(judge_class_regressed(r.class));
	/* the kernel's own spread (10 %) makes 20 % noise, not a drop */
	judge_point(&P, &now, &base, &noisy, &r);
	assert_int_equal(r.class, JUDGE_UNCHANGED);
	assert_true(fabs(r.gflops_threshold_pct - 40) < 1e-9);
	/* the roof fell too: the hardware's */
	now.roof = 3500;
	judge_point(&P, &now, &base, &quiet, &r);
	assert_int_equal(r.class, JUDGE_ROOF_CHANGED);
	/* AI fell: moved left, first */
	now.ai = 6;
	judge_point(&P, &now, &base, &quiet, &r);
	assert_int_equal(r.class, JUDGE_MOVED_LEFT);
	assert_true(fabs(r.ai_change_pct + 40) < 1e-9);
	now = base, now.gflops = 1300;
	judge_point(&P, &now, &base, NULL, &r);
	assert_int_equal(r.class, JUDGE_FASTER);
	assert_false(judge_class_regressed(r.class));
	judge_point(&P, &now, NULL, NULL, &r);
	assert_int_equal(r.class, JUDGE_NEW);
	judge_point(&P, NULL, &base, NULL, &r);
	assert_int_equal(r.class, JUDGE_GONE);
	assert_string_equal(judge_class_name(JUDGE_ROOF_CHANGED), "roof changed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_mad),
		cmocka_unit_test(test_trial_sd),
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_ceiling),
		cmocka_unit_test(test_point),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
