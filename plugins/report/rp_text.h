/*
 * rp_text.h - text for the report: HTML escaping and numbers.
 *
 * Every piece of record text that reaches the page goes through rp_esc
 * (common/html.c's rule, in element content and in double-quoted attribute
 * values alike), so a kernel name such as `f<a&"b">` stays text.
 */
#ifndef ROOFLINE_RP_TEXT_H
#define ROOFLINE_RP_TEXT_H

#include <stddef.h>

#include "strbuf.h"

/* Append s (NULL: nothing) escaped for HTML text and attribute values. */
void rp_esc(struct strbuf *sb, const char *s);

/* v with 4 significant digits and no exponent for 0.001 <= |v| < 1e7
 * ("15948", "0.01562", "719.4"), else "%.3e"; "n/a" when not finite. */
void rp_num(struct strbuf *sb, double v);

/* An axis tick 10^e: "0.01", "1", "100", "10k", "1M". */
void rp_tick(struct strbuf *sb, int e);

/* A value with a unit prefix: 33668.9 GFLOP/s -> "33.7 TFLOP/s" (unit is the
 * base, "FLOP/s" or "B/s"; v is in giga-units). */
void rp_giga(struct strbuf *sb, double v, const char *unit);

#endif
