/*
 * test_ncu_import - plugins/ncu_import.c against a stand-in host, on the
 * exports made on the H100 from one report (raw page, details page in base
 * units and in ncu's default units), on ncu's own SpeedOfLight section
 * capture, on captures with other metric sets, and on the bad corpus.
 * Expected values come from the kernels' design and from the export text
 * itself, read here without the plugin's reader.
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

#include "ncu_import.c"
#include "records.h"
#include "strbuf.h"
#include "stub_host.h"

#define SASS_DADD "sm__sass_thread_inst_executed_op_dadd_pred_on.sum"

struct world {
	struct import_config cfg;
	struct stub_host h;
};

static char fixtures[1024];

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));

	w->cfg.metrics_table = (char *)(uintptr_t)"tests/fixtures/ncu/ncu-metrics.recorded.tsv";
	stub_host_init(&w->h, fixtures, "/nonexistent");
	w->h.ctx.step_id = "import";
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	stub_host_release(&w->h);
	free(w);
	return 0;
}

static enum rl_result import(struct world *w, const char *file)
{
	w->cfg.file = (char *)(uintptr_t)file;
	return rooflined_plugin.run(&w->h.ctx, &w->cfg, NULL);
}

/* Record `index` of `kind` as "key=value\n" lines (caller frees), or NULL. */
static char *record(struct world *w, const char *kind, long index)
{
	return stub_host_record(&w->h, kind, index);
}

/* The value of key in a record copy (static buffer). */
static const char *get(const char *rec, const char *key)
{
	return stub_host_get(rec, key);
}

/* The first "name","unit","value" triple of a details export, read naively. */
static double details_value(const char *file, const char *metric, const char *unit)
{
	char path[1400], pat[300], *text, *p;
	FILE *f;
	long n;
	double d;

	snprintf(path, sizeof(path), "%s/%s", fixtures, file);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	snprintf(pat, sizeof(pat), "\"%s\",\"%s\",\"", metric, unit);
	p = strstr(text, pat);
	assert_non_null(p);
	d = strtod(p + strlen(pat), NULL);
	free(text);
	return d;
}

/* ---- tests ------------------------------------------------------------------ */

static void test_raw_export(void **state)
{
	struct world *w = *state;
	char *a, *sum, *dev, want[64];

	assert_int_equal(import(w, "kernel_abc.import-raw.csv"), RL_OK);
	/* the device first, once; then a kernel per launch; the summary */
	assert_int_equal(w->h.n_records, 5);
	assert_true(strncmp(w->h.records.buf, "device\t", 7) == 0);
	assert_null(record(w, "device", 1));
	dev = record(w, "device", 0);
	assert_string_equal(get(dev, "gpu_index"), "0");
	assert_string_equal(get(dev, "gpu_name"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(get(dev, "cc"), "9.0");
	assert_string_equal(get(dev, "source"), "ncu-import");
	assert_string_equal(get(dev, "file"), "kernel_abc.import-raw.csv");
	assert_string_equal(get(dev, "device__attribute_multiprocessor_count"), "132");
	assert_string_equal(get(dev, "device__attribute_compute_capability_major"), "9");
	free(dev);
	a = record(w, "kernel", 0);
	assert_string_equal(get(a, "kernel"), "kernel_A(double *, long, double)");
	assert_string_equal(get(a, "source"), "ncu-import");
	assert_string_equal(get(a, "file"), "kernel_abc.import-raw.csv");
	assert_null(get(a, "ncu_version")); /* a CSV does not say */
	assert_string_equal(get(a, "missing"), "");
	assert_string_equal(get(a, "gpu_name"), "NVIDIA H100 80GB HBM3");
	assert_null(get(a, "device__attribute_display_name")); /* the device's */
	snprintf(want, sizeof(want), "%ld", 4096L * 256 * 10000);
	assert_string_equal(get(a, SASS_DADD), want);
	free(a);
	sum = record(w, "collect_summary", 0);
	assert_string_equal(get(sum, "source"), "ncu-import");
	assert_string_equal(get(sum, "layout"), "raw");
	assert_string_equal(get(sum, "kernels"), "3");
	assert_string_equal(get(sum, "invocations"), "3");
	assert_string_equal(get(sum, "passes"), "3");
	assert_string_equal(get(sum, "missing"), "wall_s,command");
	free(sum);
}

/* The details page in base units holds the raw page's exact text. */
static void test_details_base_equals_raw(void **state)
{
	struct world *w = *state;
	char *raw[3], *det[3];
	int k;

	assert_int_equal(import(w, "kernel_abc.import-raw.csv"), RL_OK);
	for (k = 0; k < 3; k++)
		raw[k] = record(w, "kernel", k);
	strbuf_reset(&w->h.records);
	assert_int_equal(import(w, "kernel_abc.import-details.csv"), RL_OK);
	for (k = 0; k < 3; k++) {
		char *line, *save, *copy;

		det[k] = record(w, "kernel", k);
		copy = strdup(raw[k]);
		for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char key[256];

			snprintf(key, sizeof(key), "%.*s", (int)strcspn(line, "="), line);
			if (strcmp(key, "file") == 0)
				continue;
			assert_non_null(get(det[k], key));
			assert_string_equal(get(det[k], key), line + strlen(key) + 1);
		}
		free(copy);
		free(raw[k]);
		free(det[k]);
	}
	/* the details page has the one property its set collected */
	raw[0] = record(w, "device", 0);
	assert_string_equal(get(raw[0], "gpu_name"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(get(raw[0], "device__attribute_display_name"),
			    "NVIDIA H100 80GB HBM3");
	assert_null(get(raw[0], "device__attribute_multiprocessor_count"));
	free(raw[0]);
}

/* ncu's default units: converted to base units, flagged as rounded. */
static void test_details_default_units(void **state)
{
	struct world *w = *state;
	char *a, *sum;
	double us = details_value("kernel_abc.import-details-default.csv",
				  "gpu__time_duration.sum", "us");
	double ghz = details_value("kernel_abc.import-details-default.csv",
				   "sm__cycles_elapsed.avg.per_second", "Ghz");

	assert_int_equal(import(w, "kernel_abc.import-details-default.csv"), RL_OK);
	a = record(w, "kernel", 0);
	assert_true(fabs(atof(get(a, "gpu__time_duration.sum")) - us * 1e3) < 1e-6);
	assert_true(fabs(atof(get(a, "sm_clock_hz")) - ghz * 1e9) < 1e-3);
	assert_non_null(strstr(get(a, "rounded"), "gpu__time_duration.sum"));
	assert_non_null(strstr(get(a, "rounded"), "sm__cycles_elapsed.avg.per_second"));
	/* counts print without prefixes: exact */
	assert_string_equal(get(a, SASS_DADD), "10485760000");
	assert_null(strstr(get(a, "rounded"), "sass"));
	free(a);
	sum = record(w, "collect_summary", 0);
	assert_string_equal(get(sum, "layout"), "details");
	free(sum);
}

/* ncu's own SpeedOfLight section: what it lacks is listed, not invented. */
static void test_speed_of_light_export(void **state)
{
	struct world *w = *state;
	char *a;

	assert_int_equal(import(w, "kernel_abc.sol.raw.csv"), RL_OK);
	a = record(w, "kernel", 0);
	assert_non_null(get(a, "gpu__time_duration.sum"));
	assert_null(get(a, SASS_DADD));
	assert_null(get(a, "dram__bytes.sum"));
	assert_non_null(strstr(get(a, "missing"), SASS_DADD));
	assert_non_null(strstr(get(a, "missing"), "dram__bytes.sum"));
	assert_non_null(strstr(get(a, "missing"), "l1tex__t_bytes.sum"));
	assert_string_equal(get(a, "profiler__replayer_passes"), "3");
	free(a);
}

/* A capture with another set: extra rows it has are kept, absent ones listed. */
static void test_other_sets(void **state)
{
	struct world *w = *state;
	char *a;

	assert_int_equal(import(w, "gsrb.both-defs.raw.csv"), RL_OK);
	assert_int_equal(w->h.n_records, 20); /* device, 18 kernels, summary */
	a = record(w, "kernel", 0);
	assert_string_equal(get(a, "missing"), "sm__inst_executed_pipe_tensor.sum");
	assert_non_null(get(a, "lts__lts2xbar_cycles_active.sum"));
	assert_non_null(get(a, "sm__ops_path_tensor_src_int8.sum"));
	free(a);
	strbuf_reset(&w->h.records);
	w->cfg.ncu_version = (char *)(uintptr_t)"2025.3.1.0";
	assert_int_equal(import(w, "kernel_abc.full.raw.csv"), RL_OK);
	a = record(w, "kernel", 2);
	assert_string_equal(get(a, "missing"), "");
	assert_string_equal(get(a, "ncu_version"), "2025.3.1.0");
	assert_non_null(get(a, "sm__ops_path_tensor_src_fp16.sum"));
	free(a);
}

static void expect_fail(struct world *w, const char *file, const char *msg)
{
	assert_int_equal(import(w, file), RL_FAIL);
	assert_int_equal(w->h.n_records, 0);
	if (!strstr(w->h.log.buf, msg))
		fail_msg("log lacks '%s':\n%s", msg, w->h.log.buf);
}

/* Declared perturbations (plugins/ncu/perturb.h): the matching metrics of
 * the matching kernels scaled, the others untouched, the record labelled;
 * bad rules refused. */
static void test_perturb(void **state)
{
	char *items[] = { "kernel_C* dram__bytes.* +60%", "kernel_? gpu__time_duration.sum -50%" };
	char *bad[] = { "kernel_C* dram__bytes.*" }, *bad2[] = { "k m 60" },
	     *bad3[] = { "k m -100%" };
	const struct rl_field in[] = { { "kernel", "kernel_C(double*)" },
				       { "dram__bytes.sum", "1000" },
				       { "dram__bytes.avg", "10" },
				       { "gpu__time_duration.sum", "8" },
				       { "lts__t_bytes.sum", "77" }, { NULL, NULL } };
	const struct rl_field other[] = { { "kernel", "kernel_A(double*)" },
					  { "dram__bytes.sum", "1000" }, { NULL, NULL } };
	struct perturb_rules rules;
	struct rl_field out[8];
	char err[256], text[1024];

	(void)state;
	assert_int_equal(perturb_parse(items, 2, &rules, err, sizeof(err)), 0);
	assert_int_equal(perturb_apply(&rules, in, out, 8, text, sizeof(text)), 1);
	assert_string_equal(rl_field_get(out, "dram__bytes.sum"), "1600");
	assert_string_equal(rl_field_get(out, "dram__bytes.avg"), "16");
	assert_string_equal(rl_field_get(out, "gpu__time_duration.sum"), "8");
	assert_string_equal(rl_field_get(out, "lts__t_bytes.sum"), "77");
	assert_string_equal(rl_field_get(out, "synthetic"),
			    "perturbed: kernel_C* dram__bytes.* +60%");
	assert_int_equal(perturb_apply(&rules, other, out, 8, text, sizeof(text)), 0);
	assert_string_equal(rl_field_get(out, "dram__bytes.sum"), "1000");
	assert_null(rl_field_get(out, "synthetic"));
	/* too small an output is refused, not overrun */
	assert_int_equal(perturb_apply(&rules, in, out, 3, text, sizeof(text)), -E2BIG);
	perturb_release(&rules);
	assert_int_equal(perturb_parse(bad, 1, &rules, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "expected KERNEL METRICS"));
	assert_int_equal(perturb_parse(bad2, 1, &rules, err, sizeof(err)), -EINVAL);
	assert_int_equal(perturb_parse(bad3, 1, &rules, err, sizeof(err)), -EINVAL);
}

static void test_bad_files(void **state)
{
	struct world *w = *state;

	expect_fail(w, "bad/truncated.csv", "bad/truncated.csv:8:");
	expect_fail(w, "bad/unprofiled-empty.csv", "has no value for any");
	expect_fail(w, "bad/wrong-columns.csv", "row has 340 fields");
	expect_fail(w, "bad/garbage.bin", "no CSV table");
	expect_fail(w, "no/such.csv", "cannot read");
	w->cfg.metrics_table = (char *)(uintptr_t)"/no/such/table.tsv";
	expect_fail(w, "kernel_abc.import-raw.csv", "/no/such/table.tsv: cannot read the metric table");
}

/* One export per MPI rank (issue 24): every record of a file carries its
 * rank and node; file and rank_files together, a path leaving the run
 * directory, or ranks of another length are refused, emitting nothing. */
static void test_rank_files(void **state)
{
	struct world *w = *state;
	char *files[] = { "kernel_abc.raw.csv", "kernel_abc.raw.csv" };
	char *ranks[] = { "0", "3" }, *nodes[] = { "gpu01", "gpu02" };
	char *esc[] = { "../ncu/kernel_abc.raw.csv" };
	long n;
	char *rec;

	w->cfg.rank_files = (struct rl_strlist){ 2, files };
	w->cfg.ranks = (struct rl_strlist){ 2, ranks };
	w->cfg.nodes = (struct rl_strlist){ 2, nodes };
	assert_int_equal(rooflined_plugin.run(&w->h.ctx, &w->cfg, NULL), RL_OK);
	n = stub_host_count(&w->h, "kernel");
	assert_true(n > 0 && n % 2 == 0);
	assert_int_equal(stub_host_count(&w->h, "collect_summary"), 2);
	rec = record(w, "kernel", 0);
	assert_string_equal(get(rec, "rank"), "0");
	assert_string_equal(get(rec, "node"), "gpu01");
	free(rec);
	rec = record(w, "kernel", n - 1);
	assert_string_equal(get(rec, "rank"), "3");
	assert_string_equal(get(rec, "node"), "gpu02");
	free(rec);
	rec = record(w, "collect_summary", 1);
	assert_string_equal(get(rec, "rank"), "3");
	free(rec);

	stub_host_release(&w->h);
	stub_host_init(&w->h, fixtures, "/nonexistent");
	w->cfg.file = (char *)(uintptr_t)"kernel_abc.raw.csv";
	assert_int_equal(rooflined_plugin.run(&w->h.ctx, &w->cfg, NULL), RL_FAIL);
	w->cfg.file = NULL;
	w->cfg.ranks.n = 1;
	assert_int_equal(rooflined_plugin.run(&w->h.ctx, &w->cfg, NULL), RL_FAIL);
	w->cfg.ranks.n = 0;
	w->cfg.nodes.n = 0;
	w->cfg.rank_files = (struct rl_strlist){ 1, esc };
	assert_int_equal(rooflined_plugin.run(&w->h.ctx, &w->cfg, NULL), RL_FAIL);
	assert_int_equal(stub_host_count(&w->h, "kernel"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_raw_export, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rank_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_details_base_equals_raw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_details_default_units, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speed_of_light_export, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_sets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
		cmocka_unit_test(test_perturb),
	};
	const char *d = getenv("NCU_FIXTURES");

	if (!realpath(d ? d : "tests/fixtures/ncu", fixtures)) {
		perror("tests/fixtures/ncu");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
