/* rp_model.c - see rp_model.h. */
#include "rp_model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "util.h"

const char *const rp_level_names[RP_LEVELS] = { "l1", "l2", "dram" };

#define GROW(arr, n, a)                                                   \
	do {                                                              \
		if ((n) == (a)) {                                         \
			(a) = (a) ? 2 * (a) : 16;                         \
			(arr) = xrealloc((arr), (a) * sizeof(*(arr)));    \
		}                                                         \
	} while (0)

void rp_model_init(struct rp_model *m)
{
	memset(m, 0, sizeof(*m));
	m->passes = -1;
}

static char *dup0(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* Replace *dst by a copy of s when s is set and *dst is not. */
static void keep_first(char **dst, const char *s)
{
	if (!*dst && s && *s)
		*dst = xstrdup(s);
}

static double num(const struct rl_field *f, const char *key, double dflt)
{
	const char *v = rl_field_get(f, key);
	double d;

	if (!v || util_parse_double(v, &d) < 0 || !isfinite(d))
		return dflt;
	return d;
}

static int level_of(const char *s)
{
	for (int i = 0; s && i < RP_LEVELS; i++)
		if (strcmp(s, rp_level_names[i]) == 0)
			return i;
	return -1;
}

static bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* The row for (step, kernel, precision, gpu), made when new.  Points come
 * grouped by kernel, so the last row is tried first. */
static struct rp_kernel *kernel_row(struct rp_model *m, const char *step,
				    const struct rl_field *f)
{
	const char *name = rl_field_get(f, "kernel");
	const char *prec = rl_field_get(f, "precision");
	const char *uuid = rl_field_get(f, "gpu_uuid");
	struct rp_kernel *k;

	for (size_t i = m->nk; i-- > 0;) {
		k = &m->k[i];
		if (same(k->name, name) && same(k->precision, prec) &&
		    same(k->step, step) && same(k->gpu_uuid, uuid))
			return k;
		if (m->nk - i > 64)
			break; /* far back: a new kernel, not worth a full scan */
	}
	GROW(m->k, m->nk, m->ak);
	k = &m->k[m->nk++];
	memset(k, 0, sizeof(*k));
	k->step = xstrdup(step);
	k->name = xstrdup(name);
	k->precision = xstrdup(prec);
	k->gpu_uuid = dup0(uuid);
	k->gpu_name = dup0(rl_field_get(f, "gpu_name"));
	k->node = dup0(rl_field_get(f, "node"));
	k->bound_level = dup0(rl_field_get(f, "bound_level"));
	k->bound_ceiling = dup0(rl_field_get(f, "bound_ceiling"));
	k->verdict = dup0(rl_field_get(f, "verdict"));
	k->caveat = dup0(rl_field_get(f, "caveat"));
	k->gflops = num(f, "gflops", 0);
	k->pct_of_bound = num(f, "pct_of_bound", -1);
	k->alpha = num(f, "alpha", -1);
	k->compute_gflops = num(f, "compute_gflops", 0);
	k->partial_fma_gflops = num(f, "partial_fma_gflops", 0);
	k->share_pct = num(f, "share_pct", -1);
	k->primary = num(f, "primary", 0) == 1;
	return k;
}

static void take_point(struct rp_model *m, const char *step,
		       const struct rl_field *f)
{
	const char *inv = rl_field_get(f, "invocation");
	int lv = level_of(rl_field_get(f, "level"));
	double ai = num(f, "ai", -1), gf = num(f, "gflops", -1);
	struct rp_kernel *k;

	if (inv && strcmp(inv, "all") != 0)
		return;
	if (lv < 0 || !rl_field_get(f, "kernel") || !rl_field_get(f, "precision") ||
	    ai <= 0 || gf <= 0) {
		m->skipped++;
		return;
	}
	k = kernel_row(m, step, f);
	k->ai[lv] = ai;
	k->has_ai[lv] = true;
}

/* What a roof without role/precision/level fields is, by its name (as the
 * gnuplot plugin reads them): fp64_fma -> fp64 peak, fp64_add -> fp64
 * no_fma, tc_fp16 -> tc_fp16 peak, l1/shared -> l1, l2, hbm_ and dram ->
 * dram. */
static void roof_by_name(struct rp_roof *r)
{
	const char *u = strchr(r->name, '_');
	size_t n = strlen(r->name);

	if (!r->level && (strcmp(r->name, "l1") == 0 || strcmp(r->name, "shared") == 0))
		r->level = xstrdup("l1");
	else if (!r->level && strcmp(r->name, "l2") == 0)
		r->level = xstrdup("l2");
	else if (!r->level && (strncmp(r->name, "hbm", 3) == 0 || strncmp(r->name, "dram", 4) == 0))
		r->level = xstrdup("dram");
	if (r->level) {
		if (!r->kind)
			r->kind = xstrdup("bandwidth");
		return;
	}
	if (!r->kind)
		r->kind = xstrdup("compute");
	if (strncmp(r->name, "tc_", 3) == 0) {
		if (!r->precision)
			r->precision = xstrdup(r->name);
		if (!r->role)
			r->role = xstrdup("peak");
		return;
	}
	if (!r->precision && u)
		r->precision = xstrndup(r->name, (size_t)(u - r->name));
	if (!r->role && n > 4)
		r->role = xstrdup(strcmp(r->name + n - 4, "_fma") == 0 ? "peak"
				  : strcmp(r->name + n - 4, "_add") == 0 ? "no_fma" : "other");
}

static void take_roof(struct rp_model *m, const struct rl_field *f)
{
	const char *unit = rl_field_get(f, "unit");
	struct rp_roof *r;
	double v = num(f, "value", 0);

	if (v <= 0 || !rl_field_get(f, "name"))
		return;
	/* base units (FLOP/s, B/s, OP/s) to the page's giga units */
	if (unit && (strcmp(unit, "FLOP/s") == 0 || strcmp(unit, "B/s") == 0 ||
		     strcmp(unit, "OP/s") == 0))
		v /= 1e9;
	GROW(m->roofs, m->nroofs, m->aroofs);
	r = &m->roofs[m->nroofs++];
	r->name = xstrdup(rl_field_get(f, "name"));
	r->kind = dup0(rl_field_get(f, "kind"));
	r->role = dup0(rl_field_get(f, "role"));
	r->precision = dup0(rl_field_get(f, "precision"));
	r->level = dup0(rl_field_get(f, "level"));
	r->method = dup0(rl_field_get(f, "method"));
	r->gpu_uuid = dup0(rl_field_get(f, "gpu_uuid"));
	r->value = v;
	roof_by_name(r);
}

/* "ceilings@rl-node2" -> "rl-node2"; NULL without '@'. */
static const char *node_of_step(const char *step)
{
	const char *at = step ? strchr(step, '@') : NULL;

	return at ? at + 1 : NULL;
}

static void take_ceiling(struct rp_model *m, const char *step,
			 const struct rl_field *f)
{
	const char *name = rl_field_get(f, "name");
	const char *uuid = rl_field_get(f, "gpu_uuid");
	const char *method = rl_field_get(f, "method");
	bool theo = method && strcmp(method, "theoretical") == 0;
	double v = num(f, "value", 0);
	struct rp_ceiling *c = NULL;

	if (!name || v <= 0)
		return;
	for (size_t i = 0; i < m->nceil && !c; i++)
		if (same(m->ceil[i].name, name) && same(m->ceil[i].gpu_uuid, uuid))
			c = &m->ceil[i];
	if (!c) {
		const char *node = rl_field_get(f, "node");

		GROW(m->ceil, m->nceil, m->aceil);
		c = &m->ceil[m->nceil++];
		memset(c, 0, sizeof(*c));
		c->name = xstrdup(name);
		c->gpu_uuid = dup0(uuid);
		c->spread_pct = -1;
		c->node = dup0(node && *node ? node : node_of_step(step));
	}
	keep_first(&c->kind, rl_field_get(f, "kind"));
	keep_first(&c->gpu_name, rl_field_get(f, "gpu_name"));
	keep_first(&c->unit, rl_field_get(f, "unit"));
	keep_first(&c->driver, rl_field_get(f, "driver"));
	keep_first(&c->cuda, rl_field_get(f, "cuda"));
	if (theo) {
		c->theoretical = v;
		return;
	}
	c->measured = v;
	c->spread_pct = num(f, "spread_pct", -1);
	c->sm_clock_mhz = num(f, "sm_clock_mhz", 0);
	c->mem_clock_mhz = num(f, "mem_clock_mhz", 0);
	keep_first(&c->synthetic, rl_field_get(f, "synthetic"));
}

/* "--clock-control none" in the ncu command line -> "none". */
static void take_summary(struct rp_model *m, const struct rl_field *f)
{
	const char *cmd = rl_field_get(f, "command");
	const char *cc = cmd ? strstr(cmd, "--clock-control") : NULL;
	double passes = num(f, "passes", -1);

	if (cc && !m->clock_control) {
		cc += strlen("--clock-control");
		cc += strspn(cc, " =");
		m->clock_control = xstrndup(cc, strcspn(cc, " "));
	}
	if (passes > m->passes)
		m->passes = (long)passes;
	keep_first(&m->collect_source, rl_field_get(f, "source"));
}

static void take_kernel(struct rp_model *m, const char *step,
			const struct rl_field *f)
{
	double passes = num(f, "profiler__replayer_passes", -1);

	keep_first(&m->profile_step, step);
	keep_first(&m->ncu_version, rl_field_get(f, "ncu_version"));
	keep_first(&m->collect_source, rl_field_get(f, "source"));
	keep_first(&m->collect_file, rl_field_get(f, "file"));
	if (passes > m->passes)
		m->passes = (long)passes;
}

static void take_run(struct rp_model *m, const struct rl_field *f)
{
	keep_first(&m->run_id, rl_field_get(f, "id"));
	keep_first(&m->pipeline, rl_field_get(f, "pipeline"));
	keep_first(&m->owner, rl_field_get(f, "owner"));
	keep_first(&m->submitted, rl_field_get(f, "submitted_at"));
	keep_first(&m->started, rl_field_get(f, "started_at"));
	keep_first(&m->trigger, rl_field_get(f, "trigger"));
}

static void take_step(struct rp_model *m, const struct rl_field *f)
{
	struct rp_step *s;

	GROW(m->steps, m->nsteps, m->asteps);
	s = &m->steps[m->nsteps++];
	s->step = dup0(rl_field_get(f, "step"));
	s->node = dup0(rl_field_get(f, "node"));
	s->plugin = dup0(rl_field_get(f, "plugin"));
	s->on = dup0(rl_field_get(f, "on"));
	s->state = dup0(rl_field_get(f, "state"));
	s->attempt = dup0(rl_field_get(f, "attempt"));
	s->slurm_job = dup0(rl_field_get(f, "slurm_job"));
	s->exec_node = dup0(rl_field_get(f, "exec_node"));
	s->started = dup0(rl_field_get(f, "started_at"));
	s->ended = dup0(rl_field_get(f, "ended_at"));
}

static void take_baseline(struct rp_model *m, const struct rl_field *f)
{
	const char *dir = rl_field_get(f, "dir");

	keep_first(&m->base_run, rl_field_get(f, "run"));
	keep_first(&m->base_when, rl_field_get(f, "submitted_at"));
	if (!dir)
		return;
	m->base_dirs = xrealloc(m->base_dirs, (m->nbase_dirs + 1) * sizeof(char *));
	m->base_dirs[m->nbase_dirs++] = xstrdup(dir);
}

int rp_model_take(void *arg, const char *step, const char *kind,
		  const struct rl_field *f)
{
	struct rp_model *m = arg;

	if (strcmp(kind, "point") == 0)
		take_point(m, step, f);
	else if (strcmp(kind, "roof") == 0)
		take_roof(m, f);
	else if (strcmp(kind, "ceiling") == 0)
		take_ceiling(m, step, f);
	else if (strcmp(kind, "collect_summary") == 0)
		take_summary(m, f);
	else if (strcmp(kind, "kernel") == 0)
		take_kernel(m, step, f);
	else if (strcmp(kind, "run") == 0)
		take_run(m, f);
	else if (strcmp(kind, "run_step") == 0)
		take_step(m, f);
	else if (strcmp(kind, "baseline") == 0)
		take_baseline(m, f);
	else if (strcmp(kind, "ipoint") == 0)
		rp_instr_take(&m->instr, f);
	return 0;
}

/* ---- finishing ------------------------------------------------------------ */

/* Kernels without a primary-marked precision: their first row is primary. */
static void pick_primary(struct rp_model *m)
{
	for (size_t i = 0; i < m->nk; i++) {
		bool any = false;

		for (size_t j = 0; j < m->nk && !any; j++)
			any = m->k[j].primary && same(m->k[j].name, m->k[i].name) &&
			      same(m->k[j].step, m->k[i].step) &&
			      same(m->k[j].gpu_uuid, m->k[i].gpu_uuid);
		if (!any)
			m->k[i].primary = true;
	}
}

/* Tensor share of each primary row: the share_pct of its kernel's tc_* rows.
 * A kernel's rows are adjacent (points come grouped), so look nearby. */
static void tensor_shares(struct rp_model *m)
{
	for (size_t i = 0; i < m->nk; i++) {
		struct rp_kernel *k = &m->k[i];
		size_t lo = i > 16 ? i - 16 : 0, hi = i + 16 < m->nk ? i + 16 : m->nk;

		if (!k->primary)
			continue;
		for (size_t j = lo; j < hi; j++) {
			const struct rp_kernel *o = &m->k[j];

			if (strncmp(o->precision, "tc_", 3) == 0 && o->share_pct > 0 &&
			    same(o->name, k->name) && same(o->step, k->step) &&
			    same(o->gpu_uuid, k->gpu_uuid))
				k->tensor_share += o->share_pct;
		}
	}
}

struct base_arg {
	struct rp_model *m;
};

static int take_base_point(void *arg, const char *kind, const struct rl_field *f)
{
	struct rp_model *m = ((struct base_arg *)arg)->m;
	const char *inv = rl_field_get(f, "invocation");
	const char *name = rl_field_get(f, "kernel"), *prec = rl_field_get(f, "precision");
	int lv = level_of(rl_field_get(f, "level"));
	struct rp_base *b = NULL;

	(void)kind;
	if ((inv && strcmp(inv, "all") != 0) || num(f, "primary", 0) != 1 ||
	    !name || !prec || lv < 0)
		return 0;
	if (m->nbase && same(m->base[m->nbase - 1].name, name) &&
	    same(m->base[m->nbase - 1].precision, prec))
		b = &m->base[m->nbase - 1];
	if (!b) {
		GROW(m->base, m->nbase, m->abase);
		b = &m->base[m->nbase++];
		memset(b, 0, sizeof(*b));
		b->name = xstrdup(name);
		b->precision = xstrdup(prec);
		b->gflops = num(f, "gflops", 0);
	}
	b->ai[lv] = num(f, "ai", 0);
	b->has_ai[lv] = b->ai[lv] > 0;
	return 0;
}

int rp_model_finish(struct rp_model *m)
{
	int n = 0;

	pick_primary(m);
	tensor_shares(m);
	for (size_t i = 0; i < m->nk; i++)
		if (m->k[i].primary)
			m->k[i].number = ++n;
	m->nprimary = (size_t)n;
	for (size_t i = 0; i < m->nbase_dirs; i++) {
		struct base_arg a = { m };
		char *path = xasprintf("%s/records.tsv", m->base_dirs[i]);
		int rc = records_each(path, "point", take_base_point, &a, NULL);

		free(path);
		if (rc < 0 && rc != -ENOENT)
			return rc;
	}
	return 0;
}

const struct rp_base *rp_model_base_of(const struct rp_model *m,
				       const struct rp_kernel *k)
{
	for (size_t i = 0; i < m->nbase; i++)
		if (same(m->base[i].name, k->name) &&
		    same(m->base[i].precision, k->precision))
			return &m->base[i];
	return NULL;
}

double rp_model_compute_roof(const struct rp_model *m, const char *precision,
			     const char *role)
{
	for (size_t i = 0; i < m->nroofs; i++)
		if (same(m->roofs[i].kind, "compute") &&
		    same(m->roofs[i].precision, precision) &&
		    same(m->roofs[i].role, role))
			return m->roofs[i].value;
	return 0;
}

/* ---- release ----------------------------------------------------------------- */

static void free_kernel(struct rp_kernel *k)
{
	free(k->step); free(k->name); free(k->precision); free(k->gpu_uuid);
	free(k->gpu_name); free(k->node); free(k->bound_level);
	free(k->bound_ceiling); free(k->verdict); free(k->caveat);
}

static void free_roof(struct rp_roof *r)
{
	free(r->name); free(r->kind); free(r->role); free(r->precision);
	free(r->level); free(r->method); free(r->gpu_uuid);
}

static void free_ceiling(struct rp_ceiling *c)
{
	free(c->name); free(c->kind); free(c->gpu_uuid); free(c->gpu_name);
	free(c->node); free(c->unit); free(c->synthetic); free(c->driver);
	free(c->cuda);
}

static void free_step(struct rp_step *s)
{
	free(s->step); free(s->node); free(s->plugin); free(s->on); free(s->state);
	free(s->attempt); free(s->slurm_job); free(s->exec_node);
	free(s->started); free(s->ended);
}

void rp_model_release(struct rp_model *m)
{
	rp_instr_release(&m->instr);
	for (size_t i = 0; i < m->nk; i++)
		free_kernel(&m->k[i]);
	for (size_t i = 0; i < m->nroofs; i++)
		free_roof(&m->roofs[i]);
	for (size_t i = 0; i < m->nceil; i++)
		free_ceiling(&m->ceil[i]);
	for (size_t i = 0; i < m->nsteps; i++)
		free_step(&m->steps[i]);
	for (size_t i = 0; i < m->nbase; i++) {
		free(m->base[i].name);
		free(m->base[i].precision);
	}
	for (size_t i = 0; i < m->nbase_dirs; i++)
		free(m->base_dirs[i]);
	free(m->k); free(m->roofs); free(m->ceil); free(m->steps); free(m->base);
	free(m->base_dirs);
	free(m->run_id); free(m->pipeline); free(m->owner); free(m->submitted);
	free(m->started); free(m->trigger); free(m->ncu_version);
	free(m->collect_source); free(m->collect_file); free(m->clock_control);
	free(m->profile_step); free(m->base_run); free(m->base_when);
	rp_model_init(m);
}
