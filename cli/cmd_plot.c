/*
 * roofline plot RUN [--baseline RUN]... - draw a run's hierarchical roofline
 * (or several runs on one chart, like Nsight Compute's "Add Baseline") from
 * what PostgreSQL holds: the runs' `point` and `roof` records are written as
 * record files and the gnuplot plugin draws them, run by roofline-job as the
 * user who typed the command, exactly as a pipeline's chart step would.
 *
 * roofline plot --gpu UUID and --trajectory KERNEL draw the findings' charts
 * the same way from the records plot_series.c writes: a GPU's ceilings over
 * the nights in its fleet's band (mode gpu_history), a kernel's points over
 * its runs with the last step's class (mode trajectory).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_db.h"
#include "plot_series.h"
#include "paths.h"
#include "records.h"
#include "util.h"

#define PLOT_MAX_RUNS 16

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roofline plot [--baseline RUN]... [--format png|svg]... [--out DIR] RUN\n"
		"       roofline plot --gpu UUID [--pipeline NAME] [--nights N] [...]\n"
		"       roofline plot --trajectory KERNEL [--pipeline NAME] [--runs N] [...]\n"
		"\n"
		"Draws RUN's hierarchical roofline chart from the database (the points\n"
		"of its analysis step).  With --baseline, the baseline runs and RUN go\n"
		"on one chart, one colour per run, with arrows from each run's points\n"
		"to the next (oldest baseline first).  Writes DIR/roofline.png and\n"
		"roofline.svg (or compare.*), default DIR ./roofline-plot-RUN, and\n"
		"prints DIR.\n"
		"\n"
		"--gpu: the GPU's measured ceilings over its latest N nights (default 30)\n"
		"of the pipeline (default: the latest that measured it), a panel per\n"
		"ceiling, in the band of its model's fleet each night (median, min-max);\n"
		"nights a finding flagged it are marked.  DIR/gpu_history.png, .svg;\n"
		"default DIR ./roofline-plot-gpu.\n"
		"--trajectory: the kernel's points (its primary precision, each level)\n"
		"over its latest N runs (default 10) of the pipeline (default: its\n"
		"latest run's), joined in order under the latest run's roofs; the last\n"
		"step is labelled with its class (the rule of `roofline regressions`,\n"
		"against the run before).  DIR/trajectory.png, .svg; default DIR\n"
		"./roofline-plot-trajectory.\n"
		"Only your own runs and the facility's are seen.\n");
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

/* --gpu, --trajectory: records from plot_series.c into DIR/data, drawn
 * by the plugin in the given mode. */
static int plot_series(struct db *db, const char *what, const char *subject,
		       const char *pipeline, long n, char **formats, int nf, const char *out)
{
	bool gpu = strcmp(what, "gpu") == 0;
	char *dir = xasprintf("%s/data", out), *exe = util_exe_dir(), *owned[8];
	char *argv[16];
	int a = 0, o = 0, runs = 0, rc;

	rc = gpu ? plot_series_gpu(db, subject, pipeline, n, dir)
		 : plot_series_trajectory(db, subject, pipeline, n, dir, &runs);
	if (rc == -ENOENT)
		fprintf(stderr, "roofline plot: %s '%s': nothing of yours or the facility's%s%s\n",
			gpu ? "no measured ceiling of GPU" : "no roofline point of kernel", subject,
			pipeline ? " in pipeline " : "", pipeline ? pipeline : "");
	else if (rc == 0 && !gpu && runs < 2)
		fprintf(stderr, "roofline plot: kernel '%s' has one run: a trajectory of one point\n",
			subject);
	if (rc < 0)
		goto out;
	argv[a++] = owned[o++] = xasprintf("%s/roofline-job", exe ? exe : ".");
	argv[a++] = "--run";
	argv[a++] = "gnuplot";
	argv[a++] = "--out";
	argv[a++] = owned[o++] = xstrdup(out);
	argv[a++] = "--input";
	argv[a++] = owned[o++] = xasprintf("%s=%s", what, dir);
	argv[a++] = gpu ? "mode=gpu_history" : "mode=trajectory";
	for (int i = 0; i < nf; i++)
		argv[a++] = owned[o++] = xasprintf("formats=%s", formats[i]);
	argv[a] = NULL;
	rc = draw(argv) == 0 ? 0 : -1;
	if (rc == 0)
		printf("%s\n", out);
out:
	while (o > 0)
		free(owned[--o]);
	free(dir);
	free(exe);
	return rc == 0 ? CLI_OK : CLI_FAILED;
}

/* A count option (1-10000); -1 after saying what is wrong. */
static long count_arg(const char *opt, const char *text)
{
	long v;

	if (util_parse_long(text, &v) < 0 || v < 1 || v > 10000) {
		fprintf(stderr, "roofline plot: %s: expected a count 1-10000, got '%s'\n", opt, text);
		return -1;
	}
	return v;
}

int cmd_plot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "baseline", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "out", required_argument, NULL, 'o' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "trajectory", required_argument, NULL, 't' },
		{ "pipeline", required_argument, NULL, 'p' },
		{ "nights", required_argument, NULL, 'n' },
		{ "runs", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *runs[PLOT_MAX_RUNS + 1], *formats[2], *out = NULL;
	const char *gpu = NULL, *kernel = NULL, *pipeline = NULL;
	long nights = 30, nruns = 10;
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
		case 'g': gpu = optarg; break;
		case 't': kernel = optarg; break;
		case 'p': pipeline = optarg; break;
		case 'n': if ((nights = count_arg("--nights", optarg)) < 0) return CLI_USAGE; break;
		case 'r': if ((nruns = count_arg("--runs", optarg)) < 0) return CLI_USAGE; break;
		case 'h': usage(stdout); return CLI_OK;
		default: usage(stderr); return CLI_USAGE;
		}
	}
	if (gpu || kernel) {
		if ((gpu && kernel) || n || argc != optind) {
			usage(stderr);
			return CLI_USAGE;
		}
		if (!(db = cli_db_connect("plot")))
			return CLI_FAILED;
		char *dir = out ? xstrdup(out) : xstrdup(gpu ? "roofline-plot-gpu"
							      : "roofline-plot-trajectory");

		rc = plot_series(db, gpu ? "gpu" : "trajectory", gpu ? gpu : kernel, pipeline,
				 gpu ? nights : nruns, formats, nf, dir);
		free(dir);
		db_close(db);
		return rc;
	}
	if (pipeline || argc - optind != 1 || cli_run_id("plot", argv[optind]) < 0) {
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
