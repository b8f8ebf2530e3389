/* Unit tests: common/records.c - the escaped-TSV record format. */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "records.h"
#include "util.h"

static void round_trip_keeps_every_byte(void **state)
{
	const char *tricky = "tab\there\nnew line\\back\rslash=eq";
	struct strbuf sb = STRBUF_INIT;
	struct rl_field out[8];
	const char *kind;
	size_t col = 0;
	char *line;
	int n;

	(void)state;
	strbuf_init(&sb);
	assert_int_equal(records_format(&sb, "kernel", (const struct rl_field[]){
		{ "name", tricky }, { "dram__bytes.sum", "1234" }, { "empty", "" },
		{ NULL, NULL } }), 0);
	/* one line, no raw TAB inside values, ends with LF */
	assert_ptr_equal(strchr(sb.buf, '\n'), sb.buf + sb.len - 1);
	line = xstrndup(sb.buf, sb.len - 1);
	n = records_parse_line(line, &kind, out, 8, &col);
	assert_int_equal(n, 3);
	assert_string_equal(kind, "kernel");
	assert_string_equal(out[0].key, "name");
	assert_string_equal(out[0].value, tricky);
	assert_string_equal(out[1].key, "dram__bytes.sum");
	assert_string_equal(out[1].value, "1234");
	assert_string_equal(out[2].value, "");
	assert_null(out[3].key);
	free(line);
	strbuf_release(&sb);
}

static void invalid_names_are_refused(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	strbuf_init(&sb);
	assert_int_equal(records_format(&sb, "bad kind", NULL), -EINVAL);
	assert_int_equal(records_format(&sb, "k", (const struct rl_field[]){
		{ "a=b", "x" }, { NULL, NULL } }), -EINVAL);
	assert_int_equal(sb.len, 0);
	strbuf_release(&sb);
}

static void malformed_lines_report_the_column(void **state)
{
	struct rl_field f[4];
	const char *kind;
	size_t col = 0;
	char l1[] = "kind\tnoequals", l2[] = "kind\ta=ok\tb=bad\\qescape";

	(void)state;
	assert_int_equal(records_parse_line(l1, &kind, f, 4, &col), -EINVAL);
	assert_int_equal(col, 6);
	assert_int_equal(records_parse_line(l2, &kind, f, 4, &col), -EINVAL);
	assert_int_equal(col, 16); /* the backslash of \q */
}

static int count(void *arg, const char *kind, const struct rl_field *f)
{
	(void)kind;
	(void)f;
	(*(int *)arg)++;
	return 0;
}

static void a_file_cut_short_is_an_error(void **state)
{
	char good[] = "a\tx=1\nb\ty=2\na\tx=3\n";
	char cut[] = "a\tx=1\na\tx=";
	struct strbuf err = STRBUF_INIT;
	int n = 0;

	(void)state;
	strbuf_init(&err);
	assert_int_equal(records_each_in(good, "good", "a", count, &n, &err), 0);
	assert_int_equal(n, 2);
	n = 0;
	assert_int_equal(records_each_in(cut, "cut.tsv", NULL, count, &n, &err),
			 -EINVAL);
	assert_non_null(strstr(err.buf, "cut.tsv:2: truncated record"));
	strbuf_release(&err);
}

/* ---- the reader against a plain parser ------------------------------------
 *
 * The reader parses in chunks, remembers the keys of the line before and
 * scans values eight bytes at a time; ref_parse is the one-byte-at-a-time
 * parser it replaced (records.c before that), the oracle. */

static bool ref_name_char(unsigned char c)
{
	return isalnum(c) || (c && strchr("_.:-/[]", c));
}

/* Parse line (modified) into *sb as records_format writes it; 0, or the
 * 1-based column of the fault. */
static size_t ref_parse(char *line, struct strbuf *sb)
{
	struct rl_field f[RECORDS_MAX_FIELDS];
	char *p = line + strcspn(line, "\t");
	size_t n = 0;

	if (p == line)
		return 1;
	for (char *k = line; k < p; k++)
		if (!ref_name_char((unsigned char)*k))
			return 1;
	p = *p ? (*p = '\0', p + 1) : NULL;
	while (p) {
		char *key = p, *eq = p, *w;

		while (ref_name_char((unsigned char)*eq))
			eq++;
		if (*eq != '=' || eq == key)
			return (size_t)(p - line) + 1;
		*eq = '\0';
		f[n].key = key;
		f[n].value = w = p = eq + 1;
		n++;
		while (*p && *p != '\t') {
			if (*p != '\\') {
				*w++ = *p++;
				continue;
			}
			switch (p[1]) {
			case '\\': *w++ = '\\'; break;
			case 't': *w++ = '\t'; break;
			case 'n': *w++ = '\n'; break;
			case 'r': *w++ = '\r'; break;
			default: return (size_t)(p - line) + 1;
			}
			p += 2;
		}
		p = *p ? p + 1 : NULL;
		*w = '\0';
	}
	f[n].key = NULL;
	assert_int_equal(records_format(sb, line, f), 0);
	return 0;
}

static int reformat(void *arg, const char *kind, const struct rl_field *f)
{
	assert_int_equal(records_format(arg, kind, f), 0);
	return 0;
}

static unsigned long next_rand(unsigned long *seed)
{
	*seed = *seed * 6364136223846793005ul + 1442695040888963407ul;
	return *seed >> 33;
}

/* Lines as records_format writes them, keys that are prefixes of one
 * another at the same positions, values of every length around 8 with and
 * without escapes. */
static void random_records(struct strbuf *text, size_t bytes)
{
	static const char *const kinds[] = { "kernel", "device", "k" };
	static const char *const keys[] = { "a", "ab", "abcdefg", "abcdefgh",
		"abcdefghi", "abcdefghijklmnop", "abcdefghijklmnopq",
		"sm__sass_thread_inst_executed_op_dadd_pred_on.sum", "x[0]:y/z-w" };
	static const char chars[] = "0123456789.e-xyz =\t\\\n\r";
	unsigned long seed = 42;
	char values[16][32];

	while (text->len < bytes) {
		struct rl_field f[16];
		size_t n = next_rand(&seed) % 15;

		for (size_t i = 0; i < n; i++) {
			size_t len = next_rand(&seed) % 20;
			/* mostly plain digits, as a file of counts has */
			size_t alphabet = next_rand(&seed) % 4 ? 11 : sizeof(chars) - 1;

			for (size_t c = 0; c < len; c++)
				values[i][c] = chars[next_rand(&seed) % alphabet];
			values[i][len] = '\0';
			f[i].key = keys[(i + (next_rand(&seed) % 8 == 0)) % 9];
			f[i].value = values[i];
		}
		f[n].key = NULL;
		f[n].value = NULL;
		assert_int_equal(records_format(text, kinds[next_rand(&seed) % 3], f), 0);
	}
}

static void the_reader_gives_back_what_was_written(void **state)
{
	char path[] = "/tmp/rl-records-XXXXXX";
	struct strbuf text = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	char *copy;
	int fd;

	(void)state;
	strbuf_init(&text);
	strbuf_init(&out);
	strbuf_init(&err);
	random_records(&text, 3u << 20); /* chunks of the reader: 256 KiB */
	/* one line longer than a chunk */
	strbuf_addstr(&text, "long\tv=");
	for (int i = 0; i < 300000; i++)
		strbuf_addch(&text, "0123456789"[i % 10]);
	strbuf_addstr(&text, "\tw=\\t\n");
	random_records(&text, text.len + 1000);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text.buf, text.len), (ssize_t)text.len);
	close(fd);
	assert_int_equal(records_each(path, NULL, reformat, &out, &err), 0);
	assert_int_equal(out.len, text.len);
	assert_memory_equal(out.buf, text.buf, text.len);
	strbuf_reset(&out);
	copy = xstrdup(text.buf);
	assert_int_equal(records_each_in(copy, "text", NULL, reformat, &out, &err), 0);
	assert_memory_equal(out.buf, text.buf, text.len);
	unlink(path);
	free(copy);
	strbuf_release(&text);
	strbuf_release(&out);
	strbuf_release(&err);
}

/* ref_parse on a copy of line. */
static size_t ref_parse_copy(const char *line, struct strbuf *sb)
{
	char *copy = xstrdup(line);
	size_t col = ref_parse(copy, sb);

	free(copy);
	return col;
}

/* Two lines that set the reader's key memos, then line with byte i set to
 * c: read from a stream, and (without a NUL) from memory, the records and
 * the error must be the plain parser's. */
static void check_change(const char *line, size_t i, char c)
{
	struct strbuf want = STRBUF_INIT, got = STRBUF_INIT, err = STRBUF_INIT;
	char *buf = xasprintf("%s\n%s\n%s\n", line, line, line), *changed, expect[64];
	size_t len = strlen(line), col;
	FILE *in;

	strbuf_init(&want);
	strbuf_init(&got);
	strbuf_init(&err);
	buf[2 * (len + 1) + i] = c;
	ref_parse_copy(line, &want);
	ref_parse_copy(line, &want);
	changed = xstrndup(buf + 2 * (len + 1), len); /* to a NUL, as getline's reader */
	col = ref_parse(changed, &want);
	free(changed);
	snprintf(expect, sizeof(expect), "t:3:%zu: malformed record", col);
	in = fmemopen(buf, 3 * (len + 1), "r");
	assert_non_null(in);
	assert_int_equal(records_each_stream(in, "t", NULL, reformat, &got, &err),
			 col ? -EINVAL : 0);
	fclose(in);
	if (col)
		assert_string_equal(err.buf, expect);
	assert_int_equal(got.len, want.len);
	assert_memory_equal(got.buf, want.buf, want.len);
	if (c) { /* in memory, a NUL is the end of the buffer */
		strbuf_reset(&got);
		strbuf_reset(&err);
		assert_int_equal(records_each_in(buf, "t", NULL, reformat, &got, &err),
				 col ? -EINVAL : 0);
		if (col)
			assert_string_equal(err.buf, expect);
		assert_memory_equal(got.buf, want.buf, want.len);
	}
	free(buf);
	strbuf_release(&want);
	strbuf_release(&got);
	strbuf_release(&err);
}

static void every_one_byte_change_reads_as_the_plain_parser_reads_it(void **state)
{
	static const char line[] = "kernel\tabcdefghij=1\tab=2\tabcdefghijklmnopqrs=x"
				   "\\ty\tc=5\tabcdefgh=12345678\tz=";
	static const char subs[] = { ' ', '=', '\t', '\\', '\x01', '\xc3', 'a', '0',
				      't', '\0' };

	(void)state;
	for (size_t i = 0; i < strlen(line); i++)
		for (size_t c = 0; c < sizeof(subs); c++)
			check_change(line, i, subs[c]);
}

/* ---- limits: what a file the daemon does not trust can make it do ------- */

/* A file of `size` bytes (sparse: NUL bytes, no LF) after `head`. */
static FILE *sparse_file(const char *head, off_t size)
{
	FILE *in = tmpfile();

	assert_non_null(in);
	assert_int_equal(fputs(head, in) >= 0, 1);
	assert_int_equal(fflush(in), 0);
	assert_int_equal(ftruncate(fileno(in), size), 0);
	rewind(in);
	return in;
}

/* A 4 GiB sparse file without a newline (issue 21: the daemon doubled its
 * buffer until the allocation aborted): the default reader stops at
 * RECORDS_LINE_MAX and names the line. */
static void a_line_without_end_stops_at_the_line_limit(void **state)
{
	struct strbuf err = STRBUF_INIT;
	int n = 0;
	FILE *in = sparse_file("kernel\tname=a\nkernel\tname=", 4LL << 30);

	(void)state;
	strbuf_init(&err);
	assert_int_equal(records_each_stream(in, "big.tsv", NULL, count, &n, &err),
			 -EMSGSIZE);
	assert_int_equal(n, 1);
	assert_string_equal(err.buf, "big.tsv:2: line longer than 67108864 bytes");
	fclose(in);
	strbuf_release(&err);
}

/* Feed text through records_each_limited with lim; returns its result,
 * *n the records handed on, err its message. */
static int read_limited(const char *text, const struct records_limits *lim,
			int *n, struct strbuf *err)
{
	FILE *in = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
	int rc;

	assert_non_null(in);
	*n = 0;
	strbuf_reset(err);
	rc = records_each_limited(in, "r.tsv", NULL, lim, count, n, err);
	fclose(in);
	return rc;
}

static void each_limit_holds_to_the_byte(void **state)
{
	/* lines of 15 bytes and their LF */
	static const char text[] = "kernel\tname=abc\nkernel\tname=abd\n"
				   "kernel\tname=abe\n";
	struct records_limits lim = { 0 };
	struct strbuf err = STRBUF_INIT;
	int n;

	(void)state;
	strbuf_init(&err);
	lim.max_line = 15;
	assert_int_equal(read_limited(text, &lim, &n, &err), 0);
	assert_int_equal(n, 3);
	lim.max_line = 14;
	assert_int_equal(read_limited(text, &lim, &n, &err), -EMSGSIZE);
	assert_int_equal(n, 0);
	assert_string_equal(err.buf, "r.tsv:1: line longer than 14 bytes");

	lim = (struct records_limits){ .max_records = 3 };
	assert_int_equal(read_limited(text, &lim, &n, &err), 0);
	lim.max_records = 2;
	assert_int_equal(read_limited(text, &lim, &n, &err), -E2BIG);
	assert_int_equal(n, 2);
	assert_string_equal(err.buf, "r.tsv: more than 2 records");

	lim = (struct records_limits){ .max_bytes = 48 };
	assert_int_equal(read_limited(text, &lim, &n, &err), 0);
	lim.max_bytes = 47;
	assert_int_equal(read_limited(text, &lim, &n, &err), -EFBIG);
	assert_string_equal(err.buf, "r.tsv: more than 47 bytes");
	strbuf_release(&err);
}

/* A line longer than a chunk (256 KiB) still reads within a larger limit,
 * and one past the limit fails after reading no more than the limit's
 * worth of it. */
static void long_lines_grow_the_buffer_up_to_the_limit(void **state)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	struct records_limits lim = { .max_line = 1u << 20 };
	int n;

	(void)state;
	strbuf_init(&text);
	strbuf_init(&err);
	strbuf_addstr(&text, "k\tv=");
	while (text.len < (1u << 20))
		strbuf_addch(&text, 'x');
	strbuf_addch(&text, '\n');
	assert_int_equal(read_limited(text.buf, &lim, &n, &err), 0);
	assert_int_equal(n, 1);
	text.buf[text.len - 1] = 'x';
	strbuf_addch(&text, '\n');
	assert_int_equal(read_limited(text.buf, &lim, &n, &err), -EMSGSIZE);
	assert_string_equal(err.buf, "r.tsv:1: line longer than 1048576 bytes");
	text.len--; /* no LF at all: the same */
	text.buf[text.len] = '\0';
	assert_int_equal(read_limited(text.buf, &lim, &n, &err), -EMSGSIZE);
	strbuf_release(&text);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_line_without_end_stops_at_the_line_limit),
		cmocka_unit_test(each_limit_holds_to_the_byte),
		cmocka_unit_test(long_lines_grow_the_buffer_up_to_the_limit),
		cmocka_unit_test(round_trip_keeps_every_byte),
		cmocka_unit_test(invalid_names_are_refused),
		cmocka_unit_test(malformed_lines_report_the_column),
		cmocka_unit_test(a_file_cut_short_is_an_error),
		cmocka_unit_test(the_reader_gives_back_what_was_written),
		cmocka_unit_test(every_one_byte_change_reads_as_the_plain_parser_reads_it),
	};
	return cmocka_run_group_tests_name("records", tests, NULL, NULL);
}
