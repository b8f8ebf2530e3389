/*
 * roofline validate - check pipeline files without submitting anything.
 *
 * Every error of every file goes to stderr, one "file:line:col: message"
 * line each; each valid file gets "FILE: ok" on stdout.  Exit status: 0 all
 * valid, 1 any invalid or unreadable, 2 usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "pipeline.h"
#include "plugin_loader.h"
#include "util.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roofline validate [--plugin-dir DIR] FILE...\n\n"
		"Checks each pipeline FILE (\"-\": standard input) as the daemon\n"
		"would before a run: YAML syntax, keys and types, step ids and\n"
		"needs, schedule, durations, Slurm settings, and each step's\n"
		"plugin and options against the plugin's option table.  Every\n"
		"error is printed to stderr as FILE:LINE:COL: MESSAGE; each valid\n"
		"file as \"FILE: ok\" on stdout.  Nothing is submitted.\n\n"
		"  --plugin-dir DIR  load plugins from DIR (default: the\n"
		"                    installed plugin directory)\n\n"
		"Exit status: 0 all valid, 1 some file invalid, 2 usage.\n");
}

/* Validate one file; true when it is valid. */
static bool validate_one(const char *path, const char *dir)
{
	struct strbuf errors = STRBUF_INIT;
	struct pipeline *p;

	strbuf_init(&errors);
	p = pipeline_load_file(path, dir, &errors);
	fputs(strbuf_str(&errors), stderr);
	if (p)
		printf("%s: ok\n", path);
	pipeline_free(p);
	strbuf_release(&errors);
	return p != NULL;
}

int cmd_validate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "plugin-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *dir = NULL;
	bool all_ok = true;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': free(dir); dir = xstrdup(optarg); break;
		case 'h':
			usage(stdout);
			free(dir);
			return CLI_OK;
		default:
			fprintf(stderr, "usage: roofline validate [--plugin-dir DIR] "
					"FILE...\n");
			free(dir);
			return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "roofline validate: no pipeline file given\n"
				"usage: roofline validate [--plugin-dir DIR] "
				"FILE...\n");
		free(dir);
		return CLI_USAGE;
	}
	if (!dir)
		dir = plugin_loader_default_dir();
	for (int i = optind; i < argc; i++)
		all_ok &= validate_one(argv[i], dir);
	fflush(stdout);
	free(dir);
	return all_ok ? CLI_OK : CLI_FAILED;
}
