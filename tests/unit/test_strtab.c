/*
 * test_strtab.c - common/strtab.c: an interned string is one pointer for
 * equal strings and another for different ones, its characters are the
 * caller's, the table keeps every string across its growth (5,000 names:
 * three doublings), strtab_cmp orders as strcmp does, and a released table
 * is empty and usable again (the sanitizer build finds a leak or a double
 * free).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "strtab.h"

static void test_one_pointer(void **state)
{
	struct strtab t = STRTAB_INIT;
	char a[] = "GPU-0001", b[] = "GPU-0001";
	char *x = strtab_intern(&t, a), *y = strtab_intern(&t, b);

	(void)state;
	assert_non_null(x);
	assert_ptr_equal(x, y);
	assert_ptr_not_equal(x, a); /* the table's copy */
	assert_string_equal(x, "GPU-0001");
	a[0] = 'X'; /* the caller's buffer is not the table's */
	assert_string_equal(strtab_intern(&t, "GPU-0001"), "GPU-0001");
	assert_ptr_not_equal(strtab_intern(&t, "GPU-0002"), x);
	assert_ptr_equal(strtab_intern(&t, ""), strtab_intern(&t, ""));
	assert_int_equal(t.n, 3);
	strtab_release(&t);
	assert_int_equal(t.n, 0);
	assert_non_null(strtab_intern(&t, "again"));
	strtab_release(&t);
}

static void test_growth(void **state)
{
	struct strtab t = STRTAB_INIT;
	char *first[5000], name[32];

	(void)state;
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "kernel_%d(double *)", i);
		first[i] = strtab_intern(&t, name);
		assert_non_null(first[i]);
	}
	assert_int_equal(t.n, 5000);
	assert_true(t.cap >= 10000);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "kernel_%d(double *)", i);
		assert_ptr_equal(strtab_intern(&t, name), first[i]);
		assert_string_equal(first[i], name);
	}
	assert_int_equal(t.n, 5000);
	strtab_release(&t);
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

static void test_cmp(void **state)
{
	struct strtab t = STRTAB_INIT;
	const char *w[] = { "dram", "l1", "l2", "fp64", "fp16", "all", "" };

	(void)state;
	for (size_t i = 0; i < sizeof(w) / sizeof(*w); i++)
		for (size_t j = 0; j < sizeof(w) / sizeof(*w); j++)
			assert_int_equal(sign(strtab_cmp(strtab_intern(&t, w[i]),
							 strtab_intern(&t, w[j]))),
					 sign(strcmp(w[i], w[j])));
	/* a string of the table against one of no table: by the characters */
	assert_int_equal(strtab_cmp(strtab_intern(&t, "l2"), "l2"), 0);
	strtab_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_pointer),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_cmp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
