/*
 * fleet - each GPU's ceilings against its model's fleet tonight and its own
 * past nights; a `finding` for every ceiling that fell beyond its noise.
 *
 * A daemon-side step at the end of the nightly ceilings pipeline (after the
 * `nodes: each` fan-out).  Tonight's figures are the empirical `ceiling`
 * records of the steps it needs (one per GPU and ceiling); the GPUs' own
 * past comes from the daemon as the history set `gpu_history` (the latest
 * `nights` earlier nights of the same pipeline).  Like is compared with
 * like: figures of a model and ceiling are grouped by the mode they were
 * measured in (a record's `mode`: "concurrent" when every GPU of the node
 * ran at once, else "sequential") and, for peer-to-peer figures, by the
 * link (`link`, e.g. NV18); only a GPU's own sequential figures have a
 * history (sql/019_p2p.sql).  Each figure is judged by
 * common/judge.h: against the median of the GPUs of the same model tonight
 * (models are never compared with each other; a model with fewer than
 * `min_fleet` GPUs is judged against its history only) with a threshold
 * from the measured noise, and against its own history.
 *
 * Records (docs/findings.md):
 *   finding        one per flagged (GPU, ceiling): scope gpu, subject (the
 *                  UUID), measure (the ceiling), class, severity, the
 *                  figures it was judged with and the likely cause
 *   fleet_gpu      one per (GPU, ceiling): value, its model's median, % of
 *                  it, flagged 0/1 (the fleet chart's data)
 *   fleet_summary  one: GPUs, models, figures judged, flagged
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "strtab.h"
#include "rooflined/plugin.h"

/* The longest history window: PostgreSQL keeps a year of each GPU's nights
 * (ceiling_series, sql/014_ceiling_series.sql). */
#define FLEET_MAX_NIGHTS 366

struct fleet_config {
	long nights;
	double k;
	double floor_pct;
	long min_fleet;
	long min_history;
	struct rl_strlist ceilings;
};

static const char *const fleet_history[] = { "gpu_history", NULL };

static const struct rl_option fleet_options[] = {
	{ "nights", RL_OPT_INT, "14", offsetof(struct fleet_config, nights),
	  "how many earlier nights of each GPU make its own history (1-366)", 0 },
	{ "k", RL_OPT_DOUBLE, JUDGE_DEFAULT_K, offsetof(struct fleet_config, k),
	  "threshold = max(floor_pct, k x measured noise)", 0 },
	{ "floor_pct", RL_OPT_DOUBLE, JUDGE_DEFAULT_FLOOR_PCT,
	  offsetof(struct fleet_config, floor_pct),
	  "the smallest drop (%) that is ever flagged", 0 },
	{ "min_fleet", RL_OPT_INT, JUDGE_DEFAULT_MIN_FLEET,
	  offsetof(struct fleet_config, min_fleet),
	  "GPUs of a model tonight for a fleet comparison", 0 },
	{ "min_history", RL_OPT_INT, JUDGE_DEFAULT_MIN_HISTORY,
	  offsetof(struct fleet_config, min_history),
	  "earlier nights of a GPU for a history comparison", 0 },
	{ "ceilings", RL_OPT_LIST, NULL, offsetof(struct fleet_config, ceilings),
	  "the ceilings to judge (default: every measured one)", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* One GPU's figure for one ceiling tonight.  Its strings are the fleet's
 * table's (struct fleet), NULL where the record had none. */
struct figure {
	char *uuid, *name, *model, *node, *index, *driver, *unit, *synthetic;
	double value, spread_pct, sm_clock, sm_clock_max, power_w, temp_c;
	long trials;
	char *throttle, *ecc;
	/* like with like: figures are compared within (model, name, mode,
	 * link); mode "sequential" when the record names none */
	char *mode, *peer, *link;
	/* from the fleet and the history */
	size_t fleet_n;
	double fleet_median, fleet_mad;
	const struct past *past;
	const char *fleet_driver; /* borrowed from a figure of its fleet */
};

struct past {
	char *uuid, *name, *driver; /* the fleet's table's */
	long n;
	double median, sd; /* of its earlier nights; sd robust (MAD) */
};

struct fleet {
	/* Every string of a figure and a past (UUIDs, ceilings, models,
	 * modes, nodes, drivers, ...): kept once (144,000 figures at 8,000
	 * GPUs share 8,000 UUIDs and 2,000 nodes), compared by pointer
	 * first, freed with the table */
	struct strtab strings;
	bool out_of_memory; /* an intern failed */
	const struct fleet_config *cfg;
	struct figure *fig;
	size_t nfig, capfig;
	struct past *past;
	size_t npast, cappast;
	char *night;
};

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

/* The table's copy of s, NULL when s is absent or empty (or when out of
 * memory: fl->out_of_memory is set then). */
static char *intern_or_null(struct fleet *fl, const char *s)
{
	char *t;

	if (!s || !*s)
		return NULL;
	t = strtab_intern(&fl->strings, s);
	if (!t)
		fl->out_of_memory = true;
	return t;
}

static bool wanted(const struct fleet_config *cfg, const char *name)
{
	if (!cfg->ceilings.n)
		return true;
	for (size_t i = 0; i < cfg->ceilings.n; i++)
		if (!strcmp(cfg->ceilings.v[i], name))
			return true;
	return false;
}

static int read_ceiling(void *arg, const char *step, const char *kind,
			const struct rl_field *f)
{
	struct fleet *fl = arg;
	const char *uuid = rl_field_get(f, "gpu_uuid"),
		   *name = rl_field_get(f, "name"),
		   *method = rl_field_get(f, "method");
	double value = rl_field_double(f, "value", NAN);
	struct figure *g;

	(void)kind;
	if (!uuid || !name || !method || strcmp(method, "empirical") ||
	    !wanted(fl->cfg, name) || !(value > 0))
		return 0;
	if (fl->nfig == fl->capfig) {
		size_t cap = fl->capfig ? 2 * fl->capfig : 256;
		struct figure *v = realloc(fl->fig, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		fl->fig = v, fl->capfig = cap;
	}
	g = &fl->fig[fl->nfig++];
	memset(g, 0, sizeof(*g));
	g->uuid = strtab_intern(&fl->strings, uuid);
	g->name = strtab_intern(&fl->strings, name);
	g->model = strtab_intern(&fl->strings, rl_field_get(f, "gpu_name")
					? rl_field_get(f, "gpu_name") : "?");
	/* ert's records do not name the node: the instance does, "ert@NODE" */
	g->node = intern_or_null(fl, rl_field_get(f, "node") ? rl_field_get(f, "node")
				 : strchr(step, '@') ? strchr(step, '@') + 1 : NULL);
	g->index = intern_or_null(fl, rl_field_get(f, "gpu_index"));
	g->driver = intern_or_null(fl, rl_field_get(f, "driver"));
	g->unit = intern_or_null(fl, rl_field_get(f, "unit"));
	g->synthetic = intern_or_null(fl, rl_field_get(f, "synthetic"));
	g->throttle = intern_or_null(fl, rl_field_get(f, "throttle"));
	g->ecc = intern_or_null(fl, rl_field_get(f, "ecc_errors"));
	g->mode = strtab_intern(&fl->strings, rl_field_get(f, "mode") && *rl_field_get(f, "mode")
					   ? rl_field_get(f, "mode") : "sequential");
	g->peer = intern_or_null(fl, rl_field_get(f, "peer_index"));
	g->link = intern_or_null(fl, rl_field_get(f, "link"));
	g->value = value;
	g->spread_pct = rl_field_double(f, "spread_pct", -1);
	g->trials = (long)rl_field_double(f, "trials", 0);
	g->sm_clock = rl_field_double(f, "sm_clock_mhz", 0);
	g->sm_clock_max = rl_field_double(f, "sm_clock_max_mhz", 0);
	g->power_w = rl_field_double(f, "power_w", 0);
	g->temp_c = rl_field_double(f, "temp_c", NAN);
	return g->uuid && g->name && g->model && g->mode &&
	       !fl->out_of_memory ? 0 : -ENOMEM;
}

static int read_history(void *arg, const char *step, const char *kind,
			const struct rl_field *f)
{
	struct fleet *fl = arg;
	struct past *p;

	(void)step;
	if (!strcmp(kind, "run")) {
		free(fl->night);
		fl->night = dup_or_null(rl_field_get(f, "night"));
		return 0;
	}
	if (strcmp(kind, "gpu_history") || !rl_field_get(f, "gpu_uuid") ||
	    !rl_field_get(f, "name"))
		return 0;
	if (fl->npast == fl->cappast) {
		size_t cap = fl->cappast ? 2 * fl->cappast : 256;
		struct past *v = realloc(fl->past, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		fl->past = v, fl->cappast = cap;
	}
	p = &fl->past[fl->npast++];
	p->uuid = strtab_intern(&fl->strings, rl_field_get(f, "gpu_uuid"));
	p->name = strtab_intern(&fl->strings, rl_field_get(f, "name"));
	p->driver = intern_or_null(fl, rl_field_get(f, "last_driver"));
	p->n = (long)rl_field_double(f, "n", 0);
	p->median = rl_field_double(f, "median", NAN);
	p->sd = rl_field_double(f, "sd", 0);
	return p->uuid && p->name && !fl->out_of_memory ? 0 : -ENOMEM;
}

/* One pass over the inputs (2,000 nodes' records, sweeps included, at a
 * large facility): the ceilings, the run's night and the history. */
static int read_input(void *arg, const char *step, const char *kind,
		      const struct rl_field *f)
{
	if (!strcmp(kind, "ceiling"))
		return read_ceiling(arg, step, kind, f);
	return read_history(arg, step, kind, f);
}

static int cmp_past(const void *a, const void *b)
{
	const struct past *x = a, *y = b;
	int c = strtab_cmp(x->uuid, y->uuid);

	return c ? c : strtab_cmp(x->name, y->name);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* Whether two figures are compared with each other: same model, ceiling,
 * mode and link. */
static int cmp_group(const struct figure *x, const struct figure *y)
{
	int c = strtab_cmp(x->model, y->model);

	if (!c)
		c = strtab_cmp(x->name, y->name);
	if (!c)
		c = strtab_cmp(x->mode, y->mode);
	return c ? c : strcmp(or_empty(x->link), or_empty(y->link));
}

/* By group, UUID, then peer: a group's figures are a run. */
static int cmp_figure(const void *a, const void *b)
{
	const struct figure *x = a, *y = b;
	int c = cmp_group(x, y);

	if (!c)
		c = strtab_cmp(x->uuid, y->uuid);
	return c ? c : strcmp(or_empty(x->peer), or_empty(y->peer));
}

/* An index into a group of figures, for sorting their drivers. */
struct driver_at {
	const char *driver;
	size_t i;
};

static int cmp_driver_at(const void *a, const void *b)
{
	const struct driver_at *x = a, *y = b;
	int c = strtab_cmp(x->driver, y->driver);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The most common driver among fig[0..n) (borrowed), NULL when none; of
 * drivers as common, the one that comes first.  by must hold n entries. */
static const char *common_driver(const struct figure *fig, size_t n,
				 struct driver_at *by)
{
	size_t m = 0, best_n = 0, best_i = 0;
	const char *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (fig[i].driver)
			by[m].driver = fig[i].driver, by[m++].i = i;
	qsort(by, m, sizeof(*by), cmp_driver_at);
	for (size_t s = 0, e; s < m; s = e) {
		for (e = s; e < m && !strcmp(by[e].driver, by[s].driver); e++)
			;
		/* by[s] is the driver's first figure */
		if (e - s > best_n || (e - s == best_n && by[s].i < best_i))
			best = fig[by[s].i].driver, best_n = e - s, best_i = by[s].i;
	}
	return best;
}

/* Fill each figure's fleet statistics and history. */
static int gather(struct fleet *fl)
{
	double *v = NULL, *scratch = NULL;
	struct driver_at *by = NULL;
	size_t start = 0;

	if (fl->nfig)
		qsort(fl->fig, fl->nfig, sizeof(*fl->fig), cmp_figure);
	if (fl->npast) /* NULL when there is no history yet */
		qsort(fl->past, fl->npast, sizeof(*fl->past), cmp_past);
	if (fl->nfig) {
		v = malloc(fl->nfig * sizeof(*v));
		scratch = malloc(fl->nfig * sizeof(*scratch));
		by = malloc(fl->nfig * sizeof(*by));
		if (!v || !scratch || !by) {
			free(v), free(scratch), free(by);
			return -ENOMEM;
		}
	}
	while (start < fl->nfig) {
		size_t end = start, n;
		double med, mad;
		const char *driver;

		while (end < fl->nfig && !cmp_group(&fl->fig[end], &fl->fig[start]))
			end++;
		n = end - start;
		for (size_t i = 0; i < n; i++)
			v[i] = fl->fig[start + i].value;
		med = judge_median(v, n);
		mad = judge_mad(v, n, med, scratch);
		driver = common_driver(&fl->fig[start], n, by);
		for (size_t i = start; i < end; i++) {
			struct past key = { .uuid = fl->fig[i].uuid,
					    .name = fl->fig[i].name };

			fl->fig[i].fleet_n = n;
			fl->fig[i].fleet_median = med;
			fl->fig[i].fleet_mad = mad;
			fl->fig[i].fleet_driver = driver;
			/* a GPU's history is of its own sequential figures
			 * (sql/019_p2p.sql) */
			bool own = !fl->fig[i].peer &&
				   !strcmp(fl->fig[i].mode, "sequential");

			fl->fig[i].past = fl->npast && own ? bsearch(&key, fl->past,
						fl->npast, sizeof(*fl->past), cmp_past) : NULL;
		}
		start = end;
	}
	free(v);
	free(scratch);
	free(by);
	return 0;
}

/* NVML's clocks-event (throttle) reasons, as far as they explain a drop. */
static void throttle_names(const char *hex, char *buf, size_t size)
{
	static const struct { unsigned long bit; const char *name; } r[] = {
		{ 0x2, "applications clocks" }, { 0x4, "software power cap" },
		{ 0x8, "hardware slowdown" }, { 0x20, "software thermal" },
		{ 0x40, "hardware thermal" }, { 0x80, "power brake" },
	};
	unsigned long bits = strtoul(hex, NULL, 0);
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]) && len < size; i++)
		if (bits & r[i].bit)
			len += (size_t)snprintf(buf + len, size - len, "%s%s",
						len ? ", " : "", r[i].name);
}

static void add_cause(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add_cause(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len && len + 2 < size)
		strcpy(buf + len, "; "), len += 2;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* What the records say could explain a drop ("" when nothing). */
static void likely_cause(const struct figure *g, char *buf, size_t size)
{
	char names[160];

	buf[0] = '\0';
	if (g->sm_clock > 0 && g->sm_clock_max > 0 &&
	    g->sm_clock < 0.99 * g->sm_clock_max)
		add_cause(buf, size, "SM clock %.0f MHz, below its maximum %.0f MHz",
			  g->sm_clock, g->sm_clock_max);
	if (g->throttle) {
		throttle_names(g->throttle, names, sizeof(names));
		if (names[0])
			add_cause(buf, size, "clocks held back: %s (%s)", names,
				  g->throttle);
	}
	if (g->power_w > 0 && g->throttle && strtoul(g->throttle, NULL, 0) & 0x84)
		add_cause(buf, size, "power %.0f W", g->power_w);
	if (g->temp_c >= 85)
		add_cause(buf, size, "temperature %.0f C", g->temp_c);
	if (g->ecc && strcmp(g->ecc, "0"))
		add_cause(buf, size, "ECC errors: %s", g->ecc);
	if (g->driver && g->past && g->past->driver &&
	    strcmp(g->driver, g->past->driver))
		add_cause(buf, size, "driver changed from %s to %s",
			  g->past->driver, g->driver);
	else if (g->driver && g->fleet_driver && g->fleet_n > 1 &&
		 strcmp(g->driver, g->fleet_driver))
		add_cause(buf, size, "driver %s, the fleet's is %s", g->driver,
			  g->fleet_driver);
}

#define FMT(buf, fmt, x) (snprintf(buf, sizeof(buf), fmt, x), buf)

static int emit_finding(struct rl_ctx *ctx, const struct fleet *fl,
			const struct figure *g, const struct judge_ceiling_in *in,
			const struct judge_verdict *v)
{
	char value[32], ref[32], drop[32], thr[32], noise[32], fn[32], fmed[32],
	     fmad[32], hn[32], hmean[32], hsd[32], tsd[32], cause[512];

	likely_cause(g, cause, sizeof(cause));
	rl_warn(ctx, "%s %s gpu %s (%s): %s %.1f %% below %s (threshold %.1f %%)%s%s",
		g->node ? g->node : "?", g->name, g->index ? g->index : "?",
		g->uuid, v->class, v->drop_pct,
		strcmp(v->class, "fleet outlier") ? "its own history" : "the fleet's median",
		v->threshold_pct, cause[0] ? ": " : "", cause);
	return rl_emit(ctx, "finding", (const struct rl_field[]){
		{ "scope", "gpu" }, { "subject", g->uuid }, { "measure", g->name },
		{ "class", v->class }, { "severity", v->critical ? "critical" : "warning" },
		{ "night", fl->night ? fl->night : "" },
		{ "node", g->node ? g->node : "" },
		{ "gpu_index", g->index ? g->index : "" },
		{ "gpu_uuid", g->uuid }, { "gpu_name", g->model },
		{ "unit", g->unit ? g->unit : "" },
		{ "value", FMT(value, "%.17g", g->value) },
		{ "reference", FMT(ref, "%.17g", v->reference) },
		{ "drop_pct", FMT(drop, "%.4f", v->drop_pct) },
		{ "threshold_pct", FMT(thr, "%.4f", v->threshold_pct) },
		{ "noise_pct", FMT(noise, "%.4f", v->noise_pct) },
		{ "cause", cause },
		{ "fleet_n", FMT(fn, "%zu", in->fleet_n) },
		{ "fleet_median", FMT(fmed, "%.17g", in->fleet_median) },
		{ "fleet_mad", FMT(fmad, "%.17g", in->fleet_mad) },
		{ "history_n", FMT(hn, "%ld", in->hist_n) },
		{ "history_median", in->hist_n ? FMT(hmean, "%.17g", in->hist_median) : "" },
		{ "history_sd", in->hist_n ? FMT(hsd, "%.17g", in->hist_sd) : "" },
		{ "trial_sd_pct", FMT(tsd, "%.4f", in->trial_sd_pct) },
		{ "synthetic", g->synthetic ? g->synthetic : "" },
		{ "mode", g->mode },
		{ "peer_index", or_empty(g->peer) },
		{ "link", or_empty(g->link) },
		{ NULL, NULL } });
}

/* One (GPU, ceiling) judged: what the fleet views draw (docs/charts.md,
 * docs/fleet.md "Tonight at 8,000 GPUs"); fleet_threshold_pct is the band
 * the fleet comparison used ("" when the model had too few GPUs). */
static int emit_gpu(struct rl_ctx *ctx, const struct figure *g,
		    const struct judge_verdict *v)
{
	char value[32], med[32], pct[32], thr[32];

	return rl_emit(ctx, "fleet_gpu", (const struct rl_field[]){
		{ "node", g->node ? g->node : "" },
		{ "gpu_index", g->index ? g->index : "" },
		{ "gpu_uuid", g->uuid }, { "gpu_name", g->model },
		{ "ceiling", g->name },
		{ "value", FMT(value, "%.17g", g->value) },
		{ "fleet_median", FMT(med, "%.17g", g->fleet_median) },
		{ "pct_of_median", FMT(pct, "%.3f", 100 * g->value / g->fleet_median) },
		{ "flagged", v->flagged ? "1" : "0" },
		{ "threshold_pct", isfinite(v->fleet_threshold_pct)
			? FMT(thr, "%.4f", v->fleet_threshold_pct) : "" },
		{ "synthetic", g->synthetic ? g->synthetic : "" },
		{ "mode", g->mode },
		{ "peer_index", or_empty(g->peer) },
		{ "link", or_empty(g->link) },
		{ NULL, NULL } });
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* How many GPUs (UUIDs) and models fig[0..n) hold; fig is sorted by model
 * (gather).  0 or -ENOMEM. */
static int count_distinct(const struct figure *fig, size_t n, size_t *gpus,
			  size_t *models)
{
	const char **v = n ? malloc(n * sizeof(*v)) : NULL;

	*gpus = *models = 0;
	if (n && !v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i] = fig[i].uuid;
		*models += i == 0 || strcmp(fig[i].model, fig[i - 1].model);
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++)
		*gpus += i == 0 || strcmp(v[i], v[i - 1]);
	free(v);
	return 0;
}

static int judge_all(struct rl_ctx *ctx, struct fleet *fl)
{
	const struct fleet_config *cfg = fl->cfg;
	struct judge_params p = { cfg->k, cfg->floor_pct, cfg->min_fleet,
				  cfg->min_history };
	char a[32], b[32], c[32], d[32];
	size_t flagged = 0, gpus, models;
	int rc = count_distinct(fl->fig, fl->nfig, &gpus, &models);

	for (size_t i = 0; i < fl->nfig && rc == 0; i++) {
		const struct figure *g = &fl->fig[i];
		struct judge_ceiling_in in = {
			.value = g->value,
			.trial_sd_pct = judge_trial_sd_pct(g->spread_pct, g->trials),
			.fleet_n = g->fleet_n, .fleet_median = g->fleet_median,
			.fleet_mad = g->fleet_mad,
			.hist_n = g->past ? g->past->n : 0,
			.hist_median = g->past ? g->past->median : NAN,
			.hist_sd = g->past ? g->past->sd : 0,
		};
		struct judge_verdict v;

		judge_ceiling(&p, &in, &v);
		if (v.flagged) {
			flagged++;
			rc = emit_finding(ctx, fl, g, &in, &v);
		}
		if (rc == 0)
			rc = emit_gpu(ctx, g, &v);
	}
	if (rc)
		return rc;
	rl_info(ctx, "%zu GPUs of %zu models, %zu figures judged, %zu flagged",
		gpus, models, fl->nfig, flagged);
	return rl_emit(ctx, "fleet_summary", (const struct rl_field[]){
		{ "gpus", FMT(a, "%zu", gpus) },
		{ "models", FMT(b, "%zu", models) },
		{ "judged", FMT(c, "%zu", fl->nfig) },
		{ "flagged", FMT(d, "%zu", flagged) },
		{ "night", fl->night ? fl->night : "" },
		{ NULL, NULL } });
}

static void fleet_release(struct fleet *fl)
{
	strtab_release(&fl->strings); /* every string of the figures and pasts */
	free(fl->fig);
	free(fl->past);
	free(fl->night);
}

static enum rl_result fleet_run(struct rl_ctx *ctx, const void *config,
				void *state)
{
	const struct fleet_config *cfg = config;
	struct fleet fl = { .cfg = cfg };
	enum rl_result res = RL_FAIL;
	int rc;

	(void)state;
	if (cfg->k <= 0 || cfg->floor_pct < 0 || cfg->min_fleet < 2 ||
	    cfg->min_history < 1 || cfg->nights < 1 ||
	    cfg->nights > FLEET_MAX_NIGHTS) {
		rl_error(ctx, "k must be > 0, floor_pct >= 0, min_fleet >= 2, "
			 "min_history >= 1 and nights between 1 and %d",
			 FLEET_MAX_NIGHTS);
		return RL_FAIL;
	}
	rc = rl_each_input(ctx, NULL, read_input, &fl);
	if (rc == 0 && fl.nfig == 0) {
		rl_error(ctx, "no measured ceiling among the inputs: nothing to judge");
		goto out;
	}
	if (rc == 0)
		rc = gather(&fl);
	if (rc == 0)
		rc = judge_all(ctx, &fl);
	if (rc)
		rl_error(ctx, "cannot judge the fleet: %s", strerror(rc < 0 ? -rc : rc));
	else
		res = RL_OK;
out:
	fleet_release(&fl);
	return res;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "fleet",
	.version = "1.0",
	.stage = RL_STAGE_ANALYZE,
	.summary = "each GPU's ceilings against its model's fleet tonight and its own past nights: findings",
	.options = fleet_options,
	.config_size = sizeof(struct fleet_config),
	.run = fleet_run,
	.history = fleet_history,
};
