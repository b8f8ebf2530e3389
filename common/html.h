/*
 * html.h - text for HTML pages: the one escaping rule of the report plugin
 * and the facility site (libc only).
 *
 * & < > " ' become entities, so the result is safe in element content and
 * in double- or single-quoted attribute values; invalid UTF-8 becomes
 * U+FFFD and control characters spaces, which a validator would reject.
 */
#ifndef ROOFLINE_HTML_H
#define ROOFLINE_HTML_H

#include <stddef.h>

#include "strbuf.h"

/* Append s (NULL: nothing) escaped to sb. */
void html_escape(struct strbuf *sb, const char *s);

/* Append the one character at s (a byte of ASCII, one UTF-8 sequence, or
 * one invalid byte) escaped; returns how many bytes of s it took (>= 1;
 * s must not be at its NUL). */
size_t html_escape_char(struct strbuf *sb, const char *s);

#endif
