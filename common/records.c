/* records.c - see records.h. */
#include "records.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* name_chars[c]: c may appear in a kind or a key.  value_stop[c]: c ends
 * the plain run of a value (TAB, the end, an escape).  Filled once, by
 * whichever thread comes first: the daemon reads and writes records in
 * several threads at once. */
static bool name_chars[256], value_stop[256];

static void fill_tables(void)
{
	static const char extra[] = "_.:-/[]";

	for (int c = 0; c < 256; c++)
		name_chars[c] = isalnum(c) != 0;
	for (const char *p = extra; *p; p++)
		name_chars[(unsigned char)*p] = true;
	value_stop['\t'] = value_stop['\0'] = value_stop['\\'] = true;
}

static void name_chars_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fill_tables);
}

/* Length of the run of name characters at s (name_chars_init() done). */
static size_t name_span(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (name_chars[*p])
		p++;
	return (size_t)(p - (const unsigned char *)s);
}

bool records_name_is_valid(const char *s)
{
	size_t n;

	if (!s || !*s)
		return false;
	name_chars_init();
	n = name_span(s);
	return n > 0 && s[n] == '\0';
}

/* s with its escapes, the plain runs between them appended whole (most
 * values have none: one append). */
static void add_escaped(struct strbuf *sb, const char *s)
{
	for (;;) {
		size_t n = strcspn(s, "\\\t\n\r");

		strbuf_add(sb, s, n);
		s += n;
		switch (*s) {
		case '\0': return;
		case '\\': strbuf_add(sb, "\\\\", 2); break;
		case '\t': strbuf_add(sb, "\\t", 2); break;
		case '\n': strbuf_add(sb, "\\n", 2); break;
		case '\r': strbuf_add(sb, "\\r", 2); break;
		}
		s++;
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

/*
 * The keys of the last line parsed, position by position: a file's records
 * of one kind list the same keys in the same order, so a key that equals
 * the one at its position in the line before is valid without checking its
 * characters again (a compare eight bytes at a time instead of a table
 * lookup per byte).
 */
struct key_memo {
	char *s;      /* owned: a valid kind or key and the byte after it
		       * (TAB or '='), zero-padded to at least 8 bytes; or NULL */
	size_t len;   /* of the kind or key */
	size_t cap;
};

/* Line-by-line state of a reader: the fields handed out, the memos. */
struct reader {
	struct rl_field fields[RECORDS_MAX_FIELDS];
	struct key_memo kind;
	struct key_memo key[RECORDS_MAX_FIELDS];
};

static struct reader *reader_new(void)
{
	name_chars_init();
	return xcalloc(1, sizeof(struct reader));
}

static void reader_free(struct reader *r)
{
	free(r->kind.s);
	for (size_t i = 0; i < RECORDS_MAX_FIELDS; i++)
		free(r->key[i].s);
	free(r);
}

/* An unaligned 8-byte load. */
static inline uint64_t load8(const char *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
	return w;
}

/* The low n (< 8) bytes of a word in memory order. */
static inline uint64_t first_bytes(size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (1ull << (8 * n)) - 1;
#else
	return ~0ull << (8 * (8 - n));
#endif
}

/* Is the name at s (in a line that ends at end), with the byte after it,
 * the memo's?  Eight bytes at a time, the last eight overlapping the ones
 * before; a short name in one masked word when the line has eight bytes
 * left (the memo always has eight). */
static bool memo_matches(const struct key_memo *m, const char *s,
			 const char *end)
{
	size_t n = m->len + 1, left = (size_t)(end - s);

	if (!m->s || left < n)
		return false;
	if (n >= 8) {
		for (size_t i = 0; i + 8 < n; i += 8)
			if (load8(s + i) != load8(m->s + i))
				return false;
		return load8(s + n - 8) == load8(m->s + n - 8);
	}
	if (left >= 8)
		return ((load8(s) ^ load8(m->s)) & first_bytes(n)) == 0;
	return memcmp(s, m->s, n) == 0;
}

/* The memo takes the valid name s (len bytes) and its stop byte. */
static void memo_set(struct key_memo *m, const char *s, size_t len, char stop)
{
	if (len + 2 > m->cap) {
		m->cap = len + 2 > 64 ? len + 2 : 64;
		free(m->s);
		m->s = xmalloc(m->cap);
	}
	memset(m->s, 0, m->cap);
	memcpy(m->s, s, len);
	m->s[len] = stop;
	m->len = len;
}

/* The end of the name (kind or key) starting at s, which ends at `stop` when
 * valid: past the memo when it matches (see memo_matches), else past the
 * run of name characters (the memo then takes the name when it is valid). */
static inline char *name_end(char *s, const char *end, char stop,
			     struct key_memo *m)
{
	size_t n;

	if (m && memo_matches(m, s, end))
		return s + m->len;
	n = name_span(s);
	if (m && n > 0 && s[n] == stop)
		memo_set(m, s, n, stop);
	return s + n;
}

#define BYTES(c) (0x0101010101010101ull * (unsigned char)(c))

/* The high bit of each byte of w that is 0, and of no other: exact, unlike
 * the usual (w - 0x01..) & ~w, so that the first match is right in either
 * byte order. */
static inline uint64_t zero_bytes(uint64_t w)
{
	const uint64_t low7 = BYTES(0x7f);

	return ~(((w & low7) + low7) | w | low7);
}

/* The first of the eight bytes at p that is TAB, NUL or a backslash, or
 * NULL. */
static inline char *stop_in8(char *p)
{
	uint64_t w = load8(p);
	uint64_t hits = zero_bytes(w) | zero_bytes(w ^ BYTES('\t')) |
			zero_bytes(w ^ BYTES('\\'));

	if (!hits)
		return NULL;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return p + (__builtin_ctzll(hits) >> 3);
#else
	return p + (__builtin_clzll(hits) >> 3);
#endif
}

/* The value at s, in a line that ends at end (NUL): up to the next TAB or
 * the end, escapes decoded, terminated.  Returns the next field, or NULL at
 * the end of the line or on a bad escape (*bad set then).  Values are
 * short and mostly free of escapes: eight bytes at a time while the line
 * has eight more, then a table lookup a byte; decode_value only for values
 * with an escape. */
static char *value_end(char *s, const char *end, char **bad)
{
	char *p = s, *hit = NULL;

	while (p + 8 <= end && !(hit = stop_in8(p)))
		p += 8;
	if (hit)
		p = hit;
	else
		while (!value_stop[(unsigned char)*p])
			p++;
	if (*p == '\\')
		return decode_value(s, bad);
	if (!*p)
		return NULL;
	*p = '\0';
	return p + 1;
}

/* records_parse_line on the line [line, end) (*end is NUL; a NUL before it
 * ends the line there too) with the memos of r (NULL: none). */
static int parse_line(char *line, const char *end, const char **kind,
		      struct rl_field *fields, size_t max, size_t *col,
		      struct reader *r)
{
	char *p, *bad = NULL;
	size_t n = 0;

	p = name_end(line, end, '\t', r ? &r->kind : NULL);
	if (p == line || (*p != '\t' && *p != '\0')) {
		*col = 1;
		return -EINVAL;
	}
	*kind = line;
	if (*p)
		*p++ = '\0';
	else
		p = NULL;
	while (p) {
		char *key = p;
		char *eq = name_end(p, end, '=',
				    r && n < RECORDS_MAX_FIELDS ? &r->key[n] : NULL);

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
		p = value_end(eq + 1, end, &bad);
		if (bad) {
			*col = (size_t)(bad - line) + 1;
			return -EINVAL;
		}
	}
	fields[n].key = NULL;
	fields[n].value = NULL;
	return (int)n;
}

int records_parse_line(char *line, const char **kind, struct rl_field *fields,
		       size_t max, size_t *col)
{
	name_chars_init();
	return parse_line(line, line + strlen(line), kind, fields, max, col, NULL);
}

/* Parse one line [line, end) (its LF replaced by NUL) and hand it to fn
 * when its kind matches. */
static int handle_line(char *line, const char *end, const char *name,
		       size_t lineno, const char *kind, records_fn fn, void *arg,
		       struct reader *r, struct strbuf *err)
{
	const char *k;
	size_t col = 0;
	int n = parse_line(line, end, &k, r->fields, RECORDS_MAX_FIELDS, &col, r);

	if (n < 0) {
		if (err)
			strbuf_addf(err, "%s:%zu:%zu: %s", name, lineno, col,
				    n == -E2BIG ? "too many fields"
						: "malformed record");
		return -EINVAL;
	}
	if (kind && strcmp(kind, k) != 0)
		return 0;
	return fn(arg, k, r->fields);
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
	struct reader *r = reader_new();
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
		rc = handle_line(line, nl, name, lineno, kind, fn, arg, r, err);
		line = nl + 1;
	}
	reader_free(r);
	return rc;
}

/* Bytes read from a stream at a time; a longer line grows the buffer, up
 * to the line limit. */
#define CHUNK (256u << 10)

/* A stream reader: where its records go, its limits, how far it got. */
struct stream {
	const char *name, *kind;
	records_fn fn;
	void *arg;
	struct reader *r;
	struct strbuf *err;
	size_t max_bytes, max_line, max_records; /* resolved: see records.h */
	size_t lineno;                           /* lines handed on */
};

static int line_too_long(const struct stream *st)
{
	if (st->err)
		strbuf_addf(st->err, "%s:%zu: line longer than %zu bytes",
			    st->name, st->lineno + 1, st->max_line);
	return -EMSGSIZE;
}

/* Hand the complete lines of buf[0..len) to handle_line; *used gets the
 * bytes consumed (up to the last LF). */
static int each_line(char *buf, size_t len, size_t *used, struct stream *st)
{
	char *line = buf, *end = buf + len, *nl;
	int rc = 0;

	while (rc == 0 && (nl = memchr(line, '\n', (size_t)(end - line)))) {
		if ((size_t)(nl - line) > st->max_line) {
			rc = line_too_long(st);
			break;
		}
		if (st->max_records && st->lineno == st->max_records) {
			if (st->err)
				strbuf_addf(st->err, "%s: more than %zu records",
					    st->name, st->max_records);
			rc = -E2BIG;
			break;
		}
		st->lineno++;
		*nl = '\0';
		rc = handle_line(line, nl, st->name, st->lineno, st->kind,
				 st->fn, st->arg, st->r, st->err);
		line = nl + 1;
	}
	*used = (size_t)(line - buf);
	return rc;
}

/* Read st's input to its end through each_line. */
static int read_stream(FILE *in, struct stream *st)
{
	size_t cap = CHUNK, len = 0, total = 0, got, used;
	char *buf = xmalloc(cap);
	int rc = 0;

	/* Whole chunks, parsed in place; a line cut by the chunk's end moves
	 * to the front and the next read completes it. */
	while (rc == 0 && (got = fread(buf + len, 1, cap - len, in)) > 0) {
		total += got;
		if (st->max_bytes && total > st->max_bytes) {
			if (st->err)
				strbuf_addf(st->err, "%s: more than %zu bytes",
					    st->name, st->max_bytes);
			rc = -EFBIG;
			break;
		}
		len += got;
		rc = each_line(buf, len, &used, st);
		memmove(buf, buf + used, len - used);
		len -= used;
		if (rc == 0 && len > st->max_line) {
			rc = line_too_long(st);
		} else if (len == cap) { /* one line fills the buffer */
			cap = cap > st->max_line / 2 ? st->max_line + 1 : cap * 2;
			buf = xrealloc(buf, cap);
		}
	}
	if (rc == 0 && ferror(in)) {
		if (st->err)
			strbuf_addf(st->err, "%s: read error", st->name);
		rc = -EIO;
	} else if (rc == 0 && len) {
		rc = truncated(st->name, st->lineno + 1, st->err);
	}
	free(buf);
	return rc;
}

int records_each_limited(FILE *in, const char *name, const char *kind,
			 const struct records_limits *lim, records_fn fn,
			 void *arg, struct strbuf *err)
{
	struct stream st = { .name = name, .kind = kind, .fn = fn, .arg = arg,
			     .err = err, .max_line = RECORDS_LINE_MAX };
	int rc;

	if (lim) {
		st.max_bytes = lim->max_bytes;
		st.max_records = lim->max_records;
		if (lim->max_line && lim->max_line < RECORDS_LINE_MAX)
			st.max_line = lim->max_line;
	}
	st.r = reader_new();
	rc = read_stream(in, &st);
	reader_free(st.r);
	return rc;
}

int records_each_stream(FILE *in, const char *name, const char *kind,
			records_fn fn, void *arg, struct strbuf *err)
{
	return records_each_limited(in, name, kind, NULL, fn, arg, err);
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
