/*
 * Unit tests: common/plugin_loader.c and common/options.c against real
 * shared objects: the smoke plugin and one test plugin per ABI fault
 * (tests/plugins/), built into $ROOFLINE_BUILD.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "options.h"
#include "plugin_loader.h"
#include "util.h"

static const char *build_dir(void)
{
	const char *b = getenv("ROOFLINE_BUILD");

	return b ? b : "build/debug";
}

/* Open build/<v>/<sub>/<name>.so and expect a refusal containing `fault`. */
static void expect_refused(const char *sub, const char *name, const char *fault)
{
	char *path = xasprintf("%s/%s/%s.so", build_dir(), sub, name);
	struct strbuf err = STRBUF_INIT;
	struct plugin_handle *h;

	strbuf_init(&err);
	h = plugin_loader_open(path, &err);
	assert_null(h);
	/* the message names the file first, then the fault */
	assert_int_equal(strncmp(err.buf, path, strlen(path)), 0);
	if (!strstr(err.buf, fault))
		fail_msg("'%s' lacks '%s'", err.buf, fault);
	strbuf_release(&err);
	free(path);
}

static void abi_faults_are_refused(void **state)
{
	(void)state;
	expect_refused("test-plugins", "abi_mismatch",
		       ": plugin ABI 2, this host speaks ABI 1");
	expect_refused("test-plugins", "short_struct", "shorter than the");
	expect_refused("test-plugins", "no_symbol",
		       "missing symbol 'rooflined_plugin'");
	expect_refused("test-plugins", "wrong_name",
		       "plugin calls itself 'someone_else', not 'wrong_name'");
	expect_refused("test-plugins", "bad_options", "'far' lies outside");
}

static void non_shared_objects_are_refused(void **state)
{
	struct strbuf err = STRBUF_INIT;

	(void)state;
	strbuf_init(&err);
	assert_null(plugin_loader_open("/etc/hostname", &err));
	assert_non_null(strstr(err.buf, "/etc/hostname: not a shared object"));
	strbuf_reset(&err);
	/* a program (PIE is ET_DYN too) */
	assert_null(plugin_loader_open("/bin/true", &err));
	assert_non_null(strstr(err.buf, "it is a program"));
	strbuf_reset(&err);
	assert_null(plugin_loader_find(build_dir(), "no-such", &err));
	assert_non_null(strstr(err.buf, "unknown plugin 'no-such'"));
	strbuf_release(&err);
}

struct smoke_cfg_view { /* the smoke plugin's config, as documented */
	char *message;
	long sleep_s;
	long fail_attempts;
	int fail;
	int crash;
	long records;
	char *file;
};

static void options_fill_the_config(void **state)
{
	char *dir = xasprintf("%s/plugins", build_dir());
	struct strbuf err = STRBUF_INIT;
	struct plugin_handle *h;
	struct options *o;
	const struct smoke_cfg_view *cfg;

	(void)state;
	strbuf_init(&err);
	h = plugin_loader_find(dir, "smoke", &err);
	assert_non_null(h);
	o = options_new(h->plugin);
	assert_int_equal(options_set(o, "records", "7", &err), 0);
	assert_int_equal(options_set(o, "fail", "yes", &err), 0);
	assert_int_equal(options_set(o, "records", "x7", &err), -EINVAL);
	assert_non_null(strstr(err.buf, "option 'records' expects an integer"));
	strbuf_reset(&err);
	assert_int_equal(options_set(o, "recrods", "1", &err), -EINVAL);
	assert_non_null(strstr(err.buf, "did you mean 'records'"));
	strbuf_reset(&err);
	assert_int_equal(options_set(o, "file", "../../etc/shadow", &err), -EINVAL);
	assert_non_null(strstr(err.buf, "leaves the run directory"));
	assert_int_equal(options_finish(o, &err), 0);
	cfg = o->config;
	assert_int_equal(cfg->records, 7);
	assert_int_equal(cfg->fail, 1);
	assert_string_equal(cfg->message, "hello from roofline-job"); /* default */
	assert_null(cfg->file);
	options_free(o);
	plugin_loader_close(h);
	strbuf_release(&err);
	free(dir);
}

/* RL_OPT_PROGRAM (issue 25): the plugins mark the options that name a
 * program (what daemon/step_policy.c listed by plugin and key before), and
 * the table check refuses the mark on a type that cannot name one. */
static void program_options_are_marked(void **state)
{
	static const struct {
		const char *plugin, *key;
		bool program;
	} want[] = {
		{ "ncu", "ncu", true }, { "ncu", "command", true },
		{ "ncu", "extra", true }, { "ncu", "kernels", false },
		{ "ncu", "metrics_table", false }, { "gnuplot", "gnuplot", true },
		{ "gnuplot", "title", false }, { "ert", "bench", true },
		{ "instruction", "gnuplot", true }, { "instruction", "chart", false },
		{ "smoke", "message", false },
	};
	char *dir = xasprintf("%s/plugins", build_dir());
	struct strbuf err = STRBUF_INIT;

	(void)state;
	strbuf_init(&err);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct plugin_handle *h = plugin_loader_find(dir, want[i].plugin, &err);
		const struct rl_option *o;

		assert_non_null(h);
		o = options_find(h->plugin, want[i].key);
		assert_non_null(o);
		if (options_names_program(o) != want[i].program)
			fail_msg("%s's option '%s' %s a program", want[i].plugin,
				 want[i].key, want[i].program ? "should name" : "names");
		plugin_loader_close(h);
	}
	strbuf_release(&err);
	free(dir);
}

struct two_longs { char *s; long n; };

static void program_mark_on_a_number_is_refused(void **state)
{
	static const struct rl_option good[] = {
		{ "prog", RL_OPT_STRING | RL_OPT_PROGRAM, NULL,
		  offsetof(struct two_longs, s), "a program", 0 },
		{ NULL, 0, NULL, 0, NULL, 0 },
	};
	static const struct rl_option bad[] = {
		{ "n", RL_OPT_INT | RL_OPT_PROGRAM, "1",
		  offsetof(struct two_longs, n), "not a program", 0 },
		{ NULL, 0, NULL, 0, NULL, 0 },
	};
	struct rl_plugin p = { .name = "t", .options = good,
			       .config_size = sizeof(struct two_longs) };
	struct strbuf err = STRBUF_INIT;

	(void)state;
	strbuf_init(&err);
	assert_int_equal(options_table_check(&p, "t.so", &err), 0);
	assert_string_equal(options_type_name(good[0].type), "string");
	p.options = bad;
	assert_int_equal(options_table_check(&p, "t.so", &err), -EINVAL);
	if (!strstr(err.buf, "t.so: option table: 'n' is a int marked as naming a program"))
		fail_msg("'%s'", err.buf);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abi_faults_are_refused),
		cmocka_unit_test(non_shared_objects_are_refused),
		cmocka_unit_test(options_fill_the_config),
		cmocka_unit_test(program_options_are_marked),
		cmocka_unit_test(program_mark_on_a_number_is_refused),
	};
	return cmocka_run_group_tests_name("plugin_loader", tests, NULL, NULL);
}
