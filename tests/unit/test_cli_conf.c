/* Unit tests: cli/cli_conf.c, the client configuration (roofline.conf). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli_conf.h"
#include "strbuf.h"

static char dir[] = "/tmp/rl-cli-conf.XXXXXX";
static char file[sizeof(dir) + 16];

static const char *const vars[] = { "PGHOST", "PGPORT", "PGDATABASE", "SLURM_CONF",
				    "ROOFLINE_CONF" };

static int setup(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	return 0;
}

static void write_conf(const char *text)
{
	FILE *f = fopen(file, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v ? v : "(unset)";
}

static void sets_what_the_environment_lacks(void **state)
{
	struct strbuf err = STRBUF_INIT;

	(void)state;
	write_conf("# the service\n\n  PGDATABASE = rooflined  \n"
		   "PGHOST=/var/run/postgresql\n#PGPORT=1\n"
		   "SLURM_CONF=/srv/slurm/slurm.conf\r\n");
	setenv("PGHOST", "/home/me/pg", 1);
	strbuf_init(&err);
	assert_int_equal(cli_conf_load(file, &err), 0);
	assert_string_equal(err.buf, "");
	assert_string_equal(env("PGDATABASE"), "rooflined");
	/* the user's own setting wins */
	assert_string_equal(env("PGHOST"), "/home/me/pg");
	/* a comment sets nothing */
	assert_string_equal(env("PGPORT"), "(unset)");
	assert_string_equal(env("SLURM_CONF"), "/srv/slurm/slurm.conf");
	strbuf_release(&err);
}

static void expect_error(const char *text, const char *msg_end)
{
	struct strbuf err = STRBUF_INIT;
	char want[512];

	write_conf(text);
	strbuf_init(&err);
	assert_int_equal(cli_conf_load(file, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s:%s", file, msg_end);
	assert_string_equal(err.buf, want);
	/* a file with an error sets nothing, not even its good lines */
	assert_string_equal(env("PGDATABASE"), "(unset)");
	strbuf_release(&err);
}

static void errors_name_file_line_column(void **state)
{
	(void)state;
	expect_error("PGHOST=x\n  PGDATBASE=rooflined\n", "2:3: unknown name "
		     "'PGDATBASE' (did you mean 'PGDATABASE'?)");
	expect_error("PGDATABASE=x\nPGUSER=alice\n", "2:1: unknown name "
		     "'PGUSER' (one of PGHOST, PGPORT, PGDATABASE, SLURM_CONF)");
	expect_error("PGDATABASE=x\n\nPGHOST /run\n", "3:1: expected NAME=value");
	expect_error("PGDATABASE=x\nPGPORT=  \n", "2:8: PGPORT has no value");
	expect_error("PGDATABASE=x\nPGDATABASE=y\n", "2:1: PGDATABASE is set twice "
		     "(first on line 1)");
}

static void which_file(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char missing[sizeof(file) + 8];

	(void)state;
	strbuf_init(&err);
	/* the packaged default, compiled in */
	assert_string_equal(cli_conf_file(), ROOFLINE_CLIENT_CONFIG_FILE_TEST);
	/* ROOFLINE_CONF names another; "" reads none */
	write_conf("PGDATABASE=from_named\n");
	setenv("ROOFLINE_CONF", file, 1);
	assert_string_equal(cli_conf_file(), file);
	assert_int_equal(cli_conf_load(NULL, &err), 0);
	assert_string_equal(env("PGDATABASE"), "from_named");
	unsetenv("PGDATABASE");
	setenv("ROOFLINE_CONF", "", 1);
	assert_int_equal(cli_conf_load(NULL, &err), 0);
	assert_string_equal(env("PGDATABASE"), "(unset)");
	/* a named file that is not there is an error */
	snprintf(missing, sizeof(missing), "%s.none", file);
	setenv("ROOFLINE_CONF", missing, 1);
	assert_int_equal(cli_conf_load(NULL, &err), -ENOENT);
	assert_non_null(strstr(err.buf, "cannot read the client configuration"));
	assert_non_null(strstr(err.buf, missing));
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(sets_what_the_environment_lacks, setup),
		cmocka_unit_test_setup(errors_name_file_line_column, setup),
		cmocka_unit_test_setup(which_file, setup),
	};
	int rc;

	if (!mkdtemp(dir))
		return 1;
	snprintf(file, sizeof(file), "%s/roofline.conf", dir);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(file);
	rmdir(dir);
	return rc;
}
