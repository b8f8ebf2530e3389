/* Unit tests: common/records.c - the escaped-TSV record format. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip_keeps_every_byte),
		cmocka_unit_test(invalid_names_are_refused),
		cmocka_unit_test(malformed_lines_report_the_column),
		cmocka_unit_test(a_file_cut_short_is_an_error),
	};
	return cmocka_run_group_tests_name("records", tests, NULL, NULL);
}
