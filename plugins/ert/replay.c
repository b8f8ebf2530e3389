/*
 * replay.c - recorded GPUs replayed on a Slurm job's GPUs, with declared
 * perturbations (rules and labels in replay.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#include "judge.h"

/* Every ceiling name ert or spec emits (docs/ceilings.md). */
static const char *const known_ceilings[] = {
	"fp64_fma", "fp64_add", "fp32_fma", "fp32_add", "fp16_fma", "fp16_add",
	"tc_fp16", "tc_bf16", "tc_tf32", "tc_fp64", "tc_int8", "tc_fp8",
	"hbm_triad", "hbm_read", "hbm_write", "l2", "l1", "shared",
	"p2p_read", "p2p_write", "p2p_memcpy", "p2p_read_bidir",
	"p2p_write_bidir", "p2p_memcpy_bidir", NULL,
};

/* ---- parsing ---- */

static int copy_to(char *dst, size_t size, const char *s, size_t n)
{
	if (n == 0 || n >= size)
		return -EINVAL;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

static int parse_selector(struct replay_rule *r, const char *w, size_t n,
			  char *err, size_t errsize)
{
	const char *slash = memchr(w, '/', n);
	char gpu[32], *end;

	if (!slash || copy_to(r->node, sizeof(r->node), w, (size_t)(slash - w)) ||
	    copy_to(gpu, sizeof(gpu), slash + 1, n - (size_t)(slash - w) - 1))
		goto bad;
	if (!strcmp(gpu, "*")) {
		r->gpu = -1;
		return 0;
	}
	errno = 0;
	r->gpu = strtol(gpu, &end, 10);
	if (!errno && *end == '\0' && r->gpu >= 0 && gpu[0] != '-' &&
	    gpu[0] != '+')
		return 0;
bad:
	snprintf(err, errsize, "perturb '%s': '%.*s': expected NODE/GPU "
		 "(a node name or glob, a GPU index or '*')", r->text, (int)n, w);
	return -EINVAL;
}

/* Every comma-separated pattern of w must match a known ceiling. */
static int parse_ceilings(struct replay_rule *r, const char *w, size_t n,
			  char *err, size_t errsize)
{
	char pat[64];

	if (copy_to(r->ceilings, sizeof(r->ceilings), w, n))
		goto too_long;
	for (const char *p = r->ceilings; *p;) {
		size_t k = strcspn(p, ",");
		int hit = 0;

		if (copy_to(pat, sizeof(pat), p, k))
			goto too_long;
		for (int i = 0; known_ceilings[i] && !hit; i++)
			hit = fnmatch(pat, known_ceilings[i], 0) == 0;
		if (!hit) {
			snprintf(err, errsize, "perturb '%s': '%s' matches no "
				 "ceiling (fp64_fma fp64_add fp32_fma fp32_add "
				 "fp16_fma fp16_add tc_fp16 tc_bf16 tc_tf32 "
				 "tc_fp64 tc_int8 tc_fp8 hbm_triad hbm_read "
				 "hbm_write l2 l1 shared)", r->text, pat);
			return -EINVAL;
		}
		p += k + (p[k] == ',');
	}
	return 0;
too_long:
	snprintf(err, errsize, "perturb '%s': '%.*s': empty or too long a "
		 "ceiling list", r->text, (int)n, w);
	return -EINVAL;
}

static int parse_number(const char *s, size_t n, double *out)
{
	char buf[64], *end;

	if (copy_to(buf, sizeof(buf), s, n))
		return -EINVAL;
	errno = 0;
	*out = strtod(buf, &end);
	return errno || end == buf || *end || !isfinite(*out) ? -EINVAL : 0;
}

/* A change word: +N% -N% or KEY=VALUE.  1 when it is one, 0 when not. */
static int parse_change(struct replay_rule *r, const char *w, size_t n,
			char *err, size_t errsize)
{
	const char *eq = memchr(w, '=', n);

	if ((w[0] == '+' || w[0] == '-') && w[n - 1] == '%') {
		if (parse_number(w, n - 1, &r->pct) < 0 || !(r->pct > -100) ||
		    r->pct > 1000)
			goto bad_value;
		r->has_pct = 1;
		return 1;
	}
	if (!eq)
		return 0;
	size_t k = (size_t)(eq - w), vn = n - k - 1;

	if (k == 8 && !strncmp(w, "sm_clock", 8)) {
		if (parse_number(eq + 1, vn, &r->sm_clock) < 0 ||
		    !(r->sm_clock > 0) || r->sm_clock > 1e5)
			goto bad_value;
		return 1;
	}
	if (k == 6 && !strncmp(w, "driver", 6) &&
	    !copy_to(r->driver, sizeof(r->driver), eq + 1, vn))
		return 1;
	if (k == 4 && !strncmp(w, "cuda", 4) &&
	    !copy_to(r->cuda, sizeof(r->cuda), eq + 1, vn))
		return 1;
	snprintf(err, errsize, "perturb '%s': '%.*s': expected sm_clock=MHZ, "
		 "driver=TEXT or cuda=TEXT", r->text, (int)n, w);
	return -EINVAL;
bad_value:
	snprintf(err, errsize, "perturb '%s': '%.*s': expected +N%% or -N%% "
		 "above -100%%, or sm_clock=MHZ above 0", r->text, (int)n, w);
	return -EINVAL;
}

static int parse_rule(const char *item, struct replay_rule *r, char *err,
		      size_t errsize)
{
	static const char ws[] = " \t";
	int words = 0, changes = 0, rc;

	memset(r, 0, sizeof(*r));
	if (strlen(item) >= sizeof(r->text)) {
		snprintf(err, errsize, "perturb '%.40s...': longer than %zu "
			 "characters", item, sizeof(r->text) - 1);
		return -EINVAL;
	}
	strcpy(r->text, item);
	for (const char *p = item + strspn(item, ws); *p;
	     p += strspn(p, ws), words++) {
		size_t n = strcspn(p, ws);

		if (words == 0)
			rc = parse_selector(r, p, n, err, errsize);
		else if ((rc = parse_change(r, p, n, err, errsize)) > 0)
			changes++, rc = 0;
		else if (rc == 0 && words == 1)
			rc = parse_ceilings(r, p, n, err, errsize);
		else if (rc == 0)
			snprintf(err, errsize, "perturb '%s': '%.*s': expected "
				 "+N%%, -N%% or KEY=VALUE (ceilings come right "
				 "after NODE/GPU)", item, (int)n, p), rc = -EINVAL;
		if (rc < 0)
			return rc;
		p += n;
	}
	if (changes == 0) {
		snprintf(err, errsize, "perturb '%s': expected NODE/GPU "
			 "[CEILINGS] CHANGE... (a change: +N%%, -N%%, "
			 "sm_clock=MHZ, driver=TEXT, cuda=TEXT)", item);
		return -EINVAL;
	}
	return 0;
}

int replay_rules_parse(char *const *items, size_t n, struct replay_rules *rules,
		       char *err, size_t errsize)
{
	rules->v = n ? calloc(n, sizeof(*rules->v)) : NULL;
	rules->n = 0;
	if (n && !rules->v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int rc = parse_rule(items[i], &rules->v[i], err, errsize);

		if (rc < 0) {
			replay_rules_release(rules);
			return rc;
		}
		rules->n++;
	}
	return 0;
}

void replay_rules_release(struct replay_rules *rules)
{
	free(rules->v);
	rules->v = NULL;
	rules->n = 0;
}

/* ---- the job's GPUs ---- */

static size_t parse_list(const char *s, long *idx, size_t max)
{
	size_t n = 0;

	for (const char *p = s; *p && n < max;) {
		size_t k = strcspn(p, ",");
		char *end;
		long v = strtol(p, &end, 10);

		if (k && (size_t)(end - p) == k && v >= 0 && *p != '-') {
			idx[n] = v;
			n++;
		} else if (k) {
			idx[n] = (long)n;  /* a UUID or MIG name: its position */
			n++;
		}
		p += k + (p[k] == ',');
	}
	return n;
}

size_t replay_job_gpus(const char *slurm_job_gpus, const char *cuda_visible,
		       long *idx, size_t max)
{
	size_t n = 0;

	if (slurm_job_gpus && *slurm_job_gpus)
		n = parse_list(slurm_job_gpus, idx, max);
	if (n == 0 && cuda_visible && *cuda_visible &&
	    strcmp(cuda_visible, "NoDevFiles"))
		n = parse_list(cuda_visible, idx, max);
	return n;
}

/* ---- applying ---- */

void replay_uuid(const struct replay_gpu *g, char *buf, size_t size)
{
	if (g->as_recorded) {
		snprintf(buf, size, "%s", g->recorded_uuid ? g->recorded_uuid : "?");
		return;
	}
	snprintf(buf, size, "GPU-replay-%s-%ld-of-%s", g->node ? g->node : "?",
		 g->index, g->recorded_uuid ? g->recorded_uuid : "?");
}

int replay_rule_selects(const struct replay_rule *r, const char *node,
			long index)
{
	return fnmatch(r->node, node ? node : "", 0) == 0 &&
	       (r->gpu < 0 || r->gpu == index);
}

static int ceiling_selected(const struct replay_rule *r, const char *name)
{
	char pat[64];

	if (!*r->ceilings)
		return 1;
	for (const char *p = r->ceilings; *p;) {
		size_t k = strcspn(p, ",");

		if (!copy_to(pat, sizeof(pat), p, k) &&
		    fnmatch(pat, name ? name : "", 0) == 0)
			return 1;
		p += k + (p[k] == ',');
	}
	return 0;
}

/* The record's fields as numbers and strings being changed. */
struct rec_edit {
	const char *name, *kind;
	double v[4];                   /* value min median max */
	int has_v[4];
	double sm_clock;
	char sm_clock_s[32];
	const char *driver, *cuda;
};

static const char *const value_keys[] = { "value", "min", "median", "max" };

/* Apply r to e; 1 when it changed something, 0 when not. */
static int apply_rule(const struct replay_rule *r, int measured,
		      struct rec_edit *e)
{
	int changed = 0, sm_clocked;

	if (measured && r->has_pct) {
		for (int i = 0; i < 4; i++)
			e->v[i] *= 1 + r->pct / 100;
		changed = 1;
	}
	sm_clocked = e->kind && (!strcmp(e->kind, "compute") ||
				 !strcmp(e->name, "l1") ||
				 !strcmp(e->name, "shared"));
	if (measured && r->sm_clock > 0 && sm_clocked && e->sm_clock > 0) {
		for (int i = 0; i < 4; i++)
			e->v[i] *= r->sm_clock / e->sm_clock;
		e->sm_clock = r->sm_clock;
		snprintf(e->sm_clock_s, sizeof(e->sm_clock_s), "%.17g",
			 r->sm_clock);
		changed = 1;
	}
	if (*r->driver) {
		e->driver = r->driver;
		changed = 1;
	}
	if (*r->cuda) {
		e->cuda = r->cuda;
		changed = 1;
	}
	return changed;
}

static void label(const struct replay_gpu *g, const struct replay_rules *rules,
		  unsigned long mask, size_t nrules, double noise, char *buf,
		  size_t size)
{
	size_t used;

	snprintf(buf, size, "replay of %s (%s gpu %s)",
		 g->recorded_uuid ? g->recorded_uuid : "?",
		 g->recording ? g->recording : "?",
		 g->recorded_index ? g->recorded_index : "?");
	if (noise != 1) {
		used = strlen(buf);
		snprintf(buf + used, size - used, "; trial noise x%.6f", noise);
	}
	for (size_t i = 0, first = 1; i < nrules && i < 32; i++) {
		if (!(mask & (1ul << i)))
			continue;
		used = strlen(buf);
		snprintf(buf + used, size - used, "%s%s",
			 first ? "; perturbed: " : "; ", rules->v[i].text);
		first = 0;
	}
}

/* Read what the rules may change from `in` into e. */
static void edit_from(const struct benchio_rec *in, struct rec_edit *e)
{
	memset(e, 0, sizeof(*e));
	e->name = rl_field_get(in->f, "name");
	e->kind = rl_field_get(in->f, "kind");
	e->driver = rl_field_get(in->f, "driver");
	e->cuda = rl_field_get(in->f, "cuda");
	for (int i = 0; i < 4; i++) {
		const char *s = rl_field_get(in->f, value_keys[i]);

		e->has_v[i] = s && *s;
		e->v[i] = s ? strtod(s, NULL) : 0;
	}
	const char *c = rl_field_get(in->f, "sm_clock_mhz");

	e->sm_clock = c ? strtod(c, NULL) : 0;
}

int replay_apply(const struct replay_gpu *g, const struct replay_rules *rules,
		 int measured, const char *kind, const struct benchio_rec *in,
		 struct benchio_rec *out, unsigned long *changed)
{
	char uuid[256], idx[32], syn[1024];
	unsigned long mask = 0;
	struct rec_edit e;
	double noise = 1;

	edit_from(in, &e);
	if (!strcmp(kind, "ceiling"))
		for (size_t i = 0; i < rules->n; i++)
			if (replay_rule_selects(&rules->v[i], g->node, g->index) &&
			    ceiling_selected(&rules->v[i], e.name) &&
			    apply_rule(&rules->v[i], measured, &e) && i < 32)
				mask |= 1ul << i;
	if (g->noise_seed && measured && !strcmp(kind, "ceiling") && e.name) {
		const char *sp = rl_field_get(in->f, "spread_pct"),
			   *tr = rl_field_get(in->f, "trials");

		noise = replay_noise_factor(g->noise_seed, e.name,
					    sp ? strtod(sp, NULL) : -1,
					    tr ? strtol(tr, NULL, 10) : 0);
		for (int i = 0; i < 4; i++)
			e.v[i] *= noise;
	}
	replay_uuid(g, uuid, sizeof(uuid));
	snprintf(idx, sizeof(idx), "%ld", g->index);
	benchio_rec_init(out);
	for (const struct rl_field *f = in->f; f->key; f++) {
		const char *v = f->value;
		char num[64];

		if (!strcmp(f->key, "gpu_index"))
			v = idx;
		else if (!strcmp(f->key, "gpu_uuid"))
			v = uuid;
		else if (!strcmp(f->key, "driver"))
			v = e.driver;
		else if (!strcmp(f->key, "cuda"))
			v = e.cuda;
		else if (!strcmp(f->key, "sm_clock_mhz") && *e.sm_clock_s)
			v = e.sm_clock_s;
		for (int i = 0; i < 4 && (mask || noise != 1); i++)
			if (!strcmp(f->key, value_keys[i]) && e.has_v[i]) {
				snprintf(num, sizeof(num), "%.17g", e.v[i]);
				v = num;
			}
		benchio_rec_add(out, f->key, v);
	}
	label(g, rules, mask, rules->n, noise, syn, sizeof(syn));
	benchio_rec_add(out, "synthetic", syn);
	if (changed)
		*changed = mask;
	return out->overflow ? -E2BIG : 0;
}

/* splitmix64: a well-mixed 64-bit hash step */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

double replay_noise_factor(unsigned long seed, const char *name,
			   double spread_pct, long trials)
{
	uint64_t h = mix64(seed);
	double u1, u2, z, sd = judge_trial_sd_pct(spread_pct, trials) / 100;

	if (!(sd > 0))
		return 1;
	for (const char *c = name; *c; c++)
		h = mix64(h ^ (unsigned char)*c);
	u1 = ((double)(h >> 11) + 0.5) / 9007199254740992.0;
	u2 = ((double)(mix64(h) >> 11) + 0.5) / 9007199254740992.0;
	z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2); /* Box-Muller */
	return 1 + z * sd;
}
