/*
 * roofline validate - check pipeline files without submitting anything.
 *
 * Every error of every file goes to stderr, one "file:line:col: message"
 * line each; each valid file gets "FILE: ok" on stdout.  Exit status: 0 all
 * valid, 1 any invalid or unreadable, 2 usage.  With --cluster, each file
 * is also checked against the Slurm cluster, as `roofline submit` does.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cli_cluster.h"
#include "pipeline.h"
#include "paths.h"
#include "plugin_loader.h"
#include "util.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roofline validate [--cluster] [--plugin-dir DIR] FILE...\n\n"
		"Checks each pipeline FILE (\"-\": standard input) as the daemon\n"
		"would before a run: YAML syntax, keys and types, step ids and\n"
		"needs, schedule, durations, Slurm settings, and each step's\n"
		"plugin and options against the plugin's option table.  Every\n"
		"error is printed to stderr as FILE:LINE:COL: MESSAGE; each valid\n"
		"file as \"FILE: ok\" on stdout.  Nothing is submitted.\n\n"
		"  --cluster         also check against the Slurm cluster (SLURM_CONF,\n"
		"                    else /etc/slurm/slurm.conf) as `roofline submit`\n"
		"                    does: the partition exists, some node of it has\n"
		"                    the gres, the time is within its MaxTime, the\n"
		"                    nodes are in it; a cluster that cannot be\n"
		"                    reached is an error\n"
		"  --plugin-dir DIR  load plugins from DIR (default: the\n"
		"                    installed plugin directory)\n\n"
		"Exit status: 0 all valid, 1 some file invalid, 2 usage.\n");
}

/* Validate one file; true when it is valid. */
static bool validate_one(const char *path, const char *dir, bool cluster)
{
	struct strbuf errors = STRBUF_INIT;
	struct pipeline *p;
	bool ok;

	strbuf_init(&errors);
	p = pipeline_load_file(path, dir, &errors);
	fputs(strbuf_str(&errors), stderr);
	ok = p && (!cluster || cli_cluster_check("validate", p, true) == 0);
	if (ok)
		printf("%s: ok\n", path);
	pipeline_free(p);
	strbuf_release(&errors);
	return ok;
}

int cmd_validate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "plugin-dir", required_argument, NULL, 'p' },
		{ "cluster", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *dir = NULL;
	bool all_ok = true, cluster = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': free(dir); dir = xstrdup(optarg); break;
		case 'c': cluster = true; break;
		case 'h':
			usage(stdout);
			free(dir);
			return CLI_OK;
		default:
			fprintf(stderr, "usage: roofline validate [--cluster] "
					"[--plugin-dir DIR] FILE...\n");
			free(dir);
			return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "roofline validate: no pipeline file given\n"
				"usage: roofline validate [--cluster] "
				"[--plugin-dir DIR] FILE...\n");
		free(dir);
		return CLI_USAGE;
	}
	if (!dir)
		dir = paths_plugin_dir();
	for (int i = optind; i < argc; i++)
		all_ok &= validate_one(argv[i], dir, cluster);
	fflush(stdout);
	free(dir);
	return all_ok ? CLI_OK : CLI_FAILED;
}
