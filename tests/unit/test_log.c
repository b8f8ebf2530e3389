/* Unit tests: common/log.c's escaping (issue 21: one message, one line). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"

static void control_characters_are_escaped(void **state)
{
	char out[64];

	(void)state;
	log_escape("run 1: bad\nrooflined[1]: error: forged", out, sizeof(out));
	assert_string_equal(out, "run 1: bad\\nrooflined[1]: error: forged");
	log_escape("a\tb\rc\033[2Jd\177e", out, sizeof(out));
	assert_string_equal(out, "a\\tb\\x0dc\\x1b[2Jd\\x7fe");
	log_escape("caf\xc3\xa9 stays", out, sizeof(out));
	assert_string_equal(out, "caf\xc3\xa9 stays");
}

/* The log escapes with the one escaper (common/utf8.c): ill-formed UTF-8 and
 * C1 controls (a terminal's CSI, U+009B) do not reach a log line raw. */
static void ill_formed_and_c1_are_escaped(void **state)
{
	char out[64];

	(void)state;
	log_escape("bad \xff byte, csi \xc2\x9b" "2J, nbsp \xc2\xa0", out, sizeof(out));
	assert_string_equal(out, "bad \\xff byte, csi \\u009b2J, nbsp \xc2\xa0");
}

static void an_escape_is_never_cut(void **state)
{
	char out[8];

	(void)state;
	log_escape("abcde\nf", out, sizeof(out));
	assert_string_equal(out, "abcde\\n");
	log_escape("abcdef\n", out, sizeof(out));
	assert_string_equal(out, "abcdef");
	log_escape("abc\033", out, sizeof(out));
	assert_string_equal(out, "abc\\x1b");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(control_characters_are_escaped),
		cmocka_unit_test(ill_formed_and_c1_are_escaped),
		cmocka_unit_test(an_escape_is_never_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
