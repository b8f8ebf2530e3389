/*
 * gp_chart.c - the gnuplot plugin's chart model.  See gp_chart.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_chart.h"
#include "gp_findings_model.h"
#include "gp_text.h"

#define NONE GP_NONE

/* ---- reading the inputs --------------------------------------------------- */

static const char *series_of(const char *step, const struct rl_field *f)
{
	const char *s = rl_field_get(f, "series");

	return s ? s : step ? step : "input";
}

static int take_point(struct gp_chart *c, const char *step, const struct rl_field *f)
{
	struct gp_point pt = { 0 };
	const char *inv = rl_field_get(f, "invocation");
	const char *prec = rl_field_get(f, "precision");
	const char *kernel = rl_field_get(f, "kernel");
	void *v;

	pt.level = gp_name_index(gp_level_names, GP_N_LEVELS, rl_field_get(f, "level"));
	pt.prec = prec ? gp_name_index(gp_prec_names, GP_N_PRECS, prec) : GP_ALL;
	if (!kernel || pt.level < 0 || pt.prec < 0 ||
	    !gp_text_parse_num(rl_field_get(f, "ai"), &pt.ai) ||
	    !gp_text_parse_num(rl_field_get(f, "gflops"), &pt.gflops) ||
	    pt.ai <= 0 || pt.gflops <= 0) {
		c->skipped++;
		return 0;
	}
	pt.is_all = !inv || strcmp(inv, "all") == 0;
	if (!gp_text_parse_num(rl_field_get(f, "flops"), &pt.flops) ||
	    !gp_text_parse_num(rl_field_get(f, "alpha"), &pt.alpha) ||
	    !gp_text_parse_num(rl_field_get(f, "partial_fma_gflops"), &pt.partial))
		pt.flops = pt.alpha = pt.partial = 0;
	pt.primary = rl_field_get(f, "primary") ? strcmp(rl_field_get(f, "primary"), "1") == 0 : -1;
	pt.roof[0] = pt.roof[1] = NONE;
	if (rl_field_get(f, "compute_ceiling"))
		pt.roof[0] = gp_strtab_index(&c->roof_names, rl_field_get(f, "compute_ceiling"));
	if (rl_field_get(f, "bandwidth_ceiling"))
		pt.roof[1] = gp_strtab_index(&c->roof_names, rl_field_get(f, "bandwidth_ceiling"));
	pt.name = gp_strtab_index(&c->names, kernel);
	pt.series = gp_strtab_index(&c->series, series_of(step, f));
	if (!c->gpu_name && rl_field_get(f, "gpu_name"))
		c->gpu_name = strdup(rl_field_get(f, "gpu_name"));
	v = pt.name != NONE && pt.series != NONE ?
		gp_push(c->pts, &c->npts, &c->cap_pts, sizeof(pt), &pt) : NULL;
	if (!v)
		return -ENOMEM;
	c->pts = v;
	return 0;
}

static int take_roof(struct gp_chart *c, const char *step, const struct rl_field *f)
{
	struct gp_roof r = { 0 };
	const char *name = rl_field_get(f, "name"), *kind = rl_field_get(f, "kind");
	const char *method = rl_field_get(f, "method"), *unit = rl_field_get(f, "unit");
	void *v;

	if (!name || !kind || !gp_text_parse_num(rl_field_get(f, "value"), &r.value) ||
	    r.value <= 0 || (strcmp(kind, "compute") && strcmp(kind, "bandwidth")))
		return 0;
	r.compute = strcmp(kind, "compute") == 0;
	r.empirical = !method || strcmp(method, "empirical") == 0;
	r.series = gp_strtab_index(&c->series, series_of(step, f));
	unit = unit ? unit : "";
	if (*unit && strchr("kMGTP", *unit) && unit[1] >= 'A' && unit[1] <= 'Z') {
		r.value *= pow(10, 3 * (double)(strchr("kMGTP", *unit) - "kMGTP" + 1));
		unit++; /* GFLOP/s, GB/s: the hierarchical plugin's units */
	}
	r.name = strdup(name);
	r.unit = strdup(unit);
	v = r.name && r.unit && r.series != NONE ?
		gp_push(c->roofs, &c->nroofs, &c->cap_roofs, sizeof(r), &r) : NULL;
	if (!v) {
		free(r.name);
		free(r.unit);
		return -ENOMEM;
	}
	c->roofs = v;
	return 0;
}

static int take_trend(struct gp_chart *c, const struct rl_field *f)
{
	static const char *const ai_keys[] = { "ai_l1", "ai_l2", "ai_dram" };
	const char *kernel = rl_field_get(f, "kernel"), *node = rl_field_get(f, "node");
	const char *want = c->cfg->kernel ? c->cfg->kernel : c->trend_kernel;
	const char *at = rl_field_get(f, "at") ? rl_field_get(f, "at") : rl_field_get(f, "run_at");
	struct gp_trend t = { 0 };
	void *v;

	if (!kernel || !gp_text_parse_time(at, &t.t) ||
	    !gp_text_parse_num(rl_field_get(f, "gflops"), &t.gflops)) {
		c->skipped++;
		return 0;
	}
	if (want && strcmp(want, kernel) != 0) {
		c->other_kernels++;
		return 0;
	}
	if (!c->trend_kernel && !(c->trend_kernel = strdup(kernel)))
		return -ENOMEM;
	for (int l = 0; l < GP_N_LEVELS; l++)
		if (!gp_text_parse_num(rl_field_get(f, ai_keys[l]), &t.ai[l]) || t.ai[l] <= 0)
			t.ai[l] = NAN;
	t.node = gp_strtab_index(&c->nodes, node ? node : "?");
	v = t.node != NONE ? gp_push(c->trends, &c->ntrends, &c->cap_trends, sizeof(t), &t) : NULL;
	if (!v)
		return -ENOMEM;
	c->trends = v;
	return 0;
}

int gp_chart_take(void *arg, const char *step, const char *kind,
		  const struct rl_field *fields)
{
	struct gp_chart *c = arg;

	if (strcmp(kind, "point") == 0)
		return take_point(c, step, fields);
	if (strcmp(kind, "roof") == 0 || strcmp(kind, "ceiling") == 0)
		return take_roof(c, step, fields);
	if (strcmp(kind, "trend") == 0)
		return take_trend(c, fields);
	return gp_findings_take(c, kind, fields);
}

/* ---- choosing what to draw ------------------------------------------------ */

/*
 * The precisions to show: the option's; or, when the points say which is
 * their kernel's primary one (the largest share of its peak), those; or
 * those the points have (all only when they have no other).
 */
static unsigned shown_precisions(struct gp_chart *c)
{
	unsigned m = 0;

	for (size_t i = 0; !c->cfg->precisions.n && i < c->npts; i++)
		c->by_primary |= c->pts[i].primary >= 0;

	for (size_t i = 0; i < c->cfg->precisions.n; i++) {
		int p = gp_name_index(gp_prec_names, GP_N_PRECS, c->cfg->precisions.v[i]);

		m |= p == GP_TENSOR ? (1u << (GP_TENSOR + 1)) - (1u << GP_TC_FP64) : 1u << p;
	}
	for (size_t i = 0; !c->cfg->precisions.n && i < c->npts; i++)
		if (c->pts[i].prec != GP_ALL && (!c->by_primary || c->pts[i].primary == 1))
			m |= 1u << c->pts[i].prec;
	if (!m)
		c->by_primary = false;
	return m ? m : 1u << GP_ALL;
}

/*
 * Keep the aggregate points of a kernel (or, with per_invocation, its
 * per-invocation ones, where it has both) at the precisions and levels shown.
 */
static int filter_points(struct gp_chart *c)
{
	size_t ns = c->series.n, k = 0;
	unsigned char *has = calloc(c->names.n * ns + 1, 1); /* 1: all, 2: each */

	if (!has)
		return -ENOMEM;
	for (size_t i = 0; i < c->npts; i++)
		has[c->pts[i].name * ns + c->pts[i].series] |= c->pts[i].is_all ? 1 : 2;
	c->precs = shown_precisions(c);
	for (size_t i = 0; i < c->npts; i++) {
		struct gp_point *p = &c->pts[i];
		int h = has[p->name * ns + p->series];
		int want_all = c->cfg->per_invocation ? h == 1 : (h & 1);

		if (p->is_all == want_all && (c->precs >> p->prec & 1) &&
		    (c->levels >> p->level & 1) && (!c->by_primary || p->primary == 1))
			c->pts[k++] = *p;
	}
	free(has);
	c->npts = k;
	return 0;
}

/* Each point's key entry (kernel, precision), numbered in input order. */
static int assign_entries(struct gp_chart *c)
{
	for (size_t i = 0; i < c->npts; i++) {
		struct gp_point *p = &c->pts[i];
		struct gp_entry e = { p->name, p->prec };
		size_t j = 0;
		void *v;

		while (j < c->nents && (c->ents[j].name != e.name || c->ents[j].prec != e.prec))
			j++;
		if (j == c->nents) {
			if (!(v = gp_push(c->ents, &c->nents, &c->cap_ents, sizeof(e), &e)))
				return -ENOMEM;
			c->ents = v;
		}
		p->entry = j;
	}
	return 0;
}

int gp_chart_select(struct gp_chart *c)
{
	int rc = filter_points(c);

	if (rc == 0)
		rc = assign_entries(c);
	if (rc == 0 && !(c->rank = malloc((c->series.n + 1) * sizeof(int))))
		rc = -ENOMEM;
	for (size_t s = 0; rc == 0 && s < c->series.n; s++)
		c->rank[s] = -1;
	for (size_t i = 0; rc == 0 && i < c->npts; i++)
		c->rank[c->pts[i].series] = 0;
	for (size_t s = 0; rc == 0 && s < c->series.n; s++)
		if (c->rank[s] == 0)
			c->rank[s] = (int)c->nser++;
	for (int p = 0; p < GP_N_PRECS; p++) {
		size_t i = 0;

		while (i < c->npts && c->pts[i].prec != p)
			i++;
		c->nprec += i < c->npts;
	}
	return rc;
}

bool gp_chart_compares(const struct gp_chart *c)
{
	return c->mode == GP_COMPARE || c->mode == GP_TRAJECTORY;
}

/* What `mode: auto` draws: points (a trajectory when its step was judged),
 * else trend rows, else the fleet's records. */
static int auto_mode(const struct gp_chart *c)
{
	if (c->npts)
		return c->step ? GP_TRAJECTORY : c->nser > 1 ? GP_COMPARE : GP_ROOFLINE;
	if (c->ntrends)
		return GP_HISTORY;
	if (gp_findings_rows(c, GP_FLEET))
		return GP_FLEET;
	if (gp_findings_rows(c, GP_GPU_HISTORY))
		return GP_GPU_HISTORY;
	return GP_ROOFLINE;
}

int gp_chart_pick_mode(struct gp_chart *c)
{
	int m = gp_name_index(gp_mode_names, GP_N_MODES, c->cfg->mode);

	c->mode = m = m == GP_AUTO ? auto_mode(c) : m;
	if (m == GP_FLEET || m == GP_GPU_HISTORY)
		return gp_findings_check(c);
	if (m != GP_HISTORY && !c->npts) {
		rl_error(c->ctx, "nothing to draw: no usable `point` record at the precisions and "
			 "levels shown in the inputs (%ld unusable records)", c->skipped);
		return -ENODATA;
	}
	if (m == GP_HISTORY && !c->ntrends) {
		rl_error(c->ctx, "nothing to draw: no usable `trend` record%s%s%s in the inputs",
			 c->cfg->kernel ? " of kernel '" : "", c->cfg->kernel ? c->cfg->kernel : "",
			 c->cfg->kernel ? "'" : "");
		return -ENODATA;
	}
	return 0;
}

void gp_chart_init(struct gp_chart *c, const struct gp_config *cfg,
		   struct rl_ctx *ctx)
{
	*c = (struct gp_chart){ .cfg = cfg, .ctx = ctx };
	for (size_t i = 0; i < cfg->levels.n; i++)
		c->levels |= 1u << gp_name_index(gp_level_names, GP_N_LEVELS, cfg->levels.v[i]);
	if (!cfg->levels.n)
		c->levels = (1u << GP_N_LEVELS) - 1;
}

void gp_chart_release(struct gp_chart *c)
{
	gp_strtab_free(&c->names);
	gp_strtab_free(&c->roof_names);
	gp_strtab_free(&c->series);
	gp_strtab_free(&c->nodes);
	for (size_t i = 0; i < c->nroofs; i++) {
		free(c->roofs[i].name);
		free(c->roofs[i].unit);
	}
	free(c->roofs);
	free(c->pts);
	free(c->trends);
	free(c->ents);
	free(c->rank);
	free(c->gpu_name);
	free(c->trend_kernel);
	gp_findings_release(c);
	gp_strtab_free(&c->gpus);
	gp_strtab_free(&c->models);
	gp_strtab_free(&c->ceilings);
}

/* The roof called name from the series that gives the roofs, measured first. */
static const struct gp_roof *find_roof(const struct gp_chart *c, const char *name)
{
	const struct gp_roof *best = NULL;
	size_t s = c->nroofs ? c->roofs[c->nroofs - 1].series : 0;

	for (size_t i = 0; i < c->nroofs; i++)
		if (c->roofs[i].series == s && strcmp(c->roofs[i].name, name) == 0 &&
		    (!best || (c->roofs[i].empirical && !best->empirical)))
			best = &c->roofs[i];
	return best;
}

static void draw_roof(struct gp_chart *c, const char *name)
{
	const struct gp_roof *r = find_roof(c, name);

	for (size_t i = 0; r && i < c->ndrawn; i++)
		if (c->drawn[i] == r)
			return;
	if (r && c->ndrawn < GP_MAX_DRAWN)
		c->drawn[c->ndrawn++] = r;
}

/* The first of a NULL-ended list of roof names that the inputs have. */
static void draw_first(struct gp_chart *c, const char *const *names)
{
	for (; *names; names++)
		if (find_roof(c, *names)) {
			draw_roof(c, *names);
			return;
		}
}

static bool has_precision(const struct gp_chart *c, int p)
{
	return c->precs >> p & 1;
}

/* The roofs the drawn points name (compute_ceiling, bandwidth_ceiling):
 * false when they name none. */
static bool draw_named(struct gp_chart *c)
{
	bool any = false;

	for (size_t i = 0; i < c->npts; i++)
		for (int k = 0; k < 2; k++)
			if (c->pts[i].roof[k] != NONE) {
				draw_roof(c, c->roof_names.v[c->pts[i].roof[k]]);
				any = true;
			}
	return any;
}

/* By name: a bandwidth roof per level shown, each precision's peak. */
static void draw_by_name(struct gp_chart *c)
{
	static const char *const bw[GP_N_LEVELS][5] = {
		{ "l1", "shared", NULL }, { "l2", NULL },
		{ "hbm_triad", "hbm_read", "hbm", "dram", NULL } };
	static const char *const fma[] = { "fp64_fma", "fp32_fma", "fp16_fma", NULL };
	static const char *const tc[] = { "tc_fp16", "tc_bf16", "tc_tf32", "tc_fp64", "tc_fp8", NULL };

	for (int p = GP_FP64; p <= GP_FP16; p++)
		if (has_precision(c, p))
			draw_roof(c, fma[p]);
	for (int p = GP_TC_FP64; p <= GP_TC_INT8; p++)
		if (has_precision(c, p))
			draw_roof(c, gp_prec_names[p]);
	if (has_precision(c, GP_TENSOR))
		draw_first(c, tc);
	if (has_precision(c, GP_ALL))
		draw_first(c, fma);
	for (int l = 0; l < GP_N_LEVELS; l++)
		if (c->levels >> l & 1)
			draw_first(c, bw[l]);
}

static void choose_roofs(struct gp_chart *c);

/* The `partial_fma` option: the partial-FMA ceiling (peak x (1 + alpha) / 2,
 * the hierarchical plugin's partial_fma_gflops) of the CUDA-core point with
 * the most FLOPs in the series that gives the roofs, added as a roof of that
 * series named for its precision and alpha.  Returns the name (owned by the
 * roof), or NULL.  Runs before any roof is drawn: c->roofs may move. */
static const char *add_partial_fma(struct gp_chart *c)
{
	static const char *const title[] = { "FP64", "FP32", "FP16" };
	const struct gp_point *best = NULL;
	struct gp_roof r = { 0 };
	char name[64];
	size_t s;
	void *v;

	s = c->nroofs ? c->roofs[c->nroofs - 1].series : NONE;
	for (size_t i = 0; s != NONE && i < c->npts; i++) {
		const struct gp_point *p = &c->pts[i];

		if (p->series == s && p->prec >= GP_FP64 && p->prec <= GP_FP16 &&
		    p->partial > 0 && (!best || p->flops > best->flops))
			best = p;
	}
	if (!best) {
		rl_warn(c->ctx, "partial_fma: no CUDA-core point with partial_fma_gflops "
			"in the series that gives the roofs");
		return NULL;
	}
	snprintf(name, sizeof(name), "%s partial FMA (alpha %.2f)", title[best->prec], best->alpha);
	r.name = strdup(name);
	r.unit = strdup("FLOP/s");
	r.compute = r.empirical = 1;
	r.series = s;
	r.value = best->partial * 1e9;
	v = r.name && r.unit ? gp_push(c->roofs, &c->nroofs, &c->cap_roofs, sizeof(r), &r) : NULL;
	if (!v) {
		free(r.name);
		free(r.unit);
		rl_warn(c->ctx, "partial_fma: %s", strerror(ENOMEM));
		return NULL;
	}
	c->roofs = v;
	return c->roofs[c->nroofs - 1].name;
}

/* The `ceilings` option; or the roofs the points name (else by precision
 * and level), with the CUDA-core FMA ceiling beside tensor work and the
 * no-FMA ceilings when at most two precisions show; and the partial-FMA
 * ceiling when asked for. */
void gp_chart_choose_roofs(struct gp_chart *c)
{
	const char *partial = c->cfg->partial_fma ? add_partial_fma(c) : NULL;

	choose_roofs(c);
	if (partial)
		draw_roof(c, partial);
}

static void choose_roofs(struct gp_chart *c)
{
	static const char *const add[] = { "fp64_add", "fp32_add", "fp16_add" };
	static const char *const tensor_base[] = { /* tc_fp64 ... tc_fp8 */
		"fp64_fma", "fp16_fma", "fp16_fma", "fp32_fma", "fp16_fma" };

	for (size_t i = 0; i < c->cfg->ceilings.n; i++) {
		if (!find_roof(c, c->cfg->ceilings.v[i]))
			rl_warn(c->ctx, "no roof named '%s' in the inputs", c->cfg->ceilings.v[i]);
		draw_roof(c, c->cfg->ceilings.v[i]);
	}
	if (c->cfg->ceilings.n)
		return;
	if (!draw_named(c))
		draw_by_name(c);
	for (int p = GP_TC_FP64; p <= GP_TC_FP8; p++) /* tensor work: the FMA beside it */
		if (has_precision(c, p))
			draw_roof(c, tensor_base[p - GP_TC_FP64]);
	for (int p = GP_FP64; p <= GP_FP16 && c->nprec <= 2; p++)
		if (has_precision(c, p))
			draw_roof(c, add[p]);
}

double gp_chart_top(const struct gp_chart *c, bool compute)
{
	double top = 0;

	for (size_t i = 0; i < c->ndrawn; i++)
		if (c->drawn[i]->compute == compute && c->drawn[i]->value / 1e9 > top)
			top = c->drawn[i]->value / 1e9;
	return top;
}

static double decade_floor(double v) { return pow(10, floor(log10(v))); }
static double decade_ceil(double v) { return pow(10, ceil(log10(v))); }

/* The least of 1, 2, 5 times a power of ten that is at least v. */
static double nice_ceil(double v)
{
	double d = decade_floor(v);

	return v <= d ? d : v <= 2 * d ? 2 * d : v <= 5 * d ? 5 * d : 10 * d;
}

/* Axis ranges: the points and the ridges, with room; whole decades but
 * for the top (1, 2 or 5 times a decade), at least 3 decades of GFLOP/s. */
void gp_chart_ranges(struct gp_chart *c)
{
	const struct gp_config *cfg = c->cfg;
	double top = gp_chart_top(c, true), bmax = gp_chart_top(c, false);
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = top;

	for (size_t i = 0; i < c->npts; i++) {
		xlo = fmin(xlo, c->pts[i].ai), xhi = fmax(xhi, c->pts[i].ai);
		ylo = fmin(ylo, c->pts[i].gflops), yhi = fmax(yhi, c->pts[i].gflops);
	}
	for (size_t i = 0; i < c->ndrawn; i++) {
		double v = c->drawn[i]->value / 1e9;
		double x = c->drawn[i]->compute ? (bmax > 0 ? v / bmax : NAN) : (top > 0 ? top / v : NAN);

		if (isfinite(x))
			xlo = fmin(xlo, x), xhi = fmax(xhi, x);
	}
	if (!isfinite(xlo))
		xlo = 0.01, xhi = 1000;
	yhi = yhi > 0 ? yhi : 1000;
	c->xmin = cfg->xmin > 0 ? cfg->xmin : decade_floor(xlo / 2);
	c->xmax = cfg->xmax > 0 ? cfg->xmax : decade_ceil(xhi * 2);
	c->ymax = cfg->ymax > 0 ? cfg->ymax : nice_ceil(yhi * 2.2);
	c->ymin = cfg->ymin > 0 ? cfg->ymin :
		decade_floor(fmax(fmin(isfinite(ylo) ? ylo / 2 : INFINITY, c->ymax / 1e3), c->ymax / 1e9));
	if (c->xmax <= c->xmin)
		c->xmax = c->xmin * 1e3;
	if (c->ymax <= c->ymin)
		c->ymax = c->ymin * 1e3;
}

