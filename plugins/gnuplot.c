/*
 * gnuplot - the render stage: hierarchical roofline charts drawn by gnuplot.
 *
 * Three kinds of chart, from the records of the steps this step needs:
 *
 *   roofline  `point` records (a kernel at a precision and a memory level)
 *             on a log-log chart under the `roof` records: a bandwidth roof
 *             per level up to the highest compute ceiling, the compute
 *             ceilings (FMA, no-FMA, tensor), each labelled with its value;
 *             a marker shape per level and a colour per kernel
 *   compare   the points of several needed steps (or `series` field
 *             values) on one chart, a colour per step and arrows from each
 *             step's point to the next one's (Nsight Compute's "Add
 *             Baseline", the seeds' GPP versions)
 *   history   `trend` records of one kernel: GFLOP/s per node over time,
 *             the arithmetic intensities on a second axis
 *   trajectory  a comparison of one kernel's runs (`roofline plot
 *             --trajectory`), its last step labelled with its class
 *   fleet     the `fleet` plugin's `fleet_gpu` records: each GPU's ceilings
 *             as % of its model's median tonight, a panel per ceiling,
 *             flagged GPUs marked and named
 *   gpu_history  `gpu_night` records (`roofline plot --gpu`): one GPU's
 *             ceilings over the nights in its fleet's band, a panel each
 *             (plugins/gnuplot/gp_findings.h, gp_findings_model.h)
 *
 * Files in out_dir: <kind>.gp (the script), <kind>.*.dat (data), kernels.txt
 * (number, short and full name of each kernel in the key), gnuplot.log (what
 * gnuplot said) and <kind>.png, <kind>.svg; one `chart` record per image.
 *
 * gnuplot runs by fork/exec (argv, no shell, -d: no init files) in out_dir,
 * on a script with no record text but quoted labels; names travel in the
 * data files (see plugins/gnuplot/gp_draw.h).  The work is in
 * plugins/gnuplot/, one way (gp_model.h): the model (gp_model,
 * gp_findings_model, gp_chart), the layout (gp_layout), the drawing (gp_draw
 * for script and data, gp_findings for the fleet's charts), the terminal
 * (gp_term); gp_text (quoting, short names) under them all;
 * plugins/gnuplot_run/gp_exec (running gnuplot).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gnuplot/gp_chart.h"
#include "gnuplot/gp_draw.h"
#include "gnuplot_run/gp_exec.h"
#include "rooflined/plugin.h"

#define OPT(k, t, d, f, h) { k, t, d, offsetof(struct gp_config, f), h, 0 }
static const struct rl_option gp_options[] = {
	OPT("gnuplot", RL_OPT_STRING | RL_OPT_PROGRAM, "gnuplot", gnuplot, "the gnuplot program (a name is searched in PATH)"),
	OPT("formats", RL_OPT_LIST, "png,svg", formats, "images to write: png, svg"),
	OPT("mode", RL_OPT_STRING, "auto", mode, "auto, roofline, compare, history, fleet, gpu_history or trajectory (auto: compare when the points come from several steps, trajectory when a trajectory_step record judges them, history with only trend records, fleet with fleet_gpu records, gpu_history with gpu_night records)"),
	OPT("title", RL_OPT_STRING, NULL, title, "chart title (default: by kind and GPU)"),
	OPT("width", RL_OPT_INT, "1400", width, "image width in pixels"),
	OPT("height", RL_OPT_INT, "940", height, "image height in pixels"),
	OPT("precisions", RL_OPT_LIST, NULL, precisions, "precisions to show: fp64, fp32, fp16, tc_fp64, tc_fp16, tc_bf16, tc_tf32, tc_fp8, tc_int8, tensor (every tc_*), all (default: each kernel's primary precision when the points name it, else every one they have)"),
	OPT("levels", RL_OPT_LIST, "l1,l2,dram", levels, "memory levels to show"),
	OPT("ceilings", RL_OPT_LIST, NULL, ceilings, "roof names to draw, e.g. fp64_fma,hbm_triad (default: by precision and level); fleet, gpu_history: the ceilings given a panel (default: every one)"),
	OPT("labels", RL_OPT_LIST, NULL, labels, "compare: series labels in input order (default: step ids)"),
	OPT("arrows", RL_OPT_BOOL, "true", arrows, "compare: arrows from each series' point to the next"),
	OPT("partial_fma", RL_OPT_BOOL, "false", partial_fma, "also draw the partial-FMA ceiling, peak x (1 + alpha) / 2, of the CUDA-core kernel with the most FLOPs in the last series (dashed)"),
	OPT("per_invocation", RL_OPT_BOOL, "false", per_invocation, "a point per invocation instead of the aggregate"),
	OPT("kernel", RL_OPT_STRING, NULL, kernel, "history: the kernel's full name (default: the first in the inputs)"),
	OPT("xmin", RL_OPT_DOUBLE, "0", xmin, "arithmetic intensity axis minimum (0: automatic)"),
	OPT("xmax", RL_OPT_DOUBLE, "0", xmax, "arithmetic intensity axis maximum (0: automatic)"),
	OPT("ymin", RL_OPT_DOUBLE, "0", ymin, "GFLOP/s axis minimum (0: automatic)"),
	OPT("ymax", RL_OPT_DOUBLE, "0", ymax, "GFLOP/s axis maximum (0: automatic)"),
	OPT("name_max", RL_OPT_INT, "40", name_max, "longest short kernel name in the key (8-200)"),
	OPT("timeout", RL_OPT_INT, "60", timeout_s, "seconds gnuplot may run"),
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* Every item of l is one of names; else log and false. */
static bool check_list(struct rl_ctx *ctx, const char *key,
		       const struct rl_strlist *l, const char *const *names,
		       int n, const char *expected)
{
	for (size_t i = 0; i < l->n; i++) {
		if (gp_name_index(names, n, l->v[i]) < 0) {
			rl_error(ctx, "%s: unknown item '%s' (expected %s)", key, l->v[i], expected);
			return false;
		}
	}
	return true;
}

static bool check_range(struct rl_ctx *ctx, const char *axis, double lo, double hi)
{
	if (lo < 0 || hi < 0 || (lo > 0 && hi > 0 && lo >= hi)) {
		rl_error(ctx, "%smin/%smax: need 0 (automatic) or 0 < min < max, got %g and %g",
			 axis, axis, lo, hi);
		return false;
	}
	return true;
}

static int gp_init(struct rl_ctx *ctx, const void *config, void **state)
{
	static const char *const formats[] = { "png", "svg" };
	const struct gp_config *cfg = config;

	*state = NULL;
	if (!cfg->formats.n) {
		rl_error(ctx, "formats: empty (expected png, svg or both)");
		return -EINVAL;
	}
	if (gp_name_index(gp_mode_names, GP_N_MODES, cfg->mode) < 0) {
		rl_error(ctx, "mode: unknown '%s' (expected auto, roofline, compare, history, fleet, "
			 "gpu_history or trajectory)", cfg->mode);
		return -EINVAL;
	}
	if (cfg->width < 200 || cfg->width > 10000 || cfg->height < 200 || cfg->height > 10000) {
		rl_error(ctx, "width/height: %ldx%ld is outside 200-10000 pixels", cfg->width, cfg->height);
		return -EINVAL;
	}
	if (cfg->name_max < 8 || cfg->name_max > 200) {
		rl_error(ctx, "name_max: %ld is outside 8-200", cfg->name_max);
		return -EINVAL;
	}
	if (!check_list(ctx, "formats", &cfg->formats, formats, 2, "png or svg") ||
	    !check_list(ctx, "precisions", &cfg->precisions, gp_prec_names, GP_N_PRECS,
			"fp64, fp32, fp16, tc_<type>, tensor or all") ||
	    !check_list(ctx, "levels", &cfg->levels, gp_level_names, GP_N_LEVELS, "l1, l2 or dram") ||
	    !check_range(ctx, "x", cfg->xmin, cfg->xmax) || !check_range(ctx, "y", cfg->ymin, cfg->ymax))
		return -EINVAL;
	return 0;
}

/* What a chart record says was drawn: points (rows), kernels (fleet: GPUs),
 * series (compare, trajectory: runs; history: nodes; fleet, gpu_history:
 * ceilings, one panel each). */
static void drawn_counts(const struct gp_chart *c, size_t *pts, size_t *kernels, size_t *series)
{
	*pts = c->npts, *kernels = c->nents, *series = c->nser;
	if (c->mode == GP_HISTORY)
		*pts = c->ntrends, *kernels = 1, *series = c->nodes.n;
	if (c->mode == GP_FLEET || c->mode == GP_GPU_HISTORY) {
		*pts = c->nrows, *kernels = c->gpus.n, *series = 0;
		for (size_t i = 0; i < c->ceilings.n; i++)
			for (size_t r = 0; r < c->nrows; r++)
				if (c->rows[r].ceiling == i) {
					(*series)++;
					break;
				}
	}
}

/* One `chart` record per image, after checking that gnuplot wrote it. */
static enum rl_result emit_charts(struct rl_ctx *ctx, const struct gp_chart *c)
{
	const char *kind = gp_mode_names[c->mode];
	bool keyed = c->mode == GP_ROOFLINE || c->mode == GP_COMPARE || c->mode == GP_TRAJECTORY;
	char file[64], script[64], path[4096], pts[32], kernels[32], series[32], w[32], h[32];
	size_t np, nk, ns;
	struct stat st;

	drawn_counts(c, &np, &nk, &ns);
	snprintf(script, sizeof(script), "%s.gp", kind);
	snprintf(pts, sizeof(pts), "%zu", np);
	snprintf(kernels, sizeof(kernels), "%zu", nk);
	snprintf(series, sizeof(series), "%zu", ns);
	snprintf(w, sizeof(w), "%ld", c->cfg->width);
	snprintf(h, sizeof(h), "%ld", c->out_height ? c->out_height : c->cfg->height);
	for (size_t i = 0; i < c->cfg->formats.n; i++) {
		snprintf(file, sizeof(file), "%s.%s", kind, c->cfg->formats.v[i]);
		snprintf(path, sizeof(path), "%s/%s", ctx->out_dir, file);
		if (stat(path, &st) != 0 || st.st_size == 0) {
			rl_error(ctx, "gnuplot wrote no '%s' (see gnuplot.log)", file);
			return RL_FAIL;
		}
		if (rl_emit(ctx, "chart", (const struct rl_field[]){
				{ "kind", kind }, { "format", c->cfg->formats.v[i] },
				{ "file", file }, { "points", pts }, { "kernels", kernels },
				{ "series", series }, { "script", script },
				{ "key", keyed ? "kernels.txt" : "" },
				{ "width", w }, { "height", h }, { NULL, NULL } }) < 0)
			return RL_RETRY;
	}
	rl_info(ctx, "%s chart: %s points, %s %s, %s %s, %zu formats", kind, pts, kernels,
		c->mode == GP_FLEET || c->mode == GP_GPU_HISTORY ? "GPUs" : "kernels", series,
		c->mode == GP_FLEET || c->mode == GP_GPU_HISTORY ? "panels" : "series",
		c->cfg->formats.n);
	return RL_OK;
}

/* Find gnuplot, run the script, say what went wrong. */
static int render(struct rl_ctx *ctx, const struct gp_chart *c)
{
	char prog[4096], script[64], err[1024];
	int rc = gp_exec_find(c->cfg->gnuplot, prog, sizeof(prog));

	if (rc < 0) {
		rl_error(ctx, "gnuplot: program '%s' %s (install gnuplot-nox, or set the option `gnuplot`)",
			 c->cfg->gnuplot, rc == -EACCES ? "is not executable" : "not found in PATH");
		return rc;
	}
	snprintf(script, sizeof(script), "%s.gp", gp_mode_names[c->mode]);
	rc = gp_exec_run(prog, ctx->out_dir, script, "gnuplot.log", c->cfg->timeout_s, err, sizeof(err));
	if (rc < 0)
		rl_error(ctx, "gnuplot: cannot run '%s': %s", prog, err);
	else if (rc > 0)
		rl_error(ctx, "gnuplot failed (exit %d) on %s: %s", rc, script, err[0] ? err : "no message");
	else if (err[0])
		rl_warn(ctx, "gnuplot said: %s", err);
	return rc;
}

static enum rl_result gp_run(struct rl_ctx *ctx, const void *config, void *state)
{
	struct gp_chart c;
	enum rl_result res = RL_FAIL;
	int rc;

	(void)state;
	gp_chart_init(&c, config, ctx);
	rc = rl_each_input(ctx, NULL, gp_chart_take, &c);
	if (rc < 0) {
		rl_error(ctx, "cannot read the inputs: %s", strerror(-rc));
		goto out;
	}
	if (gp_chart_select(&c) < 0) {
		rl_error(ctx, "cannot select the points: %s", strerror(ENOMEM));
		goto out;
	}
	if (gp_chart_pick_mode(&c) < 0)
		goto out;
	if (c.skipped)
		rl_warn(ctx, "%ld input records not drawn (a missing field, or a value not > 0)", c.skipped);
	if (c.mode == GP_HISTORY && c.other_kernels)
		rl_info(ctx, "history of one kernel: %ld trend records of other kernels left out "
			"(option `kernel` picks one)", c.other_kernels);
	if (c.mode != GP_FLEET && c.mode != GP_GPU_HISTORY) {
		gp_chart_choose_roofs(&c);
		gp_chart_ranges(&c);
	}
	rc = gp_draw_write(&c);
	if (rc < 0) {
		rl_error(ctx, "cannot write the chart files into '%s': %s", ctx->out_dir, strerror(-rc));
		goto out;
	}
	if (render(ctx, &c) == 0)
		res = emit_charts(ctx, &c);
out:
	gp_chart_release(&c);
	return res;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "gnuplot",
	.version = "1.0",
	.stage = RL_STAGE_RENDER,
	.summary = "hierarchical roofline, comparison and history charts (PNG, SVG) drawn by gnuplot",
	.options = gp_options,
	.config_size = sizeof(struct gp_config),
	.init = gp_init,
	.run = gp_run,
};
