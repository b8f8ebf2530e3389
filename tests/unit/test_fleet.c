/*
 * test_fleet - plugins/fleet.c against the stand-in host.  Tonight's fleet
 * is built from the recorded H100 (tests/fixtures/ert/h100-quick.tsv): 8
 * GPUs, each given every recorded ceiling with its recorded median, spread
 * and trials, then changed here (synthetic, labelled): GPU 3's HBM triad
 * 12 % low, GPU 5's FP64 FMA at a 1410 MHz clock, GPU 6 with a history
 * whose shared-memory median was 10 % higher than tonight.  Exactly those three are
 * flagged, with the right class and cause; a model of two GPUs is judged
 * against its history only.
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

#include "../../plugins/fleet.c"
#include "stub_host.h"
#include "util.h"

#define REC "tests/fixtures/ert/h100-quick.tsv"

struct ceil { char name[64], median[64], spread[64], trials[16], clock[16], thr[16]; };

/* The recording's ceiling lines: name, median, spread_pct, trials, clocks. */
static size_t read_recording(struct ceil *c, size_t max, char *model, size_t msize)
{
	FILE *f = fopen(REC, "r");
	char line[4096];
	size_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && n < max) {
		char *save = NULL, *tok = strtok_r(line, "\t\n", &save);
		int is_ceiling = tok && !strcmp(tok, "ceiling");

		if (tok && !strcmp(tok, "attr"))
			while ((tok = strtok_r(NULL, "\t\n", &save)))
				if (!strncmp(tok, "name=", 5))
					snprintf(model, msize, "%s", tok + 5);
		if (!is_ceiling)
			continue;
		memset(&c[n], 0, sizeof(c[n]));
		while ((tok = strtok_r(NULL, "\t\n", &save))) {
			char *eq = strchr(tok, '=');
			char *dst = NULL;
			size_t size = 0;

			if (!eq)
				continue;
			*eq = '\0';
#define F(k, field) else if (!strcmp(tok, k)) dst = c[n].field, size = sizeof(c[n].field)
			if (0) {}
			F("name", name); F("median", median); F("spread_pct", spread);
			F("trials", trials); F("sm_clock_mhz", clock); F("throttle", thr);
#undef F
			if (dst)
				snprintf(dst, size, "%s", eq + 1);
		}
		n++;
	}
	fclose(f);
	return n;
}

/* Write tonight's ceiling records for GPUs 0..ngpu-1 of `model` to path. */
static void write_fleet(const char *path, const struct ceil *c, size_t nc,
			const char *model, int ngpu)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb);
	for (int g = 0; g < ngpu; g++)
		for (size_t i = 0; i < nc; i++) {
			char uuid[32], idx[8], value[64], clock[16];
			double v = strtod(c[i].median, NULL);

			snprintf(uuid, sizeof(uuid), "GPU-t-%d", g);
			snprintf(idx, sizeof(idx), "%d", g % 2);
			snprintf(clock, sizeof(clock), "%s", c[i].clock);
			if (g == 3 && !strcmp(c[i].name, "hbm_triad"))
				v *= 0.88;
			if (g == 5 && !strcmp(c[i].name, "fp64_fma"))
				v *= 1410.0 / 1980, snprintf(clock, sizeof(clock), "1410");
			snprintf(value, sizeof(value), "%.17g", v);
			assert_int_equal(records_format(&sb, "ceiling", (const struct rl_field[]){
				{ "node", g < 4 ? "n1" : "n2" }, { "gpu_index", idx },
				{ "gpu_uuid", uuid }, { "gpu_name", model },
				{ "driver", "580.159.04" }, { "method", "empirical" },
				{ "name", c[i].name }, { "value", value },
				{ "trials", c[i].trials }, { "spread_pct", c[i].spread },
				{ "sm_clock_mhz", clock }, { "sm_clock_max_mhz", "1980" },
				{ "throttle", c[i].thr },
				{ "synthetic", "test: the recording with declared changes" },
				{ NULL, NULL } }), 0);
		}
	assert_int_equal(util_write_file_replace(path, sb.buf, sb.len, 0600), 0);
	strbuf_release(&sb);
}

/* GPU 6's history: five nights, its shared-memory median 10 % above
 * tonight's. */
static void write_history(const char *path, const struct ceil *c, size_t nc)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb);
	assert_int_equal(records_format(&sb, "run", (const struct rl_field[]){
		{ "run", "7" }, { "night", "2026-11-20" }, { NULL, NULL } }), 0);
	for (size_t i = 0; i < nc; i++) {
		char median[64];

		if (strcmp(c[i].name, "shared"))
			continue;
		snprintf(median, sizeof(median), "%.17g", strtod(c[i].median, NULL) * 1.1);
		assert_int_equal(records_format(&sb, "gpu_history", (const struct rl_field[]){
			{ "gpu_uuid", "GPU-t-6" }, { "name", "shared" }, { "n", "5" },
			{ "median", median }, { "sd", "0" },
			{ "last_driver", "580.159.04" }, { NULL, NULL } }), 0);
	}
	assert_int_equal(util_write_file_replace(path, sb.buf, sb.len, 0600), 0);
	strbuf_release(&sb);
}

static const struct fleet_config CFG = { .nights = 14, .k = 4, .floor_pct = 3,
					 .min_fleet = 3, .min_history = 3 };

static void test_fleet(void **state)
{
	char dir[] = "/tmp/test_fleet.XXXXXX", fleet[64], hist[64], model[128] = "";
	struct ceil c[64];
	size_t nc = read_recording(c, 64, model, sizeof(model));
	struct stub_host h;
	char *rec;
	int saw_shared = 0;

	(void)state;
	assert_true(nc >= 8);
	for (size_t i = 0; i < nc; i++)
		saw_shared |= !strcmp(c[i].name, "shared");
	assert_true(saw_shared);
	assert_non_null(mkdtemp(dir));
	snprintf(fleet, sizeof(fleet), "%s/fleet.tsv", dir);
	snprintf(hist, sizeof(hist), "%s/history.tsv", dir);
	write_fleet(fleet, c, nc, model, 8);
	write_history(hist, c, nc);
	stub_host_init(&h, dir, dir);
	stub_host_add_input(&h, "ert", fleet);
	stub_host_add_input(&h, "history", hist);
	assert_int_equal(fleet_run(&h.ctx, &CFG, NULL), RL_OK);
	assert_int_equal(stub_host_count(&h, "fleet_gpu"), (long)(8 * nc));
	assert_int_equal(stub_host_count(&h, "finding"), 3);
	for (long i = 0; i < stub_host_count(&h, "finding"); i++) {
		rec = stub_host_record(&h, "finding", i);
		if (!strcmp(stub_host_get(rec, "subject"), "GPU-t-3")) {
			assert_string_equal(stub_host_get(rec, "measure"), "hbm_triad");
			assert_string_equal(stub_host_get(rec, "class"), "fleet outlier");
			assert_true(fabs(strtod(stub_host_get(rec, "drop_pct"), NULL) - 12) < 0.01);
			assert_string_equal(stub_host_get(rec, "severity"), "critical");
		} else if (!strcmp(stub_host_get(rec, "subject"), "GPU-t-5")) {
			assert_string_equal(stub_host_get(rec, "measure"), "fp64_fma");
			assert_non_null(strstr(stub_host_get(rec, "cause"),
					       "SM clock 1410 MHz, below its maximum 1980 MHz"));
		} else {
			assert_string_equal(stub_host_get(rec, "subject"), "GPU-t-6");
			assert_string_equal(stub_host_get(rec, "measure"), "shared");
			assert_string_equal(stub_host_get(rec, "class"), "own history");
			assert_string_equal(stub_host_get(rec, "night"), "2026-11-20");
		}
		free(rec);
	}
	rec = stub_host_record(&h, "fleet_summary", 0);
	assert_string_equal(stub_host_get(rec, "gpus"), "8");
	assert_string_equal(stub_host_get(rec, "models"), "1");
	free(rec);

	/* two GPUs of the model: no fleet comparison, history only */
	write_fleet(fleet, c, nc, model, 2);
	stub_host_reset(&h);
	assert_int_equal(fleet_run(&h.ctx, &CFG, NULL), RL_OK);
	assert_int_equal(stub_host_count(&h, "finding"), 0);

	/* bad options fail */
	{
		struct fleet_config bad = CFG;

		bad.k = 0;
		stub_host_reset(&h);
		assert_int_equal(fleet_run(&h.ctx, &bad, NULL), RL_FAIL);
		/* a window longer than the year PostgreSQL keeps (sql/014) */
		bad = CFG;
		bad.nights = 367;
		stub_host_reset(&h);
		assert_int_equal(fleet_run(&h.ctx, &bad, NULL), RL_FAIL);
		bad.nights = 366;
		stub_host_reset(&h);
		assert_int_equal(fleet_run(&h.ctx, &bad, NULL), RL_OK);
	}
	stub_host_release(&h);
	unlink(fleet);
	unlink(hist);
	rmdir(dir);
}

/*
 * Like with like (issue 29): 8 GPUs measured one after the other and the 4
 * of node n1 also measured all at once (mode concurrent), each figure 15 %
 * lower (synthetic: a node sharing its power).  The concurrent figures are
 * judged among themselves: nothing is flagged, and every fleet_gpu record
 * names its mode.  Compared with the sequential ones, all 4 x nc would be
 * fleet outliers.
 */
static void test_modes(void **state)
{
	char dir[] = "/tmp/test_fleet.XXXXXX", path[64], model[128] = "";
	struct ceil c[64];
	size_t nc = read_recording(c, 64, model, sizeof(model));
	struct strbuf sb = STRBUF_INIT;
	struct stub_host h;
	long conc = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fleet.tsv", dir);
	strbuf_init(&sb);
	for (int pass = 0; pass < 2; pass++)
		for (int g = 0; g < (pass ? 4 : 8); g++)
			for (size_t i = 0; i < nc; i++) {
				char uuid[32], idx[8], value[64];

				snprintf(uuid, sizeof(uuid), "GPU-t-%d", g);
				snprintf(idx, sizeof(idx), "%d", g % 4);
				snprintf(value, sizeof(value), "%.17g",
					 strtod(c[i].median, NULL) * (pass ? 0.85 : 1));
				assert_int_equal(records_format(&sb, "ceiling", (const struct rl_field[]){
					{ "node", g < 4 ? "n1" : "n2" }, { "gpu_index", idx },
					{ "gpu_uuid", uuid }, { "gpu_name", model },
					{ "method", "empirical" }, { "name", c[i].name },
					{ "value", value }, { "trials", c[i].trials },
					{ "spread_pct", c[i].spread },
					{ "mode", pass ? "concurrent" : "sequential" },
					{ "synthetic", "test: concurrent 15 % low" },
					{ NULL, NULL } }), 0);
			}
	assert_int_equal(util_write_file_replace(path, sb.buf, sb.len, 0600), 0);
	strbuf_release(&sb);
	stub_host_init(&h, dir, dir);
	stub_host_add_input(&h, "ert", path);
	assert_int_equal(fleet_run(&h.ctx, &CFG, NULL), RL_OK);
	assert_int_equal(stub_host_count(&h, "fleet_gpu"), (long)(12 * nc));
	assert_int_equal(stub_host_count(&h, "finding"), 0);
	for (long i = 0; i < stub_host_count(&h, "fleet_gpu"); i++) {
		char *rec = stub_host_record(&h, "fleet_gpu", i);

		if (!strcmp(stub_host_get(rec, "mode"), "concurrent")) {
			conc++;
			assert_string_equal(stub_host_get(rec, "node"), "n1");
			assert_true(fabs(strtod(stub_host_get(rec, "pct_of_median"),
						NULL) - 100) < 0.01);
		} else {
			assert_string_equal(stub_host_get(rec, "mode"), "sequential");
		}
		free(rec);
	}
	assert_int_equal(conc, (long)(4 * nc));
	stub_host_release(&h);
	unlink(path);
	rmdir(dir);
}

/* Two models on the same nodes (issue 27): each node holds two GPUs of
 * the recorded model and two of a second one, stood for by the recorded
 * figures x 1.3 (as an H200's HBM is to an H100's).  Each GPU is judged
 * against its own model: nothing is flagged but the second model's one GPU
 * 12 % low on HBM, whose fleet median is its model's.  Judged against all
 * eight GPUs, every GPU of one model would be 13-23 % off. */
static void test_mixed_models(void **state)
{
	char dir[] = "/tmp/test_fleet.XXXXXX", path[64], model[128] = "";
	struct ceil c[64];
	size_t nc = read_recording(c, 64, model, sizeof(model));
	struct strbuf sb = STRBUF_INIT;
	struct stub_host h;
	double hbm = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fleet.tsv", dir);
	strbuf_init(&sb);
	for (int g = 0; g < 8; g++)
		for (size_t i = 0; i < nc; i++) {
			char uuid[32], idx[8], value[64];
			bool second = g % 4 >= 2, sick = g == 6 && !strcmp(c[i].name, "hbm_triad");

			snprintf(uuid, sizeof(uuid), "GPU-m-%d", g);
			snprintf(idx, sizeof(idx), "%d", g % 4);
			snprintf(value, sizeof(value), "%.17g", strtod(c[i].median, NULL) *
				 (second ? 1.3 : 1) * (sick ? 0.88 : 1));
			if (second && !strcmp(c[i].name, "hbm_triad") && !sick)
				hbm = strtod(value, NULL);
			assert_int_equal(records_format(&sb, "ceiling", (const struct rl_field[]){
				{ "node", g < 4 ? "n1" : "n2" }, { "gpu_index", idx },
				{ "gpu_uuid", uuid }, { "gpu_name", second ? "second model" : model },
				{ "method", "empirical" }, { "name", c[i].name },
				{ "value", value }, { "trials", c[i].trials },
				{ "spread_pct", c[i].spread },
				{ "synthetic", "test: a second model = recording x 1.3" },
				{ NULL, NULL } }), 0);
		}
	assert_int_equal(util_write_file_replace(path, sb.buf, sb.len, 0600), 0);
	strbuf_release(&sb);
	stub_host_init(&h, dir, dir);
	stub_host_add_input(&h, "ert", path);
	assert_int_equal(fleet_run(&h.ctx, &CFG, NULL), RL_OK);
	assert_int_equal(stub_host_count(&h, "fleet_gpu"), (long)(8 * nc));
	assert_int_equal(stub_host_count(&h, "finding"), 1);
	{
		char *rec = stub_host_record(&h, "finding", 0);

		assert_string_equal(stub_host_get(rec, "subject"), "GPU-m-6");
		assert_string_equal(stub_host_get(rec, "measure"), "hbm_triad");
		assert_string_equal(stub_host_get(rec, "gpu_name"), "second model");
		assert_string_equal(stub_host_get(rec, "node"), "n2");
		assert_true(fabs(strtod(stub_host_get(rec, "fleet_median"), NULL) / hbm - 1) < 1e-9);
		free(rec);
	}
	for (long i = 0; i < stub_host_count(&h, "fleet_gpu"); i++) {
		char *rec = stub_host_record(&h, "fleet_gpu", i);

		assert_true(*stub_host_get(rec, "threshold_pct") != '\0');
		free(rec);
	}
	stub_host_release(&h);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fleet),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_mixed_models),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
