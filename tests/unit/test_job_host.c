/*
 * Unit tests: common/job_host.c - a step attempt run in-process with the
 * smoke plugin: records and exit record written, inputs handed over,
 * failures recorded with their error, nothing half-written.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "job_host.h"
#include "log.h"
#include "records.h"
#include "util.h"

static char *plugin_dir(void)
{
	const char *b = getenv("ROOFLINE_BUILD");

	return xasprintf("%s/plugins", b ? b : "build/debug");
}

static char *make_spec(struct job_spec *spec, const char *tag)
{
	char *dir = xasprintf("/tmp/rl-jobhost-%s-%ld", tag, (long)getpid());

	assert_int_equal(util_mkdir_p(dir, 0755), 0);
	job_spec_init(spec);
	job_spec_set(&spec->plugin, "smoke");
	job_spec_set(&spec->step_id, tag);
	job_spec_set(&spec->run_dir, "/tmp");
	job_spec_set(&spec->out_dir, dir);
	spec->run_id = 7;
	spec->attempt = 1;
	return dir;
}

static int count(void *arg, const char *kind, const struct rl_field *f)
{
	(void)kind;
	(void)f;
	(*(int *)arg)++;
	return 0;
}

static void cleanup(char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(dir);
}

static void ok_attempt_writes_records_then_exit(void **state)
{
	struct job_spec spec, spec2;
	char *dir = make_spec(&spec, "first"), *dir2, *path, *params;
	struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;
	struct job_exit ex;
	char *plugins = plugin_dir();
	int n = 0;

	(void)state;
	strbuf_init(&sb);
	strbuf_init(&err);
	job_spec_add_option(&spec, "records", "3");
	assert_int_equal(job_host_run(&spec, plugins), RL_OK);
	path = xasprintf("%s/records.tsv", dir);
	assert_int_equal(records_each(path, "smoke", count, &n, NULL), 0);
	assert_int_equal(n, 3);
	assert_int_equal(job_exit_read(dir, &ex), 0);
	assert_int_equal(ex.status, RL_OK);
	assert_int_equal(ex.records, 3);
	assert_true(ex.ended >= ex.started && ex.started > 0);
	free(path);
	path = xasprintf("%s/records.tsv.tmp", dir);
	assert_int_equal(access(path, F_OK), -1); /* no leftovers */
	free(path);

	/* the second step sees the first one's records as its inputs, through
	 * a params.tsv written and read back */
	dir2 = make_spec(&spec2, "second");
	job_spec_add_input(&spec2, "first", dir);
	job_spec_format(&spec2, &sb);
	params = xasprintf("%s/params.tsv", dir2);
	assert_int_equal(util_write_file_atomic(params, sb.buf, sb.len, 0644), 0);
	job_spec_release(&spec2);
	job_spec_init(&spec2);
	assert_int_equal(job_spec_load(&spec2, params, &err), 0);
	assert_string_equal(spec2.inputs[0].b, dir);
	assert_int_equal(job_host_run(&spec2, plugins), RL_OK);
	path = xasprintf("%s/records.tsv", dir2);
	char *text;

	assert_int_equal(util_read_file(path, 1 << 20, &text, NULL), 0);
	assert_non_null(strstr(text, "input_records=3"));
	free(text);
	free(path);
	free(params);
	job_spec_release(&spec);
	job_spec_release(&spec2);
	strbuf_release(&sb);
	strbuf_release(&err);
	cleanup(dir);
	cleanup(dir2);
	free(plugins);
}

static void failures_leave_an_exit_record_and_no_records(void **state)
{
	struct job_spec spec;
	char *dir = make_spec(&spec, "fail"), *path;
	char *plugins = plugin_dir();
	struct job_exit ex;

	(void)state;
	job_spec_add_option(&spec, "fail", "true");
	assert_int_equal(job_host_run(&spec, plugins), RL_FAIL);
	assert_int_equal(job_exit_read(dir, &ex), 0);
	assert_int_equal(ex.status, RL_FAIL);
	assert_non_null(strstr(ex.error, "failing as asked"));
	path = xasprintf("%s/records.tsv", dir);
	assert_int_equal(access(path, F_OK), -1);
	free(path);
	job_spec_release(&spec);

	/* retry is reported as such */
	free(make_spec(&spec, "fail"));
	job_spec_add_option(&spec, "fail_attempts", "1");
	assert_int_equal(job_host_run(&spec, plugins), RL_RETRY);
	assert_int_equal(job_exit_read(dir, &ex), 0);
	assert_int_equal(ex.status, RL_RETRY);
	job_spec_release(&spec);

	/* bad options: failure with the option's message */
	free(make_spec(&spec, "fail"));
	job_spec_add_option(&spec, "mesage", "x");
	assert_int_equal(job_host_run(&spec, plugins), RL_FAIL);
	assert_int_equal(job_exit_read(dir, &ex), 0);
	assert_non_null(strstr(ex.error, "did you mean 'message'"));
	job_spec_release(&spec);
	cleanup(dir);
	free(plugins);
}

/* Run-info records travel through params.tsv: written by
 * job_spec_format, read back by job_spec_load; other kinds are refused. */
static int collect(void *arg, const char *kind, const struct rl_field *f)
{
	strbuf_addf(arg, "%s %s;", kind, rl_field_get(f, "step") ? rl_field_get(f, "step")
								: rl_field_get(f, "pipeline"));
	return 0;
}

static void run_info_round_trip(void **state)
{
	struct job_spec spec, back;
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT, got = STRBUF_INIT;
	char *dir, *path;

	(void)state;
	dir = make_spec(&spec, "runinfo");
	job_spec_add_input(&spec, "roofline", "/tmp/x");
	assert_int_equal(job_spec_add_run_info(&spec, "run", (const struct rl_field[]){
		{ "id", "7" }, { "pipeline", "p<1>\tq" }, { NULL, NULL } }), 0);
	assert_int_equal(job_spec_add_run_info(&spec, "run_step", (const struct rl_field[]){
		{ "step", "profile" }, { "slurm_job", "103" }, { NULL, NULL } }), 0);
	assert_int_equal(job_spec_add_run_info(&spec, "option", (const struct rl_field[]){
		{ "key", "k" }, { "value", "v" }, { NULL, NULL } }), -EINVAL);
	strbuf_init(&text);
	job_spec_format(&spec, &text);
	path = xasprintf("%s/params.tsv", dir);
	assert_int_equal(util_write_file_atomic(path, text.buf, text.len, 0600), 0);
	job_spec_init(&back);
	strbuf_init(&err);
	assert_int_equal(job_spec_load(&back, path, &err), 0);
	assert_int_equal(back.n_inputs, 1);
	assert_int_equal(back.n_opts, 0);
	strbuf_init(&got);
	assert_int_equal(records_each_in(back.run_info.buf, "params", NULL, collect, &got, NULL), 0);
	assert_string_equal(got.buf, "run p<1>\tq;run_step profile;");
	unlink(path);
	free(path);
	strbuf_release(&text);
	strbuf_release(&err);
	strbuf_release(&got);
	job_spec_release(&back);
	job_spec_release(&spec);
	cleanup(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ok_attempt_writes_records_then_exit),
		cmocka_unit_test(failures_leave_an_exit_record_and_no_records),
		cmocka_unit_test(run_info_round_trip),
	};
	log_init("test_job_host", RL_LOG_ERROR, false);
	return cmocka_run_group_tests_name("job_host", tests, NULL, NULL);
}
