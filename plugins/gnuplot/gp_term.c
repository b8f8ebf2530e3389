/*
 * gp_term.c - gnuplot's output device lines.  See gp_term.h.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gp_term.h"

void gp_term_output(FILE *f, const char *format, const char *base, long width, long height)
{
	bool svg = strcmp(format, "svg") == 0;

	if (svg)
		fprintf(f, "set terminal svg size %ld,%ld dynamic font 'Sans,10' "
			"background '#ffffff'\n", width, height);
	else
		fprintf(f, "if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {\n"
			"  set terminal pngcairo size %ld,%ld font 'Sans,10'\n} else {\n"
			"  set terminal png size %ld,%ld font 'Sans,10'\n}\n",
			width, height, width, height);
	fprintf(f, "set output '%s.%s'\n", base, svg ? "svg" : "png");
}
