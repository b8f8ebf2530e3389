/*
 * test_report - the report plugin (plugins/report.c, included here, and
 * plugins/report/, linked) against the stand-in host, fed the real H100
 * captures: the hierarchical plugin's kernel_abc records
 * (tests/fixtures/render/), the ert and spec ceilings (tests/fixtures/ert/),
 * the ncu plugin's records (tests/fixtures/ncu/), and hand-written run
 * records (tests/fixtures/report/run-info.tsv).
 *
 * Checked: the page (sections, a table row and advice per kernel, chart
 * markers, metadata from the run records, the ceilings beside their
 * theoretical values), its mode, the `report` record, the baseline
 * comparison, 50 kernels with long templated names, HTML escaping of
 * hostile kernel names, and the failures (no points, bad options).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "report.c"
#include "options.h"
#include "stub_host.h"

#define FIX "tests/fixtures"

struct world {
	struct options *opts;
	struct stub_host h;
	char dir[256];
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));

	snprintf(w->dir, sizeof(w->dir), "/tmp/test_report.XXXXXX");
	assert_non_null(mkdtemp(w->dir));
	w->opts = options_new(&rooflined_plugin);
	stub_host_init(&w->h, w->dir, w->dir);
	w->h.ctx.step_id = "report";
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	char path[512];

	snprintf(path, sizeof(path), "%s/report.html", w->dir);
	unlink(path);
	rmdir(w->dir);
	options_free(w->opts);
	stub_host_release(&w->h);
	free(w);
	return 0;
}

static void set(struct world *w, const char *key, const char *value)
{
	struct strbuf err = STRBUF_INIT;

	strbuf_init(&err);
	if (options_set(w->opts, key, value, &err) != 0)
		fail_msg("option %s=%s: %s", key, value, err.buf);
	strbuf_release(&err);
}

static enum rl_result run(struct world *w)
{
	struct strbuf err = STRBUF_INIT;
	void *st = NULL;

	strbuf_init(&err);
	if (options_finish(w->opts, &err) != 0)
		fail_msg("options: %s", err.buf);
	strbuf_release(&err);
	if (rooflined_plugin.init(&w->h.ctx, w->opts->config, &st) != 0)
		return RL_FAIL;
	return rooflined_plugin.run(&w->h.ctx, w->opts->config, st);
}

static char *page(const struct world *w)
{
	char path[512], *buf = NULL;
	size_t len;

	snprintf(path, sizeof(path), "%s/report.html", w->dir);
	if (util_read_file(path, 1 << 26, &buf, &len) != 0)
		fail_msg("no page at %s", path);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void kernel_abc(struct world *w)
{
	stub_host_add_input(&w->h, "spec", FIX "/ert/h100-spec-records.tsv");
	stub_host_add_input(&w->h, "ceilings", FIX "/ert/h100-ert-records.tsv");
	stub_host_add_input(&w->h, "profile", FIX "/ncu/plugin-kernel_abc.records.tsv");
	stub_host_add_input(&w->h, "roofline", FIX "/render/hierarchical-kernel_abc.records.tsv");
}

static void test_kernel_abc(void **state)
{
	struct world *w = *state;
	struct stat st;
	char path[512], *b, *rec;

	kernel_abc(w);
	w->h.run_info = FIX "/report/run-info.tsv";
	assert_int_equal(run(w), RL_OK);
	b = page(w);
	assert_int_equal(count(b, "<tr class=\"kernel\">"), 3);
	assert_int_equal(count(b, " class=\"pt\">"), 9);
	for (const char *const *s = (const char *const[]){
		     "<section id=\"chart\">", "<section id=\"kernels\">", "<section id=\"advice\">",
		     "<section id=\"baseline\">", "<section id=\"ceilings\">", "<section id=\"steps\">",
		     "<section id=\"files\">", "<dt>Pipeline</dt><dd>kernel-abc-replay</dd>",
		     "<dt>Owner</dt><dd>alice</dd>", "101 (spec), 103 (profile)",
		     "<dt>Nsight Compute</dt><dd>2025.3.1.0</dd>", "<dt>Clock control</dt><dd>none</dd>",
		     "<dt>Replay passes</dt><dd>3</dd>", "the instruction mix caps it",
		     "raise occupancy", "Block (tile) its loops", "fp64 peak 33.7 TFLOP/s",
		     "L1 32.9 TB/s", "HBM 3.09 TB/s", "GPU-b329a22d-4f86-4ca9-ab8f-933e76bf2b4f",
		     "No baseline", NULL };
	     *s; s++)
		if (!strstr(b, *s))
			fail_msg("the page lacks '%s'", *s);
	/* fp64_fma: ert's 33668.9 GFLOP/s beside spec's 33454.1, 100.6 % */
	assert_non_null(strstr(b, "<td>fp64_fma</td><td class=\"n\" data-v=\"33668.8644\">33669 GFLOP/s"));
	assert_non_null(strstr(b, ">100.6</td>"));
	free(b);
	snprintf(path, sizeof(path), "%s/report.html", w->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	rec = stub_host_record(&w->h, "report", 0);
	assert_string_equal(stub_host_get(rec, "file"), "report.html");
	assert_string_equal(stub_host_get(rec, "kernels"), "3");
	assert_string_equal(stub_host_get(rec, "ceilings"), "18");
	free(rec);
}

static void test_baseline(void **state)
{
	struct world *w = *state;
	char info[600], base[512], *b, *data, *tab;
	size_t len;
	FILE *f;

	kernel_abc(w);
	/* the baseline run's roofline step: a directory with the same records */
	snprintf(base, sizeof(base), "%.256s/base", w->dir);
	assert_int_equal(mkdir(base, 0700), 0);
	snprintf(info, sizeof(info), "%s/records.tsv", base);
	assert_int_equal(util_read_file(FIX "/render/hierarchical-kernel_abc.records.tsv",
					1 << 20, &data, &len), 0);
	assert_int_equal(util_write_file_atomic(info, data, len, 0600), 0);
	free(data);
	snprintf(info, sizeof(info), "%s/info.tsv", w->dir);
	f = fopen(info, "w");
	fprintf(f, "baseline\trun=5\tstep=roofline\tdir=%s\tsubmitted_at=2026-11-24 02:00:00+00\n", base);
	fclose(f);
	w->h.run_info = info;
	assert_int_equal(run(w), RL_OK);
	b = page(w);
	assert_non_null(strstr(b, "Baseline: run 5 (submitted 2026-11-24 02:00:00+00)"));
	/* the same records: every kernel unchanged, 0 % (the change column
	 * follows GFLOP/s now, 15948 for kernel_A) */
	tab = strstr(b, "id=\"baseline-table\"");
	assert_non_null(tab);
	*strstr(tab, "</table>") = '\0';
	assert_int_equal(count(tab, "<tr>"), 4);
	assert_int_equal(count(tab, ">15948</td><td class=\"n\" data-v=\"0\">0</td>"), 1);
	assert_int_equal(count(tab, "</td><td class=\"n\" data-v=\"0\">0</td><td class=\"n\" data-v=\"2275555"), 1);
	free(b);
	unlink(info);
	snprintf(info, sizeof(info), "%s/records.tsv", base);
	unlink(info);
	rmdir(base);
}

static void test_many_kernels(void **state)
{
	struct world *w = *state;
	char *b;

	stub_host_add_input(&w->h, "roofline", FIX "/render/many-kernels.records.tsv");
	assert_int_equal(run(w), RL_OK);
	b = page(w);
	assert_int_equal(count(b, "<tr class=\"kernel\">"), 50);
	assert_int_equal(count(b, "<g class=\"kernel\""), 50);
	assert_non_null(strstr(b, "The daemon gave no run records"));
	free(b);
}

static void test_escaping(void **state)
{
	struct world *w = *state;
	char path[512], *b;
	FILE *f;

	snprintf(path, sizeof(path), "%s/evil.tsv", w->dir);
	f = fopen(path, "w");
	for (int l = 0; l < 3; l++)
		fprintf(f, "point\tkernel=evil<script>alert(\"x&y\")</script>'\\t\tinvocation=all\t"
			"precision=fp64\tlevel=%s\tai=%g\tgflops=100\tverdict=latency-bound\t"
			"bound_level=compute\tpct_of_bound=1\tprimary=1\tgpu_name=G<b>\n",
			rp_level_names[l], 1.0 + l);
	fclose(f);
	stub_host_add_input(&w->h, "x\"><i>", path);
	assert_int_equal(run(w), RL_OK);
	b = page(w);
	assert_null(strstr(b, "<script>alert"));
	assert_null(strstr(b, "<i>"));
	assert_non_null(strstr(b, "evil&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;&#39;"));
	assert_int_equal(count(b, "<script>"), 1); /* the sorting script alone */
	free(b);
	unlink(path);
}

static void test_nothing_to_report(void **state)
{
	struct world *w = *state;

	stub_host_add_input(&w->h, "ceilings", FIX "/ert/h100-ert-records.tsv");
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "nothing to report"));
}

static void test_bad_options(void **state)
{
	struct world *w = *state;

	set(w, "width", "10");
	kernel_abc(w);
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "width/height"));
}

static void test_bad_file(void **state)
{
	struct world *w = *state;

	set(w, "file", "../x.html");
	kernel_abc(w);
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "not a plain file name"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kernel_abc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_kernels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escaping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_to_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
