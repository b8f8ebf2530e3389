/*
 * spec - theoretical ceilings from device attributes and a per-architecture
 * table that is data (etc/spec-ceilings.tsv; its header states the format).
 *
 * For every GPU of the node (`ert-bench --attributes`, or a recorded copy of
 * that output with option `attributes`) and every table row of the GPU's
 * compute capability, the value is
 *
 *     per_clock x scale x clock
 *
 * scale: the SM count ("sm"), the bus width in bytes ("bus") or 1 ("chip");
 * clock: the max SM clock ("sm") or the memory clock ("mem"), in Hz.  So
 * FP64 FMA on an H100 SXM is 128 FLOP/clk/SM x 132 SM x 1.98 GHz = 33.45
 * TFLOP/s, and its HBM3 5120 bit / 8 x 2 x 2.619 GHz = 3.352 TB/s.  Emits one
 * `ceiling` record per row and GPU, with method=theoretical, the clocks used,
 * value = min = median = max, trials 0, spread 0, and the formula as the
 * geometry.  A GPU whose cc has no row fails the step, naming the cc.
 *
 * With a recorded `attributes` output, the recorded GPUs are replayed once
 * per GPU the Slurm job was given (as ert does with `replay`, ert/replay.h):
 * each under that GPU's index, a replay UUID and a `synthetic` label, with
 * the identity changes (driver, cuda) of option `perturb`; value changes
 * are changes of what was measured and leave theoretical ceilings alone.
 * With `replay_as: recorded`, the recorded GPUs as themselves, labelled.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ert/benchio.h"
#include "ert/replay.h"
#include "rooflined/plugin.h"

#define SPEC_EXIT_NODEV 3
#define SPEC_MAX_GPUS 64

struct spec_config {
	char *bench;
	char *table;
	char *attributes;
	struct rl_strlist gpus;
	long timeout_s;
	struct rl_strlist perturb;
	char *replay_as;
};

static const struct rl_option spec_options[] = {
	{ "bench", RL_OPT_STRING, NULL, offsetof(struct spec_config, bench),
	  "ert-bench program (default: $ROOFLINE_LIBEXEC/ert-bench, then PATH)", 0 },
	{ "table", RL_OPT_STRING, NULL, offsetof(struct spec_config, table),
	  "per-architecture table (default: $ROOFLINE_ETC/spec-ceilings.tsv, "
	  "then etc/spec-ceilings.tsv)", 0 },
	{ "attributes", RL_OPT_STRING, NULL,
	  offsetof(struct spec_config, attributes),
	  "recorded `ert-bench --attributes` output to use instead of running it", 0 },
	{ "gpus", RL_OPT_LIST, NULL, offsetof(struct spec_config, gpus),
	  "GPU indexes (default: every GPU)", 0 },
	{ "timeout_s", RL_OPT_INT, "120", offsetof(struct spec_config, timeout_s),
	  "kill ert-bench --attributes after this many seconds", 0 },
	{ "perturb", RL_OPT_LIST, NULL, offsetof(struct spec_config, perturb),
	  "with attributes: per-GPU changes as ert's (only driver= and cuda= "
	  "apply to theoretical ceilings; docs/fleet.md)", 0 },
	{ "replay_as", RL_OPT_STRING, "job", offsetof(struct spec_config, replay_as),
	  "with attributes: 'job' (once per GPU of the Slurm job, replay UUIDs) "
	  "or 'recorded' (the recorded GPUs as themselves)", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

enum spec_scale { SCALE_SM, SCALE_BUS, SCALE_CHIP };
enum spec_clock { CLOCK_SM, CLOCK_MEM };

struct spec_row {
	char cc[16];
	char name[32];
	char kind[16];
	char unit[16];
	double per_clock;
	enum spec_scale scale;
	enum spec_clock clock;
};

/* What the formula needs of a GPU. */
struct spec_gpu {
	double sm_count;
	double sm_mhz;
	double mem_mhz;
	double bus_bits;
};

struct spec_table {
	struct spec_row *rows;
	size_t n;
};

/* ---- the table ---- */

static int copy_word(char *dst, size_t size, const char *src)
{
	if (!*src || strlen(src) >= size)
		return -EINVAL;
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

/* Parse one row's TAB-separated words (the note is optional). */
static int parse_row(char *line, struct spec_row *r)
{
	char *w[8], *save = NULL, *end;
	int n = 0;

	for (char *t = strtok_r(line, "\t", &save); t && n < 8;
	     t = strtok_r(NULL, "\t", &save))
		w[n++] = t;
	if (n < 7 || copy_word(r->cc, sizeof(r->cc), w[0]) ||
	    copy_word(r->name, sizeof(r->name), w[1]) ||
	    copy_word(r->kind, sizeof(r->kind), w[2]) ||
	    copy_word(r->unit, sizeof(r->unit), w[3]))
		return -EINVAL;
	errno = 0;
	r->per_clock = strtod(w[4], &end);
	if (errno || end == w[4] || *end || !(r->per_clock > 0))
		return -EINVAL;
	if (!strcmp(w[5], "sm"))
		r->scale = SCALE_SM;
	else if (!strcmp(w[5], "bus"))
		r->scale = SCALE_BUS;
	else if (!strcmp(w[5], "chip"))
		r->scale = SCALE_CHIP;
	else
		return -EINVAL;
	if (!strcmp(w[6], "sm"))
		r->clock = CLOCK_SM;
	else if (!strcmp(w[6], "mem"))
		r->clock = CLOCK_MEM;
	else
		return -EINVAL;
	return 0;
}

static void spec_table_release(struct spec_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/*
 * Parse the table text in buf (modified in place) into t (caller releases
 * with spec_table_release).  0, -ENOMEM, or -EINVAL with *bad_line set;
 * t is empty after a failure.
 */
static int spec_table_parse(char *buf, struct spec_table *t, size_t *bad_line)
{
	size_t cap = 0, lineno = 0;
	char *line = buf, *next;

	memset(t, 0, sizeof(*t));
	for (; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line[strcspn(line, "\r")] = '\0';
		if (!*line || *line == '#')
			continue;
		if (t->n == cap) {
			struct spec_row *nr = realloc(t->rows,
						      (cap ? cap * 2 : 64) *
						      sizeof(*nr));
			if (!nr) {
				spec_table_release(t);
				return -ENOMEM;
			}
			t->rows = nr;
			cap = cap ? cap * 2 : 64;
		}
		if (parse_row(line, &t->rows[t->n]) < 0) {
			*bad_line = lineno;
			spec_table_release(t);
			return -EINVAL;
		}
		t->n++;
	}
	return 0;
}

/* The theoretical value of row r on GPU g (the formula in the file comment). */
static double spec_value(const struct spec_row *r, const struct spec_gpu *g)
{
	double scale = r->scale == SCALE_SM    ? g->sm_count
		       : r->scale == SCALE_BUS ? g->bus_bits / 8
					       : 1;
	double hz = (r->clock == CLOCK_SM ? g->sm_mhz : g->mem_mhz) * 1e6;

	return r->per_clock * scale * hz;
}

static void spec_formula(const struct spec_row *r, const struct spec_gpu *g,
			 char *buf, size_t size)
{
	const char *unit = r->kind[0] == 'b' ? "B" : !strcmp(r->unit, "OP/s")
							     ? "OP" : "FLOP";

	if (r->scale == SCALE_SM)
		snprintf(buf, size, "%g %s/clk/SM x %g SM x %g MHz", r->per_clock,
			 unit, g->sm_count,
			 r->clock == CLOCK_SM ? g->sm_mhz : g->mem_mhz);
	else if (r->scale == SCALE_BUS)
		snprintf(buf, size, "%g bit / 8 x %g x %g MHz", g->bus_bits,
			 r->per_clock,
			 r->clock == CLOCK_SM ? g->sm_mhz : g->mem_mhz);
	else
		snprintf(buf, size, "%g %s/clk x %g MHz", r->per_clock, unit,
			 r->clock == CLOCK_SM ? g->sm_mhz : g->mem_mhz);
}

/* ---- GPUs ---- */

/* Read the formula's inputs from an attr line; -EINVAL when one is missing. */
static int spec_gpu_from(const struct benchio_line *attr, struct spec_gpu *g)
{
	if (benchio_get_double(attr, "sm_count", &g->sm_count) < 0 ||
	    benchio_get_double(attr, "sm_clock_max_mhz", &g->sm_mhz) < 0 ||
	    benchio_get_double(attr, "mem_clock_max_mhz", &g->mem_mhz) < 0 ||
	    benchio_get_double(attr, "bus_width_bits", &g->bus_bits) < 0)
		return -EINVAL;
	return 0;
}

/* What a replay adds to emitting: as which GPU, with which rules. */
struct spec_replay {
	const struct replay_gpu *rg;  /* NULL: not replaying */
	const struct replay_rules *rules;
};

static int emit_row(struct rl_ctx *ctx, const struct benchio_line *attr,
		    const struct spec_gpu *g, const struct spec_row *r,
		    const struct spec_replay *rp)
{
	double v = spec_value(r, g);
	char formula[256];
	struct benchio_rec rec;

	spec_formula(r, g, formula, sizeof(formula));
	benchio_rec_init(&rec);
	benchio_rec_add_gpu(&rec, attr);
	benchio_rec_addd(&rec, "sm_clock_mhz", g->sm_mhz);
	benchio_rec_addd(&rec, "mem_clock_mhz", g->mem_mhz);
	benchio_rec_add(&rec, "method", "theoretical");
	benchio_rec_add(&rec, "name", r->name);
	benchio_rec_add(&rec, "kind", r->kind);
	benchio_rec_addd(&rec, "value", v);
	benchio_rec_add(&rec, "unit", r->unit);
	benchio_rec_addl(&rec, "trials", 0);
	benchio_rec_addd(&rec, "min", v);
	benchio_rec_addd(&rec, "median", v);
	benchio_rec_addd(&rec, "max", v);
	benchio_rec_addd(&rec, "spread_pct", 0);
	benchio_rec_add(&rec, "geometry", formula);
	benchio_rec_add(&rec, "source", "spec");
	if (rec.overflow)
		return -E2BIG;
	if (rp->rg) {
		struct benchio_rec *out = malloc(sizeof(*out));
		int rc;

		if (!out)
			return -ENOMEM;
		rc = replay_apply(rp->rg, rp->rules, 0, "ceiling", &rec, out,
				  NULL);
		if (rc == 0)
			rc = rl_emit(ctx, "ceiling", out->f);
		free(out);
		return rc;
	}
	return rl_emit(ctx, "ceiling", rec.f);
}

static int gpu_selected(const struct spec_config *cfg, const char *index)
{
	if (cfg->gpus.n == 0)
		return 1;
	for (size_t i = 0; i < cfg->gpus.n; i++)
		if (index && !strcmp(cfg->gpus.v[i], index))
			return 1;
	return 0;
}

/* Emit every row of the GPU's cc; RL_FAIL when it has none. */
static enum rl_result emit_gpu(struct rl_ctx *ctx, const struct spec_table *t,
			       const char *table_path,
			       const struct benchio_line *attr,
			       const struct spec_replay *rp)
{
	const char *cc = benchio_get(attr, "cc"), *idx = benchio_get(attr, "gpu");
	struct spec_gpu g;
	size_t rows = 0;

	if (!cc || spec_gpu_from(attr, &g) < 0) {
		rl_error(ctx, "attributes line %zu lacks cc, sm_count, "
			 "sm_clock_max_mhz, mem_clock_max_mhz or bus_width_bits",
			 attr->lineno);
		return RL_FAIL;
	}
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(t->rows[i].cc, cc))
			continue;
		if (emit_row(ctx, attr, &g, &t->rows[i], rp) < 0) {
			rl_error(ctx, "cannot emit a ceiling record");
			return RL_RETRY;
		}
		rows++;
	}
	if (!rows) {
		rl_error(ctx, "gpu %s (%s): no row for cc %s in '%s'",
			 idx ? idx : "?", benchio_get(attr, "name"), cc, table_path);
		return RL_FAIL;
	}
	rl_info(ctx, "gpu %s (%s, cc %s): %zu theoretical ceilings", idx ? idx : "?",
		benchio_get(attr, "name"), cc, rows);
	return RL_OK;
}

/* ---- run ---- */

static char *table_path(const struct spec_config *cfg)
{
	const char *etc = getenv("ROOFLINE_ETC");
	char *p;

	if (cfg->table)
		return strdup(cfg->table);
	if (etc && *etc && asprintf(&p, "%s/spec-ceilings.tsv", etc) >= 0) {
		FILE *f = fopen(p, "r");

		if (f) {
			fclose(f);
			return p;
		}
		free(p);
	}
	return strdup("etc/spec-ceilings.tsv");
}

static int load_table(struct rl_ctx *ctx, const char *path,
		      struct spec_table *t)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t len, bad = 0;
	int rc;

	if (!f) {
		rl_error(ctx, "ceiling table '%s': %s", path, strerror(errno));
		return -errno;
	}
	/* the table is small: a file over 1 MiB is not one */
	buf = malloc(1 << 20);
	len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	fclose(f);
	if (!buf)
		return -ENOMEM;
	buf[len] = '\0';
	rc = spec_table_parse(buf, t, &bad);
	free(buf);
	if (rc == -EINVAL)
		rl_error(ctx, "%s:%zu: expected cc, name, kind, unit, per_clock, "
			 "scale (sm|bus|chip), clock (sm|mem)", path, bad);
	return rc;
}

/* Get the attributes output into path: run ert-bench or use the recording. */
static enum rl_result get_attributes(struct rl_ctx *ctx,
				     const struct spec_config *cfg,
				     const char *path, const char *err_path)
{
	char *prog, *argv[3], last[512] = "";
	int status = 0, rc;

	if (cfg->attributes)
		return RL_OK;
	prog = benchio_resolve(cfg->bench, "ert-bench");
	if (!prog)
		return RL_RETRY;
	argv[0] = prog;
	argv[1] = (char *)"--attributes";
	argv[2] = NULL;
	rc = benchio_run(argv, path, err_path, cfg->timeout_s, &status);
	benchio_last_line(err_path, last, sizeof(last));
	if (rc < 0)
		rl_error(ctx, "cannot run ert-bench '%s': %s (set option 'bench' "
			 "or ROOFLINE_LIBEXEC)", prog, strerror(-rc));
	else if (status == SPEC_EXIT_NODEV)
		rl_error(ctx, "no GPU on node %s: %s", ctx->node ? ctx->node : "?",
			 *last ? last : "ert-bench found no CUDA device");
	else if (status)
		rl_error(ctx, "ert-bench --attributes failed with exit status %d: "
			 "%s", status, *last ? last : "(nothing on stderr)");
	free(prog);
	return rc < 0 || status ? RL_FAIL : RL_OK;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Replay the recorded GPUs (attrs, nattr of them) in turn, once per GPU of
 * the job: option gpus, else the Slurm job's, else the recording's own.
 */
static enum rl_result spec_replay_all(struct rl_ctx *ctx,
				      const struct spec_config *cfg,
				      const struct spec_table *t,
				      const char *tpath,
				      const struct benchio_line **attrs,
				      size_t nattr)
{
	int as_recorded = cfg->replay_as && !strcmp(cfg->replay_as, "recorded");
	struct replay_rules rules = { NULL, 0 };
	enum rl_result res = RL_OK;
	long idx[SPEC_MAX_GPUS];
	char err[512];
	size_t n = 0;

	if (replay_rules_parse(cfg->perturb.v, cfg->perturb.n, &rules, err,
			       sizeof(err)) < 0) {
		rl_error(ctx, "option %s", err);
		return RL_FAIL;
	}
	for (size_t i = 0; i < cfg->gpus.n && n < SPEC_MAX_GPUS && !as_recorded;
	     i++)
		n += replay_job_gpus(cfg->gpus.v[i], NULL, idx + n,
				     SPEC_MAX_GPUS - n);
	if (cfg->gpus.n == 0 && !as_recorded)
		n = replay_job_gpus(getenv("SLURM_JOB_GPUS"),
				    getenv("CUDA_VISIBLE_DEVICES"), idx,
				    SPEC_MAX_GPUS);
	if (n == 0)
		for (; n < nattr; n++)
			idx[n] = strtol(benchio_get(attrs[n], "gpu"), NULL, 10);
	for (size_t j = 0; j < n && res == RL_OK; j++) {
		const struct benchio_line *a = attrs[j % nattr];
		struct replay_gpu rg = { ctx->node, idx[j], benchio_get(a, "uuid"),
					 benchio_get(a, "gpu"),
					 base_name(cfg->attributes), as_recorded, 0 };
		struct spec_replay rp = { &rg, &rules };

		rl_info(ctx, "gpu %ld: replaying gpu %s of '%s' (%s)", idx[j],
			rg.recorded_index, rg.recording, rg.recorded_uuid);
		res = emit_gpu(ctx, t, tpath, a, &rp);
	}
	replay_rules_release(&rules);
	return res;
}

static enum rl_result spec_emit_all(struct rl_ctx *ctx,
				    const struct spec_config *cfg,
				    const struct spec_table *t,
				    const char *tpath,
				    const struct benchio_doc *doc)
{
	const struct benchio_line *attrs[SPEC_MAX_GPUS];
	struct spec_replay none = { NULL, NULL };
	enum rl_result res = RL_OK;
	size_t gpus = 0;

	for (size_t i = 0; i < doc->n && gpus < SPEC_MAX_GPUS; i++) {
		const struct benchio_line *l = &doc->lines[i];

		if (strcmp(l->type, "attr") || !benchio_get(l, "gpu") ||
		    (!cfg->attributes && !gpu_selected(cfg, benchio_get(l, "gpu"))))
			continue;
		attrs[gpus++] = l;
	}
	if (gpus == 0) {
		rl_error(ctx, "no GPU in the attributes (no attr line%s)",
			 cfg->gpus.n ? " for the selected gpus" : "");
		return RL_FAIL;
	}
	if (cfg->attributes)
		return spec_replay_all(ctx, cfg, t, tpath, attrs, gpus);
	for (size_t i = 0; i < gpus && res == RL_OK; i++)
		res = emit_gpu(ctx, t, tpath, attrs[i], &none);
	return res;
}

static enum rl_result spec_run(struct rl_ctx *ctx, const void *config,
			       void *state)
{
	const struct spec_config *cfg = config;
	char attr_path[4096], err_path[4096], *tpath;
	struct spec_table t = { NULL, 0 };
	struct benchio_doc doc;
	enum rl_result res;
	size_t bad = 0;
	int rc;

	(void)state;
	if (cfg->replay_as && strcmp(cfg->replay_as, "job") &&
	    strcmp(cfg->replay_as, "recorded")) {
		rl_error(ctx, "option 'replay_as': '%s' is neither 'job' nor "
			 "'recorded'", cfg->replay_as);
		return RL_FAIL;
	}
	if (cfg->perturb.n && !cfg->attributes) {
		rl_error(ctx, "option 'perturb' needs option 'attributes': only "
			 "replayed GPUs are perturbed");
		return RL_FAIL;
	}
	snprintf(attr_path, sizeof(attr_path), "%s/spec-attributes.tsv",
		 ctx->out_dir);
	snprintf(err_path, sizeof(err_path), "%s/spec-stderr.log", ctx->out_dir);
	res = get_attributes(ctx, cfg, attr_path, err_path);
	if (res != RL_OK)
		return res;
	tpath = table_path(cfg);
	if (!tpath)
		return RL_RETRY;
	if (load_table(ctx, tpath, &t) < 0) {
		free(tpath);
		return RL_FAIL;
	}
	rc = benchio_load(cfg->attributes ? cfg->attributes : attr_path, &doc,
			  &bad);
	if (rc < 0) {
		rl_error(ctx, "attributes '%s': %s",
			 cfg->attributes ? cfg->attributes : attr_path,
			 rc == -EINVAL ? "not ert-bench output" : strerror(-rc));
		res = RL_FAIL;
	} else {
		res = spec_emit_all(ctx, cfg, &t, tpath, &doc);
		benchio_release(&doc);
	}
	spec_table_release(&t);
	free(tpath);
	return res;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "spec",
	.version = "1.0",
	.stage = RL_STAGE_CEILINGS,
	.summary = "theoretical ceilings from device attributes and "
		   "etc/spec-ceilings.tsv",
	.options = spec_options,
	.config_size = sizeof(struct spec_config),
	.run = spec_run,
};
