/* ranks.c - see ranks.h. */
#include "hierarchical/ranks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FLOPs of a sample: every CUDA-core and tensor (not int8) role, each
 * times its table factor (an FMA is two). */
static double sample_flops(const struct rlm_kernel *k)
{
	double f = 0;

	for (int r = RLM_DP_ADD; r <= RLM_TC_FP8; r++)
		if (k->arch->metric[r])
			f += k->s.sum[r] * k->arch->factor[r];
	return f;
}

static void num(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%.15g", v);
}

/* The kernels (indexes into j->kernels) named `name` with a rank. */
static size_t group_of(const struct job *j, const char *name, size_t *idx)
{
	size_t n = 0;

	for (size_t i = 0; i < j->kernels.n; i++) {
		const struct rlm_kernel *k = j->kernels.v[i];

		if (*k->rank && strcmp(k->kernel, name) == 0)
			idx[n++] = i;
	}
	return n;
}

/* One rank's record of the group. */
static int emit_rank(struct job *j, const struct rlm_kernel *k, double mean,
		     double limit_pct, bool *imbalanced)
{
	char inv[24], t[32], fl[32], gf[32], pct[32];
	double flops = sample_flops(k), dev = mean > 0 ? (k->s.time_s / mean - 1) * 100 : 0;

	*imbalanced = fabs(dev) > limit_pct;
	snprintf(inv, sizeof(inv), "%ld", k->s.n);
	num(t, sizeof(t), k->s.time_s);
	num(fl, sizeof(fl), flops);
	num(gf, sizeof(gf), k->s.time_s > 0 ? flops / k->s.time_s / 1e9 : 0);
	num(pct, sizeof(pct), mean > 0 ? k->s.time_s / mean * 100 : 0);
	return rl_emit(j->ctx, "rank_balance", (const struct rl_field[]){
		{ "kernel", k->kernel }, { "rank", k->rank }, { "node", k->node },
		{ "gpu_uuid", k->gpu_uuid }, { "invocations", inv }, { "time_s", t },
		{ "flops", fl }, { "gflops", gf }, { "pct_of_mean", pct },
		{ "imbalanced", *imbalanced ? "1" : "0" }, { NULL, NULL } });
}

/* The group of kernel `name`: its ranks' records, then the aggregate. */
static int emit_group(struct job *j, const size_t *idx, size_t n, double limit_pct)
{
	double sum = 0, flops = 0, min = INFINITY, max = 0, mean;
	char ranks[24], inv[24], t[32], fl[32], gf[32], me[32], mi[32], ma[32], imb[32];
	char list[512] = "";
	long invocations = 0;
	size_t len = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		const struct rlm_kernel *k = j->kernels.v[idx[i]];

		sum += k->s.time_s;
		flops += sample_flops(k);
		invocations += k->s.n;
		min = fmin(min, k->s.time_s);
		max = fmax(max, k->s.time_s);
	}
	mean = sum / (double)n;
	for (size_t i = 0; !rc && i < n; i++) {
		bool off;

		rc = emit_rank(j, j->kernels.v[idx[i]], mean, limit_pct, &off);
		if (off && len + 24 < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						len ? "," : "", j->kernels.v[idx[i]]->rank);
	}
	if (rc)
		return rc;
	if (len)
		rl_warn(j->ctx, "load imbalance in kernel '%s': rank(s) %s more than %g%% off the ranks' mean time",
			j->kernels.v[idx[0]]->kernel, list, limit_pct);
	snprintf(ranks, sizeof(ranks), "%zu", n);
	snprintf(inv, sizeof(inv), "%ld", invocations);
	num(t, sizeof(t), sum);
	num(fl, sizeof(fl), flops);
	num(gf, sizeof(gf), max > 0 ? flops / max / 1e9 : 0); /* ranks run together */
	num(me, sizeof(me), mean);
	num(mi, sizeof(mi), min);
	num(ma, sizeof(ma), max);
	num(imb, sizeof(imb), mean > 0 ? (max / mean - 1) * 100 : 0);
	return rl_emit(j->ctx, "rank_balance", (const struct rl_field[]){
		{ "kernel", j->kernels.v[idx[0]]->kernel }, { "rank", "all" },
		{ "ranks", ranks }, { "invocations", inv }, { "time_s", t },
		{ "flops", fl }, { "gflops", gf }, { "mean_s", me }, { "min_s", mi },
		{ "max_s", ma }, { "imbalance_pct", imb }, { "imbalanced_ranks", list },
		{ NULL, NULL } });
}

int ranks_emit(struct job *j, double imbalance_pct)
{
	size_t *idx = calloc(j->kernels.n + 1, sizeof(*idx)), n;
	int rc = idx ? 0 : -ENOMEM;

	for (size_t i = 0; !rc && i < j->kernels.n; i++) {
		const struct rlm_kernel *k = j->kernels.v[i];
		bool first = true;

		if (!*k->rank)
			continue;
		/* each name once: at its first kernel */
		for (size_t p = 0; first && p < i; p++)
			first = !*j->kernels.v[p]->rank ||
				strcmp(j->kernels.v[p]->kernel, k->kernel) != 0;
		if (!first || (n = group_of(j, k->kernel, idx)) < 2)
			continue;
		rc = emit_group(j, idx, n, imbalance_pct);
	}
	free(idx);
	return rc;
}
