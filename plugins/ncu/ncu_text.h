/*
 * ncu_text.h - the text layer under the readers of ncu's files (libc only):
 * a cursor over a buffer that knows its line, errors that name their place,
 * RFC 4180 fields, lines, and reading a whole file.
 *
 * Used by the CSV reader (ncu_csv.c) and the metric table (ncu_table.c).
 * A cursor borrows everything it points at: the buffer (which the caller
 * owns and which field parsing edits in place), the input's name and the
 * error buffer.  Errors read like a compiler's, "name:line:col: what",
 * where col counts bytes from line_start (1 when the position is unknown).
 */
#ifndef ROOFLINE_NCU_TEXT_H
#define ROOFLINE_NCU_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* A position in a NUL-terminated buffer being read (all borrowed). */
struct ncu_text_cursor {
	char *p, *end;     /* next byte; end of the buffer (*end == '\0') */
	char *line_start;  /* start of line `line`, for columns; may be NULL */
	long line;         /* 1-based */
	const char *name;  /* the input, as errors name it */
	char *err;         /* errors go here (may be NULL) */
	size_t errlen;
};

/*
 * Point c at the start of buf (len bytes, buf[len] == '\0'), line 1; name
 * and err (errlen bytes, may be NULL) are for messages.  All borrowed.
 */
void ncu_text_init(struct ncu_text_cursor *c, char *buf, size_t len,
		   const char *name, char *err, size_t errlen);

/*
 * Format "name:line:col: message" into c->err, col from `at` (NULL or
 * before line_start: column 1).  Returns -EINVAL, for `return
 * ncu_text_fail(...)`.
 */
int ncu_text_fail(struct ncu_text_cursor *c, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Parse one RFC 4180 field at c->p (quoted: "" for a quote, commas and
 * newlines inside; unquoted: up to ',' or the end of the line) and move past
 * its delimiter, counting lines.  When keep is set, the field is unquoted in
 * place, NUL-terminated and *out points at it (into the buffer); otherwise
 * it is only skipped and *out is untouched.  Returns 1 at the end of a row,
 * 0 when more fields follow, or -EINVAL (c->err says why: an unterminated
 * quote, a quote inside an unquoted field, text after a closing quote).
 */
int ncu_text_field(struct ncu_text_cursor *c, int keep, char **out);

/* True when the bytes at p (before end) start with prefix. */
bool ncu_text_starts_with(const char *p, const char *end, const char *prefix);

/* Move the cursor to the start of the next line (or to the end). */
void ncu_text_next_line(struct ncu_text_cursor *c);

/* Length of the line at c->p without its CR/LF, at most 300 (for quoting
 * it in a message with "%.*s"). */
int ncu_text_line_len(const struct ncu_text_cursor *c);

/*
 * Read the file at path into a malloc'd buffer, NUL-terminated (caller
 * frees *out); *len gets its length.  0, or -errno (nothing allocated).
 */
int ncu_text_read_file(const char *path, char **out, size_t *len);

#endif
