/*
 * test_ncu_csv - the ncu CSV reader (plugins/ncu/ncu_csv.c with ncu_text.c,
 * ncu_value.c, strmap.c), the metric table (ncu_table.c) and kernel and
 * device records (ncu_record.c), on real Nsight Compute output captured on
 * an H100 (tests/fixtures/ncu).
 *
 * Expected numbers come from outside the reader: the kernels' design (grid x
 * block x 10000 adds), the programs' own output, and the fixture text split
 * by a naive independent extractor; derived quantities (FLOPs, AI, GFLOP/s)
 * are computed here from the raw counts.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ncu/ncu_csv.h"
#include "ncu/ncu_record.h"
#include "ncu/ncu_table.h"
#include "ncu/ncu_value.h"

#define SASS "sm__sass_thread_inst_executed_op_"

static const char *fixture_dir(void)
{
	const char *d = getenv("NCU_FIXTURES");

	return d ? d : "tests/fixtures/ncu";
}

static char *path_of(const char *name)
{
	static char buf[4][1024];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", fixture_dir(), name);
	return p;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* ---- the H100 metric set, from the real table ---------------------------- */

struct set {
	struct ncu_table *table;
	const struct ncu_table_row **sel;
	const char *names[64];
	size_t n;
};

static void load_set_from(struct set *s, const char *table, const char *arch,
			  const char *const *extra, size_t n_extra)
{
	char err[NCU_TABLE_ERRLEN];
	long n;
	size_t i;

	assert_int_equal(ncu_table_load(table, &s->table, err, sizeof(err)), 0);
	n = ncu_table_select(s->table, arch, extra, n_extra, &s->sel);
	assert_true(n > 0 && n <= 64);
	s->n = (size_t)n;
	for (i = 0; i < s->n; i++)
		s->names[i] = s->sel[i]->metric;
}

/* The table the captures of tests/fixtures/ncu were made with. */
static void load_set(struct set *s, const char *arch, const char *const *extra,
		     size_t n_extra)
{
	load_set_from(s, "tests/fixtures/ncu/ncu-metrics.recorded.tsv", arch, extra, n_extra);
}

static void free_set(struct set *s)
{
	free(s->sel);
	ncu_table_free(s->table);
}

static struct ncu_csv *parse_fixture(const char *name, const struct set *s)
{
	char err[NCU_CSV_ERRLEN];
	struct ncu_csv *t = NULL;
	int rc = ncu_csv_read_file(path_of(name), s->names, s->n, &t, err, sizeof(err));

	if (rc)
		fail_msg("%s: %s", name, err);
	return t;
}

static size_t slot(const struct set *s, const char *metric)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->names[i], metric) == 0)
			return i;
	fail_msg("metric %s not selected", metric);
	return 0;
}

static double val(const struct ncu_csv *t, const struct set *s, size_t launch,
		  const char *metric)
{
	double d;
	const char *v = t->launches[launch].values[slot(s, metric)];

	assert_non_null(v);
	assert_int_equal(ncu_value_parse(v, &d), 0);
	return d;
}

static double dp_flops(const struct ncu_csv *t, const struct set *s, size_t i)
{
	return val(t, s, i, SASS "dadd_pred_on.sum") +
	       2 * val(t, s, i, SASS "dfma_pred_on.sum") +
	       val(t, s, i, SASS "dmul_pred_on.sum");
}

/* x*y*z of "(x, y, z)". */
static double dim3_product(const char *text)
{
	long x, y, z;

	assert_int_equal(sscanf(text, "(%ld, %ld, %ld)", &x, &y, &z), 3);
	return (double)x * (double)y * (double)z;
}

/* The number after `key` in the first line of a program's output holding it. */
static double program_number(const char *file, const char *key)
{
	char *text = read_text(path_of(file)), *p = strstr(text, key);
	double d;

	assert_non_null(p);
	d = strtod(p + strlen(key), NULL);
	free(text);
	return d;
}

/*
 * Independent extraction: ncu quotes every field and metric names hold no
 * quotes, and these kernel names hold no `","`, so splitting the header and
 * the row that names `kernel` at `","` finds a column's raw text.
 */
static void naive_value(const char *file, const char *kernel, const char *metric,
			char *out, size_t size)
{
	char *text = read_text(path_of(file)), *hdr = strstr(text, "\"ID\",");
	char *row, *p, *end;
	long col = -1, i = 0;

	assert_non_null(hdr);
	for (p = hdr + 1; p && *p != '\n'; i++) {
		end = strstr(p, "\",\"");
		if (strncmp(p, metric, strlen(metric)) == 0 && p[strlen(metric)] == '"')
			col = i;
		p = end ? end + 3 : NULL;
		if (!end || end > strchr(hdr, '\n'))
			break;
	}
	assert_true(col >= 0);
	row = strstr(hdr, kernel);
	assert_non_null(row);
	while (row > text && row[-1] != '\n')
		row--;
	for (p = row + 1, i = 0; i < col; i++)
		p = strstr(p, "\",\"") + 3;
	end = strchr(p, '"');
	snprintf(out, size, "%.*s", (int)(end - p), p);
	for (p = out; *p; p++)
		if (*p == ',')
			memmove(p, p + 1, strlen(p)), p--;
	free(text);
}

/* ---- kernel_abc --------------------------------------------------------- */

static void test_kernel_abc_identity(void **state)
{
	struct set s;
	struct ncu_csv *t;

	(void)state;
	load_set(&s, "90", NULL, 0);
	t = parse_fixture("kernel_abc.raw.csv", &s);
	assert_int_equal(t->layout, NCU_CSV_RAW);
	assert_int_equal(t->n_launches, 3);
	assert_string_equal(t->launches[0].kernel, "kernel_A(double *, long, double)");
	assert_string_equal(t->launches[1].kernel, "kernel_B(double *, long, double)");
	assert_string_equal(t->launches[2].kernel,
			    "kernel_C(double *, const double *, long, double)");
	assert_string_equal(t->launches[0].id, "0");
	assert_string_equal(t->launches[2].id, "2");
	assert_string_equal(t->launches[0].grid, "(4096, 1, 1)");
	assert_string_equal(t->launches[1].block, "(64, 1, 1)");
	assert_string_equal(t->launches[0].cc, "9.0");
	assert_string_equal(t->launches[0].device, "0");
	assert_string_equal(t->launches[0].process, "kernel_abc");
	/* header on line 4 after ncu's three lines, units on 5 */
	assert_int_equal(t->launches[0].line, 6);
	assert_int_equal(t->skipped_lines, 0);
	ncu_csv_free(t);
	free_set(&s);
}

/* Every selected value equals the naive extraction of the same text. */
static void test_kernel_abc_values_exact(void **state)
{
	static const char *const kernels[] = { "kernel_A(", "kernel_B(", "kernel_C(" };
	struct set s;
	struct ncu_csv *t;
	size_t i, k;

	(void)state;
	load_set(&s, "90", NULL, 0);
	t = parse_fixture("kernel_abc.raw.csv", &s);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < s.n; i++) {
			char want[256];

			naive_value("kernel_abc.raw.csv", kernels[k], s.names[i], want,
				    sizeof(want));
			assert_non_null(t->launches[k].values[i]);
			assert_string_equal(t->launches[k].values[i], want);
		}
	}
	ncu_csv_free(t);
	free_set(&s);
}

static void test_kernel_abc_derived(void **state)
{
	struct set s;
	struct ncu_csv *t;
	double threads_a, threads_b, nc, fa, fb, fc, ta, tb, tc, peak, clk;

	(void)state;
	load_set(&s, "90", NULL, 0);
	t = parse_fixture("kernel_abc.raw.csv", &s);
	/* kernel_A: threads x 10000 adds, by design and by the program's word */
	threads_a = dim3_product(t->launches[0].grid) * dim3_product(t->launches[0].block);
	assert_true(threads_a == program_number("kernel_abc.program.txt", "kernel_A: "));
	fa = dp_flops(t, &s, 0);
	assert_true(fa == threads_a * 10000);
	assert_true(val(t, &s, 0, SASS "dfma_pred_on.sum") == 0);
	threads_b = dim3_product(t->launches[1].grid) * dim3_product(t->launches[1].block);
	fb = dp_flops(t, &s, 1);
	assert_true(fb == threads_b * 10000);
	/* kernel_C: one add per element */
	nc = program_number("kernel_abc.program.txt", "kernel_C: ");
	fc = dp_flops(t, &s, 2);
	assert_true(fc == nc);
	/* AI at L1: kernel_A stores 8 B per thread, 10000 FLOPs: 1250 exactly */
	assert_true(fa / val(t, &s, 0, "l1tex__t_bytes.sum") == 1250.0);
	assert_true(fb / val(t, &s, 1, "l1tex__t_bytes.sum") == 1250.0);
	/* kernel_C: every 8-byte access is its own 32-byte sector at L1 */
	assert_true(val(t, &s, 2, "l1tex__t_bytes.sum") == 32.0 * 2 * nc);
	assert_true(fc / val(t, &s, 2, "l1tex__t_bytes.sum") == 1.0 / 64);
	/* kernel_C is memory-bound: DRAM AI far below 1, > 2 TB/s */
	tc = val(t, &s, 2, "gpu__time_duration.sum") * 1e-9;
	assert_true(fc / val(t, &s, 2, "dram__bytes.sum") < 0.05);
	assert_true(val(t, &s, 2, "dram__bytes.sum") / tc > 2e12);
	/* kernel_A near the FP64 add peak: 132 SMs x 64 DADD per cycle */
	ta = val(t, &s, 0, "gpu__time_duration.sum") * 1e-9;
	clk = val(t, &s, 0, "sm__cycles_elapsed.avg.per_second");
	peak = program_number("kernel_abc.program.txt", "cc 9.0, ") * 64 * clk;
	assert_true(fa / ta > 0.9 * peak && fa / ta <= peak);
	/* kernel_B: same AI, latency-bound: under a fifth of kernel_A's rate */
	tb = val(t, &s, 1, "gpu__time_duration.sum") * 1e-9;
	assert_true(fb / tb < 0.2 * fa / ta);
	/* the two time definitions agree within 1% */
	assert_true(fabs(val(t, &s, 0, "sm__cycles_elapsed.avg") / clk - ta) < 0.01 * ta);
	/* three replay passes for the default set */
	assert_true(val(t, &s, 0, "profiler__replayer_passes") == 3);
	ncu_csv_free(t);
	free_set(&s);
}

/* The default set of arch 90 is exactly what the fixture was captured with. */
static void test_fixture_matches_table(void **state)
{
	struct set s, full;
	struct ncu_csv *t;
	size_t i, k;

	(void)state;
	load_set(&s, "90", NULL, 0);
	assert_int_equal(s.n, 20);
	t = parse_fixture("kernel_abc.raw.csv", &s);
	for (k = 0; k < t->n_launches; k++)
		for (i = 0; i < s.n; i++)
			assert_non_null(t->launches[k].values[i]);
	ncu_csv_free(t);
	load_set(&full, "90", (const char *const[]){ "all" }, 1);
	assert_int_equal(full.n, 27); /* + 2 byte metrics, 5 tensor datapaths */
	t = parse_fixture("kernel_abc.full.raw.csv", &full);
	for (i = 0; i < full.n; i++)
		assert_non_null(t->launches[0].values[i]);
	/* Nsight Compute's definition: 128 B per L1 writeback cycle */
	assert_true(128 * val(t, &full, 0, "l1tex__lsu_writeback_active_mem_lgds.sum") ==
		    0.5 * val(t, &full, 0, "l1tex__t_bytes.sum"));
	assert_true(val(t, &full, 0, "profiler__replayer_passes") == 9);
	ncu_csv_free(t);
	free_set(&full);
	free_set(&s);
}

/* ---- GSRB ---------------------------------------------------------------- */

static void test_gsrb(void **state)
{
	struct set s;
	struct ncu_csv *t;
	size_t lvl;

	(void)state;
	load_set(&s, "90", NULL, 0);
	t = parse_fixture("gsrb.raw.csv", &s);
	assert_int_equal(t->n_launches, 18); /* 3 levels x 3 variants x 2 colours */
	for (lvl = 0; lvl < 3; lvl++) {
		size_t fp = lvl * 6, br = fp + 2, s2 = fp + 4;
		double points = dim3_product(t->launches[fp].grid) *
				dim3_product(t->launches[fp].block) * 8; /* KB planes */
		double ffp = dp_flops(t, &s, fp), fbr = dp_flops(t, &s, br);
		double dfp = val(t, &s, fp, "dram__bytes.sum");
		double dbr = val(t, &s, br, "dram__bytes.sum");
		double dst = val(t, &s, s2, "dram__bytes.sum");

		assert_true(strncmp(t->launches[fp].kernel, "GSRB_FP(", 8) == 0);
		assert_true(strncmp(t->launches[br].kernel, "GSRB_BRANCH(", 12) == 0);
		assert_true(strncmp(t->launches[s2].kernel, "GSRB_STRIDE2(", 13) == 0);
		/* n^3 points: 64^3, 128^3, 256^3 */
		assert_true(points == pow(64.0 * (1 << lvl), 3));
		/* BRANCH: about half the FLOPs of FP ... */
		assert_true(fbr / ffp > 0.45 && fbr / ffp < 0.5);
		/* ... at the same DRAM bytes (within 5%) */
		assert_true(fabs(dbr / dfp - 1) < 0.05);
		/* STRIDE2 does the FLOPs of BRANCH (within 1%) */
		assert_true(fabs(dp_flops(t, &s, s2) / fbr - 1) < 0.01);
		/* and moves more DRAM bytes once the level outgrows the L2 */
		if (lvl == 2)
			assert_true(dst / dbr > 1.1);
		else
			assert_true(fabs(dst / dbr - 1) < 0.05);
	}
	ncu_csv_free(t);
	free_set(&s);
}

/* ---- references ---------------------------------------------------------- */

static void test_dgemm_tensor(void **state)
{
	struct set s;
	struct ncu_csv *t;
	double n = program_number("dgemm.program.txt", "n=m=k=");

	(void)state;
	load_set(&s, "90", NULL, 0);
	t = parse_fixture("dgemm.raw.csv", &s);
	assert_int_equal(t->n_launches, 1);
	assert_non_null(strstr(t->launches[0].kernel, "gemm"));
	/* on the FP64 tensor path: 2 n^3 FLOPs, counted apart from DFMA etc. */
	assert_true(val(t, &s, 0, "sm__ops_path_tensor_src_fp64.sum") == 2 * n * n * n);
	assert_true(dp_flops(t, &s, 0) < 1e-3 * 2 * n * n * n);
	ncu_csv_free(t);
	free_set(&s);
}

static void test_stream_triad(void **state)
{
	struct set s;
	struct ncu_csv *t;
	double n = program_number("stream_triad.program.txt", "n=");
	size_t i;

	(void)state;
	load_set(&s, "90", NULL, 0);
	t = parse_fixture("stream_triad.raw.csv", &s);
	assert_int_equal(t->n_launches, 2); /* --launch-skip 1 --launch-count 2 */
	for (i = 0; i < 2; i++) {
		assert_true(val(t, &s, i, SASS "dfma_pred_on.sum") == n);
		assert_true(dp_flops(t, &s, i) == 2 * n);
		assert_true(fabs(val(t, &s, i, "dram__bytes.sum") / (24 * n) - 1) < 0.02);
	}
	ncu_csv_free(t);
	free_set(&s);
}

/* ---- layouts -------------------------------------------------------------- */

/* Raw and details pages of one report hold the same text. */
static void test_details_equals_raw(void **state)
{
	struct set s;
	struct ncu_csv *raw, *det;
	size_t i, k;

	(void)state;
	load_set(&s, "90", NULL, 0);
	raw = parse_fixture("kernel_abc.import-raw.csv", &s);
	det = parse_fixture("kernel_abc.import-details.csv", &s);
	assert_int_equal(raw->layout, NCU_CSV_RAW);
	assert_int_equal(det->layout, NCU_CSV_DETAILS);
	assert_int_equal(det->n_launches, 3);
	for (k = 0; k < 3; k++) {
		assert_string_equal(raw->launches[k].kernel, det->launches[k].kernel);
		for (i = 0; i < s.n; i++) {
			assert_non_null(det->launches[k].values[i]);
			assert_string_equal(raw->launches[k].values[i],
					    det->launches[k].values[i]);
		}
	}
	ncu_csv_free(raw);
	ncu_csv_free(det);
	free_set(&s);
}

/* ncu's default units: prefixes converted, rounding flagged. */
static void test_details_default_units(void **state)
{
	struct set s;
	struct ncu_csv *raw, *def;
	struct ncu_record_column cols[64];
	struct ncu_record rec = { 0 };
	const char *v, *rounded = NULL;
	double exact, conv;
	size_t i;

	(void)state;
	load_set(&s, "90", NULL, 0);
	raw = parse_fixture("kernel_abc.import-raw.csv", &s);
	def = parse_fixture("kernel_abc.import-details-default.csv", &s);
	i = slot(&s, "gpu__time_duration.sum");
	assert_string_equal(def->launches[0].units[i], "us");
	for (i = 0; i < s.n; i++)
		cols[i] = (struct ncu_record_column){ s.names[i], s.sel[i]->role, i };
	assert_int_equal(ncu_record_kernel(def, 0, cols, s.n, NULL, &rec), 0);
	for (i = 0; rec.fields[i].key; i++)
		if (strcmp(rec.fields[i].key, "rounded") == 0)
			rounded = rec.fields[i].value;
	assert_non_null(rounded);
	assert_non_null(strstr(rounded, "gpu__time_duration.sum"));
	assert_null(strstr(rounded, "sm__sass")); /* "inst" needs no prefix */
	for (i = 0; rec.fields[i].key; i++)
		if (strcmp(rec.fields[i].key, "gpu__time_duration.sum") == 0)
			break;
	v = rec.fields[i].value;
	assert_int_equal(ncu_value_parse(v, &conv), 0);
	exact = val(raw, &s, 0, "gpu__time_duration.sum");
	assert_true(fabs(conv - exact) <= 0.005e3); /* printed in us, 2 decimals */
	ncu_record_release(&rec);
	ncu_csv_free(raw);
	ncu_csv_free(def);
	free_set(&s);
}

/* Without --log-file the program's output precedes the table. */
static void test_program_output_skipped(void **state)
{
	struct set s;
	struct ncu_csv *t;
	char *text = read_text(path_of("kernel_abc.quick.nolog.csv"));
	char *hdr = strstr(text, "\n\"ID\","), *p;
	size_t plain = 0;

	(void)state;
	for (p = text; p < hdr; p = strchr(p, '\n') + 1)
		plain += strncmp(p, "==", 2) != 0;
	load_set(&s, "90", NULL, 0);
	t = parse_fixture("kernel_abc.quick.nolog.csv", &s);
	assert_int_equal(t->skipped_lines, plain);
	assert_int_equal(t->n_launches, 1);
	assert_string_equal(t->launches[0].kernel,
			    "kernel_C(double *, const double *, long, double)");
	ncu_csv_free(t);
	free_set(&s);
	free(text);
}

/* ---- syntax ---------------------------------------------------------------- */

static struct ncu_csv *parse_text(const char *text, const char *const *m, size_t n,
				  char *err, int *rc)
{
	struct ncu_csv *t = NULL;
	char *buf = strdup(text);

	*rc = ncu_csv_parse(buf, strlen(buf), "t.csv", m, n, &t, err, NCU_CSV_ERRLEN);
	return t;
}

static void test_rfc4180(void **state)
{
	static const char *const m[] = { "dram__bytes.sum", "x__text" };
	char err[NCU_CSV_ERRLEN];
	int rc;
	struct ncu_csv *t = parse_text(
		"==PROF== Connected\r\n"
		"\"ID\",\"Kernel Name\",\"dram__bytes.sum\",\"x__text\"\r\n"
		"\"\",\"\",\"byte\",\"\"\r\n"
		"\"0\",\"void f<int, 2>(float *, \"\"q\"\", (a,b))\",\"1,234,567\",\"n/a\"\r\n"
		"\"1\",\"g(\nmultiline)\",\"12.5e-3\",\"NVIDIA H100, 80GB\"\r\n"
		"\"2\",plain,\"-7\",\"\"\r\n",
		m, 2, err, &rc);

	(void)state;
	if (rc)
		fail_msg("%s", err);
	assert_int_equal(t->n_launches, 3);
	assert_string_equal(t->launches[0].kernel, "void f<int, 2>(float *, \"q\", (a,b))");
	assert_string_equal(t->launches[0].values[0], "1234567");
	assert_null(t->launches[0].values[1]); /* n/a: missing */
	assert_string_equal(t->launches[1].kernel, "g(\nmultiline)");
	assert_string_equal(t->launches[1].values[0], "12.5e-3");
	assert_string_equal(t->launches[1].values[1], "NVIDIA H100, 80GB");
	assert_int_equal(t->launches[2].line, 7); /* the quoted LF counts */
	assert_string_equal(t->launches[2].kernel, "plain");
	assert_string_equal(t->launches[2].units[0], "byte");
	ncu_csv_free(t);
}

static void expect_error(const char *text, const char *const *m, size_t n,
			 const char *where, const char *what)
{
	char err[NCU_CSV_ERRLEN];
	int rc;
	struct ncu_csv *t = parse_text(text, m, n, err, &rc);

	assert_int_equal(rc, -EINVAL);
	assert_null(t);
	if (strncmp(err, where, strlen(where)) != 0 || !strstr(err, what))
		fail_msg("got '%s', want '%s...%s'", err, where, what);
}

static void test_syntax_errors(void **state)
{
	static const char *const m[] = { "dram__bytes.sum" };
	const char *hdr = "\"ID\",\"Kernel Name\",\"dram__bytes.sum\"\n\"\",\"\",\"byte\"\n";
	char text[512];

	(void)state;
	snprintf(text, sizeof(text), "%s\"0\",\"k\",\"1,23\"\n", hdr);
	expect_error(text, m, 1, "t.csv:3:9:", "value '1,23' is not a number");
	snprintf(text, sizeof(text), "%s\"0\",\"k\"\n", hdr);
	expect_error(text, m, 1, "t.csv:3:", "row has 2 fields, the header has 3");
	snprintf(text, sizeof(text), "%s\"0\",\"k\",\"1\",\"2\"\n", hdr);
	expect_error(text, m, 1, "t.csv:3:", "more fields than the header's 3");
	snprintf(text, sizeof(text), "%s\"0\",\"k\",\"1\n", hdr);
	expect_error(text, m, 1, "t.csv:3:9:", "unterminated quoted field");
	snprintf(text, sizeof(text), "%s\"0\",\"k\"x,\"1\"\n", hdr);
	expect_error(text, m, 1, "t.csv:3:8:", "unexpected 'x'");
	snprintf(text, sizeof(text), "%s\"0\",\"k\",\"n/a\"\n", hdr);
	expect_error(text, m, 1, "t.csv:3:", "has no value for any of the 1 selected");
	snprintf(text, sizeof(text), "%s\"\",\"k\",\"1\"\n\"\",\"k\",\"1\"\n", hdr);
	expect_error(text, m, 1, "t.csv:3:1:", "row without a launch ID");
	expect_error("\"ID\",\"x\"\n", m, 1, "t.csv:1:1:", "no 'Kernel Name' column");
	expect_error("\"Kernel Name\",\"x\"\n", m, 1, "t.csv:2:1:", "no CSV table");
	expect_error("hello\n==WARNING== No kernels were profiled.\n", m, 1, "t.csv:2:1:",
		     "no CSV table: ==WARNING== No kernels were profiled.");
	snprintf(text, sizeof(text), "==ERROR== the_error\n%s", hdr);
	expect_error(text, m, 1, "t.csv:1:1:", "ncu reported an error: ==ERROR== the_error");
}

/* ---- the bad corpus -------------------------------------------------------- */

static void expect_file_error(const char *name, const char *where, const char *what)
{
	struct set s;
	char err[NCU_CSV_ERRLEN], want[256];
	struct ncu_csv *t = (struct ncu_csv *)&s;

	load_set(&s, "90", NULL, 0);
	assert_int_equal(ncu_csv_read_file(path_of(name), s.names, s.n, &t, err,
					   sizeof(err)), -EINVAL);
	assert_null(t);
	snprintf(want, sizeof(want), "%s:%s", path_of(name), where);
	if (strncmp(err, want, strlen(want)) != 0 || !strstr(err, what))
		fail_msg("%s: got '%s', want '%s ... %s'", name, err, want, what);
	free_set(&s);
}

static void test_bad_corpus(void **state)
{
	(void)state;
	expect_file_error("bad/truncated.csv", "8:", "unterminated quoted field (truncated file?)");
	expect_file_error("bad/wrong-columns.csv", "7:", "row has 340 fields, the header has 341");
	expect_file_error("bad/unprofiled-na.csv", "7:",
			  "launch 1 'kernel_B(double *, long, double)' has no value");
	expect_file_error("bad/unprofiled-empty.csv", "7:", "has no value for any of the 20");
	expect_file_error("bad/error-line.csv", "9:1:", "ncu reported an error: ==ERROR==");
	expect_file_error("bad/bad-quote.csv", "6:", "unexpected 'x' after a field");
	expect_file_error("bad/locale-number.csv", "6:",
			  "metric 'dram__bytes.sum' (byte): value '4.608.000' is not a number");
	expect_file_error("bad/garbage.bin", "", "no CSV table");
	expect_file_error("bad/no-kernels.log", "4:1:",
			  "no CSV table: ==WARNING== No kernels were profiled.");
}

/* n/a in one metric: parsed, that value missing, the rest intact. */
static void test_na_one_value(void **state)
{
	struct set s;
	struct ncu_csv *t;

	(void)state;
	load_set(&s, "90", NULL, 0);
	t = parse_fixture("bad/na-dram.csv", &s);
	assert_null(t->launches[1].values[slot(&s, "dram__bytes.sum")]);
	assert_non_null(t->launches[0].values[slot(&s, "dram__bytes.sum")]);
	assert_non_null(t->launches[1].values[slot(&s, "lts__t_bytes.sum")]);
	ncu_csv_free(t);
	free_set(&s);
}

/* ncu drops a metric name it does not know without a word (real capture). */
static void test_unknown_metric_missing(void **state)
{
	static const char *const m[] = { "gpu__time_duration.sum", "no_such__metric.sum" };
	char err[NCU_CSV_ERRLEN];
	struct ncu_csv *t;

	(void)state;
	assert_int_equal(ncu_csv_read_file(path_of("bad/unknown-metric.raw.csv"), m, 2,
					   &t, err, sizeof(err)), 0);
	assert_int_equal(t->n_launches, 1);
	assert_non_null(t->launches[0].values[0]);
	assert_null(t->launches[0].values[1]);
	ncu_csv_free(t);
}

/* ---- records -------------------------------------------------------------- */

static const char *field(const struct ncu_record *rec, const char *key)
{
	size_t i;

	for (i = 0; rec->fields[i].key; i++)
		if (strcmp(rec->fields[i].key, key) == 0)
			return rec->fields[i].value;
	return NULL;
}

static void test_kernel_record(void **state)
{
	struct set s;
	struct ncu_csv *t;
	struct ncu_record_column cols[65];
	struct ncu_record rec = { 0 };
	const struct rl_field extra[] = { { "source", "ncu" }, { NULL, NULL } };
	size_t i;

	(void)state;
	load_set(&s, "90", NULL, 0);
	t = parse_fixture("kernel_abc.raw.csv", &s);
	for (i = 0; i < s.n; i++)
		cols[i] = (struct ncu_record_column){ s.names[i], s.sel[i]->role, i };
	cols[s.n] = (struct ncu_record_column){ "l1tex__lsu_writeback_active_mem_lgds.sum",
						"bytes_l1_ncu", (size_t)-1 };
	assert_int_equal(ncu_record_kernel(t, 0, cols, s.n + 1, extra, &rec), 0);
	assert_string_equal(field(&rec, "kernel"), "kernel_A(double *, long, double)");
	assert_string_equal(field(&rec, "invocation"), "0");
	assert_string_equal(field(&rec, "gpu_index"), "0");
	assert_string_equal(field(&rec, "gpu_name"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(field(&rec, "cc"), "9.0");
	assert_string_equal(field(&rec, "grid"), "(4096, 1, 1)");
	assert_string_equal(field(&rec, "source"), "ncu");
	assert_string_equal(field(&rec, "sm_clock_hz"),
			    field(&rec, "sm__cycles_elapsed.avg.per_second"));
	assert_string_equal(field(&rec, SASS "dadd_pred_on.sum"), "10485760000");
	assert_string_equal(field(&rec, "missing"), "l1tex__lsu_writeback_active_mem_lgds.sum");
	assert_null(field(&rec, "rounded"));
	/* every metric of the set, but the display name: the device record's */
	for (i = 0; i < s.n; i++) {
		if (ncu_csv_is_device_column(s.names[i]))
			assert_null(field(&rec, s.names[i]));
		else
			assert_non_null(field(&rec, s.names[i]));
	}
	assert_null(field(&rec, "device__attribute_display_name"));
	ncu_record_release(&rec);
	ncu_csv_free(t);
	free_set(&s);
}

static size_t n_fields(const struct ncu_record *rec)
{
	size_t n = 0;

	while (rec->fields[n].key)
		n++;
	return n;
}

/* The naive count of the header's columns of device properties. */
static size_t naive_device_columns(const char *file)
{
	static const char *const prefixes[] = {
		"\"device__", "\"nvlink__", "\"numa__", "\"c2clink__",
	};
	char *text = read_text(path_of(file)), *hdr = strstr(text, "\"ID\",");
	char *end = strchr(hdr, '\n'), *p;
	size_t n = 0, k;

	for (p = hdr; p && p < end; p = strstr(p + 1, ",\""))
		for (k = 0; k < 4; k++)
			n += strncmp(p + (*p == ','), prefixes[k], strlen(prefixes[k])) == 0;
	free(text);
	return n;
}

/* The raw page's ~190 GPU constants: once, from the first launch. */
static void test_devices(void **state)
{
	static const char *const files[] = { "kernel_abc.raw.csv", "gsrb.raw.csv",
					     "dgemm.raw.csv", "kernel_abc.sol.raw.csv" };
	const struct rl_field extra[] = { { "source", "ncu" }, { NULL, NULL } };
	struct ncu_record rec = { 0 };
	struct set s;
	size_t f, i;

	(void)state;
	load_set(&s, "90", NULL, 0);
	for (f = 0; f < 4; f++) {
		struct ncu_csv *t = parse_fixture(files[f], &s);
		const struct ncu_csv_device *d = &t->devices[0];
		size_t want = naive_device_columns(files[f]);

		assert_int_equal(t->n_devices, 1);
		assert_string_equal(d->device, "0");
		assert_string_equal(d->cc, "9.0");
		assert_int_equal(d->first_launch, 0);
		/* 166 device__attribute_*, 18 nvlink__, 4 numa__, 2 c2clink__ */
		assert_int_equal(want, 190);
		assert_int_equal(d->n, want);
		for (i = 0; i < t->n_launches; i++)
			assert_int_equal(t->launches[i].device_index, 0);
		for (i = 0; i < d->n; i++) {
			char v[256];

			assert_true(ncu_csv_is_device_column(d->names[i]));
			naive_value(files[f], t->launches[0].kernel, d->names[i], v, sizeof(v));
			assert_string_equal(d->values[i], v);
		}
		assert_int_equal(ncu_record_device(t, 0, extra, &rec), 0);
		assert_string_equal(rec.fields[0].key, "gpu_index");
		assert_string_equal(rec.fields[0].value, "0");
		assert_string_equal(rec.fields[1].key, "gpu_name");
		assert_string_equal(rec.fields[1].value, "NVIDIA H100 80GB HBM3");
		assert_string_equal(rec.fields[2].key, "cc");
		assert_string_equal(rec.fields[3].key, "source");
		assert_int_equal(n_fields(&rec), 4 + want);
		assert_string_equal(field(&rec, "device__attribute_multiprocessor_count"), "132");
		assert_string_equal(field(&rec, "device__attribute_display_name"),
				    "NVIDIA H100 80GB HBM3");
		ncu_csv_free(t);
	}
	ncu_record_release(&rec);
	free_set(&s);
}

static void test_device_columns(void **state)
{
	(void)state;
	assert_true(ncu_csv_is_device_column("device__attribute_display_name"));
	assert_true(ncu_csv_is_device_column("nvlink__dev0Id"));
	assert_true(ncu_csv_is_device_column("numa__id_cpu"));
	assert_true(ncu_csv_is_device_column("c2clink__present"));
	assert_false(ncu_csv_is_device_column("device__"));
	assert_false(ncu_csv_is_device_column("device__attribute x"));
	assert_false(ncu_csv_is_device_column("Device"));
	assert_false(ncu_csv_is_device_column("dram__bytes.sum"));
	assert_false(ncu_csv_is_device_column("launch__device_id"));
	assert_false(ncu_csv_is_device_column("launch__sm_count"));
	assert_false(ncu_csv_is_device_column("profiler__replayer_passes"));
	assert_false(ncu_csv_is_device_column("sm__cycles_elapsed.avg.per_second"));
	assert_false(ncu_csv_is_device_column("dram__cycles_elapsed.avg.per_second"));
	assert_false(ncu_csv_is_device_column(NULL));
}

/* Two GPUs; separators, n/a; the Device column before or after them. */
static void test_devices_synthetic(void **state)
{
	static const char *const m[] = { "dram__bytes.sum", "device__attribute_display_name" };
	const struct ncu_record_column cols[] = {
		{ "dram__bytes.sum", "bytes_dram", 0 },
		{ "device__attribute_display_name", "gpu_name", 1 },
	};
	struct ncu_record rec = { 0 };
	char err[NCU_CSV_ERRLEN];
	struct ncu_csv *t;
	int rc;

	(void)state;
	t = parse_text("\"ID\",\"Kernel Name\",\"Device\",\"CC\",\"device__attribute_display_name\","
		       "\"device__attribute_clock_rate\",\"nvlink__count_logical\",\"numa__id_cpu\","
		       "\"dram__bytes.sum\"\n"
		       "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"byte\"\n"
		       "\"0\",\"k\",\"0\",\"9.0\",\"GPU A\",\"1,980,000\",\"n/a\",\"0\",\"10\"\n"
		       "\"1\",\"k\",\"1\",\"8.0\",\"GPU B\",\"1,410,000\",\"12\",\"1\",\"20\"\n"
		       "\"2\",\"k\",\"0\",\"9.0\",\"GPU A2\",\"1\",\"1\",\"1\",\"30\"\n",
		       m, 2, err, &rc);
	if (rc)
		fail_msg("%s", err);
	assert_int_equal(t->n_devices, 2);
	assert_string_equal(t->devices[0].device, "0");
	assert_string_equal(t->devices[1].device, "1");
	assert_string_equal(t->devices[1].cc, "8.0");
	assert_int_equal(t->devices[1].first_launch, 1);
	assert_int_equal(t->launches[2].device_index, 0);
	/* n/a left out; the first launch's values */
	assert_int_equal(t->devices[0].n, 3);
	assert_string_equal(t->devices[0].names[1], "device__attribute_clock_rate");
	assert_string_equal(t->devices[0].values[1], "1980000");
	assert_string_equal(t->devices[0].names[2], "numa__id_cpu");
	assert_int_equal(t->devices[1].n, 4);
	assert_string_equal(t->devices[1].values[2], "12");
	/* the launch keeps its own value of a collected property */
	assert_string_equal(t->launches[2].values[1], "GPU A2");
	assert_int_equal(ncu_record_device(t, 1, NULL, &rec), 0);
	assert_string_equal(field(&rec, "gpu_index"), "1");
	assert_string_equal(field(&rec, "gpu_name"), "GPU B");
	assert_string_equal(field(&rec, "cc"), "8.0");
	assert_string_equal(field(&rec, "device__attribute_clock_rate"), "1410000");
	assert_int_equal(n_fields(&rec), 3 + 4);
	assert_int_equal(ncu_record_kernel(t, 1, cols, 2, NULL, &rec), 0);
	assert_string_equal(field(&rec, "gpu_index"), "1");
	assert_string_equal(field(&rec, "gpu_name"), "GPU B");
	assert_string_equal(field(&rec, "dram__bytes.sum"), "20");
	assert_null(field(&rec, "device__attribute_display_name"));
	assert_null(field(&rec, "device__attribute_clock_rate"));
	assert_string_equal(field(&rec, "missing"), "");
	ncu_csv_free(t);

	/* Device after the properties; no CC column */
	t = parse_text("\"ID\",\"Kernel Name\",\"device__attribute_clock_rate\",\"Device\","
		       "\"dram__bytes.sum\"\n"
		       "\"0\",\"k\",\"5\",\"0\",\"1\"\n\"1\",\"k\",\"6\",\"0\",\"1\"\n"
		       "\"2\",\"k\",\"7\",\"1\",\"1\"\n",
		       m, 1, err, &rc);
	if (rc)
		fail_msg("%s", err);
	assert_int_equal(t->n_devices, 2);
	assert_string_equal(t->devices[0].values[0], "5");
	assert_string_equal(t->devices[1].values[0], "7");
	assert_null(t->devices[1].cc);
	ncu_csv_free(t);

	/* No Device column: one device without an index */
	t = parse_text("\"ID\",\"Kernel Name\",\"numa__id_cpu\",\"dram__bytes.sum\"\n"
		       "\"0\",\"k\",\"3\",\"1\"\n\"1\",\"k\",\"4\",\"1\"\n",
		       m, 1, err, &rc);
	if (rc)
		fail_msg("%s", err);
	assert_int_equal(t->n_devices, 1);
	assert_null(t->devices[0].device);
	assert_string_equal(t->devices[0].values[0], "3");
	assert_int_equal(ncu_record_device(t, 0, NULL, &rec), 0);
	assert_null(field(&rec, "gpu_index"));
	assert_string_equal(field(&rec, "numa__id_cpu"), "3");
	ncu_csv_free(t);

	/* Details page: properties from their rows, each once; without the
	 * display name, the kernel record lists it missing */
	t = parse_text("\"ID\",\"Kernel Name\",\"Device\",\"CC\",\"Metric Name\",\"Metric Unit\","
		       "\"Metric Value\"\n"
		       "\"0\",\"k\",\"0\",\"9.0\",\"device__attribute_clock_rate\",\"\",\"1,980,000\"\n"
		       "\"0\",\"k\",\"0\",\"9.0\",\"dram__bytes.sum\",\"byte\",\"4,608\"\n"
		       "\"1\",\"k\",\"0\",\"9.0\",\"device__attribute_clock_rate\",\"\",\"7\"\n"
		       "\"1\",\"k\",\"0\",\"9.0\",\"dram__bytes.sum\",\"byte\",\"10\"\n",
		       m, 2, err, &rc);
	if (rc)
		fail_msg("%s", err);
	assert_int_equal(t->n_devices, 1);
	assert_int_equal(t->devices[0].n, 1);
	assert_string_equal(t->devices[0].values[0], "1980000");
	assert_int_equal(ncu_record_kernel(t, 1, cols, 2, NULL, &rec), 0);
	assert_null(field(&rec, "gpu_name"));
	assert_string_equal(field(&rec, "missing"), "device__attribute_display_name");
	assert_int_equal(ncu_record_device(t, 0, NULL, &rec), 0);
	assert_null(field(&rec, "gpu_name"));
	assert_string_equal(field(&rec, "device__attribute_clock_rate"), "1980000");
	ncu_csv_free(t);
	ncu_record_release(&rec);
}

/* More properties than a records line holds: the rest counted. */
static void test_device_record_cap(void **state)
{
	static const char *const m[] = { "dram__bytes.sum" };
	size_t n = NCU_RECORD_MAX_DEVICE_FIELDS + 10, i, len = 0, cap = n * 40 + 256;
	char *text = malloc(cap), err[NCU_CSV_ERRLEN];
	struct ncu_record rec = { 0 };
	struct ncu_csv *t;
	int rc;

	(void)state;
	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "\"ID\",\"Kernel Name\",\"dram__bytes.sum\"");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, ",\"device__attribute_a%zu\"", i);
	len += (size_t)snprintf(text + len, cap - len, "\n\"0\",\"k\",\"1\"");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, ",\"%zu\"", i);
	snprintf(text + len, cap - len, "\n");
	t = parse_text(text, m, 1, err, &rc);
	if (rc)
		fail_msg("%s", err);
	assert_int_equal(t->devices[0].n, n);
	assert_int_equal(ncu_record_device(t, 0, NULL, &rec), 0);
	assert_int_equal(n_fields(&rec), NCU_RECORD_MAX_DEVICE_FIELDS + 1);
	assert_string_equal(field(&rec, "dropped"), "10");
	assert_null(field(&rec, "gpu_index"));
	ncu_record_release(&rec);
	ncu_csv_free(t);
	free(text);
}

/* ---- the table ---------------------------------------------------------------- */

static void expect_table_error(const char *text, const char *where, const char *what)
{
	char err[NCU_TABLE_ERRLEN];
	struct ncu_table *t;
	char *buf = strdup(text);

	assert_int_equal(ncu_table_parse(buf, strlen(buf), "m.tsv", &t, err,
					 sizeof(err)), -EINVAL);
	if (strncmp(err, where, strlen(where)) != 0 || !strstr(err, what))
		fail_msg("got '%s', want '%s ... %s'", err, where, what);
}

static void test_table(void **state)
{
	const char *good = "# c\n*\tdram__bytes.sum\tbytes_dram\t1\tdefault\tnote\n"
			   "90\tx__y.sum\tbytes_dram\t1\tdefault\n"
			   "90\tsm__t.sum\ttensor_fp16\t1\textra\n"
			   "*\tsm__a.sum\tflop_dp_fma\t2\tdefault\n";
	const struct ncu_table_row **sel;
	struct ncu_table *t;
	char err[NCU_TABLE_ERRLEN], *buf = strdup(good);
	long n;

	(void)state;
	assert_int_equal(ncu_table_parse(buf, strlen(buf), "m.tsv", &t, err,
					 sizeof(err)), 0);
	n = ncu_table_select(t, "90", NULL, 0, &sel);
	assert_int_equal(n, 2); /* own bytes_dram replaces '*', no extra */
	assert_string_equal(sel[0]->metric, "x__y.sum");
	assert_string_equal(sel[1]->metric, "sm__a.sum");
	free(sel);
	n = ncu_table_select(t, "90", (const char *const[]){ "tensor_fp16" }, 1, &sel);
	assert_int_equal(n, 3);
	free(sel);
	n = ncu_table_select(t, "80", (const char *const[]){ "all" }, 1, &sel);
	assert_int_equal(n, 2);
	assert_string_equal(sel[0]->metric, "dram__bytes.sum");
	free(sel);
	assert_true(ncu_table_has_arch(t, "90"));
	assert_false(ncu_table_has_arch(t, "80"));
	assert_true(ncu_table_has_extra_role(t, "tensor_fp16"));
	assert_false(ncu_table_has_extra_role(t, "bytes_dram"));
	ncu_table_free(t);
	expect_table_error("*\tdram__bytes.sum\tbytes_xx\t1\tdefault\n", "m.tsv:1:19:",
			   "unknown role 'bytes_xx'");
	expect_table_error("*\ta__b.sum\tflop_dp_fma\t1\tdefault\n", "m.tsv:1:24:",
			   "role 'flop_dp_fma' needs factor 2");
	expect_table_error("9.0\ta__b.sum\tbytes_l1\t1\tdefault\n", "m.tsv:1:1:",
			   "arch '9.0'");
	expect_table_error("*\ta__b.sum\tbytes_l1\t0\tdefault\n", "m.tsv:1:", "not a positive");
	expect_table_error("*\ta__b.sum\tbytes_l1\t1\tsometimes\n", "m.tsv:1:", "set 'sometimes'");
	expect_table_error("*\ta__b.sum\tbytes_l1\n", "m.tsv:1:", "expected 5 TAB-separated");
	expect_table_error("*\tnot a metric\tbytes_l1\t1\tdefault\n", "m.tsv:1:3:",
			   "not an ncu metric name");
	expect_table_error("*\ta__b.sum\tbytes_l1\t1\tdefault\n*\tc__d.sum\tbytes_l1\t1\textra\n",
			   "m.tsv:2:1:", "role 'bytes_l1' given twice for arch '*' (line 1 first)");
	expect_table_error("# nothing\n", "m.tsv:", "no metric rows");
}

/*
 * tests/fixtures/tensor: the ncu plugin's own log files on the H100 with the
 * committed table's default set (21 metrics, 4 passes), the GEMM's tensor
 * FLOPs against 2 m n k of the program's own line, and with extra: [all]
 * (28 metrics, 9 passes) every datapath but the GEMM's own at 0.
 */
static void test_tensor_captures(void **state)
{
	static const struct { const char *name, *metric; } gemm[] = {
		{ "gemm-bf16", "sm__ops_path_tensor_src_bf16_dst_fp32.sum" },
		{ "gemm-fp16-all", "sm__ops_path_tensor_src_fp16.sum" },
	};
	static const char *const all[] = { "all" };
	char file[128];
	struct set s, full;
	struct ncu_csv *t;

	(void)state;
	load_set_from(&s, "etc/ncu-metrics.tsv", "90", NULL, 0);
	load_set_from(&full, "etc/ncu-metrics.tsv", "90", all, 1);
	assert_int_equal(s.n, 21);
	assert_int_equal(full.n, 28);
	for (size_t g = 0; g < 2; g++) {
		const struct set *set = g ? &full : &s;
		char *prog, *p;
		double m, n, k;

		snprintf(file, sizeof(file), "../tensor/%s.ncu.csv", gemm[g].name);
		t = parse_fixture(file, set);
		assert_int_equal(t->n_launches, 1);
		for (size_t i = 0; i < set->n; i++) /* every metric delivered */
			assert_non_null(t->launches[0].values[i]);
		assert_int_equal((long)val(t, set, 0, "profiler__replayer_passes"), g ? 9 : 4);
		snprintf(file, sizeof(file), "../tensor/%s.program.txt", gemm[g].name);
		prog = read_text(path_of(file));
		p = strstr(prog, " m=");
		assert_non_null(p);
		assert_int_equal(sscanf(p, " m=%lf n=%lf k=%lf", &m, &n, &k), 3);
		free(prog);
		assert_true(fabs(val(t, set, 0, gemm[g].metric) - 2 * m * n * k) <=
			    0.01 * 2 * m * n * k);
		for (size_t i = 0; g && i < set->n; i++)
			if (strstr(set->names[i], "sm__ops_path_tensor_src_") &&
			    strcmp(set->names[i], gemm[g].metric) != 0)
				assert_true(val(t, set, 0, set->names[i]) == 0);
		ncu_csv_free(t);
	}
	free_set(&s);
	free_set(&full);
}

/* A tensor datapath of several rows (parts), and what a selection leaves out. */
static void test_table_parts(void **state)
{
	static const char text[] =
		"80\tsm__ops_path_tensor_src_fp16_dst_fp16.sum\ttensor_fp16\t1\textra\n"
		"80\tsm__ops_path_tensor_src_fp16_dst_fp32.sum\ttensor_fp16\t1\textra\n"
		"80\tsm__ops_path_tensor_src_bf16_dst_fp32.sum\ttensor_bf16\t1\tdefault\n"
		"80\tsm__ops_path_tensor_src_int8.sum\ttensor_int8\t1\textra\n"
		"*\tdram__bytes.sum\tbytes_dram\t1\tdefault\n";
	const struct ncu_table_row **sel;
	const char *fp16[] = { "tensor_fp16" }, *all[] = { "all" };
	char err[NCU_TABLE_ERRLEN], *buf = strdup(text), list[64];
	struct ncu_table *t;
	long n;

	(void)state;
	assert_int_equal(ncu_table_parse(buf, strlen(buf), "m.tsv", &t, err, sizeof(err)), 0);
	n = ncu_table_select(t, "80", fp16, 1, &sel);
	assert_int_equal(n, 4); /* both fp16 parts, bf16, DRAM */
	assert_string_equal(sel[0]->metric, "sm__ops_path_tensor_src_fp16_dst_fp16.sum");
	assert_string_equal(sel[1]->metric, "sm__ops_path_tensor_src_fp16_dst_fp32.sum");
	free(sel);
	assert_int_equal(ncu_table_datapaths(t, "80", NULL, 0, list, sizeof(list)), 2);
	assert_string_equal(list, "fp16,int8");
	assert_int_equal(ncu_table_datapaths(t, "80", fp16, 1, list, sizeof(list)), 1);
	assert_string_equal(list, "int8");
	assert_int_equal(ncu_table_datapaths(t, "80", all, 1, list, sizeof(list)), 0);
	assert_string_equal(list, "");
	assert_int_equal(ncu_table_datapaths(t, "90", NULL, 0, list, sizeof(list)), 0);
	assert_true(ncu_table_is_datapath("tensor_fp8"));
	assert_false(ncu_table_is_datapath("tensor_inst"));
	ncu_table_free(t);
	expect_table_error("80\ta__b.sum\ttensor_fp16\t1\tdefault\n80\tc__d.sum\ttensor_fp16\t1\textra\n",
			   "m.tsv:2:1:", "the parts of a datapath share one set");
	expect_table_error("80\ta__b.sum\ttensor_fp16\t1\tdefault\n80\ta__b.sum\ttensor_fp16\t1\tdefault\n",
			   "m.tsv:2:1:", "metric 'a__b.sum' given twice for arch '80'");
	expect_table_error("80\ta__b.sum\ttensor_inst\t1\tdefault\n80\tc__d.sum\ttensor_inst\t1\tdefault\n",
			   "m.tsv:2:1:", "role 'tensor_inst' given twice");
}

/* The committed table: every arch's datapaths and which the default set leaves out. */
static void test_table_committed(void **state)
{
	static const struct { const char *arch, *left_out; } want[] = {
		{ "70", "" }, { "75", "int8" }, { "80", "fp16,tf32,int8" },
		{ "86", "fp16,tf32,int8" }, { "89", "fp16,tf32,fp8,int8" },
		{ "90", "fp16,tf32,fp8,int8" }, { "100", "fp16,tf32,fp8,int8" },
		{ "120", "fp16,tf32,fp8,int8" },
	};
	char err[NCU_TABLE_ERRLEN], list[64];
	struct ncu_table *t;

	(void)state;
	assert_int_equal(ncu_table_load("etc/ncu-metrics.tsv", &t, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ncu_table_datapaths(t, want[i].arch, NULL, 0, list, sizeof(list));
		assert_string_equal(list, want[i].left_out);
	}
	ncu_table_free(t);
}

static void test_units_and_cc(void **state)
{
	double d;
	const char *base;
	char arch[8];

	(void)state;
	assert_int_equal(ncu_value_to_base("Kbyte", "4.61", &d, &base), 1);
	assert_true(fabs(d - 4610) < 1e-9);
	assert_string_equal(base, "byte");
	assert_int_equal(ncu_value_to_base("us", "657.38", &d, &base), 1);
	assert_true(fabs(d - 657380) < 1e-6);
	assert_string_equal(base, "ns");
	assert_int_equal(ncu_value_to_base("Ghz", "1.98", &d, &base), 1);
	assert_true(fabs(d - 1.98e9) < 1);
	assert_int_equal(ncu_value_to_base("cycle", "32,768", &d, &base), 0);
	assert_true(d == 32768);
	assert_int_equal(ncu_value_to_base("byte", "abc", &d, &base), -EINVAL);
	assert_true(ncu_table_arch_of_cc("9.0", arch, sizeof(arch)));
	assert_string_equal(arch, "90");
	assert_true(ncu_table_arch_of_cc("12.1", arch, sizeof(arch)));
	assert_string_equal(arch, "121");
	assert_false(ncu_table_arch_of_cc("9", arch, sizeof(arch)));
	assert_false(ncu_table_arch_of_cc("a.0", arch, sizeof(arch)));
	assert_false(ncu_table_arch_of_cc(NULL, arch, sizeof(arch)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_abc_identity),
		cmocka_unit_test(test_kernel_abc_values_exact),
		cmocka_unit_test(test_kernel_abc_derived),
		cmocka_unit_test(test_fixture_matches_table),
		cmocka_unit_test(test_gsrb),
		cmocka_unit_test(test_dgemm_tensor),
		cmocka_unit_test(test_stream_triad),
		cmocka_unit_test(test_details_equals_raw),
		cmocka_unit_test(test_details_default_units),
		cmocka_unit_test(test_program_output_skipped),
		cmocka_unit_test(test_rfc4180),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_bad_corpus),
		cmocka_unit_test(test_na_one_value),
		cmocka_unit_test(test_unknown_metric_missing),
		cmocka_unit_test(test_kernel_record),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_device_columns),
		cmocka_unit_test(test_devices_synthetic),
		cmocka_unit_test(test_device_record_cap),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_parts),
		cmocka_unit_test(test_tensor_captures),
		cmocka_unit_test(test_table_committed),
		cmocka_unit_test(test_units_and_cc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
