/* plugin_check.c - see plugin_check.h. */
#include "plugin_check.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "plugin_loader.h"
#include "util.h"

/* " (did you mean 'x'?)" or "", as three %s arguments */
#define HINT(near) (near) ? " (did you mean '" : "", (near) ? (near) : "", \
		   (near) ? "'?)" : ""
#define SHOW(s) YTREE_SHOW(s)

struct plugin_entry {
	char *name;
	struct plugin_handle *h; /* NULL: could not be loaded */
};

struct plugin_check {
	const char *dir;
	struct plugin_entry *plugins;
	size_t n_plugins;
	char **installed; /* plugin names found in dir, for hints */
	bool scanned;
};

struct plugin_check *plugin_check_new(const char *plugin_dir)
{
	struct plugin_check *pc = xcalloc(1, sizeof(*pc));

	pc->dir = plugin_dir;
	return pc;
}

void plugin_check_free(struct plugin_check *pc)
{
	if (!pc)
		return;
	for (size_t i = 0; i < pc->n_plugins; i++) {
		free(pc->plugins[i].name);
		plugin_loader_close(pc->plugins[i].h);
	}
	free(pc->plugins);
	for (size_t i = 0; pc->installed && pc->installed[i]; i++)
		free(pc->installed[i]);
	free(pc->installed);
	free(pc);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The plugin names in the directory (for "did you mean"), read once. */
static const char *const *installed_plugins(struct plugin_check *pc)
{
	DIR *dir;
	struct dirent *d;
	size_t n = 0;

	if (pc->scanned)
		return (const char *const *)pc->installed;
	pc->scanned = true;
	pc->installed = xcalloc(1, sizeof(char *));
	dir = opendir(pc->dir);
	while (dir && (d = readdir(dir))) {
		size_t len = strlen(d->d_name);

		if (len <= 3 || strcmp(d->d_name + len - 3, ".so") != 0)
			continue;
		pc->installed = xrealloc(pc->installed, (n + 2) * sizeof(char *));
		pc->installed[n++] = xstrndup(d->d_name, len - 3);
		pc->installed[n] = NULL;
	}
	if (dir)
		closedir(dir);
	qsort(pc->installed, n, sizeof(char *), by_name);
	return (const char *const *)pc->installed;
}

static void report_plugin(struct plugin_check *pc, struct ytree_errors *e,
			  const struct ytree_node *at, const char *name,
			  const char *why, const char *where)
{
	char *file = xstrdup(name), *path;
	const char *near;

	for (char *c = file; *c; c++)
		if (*c == '-')
			*c = '_';
	path = xasprintf("%s/%s.so", pc->dir, file);
	if (access(path, F_OK) == 0) {
		ytree_error(e, at, "cannot load plugin '%s'%s: %s", name, where,
			    why);
	} else {
		near = util_did_you_mean(name, installed_plugins(pc));
		if (near)
			ytree_error(e, at, "unknown plugin '%s'%s%s%s%s", name,
				    where, HINT(near));
		else
			ytree_error(e, at, "unknown plugin '%s'%s (no %s.so in %s)",
				    name, where, file, pc->dir);
	}
	free(path);
	free(file);
}

/* The plugin `name`, opened once per checker; NULL (reported) when it
 * cannot be. */
static const struct rl_plugin *plugin_get(struct plugin_check *pc,
					  struct ytree_errors *e,
					  const struct ytree_node *at,
					  const char *name, const char *where)
{
	struct strbuf err = STRBUF_INIT;
	struct plugin_entry *pe = NULL;

	for (size_t i = 0; i < pc->n_plugins && !pe; i++)
		if (strcmp(pc->plugins[i].name, name) == 0)
			pe = &pc->plugins[i];
	strbuf_init(&err);
	if (!pe) {
		pc->plugins = xrealloc(pc->plugins, (pc->n_plugins + 1) *
						    sizeof(*pc->plugins));
		pe = &pc->plugins[pc->n_plugins++];
		pe->name = xstrdup(name);
		pe->h = plugin_loader_find(pc->dir, name, &err);
	}
	if (!pe->h) {
		if (!err.len) /* a failure seen before: ask again for the reason */
			plugin_loader_close(plugin_loader_find(pc->dir, name, &err));
		report_plugin(pc, e, at, name, strbuf_str(&err), where);
	}
	strbuf_release(&err);
	return pe->h ? pe->h->plugin : NULL;
}

/* Report an options.c message with the step spliced in after its
 * "option 'KEY'" opening, so it reads like the others. */
static void report_option(struct ytree_errors *e, const struct ytree_node *at,
			  const char *key, const char *msg, const char *where)
{
	char *head = xasprintf("option '%s'", key);
	size_t n = strlen(head);

	if (strncmp(msg, head, n) == 0)
		ytree_error(e, at, "%s%s%s", head, where, msg + n);
	else
		ytree_error(e, at, "%s%s", msg, where);
	free(head);
}

static void add_pair(struct pipeline_step *st, const char *key,
		     const char *value)
{
	st->opts = xrealloc(st->opts, (st->n_opts + 1) * sizeof(*st->opts));
	st->opts[st->n_opts].a = xstrdup(key);
	st->opts[st->n_opts].b = xstrdup(value);
	st->n_opts++;
}

/* What one option check needs to know. */
struct option_ctx {
	struct ytree_errors *e;
	struct pipeline_step *st;
	struct options *o;          /* NULL: plugin unknown, record only */
	const char *where;
};

/* Check and record one value (item idx of a list) of option key. */
static bool set_option(const struct option_ctx *c, const struct rl_option *opt,
		       const char *key, const struct ytree_node *v, size_t idx)
{
	struct strbuf err = STRBUF_INIT;
	char what[128];
	const char *text;
	bool ok = true;

	snprintf(what, sizeof(what), "item %zu of option '%s'", idx + 1, key);
	text = ytree_text(c->e, v, what, c->where);
	if (!text)
		return false;
	strbuf_init(&err);
	if (c->o && options_set(c->o, key, text, &err) < 0) {
		report_option(c->e, v, key, err.buf, c->where);
		ok = false;
	} else if (opt && opt->type == RL_OPT_COMMAND && idx == 0 &&
		   !c->st->on_daemon && (text[0] == '/' || !strcmp(text, "~") ||
					 !strncmp(text, "~/", 2))) {
		/* a Slurm step runs as its user: any program the user can
		 * run, resolved on the compute node */
	} else if (opt && opt->type == RL_OPT_COMMAND && idx == 0 &&
		   strchr(text, '/') && !util_path_is_contained(text)) {
		ytree_error(c->e, v, "option '%s'%s: program '%s' is outside the "
				     "run directory (give a program name to find "
				     "in PATH or a path inside the run directory)",
			    key, c->where, SHOW(text));
		ok = false;
	}
	strbuf_release(&err);
	if (ok)
		add_pair(c->st, key, text);
	return ok;
}

static void report_unknown_option(const struct option_ctx *c,
				  const struct ytree_node *at)
{
	const struct rl_plugin *pl = c->o->plugin;
	const char **keys = xcalloc(c->o->count + 1, sizeof(*keys));
	const char *near;

	for (size_t i = 0; i < c->o->count; i++)
		keys[i] = pl->options[i].key;
	near = util_did_you_mean(at->text, keys);
	ytree_error(c->e, at, "unknown option '%s' for plugin '%s'%s%s%s%s",
		    SHOW(at->text), pl->name, c->where, HINT(near));
	free(keys);
}

/* One `with:` entry; false when something was reported. */
static bool load_option(const struct option_ctx *c,
			const struct ytree_pair *pair)
{
	const char *key = pair->key->text, *where = c->where;
	const struct ytree_node *v = pair->value;
	const struct rl_option *opt = c->o ? options_find(c->o->plugin, key) : NULL;
	bool ok = true;

	if (c->o && !opt) {
		report_unknown_option(c, pair->key);
		return false;
	}
	if (v->kind == YTREE_MAPPING) {
		ytree_error(c->e, v, "option '%s'%s must be a value or a list, "
				     "not a mapping", key, where);
		return false;
	}
	if (v->kind == YTREE_SCALAR && ytree_is_null(v)) {
		ytree_error(c->e, v, "option '%s'%s has no value", key, where);
		return false;
	}
	if (opt && options_is_list(opt) && v->kind == YTREE_SCALAR) {
		ytree_error(c->e, v, "option '%s'%s takes a list, not a single "
				     "value (write [%s])", key, where,
			    SHOW(v->text));
		return false;
	}
	if (opt && !options_is_list(opt) && v->kind == YTREE_SEQUENCE) {
		ytree_error(c->e, v, "option '%s'%s takes a single %s, not a list",
			    key, where, options_type_name(opt->type));
		return false;
	}
	/* the first option that names a program, for the daemon's policy */
	if (opt && options_names_program(opt) && !c->st->program_option)
		c->st->program_option = xstrdup(key);
	if (v->kind == YTREE_SCALAR)
		return set_option(c, opt, key, v, 0);
	for (size_t i = 0; i < v->n; i++)
		ok &= set_option(c, opt, key, v->items[i], i);
	return ok;
}

/* Required options never set; then the defaults (options_finish). */
static void check_required(const struct option_ctx *c,
			   const struct ytree_node *at)
{
	struct strbuf err = STRBUF_INIT;
	bool missing = false;

	for (size_t i = 0; i < c->o->count; i++) {
		const struct rl_option *opt = &c->o->plugin->options[i];

		if (opt->required && !c->o->is_set[i]) {
			ytree_error(c->e, at, "missing required option '%s' for "
					      "plugin '%s'%s", opt->key,
				    c->o->plugin->name, c->where);
			missing = true;
		}
	}
	strbuf_init(&err);
	if (!missing && options_finish(c->o, &err) < 0)
		ytree_error(c->e, at, "%s%s", err.buf, c->where);
	strbuf_release(&err);
}

void plugin_check_step(struct plugin_check *pc, struct ytree_errors *e,
		       struct pipeline_step *st, const char *name,
		       const struct ytree_node *plugin_at,
		       const struct ytree_pair *with, const char *where)
{
	const struct rl_plugin *pl = NULL;
	const struct ytree_node *map = with ? with->value : NULL;
	struct option_ctx c = { .e = e, .st = st, .where = where };
	bool ok = true;

	if (pc->dir) {
		pl = plugin_get(pc, e, plugin_at, name, where);
		if (!pl)
			return; /* its options cannot be judged */
		c.o = options_new(pl);
	}
	if (map && map->kind != YTREE_MAPPING) {
		if (ytree_is_null(map))
			ytree_error(e, map, "'with'%s has no value", where);
		else
			ytree_error(e, map, "'with'%s must be a mapping of plugin "
					    "options, not %s", where,
				    ytree_describe(map));
		goto out_free;
	}
	if (map) {
		ytree_check_keys(e, map, NULL, where);
		for (size_t i = 0; i < map->n; i++)
			if (map->pairs[i].key->kind == YTREE_SCALAR &&
			    !ytree_earlier_key(map, i))
				ok &= load_option(&c, &map->pairs[i]);
	}
	if (c.o && ok)
		check_required(&c, with ? with->key : plugin_at);
out_free:
	options_free(c.o);
}
