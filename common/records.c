/* records.c - see records.h. */
#include "records.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* name_chars[c]: c may appear in a kind or a key. */
static bool name_chars[256];

static void name_chars_init(void)
{
	static const char extra[] = "_.:-/[]";

	if (name_chars['a'])
		return;
	for (int c = 0; c < 256; c++)
		name_chars[c] = isalnum(c) != 0;
	for (const char *p = extra; *p; p++)
		name_chars[(unsigned char)*p] = true;
}

/* Length of the run of name characters at s. */
static size_t name_span(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	name_chars_init();
	while (name_chars[*p])
		p++;
	return (size_t)(p - (const unsigned char *)s);
}

bool records_name_is_valid(const char *s)
{
	size_t n;

	if (!s || !*s)
		return false;
	n = name_span(s);
	return n > 0 && s[n] == '\0';
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
	char *w;

	s += strcspn(s, "\t\\"); /* most values have no escape at all */
	w = s;
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
		char *key = p, *eq = p + name_span(p);

		if (*eq != '=' || eq == key) {
			*col = (size_t)(p - line) + 1;
			return -EINVAL;
		}
		*eq = '\0';
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

/* Parse one line (no LF) and hand it to fn when its kind matches. */
static int handle_line(char *line, const char *name, size_t lineno,
		       const char *kind, records_fn fn, void *arg,
		       struct rl_field *fields, struct strbuf *err)
{
	const char *k;
	size_t col = 0;
	int n = records_parse_line(line, &k, fields, RECORDS_MAX_FIELDS, &col);

	if (n < 0) {
		if (err)
			strbuf_addf(err, "%s:%zu:%zu: %s", name, lineno, col,
				    n == -E2BIG ? "too many fields"
						: "malformed record");
		return -EINVAL;
	}
	if (kind && strcmp(kind, k) != 0)
		return 0;
	return fn(arg, k, fields);
}

/* A record file always ends with LF: a last line without one was cut. */
static int truncated(const char *name, size_t lineno, struct strbuf *err)
{
	if (err)
		strbuf_addf(err, "%s:%zu: truncated record (no end of line)",
			    name, lineno);
	return -EINVAL;
}

int records_each_in(char *buf, const char *name, const char *kind,
		    records_fn fn, void *arg, struct strbuf *err)
{
	struct rl_field *fields = xcalloc(RECORDS_MAX_FIELDS, sizeof(*fields));
	size_t lineno = 0;
	char *line = buf;
	int rc = 0;

	while (line && *line && rc == 0) {
		char *nl = strchr(line, '\n');

		lineno++;
		if (!nl) {
			rc = truncated(name, lineno, err);
			break;
		}
		*nl = '\0';
		rc = handle_line(line, name, lineno, kind, fn, arg, fields, err);
		line = nl + 1;
	}
	free(fields);
	return rc;
}

int records_each_stream(FILE *in, const char *name, const char *kind,
			records_fn fn, void *arg, struct strbuf *err)
{
	struct rl_field *fields = xcalloc(RECORDS_MAX_FIELDS, sizeof(*fields));
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int rc = 0;

	while (rc == 0 && (len = getline(&line, &cap, in)) > 0) {
		lineno++;
		if (line[len - 1] != '\n') {
			rc = truncated(name, lineno, err);
			break;
		}
		line[len - 1] = '\0';
		rc = handle_line(line, name, lineno, kind, fn, arg, fields, err);
	}
	if (rc == 0 && ferror(in)) {
		if (err)
			strbuf_addf(err, "%s: read error", name);
		rc = -EIO;
	}
	free(line);
	free(fields);
	return rc;
}

int records_each(const char *path, const char *kind, records_fn fn, void *arg,
		 struct strbuf *err)
{
	FILE *in = fopen(path, "re");
	int rc;

	if (!in) {
		rc = -errno;
		if (err)
			strbuf_addf(err, "%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = records_each_stream(in, path, kind, fn, arg, err);
	fclose(in);
	return rc;
}
