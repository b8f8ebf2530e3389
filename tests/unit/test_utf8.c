/* Unit tests: common/utf8.c - users' text made safe to store and show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "job_host.h"
#include "utf8.h"

static void well_formed_and_ill_formed(void **state)
{
	static const char *const good[] = { "", "plain ascii", "caf\xc3\xa9",
		"\xe2\x82\xac 5", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf" };
	static const char *const bad[] = {
		"\xff", "caf\xc3", "\xc3(", "\x80", "\xc0\xaf", /* overlong '/' */
		"\xe0\x80\xaf", "\xed\xa0\x80", /* a surrogate */
		"\xf4\x90\x80\x80", /* above U+10FFFF */ "\xf8\x88\x80\x80\x80" };

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(utf8_valid(good[i], strlen(good[i])));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (utf8_valid(bad[i], strlen(bad[i])))
			fail_msg("bad[%zu] passed as UTF-8", i);
}

static void sanitize_escapes_what_cannot_be_stored_or_shown(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(utf8_sanitize(out, sizeof(out), "caf\xc3\xa9 ok"), 8);
	assert_string_equal(out, "caf\xc3\xa9 ok");
	utf8_sanitize(out, sizeof(out), "a\xff" "b\tc\nd\x7f" "e\x1b[31m");
	assert_string_equal(out, "a\\xffb\\x09c\\x0ad\\x7fe\\x1b[31m");
	utf8_sanitize(out, sizeof(out), "csi \xc2\x9b" "1m \xc2\xa0");
	assert_string_equal(out, "csi \\u009b1m \xc2\xa0");
	/* cut at a whole character or escape, always terminated */
	assert_int_equal(utf8_sanitize(out, 6, "ab\xe2\x82\xac"), 5);
	assert_string_equal(out, "ab\xe2\x82\xac");
	assert_int_equal(utf8_sanitize(out, 5, "ab\xe2\x82\xac"), 2);
	assert_string_equal(out, "ab");
	assert_int_equal(utf8_sanitize(out, 5, "a\xff"), 1);
	assert_string_equal(out, "a");
	assert_int_equal(utf8_sanitize(out, 1, "abc"), 0);
	assert_string_equal(out, "");
}

/* exit.tsv is the user's: its text comes back storable, its times sane
 * (issue 21: an invalid-UTF-8 error made every state update fail). */
static void an_exit_record_comes_back_storable(void **state)
{
	char buf[] = "exit\tstatus=fail\tnode=n\\t1\xff\tstarted=99999999999999"
		     "\tended=-5\terror=bad \xff\xfe byte\\n\n";
	struct job_exit ex;

	(void)state;
	assert_int_equal(job_exit_parse(buf, "exit.tsv", &ex), 0);
	assert_int_equal(ex.status, RL_FAIL);
	assert_string_equal(ex.error, "bad \\xff\\xfe byte\\x0a");
	assert_string_equal(ex.node, "n\\x091\\xff");
	assert_int_equal(ex.started, 0);
	assert_int_equal(ex.ended, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(well_formed_and_ill_formed),
		cmocka_unit_test(sanitize_escapes_what_cannot_be_stored_or_shown),
		cmocka_unit_test(an_exit_record_comes_back_storable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
