/*
 * test_hierarchical - plugins/hierarchical.c against a stand-in host that
 * serves records from files and keeps what the plugin emits in memory.
 *
 * Inputs are real: the ceilings ert and spec measured and derived on an H100
 * (tests/fixtures/ert/h100-{ert,spec}-records.tsv) and the kernel records
 * the ncu_import plugin made from the H100 captures (tests/fixtures/analysis,
 * README there).  Expected values are computed here, independently of the
 * plugin and of plugins/hierarchical/roofline_math.c: raw metric values are read from the
 * fixture text with strstr/strtod and put through the seeds' formulas.
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

#include "hierarchical.c"
#include "options.h"
#include "records.h"
#include "strbuf.h"
#include "stub_host.h"

#define ERT "tests/fixtures/ert/h100-ert-records.tsv"
#define SPEC "tests/fixtures/ert/h100-spec-records.tsv"
#define ABC "tests/fixtures/analysis/kernel_abc.records.tsv"
#define GSRB "tests/fixtures/analysis/gsrb.records.tsv"
#define GSRB2 "tests/fixtures/analysis/gsrb.both-defs.records.tsv"
#define DGEMM "tests/fixtures/analysis/dgemm.records.tsv"
#define NA_DRAM "tests/fixtures/analysis/kernel_abc.na-dram.records.tsv"
#define SASS(op) "sm__sass_thread_inst_executed_op_" op "_pred_on.sum"
/* tests/fixtures/tensor: the ncu plugin through roofline-job on an H100, and
 * ert on the same GPU (ERT_T: the GEMMs' GPU; ERT_T2: mixed-bf16's). */
#define TENSOR(f) "tests/fixtures/tensor/" f
#define ERT_T TENSOR("ert.records.tsv")
#define ERT_T2 TENSOR("ert-2.records.tsv")
#define KA "kernel_A("
#define KB "kernel_B("
#define KC "kernel_C("

struct world {
	struct stub_host h;
	char *tmp[8];            /* files a test wrote, removed at teardown */
	size_t n_tmp;
};

static char *last_found; /* what find() returned last; freed by the next */

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));

	/* no exit.tsv: nodes come from "step@node" names */
	stub_host_init(&w->h, ".", "/nonexistent");
	w->h.ctx.step_id = "roofline";
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	for (size_t i = 0; i < w->n_tmp; i++) {
		unlink(w->tmp[i]);
		free(w->tmp[i]);
	}
	stub_host_release(&w->h);
	free(last_found);
	last_found = NULL;
	free(w);
	return 0;
}

static void input(struct world *w, const char *step, const char *file)
{
	assert_int_equal(stub_host_add_input(&w->h, step, file), 0);
}

/* Run the plugin with "key=value" options (NULL-terminated). */
static enum rl_result run_opts(struct world *w, const char *const *opts)
{
	struct strbuf err = STRBUF_INIT;
	struct options *o = options_new(&rooflined_plugin);
	void *st = NULL;
	enum rl_result r = RL_FAIL;

	strbuf_init(&err);
	for (; opts && *opts; opts++) {
		char key[64];
		const char *eq = strchr(*opts, '=');

		snprintf(key, sizeof(key), "%.*s", (int)(eq - *opts), *opts);
		assert_int_equal(options_set(o, key, eq + 1, &err), 0);
	}
	assert_int_equal(options_finish(o, &err), 0);
	if (rooflined_plugin.init(&w->h.ctx, o->config, &st) == 0) {
		r = rooflined_plugin.run(&w->h.ctx, o->config, st);
		rooflined_plugin.fini(st);
	}
	options_free(o);
	strbuf_release(&err);
	return r;
}

#define RUN(w, ...) run_opts((w), (const char *const[]){ __VA_ARGS__, NULL })

/* Forget what earlier runs emitted and logged. */
static void reset(struct world *w)
{
	stub_host_reset(&w->h);
}

static bool logged(const struct world *w, const char *text)
{
	return strstr(w->h.log.buf, text) != NULL;
}

/* ---- reading what was emitted ---------------------------------------------- */

struct find {
	const char *kind, *pairs[8]; /* key, value prefix, ..., NULL */
	long want, seen;
	char *copy;
};

static int find_fn(void *arg, const char *kind, const struct rl_field *fields)
{
	struct find *f = arg;
	struct strbuf sb = STRBUF_INIT;

	if (strcmp(kind, f->kind) != 0)
		return 0;
	for (int i = 0; f->pairs[i]; i += 2) {
		const char *v = rl_field_get(fields, f->pairs[i]);

		if (!v || strncmp(v, f->pairs[i + 1], strlen(f->pairs[i + 1])) != 0)
			return 0;
	}
	if (f->seen++ != f->want)
		return 0;
	strbuf_init(&sb);
	strbuf_addch(&sb, '\n');
	for (; fields->key; fields++)
		strbuf_addf(&sb, "%s=%s\n", fields->key, fields->value);
	f->copy = strbuf_detach(&sb);
	return 1;
}

/* Scan the emitted records; the want-th match (-1: none) and the count. */
static long scan(struct world *w, struct find *f)
{
	stub_host_each_record(&w->h, NULL, find_fn, f);
	free(last_found);
	last_found = f->copy;
	return f->seen;
}

/* The index-th record of kind whose fields start with the given values,
 * as "\nkey=value\n..." (valid until the next find), or NULL. */
static char *find(struct world *w, const char *kind, long index, const char *k1,
		  const char *v1, const char *k2, const char *v2, const char *k3,
		  const char *v3)
{
	struct find f = { kind, { k1, v1, k2, v2, k3, v3 }, index, 0, NULL };

	scan(w, &f);
	return f.copy;
}

static long count(struct world *w, const char *kind, const char *k1, const char *v1,
		  const char *k2, const char *v2)
{
	struct find f = { kind, { k1, v1, k2, v2, NULL, NULL }, -1, 0, NULL };

	return scan(w, &f);
}

/* The aggregated point of kernel (name prefix), precision, level: the first
 * match, since the sums are emitted before any invocation's points. */
static char *point(struct world *w, const char *kernel, const char *prec,
		   const char *level)
{
	char *p = find(w, "point", 0, "kernel", kernel, "precision", prec, "level", level);

	assert_non_null(p);
	assert_non_null(strstr(p, "\ninvocation=all\n"));
	return p;
}

static const char *get(const char *rec, const char *key)
{
	static char buf[4096];
	char pat[256];
	const char *p;

	snprintf(pat, sizeof(pat), "\n%s=", key);
	if (!rec || !(p = strstr(rec, pat)))
		return NULL;
	p += strlen(pat);
	snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(p, "\n"), p);
	return buf;
}

static double num(const char *rec, const char *key)
{
	const char *v = get(rec, key);

	assert_non_null(v);
	return strtod(v, NULL);
}

#define assert_close(a, b) do { double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= 1e-12 * fabs(b_))) \
		fail_msg("%s = %.17g, want %s = %.17g", #a, a_, #b, b_); } while (0)

/* ---- reading the fixtures, naively ------------------------------------------ */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *text;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return text;
}

/* Sum of key's value over the lines of file that contain every `match`. */
static double raw_sum(const char *file, const char *m1, const char *m2, const char *key)
{
	char *text = slurp(file), *line, *save = NULL, pat[256];
	double sum = 0;
	int n = 0;

	snprintf(pat, sizeof(pat), "\t%s=", key);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p;

		if ((m1 && !strstr(line, m1)) || (m2 && !strstr(line, m2)) ||
		    !(p = strstr(line, pat)))
			continue;
		sum += strtod(p + strlen(pat), NULL);
		n++;
	}
	free(text);
	assert_true(n > 0);
	return sum;
}

static double raw(const char *file, const char *match, const char *key)
{
	return raw_sum(file, match, NULL, key);
}

/* An empirical ceiling of the ERT fixture, FLOP/s or B/s. */
static double ceiling(const char *file, const char *name)
{
	char m[64];

	snprintf(m, sizeof(m), "\tname=%s\t", name);
	return raw_sum(file, m, "ceiling\t", "value");
}

static double dp_flops(const char *file, const char *m1, const char *m2)
{
	return raw_sum(file, m1, m2, SASS("dadd")) + 2 * raw_sum(file, m1, m2, SASS("dfma")) +
	       raw_sum(file, m1, m2, SASS("dmul"));
}

/*
 * A copy of file, in a temporary file the teardown removes (its path), with
 * every line containing `drop` left out and, in the others, the first `from`
 * replaced by `to` (NULL: nothing).
 */
static const char *edited(struct world *w, const char *file, const char *drop,
			  const char *from, const char *to)
{
	char *text = slurp(file), *line, *save = NULL, path[] = "/tmp/test_hier.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	assert_non_null(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = from ? strstr(line, from) : NULL;

		if (drop && strstr(line, drop))
			continue;
		if (p)
			fprintf(f, "%.*s%s%s\n", (int)(p - line), line, to, p + strlen(from));
		else
			fprintf(f, "%s\n", line);
	}
	fclose(f);
	free(text);
	w->tmp[w->n_tmp] = strdup(path);
	return w->tmp[w->n_tmp++];
}

/* ---- kernel_abc: the seeds' three verdicts ------------------------------------ */

static void test_kernel_abc(void **state)
{
	struct world *w = *state;
	double peak = ceiling(ERT, "fp64_fma"), bw[3] = { ceiling(ERT, "l1"),
		ceiling(ERT, "l2"), ceiling(ERT, "hbm_read") };
	static const char *const bytes[3] = { "l1tex__t_bytes.sum", "lts__t_bytes.sum",
					      "dram__bytes.sum" };
	static const char *const level[3] = { "l1", "l2", "dram" };
	double flops = dp_flops(ABC, KA, NULL), t = raw(ABC, KA, "gpu__time_duration.sum") * 1e-9;
	char *p;

	input(w, "ceilings", ERT);
	input(w, "spec", SPEC);
	input(w, "profile", ABC);
	assert_int_equal(run_opts(w, NULL), RL_OK);
	/* kernel_A: 2^20 threads x 10000 DADD, 8 bytes stored per thread */
	assert_close(flops, 1048576.0 * 10000);
	for (int lv = 0; lv < 3; lv++) {
		double ai = flops / raw(ABC, KA, bytes[lv]);

		p = point(w, KA, "fp64", level[lv]);
		assert_close(num(p, "flops"), flops);
		assert_close(num(p, "ai"), ai);
		assert_close(num(p, "time_s"), t);
		assert_close(num(p, "gflops"), flops / t / 1e9);
		assert_close(num(p, "roof_gflops"), fmin(peak, ai * bw[lv]) / 1e9);
		assert_string_equal(get(p, "verdict"), "compute-bound");
		assert_string_equal(get(p, "bound_level"), "compute");
		assert_string_equal(get(p, "bound_ceiling"), "fp64_fma");
		assert_close(num(p, "pct_of_bound"), flops / t / peak * 100);
	}
	p = point(w, KA, "fp64", "l1");
	assert_close(num(p, "ai"), 1250); /* the README's design value */
	assert_string_equal(get(p, "alpha"), "0");
	/* pure adds: the partial-FMA ceiling is half the FMA peak, and kernel_A
	 * nearly reaches it (its real roof, the DADD rate) */
	assert_close(num(p, "partial_fma_gflops"), peak / 2 / 1e9);
	assert_true(num(p, "pct_of_partial_fma") > 90 && num(p, "pct_of_partial_fma") < 100);
	assert_true(num(p, "pct_of_bound") > 45 && num(p, "pct_of_bound") < 50);
	assert_string_equal(get(p, "compute_method"), "empirical");
	assert_string_equal(get(p, "bandwidth_ceiling"), "l1");
	assert_string_equal(get(p, "byte_definition"), "nersc");
	assert_string_equal(get(p, "time_source"), "duration");
	assert_string_equal(get(p, "primary"), "1");
	assert_string_equal(get(p, "gpu_uuid"), "GPU-b329a22d-4f86-4ca9-ab8f-933e76bf2b4f");
	assert_null(get(p, "caveat"));
	/* kernel_B: same AI, one 64-thread block per SM: under 10 % of its roof */
	p = point(w, KB, "fp64", "l1");
	assert_close(num(p, "ai"), 1250);
	assert_string_equal(get(p, "verdict"), "latency-bound");
	assert_true(num(p, "pct_of_bound") < 10);
	assert_close(num(p, "gflops"), dp_flops(ABC, KB, NULL) /
		     (raw(ABC, KB, "gpu__time_duration.sum") * 1e-9) / 1e9);
	/* kernel_C: strided, one add per 16 requested bytes: DRAM binds */
	flops = dp_flops(ABC, KC, NULL);
	for (int lv = 0; lv < 3; lv++) {
		p = point(w, KC, "fp64", level[lv]);
		assert_string_equal(get(p, "verdict"), "bandwidth-bound");
		assert_string_equal(get(p, "bound_level"), "dram");
		assert_string_equal(get(p, "bound_ceiling"), "hbm_read");
	}
	p = point(w, KC, "fp64", "dram");
	assert_close(num(p, "ai"), flops / raw(ABC, KC, "dram__bytes.sum"));
	assert_close(num(p, "roof_gflops"), num(p, "ai") * bw[2] / 1e9);
	assert_true(num(p, "pct_of_roof") > 90);
	/* its one HFMA2.MMA per thread: an fp16 point, flagged */
	p = point(w, KC, "fp16", "dram");
	assert_close(num(p, "flops"), 2 * raw(ABC, KC, SASS("hfma")));
	assert_string_equal(get(p, "caveat"), "hfma2.mma");
	assert_string_equal(get(p, "primary"), "0");
	assert_true(logged(w, "HFMA2.MMA"));
	/* points: A and B fp64 + all, C fp64 + fp16 + all; three levels each */
	assert_int_equal(count(w, "point", NULL, NULL, NULL, NULL), 21);
	assert_int_equal(count(w, "point", "precision", "fp32", NULL, NULL), 0);
	assert_int_equal(count(w, "roof", NULL, NULL, NULL, NULL), 7);
	p = find(w, "roof", 0, "name", "hbm_read", NULL, NULL, NULL, NULL);
	assert_close(num(p, "value"), bw[2] / 1e9);
	assert_string_equal(get(p, "unit"), "GB/s");
	assert_string_equal(get(p, "level"), "dram");
	p = find(w, "roof", 0, "name", "fp64_add", NULL, NULL, NULL, NULL);
	assert_string_equal(get(p, "role"), "no_fma");
	assert_string_equal(get(p, "unit"), "GFLOP/s");
	assert_close(num(p, "value"), ceiling(ERT, "fp64_add") / 1e9);
	/* kernel_C moves DRAM bytes faster than the triad ceiling: over 100 %
	 * of that roof (docs/analysis.md: why hbm_read is the default) */
	reset(w);
	assert_int_equal(RUN(w, "dram_ceilings=hbm_triad"), RL_OK);
	p = point(w, KC, "fp64", "dram");
	assert_string_equal(get(p, "bound_ceiling"), "hbm_triad");
	assert_close(num(p, "bandwidth_gbs"), ceiling(ERT, "hbm_triad") / 1e9);
	assert_true(num(p, "pct_of_roof") > 100);
}

/* ---- GSRB: sums over invocations, the FMA ratio, the seeds' FLOP ratio ----------- */

static void test_gsrb(void **state)
{
	struct world *w = *state;
	static const char *const names[3] = { "GSRB_FP(", "GSRB_BRANCH(", "GSRB_STRIDE2(" };
	double f[3];

	input(w, "ceilings", ERT);
	input(w, "profile", GSRB);
	assert_int_equal(RUN(w, "precisions=fp64"), RL_OK);
	for (int i = 0; i < 3; i++) {
		const char *n = names[i];
		double t = raw(GSRB, n, "gpu__time_duration.sum") * 1e-9;
		double add = raw(GSRB, n, SASS("dadd")), mul = raw(GSRB, n, SASS("dmul"));
		double fma = raw(GSRB, n, SASS("dfma"));
		char *p = point(w, n, "fp64", "dram");

		f[i] = dp_flops(GSRB, n, NULL);
		assert_string_equal(get(p, "invocations"), "6");
		assert_close(num(p, "flops"), f[i]);
		assert_close(num(p, "time_s"), t);
		assert_close(num(p, "ai"), f[i] / raw(GSRB, n, "dram__bytes.sum"));
		assert_close(num(p, "gflops"), f[i] / t / 1e9);
		assert_close(num(p, "alpha"), fma / (fma + add + mul));
		assert_string_equal(get(p, "verdict"), "bandwidth-bound");
		assert_string_equal(get(p, "bound_level"), "dram");
	}
	/* slides 70-71: BRANCH does about half of FP's FLOPs */
	assert_true(fabs(f[1] / f[0] - 0.483) < 0.005);
	assert_int_equal(count(w, "point", NULL, NULL, NULL, NULL), 9);
}

/* ---- the FMA ratio: the seeds' GPP figures ------------------------------------ */

static void test_fma_ratio(void **state)
{
	struct world *w = *state;
	char *p;

	/* SC20's GPP alpha, 51.9 %, gives 75.95 % of the FMA peak (76 % x 6.7 =
	 * 5.1 TFLOP/s on the V100); here kernel_A's record with 519 FMA per 481
	 * ADD (test_roofline_math checks the arithmetic itself) */
	input(w, "profile", edited(w, ABC, NULL, SASS("dadd") "=10485760000",
				    SASS("dadd") "=481000000"));
	w->h.in[0].path = edited(w, w->h.in[0].path, NULL, SASS("dfma") "=0",
				 SASS("dfma") "=519000000");
	input(w, "ceilings", ERT);
	assert_int_equal(RUN(w, "precisions=fp64"), RL_OK);
	p = point(w, KA, "fp64", "l1");
	assert_close(num(p, "flops"), 481e6 + 2 * 519e6);
	assert_close(num(p, "alpha"), 0.519);
	assert_close(num(p, "partial_fma_gflops") / num(p, "compute_gflops"), 0.7595);
}

/* ---- missing metrics: warned, left out, never made up --------------------------- */

static void test_missing_metrics(void **state)
{
	struct world *w = *state;

	/* the bad capture with kernel_B's dram__bytes.sum = n/a */
	input(w, "ceilings", ERT);
	input(w, "profile", NA_DRAM);
	assert_int_equal(run_opts(w, NULL), RL_OK);
	assert_true(logged(w, "kernel 'kernel_B(double *, long, double)': DRAM left out: "
			   "'dram__bytes.sum' is missing in 1 of 1 invocations"));
	assert_int_equal(count(w, "point", "kernel", KB, "level", "dram"), 0);
	assert_int_equal(count(w, "point", "kernel", KB, "level", "l1"), 2);
	assert_int_equal(count(w, "point", "kernel", KA, "level", "dram"), 2);
	/* kernel_A's DFMA listed missing and absent: no fp64 point, and no
	 * combined point that would be short of it */
	w->h.in[1].path = edited(w, ABC, NULL, "\t" SASS("dfma") "=0\t", "\t");
	w->h.in[1].path = edited(w, w->h.in[1].path, NULL, "\tmissing=",
				 "\tmissing=" SASS("dfma"));
	reset(w);
	assert_int_equal(run_opts(w, NULL), RL_OK);
	assert_true(logged(w, "kernel 'kernel_A(double *, long, double)': fp64 left out: '"
			   SASS("dfma") "' is missing in 1 of 1 invocations"));
	assert_int_equal(count(w, "point", "kernel", KA, NULL, NULL), 0);
	/* kernel_C lost it too: its fp16 points stay, not its combined one */
	assert_int_equal(count(w, "point", "kernel", KC, "precision", "all"), 0);
	assert_int_equal(count(w, "point", "kernel", KC, "precision", "fp16"), 3);
}

static void test_missing_time(void **state)
{
	struct world *w = *state;
	char *p;
	double t = raw(ABC, KA, "sm__cycles_elapsed.avg") /
		   raw(ABC, KA, "sm__cycles_elapsed.avg.per_second");

	input(w, "ceilings", ERT);
	input(w, "profile", edited(w, ABC, NULL, "\tgpu__time_duration.sum=657504\t", "\t"));
	assert_int_equal(run_opts(w, NULL), RL_OK);
	/* NERSC's time, cycles / rate, stands in for the missing duration */
	p = point(w, KA, "fp64", "l1");
	assert_string_equal(get(p, "time_source"), "cycles");
	assert_close(num(p, "time_s"), t);
	assert_close(num(p, "gflops"), dp_flops(ABC, KA, NULL) / t / 1e9);
	/* neither: the kernel is left out, by name */
	w->h.in[1].path = edited(w, w->h.in[1].path, NULL, "\tsm__cycles_elapsed.avg=", "\tx=");
	reset(w);
	assert_int_equal(run_opts(w, NULL), RL_OK);
	assert_true(logged(w, "kernel 'kernel_A(double *, long, double)': left out: 1 of 1 "
			   "invocations have no time"));
	assert_int_equal(count(w, "point", "kernel", KA, NULL, NULL), 0);
	assert_int_equal(count(w, "point", "kernel", KC, NULL, NULL), 9);
}

/* ---- ceilings: missing, fallback, choice ------------------------------------------ */

static void test_missing_ceilings(void **state)
{
	struct world *w = *state;
	char *p;

	/* spec has no L2 ceiling (the L2 clock is not a device attribute) */
	input(w, "spec", SPEC);
	input(w, "profile", ABC);
	assert_int_equal(run_opts(w, NULL), RL_FAIL);
	assert_true(logged(w, "missing ceilings: L2 bandwidth (l2) for GPU 0 "
			   "'NVIDIA H100 80GB HBM3' (GPU-b329a22d-4f86-4ca9-ab8f-933e76bf2b4f) "
			   "on node '?'"));
	assert_true(logged(w, "missing_ceilings: skip"));
	assert_int_equal(w->h.n_records, 0);
	assert_int_equal(RUN(w, "missing_ceilings=skip"), RL_OK);
	assert_int_equal(count(w, "point", "level", "l2", NULL, NULL), 0);
	p = point(w, KC, "fp64", "dram");
	assert_string_equal(get(p, "bandwidth_method"), "theoretical");
	assert_close(num(p, "bandwidth_gbs"), 3352.32);
	/* no fp16 ceiling, and kernel_C has fp16 work */
	w->h.in[0] = (struct stub_input){ "ceilings", edited(w, ERT, "\tname=fp16_fma\t", NULL, NULL) };
	assert_int_equal(run_opts(w, NULL), RL_FAIL);
	assert_true(logged(w, "fp16 compute (fp16_fma)"));
	/* ... which only an unselected precision would need */
	reset(w);
	assert_int_equal(RUN(w, "precisions=fp64", "missing_ceilings=skip"), RL_OK);
	assert_int_equal(count(w, "roof", "name", "fp16", NULL, NULL), 0);
	assert_false(logged(w, "no ceiling for"));
	/* no ceilings at all; no kernels at all */
	w->h.n_in = 0;
	input(w, "profile", ABC);
	assert_int_equal(run_opts(w, NULL), RL_FAIL);
	assert_true(logged(w, "no ceiling records in the inputs"));
	w->h.in[0] = (struct stub_input){ "ceilings", ERT };
	assert_int_equal(run_opts(w, NULL), RL_FAIL);
	assert_true(logged(w, "no kernel records in the inputs"));
}

static void test_theoretical_fallback(void **state)
{
	struct world *w = *state;
	char *p;

	input(w, "ceilings", edited(w, ERT, "\tname=hbm_", NULL, NULL));
	input(w, "spec", SPEC);
	input(w, "profile", ABC);
	assert_int_equal(run_opts(w, NULL), RL_OK);
	p = point(w, KC, "fp64", "dram");
	assert_string_equal(get(p, "bandwidth_ceiling"), "hbm_read");
	assert_string_equal(get(p, "bandwidth_method"), "theoretical");
	assert_string_equal(get(p, "compute_method"), "empirical");
	p = point(w, KC, "fp64", "l1");
	assert_string_equal(get(p, "bandwidth_method"), "empirical");
	/* theoretical first, Nsight Compute's way */
	reset(w);
	assert_int_equal(RUN(w, "methods=theoretical,empirical"), RL_OK);
	p = point(w, KA, "fp64", "l1");
	assert_close(num(p, "compute_gflops"), 33454.08);
	assert_close(num(p, "bandwidth_gbs"), 33454.08);
	p = point(w, KA, "fp64", "l2"); /* no theoretical L2: the measured one */
	assert_string_equal(get(p, "bandwidth_method"), "empirical");
}

static void test_nodes(void **state)
{
	struct world *w = *state;
	char *p;

	input(w, "ceilings@n1", ERT);
	input(w, "profile@n2", ABC);
	assert_int_equal(run_opts(w, NULL), RL_FAIL);
	assert_true(logged(w, "no ceilings for GPU 0 'NVIDIA H100 80GB HBM3' on node 'n2'"));
	assert_true(logged(w, "the needed steps measured: GPU 0 'NVIDIA H100 80GB HBM3' "
			   "(GPU-b329a22d-4f86-4ca9-ab8f-933e76bf2b4f) on node 'n1'"));
	assert_int_equal(RUN(w, "same_node=false"), RL_OK);
	p = point(w, KA, "fp64", "l1");
	assert_string_equal(get(p, "node"), "n2");
	w->h.in[1].step = "profile@n1";
	reset(w);
	assert_int_equal(run_opts(w, NULL), RL_OK);
	/* ceilings of another GPU model only */
	w->h.in[0].path = edited(w, ERT, NULL, "gpu_name=NVIDIA H100 80GB HBM3",
				 "gpu_name=NVIDIA A100-SXM4-80GB");
	assert_int_equal(RUN(w, "same_node=false"), RL_FAIL);
	assert_true(logged(w, "no ceilings for GPU 0 'NVIDIA H100 80GB HBM3' on node 'n1', "
			   "where kernel 'kernel_A(double *, long, double)' ran (and 2 other "
			   "kernels); the needed steps measured: GPU 0 'NVIDIA A100-SXM4-80GB'"));
}

/* Ceilings of one H100, a profile of another of the same node, both its
 * job's CUDA device 0 (two Slurm jobs on a 2-GPU node, seen on the GPU
 * machine): the message names both UUIDs, not twice "GPU 0 ... on node n1";
 * same_node=false takes the other H100's ceilings, as it says. */
static void test_other_gpu(void **state)
{
	struct world *w = *state;
	char *p;

	input(w, "ceilings@n1", ERT);
	input(w, "profile@n1", edited(w, ABC, NULL, "\tgpu_index=0",
				     "\tgpu_index=0\tgpu_uuid=GPU-7cd69a69-1f3d-32e1-9e8e-d34d8b1e49ab"));
	assert_int_equal(run_opts(w, NULL), RL_FAIL);
	assert_true(logged(w, "no ceilings for GPU 0 'NVIDIA H100 80GB HBM3' "
			   "(GPU-7cd69a69-1f3d-32e1-9e8e-d34d8b1e49ab) on node 'n1'"));
	assert_true(logged(w, "the needed steps measured: GPU 0 'NVIDIA H100 80GB HBM3' "
			   "(GPU-b329a22d-4f86-4ca9-ab8f-933e76bf2b4f) on node 'n1'"));
	reset(w);
	assert_int_equal(RUN(w, "same_node=false"), RL_OK);
	p = point(w, KA, "fp64", "l1");
	assert_non_null(p);
	assert_string_equal(get(p, "node"), "n1");
}

/* ---- per invocation, byte definitions, tensor work ------------------------------ */

static void test_invocations(void **state)
{
	struct world *w = *state;
	char *p;

	input(w, "ceilings", ERT);
	input(w, "profile", GSRB);
	assert_int_equal(RUN(w, "invocations=true"), RL_OK);
	/* 18 launches and 3 kernels, fp64 + all, three levels */
	assert_int_equal(count(w, "point", NULL, NULL, NULL, NULL), (18 + 3) * 2 * 3);
	p = find(w, "point", 0, "invocation", "17", "precision", "fp64", "level", "dram");
	assert_non_null(p);
	assert_string_equal(get(p, "invocations"), "1");
	assert_close(num(p, "flops"), dp_flops(GSRB, "\tinvocation=17\t", NULL));
	assert_close(num(p, "ai"), num(p, "flops") /
		     raw(GSRB, "\tinvocation=17\t", "dram__bytes.sum"));
}

static void test_bytes_ncu(void **state)
{
	struct world *w = *state;
	const char *fp = "GSRB_FP(";
	double f = dp_flops(GSRB2, fp, NULL);
	char *p;

	input(w, "ceilings", ERT);
	input(w, "profile", GSRB2);
	assert_int_equal(RUN(w, "bytes=ncu", "precisions=fp64"), RL_OK);
	p = point(w, fp, "fp64", "l1");
	assert_close(num(p, "bytes"), 128 * raw(GSRB2, fp, "l1tex__lsu_writeback_active_mem_lgds.sum"));
	assert_close(num(p, "ai"), f / num(p, "bytes"));
	assert_string_equal(get(p, "byte_definition"), "ncu");
	p = point(w, fp, "fp64", "l2");
	assert_close(num(p, "bytes"), 32 * raw(GSRB2, fp, "lts__lts2xbar_cycles_active.sum"));
	p = point(w, fp, "fp64", "dram");
	assert_close(num(p, "bytes"), raw(GSRB2, fp, "dram__bytes.sum"));
	/* a capture without them: L1 and L2 left out, said so */
	w->h.in[1].path = ABC;
	reset(w);
	assert_int_equal(RUN(w, "bytes=ncu"), RL_OK);
	assert_true(logged(w, "L1 left out: 'l1tex__lsu_writeback_active_mem_lgds.sum' was "
			   "not collected (ncu step option extra: [bytes_l1_ncu])"));
	assert_int_equal(count(w, "point", "level", "l1", NULL, NULL), 0);
	assert_int_equal(count(w, "point", "level", "dram", NULL, NULL), 7);
}

static void test_tensor(void **state)
{
	struct world *w = *state;
	const char *g = "sm90_xmma_gemm";
	double tc = raw(DGEMM, g, "sm__ops_path_tensor_src_fp64.sum");
	double cuda = dp_flops(DGEMM, g, NULL);
	char *p;

	input(w, "ceilings", ERT);
	input(w, "profile", DGEMM);
	assert_int_equal(run_opts(w, NULL), RL_OK);
	assert_close(tc, 2.0 * 4096 * 4096 * 4096);
	p = point(w, g, "tc_fp64", "dram");
	assert_close(num(p, "flops"), tc); /* tensor work on its own */
	assert_string_equal(get(p, "compute_ceiling"), "tc_fp64");
	assert_string_equal(get(p, "verdict"), "compute-bound");
	assert_string_equal(get(p, "primary"), "1");
	assert_null(get(p, "alpha"));
	assert_null(get(p, "partial_fma_gflops"));
	p = point(w, g, "fp64", "dram");
	assert_close(num(p, "flops"), cuda); /* the epilogue: n^2 */
	assert_close(cuda, 4096.0 * 4096);
	assert_string_equal(get(p, "primary"), "0");
	p = point(w, g, "all", "dram");
	assert_close(num(p, "flops"), tc + cuda);
	assert_string_equal(get(p, "compute_ceiling"), "fp64_fma+tc_fp64");
	p = find(w, "roof", 0, "name", "tc_fp64", NULL, NULL, NULL, NULL);
	assert_string_equal(get(p, "role"), "peak");
}

/* A number the program printed, "key=value" in its output. */
static double printed(const char *file, const char *key)
{
	char *text = slurp(file), pat[64], *p;
	double v;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(text, pat);
	assert_non_null(p);
	v = strtod(p + strlen(pat), NULL);
	free(text);
	return v;
}

#define assert_within_pct(a, b, pct) do { double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= (pct) / 100.0 * fabs(b_))) \
		fail_msg("%s = %.17g, want %s = %.17g within %g %%", #a, a_, #b, b_, \
			 (double)(pct)); } while (0)

/* 2 m n k of the GEMM the program says it ran. */
static double gemm_flops(const char *program)
{
	return 2 * printed(program, "m") * printed(program, "n") * printed(program, "k");
}

/*
 * cuBLAS GEMMs, m = n = k = 4096, each through the ncu plugin with the
 * default set of the committed table: BF16 is counted (2 m n k within 1 %),
 * the other datapaths are not and the points say so (tensor_uncounted), or
 * a kernel with no counted FLOPs at all gets an `incomplete` point.
 */
static void test_tensor_gemm(void **state)
{
	struct world *w = *state;
	const char *left_out = "fp16,tf32,fp8,int8";
	char *p;

	input(w, "ceilings", ERT_T);
	input(w, "profile", TENSOR("gemm-bf16.records.tsv"));
	input(w, "profile2", TENSOR("gemm-fp16.records.tsv"));
	input(w, "profile3", TENSOR("gemm-int8.records.tsv"));
	input(w, "profile4", TENSOR("gemm-tf32.records.tsv"));
	assert_int_equal(run_opts(w, NULL), RL_OK);
	p = point(w, "nvjet_sm90_tss", "tc_bf16", "dram");
	assert_within_pct(num(p, "flops"), gemm_flops(TENSOR("gemm-bf16.program.txt")), 1);
	assert_close(num(p, "flops"), raw(TENSOR("gemm-bf16.records.tsv"), "nvjet",
					  "sm__ops_path_tensor_src_bf16_dst_fp32.sum"));
	assert_string_equal(get(p, "compute_ceiling"), "tc_bf16");
	assert_close(num(p, "compute_gflops") * 1e9, ceiling(ERT_T, "tc_bf16"));
	assert_string_equal(get(p, "primary"), "1");
	assert_string_equal(get(p, "tensor_uncounted"), left_out);
	assert_true(logged(w, "tensor datapaths fp16,tf32,fp8,int8 were not counted"));
	/* FP16 and INT8: nothing counted, never silently absent */
	assert_int_equal(count(w, "point", "kernel", "nvjet_sm90_hss", NULL, NULL), 1);
	p = find(w, "point", 0, "kernel", "nvjet_sm90_hss", NULL, NULL, NULL, NULL);
	assert_string_equal(get(p, "precision"), "tensor");
	assert_string_equal(get(p, "level"), "none");
	assert_string_equal(get(p, "verdict"), "incomplete");
	assert_string_equal(get(p, "primary"), "1");
	assert_string_equal(get(p, "tensor_uncounted"), left_out);
	assert_null(get(p, "flops"));
	assert_close(num(p, "time_s"), raw(TENSOR("gemm-fp16.records.tsv"), "nvjet",
					   "gpu__time_duration.sum") * 1e-9);
	/* TF32 and INT8: only their FP32 epilogues are counted, and flagged */
	p = point(w, "sm90_xmma_gemm_f32f32_tf32", "fp32", "dram");
	assert_string_equal(get(p, "primary"), "1");
	assert_string_equal(get(p, "tensor_uncounted"), left_out);
	assert_int_equal(count(w, "point", "kernel", "sm90_xmma_gemm_f32f32_tf32", "precision",
			       "tc_"), 0);
	p = point(w, "sm90_xmma_gemm_i8i32", "fp32", "dram");
	assert_string_equal(get(p, "primary"), "1");
	assert_string_equal(get(p, "tensor_uncounted"), left_out);
	assert_int_equal(count(w, "point", "kernel", "sm90_xmma_gemm_i8i32", "precision",
			       "tc_"), 0);
}

/* extra: [all] (9 passes): the FP16 GEMM counted, 2 m n k, nothing flagged. */
static void test_tensor_gemm_all(void **state)
{
	struct world *w = *state;
	char *p;

	input(w, "ceilings", ERT_T);
	input(w, "profile", TENSOR("gemm-fp16-all.records.tsv"));
	assert_int_equal(run_opts(w, NULL), RL_OK);
	p = point(w, "nvjet_sm90_hss", "tc_fp16", "dram");
	assert_within_pct(num(p, "flops"), gemm_flops(TENSOR("gemm-fp16-all.program.txt")), 1);
	assert_string_equal(get(p, "compute_ceiling"), "tc_fp16");
	assert_null(get(p, "tensor_uncounted"));
	assert_false(logged(w, "were not counted"));
}

/*
 * One kernel doing tensor (wmma) and CUDA-core (FFMA) work: two points, each
 * against its own roof, with the FLOPs the program's parameters give.
 */
static void check_mixed(struct world *w, const char *records, const char *program,
			const char *ert, const char *tc)
{
	double warps = printed(program, "blocks") * printed(program, "threads") / 32;
	double tc_flops = 2.0 * 16 * 16 * 16 * printed(program, "mma_iters") * warps;
	double ffma = 2.0 * 4 * printed(program, "ffma_iters") * warps * 32;
	char *p, *q;

	input(w, "ceilings", ert);
	input(w, "profile", records);
	assert_int_equal(run_opts(w, NULL), RL_OK);
	p = point(w, "", tc, "dram");
	assert_within_pct(num(p, "flops"), tc_flops, 1);
	assert_close(num(p, "flops"), tc_flops); /* exact, in fact */
	assert_string_equal(get(p, "compute_ceiling"), tc);
	assert_close(num(p, "compute_gflops") * 1e9, ceiling(ert, tc));
	assert_string_equal(get(p, "primary"), "1");
	q = strdup(p);
	p = point(w, "", "fp32", "dram");
	assert_within_pct(num(p, "flops"), ffma, 0.1); /* + a few set-up FADD/FMUL */
	assert_true(num(p, "flops") >= ffma);
	assert_string_equal(get(p, "compute_ceiling"), "fp32_fma");
	assert_close(num(p, "compute_gflops") * 1e9, ceiling(ert, "fp32_fma"));
	assert_true(num(q, "compute_gflops") > 10 * num(p, "compute_gflops")); /* apart */
	assert_close(num(p, "time_s"), num(q, "time_s")); /* one kernel */
	free(q);
}

static void test_tensor_mixed(void **state)
{
	struct world *w = *state;
	char *p;

	/* bf16, the default set: both points, flagged for the other datapaths */
	check_mixed(w, TENSOR("mixed-bf16.records.tsv"), TENSOR("mixed-bf16.program.txt"),
		    ERT_T2, "tc_bf16");
	p = point(w, "", "fp32", "dram");
	assert_string_equal(get(p, "tensor_uncounted"), "fp16,tf32,fp8,int8");
	/* fp16, extra: [all]: both points, complete */
	reset(w);
	stub_host_release(&w->h);
	stub_host_init(&w->h, ".", "/nonexistent");
	w->h.ctx.step_id = "roofline";
	check_mixed(w, TENSOR("mixed-all.records.tsv"), TENSOR("mixed-all.program.txt"),
		    ERT_T, "tc_fp16");
	p = point(w, "", "fp32", "dram");
	assert_null(get(p, "tensor_uncounted"));
	/* fp16, the default set: the tensor point cannot be had, and is said so */
	stub_host_release(&w->h);
	stub_host_init(&w->h, ".", "/nonexistent");
	w->h.ctx.step_id = "roofline";
	input(w, "ceilings", ERT_T);
	input(w, "profile", TENSOR("mixed.records.tsv"));
	assert_int_equal(run_opts(w, NULL), RL_OK);
	assert_int_equal(count(w, "point", "precision", "tc_", NULL, NULL), 0);
	p = point(w, "", "fp32", "dram");
	assert_string_equal(get(p, "tensor_uncounted"), "fp16,tf32,fp8,int8");
}

/*
 * Whether a kernel did tensor work: tensor-pipe instructions less the
 * HFMA2.MMA register moves (HFMA thread instructions / 32 when those are not
 * counted).  kernel_C's 524,288 tensor-pipe instructions are all such moves
 * (one HFMA2.MMA per warp): not flagged, although its capture (the 3-pass
 * set) lacks five datapaths; DGEMM's DMMA instructions are: flagged.
 */
static void test_tensor_witness(void **state)
{
	struct world *w = *state;
	double inst = raw(ABC, KC, "sm__inst_executed_pipe_tensor.sum");
	double hfma = raw(ABC, KC, SASS("hfma"));
	char *p;

	assert_true(inst > 0);
	assert_close(hfma / 32, inst);
	input(w, "ceilings", ERT);
	input(w, "profile", ABC);
	input(w, "profile2", DGEMM);
	assert_int_equal(run_opts(w, NULL), RL_OK);
	p = point(w, KC, "fp64", "dram");
	assert_null(get(p, "tensor_uncounted"));
	p = point(w, KA, "fp64", "dram");
	assert_null(get(p, "tensor_uncounted"));
	p = point(w, "sm90_xmma_gemm", "tc_fp64", "dram");
	assert_string_equal(get(p, "tensor_uncounted"), "fp16,bf16,tf32,fp8,int8");
}

/* Each kernel meets the ceilings of the GPU it ran on: same UUID. */
static void test_tensor_uuid(void **state)
{
	struct world *w = *state;
	char *p;

	/* only another H100's ceilings: no pairing by name when UUIDs differ */
	input(w, "ceilings", ERT_T2);
	input(w, "profile", TENSOR("gemm-bf16.records.tsv"));
	assert_int_equal(run_opts(w, NULL), RL_FAIL);
	assert_true(logged(w, "no ceilings for GPU 0 'NVIDIA H100 80GB HBM3'"));
	/* both GPUs' ceilings: each kernel takes its own GPU's */
	stub_host_release(&w->h);
	stub_host_init(&w->h, ".", "/nonexistent");
	w->h.ctx.step_id = "roofline";
	input(w, "ceilings", ERT_T2);
	input(w, "ceilings2", ERT_T);
	input(w, "profile", TENSOR("gemm-bf16.records.tsv"));
	input(w, "profile2", TENSOR("mixed-bf16.records.tsv"));
	assert_int_equal(run_opts(w, NULL), RL_OK);
	p = point(w, "nvjet", "tc_bf16", "dram");
	assert_string_equal(get(p, "gpu_uuid"), "GPU-5fea8746-c6b6-0783-8412-ebff582f2b45");
	assert_close(num(p, "compute_gflops") * 1e9, ceiling(ERT_T, "tc_bf16"));
	p = point(w, "void tensor_mixed", "tc_bf16", "dram");
	assert_string_equal(get(p, "gpu_uuid"), "GPU-9283688e-c067-d3d8-a7b3-faee9694f366");
	assert_close(num(p, "compute_gflops") * 1e9, ceiling(ERT_T2, "tc_bf16"));
	assert_true(ceiling(ERT_T, "tc_bf16") != ceiling(ERT_T2, "tc_bf16"));
}

/* MPI ranks (issue 24): each rank's kernels are points of their own, with
 * `rank`; rank_balance records per rank and over all flag the ranks whose
 * time is off the mean.  Rank 1 ran every kernel twice as long (its file
 * twice), so with a mean of 1.5 both ranks are 33 % off. */
static void test_ranks(void **state)
{
	struct world *w = *state;
	const char *r0 = edited(w, ABC, NULL, "\tgpu_index=0", "\tgpu_index=0\trank=0");
	const char *r1 = edited(w, ABC, NULL, "\tgpu_index=0", "\tgpu_index=0\trank=1");
	char *p;
	double t0, t1;

	input(w, "ceilings@n1", ERT);
	input(w, "profile@n1", r0);
	input(w, "profile2@n1", r1);
	assert_int_equal(run_opts(w, NULL), RL_OK);
	assert_string_equal(get(find(w, "point", 0, "kernel", KA, "rank", "0", "level", "l1"),
				"rank"), "0");
	assert_non_null(find(w, "point", 0, "kernel", KA, "rank", "1", "level", "l1"));
	/* equal ranks: balanced */
	assert_int_equal(count(w, "rank_balance", "kernel", KA, NULL, NULL), 3);
	p = find(w, "rank_balance", 0, "kernel", KA, "rank", "all", NULL, NULL);
	assert_string_equal(get(p, "ranks"), "2");
	assert_float_equal(num(p, "imbalance_pct"), 0, 1e-9);
	assert_string_equal(get(p, "imbalanced_ranks"), "");
	assert_false(logged(w, "load imbalance"));

	reset(w);
	input(w, "profile3@n1", r1);
	assert_int_equal(RUN(w, "imbalance_pct=10"), RL_OK);
	p = find(w, "rank_balance", 0, "kernel", KA, "rank", "0", NULL, NULL);
	t0 = num(p, "time_s");
	assert_string_equal(get(p, "imbalanced"), "1");
	assert_float_equal(num(p, "pct_of_mean"), 100.0 / 1.5, 1e-6);
	p = find(w, "rank_balance", 0, "kernel", KA, "rank", "1", NULL, NULL);
	t1 = num(p, "time_s");
	assert_float_equal(t1, 2 * t0, t0 * 1e-12);
	assert_string_equal(get(p, "invocations"), "2");
	p = find(w, "rank_balance", 0, "kernel", KA, "rank", "all", NULL, NULL);
	assert_float_equal(num(p, "imbalance_pct"), (2 / 1.5 - 1) * 100, 1e-6);
	assert_float_equal(num(p, "max_s"), t1, t1 * 1e-12);
	assert_string_equal(get(p, "imbalanced_ranks"), "0,1");
	assert_true(logged(w, "load imbalance in kernel 'kernel_A(double *, long, double)': rank(s) 0,1"));
	reset(w);
	assert_int_equal(RUN(w, "imbalance_pct=50"), RL_OK);
	p = find(w, "rank_balance", 0, "kernel", KA, "rank", "all", NULL, NULL);
	assert_string_equal(get(p, "imbalanced_ranks"), "");
}

static void test_bad_options(void **state)
{
	struct world *w = *state;

	input(w, "ceilings", ERT);
	input(w, "profile", ABC);
	assert_int_equal(RUN(w, "precisions=fp128"), RL_FAIL);
	assert_true(logged(w, "option 'precisions': unknown 'fp128'"));
	assert_int_equal(RUN(w, "bytes=cuda"), RL_FAIL);
	assert_true(logged(w, "option 'bytes': 'cuda' is neither nersc nor ncu"));
	assert_int_equal(RUN(w, "latency_pct=150"), RL_FAIL);
	assert_int_equal(w->h.n_records, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kernel_abc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gsrb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fma_ratio, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_metrics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_ceilings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_theoretical_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ranks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invocations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bytes_ncu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tensor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tensor_gemm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tensor_gemm_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tensor_mixed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tensor_uuid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tensor_witness, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
	};

	setenv("ROOFLINE_ETC", "etc", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
