/*
 * strbuf.h - a growable NUL-terminated string (after git's strbuf).
 *
 * A strbuf owns its buffer.  sb.buf is never NULL after strbuf_init, so it
 * can always be printed.  Allocation failure aborts the program (there is no
 * sensible recovery from it in a daemon of this size).
 */
#ifndef ROOFLINE_STRBUF_H
#define ROOFLINE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "rooflined/plugin.h"

struct strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

#define STRBUF_INIT { .buf = NULL, .len = 0, .alloc = 0 }

void strbuf_init(struct strbuf *sb);
/* Free the buffer; the strbuf may be reused after strbuf_init. */
void strbuf_release(struct strbuf *sb);
/* Hand the buffer to the caller (caller frees) and reset sb. */
char *strbuf_detach(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) RL_PRINTF(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* The string so far, "" when empty (never NULL). */
const char *strbuf_str(const struct strbuf *sb);

#endif
