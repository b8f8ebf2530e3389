/* options.c - see options.h. */
#include "options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *options_type_name(enum rl_opt_type type)
{
	switch (RL_OPT_TYPE(type)) {
	case RL_OPT_STRING: return "string";
	case RL_OPT_INT: return "int";
	case RL_OPT_DOUBLE: return "number";
	case RL_OPT_BOOL: return "bool";
	case RL_OPT_LIST: return "list";
	case RL_OPT_PATH: return "path";
	case RL_OPT_COMMAND: return "command";
	}
	return NULL;
}

static size_t type_size(enum rl_opt_type type)
{
	if ((unsigned)type & ~(0xffu | RL_OPT_PROGRAM))
		return 0;
	switch (RL_OPT_TYPE(type)) {
	case RL_OPT_STRING:
	case RL_OPT_PATH: return sizeof(char *);
	case RL_OPT_INT: return sizeof(long);
	case RL_OPT_DOUBLE: return sizeof(double);
	case RL_OPT_BOOL: return sizeof(int);
	case RL_OPT_LIST:
	case RL_OPT_COMMAND: return sizeof(struct rl_strlist);
	}
	return 0;
}

bool options_is_list(const struct rl_option *opt)
{
	return RL_OPT_TYPE(opt->type) == RL_OPT_LIST ||
	       RL_OPT_TYPE(opt->type) == RL_OPT_COMMAND;
}

bool options_names_program(const struct rl_option *opt)
{
	return ((unsigned)opt->type & RL_OPT_PROGRAM) ||
	       RL_OPT_TYPE(opt->type) == RL_OPT_COMMAND;
}

/* RL_OPT_PROGRAM only on a string, path, list (or command) option. */
static bool program_mark_fits(enum rl_opt_type type)
{
	enum rl_opt_type t = RL_OPT_TYPE(type);

	return !((unsigned)type & RL_OPT_PROGRAM) || t == RL_OPT_STRING ||
	       t == RL_OPT_PATH || t == RL_OPT_LIST || t == RL_OPT_COMMAND;
}

static size_t table_count(const struct rl_plugin *p)
{
	size_t n = 0;

	while (p->options && p->options[n].key)
		n++;
	return n;
}

const struct rl_option *options_find(const struct rl_plugin *p,
				     const char *key)
{
	for (size_t i = 0; p->options && p->options[i].key; i++)
		if (strcmp(p->options[i].key, key) == 0)
			return &p->options[i];
	return NULL;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

/* Check one value of opt's type without storing it. */
static int check_value(const struct rl_option *opt, const char *value,
		       struct strbuf *err)
{
	long l;
	double d;
	int b;

	switch (RL_OPT_TYPE(opt->type)) {
	case RL_OPT_INT:
		if (util_parse_long(value, &l) == 0)
			return 0;
		strbuf_addf(err, "option '%s' expects an integer, not '%s'",
			    opt->key, value);
		return -EINVAL;
	case RL_OPT_DOUBLE:
		if (util_parse_double(value, &d) == 0)
			return 0;
		strbuf_addf(err, "option '%s' expects a number, not '%s'",
			    opt->key, value);
		return -EINVAL;
	case RL_OPT_BOOL:
		if (parse_bool(value, &b) == 0)
			return 0;
		strbuf_addf(err, "option '%s' expects true or false, not '%s'",
			    opt->key, value);
		return -EINVAL;
	case RL_OPT_PATH:
		if (util_path_is_contained(value))
			return 0;
		strbuf_addf(err,
			    "option '%s': path '%s' leaves the run directory",
			    opt->key, value);
		return -EINVAL;
	case RL_OPT_STRING:
	case RL_OPT_LIST:
	case RL_OPT_COMMAND:
		return 0;
	}
	return -EINVAL;
}

int options_table_check(const struct rl_plugin *p, const char *path,
			struct strbuf *err)
{
	struct strbuf why = STRBUF_INIT;
	int rc = 0;

	strbuf_init(&why);
	for (size_t i = 0; p->options && p->options[i].key; i++) {
		const struct rl_option *o = &p->options[i];
		size_t size = type_size(o->type);

		if (!*o->key || options_find(p, o->key) != o) {
			strbuf_addf(err, "%s: option table: empty or duplicate key '%s'",
				    path, o->key);
			rc = -EINVAL;
		} else if (!size) {
			strbuf_addf(err, "%s: option table: '%s' has unknown type %d",
				    path, o->key, (int)o->type);
			rc = -EINVAL;
		} else if (!program_mark_fits(o->type)) {
			strbuf_addf(err, "%s: option table: '%s' is a %s marked as "
				    "naming a program (RL_OPT_PROGRAM: only string, "
				    "path and list options)", path, o->key,
				    options_type_name(o->type));
			rc = -EINVAL;
		} else if (o->offset + size > p->config_size) {
			strbuf_addf(err,
				    "%s: option table: '%s' lies outside the %zu-byte config",
				    path, o->key, p->config_size);
			rc = -EINVAL;
		} else if (o->default_value && !options_is_list(o) &&
			   check_value(o, o->default_value, &why) < 0) {
			strbuf_addf(err, "%s: option table: bad default: %s", path,
				    strbuf_str(&why));
			rc = -EINVAL;
		}
		if (rc)
			break;
	}
	strbuf_release(&why);
	return rc;
}

struct options *options_new(const struct rl_plugin *p)
{
	struct options *o = xcalloc(1, sizeof(*o));

	o->plugin = p;
	o->count = table_count(p);
	o->config = xcalloc(1, p->config_size);
	o->is_set = xcalloc(o->count ? o->count : 1, sizeof(bool));
	return o;
}

static void list_append(struct rl_strlist *l, const char *item)
{
	l->v = xrealloc(l->v, (l->n + 2) * sizeof(*l->v));
	l->v[l->n++] = xstrdup(item);
	l->v[l->n] = NULL;
}

/* Store a checked value in the config field. */
static void store_value(void *config, const struct rl_option *opt,
			const char *value)
{
	char *field = (char *)config + opt->offset;

	switch (RL_OPT_TYPE(opt->type)) {
	case RL_OPT_STRING:
	case RL_OPT_PATH:
		free(*(char **)field);
		*(char **)field = xstrdup(value);
		break;
	case RL_OPT_INT:
		util_parse_long(value, (long *)field);
		break;
	case RL_OPT_DOUBLE:
		util_parse_double(value, (double *)field);
		break;
	case RL_OPT_BOOL:
		parse_bool(value, (int *)field);
		break;
	case RL_OPT_LIST:
	case RL_OPT_COMMAND:
		list_append((struct rl_strlist *)field, value);
		break;
	}
}

static void report_unknown(const struct rl_plugin *p, const char *key,
			   struct strbuf *err)
{
	size_t n = table_count(p);
	const char **keys = xcalloc(n + 1, sizeof(*keys));
	const char *near;

	for (size_t i = 0; i < n; i++)
		keys[i] = p->options[i].key;
	near = util_did_you_mean(key, keys);
	strbuf_addf(err, "unknown option '%s' for plugin '%s'", key, p->name);
	if (near)
		strbuf_addf(err, " (did you mean '%s'?)", near);
	free(keys);
}

int options_set(struct options *o, const char *key, const char *value,
		struct strbuf *err)
{
	const struct rl_option *opt = options_find(o->plugin, key);

	if (!opt) {
		report_unknown(o->plugin, key, err);
		return -EINVAL;
	}
	if (check_value(opt, value, err) < 0)
		return -EINVAL;
	if (RL_OPT_TYPE(opt->type) == RL_OPT_COMMAND && !*value &&
	    ((struct rl_strlist *)((char *)o->config + opt->offset))->n == 0) {
		strbuf_addf(err, "option '%s': empty program name", key);
		return -EINVAL;
	}
	store_value(o->config, opt, value);
	o->is_set[opt - o->plugin->options] = true;
	return 0;
}

int options_finish(struct options *o, struct strbuf *err)
{
	int rc = 0;

	for (size_t i = 0; i < o->count; i++) {
		const struct rl_option *opt = &o->plugin->options[i];

		if (o->is_set[i])
			continue;
		if (opt->required) {
			strbuf_addf(err, "%splugin '%s' needs option '%s'",
				    rc ? "; " : "", o->plugin->name, opt->key);
			rc = -EINVAL;
			continue;
		}
		if (!opt->default_value)
			continue;
		if (!options_is_list(opt)) {
			store_value(o->config, opt, opt->default_value);
			continue;
		}
		/* list defaults are comma-separated items */
		for (const char *p = opt->default_value; *p;) {
			size_t n = strcspn(p, ",");
			char *item = xstrndup(p, n);

			store_value(o->config, opt, item);
			free(item);
			p += n;
			if (*p == ',')
				p++;
		}
	}
	return rc;
}

void options_free(struct options *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->count; i++) {
		const struct rl_option *opt = &o->plugin->options[i];
		char *field = (char *)o->config + opt->offset;

		if (RL_OPT_TYPE(opt->type) == RL_OPT_STRING ||
		    RL_OPT_TYPE(opt->type) == RL_OPT_PATH) {
			free(*(char **)field);
		} else if (options_is_list(opt)) {
			struct rl_strlist *l = (struct rl_strlist *)field;

			for (size_t j = 0; j < l->n; j++)
				free(l->v[j]);
			free(l->v);
		}
	}
	free(o->config);
	free(o->is_set);
	free(o);
}

void options_print_help(FILE *out, const struct rl_plugin *p)
{
	for (size_t i = 0; p->options && p->options[i].key; i++) {
		const struct rl_option *o = &p->options[i];

		fprintf(out, "    %-14s %-8s %s", o->key,
			options_type_name(o->type), o->help ? o->help : "");
		if (o->required)
			fprintf(out, " (required)");
		else if (o->default_value)
			fprintf(out, " [default: %s]", o->default_value);
		fputc('\n', out);
	}
}
