/*
 * cli_help.c - what the subcommands share of their argument handling
 * (cli.h).  Below both roofline.c (the dispatcher, which calls the
 * subcommands) and the cmd_*.c files, so neither calls the other back.
 */
#include <string.h>

#include "cli.h"

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}
