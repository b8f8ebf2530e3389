/*
 * test_ert_replay.c - replayed GPUs and their perturbations
 * (plugins/ert/replay.c, and the ert plugin, included here, replaying the
 * real H100 recording on the GPUs of a Slurm job).
 *
 * Expected values come from the recording's text, read by this test's own
 * code, and the rules' arithmetic (x 0.88, x 1410 / recorded clock).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../plugins/ert.c"
#include "stub_host.h"

#define FIXTURE "tests/fixtures/ert/h100-quick.tsv"

/* ---- the rule parser ---- */

static void parse_ok(char *item, struct replay_rules *rules)
{
	char *items[] = { item };
	char err[512] = "";
	int rc = replay_rules_parse(items, 1, rules, err, sizeof(err));

	if (rc != 0)
		fail_msg("'%s' refused: %s", item, err);
	assert_int_equal(rules->n, 1);
}

static void test_parse_rules(void **state)
{
	struct replay_rules r;

	(void)state;
	parse_ok("rl-node2/1 hbm_triad -12%", &r);
	assert_string_equal(r.v[0].node, "rl-node2");
	assert_int_equal(r.v[0].gpu, 1);
	assert_string_equal(r.v[0].ceilings, "hbm_triad");
	assert_true(r.v[0].has_pct);
	assert_true(r.v[0].pct == -12);
	assert_true(r.v[0].sm_clock == 0);
	assert_string_equal(r.v[0].text, "rl-node2/1 hbm_triad -12%");
	replay_rules_release(&r);

	parse_ok("rl-node3/0 fp64_fma sm_clock=1410", &r);
	assert_int_equal(r.v[0].gpu, 0);
	assert_false(r.v[0].has_pct);
	assert_true(r.v[0].sm_clock == 1410);
	replay_rules_release(&r);

	parse_ok("rl-node4/* driver=535.54", &r);
	assert_int_equal(r.v[0].gpu, -1);
	assert_string_equal(r.v[0].ceilings, "");
	assert_string_equal(r.v[0].driver, "535.54");
	replay_rules_release(&r);

	/* globs, lists, several changes, spaces around */
	parse_ok("  rl-node[23]/*  hbm_*,tc_fp16  +5%  cuda=12.2 ", &r);
	assert_string_equal(r.v[0].node, "rl-node[23]");
	assert_string_equal(r.v[0].ceilings, "hbm_*,tc_fp16");
	assert_true(r.v[0].pct == 5);
	assert_string_equal(r.v[0].cuda, "12.2");
	assert_true(replay_rule_selects(&r.v[0], "rl-node3", 1));
	assert_false(replay_rule_selects(&r.v[0], "rl-node4", 1));
	replay_rules_release(&r);

	parse_ok("*/1 -3%", &r);
	assert_true(replay_rule_selects(&r.v[0], "anything", 1));
	assert_false(replay_rule_selects(&r.v[0], "anything", 0));
	replay_rules_release(&r);
}

static void test_parse_errors(void **state)
{
	static const struct {
		char *item;
		const char *says;
	} bad[] = {
		{ "rl-node2 hbm_triad -12%", "expected NODE/GPU" },
		{ "rl-node2/x hbm_triad -12%", "expected NODE/GPU" },
		{ "rl-node2/-1 -12%", "expected NODE/GPU" },
		{ "/1 -12%", "expected NODE/GPU" },
		{ "rl-node2/1 hbm_traid -12%", "'hbm_traid' matches no ceiling" },
		{ "rl-node2/1 hbm_triad,dram -12%", "'dram' matches no ceiling" },
		{ "rl-node2/1 hbm_triad", "CHANGE" },
		{ "rl-node2/1", "CHANGE" },
		{ "", "expected NODE/GPU [CEILINGS] CHANGE" },
		{ "rl-node2/1 -100%", "above -100%" },
		{ "rl-node2/1 -12x%", "expected +N% or -N%" },
		{ "rl-node2/1 sm_clock=0", "sm_clock=MHZ above 0" },
		{ "rl-node2/1 sm_clock=fast", "sm_clock=MHZ above 0" },
		{ "rl-node2/1 volts=0.9", "expected sm_clock=MHZ, driver=TEXT" },
		{ "rl-node2/1 driver=", "expected sm_clock=MHZ, driver=TEXT" },
		{ "rl-node2/1 -12% hbm_triad", "ceilings come right after" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *items[] = { "rl-node1/0 -1%", bad[i].item };
		struct replay_rules r = { NULL, 0 };
		char err[512] = "";

		assert_int_equal(replay_rules_parse(items, 2, &r, err,
						    sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].says) || !strstr(err, "perturb '"))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].item,
				 err, bad[i].says);
		assert_null(r.v);
		assert_int_equal(r.n, 0);
	}
}

static void test_job_gpus(void **state)
{
	long idx[8];

	(void)state;
	assert_int_equal(replay_job_gpus("0,1", "5", idx, 8), 2);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 1);
	assert_int_equal(replay_job_gpus(NULL, "1", idx, 8), 1);
	assert_int_equal(idx[0], 1);
	assert_int_equal(replay_job_gpus("", "3,2", idx, 8), 2);
	assert_int_equal(idx[0], 3);
	assert_int_equal(idx[1], 2);
	assert_int_equal(replay_job_gpus(NULL, NULL, idx, 8), 0);
	assert_int_equal(replay_job_gpus(NULL, "NoDevFiles", idx, 8), 0);
	/* UUIDs count by position */
	assert_int_equal(replay_job_gpus(NULL, "GPU-aa,GPU-bb", idx, 8), 2);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 1);
	/* at most max */
	assert_int_equal(replay_job_gpus("0,1,2,3", NULL, idx, 3), 3);
}

static void test_uuid_and_label(void **state)
{
	struct replay_gpu g = { "rl-node2", 1, "GPU-d44e", "0", "h100.tsv", 0, 0 };
	struct replay_rules rules;
	struct benchio_rec in, out;
	unsigned long changed = 0;
	char buf[128];

	(void)state;
	replay_uuid(&g, buf, sizeof(buf));
	assert_string_equal(buf, "GPU-replay-rl-node2-1-of-GPU-d44e");
	g.as_recorded = 1;
	replay_uuid(&g, buf, sizeof(buf));
	assert_string_equal(buf, "GPU-d44e");
	g.as_recorded = 0;

	parse_ok("rl-node2/1 hbm_triad -12%", &rules);
	benchio_rec_init(&in);
	benchio_rec_add(&in, "gpu_index", "0");
	benchio_rec_add(&in, "gpu_uuid", "GPU-d44e");
	benchio_rec_add(&in, "name", "hbm_triad");
	benchio_rec_add(&in, "kind", "bandwidth");
	benchio_rec_addd(&in, "value", 1000);
	benchio_rec_addd(&in, "min", 900);
	benchio_rec_addd(&in, "spread_pct", 7);
	assert_int_equal(replay_apply(&g, &rules, 1, "ceiling", &in, &out,
				      &changed), 0);
	assert_int_equal(changed, 1);
	assert_string_equal(rl_field_get(out.f, "gpu_index"), "1");
	assert_string_equal(rl_field_get(out.f, "gpu_uuid"),
			    "GPU-replay-rl-node2-1-of-GPU-d44e");
	assert_true(strtod(rl_field_get(out.f, "value"), NULL) == 1000 * 0.88);
	assert_true(strtod(rl_field_get(out.f, "min"), NULL) == 900 * 0.88);
	assert_string_equal(rl_field_get(out.f, "spread_pct"), "7");
	assert_string_equal(rl_field_get(out.f, "synthetic"),
			    "replay of GPU-d44e (h100.tsv gpu 0); perturbed: "
			    "rl-node2/1 hbm_triad -12%");

	/* the theoretical (measured = 0) figure is not scaled, nor labelled */
	assert_int_equal(replay_apply(&g, &rules, 0, "ceiling", &in, &out,
				      &changed), 0);
	assert_int_equal(changed, 0);
	assert_string_equal(rl_field_get(out.f, "value"), "1000");
	assert_string_equal(rl_field_get(out.f, "synthetic"),
			    "replay of GPU-d44e (h100.tsv gpu 0)");

	/* another GPU of the node: replayed, not perturbed */
	g.index = 0;
	assert_int_equal(replay_apply(&g, &rules, 1, "ceiling", &in, &out,
				      &changed), 0);
	assert_int_equal(changed, 0);
	assert_string_equal(rl_field_get(out.f, "value"), "1000");
	replay_rules_release(&rules);
}

/* ---- the plugin, replaying the H100 on a Slurm job's two GPUs ---- */

struct fixture {
	struct stub_host h;
	struct ert_config cfg;
	char dir[64];
};

static int setup(void **state)
{
	static char *prec[] = { "fp64", "fp32", "fp16", "tensor" };
	static char *lvl[] = { "hbm", "l2", "l1", "shared" };
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_ert_replay_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	stub_host_init(&f->h, f->dir, f->dir);
	f->h.ctx.step_id = "ert";
	f->cfg.precisions = (struct rl_strlist){ 4, prec };
	f->cfg.levels = (struct rl_strlist){ 4, lvl };
	f->cfg.timeout_s = 60;
	f->cfg.plateau_tol_pct = 10;
	f->cfg.plateau_min_points = 3;
	f->cfg.replay = FIXTURE;
	setenv("SLURM_JOB_GPUS", "0,1", 1);
	setenv("CUDA_VISIBLE_DEVICES", "0,1", 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[256];

	snprintf(path, sizeof(path), "%s/ert-raw.tsv", f->dir);
	unlink(path);
	rmdir(f->dir);
	stub_host_release(&f->h);
	unsetenv("SLURM_JOB_GPUS");
	unsetenv("CUDA_VISIBLE_DEVICES");
	free(f);
	return 0;
}

static enum rl_result run_on(struct fixture *f, const char *node,
			     char **rules, size_t nrules)
{
	void *st = NULL;
	enum rl_result r;

	stub_host_reset(&f->h);
	f->h.ctx.node = node;
	f->cfg.perturb = (struct rl_strlist){ nrules, rules };
	if (ert_init(&f->h.ctx, &f->cfg, &st) < 0)
		return (enum rl_result)-1;
	r = ert_run(&f->h.ctx, &f->cfg, st);
	ert_fini(st);
	return r;
}

/* The recording's `field` of the ceiling line named name. */
static double recorded(const char *name, const char *field)
{
	FILE *fp = fopen(FIXTURE, "r");
	char line[8192], pat[64], key[64];
	double v = NAN;

	assert_non_null(fp);
	snprintf(pat, sizeof(pat), "\tname=%s\t", name);
	snprintf(key, sizeof(key), "\t%s=", field);
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "ceiling\t", 8) && strstr(line, pat) &&
		    strstr(line, key))
			v = strtod(strstr(line, key) + strlen(key), NULL);
	fclose(fp);
	assert_false(isnan(v));
	return v;
}

static char recorded_uuid[128];

static const char *uuid_of_recording(void)
{
	FILE *fp = fopen(FIXTURE, "r");
	char line[8192];

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "attr\t", 5) && strstr(line, "\tuuid="))
			snprintf(recorded_uuid, sizeof(recorded_uuid), "%.*s",
				 (int)strcspn(strstr(line, "\tuuid=") + 6, "\t\n"),
				 strstr(line, "\tuuid=") + 6);
	fclose(fp);
	return recorded_uuid;
}

/* The emitted ceiling `name` of GPU `index`, as "key=value\n" lines. */
static char *ceiling_of(struct fixture *f, const char *index, const char *name)
{
	long n = stub_host_count(&f->h, "ceiling");

	for (long i = 0; i < n; i++) {
		char *rec = stub_host_record(&f->h, "ceiling", i);
		const char *nm = stub_host_get(rec, "name");
		int hit = nm && !strcmp(nm, name);

		if (hit && !strcmp(stub_host_get(rec, "gpu_index"), index))
			return rec;
		free(rec);
	}
	fail_msg("no ceiling %s of gpu %s", name, index);
	return NULL;
}

static double num(const char *rec, const char *key)
{
	const char *v = stub_host_get(rec, key);

	assert_non_null(v);
	return strtod(v, NULL);
}

static void test_every_job_gpu(void **state)
{
	struct fixture *f = *state;
	long per_gpu;
	char want[256], *a, *b;

	assert_int_equal(run_on(f, "rl-node2", NULL, 0), RL_OK);
	per_gpu = stub_host_count(&f->h, "ceiling") / 2;
	assert_true(per_gpu > 10);
	assert_int_equal(stub_host_count(&f->h, "ceiling"), 2 * per_gpu);
	a = ceiling_of(f, "0", "fp64_fma");
	b = ceiling_of(f, "1", "fp64_fma");
	snprintf(want, sizeof(want), "GPU-replay-rl-node2-0-of-%s",
		 uuid_of_recording());
	assert_string_equal(stub_host_get(a, "gpu_uuid"), want);
	snprintf(want, sizeof(want), "GPU-replay-rl-node2-1-of-%s",
		 uuid_of_recording());
	assert_string_equal(stub_host_get(b, "gpu_uuid"), want);
	/* unperturbed: the recorded figure, labelled a replay */
	assert_true(num(b, "value") == recorded("fp64_fma", "median"));
	snprintf(want, sizeof(want), "replay of %s (h100-quick.tsv gpu 0)",
		 uuid_of_recording());
	assert_string_equal(stub_host_get(a, "synthetic"), want);
	free(a);
	free(b);
	/* the sweeps too, under the replayed GPU */
	a = stub_host_record(&f->h, "sweep", 0);
	assert_non_null(strstr(stub_host_get(a, "gpu_uuid"), "GPU-replay-rl-node2-"));
	assert_non_null(stub_host_get(a, "synthetic"));
	free(a);
	assert_int_equal(stub_host_count(&f->h, "sweep") % 2, 0);

	/* option gpus overrides the job's list */
	f->cfg.gpus = (struct rl_strlist){ 1, (char *[]){ "3" } };
	assert_int_equal(run_on(f, "rl-node2", NULL, 0), RL_OK);
	assert_int_equal(stub_host_count(&f->h, "ceiling"), per_gpu);
	free(ceiling_of(f, "3", "l2"));
}

/* replay_as: recorded - the recording's GPU as itself, still labelled */
static void test_replay_as_recorded(void **state)
{
	struct fixture *f = *state;
	char *a;

	f->cfg.replay_as = "recorded";
	assert_int_equal(run_on(f, "rl-node2", NULL, 0), RL_OK);
	a = ceiling_of(f, "0", "fp64_fma");
	assert_string_equal(stub_host_get(a, "gpu_uuid"), uuid_of_recording());
	assert_non_null(strstr(stub_host_get(a, "synthetic"), "replay of "));
	free(a);
	/* one GPU, as recorded, though the job has two */
	for (long i = 0; i < stub_host_count(&f->h, "ceiling"); i++) {
		a = stub_host_record(&f->h, "ceiling", i);
		assert_string_equal(stub_host_get(a, "gpu_index"), "0");
		free(a);
	}
	f->cfg.replay_as = "node";
	assert_int_equal((int)run_on(f, "rl-node2", NULL, 0), -1);
	assert_non_null(strstr(f->h.log.buf, "'node' is neither 'job' nor "
					     "'recorded'"));
}

static char *fleet_rules[] = {
	"rl-node2/1 hbm_triad -12%",
	"rl-node3/0 fp64_fma sm_clock=1410",
	"rl-node4/* driver=535.54",
};

static void test_perturbations(void **state)
{
	struct fixture *f = *state;
	char *r;

	/* rl-node2: GPU 1's triad 12 % lower, nothing else */
	assert_int_equal(run_on(f, "rl-node2", fleet_rules, 3), RL_OK);
	r = ceiling_of(f, "1", "hbm_triad");
	assert_true(fabs(num(r, "value") / (recorded("hbm_triad", "median") * 0.88)
			 - 1) < 1e-15);
	assert_true(fabs(num(r, "max") / (recorded("hbm_triad", "max") * 0.88)
			 - 1) < 1e-15);
	assert_non_null(strstr(stub_host_get(r, "synthetic"),
			       "; perturbed: rl-node2/1 hbm_triad -12%"));
	free(r);
	r = ceiling_of(f, "0", "hbm_triad");
	assert_true(num(r, "value") == recorded("hbm_triad", "median"));
	assert_null(strstr(stub_host_get(r, "synthetic"), "perturbed"));
	free(r);
	r = ceiling_of(f, "1", "hbm_read");
	assert_true(num(r, "value") == recorded("hbm_read", "median"));
	assert_null(strstr(stub_host_get(r, "synthetic"), "perturbed"));
	free(r);
	assert_non_null(strstr(f->h.log.buf, "gpu 1: perturbed: rl-node2/1 "
					     "hbm_triad -12%"));

	/* rl-node3: GPU 0's FP64 FMA at a power-capped 1410 MHz */
	assert_int_equal(run_on(f, "rl-node3", fleet_rules, 3), RL_OK);
	r = ceiling_of(f, "0", "fp64_fma");
	assert_true(fabs(num(r, "value") /
			 (recorded("fp64_fma", "median") * 1410 /
			  recorded("fp64_fma", "sm_clock_mhz")) - 1) < 1e-15);
	assert_true(num(r, "sm_clock_mhz") == 1410);
	assert_non_null(strstr(stub_host_get(r, "synthetic"), "sm_clock=1410"));
	free(r);
	r = ceiling_of(f, "0", "fp64_add");
	assert_true(num(r, "value") == recorded("fp64_add", "median"));
	assert_true(num(r, "sm_clock_mhz") == recorded("fp64_add", "sm_clock_mhz"));
	free(r);
	r = ceiling_of(f, "1", "fp64_fma");
	assert_true(num(r, "value") == recorded("fp64_fma", "median"));
	free(r);

	/* rl-node4: every figure of both GPUs reports the older driver */
	assert_int_equal(run_on(f, "rl-node4", fleet_rules, 3), RL_OK);
	for (long i = 0; i < stub_host_count(&f->h, "ceiling"); i++) {
		r = stub_host_record(&f->h, "ceiling", i);
		assert_string_equal(stub_host_get(r, "driver"), "535.54");
		assert_non_null(strstr(stub_host_get(r, "synthetic"),
				       "; perturbed: rl-node4/* driver=535.54"));
		free(r);
	}
	r = ceiling_of(f, "1", "hbm_triad");
	assert_true(num(r, "value") == recorded("hbm_triad", "median"));
	free(r);
}

/* The replay's noise: deterministic per seed and name, different across
 * seeds, and with the spread the recorded trials give (d2(9) = 2.970):
 * over 4000 seeds the sample standard deviation of the factor is within
 * 5 % of spread / 2.970, the mean within 4 standard errors of 1. */
static void test_noise(void **state)
{
	const double spread = 1.2, want_sd = 1.2 / 2.970 / 100;
	double sum = 0, sum2 = 0;
	int n = 4000;

	(void)state;
	assert_true(replay_noise_factor(7, "hbm_triad", spread, 9) ==
		    replay_noise_factor(7, "hbm_triad", spread, 9));
	assert_true(replay_noise_factor(7, "hbm_triad", spread, 9) !=
		    replay_noise_factor(8, "hbm_triad", spread, 9));
	assert_true(replay_noise_factor(7, "hbm_triad", spread, 9) !=
		    replay_noise_factor(7, "l2", spread, 9));
	assert_true(replay_noise_factor(7, "l2", -1, 9) == 1);
	assert_true(replay_noise_factor(7, "l2", spread, 1) == 1);
	for (int i = 1; i <= n; i++) {
		double f = replay_noise_factor((unsigned long)i * 2654435761ul,
					       "fp64_fma", spread, 9);

		sum += f, sum2 += f * f;
	}
	{
		double mean = sum / n, sd = sqrt((sum2 - n * mean * mean) / (n - 1));

		assert_true(fabs(sd / want_sd - 1) < 0.05);
		assert_true(fabs(mean - 1) < 4 * want_sd / sqrt(n));
	}
}

static void test_perturb_needs_replay(void **state)
{
	struct fixture *f = *state;

	f->cfg.replay = NULL;
	assert_int_equal((int)run_on(f, "rl-node2", fleet_rules, 1), -1);
	assert_non_null(strstr(f->h.log.buf, "option 'perturb' needs option "
					     "'replay'"));
	f->cfg.replay = FIXTURE;
	assert_int_equal((int)run_on(f, "rl-node2", (char *[]){ "rl-node2/1 hbm -1%" },
				1), -1);
	assert_non_null(strstr(f->h.log.buf, "'hbm' matches no ceiling"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_rules),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_job_gpus),
		cmocka_unit_test(test_uuid_and_label),
		cmocka_unit_test(test_noise),
		cmocka_unit_test_setup_teardown(test_every_job_gpu, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_perturbations, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replay_as_recorded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_perturb_needs_replay, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
