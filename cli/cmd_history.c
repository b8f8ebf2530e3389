/*
 * roofline history KERNEL - one kernel's performance over time, from the
 * kernel_trend view: when, where, GFLOP/s, AI at each level, % of roof.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_db.h"
#include "cli_json.h"
#include "util.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roofline history [--csv | --json] [--node NODE] [--limit N] KERNEL\n"
		"\n"
		"Prints KERNEL's aggregate roofline point of the newest N runs that\n"
		"profiled it (--limit, default 1000; newest by when the points were\n"
		"stored), oldest first: time, node, GPU, GFLOP/s, AI at L1/L2/DRAM,\n"
		"%% of its roof and verdict.  KERNEL matches the kernel name exactly\n"
		"or as the start of it up to '(' or '<' (so `kernel_A` finds\n"
		"`kernel_A(double *, long, double)`).  --json: the same rows as one\n"
		"JSON document, numbers unrounded but %% of roof (docs/json.md).\n");
}

/*
 * The newest $3 rows of kernel $1 (on node $2 unless it is null), by when
 * their points were stored (kernel_trend.at), stored at or after $4 (all
 * when it is null), oldest first by run_at.  $1 names a kernel exactly or as
 * the start of its name up to '(' or '<'.
 *
 * Over years a kernel has hundreds of thousands of rows: they must come out
 * of the (kernel, at) index newest first and stop at $3, which an index
 * range can do only for one name at a time.  So the names are found first,
 * one index probe each (a skip scan: the least name in the range past the
 * last one found), in three ranges that hold exactly the names that match
 * ("name" itself: [name, name\1); "name(...": [name(, name)); "name<...":
 * [name<, name=); kernel is collate "C", byte order), then each name's newest
 * $3 rows are read through the index, and the newest $3 of those kept.
 * Row-level security applies to both (kernel_points' policy, the view's).
 * run_at (the run's end) follows the points by as long as the run took;
 * choosing by it would read the kernel's whole history to sort it (3 s
 * over 3 years of 500 GPUs, docs/history.md).
 *
 * $4 is a constant when PostgreSQL plans the query (libpq's unnamed
 * statement is planned with its parameters' values), so the months before
 * it are left out of the plan, not only skipped when it runs: planning over
 * every monthly partition of years took longer than the query.
 */
#define HISTORY_QUERY(columns) \
	"with recursive names (kernel, hi) as (" \
	" select (select min(k.kernel) from kernel_points k" \
	"  where k.kernel >= b.lo and k.kernel < b.hi" \
	"  and ($4::timestamptz is null or k.at >= $4)), b.hi" \
	" from (values ($1::text, $1 || chr(1)), ($1 || '(', $1 || ')')," \
	"  ($1 || '<', $1 || '=')) b (lo, hi)" \
	" union all" \
	" select (select min(k.kernel) from kernel_points k" \
	"  where k.kernel > n.kernel and k.kernel < n.hi" \
	"  and ($4::timestamptz is null or k.at >= $4)), n.hi" \
	" from names n where n.kernel is not null)" \
	" select * from (select " columns \
	" from names n cross join lateral (select * from kernel_trend t" \
	"  where t.kernel = n.kernel and ($2::text is null or t.node = $2)" \
	"  and ($4::timestamptz is null or t.at >= $4)" \
	"  order by t.at desc limit $3::int) h" \
	" order by h.at desc limit $3::int) x order by t"

/* The newest rows are looked for in the last HISTORY_RECENT_DAYS days
 * first, where a kernel profiled nightly has them, and in the whole history
 * only when those days have fewer than asked for. */
#define HISTORY_RECENT_DAYS 92

/* --json: the values typed (docs/json.md); t, the sort key, is dropped */
#define JSON_COLUMNS \
	"to_char(run_at, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') as run_at, node," \
	" gpu_name as gpu, gflops, ai_l1, ai_l2, ai_dram," \
	" round(pct_of_roof::numeric, 1) as pct_of_roof, verdict," \
	" run_id as run, h.kernel, run_at as t"
/* the table and --csv: text as printed; columns 0-10, then t */
#define TEXT_COLUMNS \
	"to_char(run_at, 'YYYY-MM-DD HH24:MI'), node," \
	" coalesce(gpu_name, ''), to_char(gflops, 'FM9999990.0')," \
	" coalesce(to_char(ai_l1, 'FM999990.000'), '-')," \
	" coalesce(to_char(ai_l2, 'FM999990.000'), '-')," \
	" coalesce(to_char(ai_dram, 'FM999990.000'), '-')," \
	" coalesce(round(pct_of_roof::numeric, 1)::text, '-')," \
	" coalesce(verdict, ''), run_id, h.kernel, run_at as t"

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

/* The rows, from the recent days or, when they hold fewer than n, from the
 * whole history; NULL on an error (db_error() says which). */
static struct db_result *query_history(struct db *db, bool json,
				       const char *kernel, const char *node,
				       const char *limit, long n)
{
	const char *sql = json ? HISTORY_QUERY(JSON_COLUMNS)
			       : HISTORY_QUERY(TEXT_COLUMNS);
	time_t since = time(NULL) - HISTORY_RECENT_DAYS * 24 * 3600;
	char since_text[40];
	const char *params[] = { kernel, node, limit, since_text };
	struct db_result *r;
	struct tm tm;

	strftime(since_text, sizeof(since_text), "%Y-%m-%d %H:%M:%S+00",
		 gmtime_r(&since, &tm));
	r = db_query(db, sql, 4, params);
	if (!r || db_rows(r) >= n)
		return r;
	db_result_free(r);
	params[3] = NULL;
	return db_query(db, sql, 4, params);
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
	r = query_history(db, json, argv[optind], node, limit, l);
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
