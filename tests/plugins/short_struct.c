/* A plugin whose struct claims to end before the fields the host reads. */
#include <stddef.h>

#include "rooflined/plugin.h"

static enum rl_result run(struct rl_ctx *ctx, const void *c, void *s)
{
	(void)ctx; (void)c; (void)s;
	return RL_OK;
}

RL_PLUGIN_DEFINE = {
	.abi = ROOFLINE_PLUGIN_ABI, .size = offsetof(struct rl_plugin, run),
	.name = "short_struct", .version = "1", .stage = RL_STAGE_UTILITY,
	.summary = "test: short struct", .run = run,
};
