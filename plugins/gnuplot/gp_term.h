/*
 * gp_term.h - the terminal layer of the gnuplot plugin: the script lines
 * that choose gnuplot's output device.  The drawing files (gp_draw.c,
 * gp_findings.c) call it; it calls nothing of theirs (gp_model.h has the
 * plugin's flow).
 *
 * Part of the gnuplot plugin (plugins/gnuplot.c), linked into gnuplot.so and
 * its test.  libc only.
 */
#ifndef ROOFLINE_GP_TERM_H
#define ROOFLINE_GP_TERM_H

#include <stdio.h>

/*
 * The script lines that send what follows to base.<format> (png: gnuplot's
 * pngcairo when it has it, else png; svg) at width x height pixels.
 */
void gp_term_output(FILE *f, const char *format, const char *base, long width,
		    long height);

#endif
