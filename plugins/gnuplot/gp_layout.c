/*
 * gp_layout.c - where things go on a chart.  See gp_layout.h.
 *
 * Fixed margins, so that the slope of a bandwidth roof on screen (and with
 * it the angle of its label) is known before gnuplot runs; the key right of
 * the plot, as wide as gnuplot will lay it out.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gp_layout.h"
#include "gp_text.h"

/* gnuplot lays a key column out as (title characters + 4 + samplen) times
 * the terminal font's character width, 8 px for Sans 10 in pngcairo and
 * svg; a row is 14 px. */
#define KEY_CHAR_PX 8.0
#define KEY_EXTRA_CHARS 6.0
#define KEY_LINE_PX 14.0
#define LABEL_CHAR_PX 6.7 /* a character of Sans 9, the labels' font */

void gp_layout_init(struct gp_layout *lo, const struct gp_chart *c)
{
	double h = (double)c->cfg->height;

	*lo = (struct gp_layout){ .c = c, .name_max = (size_t)c->cfg->name_max };
	lo->lm = 86 / (double)c->cfg->width, lo->bm = 64 / h, lo->tm = 1 - 44 / h;
	lo->maxrows = (int)((lo->tm - lo->bm) * h / KEY_LINE_PX);
	if (lo->maxrows < 1)
		lo->maxrows = 1;
}

static size_t key_columns(const struct gp_layout *lo, size_t entries)
{
	return (entries + (size_t)lo->maxrows - 1) / (size_t)lo->maxrows;
}

void gp_layout_fit_names(struct gp_layout *lo, size_t entries, size_t extra)
{
	double room = 0.5 * (double)lo->c->cfg->width - 30;
	double per_col = room / (double)key_columns(lo, entries) / KEY_CHAR_PX - KEY_EXTRA_CHARS;
	size_t fit = per_col > (double)(extra + 12) ? (size_t)per_col - extra : 12;

	lo->name_max = fit < (size_t)lo->c->cfg->name_max ? fit : (size_t)lo->c->cfg->name_max;
}

void gp_layout_key(struct gp_layout *lo, size_t entries, size_t chars, double right_px)
{
	double w = (double)lo->c->cfg->width, h = (double)lo->c->cfg->height;
	double cols = (double)key_columns(lo, entries);

	lo->rm = 1 - (cols * ((double)chars + KEY_EXTRA_CHARS) * KEY_CHAR_PX + right_px + 16) / w;
	lo->rm = fmax(lo->rm, 0.45);
	lo->key_x = lo->rm + (right_px + 12) / w;
	lo->pw = (lo->rm - lo->lm) * w, lo->ph = (lo->tm - lo->bm) * h;
}

/* y moved up by px pixels on the log GFLOP/s axis. */
static double up(const struct gp_layout *lo, double y, double px)
{
	return y * pow(10, px * log10(lo->c->ymax / lo->c->ymin) / lo->ph);
}

void gp_layout_roof_text(const struct gp_roof *r, char *out, size_t cap)
{
	char v[64], title[96];

	gp_text_rate(r->value, !r->compute ? "B/s" :
		     strncmp(r->unit, "OP", 2) ? "FLOP/s" : "OP/s", v, sizeof(v));
	gp_text_roof_title(r->name, title, sizeof(title));
	snprintf(out, cap, "%s %s%s", title, v, r->empirical ? "" : " (spec)");
}

/* ---- labels ---------------------------------------------------------------------- */

static double px_x(const struct gp_layout *lo, double x)
{
	return log10(x / lo->c->xmin) * lo->pw / log10(lo->c->xmax / lo->c->xmin);
}

static double px_y(const struct gp_layout *lo, double y)
{
	return log10(y / lo->c->ymin) * lo->ph / log10(lo->c->ymax / lo->c->ymin);
}

/* x moved right by px pixels on the log AI axis. */
static double right(const struct gp_layout *lo, double x, double px)
{
	return x * pow(10, px * log10(lo->c->xmax / lo->c->xmin) / lo->pw);
}

/* Markers under a label whose text, rotated by a (radians), starts at
 * (x, y) (its vertical middle) and runs len pixels. */
static int covered(const struct gp_layout *lo, double x, double y, double a, double len)
{
	double sx = px_x(lo, x), sy = px_y(lo, y);
	int n = 0;

	for (size_t i = 0; i < lo->c->npts; i++) {
		double dx = px_x(lo, lo->c->pts[i].ai) - sx, dy = px_y(lo, lo->c->pts[i].gflops) - sy;

		for (int k = 0; k < (lo->numbered ? 2 : 1); k++) { /* the marker, its number */
			double u = dx * cos(a) + dy * sin(a), v = dy * cos(a) - dx * sin(a);

			n += u > -8 && u < len + 8 && v > -13 && v < 13;
			dx += 12, dy += 10;
		}
	}
	return n;
}

/*
 * Put label l on its roof (bandwidth b in GB/s, or the ceiling at l->y when
 * b is 0), starting between from and to: where it covers the fewest
 * markers, the nearest to `to` of those.  It sits `gap` pixels above the roof.
 */
static void place(struct gp_layout *lo, struct gp_label *l, double b, double from,
		  double to, double gap)
{
	double a = l->angle * M_PI / 180, len = (double)strlen(l->text) * LABEL_CHAR_PX;
	double base = l->y, best_x = to;
	int best = -1;

	to = fmax(to, from);
	for (int k = 24; k >= 0; k--) {
		double x = from * pow(to / from, k / 24.0);
		double y = up(lo, b > 0 ? b * x : base, gap / cos(a));
		int n = covered(lo, x, y, a, len);

		if (best < 0 || n < best)
			best = n, best_x = x;
	}
	l->x = best_x;
	l->y = up(lo, b > 0 ? b * best_x : base, gap / cos(a));
}

static struct gp_label *new_label(struct gp_layout *lo, double y, double angle)
{
	struct gp_label *l = &lo->labels[lo->nlabels++];

	*l = (struct gp_label){ 0, y, angle, "" };
	return l;
}

/* The drawn compute ceilings, highest first, into v; their number. */
static size_t sorted_ceilings(const struct gp_chart *c, const struct gp_roof **v)
{
	size_t n = 0;

	for (size_t i = 0; i < c->ndrawn; i++) {
		size_t j = n;

		if (!c->drawn[i]->compute)
			continue;
		for (; j > 0 && v[j - 1]->value < c->drawn[i]->value; j--)
			v[j] = v[j - 1];
		v[j] = c->drawn[i];
		n++;
	}
	return n;
}

/* A label above each compute ceiling, toward its right end; ceilings within
 * 6% of each other share one. */
static void ceiling_labels(struct gp_layout *lo)
{
	const struct gp_chart *c = lo->c;
	const struct gp_roof *v[GP_MAX_DRAWN];
	size_t n = sorted_ceilings(c, v);
	double bmax = gp_chart_top(c, false);
	struct gp_label *l = NULL;
	char text[100];

	for (size_t i = 0; i <= n; i++) {
		if (l && (i == n || v[i - 1]->value / v[i]->value >= 1.06)) {
			double from = right(lo, bmax > 0 ? fmax(c->xmin, v[i - 1]->value / 1e9 / bmax) :
					    c->xmin, 30);

			place(lo, l, 0, from, right(lo, c->xmax, -((double)strlen(l->text) * LABEL_CHAR_PX + 10)), 9);
		}
		if (i == n)
			break;
		gp_layout_roof_text(v[i], text, sizeof(text));
		if (l && v[i - 1]->value / v[i]->value < 1.06) {
			size_t len = strlen(l->text);

			snprintf(l->text + len, sizeof(l->text) - len, ", %s", text);
			continue;
		}
		l = new_label(lo, v[i]->value / 1e9, 0);
		snprintf(l->text, sizeof(l->text), "%s", text);
	}
}

/*
 * A label along each bandwidth roof, just above it, where it covers the
 * fewest markers, the nearest to where the roof meets the lowest ceiling of
 * those (no ceiling crosses the text there).
 */
static void bandwidth_labels(struct gp_layout *lo)
{
	const struct gp_chart *c = lo->c;
	double decx = log10(c->xmax / c->xmin), decy = log10(c->ymax / c->ymin);
	double a = atan((lo->ph / decy) / (lo->pw / decx));
	double low = INFINITY;

	for (size_t i = 0; i < c->ndrawn; i++)
		if (c->drawn[i]->compute)
			low = fmin(low, c->drawn[i]->value / 1e9);
	for (size_t i = 0; i < c->ndrawn; i++) {
		double b = c->drawn[i]->value / 1e9, x0, x1;
		struct gp_label *l;

		if (c->drawn[i]->compute)
			continue;
		x0 = right(lo, fmax(c->xmin, c->ymin / b), 8);
		x1 = fmin(isfinite(low) ? low / b : c->xmax, fmin(c->xmax, c->ymax / b));
		if (x0 >= c->xmax)
			continue;
		l = new_label(lo, 0, a * 180 / M_PI);
		gp_layout_roof_text(c->drawn[i], l->text, sizeof(l->text));
		place(lo, l, b, x0, right(lo, x1, -((double)strlen(l->text) * LABEL_CHAR_PX + 36) * cos(a)), 12);
	}
}

void gp_layout_labels(struct gp_layout *lo)
{
	lo->nlabels = 0;
	ceiling_labels(lo);
	bandwidth_labels(lo);
}
