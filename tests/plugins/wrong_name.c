/* A plugin whose name does not match its file name. */
#include "rooflined/plugin.h"

static enum rl_result run(struct rl_ctx *ctx, const void *c, void *s)
{
	(void)ctx; (void)c; (void)s;
	return RL_OK;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "someone_else", .version = "1", .stage = RL_STAGE_UTILITY,
	.summary = "test: wrong name", .run = run,
};
