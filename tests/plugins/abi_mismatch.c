/* A plugin built against a future ABI: the loader must refuse it. */
#include "rooflined/plugin.h"

static enum rl_result run(struct rl_ctx *ctx, const void *c, void *s)
{
	(void)ctx; (void)c; (void)s;
	return RL_OK;
}

RL_PLUGIN_DEFINE = {
	.abi = ROOFLINE_PLUGIN_ABI + 1, .size = sizeof(struct rl_plugin),
	.name = "abi_mismatch", .version = "1", .stage = RL_STAGE_UTILITY,
	.summary = "test: wrong ABI", .run = run,
};
