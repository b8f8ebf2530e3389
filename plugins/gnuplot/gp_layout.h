/*
 * gp_layout.h - where things go on a chart: margins, the key's columns and
 * the length of the names in it, and the roof labels (value, angle,
 * position: along its roof where it covers the fewest markers).
 *
 * Part of the gnuplot plugin (plugins/gnuplot.c), linked into gnuplot.so and
 * its test.  libc and libm only.  Order: gp_layout_init, gp_layout_fit_names,
 * gp_layout_key, gp_layout_labels (it needs the chart's ranges and roofs).
 */
#ifndef ROOFLINE_GP_LAYOUT_H
#define ROOFLINE_GP_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "gp_chart.h"

struct gp_label {
	double x, y;  /* data coordinates of the text's left end */
	double angle; /* degrees */
	char text[200];
};

struct gp_layout {
	const struct gp_chart *c;      /* borrowed */
	double lm, rm, bm, tm;         /* plot margins, screen fractions */
	double pw, ph;                 /* the plot's size in pixels */
	double key_x;                  /* the key's left edge (screen) */
	int maxrows;                   /* key rows per column */
	size_t name_max;               /* short names in the key */
	bool numbered;                 /* numbers next to the markers */
	struct gp_label labels[GP_MAX_DRAWN];
	size_t nlabels;
};

/* Margins and the key's rows per column, from the image size of c. */
void gp_layout_init(struct gp_layout *lo, const struct gp_chart *c);

/*
 * name_max: the longest short name that keeps a key of `entries` rows, with
 * `extra` more characters per title, in the right half of the image; the
 * `name_max` option at most.
 */
void gp_layout_fit_names(struct gp_layout *lo, size_t entries, size_t extra);

/* The plot's right edge and the key's place: room for `entries` titles of
 * up to `chars` characters, and right_px pixels of a second y axis. */
void gp_layout_key(struct gp_layout *lo, size_t entries, size_t chars,
		   double right_px);

/* A label per drawn roof ("HBM 2.90 TB/s", "FP64 FMA 33.7 TFLOP/s");
 * ceilings within 6% of each other share one. */
void gp_layout_labels(struct gp_layout *lo);

/* "HBM 2.90 TB/s": a roof's title and value ("(spec)" when theoretical). */
void gp_layout_roof_text(const struct gp_roof *r, char *out, size_t cap);

#endif
