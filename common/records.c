/* records.c - see records.h. */
#include "records.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define RECORDS_MAX_FILE (1024u * 1024u * 1024u)

static bool name_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == ':' || c == '-' ||
	       c == '/' || c == '[' || c == ']';
}

bool records_name_is_valid(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!name_char((unsigned char)*s))
			return false;
	return true;
}

static void add_escaped(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\\': strbuf_add(sb, "\\\\", 2); break;
		case '\t': strbuf_add(sb, "\\t", 2); break;
		case '\n': strbuf_add(sb, "\\n", 2); break;
		case '\r': strbuf_add(sb, "\\r", 2); break;
		default: strbuf_addch(sb, *s);
		}
	}
}

int records_format(struct strbuf *sb, const char *kind,
		   const struct rl_field *fields)
{
	size_t start = sb->len;

	if (!records_name_is_valid(kind))
		return -EINVAL;
	strbuf_addstr(sb, kind);
	for (; fields && fields->key; fields++) {
		if (!records_name_is_valid(fields->key) || !fields->value) {
			sb->len = start;
			if (sb->alloc)
				sb->buf[start] = '\0';
			return -EINVAL;
		}
		strbuf_addch(sb, '\t');
		strbuf_addstr(sb, fields->key);
		strbuf_addch(sb, '=');
		add_escaped(sb, fields->value);
	}
	strbuf_addch(sb, '\n');
	return 0;
}

/* Decode the escapes of the value starting at s, in place, up to the next
 * TAB or the end, and terminate it.  Returns a pointer to the next field (just
 * past the TAB) or NULL at the end of the line; on a bad escape sets *bad to
 * it and returns NULL. */
static char *decode_value(char *s, char **bad)
{
	char *w = s;

	while (*s && *s != '\t') {
		if (*s != '\\') {
			*w++ = *s++;
			continue;
		}
		switch (s[1]) {
		case '\\': *w++ = '\\'; break;
		case 't': *w++ = '\t'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		default:
			*bad = s;
			return NULL;
		}
		s += 2;
	}
	char *next = *s == '\t' ? s + 1 : NULL;

	*w = '\0';
	return next;
}

int records_parse_line(char *line, const char **kind, struct rl_field *fields,
		       size_t max, size_t *col)
{
	char *p = line, *bad = NULL;
	size_t n = 0;

	p += strcspn(p, "\t");
	if (*p)
		*p++ = '\0';
	else
		p = NULL;
	if (!records_name_is_valid(line)) {
		*col = 1;
		return -EINVAL;
	}
	*kind = line;
	while (p) {
		char *key = p, *eq = p + strcspn(p, "=\t");

		if (*eq != '=') {
			*col = (size_t)(p - line) + 1;
			return -EINVAL;
		}
		*eq = '\0';
		if (!records_name_is_valid(key)) {
			*col = (size_t)(key - line) + 1;
			return -EINVAL;
		}
		if (n + 1 >= max)
			return -E2BIG;
		fields[n].key = key;
		fields[n].value = eq + 1;
		n++;
		p = decode_value(eq + 1, &bad);
		if (bad) {
			*col = (size_t)(bad - line) + 1;
			return -EINVAL;
		}
	}
	fields[n].key = NULL;
	fields[n].value = NULL;
	return (int)n;
}

int records_each_in(char *buf, const char *name, const char *kind,
		    records_fn fn, void *arg, struct strbuf *err)
{
	struct rl_field *fields = xcalloc(RECORDS_MAX_FIELDS, sizeof(*fields));
	size_t lineno = 0;
	char *line = buf;
	int rc = 0;

	while (line && *line) {
		char *nl = strchr(line, '\n');
		const char *k;
		size_t col = 0;
		int n;

		lineno++;
		if (nl)
			*nl = '\0';
		else if (err) {
			/* A record file always ends with LF: no LF means it was
			 * cut short. */
			strbuf_addf(err, "%s:%zu: truncated record (no end of line)",
				    name, lineno);
			rc = -EINVAL;
			break;
		}
		n = records_parse_line(line, &k, fields, RECORDS_MAX_FIELDS, &col);
		if (n < 0) {
			if (err)
				strbuf_addf(err, "%s:%zu:%zu: %s", name, lineno,
					    col, n == -E2BIG ? "too many fields"
						 : "malformed record");
			rc = -EINVAL;
			break;
		}
		if (!kind || strcmp(kind, k) == 0) {
			rc = fn(arg, k, fields);
			if (rc)
				break;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(fields);
	return rc;
}

int records_each(const char *path, const char *kind, records_fn fn, void *arg,
		 struct strbuf *err)
{
	char *buf;
	int rc = util_read_file(path, RECORDS_MAX_FILE, &buf, NULL);

	if (rc < 0) {
		if (err)
			strbuf_addf(err, "%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = records_each_in(buf, path, kind, fn, arg, err);
	free(buf);
	return rc;
}
