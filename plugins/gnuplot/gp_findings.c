/*
 * gp_findings.c - the charts of the fleet tonight and of a GPU over the
 * nights.  See gp_findings.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_findings.h"
#include "gp_findings_model.h"
#include "gp_fleetdist.h"
#include "gp_term.h"
#include "gp_text.h"

#define BLUE "#0072B2"       /* Okabe-Ito blue: GPUs, the fleet's median */
#define SKY "#56B4E9"        /* Okabe-Ito sky blue: the fleet's band */
#define VERMILLION "#D55E00" /* Okabe-Ito vermillion: flagged */
#define PANEL_MIN_PX 210     /* the least height of a panel */
#define XTIC_GPUS_MAX 64     /* above: no GPU names under the axis */

/* ---- order: panels by ceiling, GPUs by node ----------------------------------------- */

static const struct gp_chart *sort_chart; /* qsort has no argument */

static int by_ceiling(const void *a, const void *b)
{
	const char *x = sort_chart->ceilings.v[*(const size_t *)a];
	const char *y = sort_chart->ceilings.v[*(const size_t *)b];
	int d = gp_findings_ceiling_rank(x) - gp_findings_ceiling_rank(y);

	return d ? d : strcmp(x, y);
}

static int by_gpu(const void *a, const void *b)
{
	return strverscmp(sort_chart->gpus.v[*(const size_t *)a],
			  sort_chart->gpus.v[*(const size_t *)b]);
}

static int by_night(const void *a, const void *b)
{
	double x = ((const struct gp_gpurow *)a)->t, y = ((const struct gp_gpurow *)b)->t;

	return (x > y) - (x < y);
}

/* A permutation of 0..n-1 sorted by cmp; NULL when out of memory. */
static size_t *sorted(const struct gp_chart *c, size_t n, int (*cmp)(const void *, const void *))
{
	size_t *v = malloc((n + 1) * sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = i;
	sort_chart = c;
	if (v)
		qsort(v, n, sizeof(*v), cmp);
	return v;
}

/* ---- the files ---------------------------------------------------------------------- */

struct fdraw {
	struct gp_chart *c;
	const char *base;
	size_t *panels, npanels; /* ceilings in panel order */
	size_t *xpos;            /* fleet: per GPU, its x position */
	int cols, rows;
	bool *flagged;           /* per panel: has a flagged row */
	double *ylo, *yhi;       /* fleet: per panel */
	double *scale;           /* gpu_history: per panel, 1e9, 1e12 or 1e15 */
};

static FILE *open_out(const struct fdraw *d, const char *suffix)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s%s", d->c->ctx->out_dir, d->base, suffix);
	return fopen(path, "w");
}

static int close_out(FILE *f)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad)
		return errno ? -errno : -EIO;
	return 0;
}

static const size_t *sort_xpos; /* by_x: the GPUs' x positions */

static int by_x(const void *a, const void *b)
{
	const struct gp_gpurow *x = a, *y = b;
	size_t i = sort_xpos[x->gpu], j = sort_xpos[y->gpu];

	return (i > j) - (i < j);
}

/* fleet.dat: per panel two blocks, every GPU (x pct label) in x order and
 * the flagged ones (x pct "label pct%", after a NaN row that keeps an empty
 * block valid). */
static void write_fleet_data(struct fdraw *d, FILE *f)
{
	struct gp_chart *c = d->c;
	char label[300];

	sort_xpos = d->xpos;
	qsort(c->rows, c->nrows, sizeof(*c->rows), by_x);
	for (size_t p = 0; p < d->npanels; p++) {
		double lo = 100, hi = 100;

		for (int flagged = 0; flagged < 2; flagged++) {
			if (flagged)
				fputs("NaN NaN \"\"\n", f);
			for (size_t i = 0; i < c->nrows; i++) {
				const struct gp_gpurow *r = &c->rows[i];

				if (r->ceiling != d->panels[p] || (flagged && !r->flagged))
					continue;
				lo = fmin(lo, r->pct), hi = fmax(hi, r->pct);
				d->flagged[p] |= r->flagged;
				if (flagged)
					snprintf(label, sizeof(label), "%s %.1f%%", c->gpus.v[r->gpu], r->pct);
				fprintf(f, "%zu %.6g ", d->xpos[r->gpu], r->pct);
				gp_text_data_quote(f, flagged ? label : c->gpus.v[r->gpu]);
				fputc('\n', f);
			}
			fputs("\n\n", f);
		}
		hi = fmax(hi - lo, 10.0); /* the span, 10 % at least; room for the key */
		d->ylo[p] = lo - 0.25 * hi, d->yhi[p] = lo + 1.5 * hi;
	}
}

/* Panel p's y range (scaled): the GPU and its band, a span of 4 % of the
 * top at least, room below for the markers and above for the key. */
static void night_range(struct fdraw *d, size_t p)
{
	const struct gp_chart *c = d->c;
	double lo = INFINITY, hi = -INFINITY, span;

	for (size_t i = 0; i < c->nrows; i++) {
		const struct gp_gpurow *r = &c->rows[i];

		if (r->ceiling != d->panels[p])
			continue;
		lo = fmin(lo, r->value), hi = fmax(hi, r->value);
		if (isfinite(r->lo))
			lo = fmin(lo, r->lo), hi = fmax(hi, r->hi);
	}
	span = fmax(hi - lo, 0.04 * fabs(hi));
	span = span > 0 ? span : 1;
	d->ylo[p] = (lo - 0.2 * span) / d->scale[p];
	d->yhi[p] = (hi + 0.5 * span) / d->scale[p];
}

/* gpu_history.dat: a block per panel, by night: t lo hi median value flagged. */
static void write_night_data(struct fdraw *d, FILE *f)
{
	struct gp_chart *c = d->c;

	qsort(c->rows, c->nrows, sizeof(*c->rows), by_night);
	for (size_t p = 0; p < d->npanels; p++) {
		double top = 0;

		for (size_t i = 0; i < c->nrows; i++)
			if (c->rows[i].ceiling == d->panels[p])
				top = fmax(top, fmax(c->rows[i].value, c->rows[i].hi));
		d->scale[p] = top >= 1e15 ? 1e15 : top >= 1e12 ? 1e12 : 1e9;
		night_range(d, p);
		for (size_t i = 0; i < c->nrows; i++) {
			const struct gp_gpurow *r = &c->rows[i];
			double s = d->scale[p];

			if (r->ceiling != d->panels[p])
				continue;
			d->flagged[p] |= r->flagged;
			fprintf(f, "%.0f %.6g %.6g %.6g %.6g %d\n", r->t, r->lo / s, r->hi / s,
				r->median / s, r->value / s, r->flagged);
		}
		fputs("\n\n", f);
	}
}

static void panel_title(FILE *f, const char *ceiling)
{
	char t[128];

	gp_text_roof_title(ceiling, t, sizeof(t));
	fputs("set title ", f);
	gp_text_script_quote(f, t);
	fputs(" noenhanced font ',10' offset 0,-0.6\n", f);
}

/* 1, 2 or 5 times a power of ten: about four tics over span. */
static double tic_step(double span)
{
	double d = pow(10, floor(log10(span / 4)));
	double r = span / 4 / d;

	return r < 1.5 ? d : r < 3.5 ? 2 * d : r < 7.5 ? 5 * d : 10 * d;
}

static void fleet_panel(const struct fdraw *d, FILE *f, size_t p)
{
	const char *b = d->base;
	size_t all = 2 * p, fl = 2 * p + 1;
	bool names = d->c->gpus.n <= XTIC_GPUS_MAX;

	panel_title(f, d->c->ceilings.v[d->panels[p]]);
	fprintf(f, "set yrange [%.6g:%.6g]\nset ytics %g\n", d->ylo[p], d->yhi[p],
		tic_step(d->yhi[p] - d->ylo[p]));
	fprintf(f, p == 0 ? "set key top left horizontal samplen 1 font ',8' opaque\n" : "unset key\n");
	fprintf(f, "plot 100 with lines dt 2 lw 1 lc rgb '#555555' title 'median of its model', \\\n"
		"     '%s.dat' index %zu using 1:(100):(0):($2-100) with vectors nohead lw 1.5 "
		"lc rgb '#9cb8d0' notitle, \\\n"
		"     '%s.dat' index %zu using 1:2%s with points pt 7 ps 0.9 lc rgb '" BLUE "' "
		"title 'GPU'", b, all, b, all, names ? ":xtic(3)" : "");
	if (d->flagged[p])
		fprintf(f, ", \\\n     '%s.dat' index %zu using 1:2 with points pt 11 ps 2 "
			"lc rgb '" VERMILLION "' title 'flagged', \\\n"
			"     '%s.dat' index %zu using 1:2:3 with labels left offset char 1.2,0 "
			"font ',9' tc rgb '" VERMILLION "' noenhanced notitle", b, fl, b, fl);
	fputc('\n', f);
}

static void night_panel(const struct fdraw *d, FILE *f, size_t p)
{
	const char *b = d->base, *unit = d->c->units ? d->c->units[d->panels[p]] : "";
	double s = d->scale[p];
	char u[64];

	panel_title(f, d->c->ceilings.v[d->panels[p]]);
	if (!strcmp(unit, "FLOP/s") || !strcmp(unit, "B/s") || !strcmp(unit, "OP/s"))
		snprintf(u, sizeof(u), "%s", unit);
	else /* not one of ours: plain text only */
		gp_text_plain(unit, u, sizeof(u));
	fprintf(f, "set ylabel '%s%s' font ',8'\nset yrange [%.6g:%.6g]\n",
		s >= 1e15 ? "P" : s >= 1e12 ? "T" : "G", *u ? u : "/s", d->ylo[p], d->yhi[p]);
	fprintf(f, p == 0 ? "set key bottom left horizontal samplen 1 font ',8' opaque\n" : "unset key\n");
	fprintf(f, "plot '%s.dat' index %zu using 1:2:3 with filledcurves fc rgb '" SKY "' "
		"fs transparent solid 0.35 noborder title 'fleet min-max', \\\n"
		"     '%s.dat' index %zu using 1:4 with lines dt 2 lw 1.5 lc rgb '" BLUE "' "
		"title 'fleet median', \\\n"
		"     '%s.dat' index %zu using 1:5 with linespoints pt 7 ps 0.8 lw 1.5 "
		"lc rgb '#000000' title 'this GPU'", b, p, b, p, b, p);
	if (d->flagged[p])
		fprintf(f, ", \\\n     '%s.dat' index %zu using 1:($6 > 0 ? $5 : NaN) with points "
			"pt 11 ps 2 lc rgb '" VERMILLION "' title 'flagged'", b, p);
	fputc('\n', f);
}

static size_t count_flagged_gpus(const struct gp_chart *c)
{
	size_t n = 0;

	for (size_t g = 0; g < c->gpus.n; g++)
		for (size_t i = 0; i < c->nrows; i++)
			if (c->rows[i].gpu == g && c->rows[i].flagged) {
				n++;
				break;
			}
	return n;
}

static void chart_title(const struct fdraw *d, char *buf, size_t cap)
{
	const struct gp_chart *c = d->c;
	char gpu[128], night[64], uuid[128], name[256];

	gp_text_plain(c->gpu_name ? c->gpu_name : "GPU", gpu, sizeof(gpu));
	gp_text_plain(c->night ? c->night : "", night, sizeof(night));
	if (c->cfg->title) {
		snprintf(buf, cap, "%s", c->cfg->title);
	} else if (c->mode == GP_FLEET) {
		snprintf(buf, cap, "The fleet%s%.40s: each GPU's ceilings as %% of its model's median"
			 " - %.80s, %zu GPUs, %zu flagged", *night ? " on " : " tonight", night, gpu,
			 c->gpus.n, count_flagged_gpus(c));
	} else {
		const char *g = c->gpus.n ? c->gpus.v[0] : "", *slash = strrchr(g, '/');
		char where[300];

		/* "rl-node2/1" -> "rl-node2 GPU 1": the slash is not plain text */
		snprintf(where, sizeof(where), "%.*s%s%s", slash ? (int)(slash - g) : (int)strlen(g),
			 g, slash ? " GPU " : "", slash ? slash + 1 : "");
		gp_text_plain(where, name, sizeof(name));
		gp_text_plain(c->uuid ? c->uuid : "", uuid, sizeof(uuid));
		snprintf(buf, cap, "%.80s (%.100s) - %.60s: each night, and its fleet's median and"
			 " min-max", name, uuid, gpu);
	}
}

static void write_script(const struct fdraw *d, FILE *f)
{
	const struct gp_chart *c = d->c;
	const struct gp_config *cfg = c->cfg;
	char title[512];

	chart_title(d, title, sizeof(title));
	fprintf(f, "# rooflined gnuplot chart '%s' (generated; data in %s.dat)\n"
		"set encoding utf8\nset grid ytics lt 1 lw 1 lc rgb '#e4e4e4'\n", d->base, d->base);
	if (c->mode == GP_FLEET) {
		fprintf(f, "set xrange [-0.7:%.1f]\nset ylabel '%% of median' font ',8'\n",
			(double)c->gpus.n - 0.3);
		fputs(c->gpus.n <= XTIC_GPUS_MAX ? "set xtics rotate by 90 right font ',7' nomirror\n"
						   : "set xtics format ''\n", f);
	} else {
		double t0 = c->rows[0].t, t1 = c->rows[c->nrows - 1].t;

		fputs("set xdata time\nset timefmt '%s'\nset format x '%m-%d'\n"
		      "set xtics rotate by 45 right font ',8' nomirror\n", f);
		double pad = t1 > t0 ? 0.04 * (t1 - t0) : 86400;

		double days = ceil((t1 - t0) / 86400 / 10);

		/* every panel the same nights, and one night is a range too; a
		 * tic per night, or per few nights (ten at most) */
		fprintf(f, "set xrange ['%.0f':'%.0f']\nset xtics %.0f\n", t0 - pad, t1 + pad,
			86400 * fmax(days, 1));
	}
	for (size_t i = 0; i < cfg->formats.n; i++) {
		gp_term_output(f, cfg->formats.v[i], d->base, cfg->width, c->out_height);
		fprintf(f, "set multiplot layout %d,%d title ", d->rows, d->cols);
		gp_text_script_quote(f, title);
		fputs(" noenhanced font ',12'\n", f);
		for (size_t p = 0; p < d->npanels; p++)
			(c->mode == GP_FLEET ? fleet_panel : night_panel)(d, f, p);
		fputs("unset multiplot\n", f);
	}
	fputs("unset output\n", f);
}

/* The panels (ceilings in order), the GPUs' x positions, the layout. */
static int plan(struct fdraw *d)
{
	struct gp_chart *c = d->c;
	size_t *order;
	size_t used = 0;

	if (!(order = sorted(c, c->ceilings.n, by_ceiling)))
		return -ENOMEM;
	d->panels = order;
	for (size_t i = 0; i < c->ceilings.n; i++) /* ceilings left with rows */
		for (size_t r = 0; r < c->nrows; r++)
			if (c->rows[r].ceiling == order[i]) {
				order[used++] = order[i];
				break;
			}
	d->npanels = used;
	d->cols = used <= 1 ? 1 : used <= 4 ? 2 : 3;
	d->rows = (int)((used + (size_t)d->cols - 1) / (size_t)d->cols);
	c->out_height = c->cfg->height;
	if (c->out_height < 60 + PANEL_MIN_PX * (long)d->rows)
		c->out_height = 60 + PANEL_MIN_PX * (long)d->rows;
	if (!(order = sorted(c, c->gpus.n, by_gpu)) ||
	    !(d->xpos = malloc((c->gpus.n + 1) * sizeof(size_t)))) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->gpus.n; i++)
		d->xpos[order[i]] = i;
	free(order);
	d->flagged = calloc(used + 1, sizeof(bool));
	d->ylo = calloc(used + 1, sizeof(double));
	d->yhi = calloc(used + 1, sizeof(double));
	d->scale = calloc(used + 1, sizeof(double));
	return d->flagged && d->ylo && d->yhi && d->scale ? 0 : -ENOMEM;
}

int gp_findings_write(struct gp_chart *c)
{
	struct fdraw d = { .c = c, .base = gp_mode_names[c->mode] };
	FILE *f = NULL;
	int rc;

	if (c->mode == GP_FLEET && c->gpus.n > XTIC_GPUS_MAX)
		return gp_fleetdist_write(c, d.base);
	rc = plan(&d);

	if (rc == 0 && !(f = open_out(&d, ".dat")))
		rc = -errno;
	if (rc == 0) {
		if (c->mode == GP_FLEET)
			write_fleet_data(&d, f);
		else
			write_night_data(&d, f);
		rc = close_out(f);
	}
	if (rc == 0 && !(f = open_out(&d, ".gp")))
		rc = -errno;
	if (rc == 0) {
		write_script(&d, f);
		rc = close_out(f);
	}
	free(d.panels), free(d.xpos), free(d.flagged);
	free(d.ylo), free(d.yhi), free(d.scale);
	return rc;
}
