/*
 * roofline open RUN - where a run's HTML report is: its path in the spool
 * and a file:// URL, or, with a site base URL (--url or $ROOFLINE_WEB_URL),
 * the report's address on the facility site (daemon/site.h names the
 * layout: runs/run-N.html for facility runs, users/OWNER/run-N.html for
 * users').
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_db.h"
#include "util.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roofline open [--url BASE] RUN\n"
		"\n"
		"Prints the path of RUN's HTML report (the `report` step's page) and a\n"
		"file:// URL to open it with.  With a base URL (--url, or the\n"
		"environment's ROOFLINE_WEB_URL: where the facility serves the site\n"
		"that rooflined's web_root holds), the second line is the report's\n"
		"address on the site instead.  Exit 1 when the run has no report (yet).\n");
}

/* Append s percent-encoded for a URL path. */
static void url_path(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
			putchar(*p);
		else
			printf("%%%02X", *p);
	}
}

int cmd_open(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *base = getenv("ROOFLINE_WEB_URL");
	struct db_result *r;
	struct db *db;
	char id[32];
	long run;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u': base = optarg; break;
		case 'h': usage(stdout); return CLI_OK;
		default: usage(stderr); return CLI_USAGE;
		}
	}
	if (argc - optind != 1) {
		usage(stderr);
		return CLI_USAGE;
	}
	run = cli_run_id("open", argv[optind]);
	if (run < 0)
		return CLI_USAGE;
	db = cli_db_connect("open");
	if (!db)
		return CLI_FAILED;
	snprintf(id, sizeof(id), "%ld", run);
	const char *params[] = { id };

	r = db_query(db,
		"select r.spool_dir || '/' || s.step_id || case when s.node = '' then ''"
		" else '@' || s.node end || '/attempt-' || x.attempt || '/' ||"
		" (x.fields->>'file'), case when r.facility then 'runs/' else 'users/' ||"
		" r.owner || '/' end || 'run-' || r.id || '.html'"
		" from runs r join step_records x on x.run_id = r.id and x.kind = 'report'"
		" join steps s on s.id = x.step where r.id = $1::bigint"
		" order by x.step desc, x.attempt desc limit 1", 1, params);
	if (!r) {
		fprintf(stderr, "roofline open: %s\n", db_error(db));
		db_close(db);
		return CLI_FAILED;
	}
	if (db_rows(r) == 0) {
		fprintf(stderr, "roofline open: run %ld has no report (no `report` step, "
			"not yet made, or not your run)\n", run);
		c = CLI_FAILED;
	} else {
		printf("%s\n", db_value(r, 0, 0));
		if (base && *base) {
			printf("%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/");
			url_path(db_value(r, 0, 1));
		} else {
			printf("file://");
			url_path(db_value(r, 0, 0));
		}
		putchar('\n');
		c = CLI_OK;
	}
	db_result_free(r);
	db_close(db);
	return c;
}
