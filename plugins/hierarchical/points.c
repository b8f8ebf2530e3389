/* points.c - see points.h. */
#include "hierarchical/points.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

const struct prec_info points_precs[N_PREC] = {
	{ "fp64", { RLM_DP_ADD, RLM_DP_MUL, RLM_DP_FMA }, "fp64_fma", "fp64_add" },
	{ "fp32", { RLM_SP_ADD, RLM_SP_MUL, RLM_SP_FMA }, "fp32_fma", "fp32_add" },
	{ "fp16", { RLM_HP_ADD, RLM_HP_MUL, RLM_HP_FMA }, "fp16_fma", "fp16_add" },
	{ "tc_fp64", { RLM_TC_FP64, -1, -1 }, "tc_fp64", NULL },
	{ "tc_fp16", { RLM_TC_FP16, -1, -1 }, "tc_fp16", NULL },
	{ "tc_bf16", { RLM_TC_BF16, -1, -1 }, "tc_bf16", NULL },
	{ "tc_tf32", { RLM_TC_TF32, -1, -1 }, "tc_tf32", NULL },
	{ "tc_fp8", { RLM_TC_FP8, -1, -1 }, "tc_fp8", NULL },
	{ "tc_int8", { RLM_TC_INT8, -1, -1 }, "tc_int8", NULL },
};

/* ---- record building ------------------------------------------------------------ */

/* Append to a message buffer, truncating. */
void points_cat(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* A record under construction: its fields and the text of its numbers. */
#define FB_MAX 48
#define FB_TEXT 1536
struct fb {
	struct rl_field f[FB_MAX];
	size_t n, used;
	char text[FB_TEXT];
};

static void fb_str(struct fb *b, const char *key, const char *value)
{
	if (!value || b->n + 1 >= FB_MAX)
		return;
	b->f[b->n++] = (struct rl_field){ key, value };
	b->f[b->n] = (struct rl_field){ NULL, NULL };
}

/* A number as %.15g would print it; left out when not finite (undefined).
 * Whole numbers under 1e15 (counts, bytes) skip printf's conversion. */
static void fb_num(struct fb *b, const char *key, double d)
{
	char *out = b->text + b->used, digits[24];
	size_t room = FB_TEXT - b->used;
	int len = 0;

	if (!isfinite(d))
		return;
	if (d >= 0 && d < 1e15 && d == (double)(uint64_t)d) {
		uint64_t v = (uint64_t)d;

		do
			digits[len++] = (char)('0' + v % 10);
		while (v /= 10);
		if ((size_t)len >= room)
			return;
		for (int i = 0; i < len; i++)
			out[i] = digits[len - 1 - i];
		out[len] = '\0';
	} else {
		len = snprintf(out, room, "%.15g", d);
		if (len < 0 || (size_t)len >= room)
			return;
	}
	fb_str(b, key, out);
	b->used += (size_t)len + 1;
}

static void fb_init(struct fb *b)
{
	b->n = b->used = 0;
	b->f[0] = (struct rl_field){ NULL, NULL };
}


/* ---- emitting ------------------------------------------------------------------- */

static int emit_roof(struct job *j, const struct rlm_gpu *g, const struct rlm_ceil *c,
		     const char *role, const char *what_key, const char *what)
{
	bool bw = strcmp(role, "bandwidth") == 0;
	char unit[32];
	struct fb b;

	fb_init(&b);
	snprintf(unit, sizeof(unit), "G%s", *c->unit ? c->unit : bw ? "B/s" : "FLOP/s");
	fb_str(&b, "gpu_name", g->name);
	fb_str(&b, "gpu_uuid", g->uuid);
	fb_str(&b, "gpu_index", g->index);
	fb_str(&b, "node", g->node);
	fb_str(&b, "cc", g->cc);
	fb_str(&b, "name", c->name);
	fb_str(&b, "kind", bw ? "bandwidth" : "compute");
	fb_str(&b, "role", role);
	fb_str(&b, what_key, what);
	fb_num(&b, "value", c->value / 1e9);
	fb_str(&b, "unit", unit);
	fb_str(&b, "method", c->method);
	j->n_roofs++;
	return rl_emit(j->ctx, "roof", b.f);
}

/* One roof record per ceiling a point uses, and the no-FMA ceilings. */
int points_emit_roofs(struct job *j)
{
	int rc = 0;

	for (size_t g = 0; !rc && g < j->gpus.n; g++) {
		const struct gpu_plan *gp = &j->gplan[g];
		const struct rlm_gpu *gpu = &j->gpus.v[g];

		for (int lv = 0; !rc && lv < RLM_LEVELS; lv++)
			if (gp->bw_used[lv])
				rc = emit_roof(j, gpu, gp->bw[lv], "bandwidth", "level",
					       roofline_math_level_name(lv));
		for (int p = 0; !rc && p < N_PREC; p++) {
			if (!gp->prec_used[p])
				continue;
			rc = emit_roof(j, gpu, gp->peak[p], "peak", "precision", points_precs[p].name);
			if (!rc && gp->nofma[p])
				rc = emit_roof(j, gpu, gp->nofma[p], "no_fma", "precision",
					       points_precs[p].name);
		}
	}
	return rc;
}

/* One precision (or the combined P_ALL) of one sample. */
struct pwork {
	bool ok;
	double flops, peak, partial, alpha, share;
	double inst[3];               /* add, mul, fma instructions (CUDA cores) */
	char ceiling[128];
	const char *method;
};

static void prec_work(const struct job *j, const struct rlm_kernel *k,
		      const struct rlm_sample *s, struct pwork *w, int p)
{
	const struct kplan *kp = &j->kplan[k->index];
	const struct rlm_ceil *c = j->gplan[kp->gpu].peak[p];

	memset(w, 0, sizeof(*w));
	w->alpha = NAN;
	w->flops = prec_flops(s, p);
	if (!(kp->prec_ok & (1u << p)) || !(w->flops > 0))
		return;
	w->ok = true;
	w->peak = c->value;
	w->partial = c->value;
	w->method = c->method;
	snprintf(w->ceiling, sizeof(w->ceiling), "%s", c->name);
	if (IS_TENSOR(p))
		return;
	for (int i = 0; i < 3; i++)
		w->inst[i] = s->sum[points_precs[p].role[i]] / k->arch->factor[points_precs[p].role[i]];
	w->alpha = roofline_math_alpha(w->inst[2], w->inst[0], w->inst[1]);
	w->partial = roofline_math_partial_fma(w->peak, w->alpha);
}

/* Shares of the time at the peaks, and the combined point from the others. */
static int combine(struct pwork *w, bool incomplete)
{
	double f[N_PREC], pk[N_PREC], pt[N_PREC], t = 0, fma = 0, inst = 0;
	struct pwork *all = &w[P_ALL];
	int primary = -1, n = 0;

	memset(all, 0, sizeof(*all));
	all->alpha = all->share = NAN;
	for (int p = 0; p < P_TC_INT8; p++) {
		f[p] = w[p].ok ? w[p].flops : 0;
		pk[p] = w[p].peak;
		pt[p] = w[p].partial;
		if (!w[p].ok)
			continue;
		t += w[p].flops / w[p].peak;
		all->flops += w[p].flops;
		fma += w[p].inst[2];
		inst += w[p].inst[0] + w[p].inst[1] + w[p].inst[2];
		points_cat(all->ceiling, sizeof(all->ceiling), "%s%s", n++ ? "+" : "", w[p].ceiling);
		all->method = !all->method || !strcmp(all->method, w[p].method) ?
			      w[p].method : "mixed";
	}
	for (int p = 0; p < P_TC_INT8; p++)
		if (w[p].ok) {
			w[p].share = w[p].flops / w[p].peak / t * 100;
			if (primary < 0 || w[p].share > w[primary].share)
				primary = p;
		}
	if (n && !incomplete) {
		all->ok = true;
		all->peak = roofline_math_mix_peak(f, pk, P_TC_INT8);
		all->partial = roofline_math_mix_peak(f, pt, P_TC_INT8);
		all->alpha = inst > 0 ? fma / inst : NAN;
	}
	if (w[P_TC_INT8].ok)
		w[P_TC_INT8].share = NAN; /* operations, not FLOPs: not in the mix */
	return primary;
}

/* The fields of one precision's points that no level changes, built once. */
static void common_fields(struct job *j, const struct rlm_kernel *k,
			  const struct rlm_sample *s, int prec, const struct pwork *w,
			  bool primary, const struct roofline_math_point *pt, struct fb *b)
{
	const struct kplan *kp = &j->kplan[k->index];
	const struct gpu_plan *gp = &j->gplan[kp->gpu];
	const struct rlm_gpu *g = &j->gpus.v[kp->gpu];
	int bl = pt->bound_level;

	fb_num(b, "flops", w->flops);
	fb_num(b, "time_s", s->time_s);
	fb_num(b, "gflops", pt->gflops);
	fb_str(b, "bound_level", roofline_math_level_name(bl));
	fb_str(b, "bound_ceiling", bl == RLM_COMPUTE ? w->ceiling : gp->bw[bl]->name);
	fb_num(b, "bound_gflops", pt->bound_gflops);
	fb_num(b, "pct_of_bound", pt->pct_of_bound);
	fb_str(b, "verdict", roofline_math_verdict_name(pt->verdict));
	fb_num(b, "alpha", w->alpha);
	if (isfinite(w->alpha)) {
		fb_num(b, "partial_fma_gflops", w->partial / 1e9);
		fb_num(b, "pct_of_partial_fma", pt->gflops / (w->partial / 1e9) * 100);
	}
	fb_str(b, "compute_ceiling", w->ceiling);
	fb_num(b, "compute_gflops", w->peak / 1e9);
	fb_str(b, "compute_method", w->method);
	fb_num(b, "share_pct", w->share);
	fb_str(b, "primary", primary ? "1" : "0");
	fb_str(b, "byte_definition", j->st->bytes_ncu ? "ncu" : "nersc");
	fb_str(b, "time_source", !s->n_cyc ? "duration" : !s->n_dur ? "cycles" : "mixed");
	fb_str(b, "gpu_name", *k->gpu_name ? k->gpu_name : g->name);
	fb_str(b, "gpu_uuid", g->uuid);
	fb_str(b, "gpu_index", *k->gpu_index ? k->gpu_index : g->index);
	fb_str(b, "node", *k->node ? k->node : g->node);
	fb_str(b, "rank", *k->rank ? k->rank : NULL);
	fb_str(b, "cc", *k->cc ? k->cc : g->cc);
	if ((prec == P_FP16 || prec == P_ALL) && kp->caveat_hfma)
		fb_str(b, "caveat", "hfma2.mma");
	if (kp->tensor_uncounted)
		fb_str(b, "tensor_uncounted", kp->uncounted);
}

/* The points of one precision of a sample, one per level. */
static int emit_prec(struct job *j, const struct rlm_kernel *k, const struct rlm_sample *s,
		     const char *invocation, int prec, const struct pwork *w, bool primary)
{
	const struct kplan *kp = &j->kplan[k->index];
	const struct gpu_plan *gp = &j->gplan[kp->gpu];
	struct roofline_math_in in = { .flops = w->flops, .time_s = s->time_s,
				       .peak = w->peak, .latency_pct = j->cfg->latency_pct };
	struct roofline_math_point pt;
	struct fb common, b;
	int rc = 0;

	for (int lv = 0; lv < RLM_LEVELS; lv++) {
		in.has_bytes[lv] = in.has_bw[lv] = kp->level_ok[lv];
		in.bytes[lv] = s->sum[byte_role(j, lv)];
		in.bw[lv] = kp->level_ok[lv] ? gp->bw[lv]->value : 0;
	}
	if (roofline_math_point(&in, &pt) < 0)
		return 0;
	fb_init(&common);
	common_fields(j, k, s, prec, w, primary, &pt, &common);
	for (int lv = 0; !rc && lv < RLM_LEVELS; lv++) {
		if (!pt.level_ok[lv])
			continue;
		fb_init(&b);
		fb_str(&b, "kernel", k->kernel);
		fb_str(&b, "invocation", invocation);
		fb_num(&b, "invocations", (double)s->n);
		fb_str(&b, "precision", prec == P_ALL ? "all" : points_precs[prec].name);
		fb_str(&b, "level", roofline_math_level_name(lv));
		fb_num(&b, "bytes", in.bytes[lv]);
		fb_num(&b, "ai", pt.ai[lv]);
		fb_num(&b, "roof_gflops", pt.roof_gflops[lv]);
		fb_num(&b, "pct_of_roof", pt.pct_of_roof[lv]);
		fb_str(&b, "bandwidth_ceiling", gp->bw[lv]->name);
		fb_num(&b, "bandwidth_gbs", gp->bw[lv]->value / 1e9);
		fb_str(&b, "bandwidth_method", gp->bw[lv]->method);
		for (size_t i = 0; i < common.n; i++)
			fb_str(&b, common.f[i].key, common.f[i].value);
		j->n_points++;
		rc = rl_emit(j->ctx, "point", b.f);
	}
	return rc;
}

/* Every point of one sample: the kernel's sums, or one invocation. */
int points_emit_sample(struct job *j, const struct rlm_kernel *k,
		       const struct rlm_sample *s, const char *invocation)
{
	struct pwork w[N_PREC + 1];
	int primary, rc = 0;

	if (!(s->time_s > 0))
		return 0;
	for (int p = 0; p < N_PREC; p++)
		prec_work(j, k, s, &w[p], p);
	primary = combine(w, j->kplan[k->index].incomplete);
	for (int p = 0; !rc && p <= P_ALL; p++) {
		if (!w[p].ok || !(j->st->prec_sel & (1u << p)))
			continue;
		rc = emit_prec(j, k, s, invocation, p, &w[p], p == primary);
	}
	return rc;
}


int points_emit_uncounted(struct job *j, const struct rlm_kernel *k)
{
	const struct kplan *kp = &j->kplan[k->index];
	const struct rlm_gpu *g = &j->gpus.v[kp->gpu];
	const struct rlm_sample *s = &k->s;
	struct fb b;

	fb_init(&b);
	fb_str(&b, "kernel", k->kernel);
	fb_str(&b, "invocation", "all");
	fb_num(&b, "invocations", (double)s->n);
	fb_str(&b, "precision", "tensor");
	fb_str(&b, "level", "none");
	fb_num(&b, "time_s", s->time_s);
	fb_str(&b, "verdict", "incomplete");
	fb_str(&b, "primary", "1");
	fb_str(&b, "byte_definition", j->st->bytes_ncu ? "ncu" : "nersc");
	fb_str(&b, "gpu_name", *k->gpu_name ? k->gpu_name : g->name);
	fb_str(&b, "gpu_uuid", g->uuid);
	fb_str(&b, "gpu_index", *k->gpu_index ? k->gpu_index : g->index);
	fb_str(&b, "node", *k->node ? k->node : g->node);
	fb_str(&b, "rank", *k->rank ? k->rank : NULL);
	fb_str(&b, "cc", *k->cc ? k->cc : g->cc);
	fb_str(&b, "tensor_uncounted", kp->uncounted);
	j->n_points++;
	return rl_emit(j->ctx, "point", b.f);
}
