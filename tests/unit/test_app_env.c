/*
 * test_app_env - common/app_env.c: a step's env, modules and workdir applied
 * in the job process.  Modules come from the stand-in module system of
 * tests/apps/standin-modules (an Environment Modules-shaped init/bash), so
 * the bash round trip (module load, env -0 read back) is the real one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "app_env.h"
#include "records.h"
#include "strbuf.h"

static char dir[] = "/tmp/test_app_env.XXXXXX";
static char modhome[4096];

static int setup(void **state)
{
	char cwd[2048];

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(modhome, sizeof(modhome), "%s/tests/apps/standin-modules", cwd);
	return 0;
}

static int teardown(void **state)
{
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/modules.log", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/work", dir);
	rmdir(path);
	rmdir(dir);
	return 0;
}

/* params.tsv lines: the app record, then env and module records */
static char *recs(const char *workdir, const char *const *env, const char *const *mods)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb);
	records_format(&sb, "app", (const struct rl_field[]){
		{ "workdir", workdir ? workdir : "" }, { "tasks", "4" },
		{ "tasks_per_node", "0" }, { "gpus_per_task", "1" },
		{ "launcher", "srun" }, { NULL, NULL } });
	for (; env && *env; env += 2)
		records_format(&sb, "env", (const struct rl_field[]){
			{ "name", env[0] }, { "value", env[1] }, { NULL, NULL } });
	for (; mods && *mods; mods++)
		records_format(&sb, "module", (const struct rl_field[]){
			{ "name", *mods }, { NULL, NULL } });
	return strbuf_detach(&sb);
}

static void env_and_workdir(void **state)
{
	const char *env[] = { "APP_ENV_TEST", "a b\tc", NULL };
	char *r, work[256];
	struct app_env a = { 0 };
	struct strbuf err = STRBUF_INIT;

	(void)state;
	strbuf_init(&err);
	snprintf(work, sizeof(work), "%s/work", dir);
	assert_int_equal(mkdir(work, 0700), 0);
	r = recs("work", env, NULL);
	assert_int_equal(app_env_apply(r, dir, dir, &a, &err), 0);
	assert_string_equal(getenv("APP_ENV_TEST"), "a b\tc");
	assert_string_equal(a.workdir, work);    /* relative: from the run dir */
	assert_string_equal(app_env_get(&a, "tasks"), "4");
	assert_null(app_env_get(&a, "tasks_per_node")); /* 0: unset */
	assert_string_equal(app_env_get(&a, "launcher"), "srun");
	app_env_release(&a);
	free(r);

	setenv("HOME", dir, 1);
	r = recs("~/work", NULL, NULL);
	assert_int_equal(app_env_apply(r, "/nonexistent", dir, &a, &err), 0);
	assert_string_equal(a.workdir, work);    /* ~/ from HOME */
	app_env_release(&a);
	free(r);

	r = recs("/nonexistent/dir", NULL, NULL);
	assert_int_equal(app_env_apply(r, dir, dir, &a, &err), -ENOENT);
	assert_non_null(strstr(err.buf, "workdir '/nonexistent/dir' on node "));
	assert_non_null(strstr(err.buf, ": No such file or directory"));
	app_env_release(&a);
	free(r);
	strbuf_release(&err);
}

static void modules(void **state)
{
	const char *env[] = { "MODULESHOME", modhome, NULL };
	const char *good[] = { "standin/1.0", NULL }, *bad[] = { "nosuch/2", NULL };
	const char *none[] = { "MODULESHOME", "/nonexistent", NULL };
	struct app_env a = { 0 };
	struct strbuf err = STRBUF_INIT;
	char *r, want[4200];

	(void)state;
	strbuf_init(&err);
	unsetenv("STANDIN_HOME");
	unsetenv("LOADEDMODULES");
	r = recs(NULL, env, good);
	assert_int_equal(app_env_apply(r, dir, dir, &a, &err), 0);
	snprintf(want, sizeof(want), "%s/standin-1.0", modhome);
	assert_string_equal(getenv("STANDIN_HOME"), want);
	assert_string_equal(getenv("LOADEDMODULES"), "standin/1.0");
	assert_non_null(getenv("PATH"));   /* the rest of the environment kept */
	app_env_release(&a);
	free(r);

	unsetenv("LOADEDMODULES");
	r = recs(NULL, env, bad);
	assert_int_equal(app_env_apply(r, dir, dir, &a, &err), -ENOENT);
	assert_non_null(strstr(err.buf, "modules: module 'nosuch/2' did not load"));
	app_env_release(&a);
	free(r);

	strbuf_reset(&err);
	r = recs(NULL, none, good);
	if (access("/usr/share/lmod/lmod/init/bash", F_OK) != 0 &&
	    access("/usr/share/modules/init/bash", F_OK) != 0 &&
	    access("/etc/profile.d/lmod.sh", F_OK) != 0 &&
	    access("/etc/profile.d/modules.sh", F_OK) != 0) {
		assert_int_equal(app_env_apply(r, dir, dir, &a, &err), -ENOENT);
		assert_non_null(strstr(err.buf, "modules: no module system (Lmod or Environment Modules)"));
	}
	app_env_release(&a);
	free(r);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(env_and_workdir),
		cmocka_unit_test(modules),
	};
	return cmocka_run_group_tests_name("app_env", tests, setup, teardown);
}
