/* pipeline_app.c - see pipeline_app.h. */
#include "pipeline_app.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records.h"
#include "util.h"

#define SHOW(s) YTREE_SHOW(s)

static const char *const app_keys[] = {
	"workdir", "env", "modules", "tasks", "tasks_per_node",
	"gpus_per_task", "launcher", NULL,
};
static const char *const launchers[] = { "srun", "mpirun", NULL };

static bool in_list(const char *const *list, const char *word)
{
	for (; *list; list++)
		if (strcmp(*list, word) == 0)
			return true;
	return false;
}

/* No control characters (a path or value must stay one line in params.tsv
 * and in messages; the records layer escapes the rest). */
static bool is_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			return false;
	return true;
}

/* A shell-style variable name. */
static bool is_env_name(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* workdir: absolute, "~", "~/..." (the user's home on the node), or a path
 * inside the run directory. */
static void load_workdir(struct ytree_errors *e, struct pipeline_app *app,
			 const struct ytree_node *step, const char *where)
{
	const struct ytree_node *at;
	const char *t = ytree_get_text(e, step, "workdir", where, &at);

	if (!t)
		return;
	if (!is_printable(t))
		ytree_error(e, at, "'workdir'%s: path '%s' has a control character",
			    where, SHOW(t));
	else if (t[0] == '~' && t[1] && t[1] != '/')
		ytree_error(e, at, "'workdir'%s: path '%s': only '~' and '~/...' "
				   "(your own home) are understood", where, SHOW(t));
	else if (t[0] != '/' && t[0] != '~' && !util_path_is_contained(t))
		ytree_error(e, at, "'workdir'%s: path '%s' leaves the run directory "
				   "(give an absolute path, ~/..., or a path inside "
				   "the run directory)", where, SHOW(t));
	else
		app->workdir = xstrdup(t);
}

static void load_env(struct ytree_errors *e, struct pipeline_app *app,
		     const struct ytree_node *step, const char *where)
{
	const struct ytree_node *map = ytree_get(step, "env");

	if (!map)
		return;
	if (map->kind != YTREE_MAPPING) {
		ytree_error(e, map, "'env'%s must be a mapping of variable names "
				    "to values, not %s", where, ytree_describe(map));
		return;
	}
	ytree_check_keys(e, map, NULL, where);
	if (map->n > PIPELINE_ENV_MAX)
		ytree_error(e, map, "'env'%s sets %zu variables (at most %d)",
			    where, map->n, PIPELINE_ENV_MAX);
	for (size_t i = 0; i < map->n && i < PIPELINE_ENV_MAX; i++) {
		const struct ytree_pair *pr = &map->pairs[i];
		const char *v;

		if (pr->key->kind != YTREE_SCALAR || ytree_earlier_key(map, i))
			continue; /* reported by ytree_check_keys */
		if (!is_env_name(pr->key->text)) {
			ytree_error(e, pr->key, "invalid variable name '%s' in "
						"'env'%s (use letters, digits and "
						"'_', not starting with a digit)",
				    SHOW(pr->key->text), where);
			continue;
		}
		v = ytree_text(e, pr->value, "value in 'env'", where);
		if (!v)
			continue;
		app->env = xrealloc(app->env, (app->n_env + 1) * sizeof(*app->env));
		app->env[app->n_env].a = xstrdup(pr->key->text);
		app->env[app->n_env].b = xstrdup(v);
		app->n_env++;
	}
}

static void add_module(struct ytree_errors *e, struct pipeline_app *app,
		       const struct ytree_node *v, const char *where)
{
	const char *t = ytree_text(e, v, "item of 'modules'", where);

	if (!t)
		return;
	for (const char *c = t; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '\'' ||
		    *c == '"' || *c == '\\')
			t = NULL;
	if (!t || v->text[0] == '-') {
		ytree_error(e, v, "invalid module name '%s' in 'modules'%s (one "
				  "word, as 'module load' takes it: gcc/12.2)",
			    SHOW(v->text), where);
		return;
	}
	if (app->n_modules == PIPELINE_MODULES_MAX) {
		ytree_error(e, v, "'modules'%s lists more than %d modules", where,
			    PIPELINE_MODULES_MAX);
		return;
	}
	app->modules = xrealloc(app->modules,
				(app->n_modules + 1) * sizeof(*app->modules));
	app->modules[app->n_modules++] = xstrdup(t);
}

static void load_modules(struct ytree_errors *e, struct pipeline_app *app,
			 const struct ytree_node *step, const char *where)
{
	const struct ytree_node *v = ytree_get(step, "modules");

	if (!v)
		return;
	if (v->kind == YTREE_MAPPING) {
		ytree_error(e, v, "'modules'%s must be a list of module names, "
				  "not a mapping", where);
		return;
	}
	if (v->kind == YTREE_SCALAR) {
		add_module(e, app, v, where);
		return;
	}
	for (size_t i = 0; i < v->n; i++)
		add_module(e, app, v->items[i], where);
}

static long get_count(struct ytree_errors *e, const struct ytree_node *step,
		      const char *key, long max, const char *where)
{
	const struct ytree_node *at;
	const char *t = ytree_get_text(e, step, key, where, &at);
	long v;

	if (!t)
		return 0;
	if (util_parse_long(t, &v) < 0 || v < 1 || v > max) {
		ytree_error(e, at, "'%s'%s must be an integer from 1 to %ld, not "
				   "'%s'", key, where, max, SHOW(t));
		return 0;
	}
	return v;
}

static void load_launch(struct ytree_errors *e, struct pipeline_app *app,
			const struct ytree_node *step, const char *where)
{
	const struct ytree_node *at;
	const char *t;

	app->tasks = get_count(e, step, "tasks", PIPELINE_TASKS_MAX, where);
	app->tasks_per_node = get_count(e, step, "tasks_per_node",
					PIPELINE_TASKS_MAX, where);
	app->gpus_per_task = get_count(e, step, "gpus_per_task",
				       PIPELINE_GPUS_PER_TASK_MAX, where);
	t = ytree_get_text(e, step, "launcher", where, &at);
	if (t && !in_list(launchers, t)) {
		const char *near = util_did_you_mean(t, launchers);

		if (near)
			ytree_error(e, at, "invalid launcher '%s'%s (did you mean "
					   "'%s'?)", SHOW(t), where, near);
		else
			ytree_error(e, at, "invalid launcher '%s'%s (expected "
					   "'srun' or 'mpirun')", SHOW(t), where);
	} else if (t) {
		app->launcher = xstrdup(t);
	}
	if (!app->tasks && (app->tasks_per_node || app->gpus_per_task || t)) {
		const char *key = app->tasks_per_node ? "tasks_per_node" :
				  app->gpus_per_task ? "gpus_per_task" : "launcher";

		ytree_error(e, ytree_get(step, key), "'%s'%s needs 'tasks' (the "
				"number of ranks to start)", key, where);
	}
	if (app->tasks && app->tasks_per_node > app->tasks)
		ytree_error(e, ytree_get(step, "tasks_per_node"),
			    "'tasks_per_node'%s is %ld, more than 'tasks' (%ld)",
			    where, app->tasks_per_node, app->tasks);
}

void pipeline_app_load(struct ytree_errors *e, struct pipeline_app *app,
		       const struct ytree_node *step, bool on_daemon,
		       const char *where)
{
	if (on_daemon) {
		for (size_t i = 0; app_keys[i]; i++) {
			const struct ytree_pair *pr = ytree_pair(step, app_keys[i]);

			if (pr)
				ytree_error(e, pr->key, "'%s'%s is for Slurm steps "
						"only (an 'on: daemon' step runs "
						"the facility's programs in the "
						"run directory)", app_keys[i], where);
		}
		return;
	}
	load_workdir(e, app, step, where);
	load_env(e, app, step, where);
	load_modules(e, app, step, where);
	load_launch(e, app, step, where);
}

long pipeline_app_nodes(const struct pipeline_app *app, long count,
			bool count_written)
{
	if (count_written || !app->tasks || !app->tasks_per_node)
		return count > 0 ? count : 1;
	return (app->tasks + app->tasks_per_node - 1) / app->tasks_per_node;
}

void pipeline_app_check_nodes(struct ytree_errors *e,
			      const struct pipeline_app *app,
			      const struct ytree_node *step, long count,
			      bool count_written, const char *where)
{
	long nodes = pipeline_app_nodes(app, count, count_written);

	if (!app->tasks)
		return;
	if (app->tasks < nodes)
		ytree_error(e, ytree_get(step, "tasks"), "'tasks'%s is %ld, fewer "
				"than the %ld nodes of each job ('nodes' in "
				"'slurm')", where, app->tasks, nodes);
	else if (app->tasks_per_node && app->tasks_per_node * nodes < app->tasks)
		ytree_error(e, ytree_get(step, "tasks"), "'tasks'%s is %ld, more "
				"than %ld nodes x 'tasks_per_node' %ld", where,
			    app->tasks, nodes, app->tasks_per_node);
}

bool pipeline_app_is_set(const struct pipeline_app *app)
{
	return app->workdir || app->n_env || app->n_modules || app->tasks;
}

void pipeline_app_format(const struct pipeline_app *app, struct strbuf *out)
{
	char tasks[24], tpn[24], gpt[24];

	if (!pipeline_app_is_set(app))
		return;
	snprintf(tasks, sizeof(tasks), "%ld", app->tasks);
	snprintf(tpn, sizeof(tpn), "%ld", app->tasks_per_node);
	snprintf(gpt, sizeof(gpt), "%ld", app->gpus_per_task);
	records_format(out, "app", (const struct rl_field[]){
		{ "workdir", app->workdir ? app->workdir : "" },
		{ "tasks", tasks }, { "tasks_per_node", tpn },
		{ "gpus_per_task", gpt },
		{ "launcher", app->tasks ? (app->launcher ? app->launcher : "srun")
					 : "" },
		{ NULL, NULL } });
	for (size_t i = 0; i < app->n_env; i++)
		records_format(out, "env", (const struct rl_field[]){
			{ "name", app->env[i].a }, { "value", app->env[i].b },
			{ NULL, NULL } });
	for (size_t i = 0; i < app->n_modules; i++)
		records_format(out, "module", (const struct rl_field[]){
			{ "name", app->modules[i] }, { NULL, NULL } });
}

void pipeline_app_release(struct pipeline_app *app)
{
	free(app->workdir);
	for (size_t i = 0; i < app->n_env; i++) {
		free(app->env[i].a);
		free(app->env[i].b);
	}
	free(app->env);
	for (size_t i = 0; i < app->n_modules; i++)
		free(app->modules[i]);
	free(app->modules);
	free(app->launcher);
	memset(app, 0, sizeof(*app));
}
