/*
 * test_instruction - plugins/instruction.c against the stand-in host, fed
 * with the H100 recordings of tests/fixtures/instr: the points' values
 * against hand arithmetic on the recorded counters, the roofs (theoretical
 * from the device attributes, measured from ert), the ceilings of another
 * GPU of the same name, a run without ceilings, and kernels without the
 * instruction metrics.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "instruction.c"
#include "stub_host.h"

#define FIX "tests/fixtures/instr/"

struct world {
	struct stub_host h;
	struct ir_config cfg;
	void *state;
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));

	stub_host_init(&w->h, "/tmp", "/tmp");
	w->cfg.metrics_table = (char *)(uintptr_t)"etc/ncu-metrics.tsv";
	w->cfg.inst_ceiling = (char *)(uintptr_t)"inst_warp";
	w->cfg.chart = 0;
	assert_int_equal(rooflined_plugin.init(&w->h.ctx, &w->cfg, &w->state), 0);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	rooflined_plugin.fini(w->state);
	stub_host_release(&w->h);
	free(w);
	return 0;
}

static void names(struct world *w, struct rl_strlist *l, char **v, const char *name)
{
	v[0] = (char *)(uintptr_t)name;
	*l = (struct rl_strlist){ 1, v };
	(void)w;
}

static enum rl_result run(struct world *w)
{
	static char *v[4][1];

	names(w, &w->cfg.bw[0], v[0], "l1");
	names(w, &w->cfg.bw[1], v[1], "shared");
	names(w, &w->cfg.bw[2], v[2], "l2");
	names(w, &w->cfg.bw[3], v[3], "hbm_read");
	return rooflined_plugin.run(&w->h.ctx, &w->cfg, w->state);
}

/* The ipoint of kernel (prefix) at level as "key=value" lines, or NULL. */
static char *point(struct world *w, const char *kernel, const char *level)
{
	for (long i = 0; i < stub_host_count(&w->h, "ipoint"); i++) {
		char *r = stub_host_record(&w->h, "ipoint", i);

		if (strncmp(stub_host_get(r, "kernel"), kernel, strlen(kernel)) == 0 &&
		    strcmp(stub_host_get(r, "level"), level) == 0)
			return r;
		free(r);
	}
	return NULL;
}

static double num(const char *rec, const char *key)
{
	const char *v = stub_host_get(rec, key);

	return v ? strtod(v, NULL) : NAN;
}

static void near(double a, double b)
{
	if (!(fabs(a - b) <= 1e-12 * fabs(b)))
		fail_msg("%.17g != %.17g", a, b);
}

/* walls_global<1>, read off its record: LDG 540672 (8448 warps x 64) + STG
 * 8448 = 549120 warp instructions, sectors 2162688 (x 4) + 33792 (x 4) =
 * 2196480, 26784 ns. */
static void test_points(void **state)
{
	struct world *w = *state;
	char *p;

	assert_int_equal(stub_host_add_input(&w->h, "walls", FIX "walls-instr.records.tsv"), 0);
	assert_int_equal(stub_host_add_input(&w->h, "ceilings", FIX "ert.records.tsv"), 0);
	assert_int_equal(run(w), RL_OK);
	p = point(w, "void walls_global<1>", "global");
	assert_non_null(p);
	near(num(p, "warp_inst"), 549120);
	near(num(p, "transactions"), 2196480);
	near(num(p, "intensity"), 0.25);
	near(num(p, "time_s"), 26784e-9);
	near(num(p, "gips"), 549120 / 26784e-9 / 1e9);
	/* L1 bandwidth 32522195815678.879 B/s / 32 B = 1016.3 GTXN/s x 0.25 */
	near(num(p, "roof_gips"), 32522195815678.879 / 32 / 1e9 * 0.25);
	assert_string_equal(stub_host_get(p, "bound"), "global");
	assert_string_equal(stub_host_get(p, "peak_method"), "empirical");
	assert_string_equal(stub_host_get(p, "integer_only"), "0");
	assert_string_equal(stub_host_get(p, "ceilings_gpu"), "GPU-5d2b600d-a900-a1c5-e317-284bb0ceec95");
	free(p);
	/* the transposes: no FLOP, integer instructions: integer_only */
	p = point(w, "transpose_naive", "shared");
	assert_non_null(p);
	assert_string_equal(stub_host_get(p, "integer_only"), "1");
	free(p);
	/* six levels for a kernel with shared and global traffic; walls_global
	 * has no shared memory: four */
	assert_int_equal(stub_host_count(&w->h, "ipoint"), 7 * 4 + 8 * 6);
	/* another H100 measured the ceilings: said so */
	assert_non_null(strstr(w->h.log.buf, "has no ceilings of its own"));
}

static void test_roofs(void **state)
{
	struct world *w = *state;
	char *r;

	assert_int_equal(stub_host_add_input(&w->h, "walls", FIX "walls-instr.records.tsv"), 0);
	assert_int_equal(stub_host_add_input(&w->h, "ceilings", FIX "ert.records.tsv"), 0);
	assert_int_equal(run(w), RL_OK);
	r = stub_host_record(&w->h, "iroof", 0);
	assert_string_equal(stub_host_get(r, "name"), "peak_theoretical");
	near(num(r, "value"), 132 * 4 * 1.98); /* SMs x schedulers x GHz */
	free(r);
	r = stub_host_record(&w->h, "iroof", 1);
	assert_string_equal(stub_host_get(r, "name"), "inst_warp");
	near(num(r, "value"), 1038147855229.3805 / 1e9);
	free(r);
	r = stub_host_record(&w->h, "iroof", 3);
	assert_string_equal(stub_host_get(r, "level"), "l1_shared");
	near(num(r, "value"), 32931358316955.355 / 128 / 1e9);
	free(r);
	assert_int_equal(stub_host_count(&w->h, "iwall"), 9);
}

/* No ceilings: points with the theoretical peak, no roof; a warning. */
static void test_no_ceilings(void **state)
{
	struct world *w = *state;
	char *p;

	assert_int_equal(stub_host_add_input(&w->h, "walls", FIX "walls-instr.records.tsv"), 0);
	assert_int_equal(run(w), RL_OK);
	p = point(w, "transpose_padded", "l2");
	assert_non_null(p);
	assert_string_equal(stub_host_get(p, "peak_method"), "theoretical");
	near(num(p, "peak_gips"), 1045.44);
	assert_null(stub_host_get(p, "roof_gips"));
	free(p);
	assert_non_null(strstr(w->h.log.buf, "no ceilings for GPU"));
}

/* The default set has no instruction metrics: left out, and a step with
 * nothing else fails. */
static void test_without_instruction_metrics(void **state)
{
	struct world *w = *state;

	assert_int_equal(stub_host_add_input(&w->h, "abc", FIX "abc-default.records.tsv"), 0);
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "no instruction metrics"));
	assert_int_equal(stub_host_count(&w->h, "ipoint"), 0);
}

static void test_chart_label(void **state)
{
	char out[32];

	(void)state;
	ir_chart_label("void walls_global<1>(const float *, float *, unsigned int)", out, sizeof(out));
	assert_string_equal(out, "walls_global<1>");
	ir_chart_label("kernel_\"C\"(double *)", out, sizeof(out));
	assert_string_equal(out, "kernel__C_");
	ir_chart_label("a_very_long_kernel_name_that_goes_on_and_on(int)", out, 10);
	assert_string_equal(out, "a_very_lo");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_points, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roofs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_ceilings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_without_instruction_metrics, setup, teardown),
		cmocka_unit_test(test_chart_label),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
