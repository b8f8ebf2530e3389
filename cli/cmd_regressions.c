/*
 * cmd_regressions.c - `roofline regressions RUN [--baseline RUN]`: each
 * kernel of a run against a baseline run, on the roofline, with the rule
 * the regressions plugin applies (common/judge.h: judge_point).  Its exit
 * status gates a CI job: 0 nothing regressed, 1 something did.
 *
 * The inputs come from the SQL functions the daemon's history sets use
 * (sql/010_findings.sql: rl_baseline_run, rl_run_points, rl_kernel_noise),
 * paired here by one full join, so both judge the same figures.
 */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_db.h"
#include "cli_json.h"
#include "judge.h"
#include "util.h"

/* Exit statuses (a CI job gates on 0 and 1). */
#define REGRESS_NONE 0
#define REGRESS_FOUND 1
#define REGRESS_ERROR 2

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roofline regressions RUN [--baseline RUN] [--lookback N] [--k K]\n"
		"                            [--floor PCT] [--json]\n"
		"\n"
		"Compares each kernel of RUN, per level and precision, with the\n"
		"baseline run (default: the previous successful run of the same\n"
		"pipeline on the same GPU model) and classifies it: unchanged, faster,\n"
		"dropped (same AI, lower FLOP/s), moved left (AI fell: more traffic per\n"
		"FLOP), roof changed (slower, and the node's own ceiling fell with it),\n"
		"new, gone.  Thresholds: max(floor, k x the kernel's own spread over its\n"
		"latest N earlier runs) (docs/findings.md).\n"
		"\n"
		"  --baseline RUN  the run to compare with\n"
		"  --lookback N    earlier runs that make a kernel's spread (default 10)\n"
		"  --k K           noise multiplier (default " JUDGE_DEFAULT_K ")\n"
		"  --floor PCT     smallest change that counts (default " JUDGE_DEFAULT_FLOOR_PCT ")\n"
		"  --json          one JSON document (docs/json.md)\n"
		"\n"
		"Exit status: 0 nothing regressed, 1 something did (dropped, moved left\n"
		"or roof changed), 2 usage or no comparison possible.\n");
}

#define PAIRS_SQL \
	"with n as (select * from rl_run_points($1::bigint)), " \
	"b as (select * from rl_run_points($2::bigint)), " \
	"z as (select * from rl_kernel_noise($1::bigint, $3::integer)) " \
	"select kernel, \"precision\", level, n.ai, n.gflops, n.roof, b.ai, " \
	"b.gflops, b.roof, z.n, z.ai_cv, z.gflops_cv " \
	"from n full join b using (kernel, level, \"precision\") " \
	"left join z using (kernel, level, \"precision\") " \
	"order by kernel, \"precision\", level"

static double val(const struct db_result *r, int row, int col)
{
	const char *v = db_value(r, row, col);

	return v ? strtod(v, NULL) : NAN;
}

static struct json_object *num_or_null(double v)
{
	char buf[40];

	if (isnan(v))
		return NULL;
	snprintf(buf, sizeof(buf), "%.6g", v);
	return cli_json_typed(buf, DB_TYPE_FLOAT);
}

static struct json_object *point_json(const struct db_result *r, int i,
				      const struct judge_point_result *res)
{
	struct json_object *o = cli_json_object();

	cli_json_set(o, "kernel", cli_json_string(db_value(r, i, 0)));
	cli_json_set(o, "precision", cli_json_string(db_value(r, i, 1)));
	cli_json_set(o, "level", cli_json_string(db_value(r, i, 2)));
	cli_json_set(o, "class", cli_json_string(judge_class_name(res->class)));
	cli_json_set(o, "regressed", cli_json_bool(judge_class_regressed(res->class)));
	cli_json_set(o, "ai", num_or_null(val(r, i, 3)));
	cli_json_set(o, "baseline_ai", num_or_null(val(r, i, 6)));
	cli_json_set(o, "gflops", num_or_null(val(r, i, 4)));
	cli_json_set(o, "baseline_gflops", num_or_null(val(r, i, 7)));
	cli_json_set(o, "ai_change_pct", num_or_null(res->ai_change_pct));
	cli_json_set(o, "gflops_change_pct", num_or_null(res->gflops_change_pct));
	cli_json_set(o, "roof_change_pct", num_or_null(res->roof_change_pct));
	cli_json_set(o, "ai_threshold_pct", num_or_null(res->ai_threshold_pct));
	cli_json_set(o, "gflops_threshold_pct", num_or_null(res->gflops_threshold_pct));
	return o;
}

static void pct(char *buf, size_t size, double v)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%+.1f", v);
}

/* Judge every pair; print the table or fill doc.  The count regressed. */
static int judge_pairs(const struct db_result *r, const struct judge_params *p,
		       struct json_object *points)
{
	int regressed = 0;

	if (!points)
		printf("%-32s %-9s %-5s %-13s %9s %9s %9s\n", "KERNEL", "PRECISION",
		       "LEVEL", "CLASS", "AI%", "GFLOP/s%", "ROOF%");
	for (int i = 0; i < db_rows(r); i++) {
		struct judge_point now = { val(r, i, 3), val(r, i, 4), val(r, i, 5) };
		struct judge_point base = { val(r, i, 6), val(r, i, 7), val(r, i, 8) };
		struct judge_point_noise noise = { db_value(r, i, 9) ? db_long(r, i, 9) : 0,
						   val(r, i, 10), val(r, i, 11) };
		struct judge_point_result res;
		char a[16], g[16], f[16];

		judge_point(p, db_value(r, i, 3) ? &now : NULL,
			    db_value(r, i, 6) ? &base : NULL,
			    db_value(r, i, 9) ? &noise : NULL, &res);
		regressed += judge_class_regressed(res.class);
		if (points) {
			cli_json_append(points, point_json(r, i, &res));
			continue;
		}
		pct(a, sizeof(a), res.ai_change_pct);
		pct(g, sizeof(g), res.gflops_change_pct);
		pct(f, sizeof(f), res.roof_change_pct);
		printf("%-32s %-9s %-5s %-13s %9s %9s %9s\n", db_value(r, i, 0),
		       db_value(r, i, 1), db_value(r, i, 2),
		       judge_class_name(res.class), a, g, f);
	}
	return regressed;
}

/* The baseline: the option (a run the caller can see), else the default. */
static int find_baseline(struct db *db, const char *run, const char *opt,
			 char *out, size_t size)
{
	const char *params[] = { opt ? opt : run };
	struct db_result *r = db_query(db, opt ? "select id from runs where id = $1::bigint"
					       : "select rl_baseline_run($1::bigint)",
				       1, params);

	out[0] = '\0';
	if (!r) {
		fprintf(stderr, "roofline regressions: %s\n", db_error(db));
		return -1;
	}
	if (db_rows(r) == 1 && db_value(r, 0, 0))
		snprintf(out, size, "%s", db_value(r, 0, 0));
	db_result_free(r);
	if (!out[0])
		fprintf(stderr, "roofline regressions: %s\n",
			opt ? "no such baseline run of yours"
			    : "no earlier successful run of this pipeline on the "
			      "same GPU model to compare with (--baseline RUN)");
	return out[0] ? 0 : -1;
}

int cmd_regressions(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "baseline", required_argument, NULL, 'b' },
		{ "lookback", required_argument, NULL, 'l' },
		{ "k", required_argument, NULL, 'k' },
		{ "floor", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct judge_params p = { atof(JUDGE_DEFAULT_K), atof(JUDGE_DEFAULT_FLOOR_PCT),
				  2, atol(JUDGE_DEFAULT_MIN_HISTORY) };
	const char *baseline_opt = NULL, *lookback = "10";
	char run[32], baseline[32];
	struct db_result *r = NULL;
	struct db *db = NULL;
	bool json = false;
	long n;
	int c, rc = REGRESS_ERROR;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': baseline_opt = optarg; break;
		case 'l': lookback = optarg; break;
		case 'k': p.k = atof(optarg); break;
		case 'f': p.floor_pct = atof(optarg); break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return REGRESS_NONE;
		default: usage(stderr); return REGRESS_ERROR;
		}
	}
	if (argc - optind != 1 || !(p.k > 0) || !(p.floor_pct >= 0) ||
	    util_parse_long(lookback, &n) < 0 || n < 1 ||
	    (baseline_opt && cli_run_id("regressions", baseline_opt) < 0) ||
	    cli_run_id("regressions", argv[optind]) < 0) {
		usage(stderr);
		return REGRESS_ERROR;
	}
	snprintf(run, sizeof(run), "%ld", cli_run_id("regressions", argv[optind]));
	db = cli_db_connect("regressions");
	if (!db || find_baseline(db, run, baseline_opt, baseline, sizeof(baseline)) < 0)
		goto out;
	{
		const char *params[] = { run, baseline, lookback };

		r = db_query(db, PAIRS_SQL, 3, params);
	}
	if (!r) {
		fprintf(stderr, "roofline regressions: %s\n", db_error(db));
		goto out;
	}
	if (json) {
		struct json_object *doc = cli_json_object(), *points = cli_json_array();
		int found = judge_pairs(r, &p, points);

		cli_json_set(doc, "run", cli_json_int(atol(run)));
		cli_json_set(doc, "baseline", cli_json_int(atol(baseline)));
		cli_json_set(doc, "regressed", cli_json_int(found));
		cli_json_set(doc, "points", points);
		rc = cli_json_print(doc, true) < 0 ? REGRESS_ERROR
			: found ? REGRESS_FOUND : REGRESS_NONE;
		cli_json_free(doc);
	} else {
		int found;

		printf("run %s against run %s\n", run, baseline);
		found = judge_pairs(r, &p, NULL);
		printf("%d point%s regressed\n", found, found == 1 ? "" : "s");
		rc = found ? REGRESS_FOUND : REGRESS_NONE;
	}
out:
	db_result_free(r);
	db_close(db);
	return rc;
}
