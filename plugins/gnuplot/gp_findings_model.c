/*
 * gp_findings_model.c - the findings' records read into the chart model:
 * the fleet tonight, a GPU over the nights, a trajectory's last step.  See
 * gp_findings_model.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_findings_model.h"
#include "gp_text.h"

/* ---- reading ---------------------------------------------------------------- */

static char *dup_field(const struct rl_field *f, const char *key)
{
	const char *v = rl_field_get(f, key);

	return strdup(v ? v : "");
}

static double field_num(const struct rl_field *f, const char *key)
{
	double v;

	return gp_text_parse_num(rl_field_get(f, key), &v) ? v : NAN;
}

/* "rl-node2/1": a GPU's label (its UUID when the node is unknown). */
static size_t gpu_index_of(struct gp_chart *c, const struct rl_field *f)
{
	const char *node = rl_field_get(f, "node"), *idx = rl_field_get(f, "gpu_index");
	const char *uuid = rl_field_get(f, "gpu_uuid");
	char label[256];

	if (node && *node)
		snprintf(label, sizeof(label), "%s/%s", node, idx && *idx ? idx : "?");
	else
		snprintf(label, sizeof(label), "%s", uuid && *uuid ? uuid : "?");
	return gp_strtab_index(&c->gpus, label);
}

/* units[had .. ceilings.n): one per ceiling, kept from its first row
 * ("" when the row has none: the fleet's). */
static int grow_units(struct gp_chart *c, size_t had, const char *unit)
{
	char **u = realloc(c->units, (c->ceilings.n + 1) * sizeof(*u));

	if (!u)
		return -ENOMEM;
	c->units = u;
	for (size_t i = had; i < c->ceilings.n; i++)
		u[i] = NULL;
	for (size_t i = had; i < c->ceilings.n; i++)
		if (!(u[i] = strdup(unit ? unit : "")))
			return -ENOMEM;
	return 0;
}

static int take_row(struct gp_chart *c, int mode, const struct rl_field *f)
{
	const char *ceiling = rl_field_get(f, "ceiling");
	struct gp_gpurow r = { .mode = mode };
	size_t had = c->ceilings.n;
	void *v;

	r.value = field_num(f, "value");
	r.median = field_num(f, "fleet_median");
	r.pct = mode == GP_FLEET ? field_num(f, "pct_of_median") : NAN;
	r.lo = field_num(f, "fleet_min");
	r.hi = field_num(f, "fleet_max");
	r.thr = field_num(f, "threshold_pct");
	r.flagged = rl_field_get(f, "flagged") && strcmp(rl_field_get(f, "flagged"), "1") == 0;
	if (!ceiling || !*ceiling || !isfinite(mode == GP_FLEET ? r.pct : r.value) ||
	    (mode == GP_GPU_HISTORY && !gp_text_parse_time(rl_field_get(f, "night"), &r.t))) {
		c->skipped++;
		return 0;
	}
	r.gpu = gpu_index_of(c, f);
	r.ceiling = gp_strtab_index(&c->ceilings, ceiling);
	r.model = gp_strtab_index(&c->models, rl_field_get(f, "gpu_name") ? rl_field_get(f, "gpu_name") : "?");
	if (r.gpu == GP_NONE || r.ceiling == GP_NONE || r.model == GP_NONE)
		return -ENOMEM;
	if (c->ceilings.n > had && grow_units(c, had, rl_field_get(f, "unit")) < 0)
		return -ENOMEM;
	if (!c->gpu_name && rl_field_get(f, "gpu_name") && !(c->gpu_name = dup_field(f, "gpu_name")))
		return -ENOMEM;
	if (mode == GP_GPU_HISTORY && !c->uuid && !(c->uuid = dup_field(f, "gpu_uuid")))
		return -ENOMEM;
	v = gp_push(c->rows, &c->nrows, &c->cap_rows, sizeof(r), &r);
	if (!v)
		return -ENOMEM;
	c->rows = v;
	return 0;
}

static int take_step(struct gp_chart *c, const struct rl_field *f)
{
	struct gp_step *s = c->step;

	if (!s && !(s = c->step = calloc(1, sizeof(*s))))
		return -ENOMEM;
	free(s->kernel), free(s->from), free(s->to), free(s->class), free(s->levels);
	s->kernel = dup_field(f, "kernel");
	s->from = dup_field(f, "from");
	s->to = dup_field(f, "to");
	s->class = dup_field(f, "class");
	s->levels = dup_field(f, "levels");
	s->ai_change = field_num(f, "ai_change_pct");
	s->gflops_change = field_num(f, "gflops_change_pct");
	return s->kernel && s->from && s->to && s->class && s->levels ? 0 : -ENOMEM;
}

int gp_findings_take(struct gp_chart *c, const char *kind, const struct rl_field *f)
{
	if (strcmp(kind, "fleet_gpu") == 0)
		return take_row(c, GP_FLEET, f);
	if (strcmp(kind, "gpu_night") == 0)
		return take_row(c, GP_GPU_HISTORY, f);
	if (strcmp(kind, "trajectory_step") == 0)
		return take_step(c, f);
	if (strcmp(kind, "fleet_summary") == 0 && !c->night && rl_field_get(f, "night"))
		return (c->night = dup_field(f, "night")) ? 0 : -ENOMEM;
	return 0;
}

size_t gp_findings_rows(const struct gp_chart *c, int mode)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nrows; i++)
		n += c->rows[i].mode == mode;
	return n;
}

static bool wanted(const struct gp_chart *c, const struct gp_gpurow *r)
{
	const struct rl_strlist *l = &c->cfg->ceilings;

	if (r->mode != c->mode)
		return false;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], c->ceilings.v[r->ceiling]) == 0)
			return true;
	return l->n == 0;
}

int gp_findings_check(struct gp_chart *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->nrows; i++)
		if (wanted(c, &c->rows[i]))
			c->rows[k++] = c->rows[i];
	c->nrows = k;
	if (k)
		return 0;
	rl_error(c->ctx, "nothing to draw: no usable `%s` record%s in the inputs (%ld unusable)",
		 c->mode == GP_FLEET ? "fleet_gpu" : "gpu_night",
		 c->cfg->ceilings.n ? " of the ceilings asked for" : "", c->skipped);
	return -ENODATA;
}

void gp_findings_release(struct gp_chart *c)
{
	for (size_t i = 0; c->units && i < c->ceilings.n; i++)
		free(c->units[i]); /* grown with ceilings, or NULL: see grow_units */
	free(c->units);
	free(c->rows);
	free(c->night);
	free(c->uuid);
	if (c->step) {
		free(c->step->kernel), free(c->step->from), free(c->step->to);
		free(c->step->class), free(c->step->levels);
	}
	free(c->step);
}

/* Compute ceilings first (CUDA cores, then tensor), then memory, top down;
 * names not listed after them, alphabetically. */
int gp_findings_ceiling_rank(const char *name)
{
	static const char *const order[] = {
		"fp64_fma", "fp64_add", "fp32_fma", "fp32_add", "fp16_fma", "fp16_add",
		"tc_fp64", "tc_tf32", "tc_fp16", "tc_bf16", "tc_fp8", "tc_int8",
		"l1", "shared", "l2", "hbm_triad", "hbm_read", "hbm_write", "hbm", "dram",
	};
	int n = (int)(sizeof(order) / sizeof(order[0]));
	int i = gp_name_index(order, n, name);

	return i < 0 ? n : i;
}
