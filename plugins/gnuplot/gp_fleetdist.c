/* gp_fleetdist.c - see gp_fleetdist.h. */
#include "gp_fleetdist.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_findings_model.h"
#include "gp_term.h"
#include "gp_text.h"

#define BLUE "#0072B2"
#define SKY "#56B4E9"
#define VERMILLION "#D55E00"
#define PANEL_PX 250 /* the least height of a panel */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n), n > 0 (nearest rank). */
static double quantile(const double *v, size_t n, double q)
{
	size_t i = (size_t)floor(q * (double)(n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

static const struct gp_chart *sort_c; /* qsort has no argument */

static int by_rank(const void *a, const void *b)
{
	const char *x = sort_c->ceilings.v[*(const size_t *)a];
	const char *y = sort_c->ceilings.v[*(const size_t *)b];
	int d = gp_findings_ceiling_rank(x) - gp_findings_ceiling_rank(y);

	return d ? d : strcmp(x, y);
}

static int by_pct(const void *a, const void *b)
{
	const struct gp_gpurow *x = *(const struct gp_gpurow *const *)a;
	const struct gp_gpurow *y = *(const struct gp_gpurow *const *)b;

	return (x->pct > y->pct) - (x->pct < y->pct);
}

struct panel {
	size_t ceiling;
	double lo, hi;      /* y range */
	size_t flagged;     /* flagged GPUs in it */
};

struct work {
	double *vals, *thr;
	const struct gp_gpurow **fl;
};

/* Panel p, model m: its summary line (x q25 q1 q99 q75 median min max
 * band_lo band_hi "model (n)") into f; its flagged rows appended to
 * w->fl[*nfl..].  Nothing when the model has no figure of the ceiling. */
static void model_line(const struct gp_chart *c, struct panel *p, size_t m, FILE *f,
		       struct work *w, size_t *nfl)
{
	size_t n = 0, nt = 0;
	double t, q1, q99;
	char label[300];

	for (size_t i = 0; i < c->nrows; i++) {
		const struct gp_gpurow *r = &c->rows[i];

		if (r->ceiling != p->ceiling || r->model != m)
			continue;
		w->vals[n++] = r->pct;
		if (isfinite(r->thr))
			w->thr[nt++] = r->thr;
		if (r->flagged)
			w->fl[(*nfl)++] = r;
	}
	if (!n)
		return;
	qsort(w->vals, n, sizeof(double), cmp_double);
	qsort(w->thr, nt, sizeof(double), cmp_double);
	t = nt ? w->thr[nt / 2] : NAN;
	q1 = quantile(w->vals, n, 0.01), q99 = quantile(w->vals, n, 0.99);
	p->lo = fmin(p->lo, fmin(w->vals[0], isfinite(t) ? 100 - t : 100));
	p->hi = fmax(p->hi, fmax(w->vals[n - 1], isfinite(t) ? 100 + t : 100));
	snprintf(label, sizeof(label), "%s (%zu)", c->models.v[m], n);
	fprintf(f, "%zu %.6g %.6g %.6g %.6g %.6g %.6g %.6g %.6g %.6g ", m + 1,
		quantile(w->vals, n, 0.25), q1, q99, quantile(w->vals, n, 0.75),
		quantile(w->vals, n, 0.5), w->vals[0], w->vals[n - 1],
		isfinite(t) ? 100 - t : NAN, isfinite(t) ? 100 + t : NAN);
	gp_text_data_quote(f, label);
	fputc('\n', f);
}

/* The data: per panel two blocks, the models' lines and the flagged GPUs
 * (x pct "label" kind label_y: 0 the lowest GP_FLEETDIST_NAMED of each
 * model, named; 1 the others; 2 one "+N flagged" line per model with more,
 * below its lowest figure).  A panel has a model line at least; its flagged block
 * starts with a NaN line, so that it is never empty. */
static void write_data(const struct gp_chart *c, struct panel *pn, size_t np, FILE *f,
		       struct work *w)
{
	for (size_t p = 0; p < np; p++) {
		size_t nfl = 0;
		double span;

		pn[p].lo = INFINITY, pn[p].hi = -INFINITY;
		for (size_t m = 0; m < c->models.n; m++)
			model_line(c, &pn[p], m, f, w, &nfl);
		fputs("\n\nNaN NaN \"\" 0 NaN\n", f);
		span = fmax(pn[p].hi - pn[p].lo, 4.0);
		qsort(w->fl, nfl, sizeof(*w->fl), by_pct);
		pn[p].flagged = nfl;
		for (size_t m = 0; m < c->models.n; m++) {
			size_t named = 0, more = 0;
			double low = INFINITY;

			for (size_t i = 0; i < nfl; i++) {
				const struct gp_gpurow *r = w->fl[i];
				char label[300];

				if (r->model != m)
					continue;
				low = fmin(low, r->pct);
				if (named++ >= GP_FLEETDIST_NAMED) {
					more++;
					label[0] = '\0';
				} else {
					snprintf(label, sizeof(label), "%s %.1f%%", c->gpus.v[r->gpu], r->pct);
				}
				fprintf(f, "%zu %.6g ", m + 1, r->pct);
				gp_text_data_quote(f, label);
				/* named ones stacked upwards, so that equal figures
				 * do not print over each other */
				fprintf(f, " %d %.6g\n", label[0] ? 0 : 1,
					r->pct + 0.07 * span * (double)(named - 1));
			}
			if (more) {
				char label[64];

				snprintf(label, sizeof(label), "+%zu flagged", more);
				fprintf(f, "%zu %.6g ", m + 1, low);
				gp_text_data_quote(f, label);
				fprintf(f, " 2 %.6g\n", low - 0.08 * span);
			}
		}
		fputs("\n\n", f);
	}
}

static void panel_script(const struct gp_chart *c, const struct panel *pn, size_t p,
			 const char *b, FILE *f)
{
	char t[128];
	double span = fmax(pn[p].hi - pn[p].lo, 4.0);
	double lo = pn[p].lo - 0.15 * span, hi = pn[p].hi + 0.45 * span;
	size_t all = 2 * p, fl = 2 * p + 1;

	gp_text_roof_title(c->ceilings.v[pn[p].ceiling], t, sizeof(t));
	fputs("set title ", f);
	gp_text_script_quote(f, t);
	fputs(" noenhanced font ',10' offset 0,-0.6\n", f);
	fprintf(f, "set yrange [%.6g:%.6g]\n", lo, hi);
	fprintf(f, p == 0 ? "set key top left horizontal samplen 1 font ',8' opaque\n" : "unset key\n");
	fprintf(f, "plot '%s.dat' index %zu using 1:9:($1-0.3):($1+0.3):9:10 with boxxyerror "
		"fs transparent solid 0.3 noborder fc rgb '" SKY "' title 'noise band', \\\n"
		"     100 with lines dt 2 lw 1 lc rgb '#555555' title 'median of its model', \\\n"
		"     '%s.dat' index %zu using 1:2:3:4:5:xtic(11) with candlesticks whiskerbars 0.5 "
		"fs solid 0.15 lw 1.2 lc rgb '" BLUE "' title '25-75 %%, 1-99 %%', \\\n"
		"     '%s.dat' index %zu using 1:6:6:6:6 with candlesticks lw 2 lc rgb '" BLUE "' "
		"notitle, \\\n"
		"     '%s.dat' index %zu using 1:7 with points pt 7 ps 0.4 lc rgb '#888888' title 'min, max', \\\n"
		"     '%s.dat' index %zu using 1:8 with points pt 7 ps 0.4 lc rgb '#888888' notitle",
		b, all, b, all, b, all, b, all, b, all);
	if (pn[p].flagged)
		fprintf(f, ", \\\n     '%s.dat' index %zu using 1:($4 < 2 ? $2 : NaN) with points pt 11 "
			"ps 1.4 lc rgb '" VERMILLION "' title 'flagged', \\\n"
			"     '%s.dat' index %zu using 1:($4 == 0 ? $5 : NaN):3 with labels left offset "
			"char 1.2,0 font ',8' tc rgb '" VERMILLION "' noenhanced notitle, \\\n"
			"     '%s.dat' index %zu using 1:($4 == 2 ? $5 : NaN):3 with labels left offset "
			"char 1.2,0 font ',8' tc rgb '" VERMILLION "' noenhanced notitle",
			b, fl, b, fl, b, fl);
	fputc('\n', f);
}

static size_t flagged_gpus(const struct gp_chart *c)
{
	char *seen = calloc(c->gpus.n + 1, 1);
	size_t n = 0;

	for (size_t i = 0; seen && i < c->nrows; i++)
		if (c->rows[i].flagged && !seen[c->rows[i].gpu])
			seen[c->rows[i].gpu] = 1, n++;
	free(seen);
	return n;
}

static void write_script(const struct gp_chart *c, const struct panel *pn, size_t np,
			 const char *b, int rows, int cols, FILE *f)
{
	char title[512], night[64];

	gp_text_plain(c->night ? c->night : "", night, sizeof(night));
	if (c->cfg->title)
		snprintf(title, sizeof(title), "%s", c->cfg->title);
	else
		snprintf(title, sizeof(title), "The fleet%s%.40s: each GPU's ceilings as %% of its "
			 "model's median - %zu GPUs, %zu flagged, %zu model%s", *night ? " on " : " tonight",
			 night, c->gpus.n, flagged_gpus(c), c->models.n, c->models.n == 1 ? "" : "s");
	fprintf(f, "# rooflined gnuplot chart '%s' (generated; data in %s.dat): the fleet's\n"
		"# distribution per model and ceiling (gp_fleetdist.h)\n"
		"set encoding utf8\nset grid ytics lt 1 lw 1 lc rgb '#e4e4e4'\n"
		"set xrange [0.4:%.1f]\nset ylabel '%% of median' font ',8'\n"
		"set xtics font ',8' nomirror noenhanced\nset style fill solid 0.15\nset boxwidth 0.35 absolute\n",
		b, b, (double)c->models.n + 0.9);
	for (size_t i = 0; i < c->cfg->formats.n; i++) {
		gp_term_output(f, c->cfg->formats.v[i], b, c->cfg->width, c->out_height);
		fprintf(f, "set multiplot layout %d,%d title ", rows, cols);
		gp_text_script_quote(f, title);
		fputs(" noenhanced font ',12'\n", f);
		for (size_t p = 0; p < np; p++)
			panel_script(c, pn, p, b, f);
		fputs("unset multiplot\n", f);
	}
	fputs("unset output\n", f);
}

static FILE *open_out(const struct gp_chart *c, const char *base, const char *suffix)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s%s", c->ctx->out_dir, base, suffix);
	return fopen(path, "w");
}

static int close_out(FILE *f)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad)
		return errno ? -errno : -EIO;
	return 0;
}

int gp_fleetdist_write(struct gp_chart *c, const char *base)
{
	size_t *order = malloc((c->ceilings.n + 1) * sizeof(*order)), np = 0;
	struct panel *pn = calloc(c->ceilings.n + 1, sizeof(*pn));
	struct work w = { malloc((c->nrows + 1) * sizeof(double)),
			  malloc((c->nrows + 1) * sizeof(double)),
			  malloc((c->nrows + 1) * sizeof(*w.fl)) };
	int rc = order && pn && w.vals && w.thr && w.fl ? 0 : -ENOMEM, rows, cols;
	FILE *f = NULL;

	for (size_t i = 0; rc == 0 && i < c->ceilings.n; i++)
		order[i] = i;
	sort_c = c;
	if (rc == 0)
		qsort(order, c->ceilings.n, sizeof(*order), by_rank);
	for (size_t i = 0; rc == 0 && i < c->ceilings.n; i++)
		for (size_t r = 0; r < c->nrows; r++)
			if (c->rows[r].ceiling == order[i]) {
				pn[np++].ceiling = order[i];
				break;
			}
	cols = np <= 1 ? 1 : np <= 4 ? 2 : 3;
	rows = (int)((np + (size_t)cols - 1) / (size_t)cols);
	c->out_height = c->cfg->height;
	if (c->out_height < 60 + PANEL_PX * (long)rows)
		c->out_height = 60 + PANEL_PX * (long)rows;
	if (rc == 0 && !(f = open_out(c, base, ".dat")))
		rc = -errno;
	if (rc == 0) {
		write_data(c, pn, np, f, &w);
		rc = close_out(f);
	}
	if (rc == 0 && !(f = open_out(c, base, ".gp")))
		rc = -errno;
	if (rc == 0) {
		write_script(c, pn, np, base, rows, cols, f);
		rc = close_out(f);
	}
	free(order), free(pn), free(w.vals), free(w.thr), free(w.fl);
	return rc;
}
