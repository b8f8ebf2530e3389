/*
 * cmd_fleet.c - `roofline fleet`: the fleet step's verdict on every GPU's
 * ceilings of one night (rl_fleet_tonight, sql/023_fleet_tonight.sql), the
 * same rows as the site's tonight page (docs/fleet.md "Tonight at 8,000
 * GPUs"), flagged first.  Row-level security: the facility's runs and the
 * user's own.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_db.h"
#include "cli_json.h"
#include "util.h"

static void fleet_usage(FILE *out)
{
	fprintf(out,
		"usage: roofline fleet [--pipeline NAME] [--run RUN] [--model MODEL]\n"
		"                      [--partition P] [--node TEXT] [--ceiling NAME]\n"
		"                      [--flagged] [--limit N] [--json]\n"
		"\n"
		"Each GPU's measured ceilings of the newest run whose fleet step\n"
		"succeeded (of NAME, or RUN), as %% of its own model's median that night:\n"
		"flagged figures first, then lowest %% first.  One row per GPU and ceiling.\n"
		"\n"
		"  --model MODEL   the GPU model as the driver names it (NVIDIA H200)\n"
		"  --partition P   the Slurm partition ('' : the default one)\n"
		"  --node TEXT     nodes whose name contains TEXT\n"
		"  --ceiling NAME  one ceiling (hbm_triad, fp64_fma, ...)\n"
		"  --flagged       flagged figures only\n"
		"  --limit N       at most N rows (default: all)\n"
		"  --json          one JSON document (docs/json.md)\n"
		"\n"
		"Exit status: 0 listed (also when none matched), 1 failed, 2 usage.\n");
}

struct fleet_args {
	const char *pipeline, *run, *model, *partition, *node, *ceiling, *limit;
	bool flagged, json;
};

static int parse(int argc, char **argv, struct fleet_args *a)
{
	static const struct option longopts[] = {
		{ "pipeline", required_argument, NULL, 'p' }, { "run", required_argument, NULL, 'r' },
		{ "model", required_argument, NULL, 'm' }, { "partition", required_argument, NULL, 'P' },
		{ "node", required_argument, NULL, 'n' }, { "ceiling", required_argument, NULL, 'c' },
		{ "limit", required_argument, NULL, 'l' }, { "flagged", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': a->pipeline = optarg; break;
		case 'r': a->run = optarg; break;
		case 'm': a->model = optarg; break;
		case 'P': a->partition = optarg; break;
		case 'n': a->node = optarg; break;
		case 'c': a->ceiling = optarg; break;
		case 'l': a->limit = optarg; break;
		case 'f': a->flagged = true; break;
		case 'j': a->json = true; break;
		case 'h': fleet_usage(stdout); return 1;
		default: fleet_usage(stderr); return -1;
		}
	}
	if (optind != argc || (a->run && cli_run_id("fleet", a->run) < 0) ||
	    (a->limit && (atol(a->limit) < 1 || strspn(a->limit, "0123456789") != strlen(a->limit)))) {
		fleet_usage(stderr);
		return -1;
	}
	return 0;
}

static void print_text(const struct db_result *r)
{
	printf("%-14s %3s %-24s %-10s %-10s %8s %6s  %s\n", "NODE", "GPU", "MODEL", "PARTITION",
	       "CEILING", "% MEDIAN", "FLAG", "CLASS / CAUSE");
	for (int i = 0; i < db_rows(r); i++)
		printf("%-14s %3s %-24.24s %-10s %-10s %8.1f %6s  %s%s%s\n", db_value(r, i, 3),
		       db_value(r, i, 5) ? db_value(r, i, 5) : "", db_value(r, i, 7),
		       db_value(r, i, 4), db_value(r, i, 8), atof(db_value(r, i, 12)),
		       strcmp(db_value(r, i, 14), "t") ? "" : "yes",
		       db_value(r, i, 15) ? db_value(r, i, 15) : "",
		       db_value(r, i, 17) ? ": " : "", db_value(r, i, 17) ? db_value(r, i, 17) : "");
}

int cmd_fleet(int argc, char **argv)
{
	struct fleet_args a = { 0 };
	struct db_result *r;
	struct db *db;
	int rc = parse(argc, argv, &a);
	const char *params[8];

	if (rc)
		return rc > 0 ? CLI_OK : CLI_USAGE;
	params[0] = a.pipeline, params[1] = a.run, params[2] = a.model;
	params[3] = a.partition, params[4] = a.node, params[5] = a.ceiling;
	params[6] = a.flagged ? "t" : NULL, params[7] = a.limit;
	if (!(db = cli_db_connect("fleet")))
		return CLI_FAILED;
	r = db_query(db, "select * from rl_fleet_tonight($1, $2::bigint) where mode = 'sequential'"
		     " and ($3::text is null or gpu_name = $3) and ($4::text is null or partition = $4)"
		     " and ($5::text is null or strpos(node, $5) > 0) and ($6::text is null or ceiling = $6)"
		     " and ($7::boolean is null or flagged) limit $8::bigint", 8, params);
	if (!r) {
		fprintf(stderr, "roofline fleet: %s\n", db_error(db));
		db_close(db);
		return CLI_FAILED;
	}
	if (a.json) {
		struct json_object *doc = cli_json_object();
		bool synthetic = false;

		for (int i = 0; i < db_rows(r); i++)
			synthetic |= db_value(r, i, 18) != NULL;
		cli_json_set(doc, "run", db_rows(r) ? cli_json_typed(db_value(r, 0, 0), DB_TYPE_INT) : NULL);
		cli_json_set(doc, "pipeline", cli_json_string(db_rows(r) ? db_value(r, 0, 1) : NULL));
		cli_json_set(doc, "night", cli_json_string(db_rows(r) ? db_value(r, 0, 2) : NULL));
		cli_json_set(doc, "synthetic", cli_json_bool(synthetic));
		cli_json_set(doc, "gpus", cli_json_rows(r));
		rc = cli_json_print(doc, false) < 0 ? CLI_FAILED : CLI_OK;
		cli_json_free(doc);
	} else {
		print_text(r);
		rc = CLI_OK;
	}
	db_result_free(r);
	db_close(db);
	return rc;
}
