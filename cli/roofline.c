/*
 * roofline - the command users and staff type on login nodes.
 *
 * A table of subcommands; each lives in cli/cmd_*.c.  Before one runs, the
 * client configuration (cli_conf.h) fills in the environment the user left
 * unset.  Exit status: 0 ok, 1 failed, 2 usage (as every subcommand).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_conf.h"
#include "log.h"
#include "paths.h"
#include "strbuf.h"
#include "util.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "validate", cmd_validate, "check pipeline files; print every error" },
	{ "submit", cmd_submit, "queue a run of a pipeline as yourself" },
	{ "list", cmd_list, "list your runs" },
	{ "status", cmd_status, "show a run's steps and their Slurm jobs" },
	{ "cancel", cmd_cancel, "cancel a run and its Slurm jobs" },
	{ "show", cmd_show, "print a run's roofline table and results" },
	{ "plot", cmd_plot, "draw a run's roofline chart (with --baseline runs)" },
	{ "open", cmd_open, "print where a run's HTML report is (path, URL)" },
	{ "history", cmd_history, "one kernel's performance over time" },
	{ "plugins", cmd_plugins, "list installed plugins and their options" },
	{ "findings", cmd_findings, "GPUs and kernels that got worse, and why" },
	{ "fleet", cmd_fleet, "every GPU's ceilings tonight against its model, flagged first" },
	{ "ack", cmd_ack, "acknowledge, resolve or reopen findings" },
	{ "regressions", cmd_regressions, "a run's kernels against a baseline (exit 1: regressed)" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: roofline COMMAND [ARGS]\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-12s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(out, "\n`roofline COMMAND --help` describes each; `roofline --version`"
		     " prints the version.  Exit status: "
		     "0 ok, 1 failed, 2 usage.\n");
}

/* The client configuration, then the command. */
static int run_command(const struct command *c, int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;

	strbuf_init(&err);
	if (cli_conf_load(NULL, &err) < 0) {
		fprintf(stderr, "roofline %s: %s\n", c->name, err.buf);
		strbuf_release(&err);
		return CLI_FAILED;
	}
	strbuf_release(&err);
	return c->fn(argc, argv);
}

int main(int argc, char **argv)
{
	const char *names[ARRAY_SIZE(commands) + 1];
	const char *near;

	log_init("roofline", RL_LOG_WARNING, false);
	paths_export_defaults();
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CLI_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("roofline %s\n", ROOFLINE_VERSION);
		return CLI_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[1], commands[i].name) == 0)
			return run_command(&commands[i], argc - 1, argv + 1);
		names[i] = commands[i].name;
	}
	names[ARRAY_SIZE(commands)] = NULL;
	near = util_did_you_mean(argv[1], names);
	fprintf(stderr, "roofline: unknown command '%s'%s%s%s\n", argv[1],
		near ? " (did you mean '" : "", near ? near : "",
		near ? "'?)" : "");
	return CLI_USAGE;
}
