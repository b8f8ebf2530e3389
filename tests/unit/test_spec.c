/*
 * test_spec.c - the spec plugin (plugins/spec.c, included here) with the
 * real table (etc/spec-ceilings.tsv) and the attributes an H100 SXM reported
 * (tests/fixtures/ert/h100-attributes.tsv), against a stand-in host.
 *
 * Expected values are computed here from the formula and the raw numbers
 * (132 SMs, 1980 MHz, 5120-bit bus, 2619 MHz), and compared with the issue's
 * figures: FP64 FMA 33.45 TFLOP/s, FP32 66.9, FP16 133.8, L1/shared 33.45
 * TB/s, HBM 3.35 TB/s.
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

#include "../../plugins/spec.c"
#include "stub_host.h"

#define ATTRS "tests/fixtures/ert/h100-attributes.tsv"
#define TABLE "etc/spec-ceilings.tsv"

/* A field that must be there. */
static const char *must(const struct rl_field *fields, const char *key)
{
	const char *v = rl_field_get(fields, key);

	if (!v)
		fail_msg("record without '%s'", key);
	return v ? v : "";
}

/* The host's on_emit hook: every record is a theoretical ceiling. */
static int check_emit(void *arg, const char *kind, const struct rl_field *fields)
{
	struct stub_host *h = arg;

	assert_string_equal(kind, "ceiling");
	assert_string_equal(must(fields, "method"), "theoretical");
	assert_true(h->n_records < 64);
	must(fields, "name");
	must(fields, "geometry");
	must(fields, "unit");
	/* value = min = median = max, spread 0 */
	assert_string_equal(must(fields, "value"), must(fields, "median"));
	assert_string_equal(must(fields, "value"), must(fields, "min"));
	assert_string_equal(must(fields, "spread_pct"), "0");
	return 0;
}

struct fixture {
	struct stub_host h;
	struct spec_config cfg;
	char dir[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_spec_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	stub_host_init(&f->h, NULL, f->dir);
	f->h.ctx.node = "testnode";
	f->h.on_emit = check_emit;
	f->h.on_emit_arg = &f->h;
	f->cfg.attributes = ATTRS;
	f->cfg.table = TABLE;
	f->cfg.timeout_s = 30;
	unsetenv("SLURM_JOB_GPUS");
	unsetenv("CUDA_VISIBLE_DEVICES");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[256];
	static const char *const files[] = { "spec-attributes.tsv",
					     "spec-stderr.log", "fake-bench",
					     "table.tsv", "attrs.tsv", NULL };

	for (int i = 0; files[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", f->dir, files[i]);
		unlink(path);
	}
	rmdir(f->dir);
	stub_host_release(&f->h);
	free(f);
	return 0;
}

static double value_of(struct stub_host *h, const char *name)
{
	char *rec;
	double v;

	for (long i = 0; (rec = stub_host_record(h, "ceiling", i)); i++) {
		if (!strcmp(stub_host_get(rec, "name"), name)) {
			v = strtod(stub_host_get(rec, "value"), NULL);
			free(rec);
			return v;
		}
		free(rec);
	}
	fail_msg("no ceiling '%s'", name);
	return 0;
}

static void assert_rel(double got, double want, double rel)
{
	if (fabs(got - want) > rel * fabs(want))
		fail_msg("%.17g is not within %g of %.17g", got, rel, want);
}

static void test_h100_values(void **state)
{
	struct fixture *f = *state;
	const double sm = 132, hz = 1980e6, mem_hz = 2619e6, bus_bytes = 5120 / 8;

	assert_int_equal(spec_run(&f->h.ctx, &f->cfg, NULL), RL_OK);
	assert_int_equal(f->h.n_records, 17);
	/* exactly the formula on the raw numbers */
	assert_true(value_of(&f->h, "fp64_fma") == 64 * 2 * sm * hz);
	assert_true(value_of(&f->h, "fp64_add") == 64 * sm * hz);
	assert_true(value_of(&f->h, "fp32_fma") == 128 * 2 * sm * hz);
	assert_true(value_of(&f->h, "fp16_fma") == 128 * 2 * 2 * sm * hz);
	assert_true(value_of(&f->h, "l1") == 128 * sm * hz);
	assert_true(value_of(&f->h, "shared") == 128 * sm * hz);
	assert_true(value_of(&f->h, "hbm_triad") == bus_bytes * 2 * mem_hz);
	assert_true(value_of(&f->h, "tc_bf16") == 4096 * sm * hz);
	assert_true(value_of(&f->h, "tc_fp64") == 256 * sm * hz);
	/* and the figures */
	assert_rel(value_of(&f->h, "fp64_fma"), 33.45e12, 5e-4);
	assert_rel(value_of(&f->h, "fp32_fma"), 66.9e12, 5e-4);
	assert_rel(value_of(&f->h, "fp16_fma"), 133.8e12, 5e-4);
	assert_rel(value_of(&f->h, "l1"), 33.45e12, 5e-4);
	assert_rel(value_of(&f->h, "hbm_read"), 3.35e12, 1e-3);
	/* NVIDIA's 989.4 TFLOP/s dense BF16 is the same rate at 1.83 GHz */
	assert_rel(value_of(&f->h, "tc_bf16") * 1830 / 1980, 989.4e12, 1e-4);
}

static void test_formula_text(void **state)
{
	struct fixture *f = *state;
	char name[32], *rec;

	assert_int_equal(spec_run(&f->h.ctx, &f->cfg, NULL), RL_OK);
	for (long i = 0; (rec = stub_host_record(&f->h, "ceiling", i)); i++) {
		snprintf(name, sizeof(name), "%s", stub_host_get(rec, "name"));
		if (!strcmp(name, "fp64_fma"))
			assert_string_equal(stub_host_get(rec, "geometry"),
					    "128 FLOP/clk/SM x 132 SM x 1980 MHz");
		if (!strcmp(name, "hbm_write"))
			assert_string_equal(stub_host_get(rec, "geometry"),
					    "5120 bit / 8 x 2 x 2619 MHz");
		if (!strcmp(name, "tc_int8"))
			assert_string_equal(stub_host_get(rec, "unit"), "OP/s");
		free(rec);
	}
}

/* Every row of the shipped table parses; each cc has the core rows. */
static void test_table_rows(void **state)
{
	FILE *fp = fopen(TABLE, "r");
	static char buf[1 << 16];
	struct spec_table t;
	size_t len, bad = 0;
	static const char *const ccs[] = { "7.0", "7.5", "8.0", "8.6", "8.9",
					   "9.0", NULL };

	(void)state;
	assert_non_null(fp);
	len = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[len] = '\0';
	assert_int_equal(spec_table_parse(buf, &t, &bad), 0);
	for (int c = 0; ccs[c]; c++) {
		int fma = 0, hbm = 0;

		for (size_t i = 0; i < t.n; i++) {
			if (strcmp(t.rows[i].cc, ccs[c]))
				continue;
			fma += !strcmp(t.rows[i].name, "fp64_fma") ||
			       !strcmp(t.rows[i].name, "fp32_fma");
			hbm += !strcmp(t.rows[i].name, "hbm_triad");
		}
		assert_int_equal(fma, 2);
		assert_int_equal(hbm, 1);
	}
	spec_table_release(&t);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_bad_table(void **state)
{
	struct fixture *f = *state;
	char path[256];

	snprintf(path, sizeof(path), "%s/table.tsv", f->dir);
	write_file(path, "# ok\n9.0\tfp64_fma\tcompute\tFLOP/s\t128\tsm\tsm\n"
			 "9.0\tl1\tbandwidth\tB/s\t128\tper-sm\tsm\n");
	f->cfg.table = path;
	assert_int_equal(spec_run(&f->h.ctx, &f->cfg, NULL), RL_FAIL);
	assert_non_null(strstr(f->h.log.buf, "table.tsv:3: expected"));
}

static void test_unknown_cc(void **state)
{
	struct fixture *f = *state;
	char path[256];

	snprintf(path, sizeof(path), "%s/attrs.tsv", f->dir);
	write_file(path, "attr\tgpu=0\tname=Future GPU\tcc=12.7\tsm_count=10\t"
			 "sm_clock_max_mhz=1000\tmem_clock_max_mhz=1000\t"
			 "bus_width_bits=512\n");
	f->cfg.attributes = path;
	assert_int_equal(spec_run(&f->h.ctx, &f->cfg, NULL), RL_FAIL);
	assert_non_null(strstr(f->h.log.buf, "no row for cc 12.7"));
}

static void test_no_gpu(void **state)
{
	struct fixture *f = *state;
	char path[256];

	snprintf(path, sizeof(path), "%s/fake-bench", f->dir);
	write_file(path, "#!/bin/sh\necho 'no CUDA device: stub' >&2\nexit 3\n");
	assert_int_equal(chmod(path, 0755), 0);
	f->cfg.attributes = NULL;
	f->cfg.bench = path;
	assert_int_equal(spec_run(&f->h.ctx, &f->cfg, NULL), RL_FAIL);
	assert_non_null(strstr(f->h.log.buf, "no GPU on node testnode: "
					    "no CUDA device: stub"));
	assert_int_equal(f->h.n_records, 0);
}

/* Replaying: option gpus names the job's GPUs the recording plays on. */
static void test_gpu_selection(void **state)
{
	struct fixture *f = *state;
	static char *other[] = { "1" };
	char *rec;

	f->cfg.gpus = (struct rl_strlist){ 1, other };
	assert_int_equal(spec_run(&f->h.ctx, &f->cfg, NULL), RL_OK);
	assert_int_equal(f->h.n_records, 17);
	rec = stub_host_record(&f->h, "ceiling", 0);
	assert_string_equal(stub_host_get(rec, "gpu_index"), "1");
	assert_string_equal(stub_host_get(rec, "gpu_uuid"),
			    "GPU-replay-testnode-1-of-GPU-b329a22d-4f86-4ca9-"
			    "ab8f-933e76bf2b4f");
	free(rec);
}

/*
 * A Slurm job's two GPUs each get the recorded GPU's rows, labelled; of the
 * perturbations, the identity changes apply, not the value changes.
 */
static void test_replay_job_gpus(void **state)
{
	struct fixture *f = *state;
	static char *rules[] = { "testnode/1 hbm_triad -12%",
				 "testnode/1 driver=535.54" };
	double hbm0 = 0, hbm1 = 0;
	char *rec;

	setenv("SLURM_JOB_GPUS", "0,1", 1);
	f->cfg.perturb = (struct rl_strlist){ 2, rules };
	assert_int_equal(spec_run(&f->h.ctx, &f->cfg, NULL), RL_OK);
	unsetenv("SLURM_JOB_GPUS");
	assert_int_equal(f->h.n_records, 2 * 17);
	for (long i = 0; (rec = stub_host_record(&f->h, "ceiling", i)); i++) {
		int one = !strcmp(stub_host_get(rec, "gpu_index"), "1");

		assert_string_equal(stub_host_get(rec, "driver"),
				    one ? "535.54" : "580.159.04");
		assert_non_null(strstr(stub_host_get(rec, "synthetic"),
				       "replay of GPU-b329a22d-4f86-4ca9-ab8f-"
				       "933e76bf2b4f (h100-attributes.tsv gpu 0)"));
		if (one)
			assert_non_null(strstr(stub_host_get(rec, "synthetic"),
					       "; perturbed: testnode/1 "
					       "driver=535.54"));
		else
			assert_null(strstr(stub_host_get(rec, "synthetic"),
					   "perturbed"));
		if (!strcmp(stub_host_get(rec, "name"), "hbm_triad")) {
			double v = strtod(stub_host_get(rec, "value"), NULL);

			*(one ? &hbm1 : &hbm0) = v;
		}
		free(rec);
	}
	assert_true(hbm0 > 0);
	assert_true(hbm0 == hbm1);
}

static void test_perturb_needs_attributes(void **state)
{
	struct fixture *f = *state;
	static char *rules[] = { "testnode/1 driver=535.54" };

	f->cfg.attributes = NULL;
	f->cfg.perturb = (struct rl_strlist){ 1, rules };
	assert_int_equal(spec_run(&f->h.ctx, &f->cfg, NULL), RL_FAIL);
	assert_non_null(strstr(f->h.log.buf, "option 'perturb' needs option "
					     "'attributes'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_h100_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_formula_text, setup, teardown),
		cmocka_unit_test(test_table_rows),
		cmocka_unit_test_setup_teardown(test_bad_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_cc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_selection, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replay_job_gpus, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_perturb_needs_attributes,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
