/* roofline_math.c - see roofline_math.h. */
#include "roofline_math.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

int roofline_math_point(const struct roofline_math_in *in,
			struct roofline_math_point *out)
{
	double bound;
	int lv;

	memset(out, 0, sizeof(*out));
	out->bound_level = RLM_COMPUTE;
	if (!(in->flops > 0) || !(in->time_s > 0) || !(in->peak > 0))
		return -EINVAL;
	out->gflops = in->flops / in->time_s / 1e9;
	bound = in->peak;
	for (lv = 0; lv < RLM_LEVELS; lv++) {
		double roof;

		if (!in->has_bytes[lv] || !(in->bytes[lv] > 0) ||
		    !in->has_bw[lv] || !(in->bw[lv] > 0))
			continue;
		out->level_ok[lv] = true;
		out->ai[lv] = in->flops / in->bytes[lv];
		roof = out->ai[lv] * in->bw[lv];
		if (roof > in->peak)
			roof = in->peak;
		out->roof_gflops[lv] = roof / 1e9;
		out->pct_of_roof[lv] = out->gflops / out->roof_gflops[lv] * 100;
		/* Strictly lower: at the ridge point the peak binds, and the
		 * innermost of equal roofs is named. */
		if (roof < bound) {
			bound = roof;
			out->bound_level = lv;
		}
	}
	out->bound_gflops = bound / 1e9;
	out->pct_of_bound = out->gflops / out->bound_gflops * 100;
	if (out->pct_of_bound < in->latency_pct)
		out->verdict = RLM_LATENCY_BOUND;
	else
		out->verdict = out->bound_level == RLM_COMPUTE ? RLM_COMPUTE_BOUND
							       : RLM_BANDWIDTH_BOUND;
	return 0;
}

double roofline_math_alpha(double fma, double add, double mul)
{
	double total = fma + add + mul;

	return total > 0 ? fma / total : NAN;
}

double roofline_math_partial_fma(double peak, double alpha)
{
	return peak * (1 + alpha) / 2;
}

double roofline_math_mix_peak(const double *flops, const double *peaks,
			      size_t n)
{
	double sum = 0, time = 0;

	for (size_t i = 0; i < n; i++) {
		if (!(flops[i] > 0))
			continue;
		if (!(peaks[i] > 0))
			return 0;
		sum += flops[i];
		time += flops[i] / peaks[i];
	}
	return time > 0 ? sum / time : 0;
}

/* 10^k for the decimal fast path; all exact in a double. */
static const double pow10_exact[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
				      1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
				      1e15 };

int roofline_math_number(const char *s, double *out)
{
	const char *p = s, *dot = NULL;
	uint64_t v = 0;
	int digits = 0;
	char *end;
	double d;

	/* Plain digits, with at most one '.', 15 significant digits or fewer:
	 * v and 10^k are exact doubles, so one division rounds correctly and
	 * gives strtod's result (ncu's counts and its two-decimal rates). */
	for (; *p; p++) {
		if (*p >= '0' && *p <= '9' && digits < 15) {
			v = v * 10 + (uint64_t)(*p - '0');
			digits++;
		} else if (*p == '.' && !dot) {
			dot = p;
		} else {
			break;
		}
	}
	if (!*p && digits && (!dot || p - dot > 1)) {
		*out = dot ? (double)v / pow10_exact[p - dot - 1] : (double)v;
		return 0;
	}
	if (!*s || isspace((unsigned char)*s)) /* strtod would skip it */
		return -EINVAL;
	d = strtod(s, &end);
	if (end == s || *end || !isfinite(d))
		return -EINVAL;
	*out = d;
	return 0;
}

const char *roofline_math_level_name(int level)
{
	switch (level) {
	case RLM_L1: return "l1";
	case RLM_L2: return "l2";
	case RLM_DRAM: return "dram";
	default: return "compute";
	}
}

const char *roofline_math_verdict_name(enum rlm_verdict v)
{
	switch (v) {
	case RLM_COMPUTE_BOUND: return "compute-bound";
	case RLM_BANDWIDTH_BOUND: return "bandwidth-bound";
	case RLM_LATENCY_BOUND: return "latency-bound";
	}
	return "latency-bound";
}

/* ---- kernel records -> counts ----------------------------------------------- */

static const char *const role_names[RLM_ROLES] = {
	"time_ns", "sm_cycles", "sm_clock_hz",
	"flop_dp_add", "flop_dp_mul", "flop_dp_fma",
	"flop_sp_add", "flop_sp_mul", "flop_sp_fma",
	"flop_hp_add", "flop_hp_mul", "flop_hp_fma",
	"tensor_fp64", "tensor_fp16", "tensor_bf16", "tensor_tf32",
	"tensor_fp8", "tensor_int8", "tensor_inst", "tensor_inst_hfma2",
	"bytes_l1", "bytes_l2", "bytes_dram", "bytes_l1_ncu", "bytes_l2_ncu",
};

static const char *const id_names[RLM_IDS] = {
	"kernel", "invocation", "gpu_index", "gpu_name", "gpu_uuid", "node",
	"cc", "missing", "rank",
};

/* Slots: a role, RLM_ROLES + an id, SLOT_OTHER (a field we skip), or
 * SLOT_PART + a part. */
#define SLOT_OTHER (RLM_ROLES + RLM_IDS)
#define SLOT_PART (SLOT_OTHER + 1)

const char *roofline_math_role_name(enum rlm_role r)
{
	return (unsigned)r < RLM_ROLES ? role_names[r] : "?";
}

static int role_of(const char *role)
{
	for (int r = 0; r < RLM_ROLES; r++)
		if (strcmp(role_names[r], role) == 0)
			return r;
	return -1;
}

int roofline_math_arch_init(struct rlm_arch *a, const struct ncu_table *t,
			    const char *arch)
{
	const struct ncu_table_row **rows = NULL;
	long n = ncu_table_select(t, arch, (const char *const[]){ "all" }, 1,
				  &rows);

	if (n < 0)
		return -ENOMEM;
	snprintf(a->arch, sizeof(a->arch), "%s", arch);
	for (long i = 0; i < n; i++) {
		int r = role_of(rows[i]->role); /* gpu_name, passes: not ours */
		double f;

		if (r < 0)
			continue;
		if (roofline_math_number(rows[i]->factor, &f) < 0)
			f = 1; /* not reached: the table loader checks factors */
		if (a->metric[r]) { /* a datapath's further part */
			if (a->n_parts < RLM_MAX_PARTS)
				a->part[a->n_parts++] = (struct rlm_part){
					rows[i]->metric, r, f };
			continue;
		}
		a->metric[r] = rows[i]->metric;
		a->factor[r] = f;
		a->extra[r] = strcmp(rows[i]->set, "default") != 0;
	}
	free(rows);
	return 0;
}

void roofline_math_arch_release(struct rlm_arch *a)
{
	for (size_t i = 0; i < a->lay_n; i++)
		free(a->lay_key[i]);
	free(a->lay_key);
	free(a->lay_slot);
	memset(a, 0, sizeof(*a));
}

static int slot_lookup(const struct rlm_arch *a, const char *key)
{
	for (int i = 0; i < RLM_IDS; i++)
		if (strcmp(id_names[i], key) == 0)
			return RLM_ROLES + i;
	for (int r = 0; r < RLM_ROLES; r++)
		if (a->metric[r] && strcmp(a->metric[r], key) == 0)
			return r;
	for (size_t i = 0; i < a->n_parts; i++)
		if (strcmp(a->part[i].metric, key) == 0)
			return SLOT_PART + (int)i;
	return SLOT_OTHER;
}

/* The slot of the field at position i, through the key-order cache. */
static int slot_at(struct rlm_arch *a, size_t i, const char *key)
{
	char *copy;

	if (i < a->lay_n && strcmp(a->lay_key[i], key) == 0)
		return a->lay_slot[i];
	if (i >= a->lay_n) {
		char **k = realloc(a->lay_key, (i + 1) * sizeof(*k));
		int *s;

		if (!k)
			return -ENOMEM;
		a->lay_key = k;
		s = realloc(a->lay_slot, (i + 1) * sizeof(*s));
		if (!s)
			return -ENOMEM;
		a->lay_slot = s;
		for (; a->lay_n <= i; a->lay_n++)
			a->lay_key[a->lay_n] = NULL;
	}
	copy = strdup(key);
	if (!copy)
		return -ENOMEM;
	free(a->lay_key[i]);
	a->lay_key[i] = copy;
	a->lay_slot[i] = slot_lookup(a, key);
	return a->lay_slot[i];
}

/* Mark the roles of the metrics named in a `missing` list as bad. */
static void mark_listed(const struct rlm_arch *a, const char *list,
			struct rlm_inv *iv)
{
	while (*list) {
		size_t n = strcspn(list, ",");

		for (int r = 0; r < RLM_ROLES; r++)
			if (a->metric[r] && strlen(a->metric[r]) == n &&
			    strncmp(a->metric[r], list, n) == 0) {
				iv->bad |= 1u << r;
				iv->present &= ~(1u << r);
			}
		for (size_t i = 0; i < a->n_parts; i++)
			if (strlen(a->part[i].metric) == n &&
			    strncmp(a->part[i].metric, list, n) == 0) {
				iv->bad |= 1u << a->part[i].role;
				iv->present &= ~(1u << a->part[i].role);
			}
		list += n + (list[n] == ',');
	}
}

/* A datapath is the sum of its parts, present only when all of them are. */
static void add_parts(const struct rlm_arch *a, struct rlm_inv *iv)
{
	for (size_t p = 0; p < a->n_parts; p++) {
		uint32_t bit = 1u << a->part[p].role;

		if (iv->pbad & (1u << p)) {
			iv->bad |= bit;
			iv->present &= ~bit;
		} else if (!(iv->ppresent & (1u << p))) {
			iv->present &= ~bit;
		} else if (iv->present & bit) {
			iv->v[a->part[p].role] += iv->pv[p];
		}
	}
}

int roofline_math_read(struct rlm_arch *a, const struct rl_field *fields,
		       struct rlm_inv *iv)
{
	memset(iv->id, 0, sizeof(iv->id));
	iv->present = iv->bad = iv->ppresent = iv->pbad = 0;
	for (size_t i = 0; fields[i].key; i++) {
		int s = slot_at(a, i, fields[i].key);
		double d;

		if (s < 0)
			return s;
		if (s < RLM_ROLES) {
			if (roofline_math_number(fields[i].value, &d) == 0) {
				iv->v[s] = d * a->factor[s];
				iv->present |= 1u << s;
			} else {
				iv->bad |= 1u << s;
			}
		} else if (s < SLOT_OTHER) {
			iv->id[s - RLM_ROLES] = fields[i].value;
		} else if (s > SLOT_OTHER) {
			size_t p = (size_t)(s - SLOT_PART);

			if (roofline_math_number(fields[i].value, &d) == 0) {
				iv->pv[p] = d * a->part[p].factor;
				iv->ppresent |= 1u << p;
			} else {
				iv->pbad |= 1u << p;
			}
		}
	}
	add_parts(a, iv);
	if (iv->id[RLM_ID_MISSING] && *iv->id[RLM_ID_MISSING])
		mark_listed(a, iv->id[RLM_ID_MISSING], iv);
	return 0;
}

bool roofline_math_is_missing(const struct rlm_arch *a,
			      const struct rlm_inv *iv, enum rlm_role r)
{
	uint32_t bit = 1u << r;

	if (iv->present & bit)
		return false;
	return (iv->bad & bit) || (a->metric[r] && !a->extra[r] &&
				   !ncu_table_is_datapath(role_names[r]));
}

int roofline_math_uncounted(const struct rlm_arch *a, const struct rlm_sample *s,
			    char *buf, size_t size)
{
	size_t len = 0;
	int n = 0;

	if (size)
		*buf = '\0';
	for (int r = RLM_TC_FP64; r <= RLM_TC_INT8; r++) {
		if (!a->metric[r] || roofline_math_usable(s, (enum rlm_role)r))
			continue;
		n++;
		if (size && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
						role_names[r] + strlen("tensor_"));
	}
	return n;
}

double roofline_math_mma_inst(const struct rlm_arch *a, const struct rlm_sample *s)
{
	double inst, moves;

	if (!roofline_math_usable(s, RLM_TENSOR_INST))
		return NAN;
	inst = s->sum[RLM_TENSOR_INST] / a->factor[RLM_TENSOR_INST];
	if (roofline_math_usable(s, RLM_TENSOR_HFMA2))
		moves = s->sum[RLM_TENSOR_HFMA2] / a->factor[RLM_TENSOR_HFMA2];
	else if (roofline_math_usable(s, RLM_HP_FMA))
		moves = s->sum[RLM_HP_FMA] / a->factor[RLM_HP_FMA] / 32;
	else
		moves = 0;
	return inst > moves ? inst - moves : 0;
}

bool roofline_math_time(const struct rlm_inv *iv, bool prefer_cycles,
			double *time_s, bool *cycles)
{
	bool dur = iv->present & (1u << RLM_TIME);
	bool cyc = (iv->present & (1u << RLM_CYCLES)) &&
		   (iv->present & (1u << RLM_SM_HZ)) && iv->v[RLM_SM_HZ] > 0;

	if (dur && !(prefer_cycles && cyc)) {
		*time_s = iv->v[RLM_TIME] * 1e-9;
		*cycles = false;
		return true;
	}
	if (cyc) {
		*time_s = iv->v[RLM_CYCLES] / iv->v[RLM_SM_HZ];
		*cycles = true;
		return true;
	}
	return false;
}

void roofline_math_sample_add(struct rlm_sample *s, const struct rlm_arch *a,
			      const struct rlm_inv *iv, bool prefer_cycles)
{
	double t;
	bool cyc;

	s->n++;
	for (int r = 0; r < RLM_ROLES; r++) {
		if (iv->present & (1u << r)) {
			s->sum[r] += iv->v[r];
			s->n_present[r]++;
		} else if (roofline_math_is_missing(a, iv, (enum rlm_role)r)) {
			s->n_missing[r]++;
		}
	}
	if (roofline_math_time(iv, prefer_cycles, &t, &cyc)) {
		s->time_s += t;
		s->n_time++;
		if (cyc)
			s->n_cyc++;
		else
			s->n_dur++;
	}
}

/* ---- kernels, summed per GPU ---------------------------------------------- */

/* The hash of a kernel key: eight bytes at a time (FNV-1a's byte at a time
 * was a tenth of the analysis of a million records).  Only the table's
 * slots depend on it, never the output. */
static uint64_t key_hash(const char *s, size_t n)
{
	const uint64_t m = 0xff51afd7ed558ccdull;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * m;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * m;
	return h ^ (h >> 29);
}

/* Build the key of iv on node into t->scratch; its length, or 0 on ENOMEM. */
/* A kernel is its node, GPU, name, cc and MPI rank (two ranks on one GPU
 * are two kernels). */
#define KEY_PARTS 7

static size_t build_key(struct rlm_kernels *t, const struct rlm_inv *iv,
			const char *node)
{
	const char *part[KEY_PARTS] = { node, iv->id[RLM_ID_GPU_INDEX],
				iv->id[RLM_ID_GPU_UUID], iv->id[RLM_ID_GPU_NAME],
				iv->id[RLM_ID_KERNEL], iv->id[RLM_ID_CC],
				iv->id[RLM_ID_RANK] };
	size_t n[KEY_PARTS], len = 0;

	for (int i = 0; i < KEY_PARTS; i++) {
		part[i] = part[i] ? part[i] : "";
		n[i] = strlen(part[i]) + 1;
		len += n[i];
	}
	if (len > t->scratch_cap) {
		char *s = realloc(t->scratch, len * 2);

		if (!s)
			return 0;
		t->scratch = s;
		t->scratch_cap = len * 2;
	}
	len = 0;
	for (int i = 0; i < KEY_PARTS; i++) {
		memcpy(t->scratch + len, part[i], n[i]);
		len += n[i];
	}
	return len;
}

static void slot_of(struct rlm_kernels *t, uint64_t h, const char *key,
		    size_t len, size_t *slot)
{
	size_t mask = t->n_slots - 1, i = (size_t)h & mask;

	for (; t->slots[i]; i = (i + 1) & mask) {
		const struct rlm_kernel *k = t->v[t->slots[i] - 1];

		if (k->hash == h && k->key_len == len && !memcmp(k->key, key, len))
			break;
	}
	*slot = i;
}

static int grow_slots(struct rlm_kernels *t)
{
	size_t n = t->n_slots ? t->n_slots * 2 : 64, slot;
	uint32_t *old = t->slots;
	size_t old_n = t->n_slots;

	t->slots = calloc(n, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -ENOMEM;
	}
	t->n_slots = n;
	for (size_t i = 0; i < old_n; i++)
		if (old[i]) {
			const struct rlm_kernel *k = t->v[old[i] - 1];

			slot_of(t, k->hash, k->key, k->key_len, &slot);
			t->slots[slot] = old[i];
		}
	free(old);
	return 0;
}

static struct rlm_kernel *kernel_new(struct rlm_kernels *t, const char *key,
				     size_t len, uint64_t h,
				     const struct rlm_arch *a)
{
	struct rlm_kernel *k = calloc(1, sizeof(*k)), **v;
	const char **id[KEY_PARTS];
	const char *p;

	v = realloc(t->v, (t->n + 1) * sizeof(*v));
	if (v)
		t->v = v;
	if (!k || !v || !(k->key = malloc(len))) {
		free(k);
		return NULL;
	}
	memcpy(k->key, key, len);
	k->key_len = len;
	k->hash = h;
	k->arch = a;
	k->index = t->n;
	id[0] = &k->node, id[1] = &k->gpu_index, id[2] = &k->gpu_uuid;
	id[3] = &k->gpu_name, id[4] = &k->kernel, id[5] = &k->cc;
	id[6] = &k->rank;
	p = k->key;
	for (int i = 0; i < KEY_PARTS; i++, p += strlen(p) + 1)
		*id[i] = p;
	t->v[t->n++] = k;
	return k;
}

struct rlm_kernel *roofline_math_kernel(struct rlm_kernels *t,
					const struct rlm_arch *a,
					const struct rlm_inv *iv,
					const char *node, bool add)
{
	size_t len = build_key(t, iv, node), slot;
	struct rlm_kernel *k;
	uint64_t h;

	if (!len || (!t->n_slots && (!add || grow_slots(t) < 0)))
		return NULL;
	h = key_hash(t->scratch, len);
	slot_of(t, h, t->scratch, len, &slot);
	if (t->slots[slot])
		return t->v[t->slots[slot] - 1];
	if (!add)
		return NULL;
	if ((t->n + 1) * 2 > t->n_slots) {
		if (grow_slots(t) < 0)
			return NULL;
		slot_of(t, h, t->scratch, len, &slot);
	}
	k = kernel_new(t, t->scratch, len, h, a);
	if (k)
		t->slots[slot] = (uint32_t)t->n;
	return k;
}

void roofline_math_kernels_release(struct rlm_kernels *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i]->key);
		free(t->v[i]);
	}
	free(t->v);
	free(t->slots);
	free(t->scratch);
	memset(t, 0, sizeof(*t));
}

/* ---- ceilings per GPU ------------------------------------------------------- */

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static bool known(const char *s)
{
	return s && *s;
}

static struct rlm_gpu *gpu_get(struct rlm_gpus *gs, const char *node,
			       const struct rl_field *f)
{
	const char *uuid = or_empty(rl_field_get(f, "gpu_uuid"));
	const char *name = or_empty(rl_field_get(f, "gpu_name"));
	const char *index = or_empty(rl_field_get(f, "gpu_index"));
	struct rlm_gpu *g;

	for (size_t i = 0; i < gs->n; i++) {
		g = &gs->v[i];
		if (*uuid ? !strcmp(g->uuid, uuid)
			  : !*g->uuid && !strcmp(g->node, node) &&
				    !strcmp(g->index, index) && !strcmp(g->name, name))
			return g;
	}
	g = realloc(gs->v, (gs->n + 1) * sizeof(*g));
	if (!g)
		return NULL;
	gs->v = g;
	g = &gs->v[gs->n++];
	memset(g, 0, sizeof(*g));
	g->node = strdup(node);
	g->uuid = strdup(uuid);
	g->name = strdup(name);
	g->index = strdup(index);
	g->cc = strdup(or_empty(rl_field_get(f, "cc")));
	return g->node && g->uuid && g->name && g->index && g->cc ? g : NULL;
}

const struct rlm_ceil *roofline_math_ceiling(const struct rlm_gpu *g,
					     const char *name,
					     const char *method)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->c[i].name, name) && !strcmp(g->c[i].method, method))
			return &g->c[i];
	return NULL;
}

int roofline_math_add_ceiling(struct rlm_gpus *gs, const char *node,
			      const struct rl_field *f)
{
	const char *name = rl_field_get(f, "name"), *value = rl_field_get(f, "value");
	const char *method = or_empty(rl_field_get(f, "method"));
	struct rlm_ceil *c;
	struct rlm_gpu *g;
	double v;

	if (!known(name) || !value || roofline_math_number(value, &v) < 0 || !(v > 0)) {
		gs->n_ignored++;
		return 0;
	}
	gs->n_records++;
	if (!(g = gpu_get(gs, or_empty(node), f)))
		return -ENOMEM;
	if (roofline_math_ceiling(g, name, method))
		return 0;
	if (g->n == g->cap) {
		c = realloc(g->c, (g->cap * 2 + 16) * sizeof(*c));
		if (!c)
			return -ENOMEM;
		g->c = c;
		g->cap = g->cap * 2 + 16;
	}
	c = &g->c[g->n];
	c->name = strdup(name);
	c->method = strdup(method);
	c->unit = strdup(or_empty(rl_field_get(f, "unit")));
	c->value = v;
	g->n++; /* counted even when a strdup failed, so it is freed */
	return c->name && c->method && c->unit ? 0 : -ENOMEM;
}

/* How well g fits k: -1 not at all, else the number of known fields agreeing. */
static int match_score(const struct rlm_gpu *g, const struct rlm_kernel *k,
		       bool same_node)
{
	bool node = known(k->node) && known(g->node);
	bool index = known(k->gpu_index) && known(g->index);
	int score = 1;

	if (known(k->gpu_uuid) && known(g->uuid)) {
		if (strcmp(k->gpu_uuid, g->uuid) == 0)
			return 10;
		/* another GPU: only a GPU of the same name elsewhere will do */
		if (same_node)
			return -1;
	}
	if (known(k->gpu_name) && known(g->name) && strcmp(k->gpu_name, g->name))
		return -1;
	if (node && strcmp(k->node, g->node) == 0)
		score += 2;
	else if (node && same_node)
		return -1;
	if (index && strcmp(k->gpu_index, g->index) == 0)
		score++;
	else if (index && same_node)
		return -1;
	return score;
}

long roofline_math_match(const struct rlm_gpus *gs, const struct rlm_kernel *k,
			 bool same_node)
{
	long best = -1;
	int best_score = -1;

	for (size_t i = 0; i < gs->n; i++) {
		int s = match_score(&gs->v[i], k, same_node);

		if (s > best_score) {
			best_score = s;
			best = (long)i;
		}
	}
	return best;
}

void roofline_math_gpus_release(struct rlm_gpus *gs)
{
	for (size_t i = 0; i < gs->n; i++) {
		struct rlm_gpu *g = &gs->v[i];

		for (size_t c = 0; c < g->n; c++) {
			free(g->c[c].name);
			free(g->c[c].method);
			free(g->c[c].unit);
		}
		free(g->c);
		free(g->node);
		free(g->uuid);
		free(g->name);
		free(g->index);
		free(g->cc);
	}
	free(gs->v);
	memset(gs, 0, sizeof(*gs));
}
