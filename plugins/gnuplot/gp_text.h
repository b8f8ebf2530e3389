/*
 * gp_text.h - text for gnuplot: quoting, numbers, times (short kernel
 * names: common/kernel_name.h).
 *
 * Part of the gnuplot plugin (plugins/gnuplot.c), linked into gnuplot.so and
 * its test.  libc and libm only.
 *
 * The two quoting functions are the plugin's whole defence against
 * injection: whatever s holds, the output is one string token that ends
 * where the function put its closing quote, on one line.
 */
#ifndef ROOFLINE_GP_TEXT_H
#define ROOFLINE_GP_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Write s as a gnuplot single-quoted string (for the script): gnuplot
 * expands nothing there (no backquote, no macro, no escape); ' is doubled,
 * control characters become spaces, invalid UTF-8 bytes '?', and backquotes
 * become '' too (so that a careless double-quoted use cannot run them).
 */
void gp_text_script_quote(FILE *f, const char *s);

/*
 * Write s as a double-quoted string of a gnuplot data file, where gnuplot
 * knows no escapes: " becomes ', \ becomes /, control characters spaces,
 * invalid UTF-8 bytes '?'.
 */
void gp_text_data_quote(FILE *f, const char *s);

/*
 * Write s as a value of records.h's format (\\, \t, \n, \r escaped), for the
 * kernels.txt key.
 */
void gp_text_record_escape(FILE *f, const char *s);

/* True when s (not NULL) is all of one finite number; it goes to *out. */
bool gp_text_parse_num(const char *s, double *out);

/*
 * ISO 8601 date-time (2025-06-01T02:03:04Z, "2025-06-01 02:03:04.5+02",
 * 2025-06-01) or epoch seconds, to epoch seconds in *out.  No zone: UTC.
 */
bool gp_text_parse_time(const char *s, double *out);

/*
 * "2.90 TB/s", "33.7 TFLOP/s": value in base units (B/s, FLOP/s, OP/s) with
 * the largest of the prefixes G, T, P that keeps it at least 1, three
 * significant digits.  unit is the base unit's text ("FLOP/s").
 */
void gp_text_rate(double value, const char *unit, char *out, size_t cap);

/*
 * s with only letters, digits, space and ._+-() kept, into out (cap bytes):
 * how record text other than kernel, series and node names (GPU and
 * unknown roof names) reaches the script's labels, quoted besides.
 */
void gp_text_plain(const char *s, char *out, size_t cap);

/*
 * Display name of a roof into out: fp64_fma -> "FP64 FMA", hbm_triad ->
 * "HBM", l1 -> "L1"; a name the table lacks, gp_text_plain'ed.
 */
void gp_text_roof_title(const char *name, char *out, size_t cap);

#endif
