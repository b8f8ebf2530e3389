/*
 * test_ert_parse.c - the ert plugin (plugins/ert.c, included here) against a
 * stand-in host: the real H100 output (tests/fixtures/ert/h100-quick.tsv)
 * replayed into records, the outputs of the versions that measure the L2
 * ceiling with trials (issue13/h100-quick.tsv, issue13/h100-run4-quick.tsv),
 * the failure paths (no GPU, no program, a failed result check, bad
 * options), and benchio's parser and runner.
 *
 * Expected values come from the fixture text, parsed here by the test's own
 * code, or from the formulas (spread = (max - min) / median * 100).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../plugins/ert.c"
#include "stub_host.h"

#define FIXTURE "tests/fixtures/ert/h100-quick.tsv"

/* The recording the fixture_* helpers read (FIXTURE unless a test says). */
static const char *fixture_path = FIXTURE;

struct fixture {
	struct stub_host h;
	struct ert_config cfg;
	char dir[64];
	char *prec_default[4], *lvl_default[4];
};

static int setup(void **state)
{
	static char *prec[] = { "fp64", "fp32", "fp16", "tensor" };
	static char *lvl[] = { "hbm", "l2", "l1", "shared" };
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_ert_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	stub_host_init(&f->h, f->dir, f->dir);
	f->h.ctx.step_id = "ceilings";
	f->h.ctx.node = "testnode";
	f->cfg.precisions = (struct rl_strlist){ 4, prec };
	f->cfg.levels = (struct rl_strlist){ 4, lvl };
	f->cfg.timeout_s = 60;
	f->cfg.plateau_tol_pct = 10;
	f->cfg.plateau_min_points = 3;
	/* a replay plays the Slurm job's GPUs: none here */
	unsetenv("SLURM_JOB_GPUS");
	unsetenv("CUDA_VISIBLE_DEVICES");
	fixture_path = FIXTURE;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[256];
	static const char *const files[] = { "ert-raw.tsv", "ert-stderr.log",
					     "fake-bench", "ert-p2p.tsv",
					     "ert-p2p-stderr.log", "topo.txt",
					     "args.txt", "long-sweep.tsv", NULL };

	for (int i = 0; files[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", f->dir, files[i]);
		unlink(path);
	}
	rmdir(f->dir);
	stub_host_release(&f->h);
	free(f);
	return 0;
}

/* Run init + run + fini as the host would. */
static enum rl_result run_plugin(struct fixture *f)
{
	void *st = NULL;
	enum rl_result r;

	if (ert_init(&f->h.ctx, &f->cfg, &st) < 0)
		return (enum rl_result)-1;
	r = ert_run(&f->h.ctx, &f->cfg, st);
	ert_fini(st);
	return r;
}

/* ---- helpers reading the fixture and the saved records ---- */

/* Value of key in a "\tk=v\tk=v" text or line; into buf. */
static const char *get(const char *text, const char *key, char *buf,
		       size_t size)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\t%s=", key);
	p = strstr(text, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	snprintf(buf, size, "%.*s", (int)strcspn(p, "\t\n"), p);
	return buf;
}

static double getd(const char *text, const char *key)
{
	char buf[128];

	assert_non_null(get(text, key, buf, sizeof(buf)));
	return strtod(buf, NULL);
}

/* Call fn(line, arg) on each fixture line of `type`, in file order, until
 * it returns nonzero; that value, or 0. */
static int fixture_each(const char *type, int (*fn)(const char *, void *),
			void *arg)
{
	FILE *fp = fopen(fixture_path, "r");
	char line[8192];
	int rc = 0;

	assert_non_null(fp);
	while (!rc && fgets(line, sizeof(line), fp))
		if (!strncmp(line, type, strlen(type)) &&
		    line[strlen(type)] == '\t')
			rc = fn(line, arg);
	fclose(fp);
	return rc;
}

struct line_pick {
	const char *name; /* NULL: any */
	char *out;
	size_t size;
};

static int pick_line(const char *line, void *arg)
{
	struct line_pick *p = arg;
	char buf[128];

	if (p->name && !(get(line, "name", buf, sizeof(buf)) &&
			 !strcmp(buf, p->name)))
		return 0;
	snprintf(p->out, p->size, "%s", line);
	return 1;
}

/* The fixture line of `type` whose name (or nothing) matches. */
static int fixture_line(const char *type, const char *name, char *out,
			size_t size)
{
	struct line_pick p = { name, out, size };

	return fixture_each(type, pick_line, &p);
}

static int count_line(const char *line, void *arg)
{
	(void)line;
	++*(size_t *)arg;
	return 0;
}

static size_t fixture_count(const char *type)
{
	size_t n = 0;

	fixture_each(type, count_line, &n);
	return n;
}

/* An emitted record of the kind asked for, as "\tkey=value" text. */
struct named {
	const char *name;
	char text[8192];
};

static int named_fn(void *arg, const char *kind, const struct rl_field *fields)
{
	struct named *n = arg;
	char buf[64];

	(void)kind;
	n->text[0] = '\0';
	for (; fields->key; fields++)
		snprintf(n->text + strlen(n->text), sizeof(n->text) - strlen(n->text),
			 "\t%s=%s", fields->key, fields->value);
	return get(n->text, "name", buf, sizeof(buf)) && !strcmp(buf, n->name);
}

/* The record of kind named `name` (valid until the next call), or NULL. */
static const char *find_rec(struct stub_host *h, const char *kind,
			    const char *name)
{
	static struct named n;

	n.name = name;
	return stub_host_each_record(h, kind, named_fn, &n) == 1 ? n.text : NULL;
}

/* ---- replaying the real H100 output ---- */

struct sweep_join {
	const char *ser, *key;
	char *out;
	size_t size, n;
};

static int join_sweep(const char *line, void *arg)
{
	struct sweep_join *j = arg;
	char buf[128];
	size_t used = strlen(j->out);

	if (get(line, "series", buf, sizeof(buf)) && !strcmp(buf, j->ser))
		snprintf(j->out + used, j->size - used, "%s%s", j->n++ ? "," : "",
			 get(line, j->key, buf, sizeof(buf)) ? buf : "");
	return 0;
}

/* The fixture's sweep lines of series ser: how many, and the values of key
 * on them comma-separated in out (their order in the file). */
static size_t fixture_sweep(const char *ser, const char *key, char *out,
			    size_t size)
{
	struct sweep_join j = { ser, key, out, size, 0 };

	out[0] = '\0';
	fixture_each("sweep", join_sweep, &j);
	return j.n;
}

/* Each emitted sweep record holds its series' fixture lines, in order. */
static void check_sweeps(struct stub_host *h)
{
	static const char *const keys[] = { "ws_bytes", "level_guess", "value",
					     "min", "max", "trials" };
	char want[8192], n[32];
	size_t points = 0;

	/* h100-quick.tsv has one GPU and two series, ca and cg */
	assert_int_equal(stub_host_count(h, "sweep"), 2);
	for (long i = 0; i < 2; i++) {
		char *rec = stub_host_record(h, "sweep", i);
		char ser[16];

		assert_non_null(rec);
		snprintf(ser, sizeof(ser), "%s", stub_host_get(rec, "series"));
		assert_string_equal(ser, i == 0 ? "ca" : "cg");
		snprintf(n, sizeof(n), "%zu", fixture_sweep(ser, "ws_bytes", want,
							   sizeof(want)));
		assert_string_equal(stub_host_get(rec, "points"), n);
		points += strtoul(n, NULL, 10);
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			fixture_sweep(ser, keys[k], want, sizeof(want));
			assert_string_equal(stub_host_get(rec, keys[k]), want);
		}
		assert_string_equal(stub_host_get(rec, "unit"), "B/s");
		free(rec);
	}
	assert_int_equal(points, fixture_count("sweep"));
}

static void test_replay_h100(void **state)
{
	struct fixture *f = *state;
	char line[8192], attr[8192], buf[256], want[512];
	const char *r;

	f->cfg.replay = FIXTURE;
	assert_int_equal(run_plugin(f), RL_OK);
	/* one record per ceiling line, plus the L2 plateau; one per sweep
	 * series, with every one of its lines */
	assert_int_equal(stub_host_count(&f->h, "ceiling"),
			 fixture_count("ceiling") + 1);
	check_sweeps(&f->h);
	assert_true(fixture_line("attr", NULL, attr, sizeof(attr)));

	/* fp64_fma: the numbers are the bench's, the spread is recomputed */
	assert_true(fixture_line("ceiling", "fp64_fma", line, sizeof(line)));
	r = find_rec(&f->h, "ceiling", "fp64_fma");
	assert_non_null(r);
	assert_true(getd(r, "value") == getd(line, "median"));
	assert_true(getd(r, "min") == getd(line, "min"));
	assert_true(getd(r, "max") == getd(line, "max"));
	assert_true(fabs(getd(r, "spread_pct") -
			 (getd(line, "max") - getd(line, "min")) /
				 getd(line, "median") * 100) < 1e-9);
	assert_string_equal(get(r, "method", buf, sizeof(buf)), "empirical");
	assert_string_equal(get(r, "unit", buf, sizeof(buf)), "FLOP/s");
	/* no Slurm job here: the recording's own GPU 0, as a replay */
	snprintf(want, sizeof(want), "GPU-replay-testnode-0-of-%s",
		 get(attr, "uuid", line, sizeof(line)));
	assert_string_equal(get(r, "gpu_uuid", buf, sizeof(buf)), want);
	assert_string_equal(get(r, "gpu_index", buf, sizeof(buf)), "0");
	assert_non_null(strstr(get(r, "synthetic", buf, sizeof(buf)),
			       "replay of "));
	assert_string_equal(get(r, "cc", buf, sizeof(buf)), "9.0");
	assert_non_null(get(r, "geometry", buf, sizeof(buf)));
	assert_null(get(r, "ws_min_bytes", buf, sizeof(buf)));

	/* int8 counts OP/s */
	r = find_rec(&f->h, "ceiling", "tc_int8");
	assert_non_null(r);
	assert_string_equal(get(r, "unit", buf, sizeof(buf)), "OP/s");

	/* l2: from the sweep, a range inside the L2 */
	r = find_rec(&f->h, "ceiling", "l2");
	assert_non_null(r);
	assert_string_equal(get(r, "source", buf, sizeof(buf)), "sweep");
	assert_true(getd(r, "ws_min_bytes") < getd(r, "ws_max_bytes"));
	assert_true(getd(r, "ws_max_bytes") <= getd(attr, "l2_bytes"));
	assert_true(getd(r, "min") <= getd(r, "value"));
	assert_true(getd(r, "value") <= getd(r, "max"));

	/* hbm figures carry the HBM plateau's range, above the L2 */
	r = find_rec(&f->h, "ceiling", "hbm_triad");
	assert_non_null(r);
	assert_true(getd(r, "ws_min_bytes") > getd(attr, "l2_bytes"));
	/* shared reports its own working set */
	assert_true(fixture_line("ceiling", "shared", line, sizeof(line)));
	r = find_rec(&f->h, "ceiling", "shared");
	assert_non_null(r);
	assert_true(getd(r, "ws_min_bytes") == getd(line, "ws_bytes"));
}

/*
 * A recording with an `l2` ceiling line (measured with trials at one size):
 * one l2 record, the bench's numbers, source "kernel", the range of the
 * sweep's L2 plateau, inside the L2.
 */
static void replay_l2_kernel(struct fixture *f, char *path)
{
	char line[8192], attr[8192];
	const char *r;

	fixture_path = path;
	f->cfg.replay = path;
	assert_int_equal(run_plugin(f), RL_OK);
	assert_int_equal(stub_host_count(&f->h, "ceiling"),
			 fixture_count("ceiling"));
	assert_true(fixture_line("attr", NULL, attr, sizeof(attr)));
	assert_true(fixture_line("ceiling", "l2", line, sizeof(line)));
	r = find_rec(&f->h, "ceiling", "l2");
	assert_non_null(r);
	assert_true(strstr(r, "\tsource=kernel") != NULL);
	assert_true(getd(r, "value") == getd(line, "median"));
	assert_true(fabs(getd(r, "spread_pct") -
			 (getd(line, "max") - getd(line, "min")) /
				 getd(line, "median") * 100) < 1e-9);
	assert_true(getd(r, "ws_min_bytes") < getd(r, "ws_max_bytes"));
	assert_true(getd(r, "ws_max_bytes") <= getd(attr, "l2_bytes"));
	assert_true(getd(line, "ws_bytes") <= getd(attr, "l2_bytes"));
}

static void test_replay_l2_kernel_h100(void **state)
{
	replay_l2_kernel(*state, "tests/fixtures/ert/issue13/h100-quick.tsv");
}

static void test_replay_l2_kernel_run4(void **state)
{
	replay_l2_kernel(*state, "tests/fixtures/ert/issue13/h100-run4-quick.tsv");
}

/* ert-raw.tsv is the bench output byte for byte. */
static void test_replay_keeps_raw(void **state)
{
	struct fixture *f = *state;
	char path[256];
	FILE *a, *b;
	int ca, cb;

	f->cfg.replay = FIXTURE;
	assert_int_equal(run_plugin(f), RL_OK);
	snprintf(path, sizeof(path), "%s/ert-raw.tsv", f->dir);
	a = fopen(path, "r");
	b = fopen(FIXTURE, "r");
	assert_non_null(a);
	assert_non_null(b);
	do {
		ca = fgetc(a);
		cb = fgetc(b);
		assert_int_equal(ca, cb);
	} while (ca != EOF);
	fclose(a);
	fclose(b);
}

/* The fixture with n more sweep lines of series ser for GPU 0, each with
 * level_guess lg, replayed; path names the file (in f->dir). */
static void replay_with_series(struct fixture *f, char *path, size_t size,
			       const char *ser, const char *lg, int n)
{
	char line[8192];
	FILE *in, *out;

	snprintf(path, size, "%s/long-sweep.tsv", f->dir);
	in = fopen(FIXTURE, "r");
	out = fopen(path, "w");
	assert_non_null(in);
	assert_non_null(out);
	while (fgets(line, sizeof(line), in))
		fputs(line, out);
	for (int i = 0; i < n; i++)
		fprintf(out, "sweep\tgpu=0\tseries=%s\tlevel_guess=%s\t"
			"ws_bytes=%d\tvalue=1.2345678901234567e+12\tunit=B/s\t"
			"min=1.2345678901234567e+12\tmax=1.2345678901234567e+12\t"
			"trials=5\n", ser, lg, 1048576 + i * 4096);
	fclose(in);
	assert_int_equal(fclose(out), 0);
	f->cfg.replay = path;
	assert_int_equal(run_plugin(f), RL_OK);
	/* every ceiling and the fixture's own two series, whole */
	assert_int_equal(stub_host_count(&f->h, "ceiling"),
			 fixture_count("ceiling") + 1);
	check_sweeps(&f->h);
}

/*
 * A series too long for one record (more than the record's 32 kB of text),
 * or with a comma in a value (its list could not be read back): left out
 * with a warning naming it; the step succeeds with every ceiling and the
 * other series, and ert-raw.tsv keeps the points.
 */
static void test_replay_sweep_too_long(void **state)
{
	struct fixture *f = *state;
	char path[256];

	replay_with_series(f, path, sizeof(path), "long", "hbm", 400);
	assert_non_null(strstr(f->h.log.buf, "sweep long: 400 points do not "
					     "fit one record; left out"));
}

static void test_replay_sweep_comma(void **state)
{
	struct fixture *f = *state;
	char path[256];

	replay_with_series(f, path, sizeof(path), "odd", "l1,l2", 3);
	assert_non_null(strstr(f->h.log.buf, "sweep odd: a value holds a "
					     "comma; left out"));
}

/* ---- failure paths ---- */

/* Write an executable stand-in for ert-bench that prints `err` and exits. */
static void fake_bench(struct fixture *f, const char *err, int status)
{
	char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/fake-bench", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "#!/bin/sh\necho '%s' >&2\nexit %d\n", err, status);
	fclose(fp);
	assert_int_equal(chmod(path, 0755), 0);
	f->cfg.bench = strdup(path);
}

static void test_no_gpu(void **state)
{
	struct fixture *f = *state;

	fake_bench(f, "no CUDA device: stub has none", 3);
	assert_int_equal(run_plugin(f), RL_FAIL);
	assert_non_null(strstr(f->h.log.buf, "no GPU on node testnode"));
	assert_non_null(strstr(f->h.log.buf, "no CUDA device: stub has none"));
	assert_int_equal(f->h.n_records, 0);
	free(f->cfg.bench);
}

static void test_bench_failure(void **state)
{
	struct fixture *f = *state;

	fake_bench(f, "ert-bench: gpu 0: tc_bf16: wrong result", 1);
	assert_int_equal(run_plugin(f), RL_FAIL);
	assert_non_null(strstr(f->h.log.buf, "exit status 1"));
	assert_non_null(strstr(f->h.log.buf, "tc_bf16: wrong result"));
	free(f->cfg.bench);
}

static void test_no_program(void **state)
{
	struct fixture *f = *state;

	f->cfg.bench = "/nonexistent/ert-bench";
	assert_int_equal(run_plugin(f), RL_FAIL);
	assert_non_null(strstr(f->h.log.buf, "cannot run ert-bench"));
	assert_non_null(strstr(f->h.log.buf, "/nonexistent/ert-bench"));
}

/* The real program, where it was built and this machine has no GPU. */
static void test_real_bench_without_gpu(void **state)
{
	struct fixture *f = *state;
	const char *build = getenv("ROOFLINE_BUILD");
	char path[512];

	snprintf(path, sizeof(path), "%s/bin/ert-bench", build ? build : "build/debug");
	if (access(path, X_OK) != 0 || access("/dev/nvidia0", F_OK) == 0 ||
	    access("/dev/nvidiactl", F_OK) == 0) {
		print_message("skipped: no ert-bench at %s, or a GPU here\n", path);
		return;
	}
	f->cfg.bench = path;
	assert_int_equal(run_plugin(f), RL_FAIL);
	assert_non_null(strstr(f->h.log.buf, "no GPU on node testnode: no CUDA device: "));
}

static void test_bad_options(void **state)
{
	struct fixture *f = *state;
	static char *bad[] = { "fp64", "fp128" };
	static char *gpus[] = { "0,x" };
	void *st = NULL;

	f->cfg.precisions = (struct rl_strlist){ 2, bad };
	assert_int_equal(ert_init(&f->h.ctx, &f->cfg, &st), -EINVAL);
	assert_non_null(strstr(f->h.log.buf, "unknown item 'fp128'"));
	f->cfg.precisions = (struct rl_strlist){ 0, NULL };
	f->cfg.gpus = (struct rl_strlist){ 1, gpus };
	assert_int_equal(ert_init(&f->h.ctx, &f->cfg, &st), -EINVAL);
	assert_non_null(strstr(f->h.log.buf, "'0,x' is not a GPU index"));
	f->cfg.gpus = (struct rl_strlist){ 0, NULL };
	f->cfg.plateau_tol_pct = 0;
	assert_int_equal(ert_init(&f->h.ctx, &f->cfg, &st), -EINVAL);
}

/* The argv ert-bench gets from the options. */
static void test_argv(void **state)
{
	struct fixture *f = *state;
	static char *prec[] = { "fp64,tensor" };
	static char *lvl[] = { "l2" };
	static char *gpus[] = { "1", "3" };
	char *argv[ERT_MAX_ARGS], trials[32], prog[] = "ert-bench";
	void *st = NULL;

	f->cfg.precisions = (struct rl_strlist){ 1, prec };
	f->cfg.levels = (struct rl_strlist){ 1, lvl };
	f->cfg.gpus = (struct rl_strlist){ 2, gpus };
	f->cfg.quick = 1;
	f->cfg.trials = 7;
	assert_int_equal(ert_init(&f->h.ctx, &f->cfg, &st), 0);
	bench_argv(&f->cfg, st, prog, trials, sizeof(trials), argv);
	assert_string_equal(argv[1], "--only");
	assert_string_equal(argv[2], "fp64,tensor,l2");
	assert_string_equal(argv[3], "--quick");
	assert_string_equal(argv[4], "--trials");
	assert_string_equal(argv[5], "7");
	assert_string_equal(argv[6], "--gpu");
	assert_string_equal(argv[7], "1,3");
	assert_null(argv[8]);
	ert_fini(st);
}

/* ---- benchio ---- */

static void test_benchio_parse(void **state)
{
	struct benchio_doc doc;
	size_t bad = 0;
	double d;
	char *ok = strdup("# comment\n\nattr\tgpu=0\tname=A B\tgeometry=grid=1 x=2\n"
			  "sweep\tgpu=0\tvalue=1.5e12\n");
	char *broken = strdup("attr\tgpu=0\nceiling\tgpu=0\tnovalue\n");

	(void)state;
	assert_int_equal(benchio_parse(ok, &doc, &bad), 0);
	assert_int_equal(doc.n, 2);
	assert_string_equal(doc.lines[0].type, "attr");
	assert_int_equal(doc.lines[0].lineno, 3);
	assert_string_equal(benchio_get(&doc.lines[0], "name"), "A B");
	/* split at the first '=' only */
	assert_string_equal(benchio_get(&doc.lines[0], "geometry"), "grid=1 x=2");
	assert_int_equal(benchio_get_double(&doc.lines[1], "value", &d), 0);
	assert_true(d == 1.5e12);
	assert_int_equal(benchio_get_double(&doc.lines[0], "name", &d), -EINVAL);
	assert_int_equal(benchio_get_double(&doc.lines[0], "nope", &d), -ENOENT);
	benchio_release(&doc);
	assert_int_equal(benchio_parse(broken, &doc, &bad), -EINVAL);
	assert_int_equal(bad, 2);
}

static void test_benchio_run_timeout(void **state)
{
	struct fixture *f = *state;
	char out[256], err[256];
	char *argv[] = { "/bin/sleep", "5", NULL };
	int status = -1;

	snprintf(out, sizeof(out), "%s/ert-raw.tsv", f->dir);
	snprintf(err, sizeof(err), "%s/ert-stderr.log", f->dir);
	assert_int_equal(benchio_run(argv, out, err, 1, &status), -ETIMEDOUT);
	argv[1] = "0";
	assert_int_equal(benchio_run(argv, out, err, 5, &status), 0);
	assert_int_equal(status, 0);
}

/* ---- nodes of several GPUs (issue 29): the recorded H100 x4 runs ---- */

#define P2P_FIXTURE "tests/fixtures/p2p/p2p.tsv"
#define CONC_FIXTURE "tests/fixtures/p2p/concurrent.tsv"

/* The uuid of the attr line of GPU `gpu` in the fixture, into buf. */
static const char *fixture_uuid(const char *gpu, char *buf, size_t size)
{
	FILE *fp = fopen(fixture_path, "r");
	char line[8192], g[32];
	const char *r = NULL;

	assert_non_null(fp);
	while (!r && fgets(line, sizeof(line), fp))
		if (!strncmp(line, "attr\t", 5) && get(line, "gpu", g, sizeof(g)) &&
		    !strcmp(g, gpu))
			r = get(line, "uuid", buf, size);
	fclose(fp);
	return r;
}

/*
 * Every p2p ceiling line (ert-bench --p2p) is one record of its GPU, with
 * the peer's index and UUID, the link label, the directions and the
 * bench's numbers; replayed as recorded.
 */
static void test_replay_p2p(void **state)
{
	struct fixture *f = *state;
	char line[8192], buf[256], want[512], g[16], p[16];
	long n = 0;

	fixture_path = P2P_FIXTURE;
	f->cfg.replay = P2P_FIXTURE;
	f->cfg.replay_as = "recorded";
	assert_int_equal(run_plugin(f), RL_OK);
	assert_true(fixture_count("ceiling") >= 6); /* 2 GPUs: 3 + 3 bidir */
	assert_int_equal(stub_host_count(&f->h, "ceiling"),
			 (long)fixture_count("ceiling"));
	for (long i = 0; i < stub_host_count(&f->h, "ceiling"); i++) {
		char *rec = stub_host_record(&f->h, "ceiling", i);
		FILE *fp = fopen(P2P_FIXTURE, "r");
		int found = 0;

		assert_non_null(fp);
		assert_non_null(stub_host_get(rec, "peer_index"));
		/* the fixture line of this GPU, peer and name */
		while (!found && fgets(line, sizeof(line), fp))
			found = !strncmp(line, "ceiling\t", 8) &&
				!strcmp(get(line, "gpu", g, sizeof(g)),
					stub_host_get(rec, "gpu_index")) &&
				!strcmp(get(line, "peer", p, sizeof(p)),
					stub_host_get(rec, "peer_index")) &&
				!strcmp(get(line, "name", buf, sizeof(buf)),
					stub_host_get(rec, "name"));
		fclose(fp);
		assert_true(found);
		assert_string_not_equal(g, p);
		assert_non_null(fixture_uuid(p, want, sizeof(want)));
		assert_string_equal(stub_host_get(rec, "peer_uuid"), want);
		assert_non_null(fixture_uuid(g, want, sizeof(want)));
		assert_string_equal(stub_host_get(rec, "gpu_uuid"), want);
		assert_true(strtod(stub_host_get(rec, "value"), NULL) ==
			    getd(line, "median"));
		assert_string_equal(stub_host_get(rec, "link"),
				    get(line, "topo", buf, sizeof(buf)));
		assert_string_equal(stub_host_get(rec, "directions"),
				    get(line, "directions", buf, sizeof(buf)));
		assert_string_equal(stub_host_get(rec, "kind"), "bandwidth");
		assert_string_equal(stub_host_get(rec, "unit"), "B/s");
		assert_int_equal(strncmp(stub_host_get(rec, "name"), "p2p_", 4), 0);
		n += strstr(stub_host_get(rec, "name"), "_bidir") != NULL;
		free(rec);
	}
	assert_true(n > 0);

	/*
	 * Replayed on a job of two GPUs (4 and 5): recorded GPUs 0 and 1 stand
	 * in, so only their pairs are emitted, the peer under its replay UUID.
	 */
	{
		static char *gpus[] = { "4,5" };
		long pairs = 0;
		FILE *fp = fopen(P2P_FIXTURE, "r");

		assert_non_null(fp);
		while (fgets(line, sizeof(line), fp))
			pairs += !strncmp(line, "ceiling\t", 8) &&
				 strtol(get(line, "gpu", g, sizeof(g)), NULL, 10) < 2 &&
				 strtol(get(line, "peer", p, sizeof(p)), NULL, 10) < 2;
		fclose(fp);
		stub_host_reset(&f->h);
		f->cfg.replay_as = "job";
		f->cfg.gpus = (struct rl_strlist){ 1, gpus };
		assert_int_equal(run_plugin(f), RL_OK);
		assert_int_equal(stub_host_count(&f->h, "ceiling"), pairs);
		for (long i = 0; i < pairs; i++) {
			char *rec = stub_host_record(&f->h, "ceiling", i);
			char pi[16];

			/* stub_host_get's buffer is reused: copy */
			snprintf(pi, sizeof(pi), "%s", stub_host_get(rec, "peer_index"));

			assert_true(!strcmp(pi, "4") || !strcmp(pi, "5"));
			assert_string_not_equal(pi, stub_host_get(rec, "gpu_index"));
			assert_non_null(fixture_uuid(!strcmp(pi, "4") ? "0" : "1",
						     buf, sizeof(buf)));
			snprintf(want, sizeof(want), "GPU-replay-testnode-%s-of-%s",
				 pi, buf);
			assert_string_equal(stub_host_get(rec, "peer_uuid"), want);
			free(rec);
		}
		f->cfg.gpus = (struct rl_strlist){ 0, NULL };
	}
}

/*
 * The concurrent run (one ert-bench per GPU, outputs joined): every GPU's
 * figures, each record saying mode=concurrent.
 */
static void test_replay_concurrent(void **state)
{
	struct fixture *f = *state;
	long gpus;

	fixture_path = CONC_FIXTURE;
	f->cfg.replay = CONC_FIXTURE;
	f->cfg.replay_as = "recorded";
	assert_int_equal(run_plugin(f), RL_OK);
	gpus = (long)fixture_count("attr");
	assert_true(gpus >= 2);
	/* each GPU's ceiling lines, plus an l2 plateau record where its
	 * output has no l2 line */
	assert_true(stub_host_count(&f->h, "ceiling") >=
		    (long)fixture_count("ceiling"));
	for (long i = 0; i < stub_host_count(&f->h, "ceiling"); i++) {
		char *rec = stub_host_record(&f->h, "ceiling", i);

		if (strcmp(stub_host_get(rec, "source"), "sweep")) {
			assert_non_null(stub_host_get(rec, "mode"));
			assert_string_equal(stub_host_get(rec, "mode"),
					    "concurrent");
		}
		free(rec);
	}
}

/*
 * Option p2p: after the figures of each GPU, ert-bench --p2p runs (here a
 * stand-in that prints the recorded H100 run, or with --p2p the recorded
 * 4 x H200 matrix) and its pairs are emitted too; on a node of one GPU
 * (ert-bench --p2p exits 2, "needs 2 GPUs") the step still succeeds, with
 * a warning and no pair.
 */
static void p2p_bench(struct fixture *f, int one_gpu)
{
	char path[256], cwd[1024];
	FILE *fp;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(path, sizeof(path), "%s/fake-bench", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "#!/bin/sh\necho \"$*\" >>'%s/args.txt'\n"
		"case \" $* \" in\n*\" --p2p \"*)\n", f->dir);
	if (one_gpu)
		fprintf(fp, "\techo 'ert-bench: --p2p needs 2 GPUs or more, 1 given' >&2\n"
			"\texit 2;;\n");
	else
		fprintf(fp, "\texec cat '%s/" P2P_FIXTURE "';;\n", cwd);
	fprintf(fp, "*) exec cat '%s/" FIXTURE "';;\nesac\n", cwd);
	fclose(fp);
	assert_int_equal(chmod(path, 0755), 0);
	free(f->cfg.bench);
	f->cfg.bench = strdup(path);
}

static void test_run_p2p(void **state)
{
	struct fixture *f = *state;
	char path[256], args[512] = "";
	long own;
	FILE *fp;

	fixture_path = FIXTURE;
	own = (long)fixture_count("ceiling") + 1; /* + the L2 plateau */
	f->cfg.quick = 1;
	f->cfg.p2p = 1;
	p2p_bench(f, 0);
	assert_int_equal(run_plugin(f), RL_OK);
	fixture_path = P2P_FIXTURE;
	assert_int_equal(stub_host_count(&f->h, "ceiling"),
			 own + (long)fixture_count("ceiling"));
	snprintf(path, sizeof(path), "%s/args.txt", f->dir);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(args, sizeof(args), fp));  /* the GPUs' run */
	assert_null(strstr(args, "--p2p"));
	assert_non_null(fgets(args, sizeof(args), fp));  /* the pairs' */
	fclose(fp);
	assert_int_equal(strncmp(args, "--p2p --quick", 13), 0);
	unlink(path);

	stub_host_reset(&f->h);
	p2p_bench(f, 1);
	assert_int_equal(run_plugin(f), RL_OK);
	assert_int_equal(stub_host_count(&f->h, "ceiling"), own);
	assert_non_null(strstr(f->h.log.buf, "no peer-to-peer figures: "
			       "ert-bench: --p2p needs 2 GPUs"));
	free(f->cfg.bench);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_replay_h100, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_l2_kernel_h100, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replay_l2_kernel_run4, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replay_sweep_too_long, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replay_sweep_comma, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replay_keeps_raw, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bench_failure, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_program, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_bench_without_gpu, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
		cmocka_unit_test_setup_teardown(test_argv, setup, teardown),
		cmocka_unit_test(test_benchio_parse),
		cmocka_unit_test_setup_teardown(test_replay_p2p, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_concurrent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_run_p2p, setup, teardown),
		cmocka_unit_test_setup_teardown(test_benchio_run_timeout, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
