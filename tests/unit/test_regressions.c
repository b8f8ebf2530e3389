/*
 * test_regressions - plugins/regressions.c against the stand-in host, on a
 * history set as the daemon writes it (daemon/step_inputs.c): a baseline and a
 * run of three kernels at three levels, the figures hand-made so that each
 * class shows (synthetic): kernel_A slower at the same AI (dropped),
 * kernel_C with its DRAM AI down 40 % (moved left at dram only), kernel_B
 * unchanged, kernel_D only in the baseline (gone).  One finding per kernel
 * and precision that regressed, with its worst class and its levels.
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
#include <unistd.h>

#include <cmocka.h>

#include "../../plugins/regressions.c"
#include "stub_host.h"
#include "util.h"

static void add(struct strbuf *sb, const char *kind, const char *kernel,
		const char *level, double ai, double gflops)
{
	char a[32], g[32];

	snprintf(a, sizeof(a), "%g", ai);
	snprintf(g, sizeof(g), "%g", gflops);
	assert_int_equal(records_format(sb, kind, (const struct rl_field[]){
		{ "kernel", kernel }, { "level", level }, { "precision", "fp64" },
		{ "ai", a }, { "gflops", g }, { "roof", "60000" },
		{ "gpu_name", "NVIDIA H100 80GB HBM3" }, { NULL, NULL } }), 0);
}

static void test_classes(void **state)
{
	static const char *const levels[] = { "l1", "l2", "dram" };
	char dir[] = "/tmp/test_regressions.XXXXXX", path[64];
	struct regress_config cfg = { .lookback = 10, .k = 4, .floor_pct = 3,
				      .min_history = 3 };
	struct strbuf sb = STRBUF_INIT;
	struct stub_host h;
	char *rec;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/history.tsv", dir);
	strbuf_init(&sb);
	assert_int_equal(records_format(&sb, "run", (const struct rl_field[]){
		{ "run", "9" }, { "night", "2026-11-24" }, { NULL, NULL } }), 0);
	assert_int_equal(records_format(&sb, "baseline", (const struct rl_field[]){
		{ "run", "8" }, { NULL, NULL } }), 0);
	for (int l = 0; l < 3; l++) {
		add(&sb, "baseline_point", "kernel_A", levels[l], 10 * (l + 1), 5000);
		add(&sb, "baseline_point", "kernel_B", levels[l], 1, 10);
		add(&sb, "baseline_point", "kernel_C", levels[l], 0.5, 900);
		add(&sb, "baseline_point", "kernel_D", levels[l], 2, 100);
	}
	for (int l = 0; l < 3; l++) {
		add(&sb, "run_point", "kernel_A", levels[l], 10 * (l + 1), 4000);
		add(&sb, "run_point", "kernel_B", levels[l], 1, 10.1);
		add(&sb, "run_point", "kernel_C", levels[l], l == 2 ? 0.3 : 0.5, 900);
	}
	assert_int_equal(util_write_file_replace(path, sb.buf, sb.len, 0600), 0);
	stub_host_init(&h, dir, dir);
	stub_host_add_input(&h, "history", path);
	assert_int_equal(regress_run(&h.ctx, &cfg, NULL), RL_OK);
	assert_int_equal(stub_host_count(&h, "regression"), 12);
	assert_int_equal(stub_host_count(&h, "finding"), 2);
	rec = stub_host_record(&h, "finding", 0);
	assert_string_equal(stub_host_get(rec, "kernel"), "kernel_A");
	assert_string_equal(stub_host_get(rec, "class"), "dropped");
	assert_string_equal(stub_host_get(rec, "levels"), "dram,l1,l2");
	assert_true(fabs(strtod(stub_host_get(rec, "drop_pct"), NULL) - 20) < 1e-6);
	assert_string_equal(stub_host_get(rec, "baseline_run"), "8");
	assert_string_equal(stub_host_get(rec, "night"), "2026-11-24");
	free(rec);
	rec = stub_host_record(&h, "finding", 1);
	assert_string_equal(stub_host_get(rec, "kernel"), "kernel_C");
	assert_string_equal(stub_host_get(rec, "class"), "moved left");
	assert_string_equal(stub_host_get(rec, "levels"), "dram");
	free(rec);
	rec = stub_host_record(&h, "regression_summary", 0);
	assert_string_equal(stub_host_get(rec, "regressed"), "2");
	assert_string_equal(stub_host_get(rec, "moved_left"), "1");
	assert_string_equal(stub_host_get(rec, "dropped"), "3");
	free(rec);
	/* kernel_D: gone, not a finding */
	for (long i = 0; i < 12; i++) {
		rec = stub_host_record(&h, "regression", i);
		if (!strcmp(stub_host_get(rec, "kernel"), "kernel_D"))
			assert_string_equal(stub_host_get(rec, "class"), "gone");
		if (!strcmp(stub_host_get(rec, "kernel"), "kernel_B"))
			assert_string_equal(stub_host_get(rec, "class"), "unchanged");
		free(rec);
	}
	stub_host_release(&h);
	strbuf_release(&sb);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
