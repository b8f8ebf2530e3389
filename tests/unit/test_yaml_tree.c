/* Unit tests: common/yaml_tree.c (tree, positions, refusals, errors). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util.h"
#include "yaml_tree.h"

/* Parse text; on failure return NULL and leave the message in *err_out. */
static struct ytree_node *parse(const char *text, char **err_out)
{
	struct strbuf err = STRBUF_INIT;
	struct ytree_node *root;

	strbuf_init(&err);
	root = ytree_parse("t.yaml", text, strlen(text), &err);
	if (err_out)
		*err_out = strbuf_detach(&err);
	strbuf_release(&err);
	return root;
}

/* Parse text that must be refused; the message must contain want. */
static void expect_refused(const char *text, const char *want)
{
	char *err;
	struct ytree_node *root = parse(text, &err);

	assert_null(root);
	if (!strstr(err, want))
		fail_msg("message '%s' lacks '%s'", err, want);
	assert_int_equal(strchr(err, '\n') - err + 1, (long)strlen(err));
	free(err);
}

static void tree_with_positions(void **state)
{
	const char *text = "# comment\n"
			   "name: kernel-abc\n"
			   "steps:\n"
			   "  - id: a\n"
			   "    with: { n: 3, s: \"3\" }\n"
			   "  - [x, 'y']\n";
	struct ytree_node *root = parse(text, NULL);
	const struct ytree_node *steps, *first, *with, *second;

	(void)state;
	assert_non_null(root);
	assert_int_equal(root->kind, YTREE_MAPPING);
	assert_int_equal(root->n, 2);
	assert_int_equal(root->line, 2);
	assert_int_equal(root->col, 1);
	assert_string_equal(ytree_get(root, "name")->text, "kernel-abc");
	assert_int_equal(ytree_get(root, "name")->col, 7);
	steps = ytree_get(root, "steps");
	assert_int_equal(steps->kind, YTREE_SEQUENCE);
	assert_int_equal(steps->n, 2);
	first = steps->items[0];
	assert_int_equal(first->kind, YTREE_MAPPING);
	assert_int_equal(first->line, 4);
	assert_int_equal(first->col, 5);
	with = ytree_get(first, "with");
	assert_int_equal(with->kind, YTREE_MAPPING);
	assert_int_equal(with->line, 5);
	assert_int_equal(with->col, 11);
	assert_false(ytree_get(with, "n")->quoted);
	assert_true(ytree_get(with, "s")->quoted);
	assert_int_equal(ytree_get(with, "s")->col, 22);
	second = steps->items[1];
	assert_int_equal(second->kind, YTREE_SEQUENCE);
	assert_string_equal(second->items[1]->text, "y");
	assert_true(second->items[1]->quoted);
	assert_null(ytree_get(root, "missing"));
	assert_null(ytree_get(steps, "name"));
	ytree_free(root);
}

static void duplicate_keys_are_kept(void **state)
{
	struct ytree_node *root = parse("a: 1\nb: 2\na: 3\n", NULL);

	(void)state;
	assert_non_null(root);
	assert_int_equal(root->n, 3);
	assert_string_equal(ytree_get(root, "a")->text, "1");
	assert_null(ytree_earlier_key(root, 1));
	assert_ptr_equal(ytree_earlier_key(root, 2), &root->pairs[0]);
	ytree_free(root);
}

static void nulls_and_quoting(void **state)
{
	struct ytree_node *root =
		parse("a:\nb: ~\nc: null\nd: \"\"\ne: 'null'\nf: |\n  text\n"
		      "g: !!str 12\n", NULL);

	(void)state;
	assert_non_null(root);
	assert_true(ytree_is_null(ytree_get(root, "a")));
	assert_true(ytree_is_null(ytree_get(root, "b")));
	assert_true(ytree_is_null(ytree_get(root, "c")));
	assert_false(ytree_is_null(ytree_get(root, "d")));
	assert_false(ytree_is_null(ytree_get(root, "e")));
	assert_true(ytree_get(root, "f")->quoted);
	assert_string_equal(ytree_get(root, "f")->text, "text\n");
	assert_true(ytree_get(root, "g")->quoted);
	assert_string_equal(ytree_describe(ytree_get(root, "a")), "null");
	assert_string_equal(ytree_describe(ytree_get(root, "d")), "a scalar");
	assert_string_equal(ytree_describe(root), "a mapping");
	ytree_free(root);
}

static void empty_stream_is_null(void **state)
{
	struct ytree_node *root = parse("# only a comment\n", NULL);

	(void)state;
	assert_non_null(root);
	assert_true(ytree_is_null(root));
	assert_int_equal(root->line, 1);
	ytree_free(root);
	root = parse("", NULL);
	assert_non_null(root);
	assert_true(ytree_is_null(root));
	ytree_free(root);
}

static void syntax_errors_have_positions(void **state)
{
	(void)state;
	expect_refused("a: 1\nb: [1, 2\n", "t.yaml:3:1: invalid YAML: ");
	expect_refused("a: 1\n  b: 2\n", "t.yaml:2:4: invalid YAML: mapping "
					 "values are not allowed");
	expect_refused("a:\n\t- b\n", "t.yaml:2:1: invalid YAML: ");
	expect_refused("a: \"open\n", "invalid YAML: ");
	expect_refused("a: 1\nb: \xff\xfe\n", "t.yaml:2:4: invalid YAML: ");
}

static void anchors_aliases_documents_refused(void **state)
{
	(void)state;
	expect_refused("a: &x 1\nb: *x\n", "t.yaml:1:4: YAML anchors");
	expect_refused("a: *x\n", "t.yaml:1:4: ");
	expect_refused("a: 1\n---\nb: 2\n", "t.yaml:2:1: more than one YAML "
					    "document");
}

static void limits(void **state)
{
	size_t n = YTREE_MAX_BYTES + 1;
	char *big = xmalloc(n + 1), *deep = xmalloc(2 * 100 + 1), *err;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	memset(big, '#', n);
	big[n] = '\0';
	strbuf_init(&sb);
	assert_null(ytree_parse("big.yaml", big, n, &sb));
	assert_non_null(strstr(sb.buf, "big.yaml:1:1: file is 1048577 bytes"));
	strbuf_release(&sb);
	for (int i = 0; i < 100; i++) {
		deep[i] = '[';
		deep[100 + i] = ']';
	}
	deep[200] = '\0';
	assert_null(parse(deep, &err));
	assert_non_null(strstr(err, "t.yaml:1:65: YAML nested deeper than 64"));
	free(err);
	free(big);
	free(deep);
}

static void text_not_nul_terminated(void **state)
{
	const char buf[] = { 'a', ':', ' ', '1', 'x', 'y' };
	struct strbuf err = STRBUF_INIT;
	struct ytree_node *root;

	(void)state;
	strbuf_init(&err);
	root = ytree_parse("t.yaml", buf, 4, &err);
	assert_non_null(root);
	assert_string_equal(ytree_get(root, "a")->text, "1");
	ytree_free(root);
	strbuf_release(&err);
}

static void errors_sorted_and_one_line(void **state)
{
	struct ytree_node *root = parse("name: x\nsteps: []\n", NULL);
	struct ytree_errors e = YTREE_ERRORS_INIT;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	strbuf_init(&out);
	ytree_error(&e, ytree_get(root, "steps"), "second");
	ytree_error(&e, ytree_get(root, "name"), "first\nwith a newline");
	ytree_error(&e, NULL, "at the top");
	ytree_error(&e, ytree_get(root, "steps"), "third");
	ytree_errors_flush(&e, "f.yaml", &out);
	assert_string_equal(out.buf, "f.yaml:1:1: at the top\n"
				     "f.yaml:1:7: first\\x0awith a newline\n"
				     "f.yaml:2:8: second\n"
				     "f.yaml:2:8: third\n");
	ytree_errors_release(&e);
	strbuf_release(&out);
	ytree_free(root);
}

static void check_keys_reports(void **state)
{
	static const char *const known[] = { "name", "steps", "schedule", NULL };
	struct ytree_node *root =
		parse("name: x\nstpes: []\nname: y\n[a]: 1\nzzz: 2\n", NULL);
	struct ytree_errors e = YTREE_ERRORS_INIT;
	struct strbuf out = STRBUF_INIT;

	(void)state;
	strbuf_init(&out);
	ytree_check_keys(&e, root, known, " in 'top'");
	ytree_errors_flush(&e, "f", &out);
	assert_string_equal(out.buf,
			    "f:2:1: unknown key 'stpes' in 'top' (did you mean 'steps'?)\n"
			    "f:3:1: duplicate key 'name' in 'top' (first at 1:1)\n"
			    "f:4:1: key in 'top' must be a scalar, not a sequence\n"
			    "f:5:1: unknown key 'zzz' in 'top'\n");
	ytree_errors_release(&e);
	strbuf_release(&out);
	ytree_free(root);
}

static void text_getters(void **state)
{
	struct ytree_node *root =
		parse("a: 1\nb: [1]\nc:\nd: \"x\\0y\"\n", NULL);
	struct ytree_errors e = YTREE_ERRORS_INIT;
	struct strbuf out = STRBUF_INIT;
	const struct ytree_node *at;

	(void)state;
	strbuf_init(&out);
	assert_string_equal(ytree_get_text(&e, root, "a", "", &at), "1");
	assert_null(ytree_get_text(&e, root, "b", " in x", &at));
	assert_non_null(at);
	assert_null(ytree_get_text(&e, root, "c", "", &at));
	assert_null(ytree_get_text(&e, root, "d", "", &at));
	assert_null(ytree_get_text(&e, root, "zz", "", &at));
	assert_null(at);
	ytree_errors_flush(&e, "f", &out);
	assert_string_equal(out.buf,
			    "f:2:4: 'b' in x must be a scalar, not a sequence\n"
			    "f:3:3: 'c' has no value\n"
			    "f:4:4: 'd' contains a NUL character\n");
	ytree_errors_release(&e);
	strbuf_release(&out);
	ytree_free(root);
}

static void show_shortens(void **state)
{
	char buf[72], text[128];

	(void)state;
	assert_string_equal(ytree_show("short", buf), "short");
	memset(text, 'x', 99);
	text[99] = '\0';
	assert_int_equal(strlen(ytree_show(text, buf)), 63);
	assert_string_equal(ytree_show(text, buf) + 60, "...");
	/* a cut never splits a UTF-8 character */
	memset(text, 'x', 59);
	strcpy(text + 59, "\xc3\xa9 and more text to make it long enough...");
	assert_string_equal(ytree_show(text, buf) + 59, "...");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tree_with_positions),
		cmocka_unit_test(duplicate_keys_are_kept),
		cmocka_unit_test(nulls_and_quoting),
		cmocka_unit_test(empty_stream_is_null),
		cmocka_unit_test(syntax_errors_have_positions),
		cmocka_unit_test(anchors_aliases_documents_refused),
		cmocka_unit_test(limits),
		cmocka_unit_test(text_not_nul_terminated),
		cmocka_unit_test(errors_sorted_and_one_line),
		cmocka_unit_test(check_keys_reports),
		cmocka_unit_test(text_getters),
		cmocka_unit_test(show_shortens),
	};
	return cmocka_run_group_tests_name("yaml_tree", tests, NULL, NULL);
}
