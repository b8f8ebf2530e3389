/*
 * regressions - each kernel of a run against a baseline run, on the
 * roofline: unchanged, faster, dropped, moved left, roof changed, new, gone.
 *
 * A daemon-side step after the analysis (`needs: [roofline]`).  Everything
 * comes from the daemon as the history set `kernel_points`: this run's
 * aggregate points (one per kernel, level and precision, with the empirical
 * ceiling of the roof that bounds each), the baseline's (option `baseline`,
 * else the previous successful run of the same pipeline on the same GPU
 * model), and each point's spread over the latest `lookback` earlier runs.
 * Each point is classified by common/judge.h (judge_point), the same rule
 * `roofline regressions` applies.
 *
 * Records (docs/findings.md):
 *   regression          one per kernel, level and precision of either run:
 *                       class, the changes and thresholds
 *   finding             one per (kernel, precision) that regressed at some
 *                       level: its worst class (moved left, roof changed,
 *                       dropped) and the levels it showed at
 *   regression_summary  one: the baseline, counts per class, regressed
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "strtab.h"
#include "rooflined/plugin.h"

struct regress_config {
	long lookback;
	long baseline;
	double k;
	double floor_pct;
	long min_history;
};

static const char *const regress_history[] = { "kernel_points", NULL };

static const struct rl_option regress_options[] = {
	{ "lookback", RL_OPT_INT, "10", offsetof(struct regress_config, lookback),
	  "how many earlier runs make a kernel's own noise", 0 },
	{ "baseline", RL_OPT_INT, "0", offsetof(struct regress_config, baseline),
	  "the run to compare with (0: the previous successful run of this "
	  "pipeline on the same GPU model)", 0 },
	{ "k", RL_OPT_DOUBLE, JUDGE_DEFAULT_K, offsetof(struct regress_config, k),
	  "threshold = max(floor_pct, k x the kernel's own spread)", 0 },
	{ "floor_pct", RL_OPT_DOUBLE, JUDGE_DEFAULT_FLOOR_PCT,
	  offsetof(struct regress_config, floor_pct),
	  "the smallest change (%) that counts", 0 },
	{ "min_history", RL_OPT_INT, JUDGE_DEFAULT_MIN_HISTORY,
	  offsetof(struct regress_config, min_history),
	  "earlier runs of a kernel before its own spread is used", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

struct kpoint {
	char *kernel, *level, *precision, *gpu_name;
	bool in_run;     /* else the baseline's */
	struct judge_point p;
	struct judge_point_noise noise;
	bool has_noise;
	size_t seq;      /* its place among the records read */
};

/* A `kernel_noise` record, kept until every record is read. */
struct knoise {
	char *kernel, *level, *precision;
	struct judge_point_noise noise;
	size_t seq;
};

struct regress {
	/* kernels, levels, precisions, GPU models: kept once (975,000 records
	 * at 50,000 kernels name 50,000 kernels), compared by pointer first */
	struct strtab strings;
	struct kpoint *v;
	size_t n, cap;
	struct knoise *nv;
	size_t nn, ncap;
	size_t seq;      /* records read */
	char *night, *baseline;
};

static int keycmp(const struct kpoint *a, const char *kernel, const char *level,
		  const char *precision)
{
	int c = strtab_cmp(a->kernel, kernel);

	if (!c)
		c = strtab_cmp(a->precision, precision);
	return c ? c : strtab_cmp(a->level, level);
}

static int add_noise(struct regress *r, const char *kernel, const char *level,
		     const char *precision, const struct rl_field *f)
{
	struct knoise *x;

	if (r->nn == r->ncap) {
		size_t cap = r->ncap ? 2 * r->ncap : 128;
		struct knoise *v = realloc(r->nv, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->nv = v, r->ncap = cap;
	}
	x = &r->nv[r->nn++];
	x->kernel = strtab_intern(&r->strings, kernel);
	x->level = strtab_intern(&r->strings, level);
	x->precision = strtab_intern(&r->strings, precision);
	x->noise.n = (long)rl_field_double(f, "n", 0);
	x->noise.ai_cv = rl_field_double(f, "ai_cv", 0);
	x->noise.gflops_cv = rl_field_double(f, "gflops_cv", 0);
	x->seq = r->seq++;
	return x->kernel && x->level && x->precision ? 0 : -ENOMEM;
}

static int cmp_knoise_key(const struct knoise *x, const struct kpoint *k)
{
	return strtab_cmp(x->kernel, k->kernel) || strtab_cmp(x->precision, k->precision) ||
	       strtab_cmp(x->level, k->level);
}

/* By kernel, precision and level, then as read. */
static int cmp_knoise(const void *a, const void *b)
{
	const struct knoise *x = a, *y = b;
	int c = strtab_cmp(x->kernel, y->kernel);

	if (!c)
		c = strtab_cmp(x->precision, y->precision);
	if (!c)
		c = strtab_cmp(x->level, y->level);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* Give each of the run's points the last `kernel_noise` record of its
 * kernel, level and precision that was read after it (the daemon writes
 * them after the points), as applying each record to the points read so
 * far would. */
static void apply_noise(struct regress *r)
{
	if (!r->nn)
		return;
	qsort(r->nv, r->nn, sizeof(*r->nv), cmp_knoise);
	for (size_t i = 0; i < r->n; i++) {
		struct kpoint *k = &r->v[i];
		struct knoise key = { .kernel = k->kernel, .level = k->level,
				      .precision = k->precision, .seq = SIZE_MAX };
		size_t lo = 0, hi = r->nn;

		if (!k->in_run)
			continue;
		/* the first record after every record of this key */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (cmp_knoise(&r->nv[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && !cmp_knoise_key(&r->nv[lo - 1], k) &&
		    r->nv[lo - 1].seq > k->seq) {
			k->has_noise = true;
			k->noise = r->nv[lo - 1].noise;
		}
	}
}

static int read_input(void *arg, const char *step, const char *kind,
		      const struct rl_field *f)
{
	struct regress *r = arg;
	const char *kernel = rl_field_get(f, "kernel"), *level = rl_field_get(f, "level"),
		   *precision = rl_field_get(f, "precision");
	struct kpoint *k;

	(void)step;
	if (!strcmp(kind, "run")) {
		free(r->night);
		r->night = rl_field_get(f, "night") ? strdup(rl_field_get(f, "night")) : NULL;
		return 0;
	}
	if (!strcmp(kind, "baseline")) {
		free(r->baseline);
		r->baseline = rl_field_get(f, "run") ? strdup(rl_field_get(f, "run")) : NULL;
		return 0;
	}
	if (!kernel || !level || !precision)
		return 0;
	if (!strcmp(kind, "kernel_noise"))
		return add_noise(r, kernel, level, precision, f);
	if (strcmp(kind, "run_point") && strcmp(kind, "baseline_point"))
		return 0;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 128;
		struct kpoint *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v, r->cap = cap;
	}
	k = &r->v[r->n++];
	memset(k, 0, sizeof(*k));
	k->seq = r->seq++;
	k->kernel = strtab_intern(&r->strings, kernel);
	k->level = strtab_intern(&r->strings, level);
	k->precision = strtab_intern(&r->strings, precision);
	k->gpu_name = strtab_intern(&r->strings, rl_field_get(f, "gpu_name")
						 ? rl_field_get(f, "gpu_name") : "");
	k->in_run = !strcmp(kind, "run_point");
	k->p.ai = rl_field_double(f, "ai", NAN);
	k->p.gflops = rl_field_double(f, "gflops", NAN);
	k->p.roof = rl_field_double(f, "roof", 0);
	return k->kernel && k->level && k->precision && k->gpu_name ? 0 : -ENOMEM;
}

/* Sort by kernel, precision and level (a kernel's precision's levels
 * together), the baseline's point before the run's. */
static int cmp_kpoint(const void *a, const void *b)
{
	const struct kpoint *x = a, *y = b;
	int c = keycmp(x, y->kernel, y->level, y->precision);

	return c ? c : (int)x->in_run - (int)y->in_run;
}

#define FMT(buf, fmt, x) (snprintf(buf, sizeof(buf), fmt, x), buf)

static int emit_regression(struct rl_ctx *ctx, const struct kpoint *any,
			   const struct judge_point_result *res)
{
	char ai[32], g[32], roof[32], at[32], gt[32];

	return rl_emit(ctx, "regression", (const struct rl_field[]){
		{ "kernel", any->kernel }, { "level", any->level },
		{ "precision", any->precision },
		{ "class", judge_class_name(res->class) },
		{ "regressed", judge_class_regressed(res->class) ? "1" : "0" },
		{ "ai_change_pct", isnan(res->ai_change_pct) ? "" : FMT(ai, "%.4f", res->ai_change_pct) },
		{ "gflops_change_pct", isnan(res->gflops_change_pct) ? "" : FMT(g, "%.4f", res->gflops_change_pct) },
		{ "roof_change_pct", isnan(res->roof_change_pct) ? "" : FMT(roof, "%.4f", res->roof_change_pct) },
		{ "ai_threshold_pct", FMT(at, "%.4f", res->ai_threshold_pct) },
		{ "gflops_threshold_pct", FMT(gt, "%.4f", res->gflops_threshold_pct) },
		{ NULL, NULL } });
}

/* The worst regression of one kernel and precision, over its levels. */
struct worst {
	enum judge_class class;
	const struct kpoint *now, *base;
	struct judge_point_result res;
	char levels[128];
};

static int rank(enum judge_class c)
{
	return c == JUDGE_MOVED_LEFT ? 3 : c == JUDGE_ROOF_CHANGED ? 2
					 : c == JUDGE_DROPPED ? 1 : 0;
}

static int emit_finding(struct rl_ctx *ctx, const struct regress *r,
			const struct worst *w)
{
	bool left = w->class == JUDGE_MOVED_LEFT;
	double value = left ? w->now->p.ai : w->now->p.gflops;
	double ref = left ? w->base->p.ai : w->base->p.gflops;
	double change = left ? w->res.ai_change_pct : w->res.gflops_change_pct;
	double thr = left ? w->res.ai_threshold_pct : w->res.gflops_threshold_pct;
	char v[32], rf[32], d[32], t[32], n[32], rc[32];
	char cause[160] = "";

	if (w->class == JUDGE_ROOF_CHANGED)
		snprintf(cause, sizeof(cause), "the node's roof fell %.1f %%",
			 -w->res.roof_change_pct);
	else if (left)
		snprintf(cause, sizeof(cause), "more bytes per FLOP at %s", w->levels);
	rl_warn(ctx, "%s %s: %s at %s, %s %.1f %% (threshold %.1f %%) against run %s",
		w->now->kernel, w->now->precision, judge_class_name(w->class),
		w->levels, left ? "AI" : "GFLOP/s", change, thr, r->baseline);
	return rl_emit(ctx, "finding", (const struct rl_field[]){
		{ "scope", "kernel" }, { "subject", w->now->kernel },
		{ "measure", w->now->precision }, { "kernel", w->now->kernel },
		{ "class", judge_class_name(w->class) },
		{ "severity", -change >= 3 * thr ? "critical" : "warning" },
		{ "night", r->night ? r->night : "" },
		{ "gpu_name", w->now->gpu_name },
		{ "levels", w->levels },
		{ "value", FMT(v, "%.17g", value) },
		{ "reference", FMT(rf, "%.17g", ref) },
		{ "drop_pct", FMT(d, "%.4f", -change) },
		{ "threshold_pct", FMT(t, "%.4f", thr) },
		{ "noise_pct", FMT(n, "%.4f", w->res.noise_pct) },
		{ "roof_change_pct", isnan(w->res.roof_change_pct) ? "" : FMT(rc, "%.4f", w->res.roof_change_pct) },
		{ "cause", cause },
		{ "baseline_run", r->baseline },
		{ NULL, NULL } });
}

static void note_worst(struct worst *w, const struct kpoint *now,
		       const struct kpoint *base,
		       const struct judge_point_result *res)
{
	size_t len = strlen(w->levels);

	if (!judge_class_regressed(res->class))
		return;
	if (rank(res->class) > rank(w->class)) {
		w->class = res->class, w->now = now, w->base = base, w->res = *res;
		w->levels[0] = '\0', len = 0;
	}
	if (res->class == w->class && len + strlen(now->level) + 2 < sizeof(w->levels))
		snprintf(w->levels + len, sizeof(w->levels) - len, "%s%s",
			 len ? "," : "", now->level);
}

static int classify_all(struct rl_ctx *ctx, const struct regress_config *cfg,
			struct regress *r)
{
	struct judge_params p = { cfg->k, cfg->floor_pct, 2, cfg->min_history };
	size_t counts[JUDGE_GONE + 1] = { 0 }, regressed = 0;
	struct worst w = { .class = JUDGE_UNCHANGED };
	char a[32], b[32], c[32], d[32], e[32], f[32];
	int rc = 0;

	if (r->n) /* NULL when neither run has a point */
		qsort(r->v, r->n, sizeof(*r->v), cmp_kpoint);
	for (size_t i = 0; i < r->n && rc == 0;) {
		const struct kpoint *base = NULL, *now = NULL;
		struct judge_point_result res;
		size_t j = i;

		for (; j < r->n && !keycmp(&r->v[j], r->v[i].kernel, r->v[i].level,
					    r->v[i].precision); j++)
			*(r->v[j].in_run ? &now : &base) = &r->v[j];
		judge_point(&p, now ? &now->p : NULL, base ? &base->p : NULL,
			    now && now->has_noise ? &now->noise : NULL, &res);
		counts[res.class]++;
		rc = emit_regression(ctx, now ? now : base, &res);
		/* a new kernel and precision starts: emit the last one's worst */
		if (now && (!w.now || strcmp(w.now->kernel, now->kernel) ||
			    strcmp(w.now->precision, now->precision))) {
			if (w.now && rc == 0 && w.class != JUDGE_UNCHANGED) {
				rc = emit_finding(ctx, r, &w);
				regressed++;
			}
			memset(&w, 0, sizeof(w));
			w.class = JUDGE_UNCHANGED;
			w.now = now;
		}
		if (now && base)
			note_worst(&w, now, base, &res);
		i = j;
	}
	if (rc == 0 && w.now && w.class != JUDGE_UNCHANGED) {
		rc = emit_finding(ctx, r, &w);
		regressed++;
	}
	if (rc)
		return rc;
	rl_info(ctx, "against run %s: %zu unchanged, %zu faster, %zu dropped, "
		"%zu moved left, %zu roof changed, %zu new, %zu gone",
		r->baseline ? r->baseline : "(none)", counts[JUDGE_UNCHANGED],
		counts[JUDGE_FASTER], counts[JUDGE_DROPPED],
		counts[JUDGE_MOVED_LEFT], counts[JUDGE_ROOF_CHANGED],
		counts[JUDGE_NEW], counts[JUDGE_GONE]);
	return rl_emit(ctx, "regression_summary", (const struct rl_field[]){
		{ "baseline_run", r->baseline ? r->baseline : "" },
		{ "unchanged", FMT(a, "%zu", counts[JUDGE_UNCHANGED]) },
		{ "dropped", FMT(b, "%zu", counts[JUDGE_DROPPED]) },
		{ "moved_left", FMT(c, "%zu", counts[JUDGE_MOVED_LEFT]) },
		{ "roof_changed", FMT(d, "%zu", counts[JUDGE_ROOF_CHANGED]) },
		{ "new", FMT(e, "%zu", counts[JUDGE_NEW]) },
		{ "regressed", FMT(f, "%zu", regressed) },
		{ NULL, NULL } });
}

static enum rl_result regress_run(struct rl_ctx *ctx, const void *config,
				  void *state)
{
	const struct regress_config *cfg = config;
	struct regress r = { 0 };
	enum rl_result res = RL_FAIL;
	int rc;

	(void)state;
	if (cfg->k <= 0 || cfg->floor_pct < 0 || cfg->lookback < 1 ||
	    cfg->min_history < 1 || cfg->baseline < 0) {
		rl_error(ctx, "k must be > 0, floor_pct >= 0, lookback and "
			 "min_history >= 1, baseline >= 0");
		return RL_FAIL;
	}
	/* the daemon writes kernel_noise after the points (daemon/step_inputs.c) */
	rc = rl_each_input(ctx, NULL, read_input, &r);
	if (rc == 0)
		apply_noise(&r);
	if (rc == 0 && !r.baseline)
		rl_info(ctx, "no baseline run: every kernel is new");
	if (rc == 0)
		rc = classify_all(ctx, cfg, &r);
	if (rc)
		rl_error(ctx, "cannot classify the kernels: %s", strerror(rc < 0 ? -rc : rc));
	else
		res = RL_OK;
	strtab_release(&r.strings); /* every kernel, level, precision, model */
	free(r.v);
	free(r.nv);
	free(r.night);
	free(r.baseline);
	return res;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "regressions",
	.version = "1.0",
	.stage = RL_STAGE_ANALYZE,
	.summary = "each kernel of a run against a baseline run on the roofline: dropped, moved left, roof changed",
	.options = regress_options,
	.config_size = sizeof(struct regress_config),
	.run = regress_run,
	.history = regress_history,
};
