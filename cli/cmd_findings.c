/*
 * cmd_findings.c - `roofline findings` (what got worse, where, by how much,
 * probably why) and `roofline ack` (acknowledge, resolve or reopen them).
 *
 * Findings are written by the fleet and regressions plugins through the
 * daemon (sql/010_findings.sql, docs/findings.md); row-level security shows
 * a user the findings of their own runs and the facility's, and lets them
 * change those of their own runs (staff: any they see).
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

static void findings_usage(FILE *out)
{
	fprintf(out,
		"usage: roofline findings [--since AGE|DATE] [--state STATE] [--scope gpu|kernel]\n"
		"                         [--json]\n"
		"\n"
		"Lists the findings seen since AGE ago (e.g. 7d, 2w, 24h; default 7d) or\n"
		"DATE (YYYY-MM-DD), newest night first: GPUs whose ceilings fell below\n"
		"their fleet or their own past (scope gpu), kernels that dropped, moved\n"
		"left or lost their roof (scope kernel).  Yours and the facility's.\n"
		"\n"
		"  --state STATE   new, acknowledged, resolved, or open (new and\n"
		"                  acknowledged); default: every state\n"
		"  --scope SCOPE   gpu or kernel\n"
		"  --json          one JSON document (docs/json.md)\n"
		"\n"
		"Exit status: 0 listed (also when there is none), 1 failed, 2 usage.\n");
}

/* "7d", "2w", "24h" -> a PostgreSQL interval; a date stays a date. */
static int since_param(const char *arg, char *buf, size_t size, bool *is_date)
{
	char *end;
	long n = strtol(arg, &end, 10);

	*is_date = false;
	if (strlen(arg) == 10 && arg[4] == '-' && arg[7] == '-') {
		*is_date = true;
		snprintf(buf, size, "%s", arg);
		return 0;
	}
	if (end == arg || n < 0 || n > 100000 || end[0] == '\0' || end[1] != '\0')
		return -1;
	switch (*end) {
	case 'h': snprintf(buf, size, "%ld hours", n); return 0;
	case 'd': snprintf(buf, size, "%ld days", n); return 0;
	case 'w': snprintf(buf, size, "%ld days", 7 * n); return 0;
	default: return -1;
	}
}

#define FINDINGS_SQL \
	"select id, state, severity, scope, pipeline_name as pipeline, " \
	"coalesce(node, '') as node, subject, measure, class, " \
	"round(value::numeric, 6)::float8 as value, " \
	"round(reference::numeric, 6)::float8 as reference, " \
	"round(drop_pct::numeric, 2)::float8 as drop_pct, " \
	"round(threshold_pct::numeric, 2)::float8 as threshold_pct, " \
	"round(noise_pct::numeric, 3)::float8 as noise_pct, nights, " \
	"first_night, last_night, last_run, coalesce(cause, '') as cause, " \
	"coalesce(state_by::text, '') as state_by " \
	"from findings where " \
	"($1::date is null or last_night >= $1::date) and " \
	"($2::interval is null or last_night >= (now() at time zone 'UTC')::date - $2::interval) and " \
	"($3::text is null or state = $3 or ($3 = 'open' and state <> 'resolved')) and " \
	"($4::text is null or scope = $4) " \
	"order by last_night desc, severity, id"

static void print_findings(const struct db_result *r)
{
	printf("%-5s %-12s %-8s %-6s %-10s %-28s %-10s %-14s %7s %7s %6s %-10s %s\n",
	       "ID", "STATE", "SEVERITY", "SCOPE", "NODE", "SUBJECT", "MEASURE",
	       "CLASS", "DROP%", "THRESH%", "NIGHTS", "LAST", "CAUSE");
	for (int i = 0; i < db_rows(r); i++)
		printf("%-5s %-12s %-8s %-6s %-10s %-28s %-10s %-14s %7s %7s %6s %-10s %s\n",
		       db_value(r, i, 0), db_value(r, i, 1), db_value(r, i, 2),
		       db_value(r, i, 3), db_value(r, i, 5)[0] ? db_value(r, i, 5) : "-",
		       db_value(r, i, 6), db_value(r, i, 7), db_value(r, i, 8),
		       db_value(r, i, 11) ? db_value(r, i, 11) : "-",
		       db_value(r, i, 12) ? db_value(r, i, 12) : "-",
		       db_value(r, i, 14), db_value(r, i, 16),
		       db_value(r, i, 18)[0] ? db_value(r, i, 18) : "-");
	printf("%d finding%s\n", db_rows(r), db_rows(r) == 1 ? "" : "s");
}

int cmd_findings(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "state", required_argument, NULL, 't' },
		{ "scope", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *since = "7d", *state = NULL, *scope = NULL;
	char since_buf[32];
	bool json = false, is_date;
	struct db_result *r;
	struct db *db;
	int c, rc = CLI_FAILED;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': since = optarg; break;
		case 't': state = optarg; break;
		case 'c': scope = optarg; break;
		case 'j': json = true; break;
		case 'h': findings_usage(stdout); return CLI_OK;
		default: findings_usage(stderr); return CLI_USAGE;
		}
	}
	if (optind != argc || since_param(since, since_buf, sizeof(since_buf), &is_date) < 0 ||
	    (state && strcmp(state, "new") && strcmp(state, "acknowledged") &&
	     strcmp(state, "resolved") && strcmp(state, "open")) ||
	    (scope && strcmp(scope, "gpu") && strcmp(scope, "kernel"))) {
		findings_usage(stderr);
		return CLI_USAGE;
	}
	db = cli_db_connect("findings");
	if (!db)
		return CLI_FAILED;
	{
		const char *params[] = { is_date ? since_buf : NULL,
					 is_date ? NULL : since_buf, state, scope };

		r = db_query(db, FINDINGS_SQL, 4, params);
	}
	if (!r) {
		fprintf(stderr, "roofline findings: %s\n", db_error(db));
		goto out;
	}
	if (json) {
		struct json_object *doc = cli_json_object();

		cli_json_set(doc, "findings", cli_json_rows(r));
		rc = cli_json_print(doc, true) < 0 ? CLI_FAILED : CLI_OK;
		cli_json_free(doc);
	} else {
		print_findings(r);
		rc = CLI_OK;
	}
	db_result_free(r);
out:
	db_close(db);
	return rc;
}

static void ack_usage(FILE *out)
{
	fprintf(out,
		"usage: roofline ack [--resolve | --reopen] FINDING...\n"
		"\n"
		"Marks findings acknowledged (default), resolved, or new again; the\n"
		"database records who and when (findings.state_by, state_at).  You may\n"
		"change the findings of your own runs; facility staff (members of\n"
		"roofline_staff) any they can see.  A resolved finding that recurs\n"
		"starts a new one.\n"
		"\n"
		"Exit status: 0 every finding changed, 1 some could not be (each named),\n"
		"2 usage.\n");
}

int cmd_ack(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "resolve", no_argument, NULL, 'r' },
		{ "reopen", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *state = "acknowledged";
	struct db *db;
	int c, rc = CLI_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': state = "resolved"; break;
		case 'o': state = "new"; break;
		case 'h': ack_usage(stdout); return CLI_OK;
		default: ack_usage(stderr); return CLI_USAGE;
		}
	}
	if (optind == argc) {
		ack_usage(stderr);
		return CLI_USAGE;
	}
	for (int i = optind; i < argc; i++)
		if (cli_run_id("ack", argv[i]) < 0)
			return CLI_USAGE;
	db = cli_db_connect("ack");
	if (!db)
		return CLI_FAILED;
	for (int i = optind; i < argc; i++) {
		const char *params[] = { argv[i], state };
		long n = db_exec(db, "update findings set state = $2 where id = $1::bigint",
				 2, params);

		if (n == 1) {
			printf("finding %s: %s\n", argv[i], state);
		} else {
			fprintf(stderr, "roofline ack: finding %s: %s\n", argv[i],
				n < 0 ? db_error(db) : "no such finding that you may change");
			rc = CLI_FAILED;
		}
	}
	db_close(db);
	return rc;
}
