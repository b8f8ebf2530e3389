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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(abi_faults_are_refused),
		cmocka_unit_test(non_shared_objects_are_refused),
		cmocka_unit_test(options_fill_the_config),
	};
	return cmocka_run_group_tests_name("plugin_loader", tests, NULL, NULL);
}
