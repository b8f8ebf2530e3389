/*
 * roofline plugins - list installed plugins: name, stage, version, summary
 * and option table.  A file that fails to load is listed with its fault.
 */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_json.h"
#include "options.h"
#include "paths.h"
#include "plugin_loader.h"
#include "util.h"

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_so(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 3 && strcmp(d->d_name + n - 3, ".so") == 0;
}

/* Print one plugin; returns 1 when it was refused. */
static int show_one(const char *dir, const char *file, int brief)
{
	struct strbuf err = STRBUF_INIT;
	char *path = xasprintf("%s/%s", dir, file);
	struct plugin_handle *h;
	int refused = 0;

	strbuf_init(&err);
	h = plugin_loader_open(path, &err);
	if (!h) {
		printf("%-14s REFUSED  %s\n", file, err.buf);
		refused = 1;
	} else {
		const struct rl_plugin *p = h->plugin;

		printf("%-14s %-9s %-6s %s\n", p->name,
		       plugin_stage_name(p->stage), p->version, p->summary);
		if (!brief)
			options_print_help(stdout, p);
		plugin_loader_close(h);
	}
	strbuf_release(&err);
	free(path);
	return refused;
}

/* One plugin as {name, version, stage, summary, options: [...]}. */
static struct json_object *plugin_json(const struct rl_plugin *p)
{
	struct json_object *o = cli_json_object(), *opts = cli_json_array();

	cli_json_set(o, "name", cli_json_string(p->name));
	cli_json_set(o, "version", cli_json_string(p->version));
	cli_json_set(o, "stage", cli_json_string(plugin_stage_name(p->stage)));
	cli_json_set(o, "summary", cli_json_string(p->summary));
	for (size_t i = 0; p->options && p->options[i].key; i++) {
		const struct rl_option *opt = &p->options[i];
		struct json_object *j = cli_json_object();

		cli_json_set(j, "key", cli_json_string(opt->key));
		cli_json_set(j, "type", cli_json_string(options_type_name(opt->type)));
		cli_json_set(j, "default", cli_json_string(opt->default_value));
		cli_json_set(j, "required", cli_json_bool(opt->required != 0));
		cli_json_set(j, "help", cli_json_string(opt->help));
		cli_json_append(opts, j);
	}
	cli_json_set(o, "options", opts);
	return o;
}

/* Add one file to doc's "plugins", or to its "refused" with the reason;
 * returns 1 when it was refused. */
static int json_one(const char *dir, const char *file, struct json_object *doc)
{
	struct strbuf err = STRBUF_INIT;
	char *path = xasprintf("%s/%s", dir, file);
	struct plugin_handle *h;
	struct json_object *list, *o;
	int refused = 0;

	strbuf_init(&err);
	h = plugin_loader_open(path, &err);
	if (!h) {
		o = cli_json_object();
		cli_json_set(o, "file", cli_json_string(file));
		cli_json_set(o, "error", cli_json_string(err.buf));
		refused = 1;
	} else {
		o = plugin_json(h->plugin);
		plugin_loader_close(h);
	}
	list = cli_json_array_at(doc, refused ? "refused" : "plugins");
	cli_json_append(list, o);
	strbuf_release(&err);
	free(path);
	return refused;
}

int cmd_plugins(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "plugin-dir", required_argument, NULL, 'p' },
		{ "brief", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dirent **list;
	char *dir = NULL;
	struct json_object *doc = NULL;
	int brief = 0, json = 0, refused = 0, n, c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "bh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': free(dir); dir = xstrdup(optarg); break;
		case 'b': brief = 1; break;
		case 'j': json = 1; break;
		case 'h':
			printf("usage: roofline plugins [--plugin-dir DIR] [--brief | --json]\n\n"
			       "Lists the plugins in DIR (default: the installed plugin\n"
			       "directory) with stage, version and options.  A file that\n"
			       "cannot be loaded is listed as REFUSED with the reason;\n"
			       "the exit status is then 1.  --json: one JSON document,\n"
			       "options included (docs/json.md).\n");
			free(dir);
			return CLI_OK;
		default:
			free(dir);
			return CLI_USAGE;
		}
	}
	if (!dir)
		dir = paths_plugin_dir();
	n = scandir(dir, &list, is_so, by_name);
	if (n < 0) {
		fprintf(stderr, "roofline plugins: cannot read %s: %m\n", dir);
		free(dir);
		return CLI_FAILED;
	}
	if (json) {
		doc = cli_json_object();
		cli_json_set(doc, "plugins", cli_json_array());
		cli_json_set(doc, "refused", cli_json_array());
	}
	for (int i = 0; i < n; i++) {
		if (json)
			refused |= json_one(dir, list[i]->d_name, doc);
		else
			refused |= show_one(dir, list[i]->d_name, brief);
		free(list[i]);
	}
	free(list);
	free(dir);
	if (doc && cli_json_print(doc, true) < 0) {
		fprintf(stderr, "roofline plugins: cannot write the output\n");
		refused = 1;
	}
	cli_json_free(doc);
	return refused ? CLI_FAILED : CLI_OK;
}
