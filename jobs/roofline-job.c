/*
 * roofline-job - runs one step of a pipeline on a compute node.
 *
 * Slurm starts it as the submitting user with the attempt directory the
 * daemon prepared; it loads the step's plugin, hands it its inputs and writes
 * records.tsv and exit.tsv there atomically (common/job_host.h).  It links
 * nothing but libc: a compute node needs no database or YAML library.
 *
 * The --run form runs a plugin by hand, for users and for testing plugins on
 * a GPU machine without the rest of the system.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "job_host.h"
#include "log.h"
#include "options.h"
#include "paths.h"
#include "plugin_loader.h"
#include "util.h"

#define EXIT_USAGE 2
#define EXIT_RETRY 75 /* EX_TEMPFAIL */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roofline-job [options] ATTEMPT_DIR\n"
		"       roofline-job [options] --run PLUGIN --out DIR [--input STEP=DIR]... [KEY=VALUE]...\n"
		"       roofline-job [--plugin-dir DIR] --help-plugin PLUGIN\n"
		"\n"
		"Runs one pipeline step: loads its plugin, gives it its inputs and writes\n"
		"records.tsv and exit.tsv into the attempt directory, atomically.\n"
		"The first form reads ATTEMPT_DIR/params.tsv, written by rooflined.\n"
		"\n"
		"  --plugin-dir DIR   load plugins from DIR (default: $ROOFLINE_PLUGIN_DIR,\n"
		"                     or next to this program)\n"
		"  --run PLUGIN       run PLUGIN by hand, with KEY=VALUE options (repeat a\n"
		"                     key to give a list several items)\n"
		"  --out DIR          where --run writes its outputs (created)\n"
		"  --input STEP=DIR   make DIR's records.tsv the output of needed step STEP\n"
		"  --help-plugin P    show plugin P's options\n"
		"  -v, --verbose      log debug lines\n"
		"  -h, --help         this text\n"
		"      --version      print the version and exit\n"
		"\n"
		"Exit status: 0 done, 1 failed, 2 usage, 75 failed but worth retrying.\n");
}

static int exit_code(enum rl_result r)
{
	return r == RL_OK ? 0 : r == RL_RETRY ? EXIT_RETRY : 1;
}

static int help_plugin(const char *dir, const char *name)
{
	struct strbuf err = STRBUF_INIT;
	struct plugin_handle *h;

	strbuf_init(&err);
	h = plugin_loader_find(dir, name, &err);
	if (!h) {
		fprintf(stderr, "roofline-job: %s\n", err.buf);
		strbuf_release(&err);
		return 1;
	}
	printf("%s %s (%s): %s\n", h->plugin->name, h->plugin->version,
	       plugin_stage_name(h->plugin->stage), h->plugin->summary);
	options_print_help(stdout, h->plugin);
	plugin_loader_close(h);
	strbuf_release(&err);
	return 0;
}

/* Build a spec for --run from the command line; 0 or EXIT_USAGE. */
static int spec_from_args(struct job_spec *spec, const char *plugin,
			  const char *out, char **inputs, int n_inputs,
			  char **kv, int n_kv)
{
	int rc = util_mkdir_p(out, 0755);

	if (rc < 0) {
		fprintf(stderr, "roofline-job: cannot create %s: %s\n", out,
			strerror(-rc));
		return 1;
	}
	job_spec_set(&spec->plugin, plugin);
	job_spec_set(&spec->step_id, plugin);
	job_spec_set(&spec->out_dir, out);
	job_spec_set(&spec->run_dir, ".");
	spec->attempt = 1;
	for (int i = 0; i < n_inputs; i++) {
		char *eq = strchr(inputs[i], '=');

		if (!eq || eq == inputs[i]) {
			fprintf(stderr, "roofline-job: --input wants STEP=DIR, not '%s'\n",
				inputs[i]);
			return EXIT_USAGE;
		}
		*eq = '\0';
		job_spec_add_input(spec, inputs[i], eq + 1);
	}
	for (int i = 0; i < n_kv; i++) {
		char *eq = strchr(kv[i], '=');

		if (!eq || eq == kv[i]) {
			fprintf(stderr, "roofline-job: expected KEY=VALUE, not '%s'\n",
				kv[i]);
			return EXIT_USAGE;
		}
		*eq = '\0';
		job_spec_add_option(spec, kv[i], eq + 1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "plugin-dir", required_argument, NULL, 'p' },
		{ "run", required_argument, NULL, 'r' },
		{ "out", required_argument, NULL, 'o' },
		{ "input", required_argument, NULL, 'i' },
		{ "help-plugin", required_argument, NULL, 'H' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *run = NULL, *out = NULL, *help_for = NULL;
	char *plugin_dir = NULL;
	char **inputs = xcalloc((size_t)argc, sizeof(char *));
	int n_inputs = 0, c, rc;
	enum rl_log_level level = RL_LOG_INFO;
	struct job_spec spec;
	struct strbuf err = STRBUF_INIT;

	job_spec_init(&spec);
	strbuf_init(&err);
	/* Whatever a step writes is its owner's alone (the directories above
	 * are too, but a file copied elsewhere keeps its mode). */
	umask(077);
	while ((c = getopt_long(argc, argv, "+vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': free(plugin_dir); plugin_dir = xstrdup(optarg); break;
		case 'r': run = optarg; break;
		case 'o': out = optarg; break;
		case 'i': inputs[n_inputs++] = optarg; break;
		case 'H': help_for = optarg; break;
		case 'v': level = RL_LOG_DEBUG; break;
		case 'h': usage(stdout); rc = 0; goto out;
		case 'V': printf("roofline-job %s\n", ROOFLINE_VERSION); rc = 0; goto out;
		default: usage(stderr); rc = EXIT_USAGE; goto out;
		}
	}
	log_init("roofline-job", level, false);
	paths_export_defaults();
	if (!plugin_dir)
		plugin_dir = paths_plugin_dir();
	if (help_for) {
		rc = help_plugin(plugin_dir, help_for);
		goto out;
	}
	if (run) {
		if (!out) {
			fprintf(stderr, "roofline-job: --run needs --out DIR\n");
			rc = EXIT_USAGE;
			goto out;
		}
		rc = spec_from_args(&spec, run, out, inputs, n_inputs,
				    argv + optind, argc - optind);
		if (rc)
			goto out;
	} else {
		if (argc - optind != 1) {
			usage(stderr);
			rc = EXIT_USAGE;
			goto out;
		}
		char *params = xasprintf("%s/%s", argv[optind], JOB_PARAMS_FILE);

		rc = job_spec_load(&spec, params, &err);
		free(params);
		if (rc < 0) {
			fprintf(stderr, "roofline-job: %s\n", err.buf);
			rc = 1;
			goto out;
		}
	}
	rc = exit_code(job_host_run(&spec, plugin_dir));
out:
	job_spec_release(&spec);
	strbuf_release(&err);
	free(plugin_dir);
	free(inputs);
	return rc;
}
