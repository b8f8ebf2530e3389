/*
 * roofline list / status / cancel / show - a user's view of their runs.
 *
 * What a user sees is decided by PostgreSQL's row-level security: their own
 * runs and the facility's.  Cancelling only sets a flag that the database
 * lets a user set on their own runs; rooflined does the cancelling.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_db.h"
#include "cli_json.h"
#include "kernel_name.h"
#include "util.h"

/* Timestamps in JSON: ISO 8601, UTC (the session's time zone). */
#define ISO_UTC(col) "to_char(" col ", 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/* Take every --json out of argv (these commands have no "--"); true if one
 * was there. */
static bool take_json(int *argc, char **argv)
{
	bool found = false;
	int j = 1;

	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			found = true;
		else
			argv[j++] = argv[i];
	}
	*argc = j;
	return found;
}

/* Add the rows of a query as key: [objects] to doc; -1 on a query error. */
static int json_add_rows(struct db *db, struct json_object *doc,
			 const char *key, const char *sql, const char *run)
{
	const char *params[] = { run };
	struct db_result *r = db_query(db, sql, run ? 1 : 0, run ? params : NULL);

	if (!r)
		return -1;
	cli_json_set(doc, key, cli_json_rows(r));
	db_result_free(r);
	return 0;
}

/* {"run": {...}} of one run into doc; -1 (said on stderr) when the user has
 * no such run. */
static int json_add_run(struct db *db, struct json_object *doc,
			const char *run, const char *cmd)
{
	const char *params[] = { run };
	struct db_result *r = db_query(db,
		"select id, pipeline_name as pipeline, owner, state, spool_dir,"
		" error from runs where id = $1", 1, params);

	if (!r || db_rows(r) != 1) {
		fprintf(stderr, "roofline %s: no run %s of yours\n", cmd, run);
		db_result_free(r);
		return -1;
	}
	cli_json_set(doc, "run", cli_json_row(r, 0));
	db_result_free(r);
	return 0;
}

/* Print doc, free it; the exit status. */
static int json_finish(struct json_object *doc, const char *cmd)
{
	int rc = cli_json_print(doc, true);

	cli_json_free(doc);
	if (rc < 0) {
		fprintf(stderr, "roofline %s: cannot write the output\n", cmd);
		return CLI_FAILED;
	}
	return CLI_OK;
}

/* Parse [--help] RUN for the simple commands; returns the id or -CLI_*. */
static long one_run_arg(int argc, char **argv, const char *cmd,
			const char *help)
{
	if (cli_wants_help(argc, argv)) {
		printf("%s", help);
		return -100 - CLI_OK;
	}
	if (argc != 2) {
		fprintf(stderr, "%s", help);
		return -100 - CLI_USAGE;
	}
	long id = cli_run_id(cmd, argv[1]);

	return id < 0 ? -100 - CLI_USAGE : id;
}

static int list_json(struct db *db)
{
	struct json_object *doc = cli_json_object();

	if (json_add_rows(db, doc, "runs", "select id, pipeline_name as pipeline,"
			  " owner, state, " ISO_UTC("submitted_at") " as submitted_at, "
			  ISO_UTC("ended_at") " as ended_at"
			  " from runs order by id desc limit 200", NULL) < 0) {
		fprintf(stderr, "roofline list: %s\n", db_error(db));
		cli_json_free(doc);
		return CLI_FAILED;
	}
	return json_finish(doc, "list");
}

int cmd_list(int argc, char **argv)
{
	struct db_result *r;
	struct db *db;
	bool json = take_json(&argc, argv);

	if (cli_wants_help(argc, argv) || argc > 1) {
		printf("usage: roofline list [--json]\n\nLists your runs (and the "
		       "facility's), newest first: id, pipeline, owner, state,\n"
		       "submitted, ended (the latest 200).  --json: one JSON document "
		       "(docs/json.md).\n");
		return argc > 1 && !cli_wants_help(argc, argv) ? CLI_USAGE : CLI_OK;
	}
	db = cli_db_connect("list");
	if (!db)
		return CLI_FAILED;
	if (json) {
		int rc = list_json(db);

		db_close(db);
		return rc;
	}
	r = db_query(db, "select id, pipeline_name, owner, state,"
			 " to_char(submitted_at, 'YYYY-MM-DD HH24:MI:SS'),"
			 " coalesce(to_char(ended_at, 'YYYY-MM-DD HH24:MI:SS'), '-')"
			 " from runs order by id desc limit 200", 0, NULL);
	if (!r) {
		fprintf(stderr, "roofline list: %s\n", db_error(db));
		db_close(db);
		return CLI_FAILED;
	}
	printf("%-6s %-24s %-12s %-10s %-19s %s\n", "RUN", "PIPELINE", "OWNER",
	       "STATE", "SUBMITTED", "ENDED");
	for (int i = 0; i < db_rows(r); i++)
		printf("%-6s %-24s %-12s %-10s %-19s %s\n", db_value(r, i, 0),
		       db_value(r, i, 1), db_value(r, i, 2), db_value(r, i, 3),
		       db_value(r, i, 4), db_value(r, i, 5));
	db_result_free(r);
	db_close(db);
	return CLI_OK;
}

/* The nodes a `nodes: each` run did not use, with Slurm's word on each. */
static void print_unused_nodes(struct db *db, const char *run)
{
	const char *params[] = { run };
	struct db_result *r = db_query(db,
		"select node, slurm_state, reason from run_nodes where run_id = $1"
		" and not used order by node", 1, params);

	for (int i = 0; r && i < db_rows(r); i++)
		printf("node %s not used: %s%s%s%s\n", db_value(r, i, 0),
		       db_value(r, i, 1), db_value(r, i, 2)[0] ? " (" : "",
		       db_value(r, i, 2), db_value(r, i, 2)[0] ? ")" : "");
	db_result_free(r);
}

static int print_run_header(struct db *db, const char *run, const char *cmd)
{
	const char *params[] = { run };
	struct db_result *r = db_query(db,
		"select pipeline_name, owner, state, coalesce(spool_dir, '-'),"
		" coalesce(error, '') from runs where id = $1", 1, params);

	if (!r || db_rows(r) != 1) {
		fprintf(stderr, "roofline %s: no run %s of yours\n", cmd, run);
		db_result_free(r);
		return -1;
	}
	printf("run %s: pipeline %s, owner %s, %s\nspool: %s\n", run,
	       db_value(r, 0, 0), db_value(r, 0, 1), db_value(r, 0, 2),
	       db_value(r, 0, 3));
	if (db_value(r, 0, 4)[0])
		printf("error: %s\n", db_value(r, 0, 4));
	db_result_free(r);
	print_unused_nodes(db, run);
	return 0;
}

static int status_json(struct db *db, const char *run)
{
	struct json_object *doc = cli_json_object();

	if (json_add_run(db, doc, run, "status") < 0) {
		cli_json_free(doc);
		return CLI_FAILED;
	}
	if (json_add_rows(db, doc, "unused_nodes", "select node, slurm_state,"
			  " reason from run_nodes where run_id = $1 and not used"
			  " order by node", run) < 0 ||
	    json_add_rows(db, doc, "steps", "select step_id as step, node, state,"
			  " attempt, slurm_job_id, on_daemon, exec_node, "
			  ISO_UTC("started_at") " as started_at, "
			  ISO_UTC("ended_at") " as ended_at, error, slurm_reason"
			  " from steps where run_id = $1 order by id", run) < 0) {
		fprintf(stderr, "roofline status: %s\n", db_error(db));
		cli_json_free(doc);
		return CLI_FAILED;
	}
	return json_finish(doc, "status");
}

int cmd_status(int argc, char **argv)
{
	static const char help[] =
		"usage: roofline status [--json] RUN\n       roofline status\n\n"
		"Shows each step of RUN: "
		"state, attempt, Slurm job id, node, start, end, and the error of a\n"
		"failed step or what Slurm says of one that waits or runs\n"
		"(\"Slurm: ReqNodeNotAvail, ...\").  --json: one JSON document "
		"(docs/json.md).\nWithout RUN: the active rooflined and its standbys"
		" (exit 1 when none is active).\n";
	bool json = take_json(&argc, argv);
	long id;

	if (argc == 1 && !json)
		return cli_status_daemons();
	id = one_run_arg(argc, argv, "status", help);
	char run[32];
	const char *params[] = { run };
	struct db_result *r;
	struct db *db;
	int rc = CLI_FAILED;

	if (id < 0)
		return (int)(-id - 100);
	snprintf(run, sizeof(run), "%ld", id);
	db = cli_db_connect("status");
	if (db && json) {
		rc = status_json(db, run);
		goto out;
	}
	if (!db || print_run_header(db, run, "status") < 0)
		goto out;
	r = db_query(db, "select step_id || case when node = '' then '' else '@'"
			 " || node end, state, attempt,"
			 " coalesce(slurm_job_id::text, case when on_daemon then"
			 " 'daemon' else '-' end), coalesce(exec_node, '-'),"
			 " coalesce(to_char(started_at, 'HH24:MI:SS'), '-'),"
			 " coalesce(to_char(ended_at, 'HH24:MI:SS'), '-'),"
			 " case when state in ('pending', 'running') and"
			 " slurm_reason is not null then 'Slurm: ' || slurm_reason"
			 " else coalesce(error, '') end"
			 " from steps where run_id = $1"
			 " order by id", 1, params);
	if (!r)
		goto out;
	printf("%-20s %-11s %-7s %-8s %-10s %-8s %-8s %s\n", "STEP", "STATE",
	       "ATTEMPT", "JOB", "NODE", "START", "END", "ERROR");
	for (int i = 0; i < db_rows(r); i++)
		printf("%-20s %-11s %-7s %-8s %-10s %-8s %-8s %s\n",
		       db_value(r, i, 0), db_value(r, i, 1), db_value(r, i, 2),
		       db_value(r, i, 3), db_value(r, i, 4), db_value(r, i, 5),
		       db_value(r, i, 6), db_value(r, i, 7));
	db_result_free(r);
	rc = CLI_OK;
out:
	db_close(db);
	return rc;
}

int cmd_cancel(int argc, char **argv)
{
	static const char help[] =
		"usage: roofline cancel RUN\n\nAsks rooflined to cancel RUN: its "
		"Slurm jobs are cancelled and its\nwaiting steps never start.  "
		"Only your own runs can be cancelled.\n";
	long id = one_run_arg(argc, argv, "cancel", help);
	char run[32];
	const char *params[] = { run };
	struct db *db;
	long n;

	if (id < 0)
		return (int)(-id - 100);
	snprintf(run, sizeof(run), "%ld", id);
	db = cli_db_connect("cancel");
	if (!db)
		return CLI_FAILED;
	n = db_exec(db, "update runs set cancel_requested = true where id = $1"
			" and state in ('queued', 'running')", 1, params);
	db_close(db);
	if (n == 1) {
		printf("run %ld: cancellation requested\n", id);
		return CLI_OK;
	}
	fprintf(stderr, "roofline cancel: no unfinished run %ld of yours\n", id);
	return CLI_FAILED;
}

/* Print a separator and a cell: CSV-quoted when sep is ',', else as is. */
static void print_cell(char sep, const char *v)
{
	putchar(sep);
	if (sep == ',')
		cli_csv_field(v);
	else
		fputs(v, stdout);
}

/* The field names of a kind's records, numbered in first-appearance order. */
#define KEYS_CTE \
	"with keys as (select k, row_number() over (order by min(ord), k) as n" \
	" from step_records r, jsonb_each_text(r.fields) with ordinality" \
	" f(k, v, ord) where r.run_id = $1 and r.kind = $2 group by k) "

/* Print the records of one kind as a table (TAB-separated) or CSV: one
 * column per field name, in the order the fields first appear. */
static void print_kind(struct db *db, const char *run, const char *kind,
		       bool csv)
{
	const char *params[] = { run, kind };
	struct db_result *keys, *cells = NULL;
	char sep = csv ? ',' : '\t';

	keys = db_query(db, KEYS_CTE "select k from keys order by n", 2, params);
	if (!keys)
		return;
	cells = db_query(db, KEYS_CTE "select s.step_id || case when s.node = ''"
			     " then '' else '@' || s.node end, keys.n,"
			     " coalesce(r.fields ->> keys.k, '') from step_records r"
			     " join steps s on s.id = r.step cross join keys where"
			     " r.run_id = $1 and r.kind = $2 order by r.step, r.seq,"
			     " keys.n", 2, params);
	if (!cells)
		goto out;
	printf(csv ? "# %s\nstep" : "\n%s records:\nstep", kind);
	for (int k = 0; k < db_rows(keys); k++)
		print_cell(sep, db_value(keys, k, 0));
	for (int i = 0; i < db_rows(cells); i++) {
		if (db_long(cells, i, 1) == 1)
			printf("\n%s", db_value(cells, i, 0));
		print_cell(sep, db_value(cells, i, 2));
	}
	putchar('\n');
out:
	db_result_free(keys);
	db_result_free(cells);
}

/* Shorten a kernel name for a terminal column: at most width bytes. */
/*
 * The kernel column's names, shortened to 40 bytes and distinct where the
 * names differ (common/kernel_name.h); a name that fits is kept whole.
 * NULL when out of memory (the names are cut instead).
 */
static char **short_kernels(struct db_result *r, int n)
{
	const char **full = calloc(n ? (size_t)n : 1, sizeof(*full));
	char **out = calloc(n ? (size_t)n : 1, sizeof(*out));

	for (int i = 0; full && i < n; i++)
		full[i] = db_value(r, i, 0);
	if (!full || !out ||
	    kernel_names_short(full, (size_t)n, 40, KERNEL_NAME_WHOLE_FITS, out) < 0) {
		free(out);
		out = NULL;
	}
	free(full);
	return out;
}

/* A number for a table column: 4 significant digits, "-" when absent. */
static void format_number(char *buf, size_t size, const char *text)
{
	double v;

	if (!text || !*text || util_parse_double(text, &v) < 0)
		snprintf(buf, size, "-");
	else if (v != 0 && (v >= 1e6 || v < 1e-3))
		snprintf(buf, size, "%.3e", v);
	else
		snprintf(buf, size, "%.4g", v);
}

/* The roofline table of a run, from roofline_points; returns the number of
 * kernels printed (0: the run has no analysis), or -1 on error. */
static int print_roofline(struct db *db, const char *run, bool csv)
{
	const char *params[] = { run };
	struct db_result *r = db_query(db,
		"select kernel, precision, coalesce(ai_l1::text, ''),"
		" coalesce(ai_l2::text, ''), coalesce(ai_dram::text, ''),"
		" coalesce(gflops::text, ''), coalesce(bound, ''),"
		" coalesce(round(pct_of_roof::numeric, 1)::text, ''),"
		" coalesce(verdict, ''), node, coalesce(gpu_name, ''),"
		" coalesce(tensor_uncounted, ''), step,"
		" (select count(distinct step) from roofline_points where"
		" run_id = $1) > 1"
		" from roofline_points where run_id = $1 order by step, kernel, node",
		1, params);
	int n, uncounted = 0;
	char **names;

	if (!r)
		return -1;
	n = db_rows(r);
	names = csv ? NULL : short_kernels(r, n);
	if (n && csv)
		printf("kernel,precision,ai_l1,ai_l2,ai_dram,gflops,bound,pct_of_roof,verdict,node,gpu,tensor_uncounted,step\n");
	else if (n)
		printf("\n%-40s %-6s %10s %10s %10s %10s %-8s %6s  %s\n", "KERNEL",
		       "PREC", "AI L1", "AI L2", "AI DRAM", "GFLOP/s", "BOUND",
		       "%ROOF", "VERDICT");
	for (int i = 0; i < n; i++) {
		if (csv) {
			for (int c = 0; c <= 12; c++) {
				if (c)
					putchar(',');
				cli_csv_field(db_value(r, i, c));
			}
			putchar('\n');
			continue;
		}
		char num[4][32];

		for (int k = 0; k < 3; k++)
			format_number(num[k], sizeof(num[k]), db_value(r, i, 2 + k));
		snprintf(num[3], sizeof(num[3]), "%.1f", atof(db_value(r, i, 5)));
		/* several analysis steps: a heading per step */
		if (db_value(r, i, 13)[0] == 't' &&
		    (i == 0 || strcmp(db_value(r, i, 12), db_value(r, i - 1, 12))))
			printf("[%s]\n", db_value(r, i, 12));
		printf("%-40.40s", names ? names[i] : db_value(r, i, 0));
		printf(" %-6s %10s %10s %10s %10s %-8s %6s  %s%s%s\n",
		       db_value(r, i, 1), num[0], num[1], num[2], num[3],
		       db_value(r, i, 6), db_value(r, i, 7), db_value(r, i, 8),
		       *db_value(r, i, 11) ? " INCOMPLETE: tensor " : "", db_value(r, i, 11));
		uncounted += *db_value(r, i, 11) != '\0';
	}
	/* Tensor work a metric set left out is said, never silently absent. */
	if (uncounted && !csv)
		printf("\nINCOMPLETE: %d kernel%s ran tensor-core instructions of datapaths the "
		       "profile step did not\ncollect (listed): their work may be more than shown. "
		       "The ncu step's option\nextra: [all] (or extra: [tensor_fp16, ...]) counts "
		       "them, at more replay passes.\n", uncounted, uncounted == 1 ? "" : "s");
	if (names)
		kernel_names_free(names, (size_t)n);
	free(names);
	db_result_free(r);
	return n;
}

/* "records": {kind: [{"step": ..., "fields": {...}}]}: every record of the
 * run, each kind's in step and emission order. */
static int json_add_records(struct db *db, struct json_object *doc,
			    const char *run)
{
	const char *params[] = { run };
	struct db_result *r = db_query(db,
		"select r.kind, s.step_id || case when s.node = '' then '' else"
		" '@' || s.node end, r.fields::text from step_records r join steps"
		" s on s.id = r.step where r.run_id = $1 order by r.kind, r.step,"
		" r.seq", 1, params);
	struct json_object *records = cli_json_object(), *list = NULL;

	if (!r) {
		cli_json_free(records);
		return -1;
	}
	for (int i = 0; i < db_rows(r); i++) {
		struct json_object *rec = cli_json_object();

		if (i == 0 || strcmp(db_value(r, i, 0), db_value(r, i - 1, 0))) {
			list = cli_json_array();
			cli_json_set(records, db_value(r, i, 0), list);
		}
		cli_json_set(rec, "step", cli_json_string(db_value(r, i, 1)));
		cli_json_set(rec, "fields", cli_json_parse(db_value(r, i, 2)));
		cli_json_append(list, rec);
	}
	cli_json_set(doc, "records", records);
	db_result_free(r);
	return 0;
}

static int show_json(struct db *db, const char *run, bool all)
{
	struct json_object *doc = cli_json_object();

	if (json_add_run(db, doc, run, "show") < 0) {
		cli_json_free(doc);
		return CLI_FAILED;
	}
	/* the columns of show --csv, as numbers where they are numbers */
	if (json_add_rows(db, doc, "kernels", "select kernel, precision, ai_l1,"
			  " ai_l2, ai_dram, gflops, bound,"
			  " round(pct_of_roof::numeric, 1) as pct_of_roof, verdict,"
			  " node, gpu_name as gpu, tensor_uncounted, step"
			  " from roofline_points where run_id = $1"
			  " order by step, kernel, node", run) < 0 ||
	    (all && json_add_records(db, doc, run) < 0)) {
		fprintf(stderr, "roofline show: %s\n", db_error(db));
		cli_json_free(doc);
		return CLI_FAILED;
	}
	return json_finish(doc, "show");
}

int cmd_show(int argc, char **argv)
{
	static const char help[] =
		"usage: roofline show [--csv | --json] [--all] RUN\n\nPrints RUN's "
		"roofline table (per kernel: AI at L1, L2 and DRAM, GFLOP/s,\nthe "
		"binding roof, %% of it, verdict) when it has one; with --all, or "
		"when it\nhas none, the records its steps produced, one table per "
		"kind.\n--json: the run and its kernels as one JSON document, with "
		"--all its\nrecords too (docs/json.md).\n";
	bool json = take_json(&argc, argv);
	bool csv = false, all = false;
	long id;
	char run[32];
	const char *params[] = { run };
	struct db_result *kinds;
	struct db *db;
	int n = 0;

	while (argc > 1 && (strcmp(argv[1], "--csv") == 0 ||
			    strcmp(argv[1], "--all") == 0)) {
		*(argv[1][2] == 'c' ? &csv : &all) = true;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	id = one_run_arg(argc, argv, "show", help);
	if (id < 0)
		return (int)(-id - 100);
	if (json && csv) {
		fprintf(stderr, "roofline show: --json and --csv exclude each other\n");
		return CLI_USAGE;
	}
	snprintf(run, sizeof(run), "%ld", id);
	db = cli_db_connect("show");
	if (!db)
		return CLI_FAILED;
	if (json) {
		n = show_json(db, run, all);
		db_close(db);
		return n;
	}
	if (!csv && print_run_header(db, run, "show") < 0) {
		db_close(db);
		return CLI_FAILED;
	}
	n = print_roofline(db, run, csv);
	if (n > 0 && !all) {
		db_close(db);
		return CLI_OK;
	}
	kinds = db_query(db, "select distinct kind from step_records where"
			     " run_id = $1 order by kind", 1, params);
	for (int i = 0; kinds && i < db_rows(kinds); i++)
		print_kind(db, run, db_value(kinds, i, 0), csv);
	db_result_free(kinds);
	db_close(db);
	return CLI_OK;
}
