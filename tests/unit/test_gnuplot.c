/*
 * test_gnuplot - the gnuplot plugin (plugins/gnuplot.c, included here, and
 * plugins/gnuplot/, linked) against a stand-in host that serves records from
 * the fixture files of tests/fixtures/render/ (hand-written chart input, not
 * measurements: see its README.md), one file per needed step, and captures
 * the records the plugin emits.  The real gnuplot runs; the tests that need
 * it are skipped, with a message, when it is not installed.
 *
 * Checked: the files (PNG magic, SVG text with the roof labels, values and
 * kernel names), the chart records, 50 kernels with long templated names, the
 * comparison of the GPP versions, the history, the findings' charts (the
 * fleet, a GPU's nights, a kernel's trajectory: records written by the real
 * pipelines in tests/integration/charts-findings.t), what gnuplot said (nothing),
 * failures (gnuplot missing or failing, nothing to draw, bad options), and
 * injection: kernel, GPU, series and node names and the title that try to
 * run commands or redirect the output do nothing and the chart is made.
 *
 * GNUPLOT_TEST_KEEP=dir keeps each test's output in dir/<test> to look at.
 */
#include <dirent.h>
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

#include "gnuplot.c"
#include "gnuplot/gp_text.h"
#include "options.h"
#include "records.h"
#include "strbuf.h"
#include "stub_host.h"

#define FIX "tests/fixtures/render"

struct world {
	struct options *opts;
	struct stub_host h;
	bool finished; /* options_finish done (it appends list defaults) */
	char dir[512];
};

static bool have_gnuplot;
static char tmp_root[256];

/* ---- the world: an out_dir per test, options through the real table -------- */

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	const char *keep = getenv("GNUPLOT_TEST_KEEP");
	static int seq;

	if (keep)
		snprintf(w->dir, sizeof(w->dir), "%s/%d", keep, ++seq);
	else
		snprintf(w->dir, sizeof(w->dir), "%s/t%d", tmp_root, ++seq);
	mkdir(w->dir, 0755);
	w->opts = options_new(&rooflined_plugin);
	stub_host_init(&w->h, w->dir, w->dir);
	w->h.ctx.step_id = "chart";
	*state = w;
	return 0;
}

static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[1024];

	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static int teardown(void **state)
{
	struct world *w = *state;

	if (!getenv("GNUPLOT_TEST_KEEP"))
		remove_tree(w->dir);
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

static void input(struct world *w, const char *step, const char *path)
{
	assert_int_equal(stub_host_add_input(&w->h, step, path), 0);
}

/* init + run as the host does; init's failure returns RL_FAIL.  Options set
 * after a first run change that run's config. */
static enum rl_result run(struct world *w)
{
	struct strbuf err = STRBUF_INIT;
	void *st = NULL;
	enum rl_result r;

	strbuf_init(&err);
	if (!w->finished && options_finish(w->opts, &err) != 0)
		fail_msg("options: %s", err.buf);
	w->finished = true;
	strbuf_release(&err);
	if (rooflined_plugin.init(&w->h.ctx, w->opts->config, &st) != 0)
		return RL_FAIL;
	r = rooflined_plugin.run(&w->h.ctx, w->opts->config, st);
	if (getenv("GNUPLOT_TEST_VERBOSE"))
		fprintf(stderr, "%s", w->h.log.buf);
	return r;
}

/* ---- reading what came out -------------------------------------------------- */

static char *slurp(const struct world *w, const char *name, size_t *len)
{
	char path[1024];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", w->dir, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("no file %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

/* A file of the repository, whole; caller frees. */
static char *slurp_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		fail_msg("no file %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void assert_png(const struct world *w, const char *name)
{
	size_t n;
	char *b = slurp(w, name, &n);

	assert_true(n > 1000);
	assert_memory_equal(b, "\x89PNG\r\n\x1a\n", 8);
	free(b);
}

/* The SVG (which must be one) holds every string of the NULL-ended list. */
static void assert_svg_has(const struct world *w, const char *name, const char *const *want)
{
	char *b = slurp(w, name, NULL);

	assert_non_null(strstr(b, "<svg"));
	assert_non_null(strstr(b, "</svg>"));
	for (; *want; want++)
		if (!strstr(b, *want))
			fail_msg("%s lacks '%s'", name, *want);
	free(b);
}

static void assert_quiet_gnuplot(const struct world *w)
{
	char *b = slurp(w, "gnuplot.log", NULL);

	if (*b)
		fail_msg("gnuplot said: %s", b);
	free(b);
}

/* Field `key` of the index-th record of `kind` the plugin emitted. */
static char *emitted(const struct world *w, const char *kind, long index, const char *key)
{
	static char out[512];
	char *rec = stub_host_record(&w->h, kind, index);
	const char *v = stub_host_get(rec, key);

	snprintf(out, sizeof(out), "%s", rec ? (v ? v : "(none)") : "");
	free(rec);
	return out;
}

static int count_lines(const char *s, const char *prefix)
{
	int n = 0;

	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
		n += strncmp(p, prefix, strlen(prefix)) == 0;
	return n;
}

#define NEED_GNUPLOT() do { if (!have_gnuplot) { print_message("gnuplot not installed: skipped\n"); skip(); } } while (0)

/* ---- charts ------------------------------------------------------------------- */

/* NERSC's three toy kernels on the H100, as the hierarchical plugin
 * analysed them: roofs, labels, names, records; each kernel at its primary
 * precision (kernel_C's fp16 points, HFMA2.MMA moves, are left out). */
static void test_kernel_abc(void **state)
{
	struct world *w = *state;
	static const char *const want[] = {
		"HBM read 3.09 TB/s", "L2 6.95 TB/s", "L1 32.9 TB/s", "FP64 FMA 33.7 TFLOP/s",
		"FP64 no-FMA 16.8 TFLOP/s", "1  kernel_A", "2  kernel_B", "3  kernel_C",
		"Hierarchical roofline - NVIDIA H100 80GB HBM3", ">L1<", ">L2<", ">DRAM<",
		"Arithmetic intensity (FLOP/byte)", "Performance (GFLOP/s)", NULL };
	char *key, *svg;

	NEED_GNUPLOT();
	input(w, "roofline", FIX "/hierarchical-kernel_abc.records.tsv");
	assert_int_equal(run(w), RL_OK);
	assert_png(w, "roofline.png");
	assert_svg_has(w, "roofline.svg", want);
	assert_quiet_gnuplot(w);
	assert_int_equal(w->h.n_records, 2);
	assert_string_equal(emitted(w, "chart", 0, "kind"), "roofline");
	assert_string_equal(emitted(w, "chart", 0, "format"), "png");
	assert_string_equal(emitted(w, "chart", 0, "file"), "roofline.png");
	assert_string_equal(emitted(w, "chart", 0, "points"), "9");
	assert_string_equal(emitted(w, "chart", 0, "kernels"), "3");
	assert_string_equal(emitted(w, "chart", 0, "key"), "kernels.txt");
	assert_string_equal(emitted(w, "chart", 1, "format"), "svg");
	assert_string_equal(emitted(w, "chart", 1, "file"), "roofline.svg");
	key = slurp(w, "kernels.txt", NULL);
	assert_non_null(strstr(key, "\n1\tfp64\tkernel_A\tkernel_A(double *, long, double)\n"));
	assert_non_null(strstr(key, "\n3\tfp64\tkernel_C\tkernel_C(double *, const double *, long, double)\n"));
	free(key);
	svg = slurp(w, "roofline.svg", NULL);
	assert_null(strstr(svg, "[fp16]"));
	assert_null(strstr(svg, "FP16 FMA"));
	free(svg);
}

/* Asked for, kernel_C's fp16 points and its ceilings come back. */
static void test_precisions_option(void **state)
{
	struct world *w = *state;
	static const char *const want[] = { "4  kernel_C [fp16]", "3  kernel_C [fp64]",
					    "FP16 FMA 133 TFLOP/s", "FP16 no-FMA 66.6 TFLOP/s", NULL };

	NEED_GNUPLOT();
	input(w, "roofline", FIX "/hierarchical-kernel_abc.records.tsv");
	set(w, "precisions", "fp64");
	set(w, "precisions", "fp16");
	set(w, "formats", "svg");
	assert_int_equal(run(w), RL_OK);
	assert_svg_has(w, "roofline.svg", want);
	assert_string_equal(emitted(w, "chart", 0, "kernels"), "4");
	assert_string_equal(emitted(w, "chart", 0, "points"), "12");
}

/* cuBLAS DGEMM on the FP64 tensor path: the tensor ceiling and, beside it,
 * the CUDA-core FMA one. */
static void test_tensor_dgemm(void **state)
{
	struct world *w = *state;
	static const char *const want[] = { "Tensor FP64 67.2 TFLOP/s", "FP64 FMA 33.7 TFLOP/s",
					    "1  sm90_xmma_gemm_f64", NULL };
	char *key;

	NEED_GNUPLOT();
	input(w, "roofline", FIX "/hierarchical-dgemm.records.tsv");
	assert_int_equal(run(w), RL_OK);
	assert_png(w, "roofline.png");
	assert_svg_has(w, "roofline.svg", want);
	assert_quiet_gnuplot(w);
	key = slurp(w, "kernels.txt", NULL);
	assert_non_null(strstr(key, "\n1\ttc_fp64\tsm90_xmma_gemm_f64"));
	free(key);
}

/* 50 kernels with long templated names, four precisions: every one in the
 * key, short and numbered, with the tensor ceiling and one chart. */
static void test_fifty_kernels(void **state)
{
	struct world *w = *state;
	static const char *const want[] = {
		"1  cutlass::gemm::kernel::gemm_0&lt;...> [fp64]",
		"50  at::native::anon::reduce_kernel_49&lt;...> [fp32]",
		"Tensor FP16 882 TFLOP/s", "FP32 FMA 66.8 TFLOP/s", "FP16 FMA 133 TFLOP/s",
		"4  DeviceRadixSortOnesweepKernel_3&lt;...> [tc_fp16]", NULL };
	char *key, *svg;

	NEED_GNUPLOT();
	input(w, "roofline", FIX "/many-kernels.records.tsv");
	set(w, "formats", "svg");
	set(w, "formats", "png");
	assert_int_equal(run(w), RL_OK);
	assert_png(w, "roofline.png");
	assert_svg_has(w, "roofline.svg", want);
	assert_quiet_gnuplot(w);
	assert_string_equal(emitted(w, "chart", 0, "format"), "svg");
	assert_string_equal(emitted(w, "chart", 0, "kernels"), "50");
	assert_string_equal(emitted(w, "chart", 0, "points"), "150");
	key = slurp(w, "kernels.txt", NULL);
	for (int i = 1; i <= 50; i++) {
		char pat[32];

		snprintf(pat, sizeof(pat), "\n%d\t", i);
		assert_non_null(strstr(key, pat));
	}
	assert_non_null(strstr(key, "<(anonymous namespace)::Tag, 1>("));
	free(key);
	svg = slurp(w, "roofline.svg", NULL);
	assert_null(strstr(svg, "Params")); /* parameter lists are not in the key */
	free(svg);
}

/* The GPP versions of the SC20 talk on one chart (the hierarchical plugin's
 * records of the H100 recordings, tests/fixtures/gpp): eight kernels, one per
 * series, joined by arrows in series order. */
static void test_compare_gpp(void **state)
{
	struct world *w = *state;
	static const char *const want[] = {
		"v1 baseline", "v8 shared memory", "Roofline comparison of 8 runs",
		"FP64 FMA 33.6 TFLOP/s", "FP64 no-FMA 16.8 TFLOP/s", "HBM read 3.09 TB/s", NULL };
	static const char *const labels[] = { "v1 baseline", "v2 rcp", "v3 pow2", "v4 rcp+pow2",
		"v5 loop order", "v6 occupancy", "v7 cache blocking", "v8 shared memory" };
	static char paths[8][64], steps[8][16];
	char *arrows;

	NEED_GNUPLOT();
	for (int v = 0; v < 8; v++) {
		snprintf(paths[v], sizeof(paths[v]), FIX "/gpp-v%d.records.tsv", v + 1);
		snprintf(steps[v], sizeof(steps[v]), "v%d", v + 1);
		input(w, steps[v], paths[v]);
		set(w, "labels", labels[v]);
	}
	assert_int_equal(run(w), RL_OK);
	assert_png(w, "compare.png");
	assert_svg_has(w, "compare.svg", want);
	assert_quiet_gnuplot(w);
	assert_string_equal(emitted(w, "chart", 0, "kind"), "compare");
	assert_string_equal(emitted(w, "chart", 0, "series"), "8");
	assert_string_equal(emitted(w, "chart", 0, "points"), "24");
	arrows = slurp(w, "compare.arrows.dat", NULL);
	assert_int_equal(count_lines(arrows, ""), 1 + 7 * 3); /* a placeholder, v1->v2 ... v7->v8 at 3 levels */
	free(arrows);
}

/* partial_fma: the partial-FMA ceiling of the last series' kernel (v8:
 * alpha 0.551, 33.6 TFLOP/s x 1.551 / 2 = 26.1 TFLOP/s), dashed like the
 * no-FMA ceiling; without a partial_fma_gflops field, a warning and none. */
static void test_partial_fma(void **state)
{
	struct world *w = *state;
	static const char *const want[] = { "FP64 partial FMA (alpha 0.55) 26.1 TFLOP/s",
		"FP64 FMA 33.6 TFLOP/s", NULL };
	char *svg;

	NEED_GNUPLOT();
	input(w, "v1", FIX "/gpp-v1.records.tsv");
	input(w, "v8", FIX "/gpp-v8.records.tsv");
	set(w, "partial_fma", "true");
	set(w, "formats", "svg");
	assert_int_equal(run(w), RL_OK);
	assert_svg_has(w, "compare.svg", want);
	svg = slurp(w, "compare.svg", NULL);
	assert_null(strstr(svg, "alpha 0.63")); /* v1's, not drawn */
	free(svg);
}

static void test_partial_fma_missing(void **state)
{
	struct world *w = *state;
	char *svg;

	NEED_GNUPLOT();
	input(w, "profile", FIX "/many-kernels.records.tsv");
	set(w, "partial_fma", "true");
	set(w, "formats", "svg");
	assert_int_equal(run(w), RL_OK);
	assert_non_null(strstr(w->h.log.buf, "partial_fma: no CUDA-core point"));
	svg = slurp(w, "roofline.svg", NULL);
	assert_null(strstr(svg, "partial FMA"));
	free(svg);
}

/* Without labels, the step ids name the series; arrows can be turned off. */
static void test_compare_steps(void **state)
{
	struct world *w = *state;
	static const char *const want[] = { "baseline", "tuned", NULL };
	char *gp;

	NEED_GNUPLOT();
	input(w, "baseline", FIX "/gpp-v1.records.tsv");
	input(w, "tuned", FIX "/gpp-v8.records.tsv");
	set(w, "arrows", "false");
	set(w, "formats", "svg");
	assert_int_equal(run(w), RL_OK);
	assert_svg_has(w, "compare.svg", want);
	gp = slurp(w, "compare.gp", NULL);
	assert_null(strstr(gp, "vectors"));
	free(gp);
}

/* One kernel's nights on two nodes; the other kernel's record is left out. */
static void test_history(void **state)
{
	struct world *w = *state;
	static const char *const want[] = {
		"node gpu01", "node gpu02", "AI L1", "AI L2", "AI DRAM", "kernel: kernel_A",
		"2025-06-", "GFLOP/s and arithmetic intensity over time", NULL };

	NEED_GNUPLOT();
	input(w, "trend", FIX "/trend-kernel_A.records.tsv");
	assert_int_equal(run(w), RL_OK);
	assert_png(w, "history.png");
	assert_svg_has(w, "history.svg", want);
	assert_quiet_gnuplot(w);
	assert_string_equal(emitted(w, "chart", 0, "kind"), "history");
	assert_string_equal(emitted(w, "chart", 0, "points"), "60");
	assert_string_equal(emitted(w, "chart", 0, "series"), "2");
	assert_non_null(strstr(w->h.log.buf, "1 trend records of other kernels"));
}

/* ---- the findings' charts (issue 11) ------------------------------------------------ */

/* The fleet plugin's records of a replayed night (fleet-findings: 4 nodes x 2
 * GPUs, rl-node2/1's HBM triad perturbed -12 %, labelled synthetic; see the
 * fixtures' README): a panel per ceiling, the flagged GPU named. */
static void test_fleet(void **state)
{
	struct world *w = *state;
	static const char *const want[] = {
		"rl-node2/1 88.0%", ">HBM<", ">FP64 FMA<", ">L2<", "median of its model",
		"flagged", ">rl-node1/0<", ">rl-node4/1<", "8 GPUs, 1 flagged", NULL };
	char *svg, *gp;

	NEED_GNUPLOT();
	input(w, "fleet", FIX "/fleet-findings.records.tsv");
	assert_int_equal(run(w), RL_OK);
	assert_png(w, "fleet.png");
	assert_svg_has(w, "fleet.svg", want);
	assert_quiet_gnuplot(w);
	assert_string_equal(emitted(w, "chart", 0, "kind"), "fleet");
	assert_string_equal(emitted(w, "chart", 0, "series"), "18");
	assert_string_equal(emitted(w, "chart", 0, "kernels"), "8");
	assert_string_equal(emitted(w, "chart", 0, "points"), "144");
	assert_string_equal(emitted(w, "chart", 0, "key"), "");
	assert_string_equal(emitted(w, "chart", 0, "height"), "1320");
	svg = slurp(w, "fleet.svg", NULL);
	/* the flagged GPU is the only one named with its % */
	assert_null(strstr(strstr(svg, "rl-node2/1 88.0%") + 1, "rl-node2/1 88.0%"));
	assert_null(strstr(svg, "rl-node1/0 100"));
	free(svg);
	gp = slurp(w, "fleet.gp", NULL);
	assert_null(strstr(gp, "rl-node")); /* names travel in the data only */
	assert_int_equal(count_lines(gp, "set multiplot layout 6,3"), 2);
	free(gp);
}

/* The `ceilings` option picks the panels. */
static void test_fleet_ceilings(void **state)
{
	struct world *w = *state;
	static const char *const want[] = { ">HBM<", ">FP64 FMA<", "rl-node2/1 88.0%", NULL };
	char *svg;

	NEED_GNUPLOT();
	input(w, "fleet", FIX "/fleet-findings.records.tsv");
	set(w, "ceilings", "fp64_fma");
	set(w, "ceilings", "hbm_triad");
	set(w, "formats", "svg");
	assert_int_equal(run(w), RL_OK);
	assert_svg_has(w, "fleet.svg", want);
	assert_string_equal(emitted(w, "chart", 0, "series"), "2");
	assert_string_equal(emitted(w, "chart", 0, "height"), "940");
	svg = slurp(w, "fleet.svg", NULL);
	assert_null(strstr(svg, ">L2<"));
	free(svg);
}

/* Past 64 GPUs: one box per model (gp_fleetdist.c); the flagged one is named.  The
 * input is made here (80 GPUs on 40 nodes, one 20 % low: invented figures,
 * in the fleet plugin's record shape), not measured. */
static void test_fleet_many(void **state)
{
	struct world *w = *state;
	/* past 64 GPUs: the distribution per model (gp_fleetdist.c) */
	static const char *const want[] = { "n17/1 80.0%", "80 GPUs, 1 flagged", "GPU (80)",
					    "25-75 %, 1-99 %", "noise band", NULL };
	struct strbuf sb = STRBUF_INIT;
	char path[700], node[32], idx[16], pct[32], *svg;
	FILE *f;

	NEED_GNUPLOT();
	strbuf_init(&sb);
	for (int n = 1; n <= 40; n++)
		for (int g = 0; g < 2; g++) {
			bool sick = n == 17 && g == 1;

			snprintf(node, sizeof(node), "n%02d", n);
			snprintf(idx, sizeof(idx), "%d", g);
			snprintf(pct, sizeof(pct), "%.3f", sick ? 80.0 : 99.5 + 0.025 * n);
			records_format(&sb, "fleet_gpu", (const struct rl_field[]){
				{ "node", node }, { "gpu_index", idx }, { "gpu_uuid", node },
				{ "gpu_name", "GPU" }, { "ceiling", "hbm_triad" },
				{ "value", "1" }, { "fleet_median", "1" }, { "pct_of_median", pct },
				{ "flagged", sick ? "1" : "0" }, { NULL, NULL } });
		}
	snprintf(path, sizeof(path), "%s/many.records.tsv", w->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(sb.buf, 1, sb.len, f);
	fclose(f);
	strbuf_release(&sb);
	input(w, "fleet", path);
	set(w, "formats", "svg");
	assert_int_equal(run(w), RL_OK);
	assert_svg_has(w, "fleet.svg", want);
	assert_quiet_gnuplot(w);
	svg = slurp(w, "fleet.svg", NULL);
	assert_null(strstr(svg, ">n01/0<"));
	assert_null(strstr(svg, ">n17/1<"));
	free(svg);
}

/* `roofline plot --gpu`'s records for that GPU over the replayed nights. */
static void test_gpu_history(void **state)
{
	struct world *w = *state;
	static const char *const want[] = {
		"fleet min-max", "fleet median", "this GPU", "flagged", ">HBM<", ">FP64 FMA<",
		"GPU-replay-rl-node2-1-of-", "TB/s", "TFLOP/s", NULL };

	NEED_GNUPLOT();
	input(w, "gpu", FIX "/gpu_history-findings.records.tsv");
	assert_int_equal(run(w), RL_OK);
	assert_png(w, "gpu_history.png");
	assert_svg_has(w, "gpu_history.svg", want);
	assert_quiet_gnuplot(w);
	assert_string_equal(emitted(w, "chart", 0, "kind"), "gpu_history");
	assert_string_equal(emitted(w, "chart", 0, "series"), "18");
	assert_string_equal(emitted(w, "chart", 0, "kernels"), "1");
}

/* `roofline plot --trajectory`'s records: GPP's gpp_v1<6, 1> over three
 * runs of recorded captures, the last step labelled with its class. */
static void test_trajectory(void **state)
{
	struct world *w = *state;
	static const char *const want[] = {
		"Roofline trajectory over 3 runs", "FP64 FMA 33.6 TFLOP/s", "HBM read 3.09 TB/s", "gpp_v1&lt;...>: ",
		NULL };
	char *rec, *cls, *svg, label[200];

	NEED_GNUPLOT();
	input(w, "trajectory", FIX "/trajectory-findings.records.tsv");
	assert_int_equal(run(w), RL_OK);
	assert_png(w, "trajectory.png");
	assert_svg_has(w, "trajectory.svg", want);
	assert_quiet_gnuplot(w);
	assert_string_equal(emitted(w, "chart", 0, "kind"), "trajectory");
	assert_string_equal(emitted(w, "chart", 0, "series"), "3");
	assert_string_equal(emitted(w, "chart", 0, "points"), "9");
	rec = slurp_file(FIX "/trajectory-findings.records.tsv");
	cls = strstr(rec, "\tclass=");
	assert_non_null(cls);
	*strchr(cls + 7, '\t') = '\0';
	snprintf(label, sizeof(label), "gpp_v1&lt;...>: %s (run ", cls + 7);
	svg = slurp(w, "trajectory.svg", NULL);
	if (!strstr(svg, label))
		fail_msg("trajectory.svg lacks '%s'", label);
	free(svg);
	free(rec);
}

static void test_findings_nothing_to_draw(void **state)
{
	struct world *w = *state;

	input(w, "roofline", FIX "/hierarchical-kernel_abc.records.tsv");
	set(w, "mode", "fleet");
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "nothing to draw: no usable `fleet_gpu` record"));
	set(w, "mode", "gpu_history");
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "nothing to draw: no usable `gpu_night` record"));
}

/* ---- injection -------------------------------------------------------------- */

/* Names that try to end gnuplot's quoting and run a command, or send the
 * output elsewhere; `marker` is a file that must never appear. */
static const char *const evil[] = {
	"evil\"; system(\"touch %s\"); \"",
	"a\nset output '/etc/x'\nsystem('touch %s')",
	"b'; system('touch %s'); '",
	"`touch %s`",
	"c\\\"; system(\"touch %s\") #",
	"@x system(\"touch %s\") \\",
	"d\r\n!touch %s\n",
	"e\xff\xfe invalid utf-8 \"; system(\"touch %s\"); \"",
};
#define N_EVIL (sizeof(evil) / sizeof(evil[0]))

static void evil_name(char *out, size_t cap, size_t i, const char *marker)
{
	snprintf(out, cap, evil[i], marker);
}

/* A fixture file of points, roofs and trends with the evil names. */
static void write_evil(const struct world *w, const char *path, const char *marker)
{
	struct strbuf sb = STRBUF_INIT;
	char name[1024], lvl[32];
	FILE *f;

	strbuf_init(&sb);
	records_format(&sb, "roof", (const struct rl_field[]){ { "name", "fp64_fma" },
		{ "kind", "compute" }, { "value", "3.3e13" }, { "unit", "FLOP/s" }, { NULL, NULL } });
	evil_name(name, sizeof(name), 0, marker);
	records_format(&sb, "roof", (const struct rl_field[]){ { "name", name },
		{ "kind", "bandwidth" }, { "value", "2.9e12" }, { "unit", "B/s" }, { NULL, NULL } });
	for (size_t i = 0; i < N_EVIL; i++) {
		evil_name(name, sizeof(name), i, marker);
		for (int l = 0; l < 3; l++) {
			char ai[32], gf[32];

			snprintf(lvl, sizeof(lvl), "%s", gp_level_names[l]);
			snprintf(ai, sizeof(ai), "%g", 0.5 * (double)(i + 1) * (l + 1));
			snprintf(gf, sizeof(gf), "%g", 100.0 * (double)(i + 1));
			records_format(&sb, "point", (const struct rl_field[]){ { "kernel", name },
				{ "invocation", "all" }, { "precision", "fp64" }, { "level", lvl },
				{ "ai", ai }, { "gflops", gf }, { "gpu_name", name }, { "node", name },
				{ "series", name }, { NULL, NULL } });
		}
		records_format(&sb, "trend", (const struct rl_field[]){ { "kernel", "k" },
			{ "at", "2025-06-01T02:00:00Z" }, { "gflops", "100" }, { "ai_l1", "1" },
			{ "ai_l2", "2" }, { "ai_dram", "3" }, { "node", name }, { NULL, NULL } });
		snprintf(lvl, sizeof(lvl), "%zu", 80 + i);
		records_format(&sb, "fleet_gpu", (const struct rl_field[]){ { "node", name },
			{ "gpu_index", name }, { "gpu_uuid", name }, { "gpu_name", name },
			{ "ceiling", i < 2 ? name : "hbm_triad" }, { "value", "2.5e12" },
			{ "fleet_median", "2.9e12" }, { "pct_of_median", lvl },
			{ "flagged", i % 2 ? "1" : "0" }, { NULL, NULL } });
		snprintf(lvl, sizeof(lvl), "2025-06-0%zu", i + 1);
		records_format(&sb, "gpu_night", (const struct rl_field[]){ { "night", lvl },
			{ "ceiling", i < 2 ? name : "fp64_fma" }, { "unit", name }, { "value", "3e13" },
			{ "fleet_median", "3.1e13" }, { "fleet_min", "2.9e13" }, { "fleet_max", "3.2e13" },
			{ "fleet_n", "8" }, { "flagged", "1" }, { "gpu_uuid", name }, { "node", name },
			{ "gpu_index", name }, { "gpu_name", name }, { NULL, NULL } });
	}
	records_format(&sb, "trajectory_step", (const struct rl_field[]){ { "kernel", name },
		{ "from", name }, { "to", name }, { "class", name }, { "levels", name },
		{ "ai_change_pct", "1" }, { "gflops_change_pct", "-5" }, { NULL, NULL } });
	snprintf(name, sizeof(name), "%s/%s", w->dir, path);
	f = fopen(name, "w");
	assert_non_null(f);
	fwrite(sb.buf, 1, sb.len, f);
	fclose(f);
	strbuf_release(&sb);
}

/*
 * Nothing ran, nothing went elsewhere, and no name reached the script: the
 * names' payload names `marker`, and GPU names in a title lose their quotes
 * and slashes.
 */
static void assert_harmless(const struct world *w, const char *marker, const char *script)
{
	char *gp = slurp(w, script, NULL);
	struct stat st;

	assert_int_equal(stat(marker, &st), -1);
	assert_int_equal(stat("/etc/x", &st), -1);
	assert_null(strstr(gp, marker));
	assert_null(strstr(gp, "system(\""));
	assert_null(strstr(gp, "/etc/x"));
	assert_null(strchr(gp, '`'));
	free(gp);
}

static void test_injection_roofline(void **state)
{
	struct world *w = *state;
	char marker[600], tmarker[600], fixture[700], title[1400], want_title[1400];
	static const char *const want[] = { "1  system", "2  '/etc/x' system",
					    "evil system(touch ", "2.90 TB/s", NULL };
	struct stat st;
	char *key, *gp, roof[700];

	NEED_GNUPLOT();
	snprintf(marker, sizeof(marker), "%s/pwned", w->dir);
	snprintf(tmarker, sizeof(tmarker), "%s/title-pwned", w->dir);
	write_evil(w, "evil.records.tsv", marker);
	snprintf(fixture, sizeof(fixture), "%s/evil.records.tsv", w->dir);
	input(w, "evil\"; system(\"touch /tmp/x\")", fixture);
	/* the title is the pipeline author's: it is in the script, quoted */
	snprintf(title, sizeof(title), "t'; system('touch %s'); print '\n`touch %s`", tmarker, tmarker);
	snprintf(want_title, sizeof(want_title), "\nset title 't''; system(''touch %s''); print '' "
		 "''touch %s''' noenhanced", tmarker, tmarker);
	set(w, "title", title);
	set(w, "mode", "roofline");
	evil_name(roof, sizeof(roof), 0, marker); /* a roof with an evil name, drawn */
	set(w, "ceilings", roof);
	set(w, "ceilings", "fp64_fma");
	assert_int_equal(run(w), RL_OK);
	assert_png(w, "roofline.png");
	assert_svg_has(w, "roofline.svg", want);
	assert_quiet_gnuplot(w);
	assert_harmless(w, marker, "roofline.gp");
	assert_int_equal(stat(tmarker, &st), -1);
	gp = slurp(w, "roofline.gp", NULL);
	assert_non_null(strstr(gp, want_title));
	free(gp);
	assert_string_equal(emitted(w, "chart", 0, "kernels"), "8");
	key = slurp(w, "kernels.txt", NULL); /* full names, escaped as records */
	assert_non_null(strstr(key, "\ta\\nset output '/etc/x'\\nsystem('touch "));
	assert_int_equal(count_lines(key, "#"), 2);
	assert_int_equal(count_lines(key, ""), 2 + 8);
	free(key);
}

/* The names as series labels (the `series` field) and node names. */
static void test_injection_compare_history(void **state)
{
	struct world *w = *state;
	char marker[600], fixture[700];
	size_t n;

	NEED_GNUPLOT();
	snprintf(marker, sizeof(marker), "%s/pwned", w->dir);
	write_evil(w, "evil.records.tsv", marker);
	snprintf(fixture, sizeof(fixture), "%s/evil.records.tsv", w->dir);
	input(w, "evil", fixture);
	set(w, "mode", "compare");
	assert_int_equal(run(w), RL_OK);
	assert_png(w, "compare.png");
	assert_quiet_gnuplot(w);
	assert_harmless(w, marker, "compare.gp");
	assert_string_equal(emitted(w, "chart", 0, "series"), "8");
	w->h.n_records = 0;
	strbuf_reset(&w->h.records);
	set(w, "mode", "history"); /* a second value replaces the first */
	assert_int_equal(run(w), RL_OK);
	assert_quiet_gnuplot(w);
	assert_harmless(w, marker, "history.gp");
	free(slurp(w, "history.png", &n));
	assert_true(n > 1000);
	assert_string_equal(emitted(w, "chart", 0, "series"), "8");
	/* the findings' charts: node, GPU, ceiling, unit and kernel names */
	static const char *const modes[] = { "fleet", "gpu_history", "trajectory" };
	for (size_t m = 0; m < 3; m++) {
		char script[64], png[64];

		w->h.n_records = 0;
		strbuf_reset(&w->h.records);
		set(w, "mode", modes[m]);
		assert_int_equal(run(w), RL_OK);
		assert_quiet_gnuplot(w);
		snprintf(script, sizeof(script), "%s.gp", modes[m]);
		snprintf(png, sizeof(png), "%s.png", modes[m]);
		assert_harmless(w, marker, script);
		assert_png(w, png);
	}
}

/* ---- failures ------------------------------------------------------------------ */

static void test_gnuplot_missing(void **state)
{
	struct world *w = *state;

	input(w, "roofline", FIX "/hierarchical-kernel_abc.records.tsv");
	set(w, "gnuplot", "no-such-gnuplot-program");
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "program 'no-such-gnuplot-program' not found in PATH"));
	assert_int_equal(w->h.n_records, 0);
}

/* A gnuplot that fails: its stderr's first line is in the message. */
static void test_gnuplot_fails(void **state)
{
	struct world *w = *state;
	char prog[600];
	FILE *f;

	snprintf(prog, sizeof(prog), "%s/fake-gnuplot", w->dir);
	f = fopen(prog, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\necho '\"roofline.gp\" line 3: boom' >&2\necho second >&2\nexit 1\n", f);
	fclose(f);
	chmod(prog, 0755);
	input(w, "roofline", FIX "/hierarchical-kernel_abc.records.tsv");
	set(w, "gnuplot", prog);
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "gnuplot failed (exit 1) on roofline.gp: \"roofline.gp\" line 3: boom\n"));
	assert_int_equal(w->h.n_records, 0);
	chmod(prog, 0644);
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "is not executable"));
}

static void test_nothing_to_draw(void **state)
{
	struct world *w = *state;

	input(w, "ceilings", "tests/fixtures/ert/h100-ert-records.tsv");
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "nothing to draw: no usable `point` record"));
}

static void test_bad_options(void **state)
{
	struct world *w = *state;

	set(w, "mode", "pie");
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "mode: unknown 'pie'"));
	set(w, "mode", "auto");
	set(w, "formats", "gif");
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "formats: unknown item 'gif' (expected png or svg)"));
}

static void test_bad_ranges(void **state)
{
	struct world *w = *state;

	set(w, "xmin", "10");
	set(w, "xmax", "1");
	assert_int_equal(run(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "xmin/xmax: need 0 (automatic) or 0 < min < max"));
}

/* Axis overrides and a precision filter reach the script. */
static void test_overrides(void **state)
{
	struct world *w = *state;
	char *gp;

	NEED_GNUPLOT();
	input(w, "roofline", FIX "/many-kernels.records.tsv");
	set(w, "precisions", "fp64");
	set(w, "xmin", "0.01");
	set(w, "xmax", "1e4");
	set(w, "ymin", "1");
	set(w, "ymax", "1e6");
	set(w, "levels", "dram");
	set(w, "formats", "png");
	assert_int_equal(run(w), RL_OK);
	gp = slurp(w, "roofline.gp", NULL);
	assert_non_null(strstr(gp, "set xrange [0.01:10000]"));
	assert_non_null(strstr(gp, "set yrange [1:1000000]"));
	assert_null(strstr(gp, "TFLOP/s, FP32"));
	assert_null(strstr(gp, "'L1 "));
	free(gp);
	assert_string_equal(emitted(w, "chart", 0, "points"), "13"); /* 50 kernels / 4 precisions, dram */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kernel_abc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_precisions_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tensor_dgemm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifty_kernels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compare_gpp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_fma, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_fma_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compare_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fleet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fleet_ceilings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fleet_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trajectory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_findings_nothing_to_draw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_injection_roofline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_injection_compare_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overrides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gnuplot_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gnuplot_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_to_draw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_ranges, setup, teardown),
	};
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	int rc;

	have_gnuplot = gp_exec_find("gnuplot", path, sizeof(path)) == 0;
	if (!have_gnuplot)
		fprintf(stderr, "test_gnuplot: gnuplot not found in PATH: the chart tests are "
			"skipped (apt-get install gnuplot-nox)\n");
	snprintf(tmp_root, sizeof(tmp_root), "%s/test_gnuplot.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(tmp_root)) {
		perror(tmp_root);
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmp_root);
	return rc;
}
