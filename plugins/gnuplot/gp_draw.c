/*
 * gp_draw.c - a chart as a gnuplot script and its data files.  See gp_draw.h.
 *
 * A marker shape per level (L1 triangle, L2 square, DRAM circle), a colour
 * per key entry (kernel) or, in a comparison, per series on a dark-blue to
 * orange ramp; gp_layout.c says where things go.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_draw.h"
#include "gp_term.h"
#include "gp_findings.h"
#include "gp_layout.h"
#include "gp_text.h"
#include "kernel_name.h"

static const char *const level_titles[] = { "L1", "L2", "DRAM" };
static const int level_pt[] = { 9, 5, 7 };      /* filled triangle, square, circle */
static const int level_open_pt[] = { 8, 4, 6 }; /* the same, open */
static const char *const ai_colours[] = { "#a0a0a0", "#6a6a6a", "#303030" };
static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
	"#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#e6550d",
	"#31a354", "#ad494a", "#756bb1", "#843c39", "#d6616b", "#637939",
	"#3182bd", "#a55194",
};
#define N_PALETTE (sizeof(palette) / sizeof(palette[0]))

struct draw {
	struct gp_chart *c;
	const char *base;     /* file names: base.gp, base.points.dat, ... */
	struct gp_layout lo;
	bool step_left;       /* trajectory: the label ends at its point */
	char **short_names;   /* per c->names: distinct short forms, owned */
};

/* ---- colours and key titles ------------------------------------------------- */

/* Series i of n on a dark-blue to orange ramp (plasma without its yellow). */
static int series_colour(size_t i, size_t n)
{
	static const int ramp[] = { 0x0d0887, 0x7e03a8, 0xcc4778, 0xf89540 };
	double t = n > 1 ? 3.0 * (double)i / (double)(n - 1) : 0;
	int k = t >= 3 ? 2 : (int)t, rgb = 0;

	for (int sh = 16; sh >= 0; sh -= 8) {
		double a = ramp[k] >> sh & 0xff, b = ramp[k + 1] >> sh & 0xff;

		rgb |= (int)lround(a + (b - a) * (t - k)) << sh;
	}
	return rgb;
}

static int point_colour(const struct gp_chart *c, const struct gp_point *p)
{
	if (gp_chart_compares(c))
		return series_colour((size_t)c->rank[p->series], c->nser);
	return (int)strtol(palette[p->entry % N_PALETTE] + 1, NULL, 16);
}

static size_t zmax(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* "12  cutlass::Kernel<...> [fp32]": number, short name, precision if mixed;
 * returns its length. */
static size_t entry_title(const struct draw *d, size_t e, char *out, size_t cap)
{
	const struct gp_chart *c = d->c;
	const char *s = d->short_names[c->ents[e].name];
	int n;

	if (c->nprec > 1)
		n = snprintf(out, cap, "%zu  %s [%s]", e + 1, s, gp_prec_names[c->ents[e].prec]);
	else
		n = snprintf(out, cap, "%zu  %s", e + 1, s);
	return n < 0 ? 0 : (size_t)n;
}

static const char *series_title(const struct gp_chart *c, size_t s)
{
	size_t r = (size_t)c->rank[s];

	return r < c->cfg->labels.n ? c->cfg->labels.v[r] : c->series.v[s];
}

/* Number labels at the points: when colours repeat, or in a comparison of
 * more than one kernel (colours are series there). */
static bool numbered(const struct gp_chart *c)
{
	for (size_t e = 1; gp_chart_compares(c) && e < c->nents; e++)
		if (c->ents[e].name != c->ents[0].name)
			return true;
	return !gp_chart_compares(c) && c->nents > 10;
}

/* ---- data files --------------------------------------------------------------- */

static FILE *open_file(const struct draw *d, const char *suffix)
{
	char path[4096];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s%s", d->c->ctx->out_dir,
			     d->base, suffix) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return fopen(path, "w");
}

/* Close f; 0, or -errno when anything written to it was lost. */
static int close_file(FILE *f)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad)
		return errno ? -errno : -EIO;
	return 0;
}

/* The point at which entry e gets its number: its last series' last level. */
static long label_point(const struct gp_chart *c, size_t e)
{
	long best = -1;

	for (size_t i = 0; i < c->npts; i++) {
		const struct gp_point *p = &c->pts[i], *q = best < 0 ? NULL : &c->pts[best];

		if (p->entry == e && (!q || c->rank[p->series] > c->rank[q->series] ||
				      (p->series == q->series && p->level > q->level)))
			best = (long)i;
	}
	return best;
}

/* base.points.dat: a block per level (ai gflops rgb), then the number
 * labels (x y number). */
static void write_points(const struct draw *d, FILE *f)
{
	const struct gp_chart *c = d->c;

	for (int l = 0; l < GP_N_LEVELS; l++) {
		fputs("NaN NaN 0\n", f);
		for (size_t i = 0; i < c->npts; i++)
			if (c->pts[i].level == l)
				fprintf(f, "%.9g %.9g %d\n", c->pts[i].ai, c->pts[i].gflops,
					point_colour(c, &c->pts[i]));
		fputs("\n\n", f);
	}
	fputs("NaN NaN 0\n", f);
	for (size_t e = 0; numbered(c) && e < c->nents; e++) {
		long i = label_point(c, e);

		fprintf(f, "%.9g %.9g %zu\n", c->pts[i].ai, c->pts[i].gflops, e + 1);
	}
}

static bool is_dashed(const struct gp_roof *r)
{
	return r->compute && (strstr(r->name, "_add") || strstr(r->name, "partial FMA"));
}

/* base.roofs.dat: block 0 the solid roofs, block 1 the dashed (no-FMA):
 * bandwidth from the left edge to the highest ceiling, ceilings from the
 * highest bandwidth to the right edge. */
static void write_roofs(const struct draw *d, FILE *f)
{
	const struct gp_chart *c = d->c;
	double top = gp_chart_top(c, true), bmax = gp_chart_top(c, false);

	for (int dashed = 0; dashed < 2; dashed++) {
		fputs("NaN NaN\n\n", f);
		for (size_t i = 0; i < c->ndrawn; i++) {
			const struct gp_roof *r = c->drawn[i];
			double v = r->value / 1e9, x0;

			if (is_dashed(r) != dashed)
				continue;
			if (r->compute) {
				x0 = bmax > 0 ? fmax(c->xmin, v / bmax) : c->xmin;
				fprintf(f, "%.9g %.9g\n%.9g %.9g\n\n", x0, v, c->xmax, v);
			} else {
				x0 = fmax(c->xmin, c->ymin / v);
				fprintf(f, "%.9g %.9g\n%.9g %.9g\n\n", x0, v * x0,
					top > 0 ? top / v : c->xmax, top > 0 ? top : v * c->xmax);
			}
		}
		fputs("\n", f);
	}
}

/* True when every series shows one entry (a kernel at a precision): the
 * versions of one code, each its own kernel (gpp_v1 ... gpp_v8), are then
 * joined in series order whatever their names. */
static int one_entry_each(const struct gp_chart *c)
{
	for (size_t i = 0; i < c->npts; i++)
		for (size_t j = i + 1; j < c->npts; j++)
			if (c->pts[i].series == c->pts[j].series &&
			    c->pts[i].entry != c->pts[j].entry)
				return 0;
	return 1;
}

/* base.arrows.dat: from each point to its kernel's point in the next series
 * (to the next series' point at the same level when each series has one). */
static void write_arrows(const struct draw *d, FILE *f)
{
	const struct gp_chart *c = d->c;
	int any = one_entry_each(c);

	fputs("NaN NaN 0 0\n", f);
	for (size_t i = 0; i < c->npts; i++) {
		const struct gp_point *p = &c->pts[i], *next = NULL;

		for (size_t j = 0; j < c->npts; j++) {
			const struct gp_point *q = &c->pts[j];

			if ((any || q->entry == p->entry) && q->level == p->level &&
			    c->rank[q->series] > c->rank[p->series] &&
			    (!next || c->rank[q->series] < c->rank[next->series]))
				next = q;
		}
		if (next)
			fprintf(f, "%.9g %.9g %.9g %.9g\n", p->ai, p->gflops,
				next->ai - p->ai, next->gflops - p->gflops);
	}
}

/* One key title, read back by `title columnheader`, as a block of its own
 * with one point at x (a time axis wants a valid x) and no y. */
static void key_block_at(FILE *f, const char *title, double x)
{
	gp_text_data_quote(f, title);
	if (isfinite(x))
		fprintf(f, "\n%.9g NaN\n\n\n", x);
	else
		fputs("\nNaN NaN\n\n\n", f);
}

static void key_block(FILE *f, const char *title)
{
	key_block_at(f, title, NAN);
}

/* kernels.txt: number, precision, short name, full name. */
static int write_kernel_key(const struct draw *d)
{
	const struct gp_chart *c = d->c;
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/kernels.txt", c->ctx->out_dir);
	if (!(f = fopen(path, "w")))
		return -errno;
	fputs("# rooflined gnuplot: the chart's kernel numbers. Columns (TAB): number,\n"
	      "# precision, short name, full name; \\\\ \\t \\n \\r escaped\n", f);
	for (size_t e = 0; e < c->nents; e++) {
		fprintf(f, "%zu\t%s\t", e + 1, gp_prec_names[c->ents[e].prec]);
		gp_text_record_escape(f, d->short_names[c->ents[e].name]);
		fputc('\t', f);
		gp_text_record_escape(f, c->names.v[c->ents[e].name]);
		fputc('\n', f);
	}
	return close_file(f);
}

/* base.step.dat (trajectory): the last step's class as a label at the
 * last series' point of the rightmost level, "gpp_v1<...>: dropped (run 41
 * -> run 42: GFLOP/s -5.2 %, AI +0.1 % at dram)". */
static int write_step(struct draw *d)
{
	const struct gp_chart *c = d->c;
	const struct gp_point *at = NULL;
	const struct gp_step *st = c->step;
	char s[256], text[600];
	FILE *f;

	for (size_t i = 0; i < c->npts; i++)
		if (c->rank[c->pts[i].series] == (int)c->nser - 1 &&
		    (!at || c->pts[i].ai > at->ai))
			at = &c->pts[i];
	if (!at)
		return 0;
	kernel_name_short(st->kernel, d->lo.name_max, s, sizeof(s));
	snprintf(text, sizeof(text), "%s: %s (%s -> %s: GFLOP/s %+.1f %%, AI %+.1f %%%s%s)",
		 s, st->class, st->from, st->to, st->gflops_change, st->ai_change,
		 st->levels[0] ? " at " : "", st->levels);
	if (!(f = open_file(d, ".step.dat")))
		return -errno;
	/* in the right half of the (log) AI axis, the text goes left of it */
	d->step_left = log(at->ai / c->xmin) > 0.5 * log(c->xmax / c->xmin);
	fprintf(f, "%.9g %.9g ", at->ai, at->gflops);
	gp_text_data_quote(f, text);
	fputc('\n', f);
	return close_file(f);
}

/* base.keys.dat for a roofline or comparison; the key's longest title and,
 * in *n, its number of entries. */
static size_t write_keys(const struct draw *d, FILE *f, size_t *n)
{
	const struct gp_chart *c = d->c;
	char t[300];
	size_t chars = 4;

	*n = 0;
	for (size_t s = 0; gp_chart_compares(c) && s < c->series.n; s++) {
		if (c->rank[s] < 0)
			continue;
		key_block(f, series_title(c, s));
		chars = zmax(chars, strlen(series_title(c, s)));
		(*n)++;
	}
	for (size_t e = 0; e < c->nents && (!gp_chart_compares(c) || numbered(c)); e++) {
		chars = zmax(chars, entry_title(d, e, t, sizeof(t)));
		key_block(f, t);
		(*n)++;
	}
	return chars < 60 ? chars : 60;
}

/* ---- the script --------------------------------------------------------------- */

/* Separator between the clauses of one plot command. */
static void clause(FILE *f, int *n)
{
	fputs((*n)++ ? ", \\\n     " : "plot ", f);
}

static const char *default_title(const struct gp_chart *c, char *buf, size_t cap)
{
	char gpu[128];

	gp_text_plain(c->gpu_name ? c->gpu_name : "GPU", gpu, sizeof(gpu));
	if (c->cfg->title)
		return c->cfg->title;
	if (c->mode == GP_HISTORY)
		snprintf(buf, cap, "GFLOP/s and arithmetic intensity over time");
	else if (c->mode == GP_TRAJECTORY)
		snprintf(buf, cap, "Roofline trajectory over %zu runs (latest run's roofs) - %s",
			 c->nser, gpu);
	else if (gp_chart_compares(c))
		snprintf(buf, cap, "Roofline comparison of %zu runs - %s", c->nser, gpu);
	else
		snprintf(buf, cap, "Hierarchical roofline - %s", gpu);
	return buf;
}

/* Title, margins, key, grid: what every kind of chart sets first. */
static void script_head(const struct draw *d, FILE *f)
{
	char buf[300];

	fprintf(f, "# rooflined gnuplot chart '%s' (generated; data in %s.*.dat)\n"
		"set encoding utf8\nset title ", d->base, d->base);
	gp_text_script_quote(f, default_title(d->c, buf, sizeof(buf)));
	fprintf(f, " noenhanced font ',13'\n"
		"set lmargin at screen %.4f\nset rmargin at screen %.4f\n"
		"set bmargin at screen %.4f\nset tmargin at screen %.4f\n"
		"set key at screen %.4f, screen %.4f left top Left reverse samplen 1.5 "
		"spacing 1 font ',9' maxrows %d\n"
		"set grid xtics ytics lt 1 lw 1 lc rgb '#e4e4e4'\nset border lw 1.2\n",
		d->lo.lm, d->lo.rm, d->lo.bm, d->lo.tm, d->lo.key_x, d->lo.tm, d->lo.maxrows);
	for (size_t i = 0; i < d->lo.nlabels; i++) {
		const struct gp_label *l = &d->lo.labels[i];

		fputs("set label ", f);
		gp_text_script_quote(f, l->text);
		fprintf(f, " at %.9g, %.9g left rotate by %.2f front noenhanced "
			"font ',9' tc rgb '#303030'\n", l->x, l->y, l->angle);
	}
}

/* One terminal per format, the plot for the first, replot for the rest. */
static void script_outputs(const struct draw *d, FILE *f,
			   void (*plot)(const struct draw *, FILE *))
{
	const struct gp_config *cfg = d->c->cfg;

	for (size_t i = 0; i < cfg->formats.n; i++) {
		gp_term_output(f, cfg->formats.v[i], d->base, cfg->width, cfg->height);
		if (i == 0)
			plot(d, f);
		else
			fputs("replot\n", f);
	}
	fputs("unset output\n", f);
}

static bool has_points(const struct gp_chart *c, int level)
{
	for (size_t i = 0; i < c->npts; i++)
		if (c->pts[i].level == level)
			return true;
	return false;
}

static bool has_roofs(const struct gp_chart *c, int dashed)
{
	for (size_t i = 0; i < c->ndrawn; i++)
		if (is_dashed(c->drawn[i]) == dashed)
			return true;
	return false;
}

/* The plot command of a roofline or a comparison. */
static void plot_roofline(const struct draw *d, FILE *f)
{
	const struct gp_chart *c = d->c;
	const char *b = d->base;
	size_t k = 0;
	int n = 0;

	for (int dashed = 0; dashed < 2; dashed++)
		if (has_roofs(c, dashed))
			clause(f, &n), fprintf(f, "'%s.roofs.dat' index %d using 1:2 with lines "
					       "lw 2 dt %d lc rgb '#404040' notitle", b, dashed, dashed ? 2 : 1);
	if (gp_chart_compares(c) && c->cfg->arrows && c->nser > 1)
		clause(f, &n), fprintf(f, "'%s.arrows.dat' using 1:2:3:4 with vectors head filled "
				       "size screen 0.007,20 lw 1 lc rgb '#a0a0a0' notitle", b);
	for (int l = 0; l < GP_N_LEVELS; l++)
		if (has_points(c, l))
			clause(f, &n), fprintf(f, "'%s.points.dat' index %d using 1:2:3 with points "
					       "pt %d ps %.1f lc rgb variable notitle", b, l, level_pt[l],
					       c->npts > 60 ? 1.3 : 1.6);
	if (numbered(c))
		clause(f, &n), fprintf(f, "'%s.points.dat' index 3 using 1:2:3 with labels "
				       "offset char 0.8,0.7 font ',8' tc rgb '#202020' notitle", b);
	if (c->mode == GP_TRAJECTORY && c->step)
		clause(f, &n), fprintf(f, "'%s.step.dat' using 1:2:3 with labels boxed %s "
				       "offset char %s,-1.4 font ',11' tc rgb '#000000' noenhanced "
				       "notitle", b, d->step_left ? "right" : "left",
				       d->step_left ? "-1.2" : "1.2");
	for (int l = 0; l < GP_N_LEVELS; l++)
		if (has_points(c, l))
			clause(f, &n), fprintf(f, "keyentry with points pt %d ps 1.3 lc rgb '#505050' "
					       "title '%s'", level_pt[l], level_titles[l]);
	for (size_t s = 0; gp_chart_compares(c) && s < c->series.n; s++)
		if (c->rank[s] >= 0)
			clause(f, &n), fprintf(f, "'%s.keys.dat' index %zu using 1:2 with points pt 7 "
					       "ps 1.3 lc rgb '#%06x' title columnheader(1) noenhanced", b, k++,
					       series_colour((size_t)c->rank[s], c->nser));
	for (size_t e = 0; e < c->nents && (!gp_chart_compares(c) || numbered(c)); e++) {
		clause(f, &n);
		if (gp_chart_compares(c))
			fprintf(f, "'%s.keys.dat' index %zu using 1:2 with lines lc rgb '#ffffff' "
				"title columnheader(1) noenhanced", b, k++);
		else
			fprintf(f, "'%s.keys.dat' index %zu using 1:2 with points pt 7 ps 1.3 "
				"lc rgb '%s' title columnheader(1) noenhanced", b, k++,
				palette[e % N_PALETTE]);
	}
	fputc('\n', f);
}

static int count_levels(const struct gp_chart *c)
{
	int n = 0;

	for (int l = 0; l < GP_N_LEVELS; l++)
		n += has_points(c, l);
	return n;
}

/* Rows of the key: levels, series (comparison), kernels. */
static size_t key_entries(const struct gp_chart *c)
{
	size_t n = (size_t)count_levels(c);

	if (gp_chart_compares(c))
		n += c->nser;
	if (!gp_chart_compares(c) || numbered(c))
		n += c->nents;
	return n;
}

/* Characters of a kernel's key title besides its name: "12  " and " [fp32]". */
static size_t title_extra(const struct gp_chart *c)
{
	size_t digits = 1;

	for (size_t n = c->nents; n >= 10; n /= 10)
		digits++;
	return digits + 2 + (c->nprec > 1 ? 10 : 0);
}

static int write_roofline(struct draw *d)
{
	const struct gp_chart *c = d->c;
	FILE *f[4] = { 0 };
	static const char *const suffix[] = { ".points.dat", ".roofs.dat", ".arrows.dat", ".keys.dat" };
	size_t entries, chars;
	int rc = 0;

	for (int i = 0; i < 4; i++)
		if (!(f[i] = open_file(d, suffix[i])))
			rc = -errno;
	if (rc == 0) {
		gp_layout_init(&d->lo, c);
		gp_layout_fit_names(&d->lo, key_entries(c), title_extra(c));
		d->lo.numbered = numbered(c);
		if (!(d->short_names = calloc(c->names.n ? c->names.n : 1, sizeof(char *))) ||
		    kernel_names_short((const char *const *)c->names.v, c->names.n,
				       d->lo.name_max, 0, d->short_names) < 0)
			rc = -ENOMEM;
	}
	if (rc == 0) {
		write_points(d, f[0]);
		write_roofs(d, f[1]);
		write_arrows(d, f[2]);
		chars = write_keys(d, f[3], &entries);
		gp_layout_key(&d->lo, entries + (size_t)count_levels(c), chars, 0);
		gp_layout_labels(&d->lo);
	}
	for (int i = 0; i < 4; i++)
		if (f[i] && close_file(f[i]) < 0 && rc == 0)
			rc = -EIO;
	if (rc == 0)
		rc = write_kernel_key(d);
	if (rc == 0 && c->mode == GP_TRAJECTORY && c->step)
		rc = write_step(d);
	if (rc == 0 && !(f[0] = open_file(d, ".gp")))
		rc = -errno;
	if (rc == 0) {
		script_head(d, f[0]);
		fprintf(f[0], "set logscale xy\nset xrange [%.9g:%.9g]\nset yrange [%.9g:%.9g]\n"
			"set format x '10^{%%T}'\nset format y '10^{%%T}'\n"
			"set xlabel 'Arithmetic intensity (FLOP/byte)'\n"
			"set ylabel 'Performance (GFLOP/s)'\n", c->xmin, c->xmax, c->ymin, c->ymax);
		if (c->mode == GP_TRAJECTORY) /* the step's label over the roofs */
			fputs("set style textbox opaque noborder\n", f[0]);
		script_outputs(d, f[0], plot_roofline);
		rc = close_file(f[0]);
	}
	return rc;
}

/* ---- history -------------------------------------------------------------------- */

static int by_time(const void *a, const void *b)
{
	double x = ((const struct gp_trend *)a)->t, y = ((const struct gp_trend *)b)->t;

	return (x > y) - (x < y);
}

static bool has_ai(const struct gp_chart *c, int level)
{
	for (size_t i = 0; i < c->ntrends; i++)
		if (isfinite(c->trends[i].ai[level]))
			return true;
	return false;
}

/* base.dat: a block per node (time gflops); base.ai.dat: time and the AIs;
 * base.keys.dat: the kernel's title.  Returns the longest key title. */
static size_t write_trends(const struct draw *d, FILE *data, FILE *ai, FILE *keys)
{
	const struct gp_chart *c = d->c;
	char s[256], t[300];
	size_t chars = 8;

	for (size_t n = 0; n < c->nodes.n; n++) {
		snprintf(t, sizeof(t), "node %s", c->nodes.v[n]);
		chars = zmax(chars, strlen(t));
		gp_text_data_quote(data, t);
		fputc('\n', data);
		for (size_t i = 0; i < c->ntrends; i++)
			if (c->trends[i].node == n)
				fprintf(data, "%.0f %.9g\n", c->trends[i].t, c->trends[i].gflops);
		fputs("\n\n", data);
	}
	for (size_t i = 0; i < c->ntrends; i++)
		fprintf(ai, "%.0f %.9g %.9g %.9g\n", c->trends[i].t, c->trends[i].ai[0],
			c->trends[i].ai[1], c->trends[i].ai[2]);
	kernel_name_short(c->trend_kernel, d->lo.name_max, s, sizeof(s));
	snprintf(t, sizeof(t), "kernel: %s", s);
	key_block_at(keys, t, c->trends[0].t);
	return zmax(chars, strlen(t)) < 60 ? zmax(chars, strlen(t)) : 60;
}

static void plot_history(const struct draw *d, FILE *f)
{
	const struct gp_chart *c = d->c;
	int n = 0;

	for (size_t i = 0; i < c->nodes.n; i++)
		clause(f, &n), fprintf(f, "'%s.dat' index %zu using 1:2 with linespoints pt 7 ps 1.1 "
				       "lw 2 lc rgb '%s' title columnheader(1) noenhanced", d->base, i,
				       palette[i % N_PALETTE]);
	for (int l = 0; l < GP_N_LEVELS; l++)
		if ((c->levels >> l & 1) && has_ai(c, l))
			clause(f, &n), fprintf(f, "'%s.ai.dat' using 1:%d axes x1y2 with linespoints "
					       "pt %d ps 1 dt 2 lw 1 lc rgb '%s' title 'AI %s'", d->base,
					       l + 2, level_open_pt[l], ai_colours[l], level_titles[l]);
	clause(f, &n);
	fprintf(f, "'%s.keys.dat' index 0 using 1:2 with lines lc rgb '#ffffff' "
		"title columnheader(1) noenhanced\n", d->base);
}

static void history_axes(const struct gp_chart *c, FILE *f)
{
	double span = c->trends[c->ntrends - 1].t - c->trends[0].t;
	double lo = INFINITY, hi = 0;

	for (size_t i = 0; i < c->ntrends; i++)
		for (int l = 0; l < GP_N_LEVELS; l++)
			if ((c->levels >> l & 1) && isfinite(c->trends[i].ai[l]))
				lo = fmin(lo, c->trends[i].ai[l]), hi = fmax(hi, c->trends[i].ai[l]);
	fprintf(f, "set xdata time\nset timefmt '%%s'\nset format x '%s'\n"
		"set xtics nomirror\nset ytics nomirror\n"
		"set xlabel 'Date (UTC)'\nset ylabel 'Performance (GFLOP/s)'\n",
		span < 3 * 86400 ? "%m-%d %H:%M" : "%Y-%m-%d");
	if (span <= 0)
		fprintf(f, "set xrange ['%.0f':'%.0f']\n", c->trends[0].t - 43200, c->trends[0].t + 43200);
	fprintf(f, "set yrange [%.9g:", c->cfg->ymin > 0 ? c->cfg->ymin : 0);
	if (c->cfg->ymax > 0)
		fprintf(f, "%.9g]\n", c->cfg->ymax);
	else
		fputs("*]\n", f);
	if (hi > 0)
		fprintf(f, "set logscale y2\nset y2range [%.9g:%.9g]\nset y2tics\n"
			"set format y2 '10^{%%T}'\nset y2label 'Arithmetic intensity (FLOP/byte)'\n",
			pow(10, floor(log10(lo / 1.5))), pow(10, ceil(log10(hi * 1.5))));
}

static int write_history(struct draw *d)
{
	struct gp_chart *c = d->c;
	FILE *f[3] = { 0 };
	static const char *const suffix[] = { ".dat", ".ai.dat", ".keys.dat" };
	size_t chars = 8;
	int rc = 0;

	qsort(c->trends, c->ntrends, sizeof(c->trends[0]), by_time);
	gp_layout_init(&d->lo, c);
	gp_layout_fit_names(&d->lo, c->nodes.n + GP_N_LEVELS + 1, 8);
	for (int i = 0; i < 3; i++)
		if (!(f[i] = open_file(d, suffix[i])))
			rc = -errno;
	if (rc == 0)
		chars = write_trends(d, f[0], f[1], f[2]);
	for (int i = 0; i < 3; i++)
		if (f[i] && close_file(f[i]) < 0 && rc == 0)
			rc = -EIO;
	gp_layout_key(&d->lo, c->nodes.n + GP_N_LEVELS + 1, chars, 90);
	if (rc == 0 && !(f[0] = open_file(d, ".gp")))
		rc = -errno;
	if (rc == 0) {
		script_head(d, f[0]);
		history_axes(c, f[0]);
		script_outputs(d, f[0], plot_history);
		rc = close_file(f[0]);
	}
	return rc;
}

int gp_draw_write(struct gp_chart *c)
{
	struct draw d = { .c = c, .base = gp_mode_names[c->mode] };
	int rc;

	if (c->mode == GP_FLEET || c->mode == GP_GPU_HISTORY)
		return gp_findings_write(c);
	rc = c->mode == GP_HISTORY ? write_history(&d) : write_roofline(&d);
	if (d.short_names) {
		kernel_names_free(d.short_names, c->names.n);
		free(d.short_names);
	}
	return rc;
}
