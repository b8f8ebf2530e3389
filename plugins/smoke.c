/*
 * smoke - a utility plugin that exercises the pipeline machinery.
 *
 * It emits one `smoke` record saying who and where it ran (user id, node,
 * attempt), counts the records of the steps it needs, and on request sleeps,
 * fails, fails its first attempts, crashes, or ignores the signals that ask
 * it to stop, so that tests and the smoke
 * pipeline can drive every path of the engine through real Slurm jobs.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rooflined/plugin.h"

struct smoke_config {
	char *message;
	long sleep_s;
	long fail_attempts;
	int fail;
	int crash;
	long records;
	char *file;
	char *fail_node;
	int stubborn;
};

static const struct rl_option smoke_options[] = {
	{ "message", RL_OPT_STRING, "hello from roofline-job",
	  offsetof(struct smoke_config, message), "text to put in the record", 0 },
	{ "sleep", RL_OPT_INT, "0", offsetof(struct smoke_config, sleep_s),
	  "seconds to sleep before finishing", 0 },
	{ "fail", RL_OPT_BOOL, "false", offsetof(struct smoke_config, fail),
	  "fail (without retry)", 0 },
	{ "fail_node", RL_OPT_STRING, NULL, offsetof(struct smoke_config, fail_node),
	  "fail (without retry) when running on this node", 0 },
	{ "fail_attempts", RL_OPT_INT, "0",
	  offsetof(struct smoke_config, fail_attempts),
	  "ask for a retry while the attempt number is at most this", 0 },
	{ "crash", RL_OPT_BOOL, "false", offsetof(struct smoke_config, crash),
	  "abort the process (no exit record)", 0 },
	{ "stubborn", RL_OPT_BOOL, "false", offsetof(struct smoke_config, stubborn),
	  "ignore SIGALRM, SIGTERM and SIGINT while sleeping (a plugin that "
	  "will not stop when asked)", 0 },
	{ "records", RL_OPT_INT, "1", offsetof(struct smoke_config, records),
	  "how many smoke records to emit", 0 },
	{ "file", RL_OPT_PATH, NULL, offsetof(struct smoke_config, file),
	  "a file in the run directory to report the size of", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static int count_input(void *arg, const char *step, const char *kind,
		       const struct rl_field *fields)
{
	(void)step;
	(void)kind;
	(void)fields;
	(*(long *)arg)++;
	return 0;
}

static int smoke_emit(struct rl_ctx *ctx, const struct smoke_config *cfg,
		      long seq, long inputs, long file_size)
{
	char uid[32], seqs[32], ins[32], att[32], fsz[32];

	snprintf(uid, sizeof(uid), "%ld", (long)getuid());
	snprintf(seqs, sizeof(seqs), "%ld", seq);
	snprintf(ins, sizeof(ins), "%ld", inputs);
	snprintf(att, sizeof(att), "%d", ctx->attempt);
	snprintf(fsz, sizeof(fsz), "%ld", file_size);
	return rl_emit(ctx, "smoke", (const struct rl_field[]){
		{ "seq", seqs }, { "message", cfg->message }, { "uid", uid },
		{ "node", ctx->node }, { "attempt", att },
		{ "input_records", ins }, { "file_size", fsz },
		{ NULL, NULL } });
}

static long file_size_of(struct rl_ctx *ctx, const char *rel)
{
	char path[4096];
	FILE *f;
	long size;

	snprintf(path, sizeof(path), "%s/%s", ctx->run_dir, rel);
	f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	return size;
}

static enum rl_result smoke_run(struct rl_ctx *ctx, const void *config,
				void *state)
{
	const struct smoke_config *cfg = config;
	long inputs = 0, fsize = -1;

	(void)state;
	if (cfg->stubborn) {
		signal(SIGALRM, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
	}
	if (cfg->sleep_s > 0) {
		struct timespec left = { .tv_sec = cfg->sleep_s };

		rl_info(ctx, "sleeping %ld s", cfg->sleep_s);
		while (nanosleep(&left, &left) < 0 && errno == EINTR)
			;
	}
	if (cfg->crash)
		abort();
	if (cfg->fail) {
		rl_error(ctx, "failing as asked (fail: true)");
		return RL_FAIL;
	}
	if (cfg->fail_node && strcmp(cfg->fail_node, ctx->node) == 0) {
		rl_error(ctx, "failing as asked on %s (fail_node)", ctx->node);
		return RL_FAIL;
	}
	if (ctx->attempt <= cfg->fail_attempts) {
		rl_error(ctx, "attempt %d fails as asked (fail_attempts: %ld)",
			 ctx->attempt, cfg->fail_attempts);
		return RL_RETRY;
	}
	if (cfg->file) {
		fsize = file_size_of(ctx, cfg->file);
		if (fsize < 0) {
			rl_error(ctx, "cannot read '%s': %s", cfg->file,
				 strerror(errno));
			return RL_FAIL;
		}
	}
	if (rl_each_input(ctx, NULL, count_input, &inputs) < 0) {
		rl_error(ctx, "cannot read the inputs");
		return RL_FAIL;
	}
	for (long i = 0; i < cfg->records; i++)
		if (smoke_emit(ctx, cfg, i, inputs, fsize) < 0)
			return RL_RETRY;
	rl_info(ctx, "emitted %ld records (%ld input records)", cfg->records,
		inputs);
	return RL_OK;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "smoke",
	.version = "1.0",
	.stage = RL_STAGE_UTILITY,
	.summary = "exercise the pipeline machinery (sleep, fail, retry, crash)",
	.options = smoke_options,
	.config_size = sizeof(struct smoke_config),
	.run = smoke_run,
};
