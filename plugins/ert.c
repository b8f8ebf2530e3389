/*
 * ert - empirical roofline ceilings, measured on the node's GPUs.
 *
 * Runs ert-bench (plugins/ert/bench_*.cu: a CUDA program, no shell, argv
 * only), keeps its whole output as ert-raw.tsv (and its stderr as
 * ert-stderr.log) in the step's output directory, and emits:
 *
 *   ceiling  one per figure per GPU: gpu_index gpu_uuid gpu_name driver cuda
 *            cc sm_clock_mhz mem_clock_mhz method=empirical name kind value
 *            unit trials min median max spread_pct geometry [ws_min_bytes
 *            ws_max_bytes] [mode] [peer_index peer_uuid link directions]
 *            source.  value = median over the trials,
 *            spread_pct = (max - min) / median * 100.  source: "kernel"
 *            (a dedicated kernel) or "sweep" (a plateau of the sweep).
 *   sweep    one per series of the working-set sweep: gpu_index gpu_uuid
 *            series unit points, and ws_bytes level_guess value min max
 *            trials as comma-separated lists of `points` items, one per
 *            working-set size in ert-bench's order; so the plateaus can be
 *            recomputed later.  (Up to 0.2.0 one record per size, the same
 *            fields with one item each: a night of 2,000 nodes stored
 *            528,000 of them, 79 % of its records; docs/ceilings.md.)
 *
 * Bandwidth levels: hbm_triad, hbm_read, hbm_write, l1 and shared come from
 * dedicated kernels; l2's range is the plateau of the L2-only ("cg") sweep
 * series, found by common/plateau.c (rule in plateau.h): the plateau that
 * covers most of [L2 size / 16, L2 size] (PLATEAU_MOST_INSIDE; the sweep's
 * smaller sets read at inflated rates and must not win by their number).  Its value is
 * ert-bench's `l2` ceiling line (measured with trials at one size of that
 * plateau, source "kernel") where the output has one, else, in outputs of
 * earlier versions, the plateau's own median (source "sweep").  The range
 * of l1 is the widest plateau of the cached ("ca") series whose centre lies
 * below SMs x shared memory per SM; that of the hbm_* figures the plateau of
 * the "cg" series that reaches the largest size, centred above the L2 size;
 * shared reports its own working set, and a figure without its plateau its
 * kernel's working set.
 *
 * mode: ert-bench's --mode label (bench/multi-gpu.sh: "concurrent", every
 * GPU of the node measured at once, or "sequential"), absent when not given.
 * A recording of `ert-bench --p2p` (bench_p2p.cu) gives p2p_* ceilings,
 * one per ordered pair of GPUs (p2p_*_bidir: per pair, gpu < peer) with the
 * peer's index and UUID, the link label of `nvidia-smi topo -m` and the
 * number of directions measured at once.
 *
 * With option `p2p`, the plugin then runs `nvidia-smi topo -m` (topo.txt)
 * and `ert-bench --p2p` (ert-p2p.tsv) and emits the pairs' records too.
 *
 * With `replay` set, a recorded ert-bench output is parsed instead of
 * running the program (machines without a GPU, tests, demos), and its GPU's
 * figures are emitted once per GPU the Slurm job was given (option `gpus`,
 * else SLURM_JOB_GPUS, else CUDA_VISIBLE_DEVICES, else the recording's own
 * GPUs), each under that GPU's index, a replay UUID and a `synthetic` label,
 * with the perturbations of option `perturb` applied (ert/replay.h); with
 * `replay_as: recorded`, the recorded GPUs as themselves, still labelled.
 * A node without a GPU (ert-bench exit status 3) fails the step, naming why.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ert/benchio.h"
#include "ert/replay.h"
#include "plateau.h"
#include "rooflined/plugin.h"

#define ERT_EXIT_NODEV 3
#define ERT_MAX_PLATEAUS 16
#define ERT_MAX_ARGS 32
#define ERT_MAX_GPUS 64

struct ert_config {
	char *bench;
	struct rl_strlist precisions;
	struct rl_strlist levels;
	struct rl_strlist gpus;
	long trials;
	int quick;
	long timeout_s;
	double plateau_tol_pct;
	long plateau_min_points;
	char *replay;
	struct rl_strlist perturb;
	char *replay_as;
	int noise;
	int p2p;
};

static const struct rl_option ert_options[] = {
	{ "bench", RL_OPT_STRING | RL_OPT_PROGRAM, NULL, offsetof(struct ert_config, bench),
	  "ert-bench program (default: $ROOFLINE_LIBEXEC/ert-bench, then PATH)", 0 },
	{ "precisions", RL_OPT_LIST, "fp64,fp32,fp16,tensor",
	  offsetof(struct ert_config, precisions),
	  "compute groups: fp64 fp32 fp16 tensor, and inst (warp instructions/s, opt-in)", 0 },
	{ "levels", RL_OPT_LIST, "hbm,l2,l1,shared",
	  offsetof(struct ert_config, levels),
	  "bandwidth groups: hbm l2 (the working-set sweep) l1 shared", 0 },
	{ "gpus", RL_OPT_LIST, NULL, offsetof(struct ert_config, gpus),
	  "GPU indexes to measure (default: every GPU, one after the other)", 0 },
	{ "trials", RL_OPT_INT, "0", offsetof(struct ert_config, trials),
	  "timed trials per figure (0: ert-bench's default, 9 quick / 21 full)", 0 },
	{ "quick", RL_OPT_BOOL, "false", offsetof(struct ert_config, quick),
	  "nightly mode: fewer geometry candidates, shorter trials", 0 },
	{ "timeout_s", RL_OPT_INT, "900", offsetof(struct ert_config, timeout_s),
	  "kill ert-bench after this many seconds (0: never)", 0 },
	{ "plateau_tol_pct", RL_OPT_DOUBLE, "10",
	  offsetof(struct ert_config, plateau_tol_pct),
	  "plateau rule: a point joins a plateau within this % of its median", 0 },
	{ "plateau_min_points", RL_OPT_INT, "3",
	  offsetof(struct ert_config, plateau_min_points),
	  "plateau rule: fewest sweep points a plateau has", 0 },
	{ "replay", RL_OPT_STRING, NULL, offsetof(struct ert_config, replay),
	  "parse this recorded ert-bench output instead of running it, once "
	  "per GPU of the job", 0 },
	{ "perturb", RL_OPT_LIST, NULL, offsetof(struct ert_config, perturb),
	  "with replay: per-GPU changes, 'NODE/GPU [CEILINGS] +N%|-N%|"
	  "sm_clock=MHZ|driver=V|cuda=V...' (docs/fleet.md)", 0 },
	{ "replay_as", RL_OPT_STRING, "job", offsetof(struct ert_config, replay_as),
	  "with replay: 'job' (once per GPU of the Slurm job, replay UUIDs) or "
	  "'recorded' (the recorded GPUs as themselves)", 0 },
	{ "p2p", RL_OPT_BOOL, "false", offsetof(struct ert_config, p2p),
	  "also measure every pair of the node's GPUs (ert-bench --p2p, with "
	  "nvidia-smi topo -m's link labels): p2p_* ceilings with the peer; "
	  "skipped with a warning on a node of one GPU", 0 },
	{ "noise", RL_OPT_BOOL, "false", offsetof(struct ert_config, noise),
	  "replaying: give each measured figure the noise its recorded trials "
	  "showed, drawn anew for each run, node and GPU (labelled)", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static const char *const precision_names[] = { "fp64", "fp32", "fp16",
					       "tensor", "inst", NULL };
static const char *const level_names[] = { "hbm", "l2", "l1", "shared", NULL };

/* What init derived from the config; run borrows it. */
struct ert_state {
	char only[128];   /* --only argument */
	char gpus[256];   /* --gpu argument, "" for all */
	struct replay_rules rules; /* option perturb */
};

/* ---- configuration ---- */

static int name_index(const char *const *names, const char *s, size_t n)
{
	for (int i = 0; names[i]; i++)
		if (strlen(names[i]) == n && !strncmp(names[i], s, n))
			return i;
	return -1;
}

/*
 * Append the items of list (each may hold comma-separated words) that name
 * one of names to buf as a comma list; 0 or -EINVAL naming the bad word.
 */
static int join_words(struct rl_ctx *ctx, const char *opt,
		      const struct rl_strlist *list, const char *const *names,
		      char *buf, size_t size)
{
	for (size_t i = 0; i < list->n; i++) {
		for (const char *p = list->v[i]; *p;) {
			size_t n = strcspn(p, ",");

			if (n && name_index(names, p, n) < 0) {
				rl_error(ctx, "option '%s': unknown item '%.*s'",
					 opt, (int)n, p);
				return -EINVAL;
			}
			if (n && strlen(buf) + n + 2 < size)
				snprintf(buf + strlen(buf), size - strlen(buf),
					 "%s%.*s", *buf ? "," : "", (int)n, p);
			p += n + (p[n] == ',');
		}
	}
	return 0;
}

static int join_gpus(struct rl_ctx *ctx, const struct rl_strlist *list,
		     char *buf, size_t size)
{
	for (size_t i = 0; i < list->n; i++) {
		const char *s = list->v[i];

		if (!*s || strspn(s, "0123456789,") != strlen(s)) {
			rl_error(ctx, "option 'gpus': '%s' is not a GPU index", s);
			return -EINVAL;
		}
		if (strlen(buf) + strlen(s) + 2 >= size) {
			rl_error(ctx, "option 'gpus': too many GPUs");
			return -EINVAL;
		}
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s",
			 *buf ? "," : "", s);
	}
	return 0;
}

/* Parse option perturb, which only a replay may have. */
static int init_rules(struct rl_ctx *ctx, const struct ert_config *cfg,
		      struct ert_state *st)
{
	char err[512];
	int rc;

	if (cfg->replay_as && strcmp(cfg->replay_as, "job") &&
	    strcmp(cfg->replay_as, "recorded")) {
		rl_error(ctx, "option 'replay_as': '%s' is neither 'job' nor "
			 "'recorded'", cfg->replay_as);
		return -EINVAL;
	}
	if (cfg->perturb.n && !cfg->replay) {
		rl_error(ctx, "option 'perturb' needs option 'replay': only "
			 "replayed GPUs are perturbed");
		return -EINVAL;
	}
	rc = replay_rules_parse(cfg->perturb.v, cfg->perturb.n, &st->rules, err,
				sizeof(err));
	if (rc == -EINVAL)
		rl_error(ctx, "option %s", err);
	return rc;
}

static int ert_init(struct rl_ctx *ctx, const void *config, void **state)
{
	const struct ert_config *cfg = config;
	struct ert_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	if (join_words(ctx, "precisions", &cfg->precisions, precision_names,
		       st->only, sizeof(st->only)) < 0 ||
	    join_words(ctx, "levels", &cfg->levels, level_names, st->only,
		       sizeof(st->only)) < 0 ||
	    join_gpus(ctx, &cfg->gpus, st->gpus, sizeof(st->gpus)) < 0)
		goto out_invalid;
	if (!*st->only) {
		rl_error(ctx, "options 'precisions' and 'levels' select nothing");
		goto out_invalid;
	}
	if (!(cfg->plateau_tol_pct > 0 && cfg->plateau_tol_pct < 100) ||
	    cfg->plateau_min_points < 2 || cfg->trials < 0 ||
	    cfg->trials > 1000 || cfg->timeout_s < 0) {
		rl_error(ctx, "options: need 0 < plateau_tol_pct < 100, "
			 "plateau_min_points >= 2, 0 <= trials <= 1000, "
			 "timeout_s >= 0");
		goto out_invalid;
	}
	if (init_rules(ctx, cfg, st) < 0)
		goto out_invalid;
	*state = st;
	return 0;
out_invalid:
	free(st);
	return -EINVAL;
}

static void ert_fini(void *state)
{
	struct ert_state *st = state;

	if (st)
		replay_rules_release(&st->rules);
	free(st);
}

/* ---- running ert-bench ---- */

static int out_path(struct rl_ctx *ctx, const char *name, char *buf,
		    size_t size)
{
	int n = snprintf(buf, size, "%s/%s", ctx->out_dir, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Build ert-bench's argv into argv (borrowing strings). */
static void bench_argv(const struct ert_config *cfg, struct ert_state *st,
		       char *prog, char *trials,
		       size_t tsize, char **argv)
{
	int n = 0;

	argv[n++] = prog;
	argv[n++] = (char *)"--only";
	argv[n++] = st->only;
	if (cfg->quick)
		argv[n++] = (char *)"--quick";
	if (cfg->trials > 0) {
		snprintf(trials, tsize, "%ld", cfg->trials);
		argv[n++] = (char *)"--trials";
		argv[n++] = trials;
	}
	if (*st->gpus) {
		argv[n++] = (char *)"--gpu";
		argv[n++] = st->gpus;
	}
	argv[n] = NULL;
}

/* Say why ert-bench did not succeed; returns the result for the step. */
static enum rl_result bench_failed(struct rl_ctx *ctx, const char *prog,
				   int rc, int status, const char *err_path)
{
	char last[512] = "";

	if (rc == -ENOENT || rc == -EACCES) {
		rl_error(ctx, "cannot run ert-bench '%s': %s (set option 'bench' "
			 "or ROOFLINE_LIBEXEC)", prog, strerror(-rc));
		return RL_FAIL;
	}
	if (rc == -ETIMEDOUT) {
		rl_error(ctx, "ert-bench '%s' killed after the step's timeout_s",
			 prog);
		return RL_RETRY;
	}
	if (rc < 0) {
		rl_error(ctx, "cannot run ert-bench '%s': %s", prog, strerror(-rc));
		return RL_RETRY;
	}
	benchio_last_line(err_path, last, sizeof(last));
	if (status == ERT_EXIT_NODEV)
		rl_error(ctx, "no GPU on node %s: %s", ctx->node ? ctx->node : "?",
			 *last ? last : "ert-bench found no CUDA device");
	else
		rl_error(ctx, "ert-bench '%s' failed with exit status %d: %s", prog,
			 status, *last ? last : "(nothing on stderr)");
	return RL_FAIL;
}

static enum rl_result run_bench(struct rl_ctx *ctx,
				const struct ert_config *cfg,
				struct ert_state *st, const char *raw,
				const char *err_path)
{
	char *prog = benchio_resolve(cfg->bench, "ert-bench");
	char *argv[ERT_MAX_ARGS], trials[32];
	enum rl_result res = RL_OK;
	int status = 0, rc;

	if (!prog)
		return RL_RETRY;
	bench_argv(cfg, st, prog, trials, sizeof(trials), argv);
	rl_info(ctx, "running %s --only %s%s%s%s", prog, st->only,
		cfg->quick ? " --quick" : "", *st->gpus ? " --gpu " : "",
		st->gpus);
	rc = benchio_run(argv, raw, err_path, cfg->timeout_s, &status);
	if (rc < 0 || status != 0)
		res = bench_failed(ctx, prog, rc, status, err_path);
	free(prog);
	return res;
}

/* Copy a recorded output to ert-raw.tsv, so a replayed step looks the same. */
static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "r"), *out;
	char buf[65536];
	size_t n;
	int err = 0;

	if (!in)
		return -errno;
	out = fopen(to, "w");
	if (!out) {
		err = -errno;
		fclose(in);
		return err;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			err = -EIO;
	if (ferror(in))
		err = -EIO;
	fclose(in);
	if (fclose(out) != 0 && !err)
		err = -EIO;
	return err;
}

/* ---- from ert-bench's output to records ---- */

#define ERT_MAX_POINTS 256

struct series {
	struct plateau_point pts[ERT_MAX_POINTS];
	const struct benchio_line *lines[ERT_MAX_POINTS];
	size_t n;
	struct plateau p[ERT_MAX_PLATEAUS];
	size_t np;
};

/* One GPU of the output; the series are large, so it lives on the heap. */
struct gpu_view {
	const struct benchio_line *attr;
	const char *index;
	struct series ca, cg;
	const struct plateau *l1, *l2, *hbm;
	const struct replay_gpu *rg;      /* replaying: as which GPU, else NULL */
	const struct replay_rules *rules;
	unsigned long perturbed;          /* rules that changed a record */
	/* every GPU of the output (a p2p line's peer is one of them) and,
	 * replaying as the job, the job's GPU indexes in the same order */
	const struct benchio_line *const *attrs;
	size_t nattr;
	const long *job_idx;
	size_t njob;
};

static int is_gpu_line(const struct benchio_line *l, const char *type,
		       const char *index)
{
	const char *g = benchio_get(l, "gpu");

	return !strcmp(l->type, type) && g && !strcmp(g, index);
}

static double get_or(const struct benchio_line *l, const char *key, double dflt)
{
	double v;

	return benchio_get_double(l, key, &v) == 0 ? v : dflt;
}

/* Collect the `sweep` lines of one series; ert-bench prints them sorted. */
static void collect_series(struct rl_ctx *ctx, const struct benchio_doc *doc,
			   const char *index, const char *name,
			   struct series *s)
{
	for (size_t i = 0; i < doc->n; i++) {
		const struct benchio_line *l = &doc->lines[i];
		const char *ser = benchio_get(l, "series");
		struct plateau_point pt;

		if (!is_gpu_line(l, "sweep", index) || !ser || strcmp(ser, name))
			continue;
		if (s->n == ERT_MAX_POINTS) {
			rl_warn(ctx, "gpu %s: sweep %s: more than %d points, rest "
				"ignored", index, name, ERT_MAX_POINTS);
			return;
		}
		if (benchio_get_double(l, "ws_bytes", &pt.ws) < 0 ||
		    benchio_get_double(l, "value", &pt.value) < 0) {
			rl_warn(ctx, "ert-raw.tsv:%zu: sweep line without ws_bytes "
				"or value, ignored", l->lineno);
			continue;
		}
		pt.min = get_or(l, "min", 0);
		pt.max = get_or(l, "max", 0);
		s->lines[s->n] = l;
		s->pts[s->n++] = pt;
	}
}

static void find_plateaus(struct rl_ctx *ctx, const struct ert_config *cfg,
			  const char *index, const char *name, struct series *s)
{
	struct plateau_rule rule = { cfg->plateau_tol_pct / 100,
				     (size_t)cfg->plateau_min_points };
	int n;

	if (s->n == 0)
		return;
	n = plateau_find(s->pts, s->n, &rule, s->p, ERT_MAX_PLATEAUS);
	if (n < 0) {
		rl_warn(ctx, "gpu %s: sweep %s: no plateaus: %s", index, name,
			n == -EINVAL ? "sizes not ascending or a value <= 0"
				     : strerror(-n));
		return;
	}
	s->np = (size_t)n;
	for (size_t i = 0; i < s->np; i++)
		rl_debug(ctx, "gpu %s: sweep %s: plateau %.4g B/s over %.0f-%.0f "
			 "B (%zu points)", index, name, s->p[i].value,
			 s->p[i].ws_min, s->p[i].ws_max, s->p[i].npoints);
}

/* Find the plateaus and pick each level's (rule in the file comment). */
static void analyse_gpu(struct rl_ctx *ctx, const struct ert_config *cfg,
			const struct benchio_doc *doc, struct gpu_view *gv)
{
	double l2 = get_or(gv->attr, "l2_bytes", 0);
	double l1 = get_or(gv->attr, "sm_count", 0) *
		    get_or(gv->attr, "smem_per_sm_bytes", 0);

	collect_series(ctx, doc, gv->index, "ca", &gv->ca);
	collect_series(ctx, doc, gv->index, "cg", &gv->cg);
	find_plateaus(ctx, cfg, gv->index, "ca", &gv->ca);
	find_plateaus(ctx, cfg, gv->index, "cg", &gv->cg);
	if (l2 > 0) {
		gv->l2 = plateau_pick(gv->cg.p, gv->cg.np, l2 / 16, l2,
				      PLATEAU_MOST_INSIDE);
		gv->hbm = plateau_pick(gv->cg.p, gv->cg.np, l2, 1e300,
				       PLATEAU_LARGEST_WS);
	}
	if (l1 > 0)
		gv->l1 = plateau_pick(gv->ca.p, gv->ca.np, 0, l1,
				      PLATEAU_WIDEST);
}

/* The replay noise's seed of GPU idx in this run on this node: never 0. */
static unsigned long noise_seed(const struct rl_ctx *ctx, long idx)
{
	unsigned long h = 1469598103934665603ul; /* FNV-1a */

	for (const char *c = ctx->node; c && *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ul;
	h = (h ^ (unsigned long)ctx->run_id) * 1099511628211ul;
	h = (h ^ (unsigned long)idx) * 1099511628211ul;
	return h ? h : 1;
}

/* Emit r, as the replayed GPU with its perturbations when replaying. */
static int emit_rec(struct rl_ctx *ctx, struct gpu_view *gv, const char *kind,
		    const struct benchio_rec *r)
{
	struct benchio_rec *out;
	unsigned long changed = 0;
	int rc;

	if (r->overflow) {
		rl_error(ctx, "a %s record does not fit the record buffer", kind);
		return -E2BIG;
	}
	if (!gv->rg)
		return rl_emit(ctx, kind, r->f);
	out = malloc(sizeof(*out));
	if (!out)
		return -ENOMEM;
	rc = replay_apply(gv->rg, gv->rules, 1, kind, r, out, &changed);
	if (rc < 0)
		rl_error(ctx, "a replayed %s record does not fit the record "
			 "buffer", kind);
	else
		rc = rl_emit(ctx, kind, out->f);
	gv->perturbed |= changed;
	free(out);
	return rc;
}

/* The statistics fields: value = median, spread from min/max. */
static void add_stats(struct benchio_rec *r, double med, double lo, double hi,
		      double trials, const char *unit)
{
	benchio_rec_addd(r, "value", med);
	benchio_rec_add(r, "unit", unit);
	benchio_rec_addl(r, "trials", (long long)trials);
	benchio_rec_addd(r, "min", lo);
	benchio_rec_addd(r, "median", med);
	benchio_rec_addd(r, "max", hi);
	benchio_rec_addd(r, "spread_pct", med > 0 ? (hi - lo) / med * 100 : 0);
}

/* The working-set range a dedicated kernel's figure is reported with. */
static const struct plateau *range_of(const struct gpu_view *gv,
				      const char *name)
{
	if (!strncmp(name, "hbm_", 4))
		return gv->hbm;
	if (!strcmp(name, "l1"))
		return gv->l1;
	if (!strcmp(name, "l2"))
		return gv->l2;
	return NULL;
}

/*
 * The peer fields of a p2p line (ert-bench --p2p): peer_index, peer_uuid
 * (from the peer's attr line), link (the `nvidia-smi topo -m` label) and
 * directions.  Replaying as the job, the peer is the job's GPU in the
 * recorded peer's place, under its replay UUID.  Returns 1 when the record
 * is to be left out (replayed on a job without a GPU in the peer's place),
 * else 0.
 */
static int add_peer(struct rl_ctx *ctx, struct gpu_view *gv,
		    const struct benchio_line *l, struct benchio_rec *r)
{
	const char *peer = benchio_get(l, "peer");
	const struct benchio_line *pa = NULL;
	size_t m = 0;

	for (; m < gv->nattr && !pa; m++)
		if (!strcmp(benchio_get(gv->attrs[m], "gpu"), peer))
			pa = gv->attrs[m];
	if (!pa) {
		rl_warn(ctx, "ert-raw.tsv:%zu: peer %s has no attr line", l->lineno,
			peer);
		benchio_rec_add(r, "peer_index", peer);
	} else if (gv->rg && !gv->rg->as_recorded) {
		struct replay_gpu prg = *gv->rg;
		char uuid[256];

		if (m - 1 >= gv->njob) {
			rl_debug(ctx, "ert-raw.tsv:%zu: peer %s: the job has no GPU "
				 "in its place, left out", l->lineno, peer);
			return 1;
		}
		prg.index = gv->job_idx[m - 1];
		prg.recorded_uuid = benchio_get(pa, "uuid");
		prg.recorded_index = peer;
		replay_uuid(&prg, uuid, sizeof(uuid));
		benchio_rec_addl(r, "peer_index", prg.index);
		benchio_rec_add(r, "peer_uuid", uuid);
	} else {
		benchio_rec_add(r, "peer_index", peer);
		benchio_rec_add(r, "peer_uuid", benchio_get(pa, "uuid"));
	}
	if (benchio_get(l, "topo") && *benchio_get(l, "topo"))
		benchio_rec_add(r, "link", benchio_get(l, "topo"));
	benchio_rec_add(r, "directions", benchio_get(l, "directions"));
	return 0;
}

static int emit_kernel_ceiling(struct rl_ctx *ctx, struct gpu_view *gv,
			       const struct benchio_line *l)
{
	const char *name = benchio_get(l, "name"), *kind = benchio_get(l, "kind");
	const char *check = benchio_get(l, "check");
	const struct plateau *p;
	struct benchio_rec r;
	double med, lo, hi;

	if (!name || !kind || benchio_get_double(l, "median", &med) < 0 ||
	    benchio_get_double(l, "min", &lo) < 0 ||
	    benchio_get_double(l, "max", &hi) < 0) {
		rl_warn(ctx, "ert-raw.tsv:%zu: incomplete ceiling line, ignored",
			l->lineno);
		return 0;
	}
	if (check && !strcmp(check, "fail")) {
		rl_error(ctx, "gpu %s: %s: ert-bench found a wrong result, not "
			 "reported", gv->index, name);
		return 0;
	}
	benchio_rec_init(&r);
	benchio_rec_add_gpu(&r, gv->attr);
	benchio_rec_add(&r, "sm_clock_mhz", benchio_get(l, "sm_clock_mhz"));
	benchio_rec_add(&r, "mem_clock_mhz", benchio_get(l, "mem_clock_mhz"));
	benchio_rec_add(&r, "method", "empirical");
	benchio_rec_add(&r, "name", name);
	benchio_rec_add(&r, "kind", kind);
	add_stats(&r, med, lo, hi, get_or(l, "trials", 0),
		  benchio_get(l, "unit"));
	benchio_rec_add(&r, "geometry", benchio_get(l, "geometry"));
	/* what may explain a figure (fleet's likely causes) */
	benchio_rec_add(&r, "sm_clock_max_mhz", benchio_get(gv->attr, "sm_clock_max_mhz"));
	benchio_rec_add(&r, "throttle", benchio_get(l, "throttle"));
	benchio_rec_add(&r, "power_w", benchio_get(l, "power_w"));
	p = range_of(gv, name);
	if (p) {
		benchio_rec_addd(&r, "ws_min_bytes", p->ws_min);
		benchio_rec_addd(&r, "ws_max_bytes", p->ws_max);
	} else if (!strcmp(kind, "bandwidth")) {
		benchio_rec_add(&r, "ws_min_bytes", benchio_get(l, "ws_bytes"));
		benchio_rec_add(&r, "ws_max_bytes", benchio_get(l, "ws_bytes"));
	}
	if (benchio_get(l, "mode") && *benchio_get(l, "mode"))
		benchio_rec_add(&r, "mode", benchio_get(l, "mode"));
	if (benchio_get(l, "peer") && add_peer(ctx, gv, l, &r))
		return 0;
	benchio_rec_add(&r, "source", "kernel");
	return emit_rec(ctx, gv, "ceiling", &r);
}

/* Median of a field over lines[first..last] (at most ERT_MAX_POINTS). */
static double median_field(const struct benchio_line *const *lines,
			   size_t first, size_t last, const char *key,
			   double dflt)
{
	double v[ERT_MAX_POINTS];
	size_t n = 0;

	for (size_t i = first; i <= last; i++) {
		double x = get_or(lines[i], key, 0);

		if (x > 0) {
			size_t j = n++;

			for (; j > 0 && v[j - 1] > x; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
	}
	if (n == 0)
		return dflt;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int emit_l2(struct rl_ctx *ctx, struct gpu_view *gv)
{
	const struct plateau *p = gv->l2;
	const struct benchio_line *first = gv->cg.lines[p->first];
	struct benchio_rec r;
	char geo[512];

	snprintf(geo, sizeof(geo), "sweep series=cg points=%zu %s", p->npoints,
		 benchio_get(first, "geometry") ? benchio_get(first, "geometry")
						: "");
	benchio_rec_init(&r);
	benchio_rec_add_gpu(&r, gv->attr);
	benchio_rec_addd(&r, "sm_clock_mhz",
			 median_field(gv->cg.lines, p->first, p->last,
				      "sm_clock_mhz", 0));
	benchio_rec_addd(&r, "mem_clock_mhz",
			 median_field(gv->cg.lines, p->first, p->last,
				      "mem_clock_mhz",
				      get_or(gv->attr, "mem_clock_max_mhz", 0)));
	benchio_rec_add(&r, "method", "empirical");
	benchio_rec_add(&r, "name", "l2");
	benchio_rec_add(&r, "kind", "bandwidth");
	add_stats(&r, p->value, p->min, p->max, get_or(first, "trials", 0),
		  "B/s");
	benchio_rec_add(&r, "geometry", geo);
	benchio_rec_addd(&r, "ws_min_bytes", p->ws_min);
	benchio_rec_addd(&r, "ws_max_bytes", p->ws_max);
	benchio_rec_add(&r, "source", "sweep");
	return emit_rec(ctx, gv, "ceiling", &r);
}

/* The values of key on lines[0..n), comma-separated; a line without it
 * gives an empty item (caller frees).  NULL when out of memory, or with
 * *comma set when a value holds a comma (the list could not be read back). */
static char *join_field(const struct benchio_line *const *lines, size_t n,
			const char *key, int *comma)
{
	size_t len = 1;
	char *s, *p;

	for (size_t i = 0; i < n; i++) {
		const char *v = benchio_get(lines[i], key);

		if (v && strchr(v, ',')) {
			*comma = 1;
			return NULL;
		}
		len += (v ? strlen(v) : 0) + 1;
	}
	s = p = malloc(len);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *v = benchio_get(lines[i], key);
		size_t vl = v ? strlen(v) : 0;

		if (i)
			*p++ = ',';
		memcpy(p, v ? v : "", vl);
		p += vl;
	}
	*p = '\0';
	return s;
}

static int same_series(const struct benchio_line *a, const struct benchio_line *b)
{
	const char *x = benchio_get(a, "series"), *y = benchio_get(b, "series");

	return !strcmp(x ? x : "", y ? y : "");
}

/*
 * One `sweep` record of the n points of one series (lines, in ert-bench's
 * order).  A series too long for a record, or with a comma in a value, is
 * left out with a warning: its points stay in ert-raw.tsv, and no figure
 * depends on the record.
 */
static int emit_sweep_series(struct rl_ctx *ctx, struct gpu_view *gv,
			     const struct benchio_line *const *lines, size_t n)
{
	static const char *const lists[] = { "ws_bytes", "level_guess", "value",
					     "min", "max", "trials", NULL };
	const char *series = benchio_get(lines[0], "series");
	struct benchio_rec *r = malloc(sizeof(*r));
	int rc = 0, comma = 0;

	if (!r)
		return -ENOMEM;
	benchio_rec_init(r);
	benchio_rec_add(r, "gpu_index", gv->index);
	benchio_rec_add(r, "gpu_uuid", benchio_get(gv->attr, "uuid"));
	benchio_rec_add(r, "series", series);
	benchio_rec_add(r, "unit", benchio_get(lines[0], "unit"));
	benchio_rec_addl(r, "points", (long long)n);
	for (int k = 0; lists[k] && rc == 0 && !comma; k++) {
		char *v = join_field(lines, n, lists[k], &comma);

		if (v)
			benchio_rec_add(r, lists[k], v);
		else if (!comma)
			rc = -ENOMEM;
		free(v);
	}
	if (comma)
		rl_warn(ctx, "gpu %s: sweep %s: a value holds a comma; left out "
			"(ert-raw.tsv has it)", gv->index, series ? series : "");
	else if (rc == 0 && r->overflow)
		rl_warn(ctx, "gpu %s: sweep %s: %zu points do not fit one record; "
			"left out (ert-raw.tsv has them)", gv->index,
			series ? series : "", n);
	else if (rc == 0)
		rc = emit_rec(ctx, gv, "sweep", r);
	free(r);
	return rc;
}

/* The GPU's sweep lines, one record per series, in order of appearance:
 * each pass takes the series of the first line left, the rest stay. */
static int emit_sweeps(struct rl_ctx *ctx, struct gpu_view *gv,
		       const struct benchio_doc *doc)
{
	size_t cap = doc->n ? doc->n : 1, nleft = 0;
	const struct benchio_line **left = malloc(cap * sizeof(*left));
	const struct benchio_line **pts = malloc(cap * sizeof(*pts));
	int rc = left && pts ? 0 : -ENOMEM;

	for (size_t i = 0; i < doc->n && rc == 0; i++)
		if (is_gpu_line(&doc->lines[i], "sweep", gv->index))
			left[nleft++] = &doc->lines[i];
	while (nleft && rc == 0) {
		const struct benchio_line *first = left[0];
		size_t n = 0, kept = 0;

		for (size_t j = 0; j < nleft; j++) {
			if (same_series(left[j], first))
				pts[n++] = left[j];
			else
				left[kept++] = left[j];
		}
		nleft = kept;
		rc = emit_sweep_series(ctx, gv, pts, n);
	}
	free(left);
	free(pts);
	return rc;
}

static int emit_gpu(struct rl_ctx *ctx, const struct ert_config *cfg,
		    const struct benchio_doc *doc, struct gpu_view *gv)
{
	size_t ceilings = 0;
	int rc = 0, l2_kernel = 0;

	analyse_gpu(ctx, cfg, doc, gv);
	for (size_t i = 0; i < doc->n && rc == 0; i++)
		if (is_gpu_line(&doc->lines[i], "ceiling", gv->index)) {
			const char *name = benchio_get(&doc->lines[i], "name");

			l2_kernel |= name && !strcmp(name, "l2");
			rc = emit_kernel_ceiling(ctx, gv, &doc->lines[i]);
			ceilings++;
		}
	if (rc == 0 && l2_kernel) {
		/* measured inside the plateau: already emitted */
	} else if (rc == 0 && gv->l2) {
		rc = emit_l2(ctx, gv);
		ceilings++;
	} else if (rc == 0 && gv->cg.n) {
		rl_warn(ctx, "gpu %s: no L2 plateau in the sweep", gv->index);
	}
	if (rc == 0)
		rc = emit_sweeps(ctx, gv, doc);
	if (rc == 0)
		rl_info(ctx, "gpu %s (%s): %zu ceilings; L2 plateau %.4g B/s over "
			"%.0f-%.0f B", gv->index, benchio_get(gv->attr, "name"),
			ceilings, gv->l2 ? gv->l2->value : 0,
			gv->l2 ? gv->l2->ws_min : 0, gv->l2 ? gv->l2->ws_max : 0);
	return rc;
}

static void log_gpu_time(struct rl_ctx *ctx, const struct benchio_doc *doc)
{
	for (size_t i = 0; i < doc->n; i++)
		if (!strcmp(doc->lines[i].type, "gpu_done"))
			rl_info(ctx, "gpu %s: ert-bench GPU time %s s, wall %s s",
				benchio_get(&doc->lines[i], "gpu"),
				benchio_get(&doc->lines[i], "gpu_time_s"),
				benchio_get(&doc->lines[i], "wall_s"));
}

/* The output's attr lines that name their GPU (at most max); their count. */
static size_t attr_lines(struct rl_ctx *ctx, const struct benchio_doc *doc,
			 const struct benchio_line **attrs, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < doc->n && n < max; i++) {
		const struct benchio_line *l = &doc->lines[i];

		if (strcmp(l->type, "attr"))
			continue;
		if (!benchio_get(l, "gpu"))
			rl_warn(ctx, "ert-raw.tsv:%zu: attr line without gpu",
				l->lineno);
		else
			attrs[n++] = l;
	}
	return n;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Replay: the recorded GPUs, in turn, once per GPU of the job (option gpus,
 * else the Slurm job's, else the recording's own indexes).
 */
static int emit_replayed(struct rl_ctx *ctx, const struct ert_config *cfg,
			 struct ert_state *st, const struct benchio_doc *doc,
			 const struct benchio_line **attrs, size_t nattr,
			 struct gpu_view *gv)
{
	int as_recorded = cfg->replay_as && !strcmp(cfg->replay_as, "recorded");
	long idx[ERT_MAX_GPUS];
	size_t n = as_recorded ? 0
		 : *st->gpus ? replay_job_gpus(st->gpus, NULL, idx, ERT_MAX_GPUS)
			     : replay_job_gpus(getenv("SLURM_JOB_GPUS"),
					       getenv("CUDA_VISIBLE_DEVICES"),
					       idx, ERT_MAX_GPUS);
	int rc = 0;

	if (n == 0)
		for (; n < nattr; n++)
			idx[n] = strtol(benchio_get(attrs[n], "gpu"), NULL, 10);
	for (size_t j = 0; j < n && rc == 0; j++) {
		const struct benchio_line *a = attrs[j % nattr];
		struct replay_gpu rg = { ctx->node, idx[j], benchio_get(a, "uuid"),
					 benchio_get(a, "gpu"),
					 base_name(cfg->replay), as_recorded,
					 cfg->noise ? noise_seed(ctx, idx[j]) : 0 };

		memset(gv, 0, sizeof(*gv));
		gv->attr = a;
		gv->index = rg.recorded_index;
		gv->rg = &rg;
		gv->rules = &st->rules;
		gv->attrs = attrs;
		gv->nattr = nattr;
		gv->job_idx = idx;
		gv->njob = n;
		rl_info(ctx, "gpu %ld: replaying gpu %s of '%s' (%s)", idx[j],
			rg.recorded_index, rg.recording, rg.recorded_uuid);
		rc = emit_gpu(ctx, cfg, doc, gv);
		for (size_t r = 0; r < st->rules.n && r < 32; r++)
			if (gv->perturbed & (1ul << r))
				rl_info(ctx, "gpu %ld: perturbed: %s", idx[j],
					st->rules.v[r].text);
	}
	return rc;
}

static enum rl_result emit_all(struct rl_ctx *ctx, const struct ert_config *cfg,
			       struct ert_state *st,
			       const struct benchio_doc *doc)
{
	const struct benchio_line *attrs[ERT_MAX_GPUS];
	struct gpu_view *gv = malloc(sizeof(*gv));
	size_t nattr = attr_lines(ctx, doc, attrs, ERT_MAX_GPUS);
	int rc = 0;

	if (!gv)
		return RL_RETRY;
	if (nattr && cfg->replay) {
		rc = emit_replayed(ctx, cfg, st, doc, attrs, nattr, gv);
	} else {
		for (size_t i = 0; i < nattr && rc == 0; i++) {
			memset(gv, 0, sizeof(*gv));
			gv->attr = attrs[i];
			gv->index = benchio_get(attrs[i], "gpu");
			gv->attrs = attrs;
			gv->nattr = nattr;
			rc = emit_gpu(ctx, cfg, doc, gv);
		}
	}
	free(gv);
	if (rc < 0) {
		rl_error(ctx, "cannot emit records: %s", strerror(-rc));
		return RL_RETRY;
	}
	if (nattr == 0) {
		rl_error(ctx, "ert-bench reported no GPU (no attr line in "
			 "ert-raw.tsv)");
		return RL_FAIL;
	}
	log_gpu_time(ctx, doc);
	return RL_OK;
}

/*
 * Option p2p: `nvidia-smi topo -m` into topo.txt (a warning and no labels
 * when it fails), then ert-bench --p2p into ert-p2p.tsv (stderr
 * ert-p2p-stderr.log), its records emitted.  Exit status 2 with "needs 2
 * GPUs" (a node of one GPU) is a warning, not a failure.
 */
/* Load the ert-bench output at raw and emit its records (emit_all). */
static enum rl_result emit_file(struct rl_ctx *ctx, const struct ert_config *cfg,
				void *state, const char *raw)
{
	struct benchio_doc doc;
	enum rl_result res;
	size_t bad = 0;
	int rc = benchio_load(raw, &doc, &bad);

	if (rc < 0) {
		if (rc == -EINVAL)
			rl_error(ctx, "%s:%zu: not an ert-bench record", raw, bad);
		else
			rl_error(ctx, "%s: %s", raw, strerror(-rc));
		return RL_FAIL;
	}
	res = emit_all(ctx, cfg, state, &doc);
	benchio_release(&doc);
	return res;
}

static enum rl_result run_p2p(struct rl_ctx *ctx, const struct ert_config *cfg,
			      struct ert_state *st)
{
	char raw[4096], err_path[4096], topo[4096], last[512] = "";
	char *prog = benchio_resolve(cfg->bench, "ert-bench");
	char *smi[] = { (char *)"nvidia-smi", (char *)"topo", (char *)"-m", NULL };
	char *argv[ERT_MAX_ARGS];
	int n = 0, status = 0, rc, have_topo;
	enum rl_result res;

	if (!prog)
		return RL_RETRY;
	if (out_path(ctx, "ert-p2p.tsv", raw, sizeof(raw)) < 0 ||
	    out_path(ctx, "ert-p2p-stderr.log", err_path, sizeof(err_path)) < 0 ||
	    out_path(ctx, "topo.txt", topo, sizeof(topo)) < 0) {
		free(prog);
		rl_error(ctx, "output directory path too long: '%s'", ctx->out_dir);
		return RL_FAIL;
	}
	rc = benchio_run(smi, topo, err_path, 60, &status);
	have_topo = rc == 0 && status == 0;
	if (!have_topo)
		rl_warn(ctx, "nvidia-smi topo -m: %s: the pairs get no link label",
			rc < 0 ? strerror(-rc) : "failed");
	argv[n++] = prog;
	argv[n++] = (char *)"--p2p";
	if (cfg->quick)
		argv[n++] = (char *)"--quick";
	if (*st->gpus) {
		argv[n++] = (char *)"--gpu";
		argv[n++] = st->gpus;
	}
	if (have_topo) {
		argv[n++] = (char *)"--topo";
		argv[n++] = topo;
	}
	argv[n] = NULL;
	rl_info(ctx, "running %s --p2p%s%s", prog, cfg->quick ? " --quick" : "",
		have_topo ? " --topo topo.txt" : "");
	rc = benchio_run(argv, raw, err_path, cfg->timeout_s, &status);
	if (rc == 0 && status == 2) {
		benchio_last_line(err_path, last, sizeof(last));
		if (strstr(last, "needs 2 GPUs")) {
			rl_warn(ctx, "no peer-to-peer figures: %s", last);
			free(prog);
			return RL_OK;
		}
	}
	if (rc < 0 || status != 0) {
		res = bench_failed(ctx, prog, rc, status, err_path);
		free(prog);
		return res;
	}
	free(prog);
	return emit_file(ctx, cfg, st, raw);
}

static enum rl_result ert_run(struct rl_ctx *ctx, const void *config,
			      void *state)
{
	const struct ert_config *cfg = config;
	char raw[4096], err_path[4096];
	enum rl_result res;
	int rc;

	if (out_path(ctx, "ert-raw.tsv", raw, sizeof(raw)) < 0 ||
	    out_path(ctx, "ert-stderr.log", err_path, sizeof(err_path)) < 0) {
		rl_error(ctx, "output directory path too long: '%s'", ctx->out_dir);
		return RL_FAIL;
	}
	if (cfg->replay) {
		rc = copy_file(cfg->replay, raw);
		if (rc < 0) {
			rl_error(ctx, "replay '%s': %s", cfg->replay, strerror(-rc));
			return RL_FAIL;
		}
		rl_info(ctx, "replaying recorded ert-bench output '%s'",
			cfg->replay);
	} else {
		res = run_bench(ctx, cfg, state, raw, err_path);
		if (res != RL_OK)
			return res;
	}
	res = emit_file(ctx, cfg, state, raw);
	if (res == RL_OK && cfg->p2p && !cfg->replay)
		res = run_p2p(ctx, cfg, state);
	return res;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "ert",
	.version = "1.0",
	.stage = RL_STAGE_CEILINGS,
	.summary = "empirical ceilings (FP64/FP32/FP16, tensor, HBM, L2, L1, "
		   "shared) measured by ert-bench on every GPU of the node",
	.options = ert_options,
	.config_size = sizeof(struct ert_config),
	.init = ert_init,
	.run = ert_run,
	.fini = ert_fini,
};
