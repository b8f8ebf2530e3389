/* Unit tests: common/util.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util.h"

static void durations_in_slurm_forms(void **state)
{
	long s;

	(void)state;
	assert_int_equal(util_parse_duration("20", &s), 0);
	assert_int_equal(s, 20 * 60);
	assert_int_equal(util_parse_duration("5:30", &s), 0);
	assert_int_equal(s, 330);
	assert_int_equal(util_parse_duration("01:02:03", &s), 0);
	assert_int_equal(s, 3723);
	assert_int_equal(util_parse_duration("2-12", &s), 0);
	assert_int_equal(s, 2 * 86400 + 12 * 3600);
	assert_int_equal(util_parse_duration("1-00:00:10", &s), 0);
	assert_int_equal(s, 86410);
	assert_int_equal(util_parse_duration("90s", &s), 0);
	assert_int_equal(s, 90);
	assert_int_equal(util_parse_duration("2h", &s), 0);
	assert_int_equal(s, 7200);
	assert_int_equal(util_parse_duration("1:61", &s), -EINVAL);
	assert_int_equal(util_parse_duration("", &s), -EINVAL);
	assert_int_equal(util_parse_duration("ten", &s), -EINVAL);
	assert_int_equal(util_parse_duration("1:2:3:4", &s), -EINVAL);
	assert_int_equal(util_parse_duration("5x", &s), -EINVAL);
	/* past a long: refused, not overflowed (found by tests/fuzz/fuzz_pipeline) */
	assert_int_equal(util_parse_duration("499999999999999999d", &s), -EINVAL);
	assert_int_equal(util_parse_duration("99999999999999999-0", &s), -EINVAL);
	assert_int_equal(util_parse_duration("999999999999999999", &s), -EINVAL);
	assert_int_equal(util_parse_duration("9999999999999999:0:0", &s), -EINVAL);
	assert_int_equal(util_parse_duration("106751991167300d", &s), 0);
	assert_int_equal(s, 106751991167300L * 86400);
}

static void contained_paths(void **state)
{
	(void)state;
	assert_true(util_path_is_contained("a/b.csv"));
	assert_true(util_path_is_contained("a/..b/c"));
	assert_false(util_path_is_contained("/etc/passwd"));
	assert_false(util_path_is_contained("../x"));
	assert_false(util_path_is_contained("a/../../x"));
	assert_false(util_path_is_contained("a/.."));
	assert_false(util_path_is_contained(""));
}

static void did_you_mean(void **state)
{
	const char *keys[] = { "command", "kernels", "launch_skip", NULL };

	(void)state;
	assert_string_equal(util_did_you_mean("comand", keys), "command");
	assert_string_equal(util_did_you_mean("kernel", keys), "kernels");
	assert_null(util_did_you_mean("zzzzzz", keys));
	assert_int_equal(util_edit_distance("kitten", "sitting", 5), 3);
}

static void atomic_write_leaves_no_temporary(void **state)
{
	char dir[] = "/tmp/rl-util-XXXXXX";
	char *path, *back;
	size_t len;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/out.tsv", dir);
	assert_int_equal(util_write_file_atomic(path, "abc\n", 4, 0644), 0);
	assert_int_equal(util_write_file_atomic(path, "second\n", 7, 0644), 0);
	assert_int_equal(util_read_file(path, 100, &back, &len), 0);
	assert_string_equal(back, "second\n");
	assert_int_equal(util_read_file(path, 3, &back, &len) , -EFBIG);
	free(back);
	unlink(path);
	assert_int_equal(rmdir(dir), 0); /* nothing else was left there */
	free(path);
}

static void numbers_are_strict(void **state)
{
	long l;
	double d;

	(void)state;
	assert_int_equal(util_parse_long("42", &l), 0);
	assert_int_equal(l, 42);
	assert_int_equal(util_parse_long("42x", &l), -EINVAL);
	assert_int_equal(util_parse_long(" 1", &l), -EINVAL);
	assert_int_equal(util_parse_long("99999999999999999999", &l), -ERANGE);
	assert_int_equal(util_parse_double("1.5e3", &d), 0);
	assert_true(d == 1500.0);
	assert_int_equal(util_parse_double("nan", &d), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations_in_slurm_forms),
		cmocka_unit_test(contained_paths),
		cmocka_unit_test(did_you_mean),
		cmocka_unit_test(atomic_write_leaves_no_temporary),
		cmocka_unit_test(numbers_are_strict),
	};
	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
