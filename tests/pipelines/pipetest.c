/*
 * pipetest - a test plugin for the pipeline checker (tests/unit/
 * test_pipeline.c): one option of every type, a required one among them, so
 * that list, command and path options can be checked without depending on
 * the real plugins.  Built into build/V/test-plugins by mk/pipeline.mk.
 */
#include <stddef.h>

#include "rooflined/plugin.h"

struct pipetest_config {
	struct rl_strlist command;
	struct rl_strlist kernels;
	char *out;
	char *label;
	long count;
	double ratio;
	int verbose;
};

static const struct rl_option pipetest_options[] = {
	{ "command", RL_OPT_COMMAND, NULL,
	  offsetof(struct pipetest_config, command), "program and arguments", 1 },
	{ "kernels", RL_OPT_LIST, "a,b", offsetof(struct pipetest_config, kernels),
	  "kernel names", 0 },
	{ "out", RL_OPT_PATH, NULL, offsetof(struct pipetest_config, out),
	  "a file in the run directory", 0 },
	{ "label", RL_OPT_STRING, NULL, offsetof(struct pipetest_config, label),
	  "free text", 0 },
	{ "count", RL_OPT_INT, "1", offsetof(struct pipetest_config, count),
	  "an integer", 0 },
	{ "ratio", RL_OPT_DOUBLE, "0.5", offsetof(struct pipetest_config, ratio),
	  "a number", 0 },
	{ "verbose", RL_OPT_BOOL, "false",
	  offsetof(struct pipetest_config, verbose), "a flag", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static enum rl_result pipetest_run(struct rl_ctx *ctx, const void *config,
				   void *state)
{
	(void)ctx;
	(void)config;
	(void)state;
	return RL_OK;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "pipetest",
	.version = "1",
	.stage = RL_STAGE_UTILITY,
	.summary = "test: one option of every type",
	.options = pipetest_options,
	.config_size = sizeof(struct pipetest_config),
	.run = pipetest_run,
};
