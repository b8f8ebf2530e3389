/*
 * ir_chart.c - the Instruction Roofline chart (ir_chart.h).
 */
#include "instruction/ir_chart.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gnuplot_run/gp_exec.h"
#include "instruction/instr_math.h"

#define IR_SCRIPT "instruction.gp"

void ir_chart_label(const char *kernel, char *out, size_t max)
{
	size_t n = 0;

	if (!max)
		return;
	if (strncmp(kernel, "void ", 5) == 0)
		kernel += 5;
	for (; kernel[n] && kernel[n] != '(' && n + 1 < max; n++)
		out[n] = strchr("\"'\\\n", kernel[n]) ? '_' : kernel[n];
	out[n] = '\0';
}

/* The data block of the levels lo..hi: intensity gips level-index label. */
static void data_block(FILE *f, const char *name, const struct ir_gpu *g,
		       const struct ir_kernel *k, size_t n, int lo, int hi)
{
	fprintf(f, "$%s << EOD\n", name);
	for (size_t i = 0; i < n; i++) {
		char label[32];

		if (strcmp(k[i].gpu, g->key) != 0)
			continue;
		ir_chart_label(k[i].name, label, sizeof(label));
		for (int l = lo; l <= hi; l++) {
			struct ir_point_values p;

			if (ir_point(&k[i], g, l, &p))
				fprintf(f, "%.9g %.9g %d \"%s\"\n", p.intensity, p.gips, l - lo, label);
		}
	}
	fprintf(f, "EOD\n");
}

static double or_zero(double x)
{
	return isfinite(x) ? x : 0;
}

static void roofs(FILE *f, const struct ir_gpu *g)
{
	double peak = isfinite(g->peak_measured) ? g->peak_measured : g->peak_theory;

	fprintf(f, "P = %.9g\nPT = %.9g\nPM = %.9g\n", or_zero(peak), or_zero(g->peak_theory),
		or_zero(g->peak_measured));
	for (int l = 0; l < IR_LEVELS; l++)
		fprintf(f, "B%d = %.9g\n", l, or_zero(g->gtxn[l]));
	fprintf(f, "roof(x, b) = (b <= 0 || P <= 0) ? NaN : (x * b < P ? x * b : P)\n");
}

static void panel(FILE *f, const char *title, const char *xlabel)
{
	fprintf(f, "set title \"%s\"\nset xlabel \"%s\"\nset ylabel \"warp GIPS\"\n"
		   "unset arrow\nunset label\n", title, xlabel);
}

static void walls(FILE *f, const double *x, const char *const *label, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dt 2 lc rgb \"#888888\"\n",
			x[i], x[i]);
		fprintf(f, "set label \"%s\" at %.9g, graph 0.95 rotate by 90 right font \",8\"\n",
			label[i], x[i] * 1.08);
	}
}

static int script(FILE *f, const struct ir_gpu *g, const struct ir_kernel *k, size_t n)
{
	static const double gx[] = { 1.0, 0.25, 1.0 / 32 };
	static const char *const gl[] = { "stride 0", "unit stride", "uncoalesced" };
	static const double sx[] = { 1.0, 0.5, 0.25, 0.125, 0.0625, 1.0 / 32 };
	static const char *const sl[] = { "no conflict", "2-way", "4-way", "8-way", "16-way",
					  "32-way" };

	fprintf(f, "# the Instruction Roofline of %s (written by the instruction plugin)\n"
		   "set terminal svg size 1500,520 dynamic noenhanced font \"sans,10\"\n"
		   "set output \"instruction.svg\"\n"
		   "set logscale xy\nset xrange [0.01:1000]\nset yrange [0.1:%g]\n"
		   "set key bottom right font \",8\"\nset grid\n",
		g->name, 3 * or_zero(isfinite(g->peak_theory) ? g->peak_theory : 1000));
	roofs(f, g);
	data_block(f, "h", g, k, n, IR_L1G, IR_DRAM);
	data_block(f, "gl", g, k, n, IR_GLOBAL, IR_GLOBAL);
	data_block(f, "sh", g, k, n, IR_SHARED, IR_SHARED);
	fprintf(f, "set multiplot layout 1,3\n");
	panel(f, "Instruction Roofline (hierarchical)", "warp instructions per transaction");
	fprintf(f, "plot (PT > 0 ? PT : NaN) w l dt 2 lc rgb \"black\" t \"theoretical peak\", "
		   "(PM > 0 ? PM : NaN) w l lc rgb \"black\" t \"measured peak (inst_warp)\", "
		   "roof(x, B0) w l lc 1 t \"L1 global\", roof(x, B1) w l lc 2 t \"L1 shared\", "
		   "roof(x, B2) w l lc 3 t \"L2\", roof(x, B3) w l lc 4 t \"HBM\", "
		   "$h u 1:2:($3 + 1) w p pt 7 ps 0.6 lc variable notitle\n");
	panel(f, "Global memory walls (LD/ST)", "global LD/ST warp instructions per sector");
	walls(f, gx, gl, 3);
	fprintf(f, "plot roof(x, B4) w l lc 1 t \"L1 bandwidth\", "
		   "$gl u 1:2 w p pt 7 ps 0.6 lc 1 notitle, "
		   "$gl u 1:2:4 w labels font \",6\" offset 0.5,0.4 left notitle\n");
	panel(f, "Shared memory walls (LD/ST)", "shared LD/ST warp instructions per wavefront");
	walls(f, sx, sl, 6);
	fprintf(f, "plot roof(x, B5) w l lc 2 t \"shared bandwidth\", "
		   "$sh u 1:2 w p pt 7 ps 0.6 lc 2 notitle, "
		   "$sh u 1:2:4 w labels font \",6\" offset 0.5,0.4 left notitle\n"
		   "unset multiplot\n");
	return ferror(f) ? -EIO : 0;
}

int ir_chart_draw(const char *dir, const char *gnuplot, const struct ir_gpu *g,
		  const struct ir_kernel *k, size_t n, char *err, size_t size)
{
	char path[4096], prog[4096];
	FILE *f;
	int rc;

	rc = gp_exec_find(gnuplot, prog, sizeof(prog));
	if (rc) {
		snprintf(err, size, "gnuplot program '%s' not found (%s)", gnuplot, strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, IR_SCRIPT);
	if (!(f = fopen(path, "we"))) {
		rc = -errno;
		snprintf(err, size, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = script(f, g, k, n);
	if (fclose(f) && !rc)
		rc = -errno;
	if (rc) {
		snprintf(err, size, "%s: cannot write", path);
		return rc;
	}
	rc = gp_exec_run(prog, dir, IR_SCRIPT, "instruction.log", 60, err, size);
	if (rc > 0)
		return -EIO;
	return rc < 0 ? rc : 0;
}
