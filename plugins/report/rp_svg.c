/* rp_svg.c - see rp_svg.h. */
#include "rp_svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rp_text.h"

const char *const rp_colours[RP_N_COLOURS] = {
	"#0072B2", "#D55E00", "#009E73", "#CC79A7",
	"#E69F00", "#56B4E9", "#000000", "#F0E442",
};

enum { ML = 72, MR = 24, MT = 20, MB = 56 }; /* margins */

#define MAX_LABELS 32

struct frame {
	double x0, x1, y0, y1; /* log10 of the axis ranges */
	double label_y[MAX_LABELS]; /* ceiling labels placed so far */
	int nlabels;
	int w, h;               /* the plot area */
	const char *gpu;        /* roofs of this GPU */
	double pmax, bwmax;     /* highest ceiling and bandwidth drawn */
};

static double px(const struct frame *f, double ai)
{
	return ML + (log10(ai) - f->x0) / (f->x1 - f->x0) * f->w;
}

static double py(const struct frame *f, double gf)
{
	return MT + (f->y1 - log10(gf)) / (f->y1 - f->y0) * f->h;
}

static bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Is roof r drawn: of the frame's GPU, bandwidth of a level, or a compute
 * ceiling of a precision some primary kernel is at. */
static bool drawn(const struct rp_model *m, const struct frame *f,
		  const struct rp_roof *r)
{
	if (r->gpu_uuid && !same(r->gpu_uuid, f->gpu))
		return false;
	if (same(r->kind, "bandwidth"))
		return r->level != NULL;
	if (!same(r->kind, "compute"))
		return false;
	for (size_t i = 0; i < m->nk; i++)
		if (m->k[i].primary && same(m->k[i].precision, r->precision))
			return true;
	return false;
}

static void widen(double *lo, double *hi, double v)
{
	if (v > 0 && isfinite(v)) {
		if (v < *lo)
			*lo = v;
		if (v > *hi)
			*hi = v;
	}
}

static void frame_init(struct frame *f, const struct rp_model *m, int width,
		       int height)
{
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;

	memset(f, 0, sizeof(*f));
	f->w = width - ML - MR;
	f->h = height - MT - MB;
	for (size_t i = 0; i < m->nk && !f->gpu; i++)
		if (m->k[i].primary)
			f->gpu = m->k[i].gpu_uuid;
	for (size_t i = 0; i < m->nroofs; i++) {
		const struct rp_roof *r = &m->roofs[i];

		if (!drawn(m, f, r))
			continue;
		if (same(r->kind, "compute") && r->value > f->pmax)
			f->pmax = r->value;
		if (same(r->kind, "bandwidth") && r->value > f->bwmax)
			f->bwmax = r->value;
	}
	for (size_t i = 0; i < m->nk; i++) {
		if (!m->k[i].primary)
			continue;
		for (int l = 0; l < RP_LEVELS; l++)
			if (m->k[i].has_ai[l])
				widen(&xlo, &xhi, m->k[i].ai[l]);
		widen(&ylo, &yhi, m->k[i].gflops);
	}
	for (size_t i = 0; i < m->nroofs; i++)
		if (drawn(m, f, &m->roofs[i]) && same(m->roofs[i].kind, "bandwidth") && f->pmax > 0)
			widen(&xlo, &xhi, f->pmax / m->roofs[i].value);
	widen(&ylo, &yhi, f->pmax);
	if (!(xhi > 0)) {
		xlo = 0.01;
		xhi = 100;
	}
	if (!(yhi > 0)) {
		ylo = 1;
		yhi = 1000;
	}
	f->x0 = floor(log10(xlo));
	f->x1 = ceil(log10(xhi) + 0.05);
	f->y1 = ceil(log10(yhi * 2));
	f->y0 = floor(log10(ylo));
	if (f->x1 - f->x0 < 2)
		f->x1 = f->x0 + 2;
	if (f->y1 - f->y0 < 3)
		f->y0 = f->y1 - 3;
}

static void axes(struct strbuf *sb, const struct frame *f)
{
	strbuf_addf(sb, "<rect class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n",
		    ML, MT, f->w, f->h);
	for (int e = (int)f->x0; e <= (int)f->x1; e++) {
		double x = px(f, pow(10, e));

		strbuf_addf(sb, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
			    "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
			    x, MT, x, MT + f->h, x, MT + f->h + 18);
		rp_tick(sb, e);
		strbuf_addstr(sb, "</text>\n");
	}
	for (int e = (int)f->y0; e <= (int)f->y1; e++) {
		double y = py(f, pow(10, e));

		strbuf_addf(sb, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
			    "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
			    ML, y, ML + f->w, y, ML - 6, y + 4);
		rp_tick(sb, e);
		strbuf_addstr(sb, "</text>\n");
	}
	strbuf_addf(sb, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
		    "Arithmetic intensity (FLOP/byte)</text>\n", ML + f->w / 2, MT + f->h + 44);
	strbuf_addf(sb, "<text class=\"axis\" transform=\"translate(18 %d) rotate(-90)\" "
		    "text-anchor=\"middle\">Performance (GFLOP/s)</text>\n", MT + f->h / 2);
}

static const char *level_label(const char *level)
{
	return same(level, "l1") ? "L1" : same(level, "l2") ? "L2" : "HBM";
}

static void bandwidth_roof(struct strbuf *sb, const struct frame *f,
			   const struct rp_roof *r)
{
	double ylo = pow(10, f->y0), xa = pow(10, f->x0), xb;
	double ax, ay, bx, by, angle;

	if (xa * r->value < ylo)
		xa = ylo / r->value;
	xb = f->pmax > 0 ? f->pmax / r->value : pow(10, f->x1);
	if (xb > pow(10, f->x1))
		xb = pow(10, f->x1);
	if (xb <= xa)
		return;
	ax = px(f, xa); ay = py(f, xa * r->value);
	bx = px(f, xb); by = py(f, xb * r->value);
	strbuf_addf(sb, "<line class=\"roof bw\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		    ax, ay, bx, by);
	angle = atan2(by - ay, bx - ax) * 180 / M_PI;
	strbuf_addf(sb, "<text class=\"rooflabel\" transform=\"translate(%.1f %.1f) rotate(%.1f)\">",
		    ax + 0.12 * (bx - ax), ay + 0.12 * (by - ay) - 5, angle);
	strbuf_addf(sb, "%s ", level_label(r->level));
	rp_giga(sb, r->value, "B/s");
	strbuf_addstr(sb, "</text>\n");
}

/* A free baseline for a ceiling's label: above its line, else below it;
 * 0 when both would overlap a label placed before (the ceilings table
 * still has the value). */
static double label_place(struct frame *f, double y)
{
	const double cand[2] = { y - 4, y + 13 };

	for (int c = 0; c < 2; c++) {
		bool free_ = true;

		for (int i = 0; i < f->nlabels && free_; i++)
			free_ = fabs(f->label_y[i] - cand[c]) >= 13;
		if (free_ && f->nlabels < MAX_LABELS) {
			f->label_y[f->nlabels++] = cand[c];
			return cand[c];
		}
	}
	return 0;
}

static void compute_roof(struct strbuf *sb, struct frame *f,
			 const struct rp_roof *r)
{
	double xa = f->bwmax > 0 ? r->value / f->bwmax : pow(10, f->x0);
	double ax, y, ly;

	if (xa < pow(10, f->x0))
		xa = pow(10, f->x0);
	ax = px(f, xa);
	y = py(f, r->value);
	strbuf_addf(sb, "<line class=\"roof %s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
		    same(r->role, "peak") ? "peak" : "nofma", ax, y, ML + f->w, y);
	ly = label_place(f, y);
	if (ly == 0)
		return;
	strbuf_addf(sb, "<text class=\"rooflabel\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
		    ML + f->w - 4, ly);
	rp_esc(sb, r->precision);
	strbuf_addstr(sb, same(r->role, "peak") ? " peak " : same(r->role, "no_fma") ? " no-FMA " : " ");
	rp_giga(sb, r->value, "FLOP/s");
	if (same(r->method, "theoretical"))
		strbuf_addstr(sb, " (spec)");
	strbuf_addstr(sb, "</text>\n");
}

static void marker(struct strbuf *sb, int level, double x, double y,
		   const char *colour)
{
	switch (level) {
	case RP_L1:
		strbuf_addf(sb, "<path d=\"M%.1f %.1fl5.5 9.5h-11z\" fill=\"%s\"", x, y - 6.3,
			    colour);
		break;
	case RP_L2:
		strbuf_addf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" fill=\"%s\"",
			    x - 4.5, y - 4.5, colour);
		break;
	default:
		strbuf_addf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"", x, y, colour);
	}
}

static void kernel_points(struct strbuf *sb, const struct frame *f,
			  const struct rp_kernel *k)
{
	const char *colour = rp_colours[(k->number - 1) % RP_N_COLOURS];
	double y = py(f, k->gflops), xmin = INFINITY, xmax = -INFINITY;

	for (int l = 0; l < RP_LEVELS; l++) {
		if (!k->has_ai[l])
			continue;
		xmin = fmin(xmin, px(f, k->ai[l]));
		xmax = fmax(xmax, px(f, k->ai[l]));
	}
	if (!isfinite(xmin))
		return;
	strbuf_addf(sb, "<g class=\"kernel\" data-kernel=\"%d\">", k->number);
	if (xmax > xmin)
		strbuf_addf(sb, "<line class=\"join\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			    "stroke=\"%s\"/>", xmin, y, xmax, y, colour);
	for (int l = 0; l < RP_LEVELS; l++) {
		if (!k->has_ai[l])
			continue;
		marker(sb, l, px(f, k->ai[l]), y, colour);
		strbuf_addstr(sb, " class=\"pt\"><title>");
		strbuf_addf(sb, "%d ", k->number);
		rp_esc(sb, k->name);
		strbuf_addf(sb, " [%s] %s: AI ", k->precision, level_label(rp_level_names[l]));
		rp_num(sb, k->ai[l]);
		strbuf_addstr(sb, ", ");
		rp_num(sb, k->gflops);
		strbuf_addstr(sb, " GFLOP/s</title></");
		strbuf_addstr(sb, l == RP_L1 ? "path" : l == RP_L2 ? "rect" : "circle");
		strbuf_addstr(sb, ">");
	}
	strbuf_addf(sb, "<text class=\"num\" x=\"%.1f\" y=\"%.1f\">%d</text></g>\n",
		    xmax + 7, y - 5, k->number);
}

static void legend(struct strbuf *sb)
{
	static const char *const names[] = { "L1", "L2", "DRAM (HBM)" };

	strbuf_addf(sb, "<g class=\"legend\"><rect x=\"%d\" y=\"%d\" width=\"118\" height=\"70\"/>",
		    ML + 8, MT + 8);
	for (int l = 0; l < RP_LEVELS; l++) {
		marker(sb, l, ML + 22, MT + 24 + 18 * l, "#555555");
		strbuf_addf(sb, "/><text x=\"%d\" y=\"%d\">%s</text>", ML + 36, MT + 28 + 18 * l,
			    names[l]);
	}
	strbuf_addstr(sb, "</g>\n");
}

void rp_svg_chart(struct strbuf *sb, const struct rp_model *m, int width,
		  int height)
{
	bool level_done[RP_LEVELS] = { false };
	struct frame f;

	frame_init(&f, m, width, height);
	strbuf_addf(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"roofline\" "
		    "class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		    "role=\"img\" aria-label=\"Hierarchical roofline chart\">\n",
		    width, height, width, height);
	axes(sb, &f);
	for (size_t i = 0; i < m->nroofs; i++) {
		const struct rp_roof *r = &m->roofs[i];

		if (!drawn(m, &f, r))
			continue;
		if (same(r->kind, "bandwidth")) {
			/* one roof per level: the first (l1 before shared) */
			int l = same(r->level, "l1") ? RP_L1 : same(r->level, "l2") ? RP_L2 : RP_DRAM;

			if (!level_done[l])
				bandwidth_roof(sb, &f, r);
			level_done[l] = true;
		} else
			compute_roof(sb, &f, r);
	}
	for (size_t i = 0; i < m->nk; i++)
		if (m->k[i].primary && m->k[i].gflops > 0)
			kernel_points(sb, &f, &m->k[i]);
	legend(sb);
	strbuf_addstr(sb, "</svg>\n");
}
