/*
 * ncu_text.c - cursor, errors, RFC 4180 fields, lines and whole-file reads
 * for the readers of ncu's files (see ncu_text.h).
 *
 * ncu_text_field() is the CSV reader's inner loop: it finds a field's end
 * with a plain scan (buf[len] is '\0', so no bounds check per byte) and
 * unquotes only what is kept.
 */
#include "ncu_text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ncu_text_init(struct ncu_text_cursor *c, char *buf, size_t len,
		   const char *name, char *err, size_t errlen)
{
	*c = (struct ncu_text_cursor){ .p = buf, .end = buf + len,
				       .line_start = buf, .line = 1,
				       .name = name, .err = err,
				       .errlen = errlen };
}

int ncu_text_fail(struct ncu_text_cursor *c, const char *at, const char *fmt, ...)
{
	va_list ap;
	long col = at && at >= c->line_start ? (long)(at - c->line_start) + 1 : 1;
	int n;

	if (!c->err || !c->errlen)
		return -EINVAL;
	n = snprintf(c->err, c->errlen, "%s:%ld:%ld: ", c->name, c->line, col);
	if (n < 0 || (size_t)n >= c->errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ---- fields ------------------------------------------------------------- */

/* After a field: consume its delimiter.  1 at the end of a row, else 0. */
static inline int end_of_field(struct ncu_text_cursor *c, char *at)
{
	if (at >= c->end)
		return c->p = c->end, 1;
	if (*at == ',')
		return c->p = at + 1, 0;
	if (*at == '\n' || (*at == '\r' && at + 1 < c->end && at[1] == '\n')) {
		c->p = at + (*at == '\n' ? 1 : 2);
		c->line++;
		c->line_start = c->p;
		return 1;
	}
	return ncu_text_fail(c, at, "unexpected '%c' after a field (expected ',' or end of line)",
			     *at);
}

/*
 * Parse one field at c->p.  When keep is set, the field is unquoted in place,
 * NUL-terminated and *out points at it.  Returns 1 at the end of a row, 0
 * when more fields follow, or -EINVAL.
 */
int ncu_text_field(struct ncu_text_cursor *c, int keep, char **out)
{
	char *p = c->p, *open = p, *open_line = c->line_start, *w, *q;
	long open_no = c->line;
	int r;

	if (p < c->end && *p == '"') {
		p++;
		w = p;
		for (;;) {
			/* buf[len] is '\0': the scan stops at the end of the buffer */
			q = p;
			while (*q != '"' && *q != '\n' && *q != '\0')
				q++;
			if (q >= c->end) {
				c->line = open_no;
				c->line_start = open_line;
				return ncu_text_fail(c, open,
						     "unterminated quoted field (truncated file?)");
			}
			if (keep && w != p)
				memmove(w, p, (size_t)(q - p));
			w += q - p;
			if (*q != '"') { /* a newline or NUL byte inside the field */
				if (*q == '\n') {
					c->line++;
					c->line_start = q + 1;
				}
				if (keep)
					*w = *q;
				w++;
				p = q + 1;
				continue;
			}
			if (q + 1 < c->end && q[1] == '"') {
				if (keep)
					*w = '"';
				w++;
				p = q + 2;
				continue;
			}
			p = q + 1;
			break;
		}
		r = end_of_field(c, p);
		if (r < 0)
			return r;
		if (keep) {
			*w = '\0';
			*out = open + 1;
		}
		return r;
	}
	q = p;
	while (q < c->end && *q != ',' && *q != '\n' && *q != '\r' && *q != '"')
		q++;
	if (q < c->end && *q == '"')
		return ncu_text_fail(c, q, "quote inside an unquoted field");
	r = end_of_field(c, q);
	if (r < 0)
		return r;
	if (keep) {
		if (q < c->end)
			*q = '\0';
		*out = open;
	}
	return r;
}

/* ---- lines -------------------------------------------------------------- */

bool ncu_text_starts_with(const char *p, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(end - p) >= n && memcmp(p, prefix, n) == 0;
}

/* Move the cursor to the next line; the current one ends at its LF. */
void ncu_text_next_line(struct ncu_text_cursor *c)
{
	char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));

	c->p = nl ? nl + 1 : c->end;
	c->line++;
	c->line_start = c->p;
}

/* Length of the current line without its CR/LF (for quoting it). */
int ncu_text_line_len(const struct ncu_text_cursor *c)
{
	const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	size_t n = nl ? (size_t)(nl - c->p) : (size_t)(c->end - c->p);

	if (n && c->p[n - 1] == '\r')
		n--;
	return n > 300 ? 300 : (int)n;
}

int ncu_text_read_file(const char *path, char **out, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out_close;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out_close;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			free(buf);
			goto out_close;
		}
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
out_close:
	close(fd);
	return ret;
}
