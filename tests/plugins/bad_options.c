/* A plugin whose option table points outside its config struct. */
#include "rooflined/plugin.h"

struct cfg {
	long n;
};

static const struct rl_option opts[] = {
	{ "n", RL_OPT_INT, "1", 0, "fits", 0 },
	{ "far", RL_OPT_INT, "1", 64, "lies outside the config", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static enum rl_result run(struct rl_ctx *ctx, const void *c, void *s)
{
	(void)ctx; (void)c; (void)s;
	return RL_OK;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "bad_options", .version = "1", .stage = RL_STAGE_UTILITY,
	.summary = "test: bad option table", .options = opts,
	.config_size = sizeof(struct cfg), .run = run,
};
