/*
 * Unit tests: daemon/pipeline.c and daemon/plugin_check.c.  Plugins come
 * from $ROOFLINE_BUILD (default build/debug): plugins/smoke.so and
 * test-plugins/pipetest.so (one option of every type, tests/pipelines/).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pipeline.h"
#include "util.h"

static char *build_path(const char *sub)
{
	const char *b = getenv("ROOFLINE_BUILD");

	return xasprintf("%s/%s", b && *b ? b : "build/debug", sub);
}

/* Load yaml; *errors (caller frees) gets the error text. */
static struct pipeline *load(const char *yaml, const char *dir, char **errors)
{
	struct strbuf err = STRBUF_INIT;
	struct pipeline *p;

	strbuf_init(&err);
	p = pipeline_load("t.yaml", yaml, strlen(yaml), dir, &err);
	*errors = strbuf_detach(&err);
	return p;
}

static struct pipeline *load_ok(const char *yaml, const char *dir)
{
	char *errors;
	struct pipeline *p = load(yaml, dir, &errors);

	if (!p)
		fail_msg("refused:\n%s", errors);
	assert_string_equal(errors, "");
	free(errors);
	return p;
}

/* yaml must be refused with `want` as one of its error lines (a prefix of
 * one when want ends with '*'). */
static void expect_error(const char *yaml, const char *dir, const char *want)
{
	size_t n = strlen(want);
	bool prefix = n && want[n - 1] == '*';
	char *errors, *line = xasprintf("\nt.yaml:%.*s%s", (int)(n - prefix),
					want, prefix ? "" : "\n");
	struct pipeline *p = load(yaml, dir, &errors);
	char *all = xasprintf("\n%s", errors);

	assert_null(p);
	if (!strstr(all, line))
		fail_msg("want line%sgot\n%s", line, errors);
	free(all);
	free(line);
	free(errors);
}

#define HEAD "name: t\nsteps:\n"

static void minimal_without_plugins(void **state)
{
	const char *yaml = "name: tiny\nsteps:\n  - id: a\n    plugin: anything\n"
			   "  - id: b\n    plugin: other\n    on: daemon\n"
			   "    with: { x: 1, y: [2, 3] }\n";
	struct pipeline *p = load_ok(yaml, NULL);

	(void)state;
	assert_string_equal(p->file, "t.yaml");
	assert_string_equal(p->name, "tiny");
	assert_null(p->description);
	assert_null(p->schedule_text);
	assert_int_equal(p->slurm.nodes, PIPELINE_NODES_COUNT);
	assert_int_equal(p->slurm.node_count, 1);
	assert_int_equal(p->slurm.time_s, 0);
	assert_null(p->slurm.partition);
	assert_int_equal(p->n_steps, 2);
	assert_false(p->steps[0].on_daemon);
	assert_int_equal(p->steps[0].timeout_s, 0);
	assert_true(p->steps[1].on_daemon);
	assert_int_equal(p->steps[1].timeout_s, PIPELINE_DAEMON_TIMEOUT_DEFAULT);
	assert_int_equal(p->steps[1].n_opts, 3);
	assert_string_equal(p->steps[1].opts[2].a, "y");
	assert_string_equal(p->steps[1].opts[2].b, "3");
	assert_int_equal(p->steps[0].line, 3);
	assert_int_equal(p->steps[0].col, 5);
	assert_int_equal(p->yaml_len, strlen(yaml));
	assert_string_equal(p->yaml, yaml);
	pipeline_free(p);
}

static void full_pipeline_with_smoke(void **state)
{
	char *dir = build_path("plugins");
	struct pipeline *p = load_ok(
		"name: nightly.gpu-1\n"
		"description: \"all of it\"\n"
		"schedule: \"0 2 * * mon-fri\"\n"
		"slurm:\n"
		"  partition: gpu\n  gres: gpu:h100:2\n  time: \"1:30:00\"\n"
		"  account: staff\n  qos: high\n  constraint: h100&nvlink\n"
		"  nodes: [gpu01, gpu02]\n"
		"steps:\n"
		"  - id: chart\n    plugin: smoke\n    needs: [roofline]\n"
		"    on: daemon\n    timeout: 15m\n"
		"  - id: ceilings\n    plugin: smoke\n    retries: 3\n"
		"    with:\n      message: \"ceilings: ok\"\n      sleep: 2\n"
		"      fail: no\n      file: out/x.txt\n"
		"  - id: roofline\n    plugin: smoke\n    needs: [ceilings]\n",
		dir);
	const struct pipeline_step *st;
	size_t order[3];

	(void)state;
	assert_string_equal(p->name, "nightly.gpu-1");
	assert_string_equal(p->description, "all of it");
	assert_string_equal(p->schedule_text, "0 2 * * mon-fri");
	assert_int_equal(p->schedule.wdays, 0x3e);
	assert_string_equal(p->slurm.partition, "gpu");
	assert_string_equal(p->slurm.gres, "gpu:h100:2");
	assert_string_equal(p->slurm.time_text, "1:30:00");
	assert_int_equal(p->slurm.time_s, 5400);
	assert_string_equal(p->slurm.account, "staff");
	assert_string_equal(p->slurm.qos, "high");
	assert_string_equal(p->slurm.constraint, "h100&nvlink");
	assert_int_equal(p->slurm.nodes, PIPELINE_NODES_LIST);
	assert_int_equal(p->slurm.n_node_names, 2);
	assert_string_equal(p->slurm.node_names[1], "gpu02");
	/* where the values were written, for the checks against the cluster */
	assert_int_equal(p->slurm.partition_at.line, 5);
	assert_int_equal(p->slurm.partition_at.col, 14);
	assert_int_equal(p->slurm.gres_at.line, 6);
	assert_int_equal(p->slurm.gres_at.col, 9);
	assert_int_equal(p->slurm.time_at.line, 7);
	assert_int_equal(p->slurm.time_at.col, 9);
	assert_int_equal(p->slurm.nodes_at.line, 11);
	assert_int_equal(p->slurm.nodes_at.col, 10);
	assert_int_equal(p->slurm.node_names_at[1].line, 11);
	assert_int_equal(p->slurm.node_names_at[1].col, 18);
	st = pipeline_step_find(p, "ceilings");
	assert_int_equal(st->timeout_at.line, 0); /* absent */
	assert_ptr_equal(st, &p->steps[1]);
	assert_int_equal(st->retries, 3);
	assert_int_equal(st->timeout_s, 5400); /* slurm.time */
	assert_null(st->timeout_text);
	assert_int_equal(st->n_opts, 4);
	assert_string_equal(st->opts[0].a, "message");
	assert_string_equal(st->opts[0].b, "ceilings: ok");
	assert_string_equal(st->opts[3].a, "file");
	assert_string_equal(st->opts[3].b, "out/x.txt");
	st = pipeline_step_find(p, "chart");
	assert_int_equal(st->timeout_s, 900);
	assert_string_equal(st->timeout_text, "15m");
	assert_int_equal(st->timeout_at.line, 17);
	assert_int_equal(st->timeout_at.col, 14);
	assert_int_equal(st->n_needs, 1);
	assert_int_equal(st->needs_idx[0], 2);
	assert_null(pipeline_step_find(p, "nope"));
	assert_int_equal(pipeline_topo_order(p, order), 0);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 0);
	pipeline_free(p);
	free(dir);
}

static void list_options_repeat_their_key(void **state)
{
	char *dir = build_path("test-plugins");
	struct pipeline *p = load_ok(
		HEAD "  - id: a\n    plugin: pipetest\n    with:\n"
		     "      command: [./bin/app, --n, \"3\"]\n"
		     "      kernels: [k1, k2]\n      count: 4\n", dir);
	const struct pipeline_step *st = &p->steps[0];
	static const char *const want[][2] = {
		{ "command", "./bin/app" }, { "command", "--n" },
		{ "command", "3" }, { "kernels", "k1" }, { "kernels", "k2" },
		{ "count", "4" },
	};

	(void)state;
	assert_int_equal(st->n_opts, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		assert_string_equal(st->opts[i].a, want[i][0]);
		assert_string_equal(st->opts[i].b, want[i][1]);
	}
	pipeline_free(p);
	free(dir);
}

/* A Slurm step's program may be anything its user can run (absolute, ~/):
 * it runs with the user's uid; a daemon step's stays in the run directory,
 * and ".." never goes (issue 24). */
static void command_program_stays_inside(void **state)
{
	static const char *const ok[] = { "nvidia-smi", "./app", "bin/app",
					   "/usr/bin/app", "~/bin/app" };
	static const char *const bad[] = { "../app", "bin/../../app" };
	char *dir = build_path("test-plugins");

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		char *yaml = xasprintf(HEAD "  - id: a\n    plugin: pipetest\n"
					    "    with: { command: [%s, /etc/x] }\n",
				       ok[i]);

		pipeline_free(load_ok(yaml, dir));
		free(yaml);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad) + 1; i++) {
		const char *prog = i < ARRAY_SIZE(bad) ? bad[i] : "/usr/bin/app";
		char *yaml = xasprintf(HEAD "  - id: a\n    plugin: pipetest\n"
					    "    with: { command: [%s] }\n%s", prog,
				       i < ARRAY_SIZE(bad) ? "" : "    on: daemon\n");
		char *want = xasprintf("5:23: option 'command' in step 'a': "
				       "program '%s' is outside the run "
				       "directory (give a program name to find "
				       "in PATH or a path inside the run "
				       "directory)", prog);

		expect_error(yaml, dir, want);
		free(want);
		free(yaml);
	}
	free(dir);
}

/* The keys of a step that runs the user's own program (pipeline_app.c):
 * loaded, recorded, and each mistake reported at its position. */
static void app_keys(void **state)
{
	static const struct {
		const char *keys, *want;
	} bad[] = {
		{ "    workdir: ../../etc\n",
		  "4:14: 'workdir' in step 'a': path '../../etc' leaves the run directory*" },
		{ "    workdir: ~bob/x\n",
		  "4:14: 'workdir' in step 'a': path '~bob/x': only '~' and '~/...'*" },
		{ "    env: { 1X: a }\n",
		  "4:12: invalid variable name '1X' in 'env' in step 'a'*" },
		{ "    env: [a]\n",
		  "4:10: 'env' in step 'a' must be a mapping of variable names to values, not a sequence" },
		{ "    modules: [gcc, \"a b\"]\n",
		  "4:20: invalid module name 'a b' in 'modules' in step 'a'*" },
		{ "    modules: [-x]\n",
		  "4:15: invalid module name '-x' in 'modules' in step 'a'*" },
		{ "    tasks: 0\n",
		  "4:12: 'tasks' in step 'a' must be an integer from 1 to 100000, not '0'" },
		{ "    tasks_per_node: 2\n",
		  "4:21: 'tasks_per_node' in step 'a' needs 'tasks' (the number of ranks to start)" },
		{ "    tasks: 2\n    tasks_per_node: 3\n",
		  "5:21: 'tasks_per_node' in step 'a' is 3, more than 'tasks' (2)" },
		{ "    tasks: 2\n    launcher: srn\n",
		  "5:15: invalid launcher 'srn' in step 'a' (did you mean 'srun'?)" },
		{ "    tasks: 2\n    gpus_per_task: 65\n",
		  "5:20: 'gpus_per_task' in step 'a' must be an integer from 1 to 64, not '65'" },
		{ "    on: daemon\n    env: { A: b }\n",
		  "5:5: 'env' in step 'a' is for Slurm steps only*" },
	};
	const char *good = "name: t\nslurm: { nodes: 2 }\nsteps:\n  - id: a\n"
			   "    plugin: smoke\n    workdir: ~/run\n"
			   "    env: { OMP_NUM_THREADS: \"4\", B: x }\n"
			   "    modules: [gcc/12.2, cuda]\n    tasks: 4\n"
			   "    tasks_per_node: 2\n    gpus_per_task: 1\n"
			   "    launcher: mpirun\n";
	char *dir = build_path("plugins");
	struct pipeline *p = load_ok(good, dir);
	struct strbuf out = STRBUF_INIT;

	(void)state;
	assert_string_equal(p->steps[0].app.workdir, "~/run");
	assert_int_equal(p->steps[0].app.n_env, 2);
	assert_string_equal(p->steps[0].app.env[0].a, "OMP_NUM_THREADS");
	assert_int_equal(p->steps[0].app.n_modules, 2);
	assert_int_equal(p->steps[0].app.tasks, 4);
	strbuf_init(&out);
	pipeline_app_format(&p->steps[0].app, &out);
	assert_string_equal(out.buf,
		"app\tworkdir=~/run\ttasks=4\ttasks_per_node=2\tgpus_per_task=1\tlauncher=mpirun\n"
		"env\tname=OMP_NUM_THREADS\tvalue=4\nenv\tname=B\tvalue=x\n"
		"module\tname=gcc/12.2\nmodule\tname=cuda\n");
	strbuf_release(&out);
	/* nodes: 2 written, 4 tasks at 2 a node: fits; 4 at 1 a node: not */
	assert_int_equal(pipeline_app_nodes(&p->steps[0].app, 2, true), 2);
	pipeline_free(p);
	expect_error("name: t\nslurm: { nodes: 2 }\nsteps:\n  - id: a\n    plugin: smoke\n"
		     "    tasks: 4\n    tasks_per_node: 1\n", dir,
		     "6:12: 'tasks' in step 'a' is 4, more than 2 nodes x 'tasks_per_node' 1");
	p = load_ok("name: t\nsteps:\n  - id: a\n    plugin: smoke\n"
		    "    tasks: 5\n    tasks_per_node: 2\n", dir);
	assert_int_equal(pipeline_app_nodes(&p->steps[0].app, 1, false), 3);
	pipeline_free(p);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *yaml = xasprintf(HEAD "  - id: a\n%s    plugin: smoke\n", bad[i].keys);

		expect_error(yaml, dir, bad[i].want);
		free(yaml);
	}
	free(dir);
}

/* One mistake each; the message line is what a person should read. */
static const struct {
	const char *yaml;
	const char *want;
} mistakes[] = {
	{ "", "1:1: pipeline is empty (expected a mapping with 'name' and 'steps')" },
	{ "- a\n", "1:1: pipeline must be a mapping, not a sequence" },
	{ "steps: [{id: a, plugin: smoke}]\n", "1:1: missing required key 'name'" },
	{ "name: t\n", "1:1: missing required key 'steps'" },
	{ "name: t\nsteps: []\n", "2:8: pipeline has 0 steps (it needs 1 to 1000)" },
	{ "name: t\nsteps: {a: 1}\n", "2:8: 'steps' must be a sequence of steps, not a mapping" },
	{ "name: [t]\n" "steps: [{id: a, plugin: smoke}]\n",
	  "1:7: 'name' must be a scalar, not a sequence" },
	{ "name:\n" "steps: [{id: a, plugin: smoke}]\n", "1:6: 'name' has no value" },
	{ "name: a/b\n" "steps: [{id: a, plugin: smoke}]\n",
	  "1:7: invalid pipeline name 'a/b' (use 1 to 64 letters, digits, '_', '.' or '-')" },
	{ HEAD "  - id: a\n    plugin: smoke\n    neds: x\n",
	  "5:5: unknown key 'neds' in step 'a' (did you mean 'needs'?)" },
	{ HEAD "  - id: a\n    plugin: smoke\nschedul: \"@daily\"\n",
	  "5:1: unknown key 'schedul' (did you mean 'schedule'?)" },
	{ HEAD "  - id: a\n    plugin: smoke\nslurm: {partion: gpu}\n",
	  "5:9: unknown key 'partion' in 'slurm' (did you mean 'partition'?)" },
	{ "name: t\nname: u\nsteps: [{id: a, plugin: smoke}]\n",
	  "2:1: duplicate key 'name' (first at 1:1)" },
	{ HEAD "  - plugin: smoke\n", "3:5: missing required key 'id' in step 1" },
	{ HEAD "  - id: a\n", "3:5: missing required key 'plugin' in step 'a'" },
	{ HEAD "  - just-a-name\n", "3:5: step 1 must be a mapping with 'id' and 'plugin', not a scalar" },
	{ HEAD "  - id: a b\n    plugin: smoke\n",
	  "3:9: invalid step id 'a b' (use 1 to 64 letters, digits, '_' or '-')" },
	{ HEAD "  - {id: a, plugin: smoke}\n  - {id: a, plugin: smoke}\n",
	  "4:10: duplicate step id 'a' (first at 3:10)" },
	{ HEAD "  - id: a\n    plugin: Smoke\n",
	  "4:13: invalid plugin name 'Smoke' in step 'a' (use a-z, 0-9, '_' or '-')" },
	{ HEAD "  - id: a\n    plugin: smoek\n",
	  "4:13: unknown plugin 'smoek' in step 'a' (did you mean 'smoke'?)" },
	{ HEAD "  - id: a\n    plugin: zzzzzz\n", "4:13: unknown plugin 'zzzzzz' in step 'a' (no zzzzzz.so in *" },
	{ HEAD "  - {id: a, plugin: smoke, on: dameon}\n",
	  "3:32: invalid value 'dameon' for 'on' in step 'a' (did you mean 'daemon'?)" },
	{ HEAD "  - {id: a, plugin: smoke, on: login}\n",
	  "3:32: invalid value 'login' for 'on' in step 'a' (expected 'slurm' or 'daemon')" },
	{ HEAD "  - {id: a, plugin: smoke, retries: -1}\n",
	  "3:37: 'retries' in step 'a' must be an integer from 0 to 10, not '-1'" },
	{ HEAD "  - {id: a, plugin: smoke, retries: lots}\n",
	  "3:37: 'retries' in step 'a' must be an integer from 0 to 10, not 'lots'" },
	{ HEAD "  - {id: a, plugin: smoke, timeout: 0}\n",
	  "3:37: invalid duration '0' for 'timeout' in step 'a' (use minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or 90s, 15m, 2h, 1d)" },
	{ HEAD "  - {id: a, plugin: smoke, on: daemon, timeout: \"3000000000s\"}\n",
	  "3:49: duration '3000000000s' for 'timeout' in step 'a' is too long (at most 2147483647 s, about 68 years)" },
	{ HEAD "  - {id: a, plugin: smoke, pending_limit: 99999999999}\n",
	  "3:43: duration '99999999999' for 'pending_limit' in step 'a' is too long (at most 2147483647 s, about 68 years)" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {time: \"30000000-0\"}\n",
	  "4:15: duration '30000000-0' for 'time' in 'slurm' is too long (at most 2147483647 s, about 68 years)" },
	{ HEAD "  - {id: inputs, plugin: smoke}\n",
	  "3:10: step id 'inputs' is reserved (the run directory's own 'inputs/' is there)" },
	{ HEAD "  - {id: a, plugin: smoke, needs: [b]}\n",
	  "3:36: step 'a' needs unknown step 'b'" },
	{ HEAD "  - {id: a, plugin: smoke}\n  - {id: b, plugin: smoke, needs: [a, a]}\n",
	  "4:39: step 'b' needs 'a' twice" },
	{ HEAD "  - {id: a, plugin: smoke, needs: a}\n", "3:35: step 'a' needs itself" },
	{ HEAD "  - {id: a, plugin: smoke, needs: {b: 1}}\n",
	  "3:35: 'needs' in step 'a' must be a list of step ids, not a mapping" },
	{ HEAD "  - {id: a, plugin: smoke, needs: [c]}\n"
	       "  - {id: b, plugin: smoke, needs: [a]}\n"
	       "  - {id: c, plugin: smoke, needs: [b]}\n",
	  "4:36: dependency cycle: a -> c -> b -> a" },
	{ HEAD "  - {id: a, plugin: smoke}\nschedule: \"-1 * * * *\"\n",
	  "4:11: invalid schedule '-1 * * * *': minute '-1' is not a number" },
	{ HEAD "  - {id: a, plugin: smoke}\nschedule: \"*/99999999999 * * * *\"\n",
	  "4:11: invalid schedule '*/99999999999 * * * *': minute step 99999999999 is out of range 1-59" },
	{ HEAD "  - {id: a, plugin: smoke}\nschedule: \"0 0 * * 8\"\n",
	  "4:11: invalid schedule '0 0 * * 8': day of week 8 is out of range 0-7" },
	{ HEAD "  - {id: a, plugin: smoke}\nschedule: \"0 0 30 feb *\"\n",
	  "4:11: invalid schedule '0 0 30 feb *': never fires: no month given has any of the days of month given" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {time: 90min}\n",
	  "4:15: invalid duration '90min' for 'time' in 'slurm' (use minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or 90s, 15m, 2h, 1d)" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {gres: \"gres:gpu:1\"}\n",
	  "4:15: invalid gres 'gres:gpu:1' in 'slurm': leave out the 'gres:' prefix (expected NAME[:TYPE][:COUNT], such as 'gpu:1' or 'gpu:h100:2')" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {gres: \"gpu:-1\"}\n",
	  "4:15: invalid gres 'gpu:-1' in 'slurm': count '-1' is not a positive integer (expected NAME[:TYPE][:COUNT], such as 'gpu:1' or 'gpu:h100:2')" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {gres: \"gpu:+1\"}\n",
	  "4:15: invalid gres 'gpu:+1' in 'slurm': count '+1' is not a positive integer *" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {gres: \"gpu:99999999999\"}\n",
	  "4:15: invalid gres 'gpu:99999999999' in 'slurm': count '99999999999' is too large *" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {gres: \"gpu:-x:1\"}\n",
	  "4:15: invalid gres 'gpu:-x:1' in 'slurm': type '-x' must start with a letter (then letters, digits, '_', '.' or '-') *" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {gres: \"gpu:_h100\"}\n",
	  "4:15: invalid gres 'gpu:_h100' in 'slurm': type '_h100' must start with a letter *" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {gres: \"1gpu:1\"}\n",
	  "4:15: invalid gres '1gpu:1' in 'slurm': name '1gpu' must start with a letter (then letters, digits or '_') *" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {gres: \"gpu:1,\"}\n",
	  "4:15: invalid gres 'gpu:1,' in 'slurm': empty item *" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {gres: \"gpu::1\"}\n",
	  "4:15: invalid gres 'gpu::1' in 'slurm': empty field in 'gpu::1' *" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {gres: \"gpu:a:b:1\"}\n",
	  "4:15: invalid gres 'gpu:a:b:1' in 'slurm': too many fields in 'gpu:a:b:1' *" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {gres: \"gpu:h100:0\"}\n",
	  "4:15: invalid gres 'gpu:h100:0' in 'slurm': count '0' is not a positive integer *" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {nodes: 0}\n",
	  "4:16: invalid value '0' for 'nodes' in 'slurm' (expected a node count from 1 to 100000, 'each' or a list of node names)" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {nodes: []}\n",
	  "4:16: 'nodes' in 'slurm' lists no nodes" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {nodes: [gpu01, \"gpu 2\"]}\n",
	  "4:24: invalid node name 'gpu 2' in 'slurm' (use a host name)" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {nodes: [gpu01, gpu01]}\n",
	  "4:24: node 'gpu01' listed twice in 'slurm'" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: {partition: \"gpu nodes\"}\n",
	  "4:20: invalid partition 'gpu nodes' in 'slurm' (one word, no spaces)" },
	{ HEAD "  - {id: a, plugin: smoke}\nslurm: [gpu]\n",
	  "4:8: 'slurm' must be a mapping, not a sequence" },
	{ HEAD "  - {id: a, plugin: smoke, with: {mesage: hi}}\n",
	  "3:35: unknown option 'mesage' for plugin 'smoke' in step 'a' (did you mean 'message'?)" },
	{ HEAD "  - {id: a, plugin: smoke, with: {sleep: soon}}\n",
	  "3:42: option 'sleep' in step 'a' expects an integer, not 'soon'" },
	{ HEAD "  - {id: a, plugin: smoke, with: {fail: maybe}}\n",
	  "3:41: option 'fail' in step 'a' expects true or false, not 'maybe'" },
	{ HEAD "  - {id: a, plugin: smoke, with: {file: /etc/passwd}}\n",
	  "3:41: option 'file' in step 'a': path '/etc/passwd' leaves the run directory" },
	{ HEAD "  - {id: a, plugin: smoke, with: {message: [a, b]}}\n",
	  "3:44: option 'message' in step 'a' takes a single string, not a list" },
	{ HEAD "  - {id: a, plugin: smoke, with: {message: {a: b}}}\n",
	  "3:44: option 'message' in step 'a' must be a value or a list, not a mapping" },
	{ HEAD "  - {id: a, plugin: smoke, with: {message: }}\n",
	  "3:44: option 'message' in step 'a' has no value" },
	{ HEAD "  - {id: a, plugin: smoke, with: [message]}\n",
	  "3:34: 'with' in step 'a' must be a mapping of plugin options, not a sequence" },
	{ HEAD "  - {id: a, plugin: smoke, with: {sleep: 1, sleep: 2}}\n",
	  "3:45: duplicate key 'sleep' in step 'a' (first at 3:35)" },
	{ "name: t\nsteps:\n  - id: a\n    plugin: smoke\n  - x: [\n",
	  "6:1: invalid YAML: did not find expected node content (while parsing a flow node at 6:1)" },
};

static void each_mistake_has_its_message(void **state)
{
	char *dir = build_path("plugins");

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(mistakes); i++)
		expect_error(mistakes[i].yaml, dir, mistakes[i].want);
	free(dir);
}

/* "gpu:all": every device of each node, resolved per node at expansion;
 * only with `nodes: each`; new step keys pending_limit and min_success. */
static void gres_all_and_fan_in_keys(void **state)
{
	struct pipeline *p;
	char *g;

	(void)state;
	p = load_ok("name: t\nslurm: { gres: \"gpu:all\", nodes: each }\n"
		    "steps:\n  - { id: a, plugin: x, pending_limit: 90s }\n"
		    "  - { id: b, plugin: x, on: daemon, needs: [a],"
		    " min_success: 75% }\n", NULL);
	assert_true(pipeline_gres_wants_all(p->slurm.gres));
	assert_int_equal(p->steps[0].pending_limit_s, 90);
	assert_true(p->steps[1].min_success > 0.749 &&
		    p->steps[1].min_success < 0.751);
	pipeline_free(p);
	expect_error("name: t\nslurm: { gres: \"gpu:all\" }\n"
		     "steps:\n  - { id: a, plugin: x }\n", NULL,
		     "2:16: gres 'gpu:all' in 'slurm' asks for all of each node's "
		     "devices, which needs 'nodes: each'");
	expect_error("name: t\nsteps:\n  - { id: a, plugin: x, min_success: 0 }\n",
		     NULL, "3:38: invalid value '0' for 'min_success' in step 'a'*");
	expect_error("name: t\nsteps:\n  - { id: a, plugin: x, min_success: 120% }\n",
		     NULL, "3:38: invalid value '120%' for 'min_success' in step 'a'*");
	assert_false(pipeline_gres_wants_all("gpu:2"));
	assert_false(pipeline_gres_wants_all("gpu:allx"));
	assert_true(pipeline_gres_wants_all("nic:1,gpu:h100:all"));
	g = pipeline_gres_resolve("gpu:h100:all,nic:1", 8);
	assert_string_equal(g, "gpu:h100:8,nic:1");
	free(g);
	g = pipeline_gres_resolve("gpu:all", 2);
	assert_string_equal(g, "gpu:2");
	free(g);
	/* a node's gres as Slurm writes it, socket suffixes and all */
	assert_int_equal(pipeline_gres_count("gpu:h100:2(S:0-1),nic:1", "gpu"), 2);
	assert_int_equal(pipeline_gres_count("gpu:a:1,gpu:b:3", "gpu"), 4);
	assert_int_equal(pipeline_gres_count("gpu", "gpu"), 1);
	assert_int_equal(pipeline_gres_count("nic:1", "gpu"), 0);
	assert_int_equal(pipeline_gres_count("(null)", "gpu"), 0);
	assert_int_equal(pipeline_gres_count(NULL, "gpu"), 0);
}

/* A cycle through all 1000 steps: one short line that names its length and
 * its first and last steps, not a 7.9 KB list of every id. */
static void long_cycle_is_shortened(void **state)
{
	struct strbuf yaml = STRBUF_INIT;
	char *errors, *nl;
	struct pipeline *p;

	(void)state;
	strbuf_init(&yaml);
	strbuf_addstr(&yaml, "name: t\nsteps:\n");
	for (int i = 1; i <= PIPELINE_STEPS_MAX; i++)
		strbuf_addf(&yaml, "  - {id: step%04d, plugin: x, needs: [step%04d]}\n",
			    i, i == 1 ? PIPELINE_STEPS_MAX : i - 1);
	p = load(yaml.buf, NULL, &errors);
	assert_null(p);
	nl = strchr(errors, '\n');
	assert_non_null(nl);
	assert_string_equal(nl + 1, ""); /* one line */
	assert_string_equal(errors,
		"t.yaml:4:39: dependency cycle of 1000 steps: step0001 -> "
		"step1000 -> step0999 -> step0998 -> ... -> step0002 -> step0001\n");
	free(errors);
	strbuf_release(&yaml);
	/* up to 8 steps, the whole cycle, as before */
	expect_error(HEAD "  - {id: a, plugin: x, needs: [h]}\n"
		     "  - {id: b, plugin: x, needs: [a]}\n"
		     "  - {id: c, plugin: x, needs: [b]}\n"
		     "  - {id: d, plugin: x, needs: [c]}\n"
		     "  - {id: e, plugin: x, needs: [d]}\n"
		     "  - {id: f, plugin: x, needs: [e]}\n"
		     "  - {id: g, plugin: x, needs: [f]}\n"
		     "  - {id: h, plugin: x, needs: [g]}\n", NULL,
		     "4:32: dependency cycle: a -> h -> g -> f -> e -> d -> c -> b -> a");
	expect_error(HEAD "  - {id: a, plugin: x, needs: [i]}\n"
		     "  - {id: b, plugin: x, needs: [a]}\n"
		     "  - {id: c, plugin: x, needs: [b]}\n"
		     "  - {id: d, plugin: x, needs: [c]}\n"
		     "  - {id: e, plugin: x, needs: [d]}\n"
		     "  - {id: f, plugin: x, needs: [e]}\n"
		     "  - {id: g, plugin: x, needs: [f]}\n"
		     "  - {id: h, plugin: x, needs: [g]}\n"
		     "  - {id: i, plugin: x, needs: [h]}\n", NULL,
		     "4:32: dependency cycle of 9 steps: a -> i -> h -> g -> ... -> b -> a");
}

static void options_of_every_type(void **state)
{
	char *dir = build_path("test-plugins");

	(void)state;
	expect_error(HEAD "  - {id: a, plugin: pipetest}\n",
		     dir, "3:21: missing required option 'command' for plugin "
			  "'pipetest' in step 'a'");
	expect_error(HEAD "  - {id: a, plugin: pipetest, with: {kernels: [k]}}\n",
		     dir, "3:31: missing required option 'command' for plugin "
			  "'pipetest' in step 'a'");
	expect_error(HEAD "  - {id: a, plugin: pipetest, with: {command: ./app}}\n",
		     dir, "3:47: option 'command' in step 'a' takes a list, not "
			  "a single value (write [./app])");
	expect_error(HEAD "  - {id: a, plugin: pipetest, with: {command: [\"\"]}}\n",
		     dir, "3:48: option 'command' in step 'a': empty program name");
	expect_error(HEAD "  - {id: a, plugin: pipetest, with: {command: [x], "
			  "kernels: [a, [b]]}}\n",
		     dir, "3:65: item 2 of option 'kernels' in step 'a' must be "
			  "a scalar, not a sequence");
	expect_error(HEAD "  - {id: a, plugin: pipetest, with: {command: [x], "
			  "ratio: fast}}\n",
		     dir, "3:59: option 'ratio' in step 'a' expects a number, not "
			  "'fast'");
	expect_error(HEAD "  - {id: a, plugin: pipetest, with: {command: [x], "
			  "out: a/../../b}}\n",
		     dir, "3:57: option 'out' in step 'a': path 'a/../../b' leaves "
			  "the run directory");
	free(dir);
}

static void loader_refusal_is_reported(void **state)
{
	char *dir = build_path("test-plugins"), *errors, *want;
	struct pipeline *p = load(HEAD "  - {id: a, plugin: abi_mismatch}\n",
				  dir, &errors);

	(void)state;
	assert_null(p);
	want = xasprintf("t.yaml:3:21: cannot load plugin 'abi_mismatch' in step "
			 "'a': %s/abi_mismatch.so: plugin ABI ", dir);
	if (strncmp(errors, want, strlen(want)) != 0)
		fail_msg("got %s", errors);
	free(want);
	free(errors);
	free(dir);
}

static void every_error_sorted(void **state)
{
	char *dir = build_path("plugins"), *errors;
	struct pipeline *p = load(
		"name: bad name\n"
		"steps:\n"
		"  - id: b\n    plugin: smoke\n    needs: [zz]\n    retries: 99\n"
		"  - id: a\n    plugin: nope-nope\n"
		"schedule: \"61 * * * *\"\n", dir, &errors);
	const char *lines[] = { "t.yaml:1:7: ", "t.yaml:5:13: ", "t.yaml:6:14: ",
				"t.yaml:8:13: ", "t.yaml:9:11: " };
	const char *at = errors;

	(void)state;
	assert_null(p);
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		if (strncmp(at, lines[i], strlen(lines[i])) != 0)
			fail_msg("line %zu: want %s..., errors:\n%s", i, lines[i],
				 errors);
		at = strchr(at, '\n') + 1;
	}
	assert_string_equal(at, "");
	free(errors);
	free(dir);
}

static void values_shown_on_one_line(void **state)
{
	(void)state;
	expect_error("name: \"a\\nb\"\nsteps: [{id: a, plugin: x}]\n", NULL,
		     "1:7: invalid pipeline name 'a\\x0ab' (use 1 to 64 letters, "
		     "digits, '_', '.' or '-')");
	expect_error("name: \"a\\0b\"\nsteps: [{id: a, plugin: x}]\n", NULL,
		     "1:7: 'name' contains a NUL character");
}

static void load_file_errors(void **state)
{
	struct strbuf err = STRBUF_INIT;
	char path[] = "/tmp/test_pipeline_XXXXXX";
	const char *yaml = "name: f\nsteps: [{id: a, plugin: x}]\n";
	struct pipeline *p;
	int fd;

	(void)state;
	strbuf_init(&err);
	assert_null(pipeline_load_file("/nonexistent/p.yaml", NULL, &err));
	assert_string_equal(err.buf, "/nonexistent/p.yaml: cannot read: No such "
				     "file or directory\n");
	strbuf_reset(&err);
	assert_null(pipeline_load_file("/tmp", NULL, &err));
	assert_string_equal(err.buf, "/tmp: cannot read: not a regular file\n");
	strbuf_reset(&err);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	p = pipeline_load_file(path, NULL, &err);
	assert_non_null(p);
	assert_string_equal(p->file, path);
	assert_string_equal(p->yaml, yaml);
	pipeline_free(p);
	assert_int_equal(truncate(path, 2 * 1024 * 1024), 0);
	assert_null(pipeline_load_file(path, NULL, &err));
	assert_true(strstr(err.buf, ": cannot read: over the 1048576-byte limit\n"));
	unlink(path);
	strbuf_release(&err);
}

static void topo_order_file_order(void **state)
{
	struct pipeline *p = load_ok(
		HEAD "  - {id: d, plugin: x, needs: [b, c]}\n"
		     "  - {id: c, plugin: x, needs: [a]}\n"
		     "  - {id: b, plugin: x, needs: [a]}\n"
		     "  - {id: a, plugin: x}\n"
		     "  - {id: e, plugin: x}\n", NULL);
	size_t order[5];
	static const size_t want[] = { 3, 1, 2, 0, 4 };

	(void)state;
	assert_int_equal(pipeline_topo_order(p, order), 0);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		assert_int_equal(order[i], want[i]);
	/* a cycle that slipped in is refused */
	p->steps[3].needs_idx = xrealloc(p->steps[3].needs_idx, sizeof(size_t));
	p->steps[3].needs = xrealloc(p->steps[3].needs, sizeof(char *));
	p->steps[3].needs[0] = xstrdup("d");
	p->steps[3].needs_idx[0] = 0;
	p->steps[3].n_needs = 1;
	assert_int_equal(pipeline_topo_order(p, order), -ELOOP);
	pipeline_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(minimal_without_plugins),
		cmocka_unit_test(full_pipeline_with_smoke),
		cmocka_unit_test(list_options_repeat_their_key),
		cmocka_unit_test(command_program_stays_inside),
		cmocka_unit_test(app_keys),
		cmocka_unit_test(each_mistake_has_its_message),
		cmocka_unit_test(long_cycle_is_shortened),
		cmocka_unit_test(gres_all_and_fan_in_keys),
		cmocka_unit_test(options_of_every_type),
		cmocka_unit_test(loader_refusal_is_reported),
		cmocka_unit_test(every_error_sorted),
		cmocka_unit_test(values_shown_on_one_line),
		cmocka_unit_test(load_file_errors),
		cmocka_unit_test(topo_order_file_order),
	};
	return cmocka_run_group_tests_name("pipeline", tests, NULL, NULL);
}
