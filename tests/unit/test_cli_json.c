/* Unit tests: cli/cli_json.c (typed values, documents as printed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_json.h"

/* Print doc (plain, or pretty) and return what reached stdout; caller frees. */
static char *printed(struct json_object *doc, bool pretty)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDOUT_FILENO);
	char *buf = calloc(1, 4096);

	assert_non_null(tmp);
	fflush(stdout);
	assert_int_equal(dup2(fileno(tmp), STDOUT_FILENO), STDOUT_FILENO);
	assert_int_equal(cli_json_print(doc, pretty), 0);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(tmp);
	assert_true(fread(buf, 1, 4095, tmp) > 0);
	fclose(tmp);
	return buf;
}

/* One typed value in an array, printed plain. */
static void check_typed(const char *text, enum db_type type, const char *want)
{
	struct json_object *a = cli_json_array();
	char *got;

	cli_json_append(a, cli_json_typed(text, type));
	got = printed(a, false);
	assert_string_equal(got, want);
	free(got);
	cli_json_free(a);
}

static void typed_values(void **state)
{
	(void)state;
	check_typed("42", DB_TYPE_INT, "[42]\n");
	check_typed("-9007199254740993", DB_TYPE_INT, "[-9007199254740993]\n");
	/* the database's digits, not 0.10000000000000001 */
	check_typed("0.1", DB_TYPE_FLOAT, "[0.1]\n");
	check_typed("87.3", DB_TYPE_FLOAT, "[87.3]\n");
	check_typed("1.5e+20", DB_TYPE_FLOAT, "[1.5e+20]\n");
	/* no JSON number: a string rather than invalid JSON */
	check_typed("NaN", DB_TYPE_FLOAT, "[\"NaN\"]\n");
	check_typed("Infinity", DB_TYPE_FLOAT, "[\"Infinity\"]\n");
	check_typed("t", DB_TYPE_BOOL, "[true]\n");
	check_typed("f", DB_TYPE_BOOL, "[false]\n");
	check_typed(NULL, DB_TYPE_INT, "[null]\n");
	check_typed(NULL, DB_TYPE_TEXT, "[null]\n");
	check_typed("12x", DB_TYPE_INT, "[\"12x\"]\n");
	/* quotes, control characters, and slashes left alone */
	check_typed("a \"b\"\n/spool/c", DB_TYPE_TEXT, "[\"a \\\"b\\\"\\n/spool/c\"]\n");
}

static void documents(void **state)
{
	struct json_object *doc = cli_json_object(), *runs = cli_json_array();
	struct json_object *run = cli_json_object();
	char *got;

	(void)state;
	cli_json_set(run, "id", cli_json_int(7));
	cli_json_set(run, "ended_at", cli_json_string(NULL));
	cli_json_set(run, "on_daemon", cli_json_bool(true));
	cli_json_append(runs, run);
	cli_json_set(doc, "runs", runs);
	assert_ptr_equal(cli_json_array_at(doc, "runs"), runs);
	assert_null(cli_json_array_at(doc, "steps"));
	got = printed(doc, false);
	assert_string_equal(got, "{\"runs\":[{\"id\":7,\"ended_at\":null,\"on_daemon\":true}]}\n");
	free(got);
	got = printed(doc, true);
	assert_string_equal(got, "{\n  \"runs\": [\n    {\n      \"id\": 7,\n"
			    "      \"ended_at\": null,\n      \"on_daemon\": true\n"
			    "    }\n  ]\n}\n");
	free(got);
	cli_json_free(doc);
	cli_json_free(NULL);
}

static void parse(void **state)
{
	struct json_object *a = cli_json_array();
	char *got;

	(void)state;
	assert_null(cli_json_parse("{not json"));
	assert_null(cli_json_parse(NULL));
	cli_json_append(a, cli_json_parse("{\"flops\": 1e9, \"k\": \"v\"}"));
	got = printed(a, false);
	assert_string_equal(got, "[{\"flops\":1e9,\"k\":\"v\"}]\n");
	free(got);
	cli_json_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(typed_values),
		cmocka_unit_test(documents),
		cmocka_unit_test(parse),
	};
	return cmocka_run_group_tests_name("cli_json", tests, NULL, NULL);
}
