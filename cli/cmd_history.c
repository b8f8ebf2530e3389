/*
 * roofline history KERNEL - one kernel's performance over time, from the
 * kernel_trend view: when, where, GFLOP/s, AI at each level, % of roof.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_db.h"
#include "cli_json.h"
#include "util.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roofline history [--csv | --json] [--node NODE] [--limit N] KERNEL\n"
		"\n"
		"Prints KERNEL's aggregate roofline point of every run that profiled\n"
		"it, oldest first: time, node, GPU, GFLOP/s, AI at L1/L2/DRAM, %% of\n"
		"its roof and verdict.  KERNEL matches the kernel name exactly or as\n"
		"the start of it up to '(' or '<' (so `kernel_A` finds\n"
		"`kernel_A(double *, long, double)`).  --json: the same rows as one\n"
		"JSON document, numbers unrounded but %% of roof (docs/json.md).\n");
}

/* {"history": [rows]}, without the sort key t; the exit status. */
static int print_json(const struct db_result *r)
{
	struct json_object *doc = cli_json_object(), *rows = cli_json_array();
	int rc;

	for (int i = 0; i < db_rows(r); i++) {
		struct json_object *row = cli_json_object();

		/* every column but the last (t, the raw timestamp to sort by) */
		for (int k = 0; k + 1 < db_columns(r); k++)
			cli_json_set(row, db_column_name(r, k),
				     cli_json_typed(db_value(r, i, k),
						    db_column_type(r, k)));
		cli_json_append(rows, row);
	}
	cli_json_set(doc, "history", rows);
	rc = cli_json_print(doc, true);
	cli_json_free(doc);
	if (rc < 0) {
		fprintf(stderr, "roofline history: cannot write the output\n");
		return CLI_FAILED;
	}
	return CLI_OK;
}

int cmd_history(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "csv", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "node", required_argument, NULL, 'n' },
		{ "limit", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *node = NULL, *limit = "1000";
	bool csv = false, json = false;
	struct db_result *r;
	struct db *db;
	long l;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': csv = true; break;
		case 'j': json = true; break;
		case 'n': node = optarg; break;
		case 'l': limit = optarg; break;
		case 'h': usage(stdout); return CLI_OK;
		default: usage(stderr); return CLI_USAGE;
		}
	}
	if (argc - optind != 1 || util_parse_long(limit, &l) < 0 || l <= 0 ||
	    (csv && json)) {
		usage(stderr);
		return CLI_USAGE;
	}
	db = cli_db_connect("history");
	if (!db)
		return CLI_FAILED;
	const char *params[] = { argv[optind], node, limit };

	r = db_query(db, json ?
		"select * from (select to_char(run_at, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
		" as run_at, node, gpu_name as gpu, gflops, ai_l1, ai_l2, ai_dram,"
		" round(pct_of_roof::numeric, 1) as pct_of_roof, verdict,"
		" run_id as run, kernel, run_at as t"
		" from kernel_trend where (kernel = $1"
		" or (kernel >= $1 || '(' and kernel < $1 || ')')"
		" or (kernel >= $1 || '<' and kernel < $1 || '='))"
		" and ($2::text is null or node = $2)"
		" order by t desc limit $3::int) x order by t" :
		"select * from (select to_char(run_at, 'YYYY-MM-DD HH24:MI'), node,"
		" coalesce(gpu_name, ''), to_char(gflops, 'FM9999990.0'),"
		" coalesce(to_char(ai_l1, 'FM999990.000'), '-'),"
		" coalesce(to_char(ai_l2, 'FM999990.000'), '-'),"
		" coalesce(to_char(ai_dram, 'FM999990.000'), '-'),"
		" coalesce(round(pct_of_roof::numeric, 1)::text, '-'),"
		" coalesce(verdict, ''), run_id, kernel, run_at"
		" from kernel_trend where (kernel = $1"
		/* "name(" and "name<" prefixes as ranges: the index serves them */
		" or (kernel >= $1 || '(' and kernel < $1 || ')')"
		" or (kernel >= $1 || '<' and kernel < $1 || '='))"
		" and ($2::text is null or node = $2)"
		" order by run_at desc limit $3::int) x order by run_at",
		3, params);
	if (!r) {
		fprintf(stderr, "roofline history: %s\n", db_error(db));
		db_close(db);
		return CLI_FAILED;
	}
	if (json && db_rows(r) > 0) {
		c = print_json(r);
		db_result_free(r);
		db_close(db);
		return c;
	}
	if (db_rows(r) == 0)
		fprintf(stderr, "roofline history: no runs profiled '%s'\n",
			argv[optind]);
	else if (csv)
		printf("run_at,node,gpu,gflops,ai_l1,ai_l2,ai_dram,pct_of_roof,verdict,run,kernel\n");
	else
		printf("%-16s %-10s %-22s %10s %9s %9s %9s %6s %-18s %s\n", "WHEN",
		       "NODE", "GPU", "GFLOP/s", "AI L1", "AI L2", "AI DRAM",
		       "%ROOF", "VERDICT", "RUN");
	for (int i = 0; i < db_rows(r); i++) {
		if (csv) {
			for (int k = 0; k <= 10; k++) {
				if (k)
					putchar(',');
				cli_csv_field(db_value(r, i, k));
			}
			putchar('\n');
		} else {
			printf("%-16s %-10s %-22.22s %10s %9s %9s %9s %6s %-18s %s\n",
			       db_value(r, i, 0), db_value(r, i, 1), db_value(r, i, 2),
			       db_value(r, i, 3), db_value(r, i, 4), db_value(r, i, 5),
			       db_value(r, i, 6), db_value(r, i, 7), db_value(r, i, 8),
			       db_value(r, i, 9));
		}
	}
	c = db_rows(r) ? CLI_OK : CLI_FAILED;
	db_result_free(r);
	db_close(db);
	return c;
}
