/*
 * ncu-parse-bench - how fast plugins/ncu/ncu_csv.c parses a large raw-page export
 * (and plugins/ncu/ncu_record.c builds its records).
 *
 * Builds, in memory, an ncu raw-page CSV of N launches from a real capture
 * (its ncu lines, header and units rows, then its data rows repeated with new
 * launch IDs), parses it with the table's default metric set for the GPU in
 * the capture, and builds every launch's kernel record.  Prints the input
 * size and the best of R runs.
 *
 * Usage: ncu-parse-bench FIXTURE.csv METRICS.tsv [N=100000] [R=3]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncu/ncu_csv.h"
#include "ncu/ncu_record.h"
#include "ncu/ncu_table.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		return NULL;
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		return NULL;
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* The fixture's head (up to and including the units row) and data rows. */
static char *make_csv(const char *src, long n, size_t *len)
{
	const char *hdr = strstr(src, "\n\"ID\",");
	const char *units = strchr(hdr + 1, '\n') + 1;
	const char *data = strchr(units, '\n') + 1, *p;
	size_t head = (size_t)(data - src), cap = head + 16, rows = 0;
	const char *row[64];
	char *out, *w;
	long i;

	for (p = data; *p == '"' && rows < 64; p = strchr(p, '\n') + 1)
		row[rows++] = p;
	for (i = 0; i < (long)rows; i++)
		cap += (size_t)(strchr(row[i], '\n') - row[i] + 16) * (size_t)(n / (long)rows + 1);
	out = w = malloc(cap);
	memcpy(w, src, head);
	w += head;
	for (i = 0; i < n; i++) {
		const char *r = row[i % (long)rows];
		const char *after_id = strchr(r + 1, '"') + 1; /* past "ID" */
		const char *nl = strchr(r, '\n');

		w += sprintf(w, "\"%ld\"", i);
		memcpy(w, after_id, (size_t)(nl - after_id + 1));
		w += nl - after_id + 1;
	}
	*w = '\0';
	*len = (size_t)(w - out);
	return out;
}

int main(int argc, char **argv)
{
	long n = argc > 3 ? atol(argv[3]) : 100000, reps = argc > 4 ? atol(argv[4]) : 3;
	char err[NCU_CSV_ERRLEN];
	struct ncu_table *table;
	const struct ncu_table_row **sel;
	size_t len, big_len;
	char *src, *big;
	double best_parse = 1e9, best_all = 1e9;
	long nsel, r;

	if (argc < 3 || !(src = slurp(argv[1], &len)) ||
	    ncu_table_load(argv[2], &table, err, sizeof(err))) {
		fprintf(stderr, "usage: ncu-parse-bench FIXTURE.csv METRICS.tsv [N] [R]\n");
		return 2;
	}
	nsel = ncu_table_select(table, "90", NULL, 0, &sel);
	big = make_csv(src, n, &big_len);
	for (r = 0; r < reps; r++) {
		const char *names[64];
		struct ncu_record_column cols[64];
		struct ncu_record rec = { 0 };
		struct ncu_csv *t;
		char *copy = malloc(big_len + 1);
		double t0, t1, t2;
		long i;

		for (i = 0; i < nsel; i++) {
			names[i] = sel[i]->metric;
			cols[i] = (struct ncu_record_column){ sel[i]->metric, sel[i]->role, (size_t)i };
		}
		memcpy(copy, big, big_len + 1);
		t0 = now();
		if (ncu_csv_parse(copy, big_len, "bench.csv", names, (size_t)nsel, &t, err,
				  sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		t1 = now();
		for (i = 0; i < (long)t->n_launches; i++)
			if (ncu_record_kernel(t, (size_t)i, cols, (size_t)nsel, NULL, &rec))
				return 1;
		t2 = now();
		if ((long)t->n_launches != n) {
			fprintf(stderr, "parsed %zu launches, want %ld\n", t->n_launches, n);
			return 1;
		}
		best_parse = t1 - t0 < best_parse ? t1 - t0 : best_parse;
		best_all = t2 - t0 < best_all ? t2 - t0 : best_all;
		ncu_record_release(&rec);
		ncu_csv_free(t);
	}
	printf("%ld launches, %.1f MB raw-page CSV (%ld metrics kept of each row): "
	       "parse %.3f s (%.0f MB/s), parse + kernel records %.3f s, best of %ld\n",
	       n, (double)big_len / 1e6, nsel, best_parse,
	       (double)big_len / 1e6 / best_parse, best_all, reps);
	free(big);
	free(src);
	free(sel);
	ncu_table_free(table);
	return 0;
}
