/*
 * test_gnuplot_text - plugins/gnuplot/gp_text.c, the gnuplot plugin's text
 * helpers: the two quoting functions (the plugin's defence against
 * injection: whatever the input, one string token on one line), rates with
 * their unit prefixes, ISO 8601 and epoch times.  The plugin's charts are
 * tested by test_gnuplot, its short kernel names by test_kernel_name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gnuplot/gp_text.h"

/* The quoting functions' output is one string, whatever the input. */
static void test_quoting(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&buf, &len);
	gp_text_script_quote(f, "it's `cmd` \"x\"\nset\x7f");
	fputc('|', f);
	gp_text_data_quote(f, "a\"b\\c\td\n\xc3\xa9\xff");
	fclose(f);
	assert_string_equal(buf, "'it''s ''cmd'' \"x\" set '|\"a'b/c d \xc3\xa9?\"");
	free(buf);
}

static void test_numbers_and_times(void **state)
{
	char out[64];
	double t;

	(void)state;
	gp_text_plain("NVIDIA H100 80GB HBM3", out, sizeof(out));
	assert_string_equal(out, "NVIDIA H100 80GB HBM3");
	gp_text_plain("a\"; system(\"x/y\") `z` '\n", out, sizeof(out));
	assert_string_equal(out, "a system(xy) z ");
	gp_text_roof_title("hbm_triad", out, sizeof(out));
	assert_string_equal(out, "HBM");
	gp_text_roof_title("l2'`/", out, sizeof(out));
	assert_string_equal(out, "l2");
	gp_text_rate(2903365003521.9, "B/s", out, sizeof(out));
	assert_string_equal(out, "2.90 TB/s");
	gp_text_rate(882043693095885.9, "FLOP/s", out, sizeof(out));
	assert_string_equal(out, "882 TFLOP/s");
	gp_text_rate(1.998e15, "OP/s", out, sizeof(out));
	assert_string_equal(out, "2.00 POP/s");
	gp_text_rate(828.758e9, "B/s", out, sizeof(out));
	assert_string_equal(out, "829 GB/s");
	assert_true(gp_text_parse_time("2025-06-01T02:03:04Z", &t));
	assert_true(t == 1748743384);
	assert_true(gp_text_parse_time("2025-06-01 04:03:04.5+02", &t));
	assert_true(t == 1748743384.5);
	assert_true(gp_text_parse_time("2025-06-01", &t));
	assert_true(t == 1748736000);
	assert_true(gp_text_parse_time("1748743384", &t));
	assert_false(gp_text_parse_time("yesterday", &t));
	assert_false(gp_text_parse_time("2025-13-01", &t));
	assert_false(gp_text_parse_num("1e999", &t));
	assert_false(gp_text_parse_num("12abc", &t));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_numbers_and_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
