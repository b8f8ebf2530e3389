/*
 * report - the render stage's run report: one self-contained HTML page.
 *
 * An `on: daemon` step a pipeline ends with; it needs the analysis step
 * (hierarchical: `point` and `roof` records) and, for the ceilings and
 * collection sections, the ceilings (ert, spec) and collect (ncu,
 * ncu-import) steps.  The daemon's run records (rl_each_run_info: run,
 * run_step, baseline) give the metadata and the baseline run.
 *
 * Writes <out_dir>/<file> (default report.html) atomically, mode 0600 like
 * every spool file, and emits one `report` record: file, kernels, ceilings,
 * baseline_run.  The page: plugins/report/rp_html.h; the chart:
 * rp_svg.h; advice: rp_advice.h; what is read: rp_model.h.  docs/report.md
 * is the user's guide.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report/rp_html.h"
#include "report/rp_model.h"
#include "rooflined/plugin.h"
#include "strbuf.h"
#include "util.h"

struct rp_config {
	char *file;
	char *title;
	long width, height;
};

#define OPT(k, t, d, f, h) { k, t, d, offsetof(struct rp_config, f), h, 0 }
static const struct rl_option rp_options[] = {
	OPT("file", RL_OPT_STRING, "report.html", file, "the page's file name in the step's directory"),
	OPT("title", RL_OPT_STRING, NULL, title, "page title (default: Roofline report: run N (pipeline))"),
	OPT("width", RL_OPT_INT, "980", width, "chart width in pixels (400-4000)"),
	OPT("height", RL_OPT_INT, "640", height, "chart height in pixels (300-4000)"),
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static int rp_init(struct rl_ctx *ctx, const void *config, void **state)
{
	const struct rp_config *cfg = config;

	*state = NULL;
	if (cfg->width < 400 || cfg->width > 4000 || cfg->height < 300 || cfg->height > 4000) {
		rl_error(ctx, "width/height: %ldx%ld is outside 400-4000 x 300-4000 pixels",
			 cfg->width, cfg->height);
		return -EINVAL;
	}
	if (!cfg->file[0] || strchr(cfg->file, '/') || cfg->file[0] == '.') {
		rl_error(ctx, "file: '%s' is not a plain file name", cfg->file);
		return -EINVAL;
	}
	return 0;
}

/* The model, and the names of the needed steps in the order first seen. */
struct gather {
	struct rp_model m;
	char *steps[64];
	size_t nsteps;
};

static int take(void *arg, const char *step, const char *kind,
		const struct rl_field *fields)
{
	struct gather *g = arg;

	if (g->nsteps == 0 || strcmp(g->steps[g->nsteps - 1], step) != 0) {
		bool seen = false;

		for (size_t i = 0; i < g->nsteps && !seen; i++)
			seen = strcmp(g->steps[i], step) == 0;
		if (!seen && g->nsteps < 64)
			g->steps[g->nsteps++] = xstrdup(step);
	}
	return rp_model_take(&g->m, step, kind, fields);
}

/* path relative to dir (both absolute, normalised): "../../x/records.tsv". */
static char *relative(const char *dir, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	size_t common = 0;

	strbuf_init(&sb);
	for (size_t i = 0; dir[i] && dir[i] == path[i]; i++)
		if (dir[i] == '/')
			common = i + 1;
	if (dir[strlen(dir)] == '\0' && strncmp(dir, path, strlen(dir)) == 0 &&
	    path[strlen(dir)] == '/')
		common = strlen(dir) + 1;
	for (const char *p = dir + common; *p; p++)
		if (p == dir + common || p[-1] == '/')
			strbuf_addstr(&sb, "../");
	strbuf_addstr(&sb, path + common);
	return strbuf_detach(&sb);
}

struct links {
	struct rp_link v[2 * 64 + 1];
	char *own[2 * 64 + 1];
	size_t n;
};

static void add_link(struct links *l, struct rl_ctx *ctx, const char *text,
		     const char *path)
{
	if (!path || l->n >= sizeof(l->v) / sizeof(l->v[0]))
		return;
	l->own[l->n] = relative(ctx->out_dir, path);
	l->v[l->n].text = xstrdup(text);
	l->v[l->n].href = l->own[l->n];
	l->n++;
}

/* Records of each needed step, the raw Nsight Compute CSV (ncu's ncu.csv,
 * or the file an ncu-import step read from the run's inputs/). */
static void make_links(struct links *l, struct rl_ctx *ctx, const struct gather *g)
{
	for (size_t i = 0; i < g->nsteps; i++) {
		char *text = xasprintf("raw Nsight Compute CSV (%s)", g->steps[i]);

		add_link(l, ctx, text, rl_input_path(ctx, g->steps[i], "ncu.csv"));
		free(text);
	}
	/* ncu-import's `file`: relative to the run directory ("inputs/x.csv"),
	 * or a bare name in its inputs/ */
	if (g->m.collect_file && util_path_is_contained(g->m.collect_file)) {
		const char *f = g->m.collect_file;
		char *path = strchr(f, '/') ? xasprintf("%s/%s", ctx->run_dir, f)
					    : xasprintf("%s/inputs/%s", ctx->run_dir, f);
		char *text = xasprintf("raw Nsight Compute CSV (%s, imported)", f);

		if (access(path, R_OK) == 0)
			add_link(l, ctx, text, path);
		free(path);
		free(text);
	}
	for (size_t i = 0; i < g->nsteps; i++) {
		char *text = xasprintf("records of step %s (records.tsv)", g->steps[i]);

		add_link(l, ctx, text, rl_input_path(ctx, g->steps[i], "records.tsv"));
		free(text);
	}
}

static void links_release(struct links *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free((char *)(uintptr_t)l->v[i].text);
		free(l->own[i]);
	}
}

static enum rl_result write_page(struct rl_ctx *ctx, const struct rp_config *cfg,
				 struct gather *g)
{
	struct links l = { .n = 0 };
	struct strbuf sb = STRBUF_INIT;
	char when[64] = "", *path;
	char kernels[32], ceil[32];
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	strbuf_init(&sb);
	if (gmtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	make_links(&l, ctx, g);
	rp_html_page(&sb, &(struct rp_page){
		.m = &g->m, .title = cfg->title, .width = (int)cfg->width,
		.height = (int)cfg->height, .links = l.v, .nlinks = l.n,
		.generated = when });
	path = xasprintf("%s/%s", ctx->out_dir, cfg->file);
	rc = util_write_file_atomic(path, sb.buf, sb.len, 0600);
	links_release(&l);
	strbuf_release(&sb);
	if (rc < 0) {
		rl_error(ctx, "cannot write '%s': %s", path, strerror(-rc));
		free(path);
		return RL_RETRY;
	}
	free(path);
	snprintf(kernels, sizeof(kernels), "%zu", g->m.nprimary);
	snprintf(ceil, sizeof(ceil), "%zu", g->m.nceil);
	if (rl_emit(ctx, "report", (const struct rl_field[]){
			{ "file", cfg->file }, { "kernels", kernels }, { "ceilings", ceil },
			{ "baseline_run", g->m.nbase ? g->m.base_run : "" },
			{ NULL, NULL } }) < 0)
		return RL_RETRY;
	rl_info(ctx, "report: %s kernels, %s ceilings%s%s", kernels, ceil,
		g->m.nbase ? ", against run " : "", g->m.nbase ? g->m.base_run : "");
	return RL_OK;
}

static enum rl_result rp_run(struct rl_ctx *ctx, const void *config, void *state)
{
	const struct rp_config *cfg = config;
	struct gather g = { .nsteps = 0 };
	enum rl_result res = RL_FAIL;
	int rc;

	(void)state;
	rp_model_init(&g.m);
	rc = rl_each_input(ctx, NULL, take, &g);
	if (rc < 0) {
		rl_error(ctx, "cannot read the inputs: %s", strerror(-rc));
		goto out;
	}
	rc = rl_each_run_info(ctx, NULL, rp_model_take, &g.m);
	if (rc < 0 && rc != -ENOSYS)
		rl_warn(ctx, "cannot read the run's records: %s", strerror(-rc));
	rc = rp_model_finish(&g.m);
	if (rc < 0)
		rl_warn(ctx, "cannot read the baseline run's records: %s", strerror(-rc));
	if (g.m.skipped)
		rl_warn(ctx, "%ld point records without a usable AI or GFLOP/s left out", g.m.skipped);
	if (!g.m.nprimary && !g.m.instr.n) {
		rl_error(ctx, "nothing to report: no usable `point` or `ipoint` record in the inputs "
			 "(does the step need the hierarchical or the instruction step?)");
		goto out;
	}
	res = write_page(ctx, cfg, &g);
out:
	for (size_t i = 0; i < g.nsteps; i++)
		free(g.steps[i]);
	rp_model_release(&g.m);
	return res;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "report",
	.version = "1.0",
	.stage = RL_STAGE_RENDER,
	.summary = "one self-contained HTML page per run: roofline chart (SVG), kernels, advice, ceilings, baseline",
	.options = rp_options,
	.config_size = sizeof(struct rp_config),
	.init = rp_init,
	.run = rp_run,
};
