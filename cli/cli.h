/*
 * cli.h - the `roofline` command: one function per subcommand.
 *
 * Each cmd_* takes the arguments after the subcommand name (argv[0] is the
 * subcommand) and returns the process exit status: 0 ok, 1 failed, 2 usage.
 * Each prints its own --help.
 */
#ifndef ROOFLINE_CLI_H
#define ROOFLINE_CLI_H

#define CLI_OK 0
#define CLI_FAILED 1
#define CLI_USAGE 2

int cmd_plugins(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_status(int argc, char **argv);
/* `roofline status` without a run: the active rooflined and its standbys
 * (cmd_daemons.c).  0 when one is active, 1 when none is. */
int cli_status_daemons(void);
int cmd_cancel(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_findings(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_ack(int argc, char **argv);
int cmd_regressions(int argc, char **argv);
int cmd_open(int argc, char **argv);

/* True when argv holds -h or --help before any "--"; prints nothing. */
int cli_wants_help(int argc, char **argv);

#endif
