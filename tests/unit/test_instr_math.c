/*
 * test_instr_math - the Instruction Roofline's formulas (plugins/instruction/instr_math.h)
 * against values worked out by hand, on the H100's own figures.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "instruction/instr_math.h"

static void near(double a, double b)
{
	if (!(fabs(a - b) <= 1e-12 * fabs(b)))
		fail_msg("%.17g != %.17g", a, b);
}

/* 132 SMs x 4 schedulers x 1.98 GHz = 1045.44 warp GIPS. */
static void test_peak(void **state)
{
	(void)state;
	near(irm_peak_gips(132, 4, 1.98e9), 1045.44);
	near(irm_peak_gips(80, 4, 1.53e9), 489.6); /* the paper's V100 */
	assert_true(isnan(irm_peak_gips(0, 4, 1.98e9)));
	assert_true(isnan(irm_peak_gips(132, 4, -1)));
}

/* A warp instruction per 4 sectors; 2e9 instructions in 2 s. */
static void test_intensity_and_rate(void **state)
{
	(void)state;
	near(irm_intensity(1e6, 4e6), 0.25);
	assert_true(isnan(irm_intensity(1, 0)));
	assert_true(isnan(irm_intensity(-1, 2)));
	near(irm_gips(2e9, 2), 1.0);
	assert_true(isnan(irm_gips(1, 0)));
	/* ert on the H100: l1 32.52 TB/s over 32-byte sectors, shared 32.93 TB/s
	 * over 128-byte wavefronts */
	near(irm_gtxn(3.2e12, IRM_SECTOR_BYTES), 100);
	near(irm_gtxn(32e12, IRM_WAVEFRONT_BYTES), 250);
}

/* min(peak, intensity x GTXN/s): HBM at 100 GTXN/s under 1045.44 GIPS. */
static void test_roof(void **state)
{
	(void)state;
	near(irm_roof(1045.44, 100, 0.25), 25);
	near(irm_roof(1045.44, 100, 20), 1045.44);
	near(irm_ridge(1045.44, 100), 10.4544);
	assert_true(isnan(irm_roof(1045.44, NAN, 1)));
	assert_true(isnan(irm_roof(0, 100, 1)));
}

/* Sectors per warp-wide access of 4-byte words at a stride: 1, 4, 8, 16,
 * then 32 from stride 8 on; 8-byte words: 8 at unit stride. */
static void test_global_walls(void **state)
{
	(void)state;
	near(irm_global_wall(4, 0), 1);
	near(irm_global_wall(4, 1), 0.25);
	near(irm_global_wall(4, 2), 0.125);
	near(irm_global_wall(4, 3), 1.0 / 12);
	near(irm_global_wall(4, 4), 0.0625);
	near(irm_global_wall(4, 8), 1.0 / 32);
	near(irm_global_wall(4, 32), 1.0 / 32);
	near(irm_global_wall(8, 1), 0.125);
	near(irm_global_wall(8, 4), 1.0 / 32);
	near(irm_global_wall(1, 1), 1);
	assert_true(isnan(irm_global_wall(0, 1)));
	assert_true(isnan(irm_global_wall(4, -1)));
}

static void test_shared_walls(void **state)
{
	(void)state;
	near(irm_shared_wall(1), 1);
	near(irm_shared_wall(2), 0.5);
	near(irm_shared_wall(32), 1.0 / 32);
	assert_true(isnan(irm_shared_wall(0)));
	assert_true(isnan(irm_shared_wall(33)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peak),
		cmocka_unit_test(test_intensity_and_rate),
		cmocka_unit_test(test_roof),
		cmocka_unit_test(test_global_walls),
		cmocka_unit_test(test_shared_walls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
