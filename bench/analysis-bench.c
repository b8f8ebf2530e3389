/*
 * analysis-bench - time the hierarchical plugin on a large synthetic input.
 *
 *   analysis-bench [-n ROWS] [-r REPEATS] [-i] [-P] [-w FILE] CEILINGS.tsv KERNELS.tsv...
 *
 * Builds ROWS (default 1,000,000) `kernel` records in memory by repeating the
 * real rows of the KERNELS files (records the ncu_import plugin made from the
 * H100 captures) with new, unique invocation IDs, after the files' `device`
 * records (each once, as the plugin writes them), and runs the plugin on them
 * with the CEILINGS file through a stand-in host, in two ways:
 *
 *   parse+analyse  each_input parses the records text the way roofline-job
 *                  does (records_each_in over a fresh copy), so the time
 *                  holds the host's parsing as well as the plugin's work;
 *   analyse        the records are parsed once beforehand and each_input
 *                  hands out the field arrays: the plugin's own cost.
 *
 * Emitted records are formatted (records_format) and counted, then dropped.
 * -P skips the parse+analyse runs (for profiling the plugin alone).
 * -i also runs with invocations: true (per-invocation points).  -w FILE
 * writes the synthetic records (device records, then the ROWS kernel
 * records) to FILE and runs nothing: the input of an end-to-end run of
 * roofline-job (bench/analysis-e2e.sh).  Prints the
 * best and median of REPEATS runs (default 5) of each: the wall time of
 * run(), and the process's CPU time during it (steadier on a busy machine).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hierarchical.c"
#include "options.h"
#include "records.h"
#include "strbuf.h"
#include "util.h"

struct parsed {
	struct rl_field *fields; /* every record's fields, NULL-terminated each */
	size_t n_fields, cap;
	size_t *start;           /* record i starts at fields[start[i]] */
	const char **kind;
	size_t n, n_cap;
};

struct bench {
	const char *ceilings_text;
	char *kernels_text;      /* the synthetic rows */
	size_t kernels_len;
	char *scratch;           /* parse copy */
	struct parsed pre;       /* analyse mode */
	char *ceil_copy;
	bool preparsed;
	long emitted;
	struct strbuf line;
};

static void bench_log(struct rl_ctx *ctx, enum rl_log_level level, const char *fmt,
		      va_list ap)
{
	(void)ctx;
	if (level <= RL_LOG_WARNING) {
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
}

static int bench_emit(struct rl_ctx *ctx, const char *kind, const struct rl_field *f)
{
	struct bench *b = ctx->host_data;

	b->line.len = 0;
	b->emitted++;
	return records_format(&b->line, kind, f);
}

struct each {
	const char *step;
	const char *kind;
	int (*fn)(void *, const char *, const char *, const struct rl_field *);
	void *arg;
};

static int each_record(void *arg, const char *kind, const struct rl_field *f)
{
	struct each *e = arg;

	return e->fn(e->arg, e->step, kind, f);
}

static int serve_parsed(const struct parsed *p, struct each *e)
{
	for (size_t i = 0; i < p->n; i++) {
		int rc;

		if (e->kind && strcmp(e->kind, p->kind[i]) != 0)
			continue;
		rc = e->fn(e->arg, e->step, p->kind[i], p->fields + p->start[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static int bench_each_input(struct rl_ctx *ctx, const char *kind,
			    int (*fn)(void *, const char *, const char *,
				      const struct rl_field *),
			    void *arg)
{
	struct bench *b = ctx->host_data;
	struct each ce = { "ceilings", kind, fn, arg }, ke = { "profile", kind, fn, arg };
	int rc;

	strcpy(b->ceil_copy, b->ceilings_text);
	rc = records_each_in(b->ceil_copy, "ceilings", kind, each_record, &ce, NULL);
	if (rc)
		return rc;
	if (b->preparsed)
		return serve_parsed(&b->pre, &ke);
	memcpy(b->scratch, b->kernels_text, b->kernels_len + 1);
	return records_each_in(b->scratch, "profile", kind, each_record, &ke, NULL);
}

static const char *bench_input_path(struct rl_ctx *ctx, const char *step, const char *name)
{
	(void)ctx, (void)step, (void)name;
	return NULL;
}

static const struct rl_host bench_host = {
	.size = sizeof(struct rl_host), .log = bench_log, .emit = bench_emit,
	.each_input = bench_each_input, .input_path = bench_input_path,
};

/* The kernel lines of the files; their device lines go to *devices. */
static size_t read_rows(char **files, int n, char ***rows, struct strbuf *devices)
{
	size_t count = 0;

	for (int i = 0; i < n; i++) {
		char *text, *line, *save = NULL;

		if (util_read_file(files[i], 1u << 30, &text, NULL) < 0) {
			perror(files[i]);
			exit(1);
		}
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (strncmp(line, "kernel\t", 7) == 0) {
				*rows = xrealloc(*rows, (count + 1) * sizeof(**rows));
				(*rows)[count++] = xstrdup(line);
			} else if (strncmp(line, "device\t", 7) == 0) {
				strbuf_addf(devices, "%s\n", line);
			}
		free(text);
	}
	return count;
}

/* The device records, then ROWS records: the real rows in turn,
 * invocation = the row number. */
static void synthesize(struct bench *b, const struct strbuf *devices, char **rows,
		       size_t n_rows, long n)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb);
	if (devices->len)
		strbuf_add(&sb, devices->buf, devices->len);
	for (long i = 0; i < n; i++) {
		const char *row = rows[(size_t)i % n_rows];
		const char *inv = strstr(row, "\tinvocation=");
		const char *end = inv ? strchr(inv + 1, '\t') : NULL;

		if (!end) {
			fprintf(stderr, "a kernel row without an invocation field\n");
			exit(1);
		}
		strbuf_add(&sb, row, (size_t)(inv - row));
		strbuf_addf(&sb, "\tinvocation=%ld%s\n", i, end);
	}
	b->kernels_len = sb.len;
	b->kernels_text = strbuf_detach(&sb);
	b->scratch = xmalloc(b->kernels_len + 1);
}

static int keep_parsed(void *arg, const char *kind, const struct rl_field *f)
{
	struct parsed *p = arg;
	size_t n = 0;

	while (f[n].key)
		n++;
	if (p->n_fields + n + 1 > p->cap) {
		p->cap = (p->n_fields + n + 1) * 2;
		p->fields = xrealloc(p->fields, p->cap * sizeof(*p->fields));
	}
	if (p->n == p->n_cap) {
		p->n_cap = p->n_cap * 2 + 1024;
		p->start = xrealloc(p->start, p->n_cap * sizeof(*p->start));
		p->kind = xrealloc(p->kind, p->n_cap * sizeof(*p->kind));
	}
	memcpy(p->fields + p->n_fields, f, (n + 1) * sizeof(*f));
	p->start[p->n] = p->n_fields;
	p->kind[p->n++] = kind;
	p->n_fields += n + 1;
	return 0;
}

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Run the plugin `repeats` times; best and median seconds. */
static void timed(struct bench *b, bool invocations, int repeats, const char *label,
		  long rows)
{
	struct rl_ctx ctx = { .host = &bench_host, .host_data = b, .run_dir = ".",
			      .out_dir = "/nonexistent", .step_id = "roofline",
			      .node = "bench", .run_id = 1, .attempt = 1 };
	struct strbuf err = STRBUF_INIT;
	struct options *o = options_new(&rooflined_plugin);
	double *t = xcalloc((size_t)repeats, sizeof(*t));
	double *cpu = xcalloc((size_t)repeats, sizeof(*cpu));
	void *st = NULL;

	strbuf_init(&err);
	if (options_set(o, "invocations", invocations ? "true" : "false", &err) ||
	    options_finish(o, &err) || rooflined_plugin.init(&ctx, o->config, &st)) {
		fprintf(stderr, "options: %s\n", err.buf ? err.buf : "init failed");
		exit(1);
	}
	for (int r = 0; r < repeats; r++) {
		double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);

		b->emitted = 0;
		if (rooflined_plugin.run(&ctx, o->config, st) != RL_OK) {
			fprintf(stderr, "the plugin failed\n");
			exit(1);
		}
		t[r] = now(CLOCK_MONOTONIC) - t0;
		cpu[r] = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	}
	qsort(t, (size_t)repeats, sizeof(*t), cmp_double);
	qsort(cpu, (size_t)repeats, sizeof(*cpu), cmp_double);
	printf("%-27s rows=%ld out=%ld wall best=%.3f s median=%.3f s, cpu best=%.3f s "
	       "median=%.3f s\n", label, rows, b->emitted, t[0], t[repeats / 2], cpu[0],
	       cpu[repeats / 2]);
	rooflined_plugin.fini(st);
	options_free(o);
	strbuf_release(&err);
	free(t);
	free(cpu);
}

int main(int argc, char **argv)
{
	struct bench b = { 0 };
	long n = 1000000;
	int repeats = 5, opt;
	bool inv = false, parse = true;
	char **rows = NULL, *ceil;
	struct strbuf devices = STRBUF_INIT;
	const char *write_to = NULL;
	size_t n_rows;

	while ((opt = getopt(argc, argv, "n:r:iPw:")) != -1) {
		if (opt == 'n')
			n = atol(optarg);
		else if (opt == 'r')
			repeats = atoi(optarg);
		else if (opt == 'i')
			inv = true;
		else if (opt == 'P')
			parse = false;
		else if (opt == 'w')
			write_to = optarg;
		else
			return 2;
	}
	setenv("ROOFLINE_ETC", "etc", 0);
	if (argc - optind < 2 || n < 1 || repeats < 1) {
		fprintf(stderr, "usage: analysis-bench [-n ROWS] [-r REPEATS] [-i] [-P] [-w FILE] "
			"CEILINGS KERNELS...\n");
		return 2;
	}
	if (util_read_file(argv[optind], 1u << 30, &ceil, NULL) < 0) {
		perror(argv[optind]);
		return 1;
	}
	b.ceilings_text = ceil;
	b.ceil_copy = xmalloc(strlen(ceil) + 1);
	strbuf_init(&devices);
	n_rows = read_rows(argv + optind + 1, argc - optind - 1, &rows, &devices);
	if (!n_rows) {
		fprintf(stderr, "no kernel rows in the inputs\n");
		return 1;
	}
	strbuf_init(&b.line);
	synthesize(&b, &devices, rows, n_rows, n);
	printf("input: %ld kernel records from %zu real rows (+ %.1f kB of device records), "
	       "%.1f MB of records text\n", n, n_rows, devices.len / 1e3, b.kernels_len / 1e6);
	strbuf_release(&devices);
	if (write_to) {
		int rc = util_write_file_replace(write_to, b.kernels_text, b.kernels_len, 0644);

		if (rc < 0)
			fprintf(stderr, "%s: %s\n", write_to, strerror(-rc));
		return rc < 0;
	}
	if (parse)
		timed(&b, false, repeats, "parse+analyse", n);
	if (records_each_in(b.kernels_text, "profile", NULL, keep_parsed, &b.pre, NULL)) {
		fprintf(stderr, "cannot parse the synthetic records\n");
		return 1;
	}
	b.preparsed = true;
	timed(&b, false, repeats, "analyse (pre-parsed)", n);
	if (inv)
		timed(&b, true, repeats, "analyse, invocations: true", n);
	return 0;
}
