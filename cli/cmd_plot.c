/*
 * roofline plot RUN [--baseline RUN]... - draw a run's hierarchical roofline
 * (or several runs on one chart, like Nsight Compute's "Add Baseline") from
 * what PostgreSQL holds: the runs' `point` and `roof` records are written as
 * record files and the gnuplot plugin draws them, run by roofline-job as the
 * user who typed the command, exactly as a pipeline's chart step would.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_db.h"
#include "paths.h"
#include "records.h"
#include "util.h"

#define PLOT_MAX_RUNS 16

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roofline plot [--baseline RUN]... [--format png|svg]... [--out DIR] RUN\n"
		"\n"
		"Draws RUN's hierarchical roofline chart from the database (the points\n"
		"of its analysis step).  With --baseline, the baseline runs and RUN go\n"
		"on one chart, one colour per run, with arrows from each run's points\n"
		"to the next (oldest baseline first).  Writes DIR/roofline.png and\n"
		"roofline.svg (or compare.*), default DIR ./roofline-plot-RUN, and\n"
		"prints their paths.\n");
}

struct emit_state {
	struct strbuf out;
	struct rl_field fields[RECORDS_MAX_FIELDS];
	size_t n;
	long seq;
	const char *kind;
};

/* Flush the record being assembled into out. */
static void flush_record(struct emit_state *es)
{
	if (!es->n)
		return;
	es->fields[es->n].key = NULL;
	records_format(&es->out, es->kind, es->fields);
	es->n = 0;
}

/* Write one run's points and roofs to dir/records.tsv; -1 on error. */
static int dump_run(struct db *db, const char *run, const char *dir)
{
	const char *params[] = { run };
	struct db_result *r = db_query(db,
		"select r.step, r.seq, r.kind, f.key, f.value from step_records r,"
		" jsonb_each_text(r.fields) f where r.run_id = $1 and (r.kind ="
		" 'roof' or (r.kind = 'point' and r.fields->>'invocation' = 'all'))"
		" order by r.step, r.seq", 1, params);
	struct emit_state es = { .n = 0 };
	char *path;
	int rc;

	if (!r)
		return -1;
	strbuf_init(&es.out);
	for (int i = 0; i < db_rows(r); i++) {
		long seq = db_long(r, i, 0) * 1000000 + db_long(r, i, 1);

		if (seq != es.seq)
			flush_record(&es);
		es.seq = seq;
		es.kind = db_value(r, i, 2);
		if (es.n + 1 < RECORDS_MAX_FIELDS) {
			es.fields[es.n].key = db_value(r, i, 3);
			es.fields[es.n].value = db_value(r, i, 4);
			es.n++;
		}
	}
	flush_record(&es);
	rc = es.out.len ? 0 : -ENOENT;
	if (rc == 0) {
		path = xasprintf("%s/records.tsv", dir);
		rc = util_mkdir_p(dir, 0755);
		if (rc == 0)
			rc = util_write_file_atomic(path, es.out.buf, es.out.len,
						    0644);
		free(path);
	}
	strbuf_release(&es.out);
	db_result_free(r);
	return rc;
}

/* Run roofline-job --run gnuplot; returns its exit status. */
static int draw(char **argv)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv(argv[0], argv);
		fprintf(stderr, "roofline plot: cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int plot(struct db *db, char **runs, int n, char **formats, int nf,
		const char *out)
{
	char *argv[8 + 2 * PLOT_MAX_RUNS + PLOT_MAX_RUNS + 2] = { NULL };
	char *owned[4 * PLOT_MAX_RUNS + 8];
	struct strbuf labels = STRBUF_INIT;
	int a = 0, o = 0, rc = CLI_FAILED;

	strbuf_init(&labels);
	argv[a++] = owned[o++] = paths_program("roofline-job");
	argv[a++] = "--run";
	argv[a++] = "gnuplot";
	argv[a++] = "--out";
	argv[a++] = owned[o++] = xstrdup(out);
	for (int i = 0; i < n; i++) {
		char *dir = owned[o++] = xasprintf("%s/run-%s", out, runs[i]);

		if (dump_run(db, runs[i], dir) < 0) {
			fprintf(stderr, "roofline plot: run %s has no roofline points "
				"of yours (did its analysis step run?)\n", runs[i]);
			goto out;
		}
		argv[a++] = "--input";
		argv[a++] = owned[o++] = xasprintf("run-%s=%s", runs[i], dir);
		strbuf_addf(&labels, "%srun %s", i ? "," : "", runs[i]);
	}
	for (int i = 0; i < nf; i++)
		argv[a++] = owned[o++] = xasprintf("formats=%s", formats[i]);
	if (n > 1)
		argv[a++] = owned[o++] = xasprintf("labels=%s", labels.buf);
	argv[a] = NULL;
	if (draw(argv) == 0) {
		printf("%s\n", out);
		rc = CLI_OK;
	}
out:
	while (o > 0)
		free(owned[--o]);
	strbuf_release(&labels);
	return rc;
}

int cmd_plot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "baseline", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *runs[PLOT_MAX_RUNS + 1], *formats[2], *out = NULL;
	int n = 0, nf = 0, c, rc;
	struct db *db;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (n == PLOT_MAX_RUNS || cli_run_id("plot", optarg) < 0)
				return CLI_USAGE;
			runs[n++] = optarg;
			break;
		case 'f':
			if (nf == 2 || (strcmp(optarg, "png") && strcmp(optarg, "svg"))) {
				fprintf(stderr, "roofline plot: --format png or svg\n");
				return CLI_USAGE;
			}
			formats[nf++] = optarg;
			break;
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return CLI_OK;
		default: usage(stderr); return CLI_USAGE;
		}
	}
	if (argc - optind != 1 || cli_run_id("plot", argv[optind]) < 0) {
		usage(stderr);
		return CLI_USAGE;
	}
	runs[n++] = argv[optind];
	db = cli_db_connect("plot");
	if (!db)
		return CLI_FAILED;
	char *dir = out ? xstrdup(out) : xasprintf("roofline-plot-%s", argv[optind]);

	rc = plot(db, runs, n, formats, nf, dir);
	free(dir);
	db_close(db);
	return rc;
}
