/* pipeline.c - see pipeline.h; the format is docs/pipelines.md. */
#include "pipeline.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_check.h"
#include "plugin_loader.h"
#include "util.h"
#include "yaml_tree.h"

#define NO_STEP SIZE_MAX

struct loader {
	struct ytree_errors e;
	struct plugin_check *pc;
};

/* What a step needs only while it is being checked. */
struct step_aux {
	const struct ytree_node *id_at;
	const struct ytree_node **need_at; /* one per need */
	char *who;   /* "step 'profile'" or "step 3" */
	char *where; /* " in step 'profile'" */
};

static const char *const top_keys[] = {
	"name", "description", "schedule", "slurm", "steps", NULL,
};
static const char *const slurm_keys[] = {
	"partition", "gres", "time", "account", "qos", "constraint", "nodes", NULL,
};
static const char *const step_keys[] = {
	"id", "plugin", "needs", "on", "with", "retries", "timeout",
	"pending_limit", "min_success", "workdir", "env", "modules", "tasks",
	"tasks_per_node", "gpus_per_task", "launcher", NULL,
};

/* " (did you mean 'x'?)" or "", as three %s arguments */
#define HINT(near) (near) ? " (did you mean '" : "", (near) ? (near) : "", \
		   (near) ? "'?)" : ""
#define SHOW(s) YTREE_SHOW(s)
#define report(ld, ...) ytree_error(&(ld)->e, __VA_ARGS__)

static bool in_list(const char *const *list, const char *word)
{
	for (; *list; list++)
		if (strcmp(*list, word) == 0)
			return true;
	return false;
}

/* A word: non-empty, no white space or control characters. */
static bool is_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

/* True when s is 1..max characters of [A-Za-z0-9] and those in extra. */
static bool is_name(const char *s, size_t max, const char *extra)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
			return false;
	return true;
}

/* Where the value of map's key is written; 0:0 when absent. */
static struct pipeline_pos pos_of(const struct ytree_node *map, const char *key)
{
	const struct ytree_node *v = ytree_get(map, key);

	return v ? (struct pipeline_pos){ v->line, v->col }
		 : (struct pipeline_pos){ 0, 0 };
}

static long get_duration(struct loader *ld, const struct ytree_node *map,
			 const char *key, const char *where, char **text_out)
{
	const struct ytree_node *at;
	const char *text = ytree_get_text(&ld->e, map, key, where, &at);
	long v;

	if (!text)
		return 0;
	if (util_parse_duration(text, &v) < 0 || v <= 0) {
		report(ld, at,
		       "invalid duration '%s' for '%s'%s (use minutes, M:S, "
		       "H:M:S, D-H, D-H:M, D-H:M:S, or 90s, 15m, 2h, 1d)",
		       SHOW(text), key, where);
		return 0;
	}
	/* recorded in integer (int4) columns: steps.timeout_s,
	 * steps.pending_limit_s; a Slurm time limit is as long */
	if (v > PIPELINE_DURATION_MAX) {
		report(ld, at, "duration '%s' for '%s'%s is too long (at most "
			       "%d s, about 68 years)", SHOW(text), key, where,
		       PIPELINE_DURATION_MAX);
		return 0;
	}
	*text_out = xstrdup(text);
	return v;
}

/* A fraction in (0, 1], written 0.75 or 75%; 0 when absent or invalid
 * (reported). */
static double get_fraction(struct loader *ld, const struct ytree_node *map,
			   const char *key, const char *where)
{
	const struct ytree_node *at;
	const char *text = ytree_get_text(&ld->e, map, key, where, &at);
	size_t len = text ? strlen(text) : 0;
	bool percent = len > 1 && text[len - 1] == '%';
	char *number;
	double v = 0;
	int rc;

	if (!text)
		return 0;
	number = xstrndup(text, percent ? len - 1 : len);
	rc = util_parse_double(number, &v);
	free(number);
	if (percent)
		v /= 100;
	if (rc < 0 || !(v > 0 && v <= 1)) {
		report(ld, at, "invalid value '%s' for '%s'%s (a fraction of "
			       "instances above 0 and at most 1, e.g. 0.75 or 75%%)",
		       SHOW(text), key, where);
		return 0;
	}
	return v;
}

/* A gres count: digits only, a positive integer that fits Slurm's 32-bit
 * counts.  NULL, or why not (a format with one %s, the count). */
static const char *gres_count_bad(const char *text)
{
	long count;
	int rc = util_parse_long(text, &count);

	if (!isdigit((unsigned char)text[0]) || rc == -EINVAL ||
	    (rc == 0 && count <= 0))
		return "count '%s' is not a positive integer";
	if (rc < 0 || count > INT32_MAX)
		return "count '%s' is too large";
	return NULL;
}

/* Why the fields of one gres item are wrong (a format with one %s, set in
 * *subject), or NULL. */
static const char *gres_fields_bad(char **parts, size_t n, const char **subject)
{
	bool second_is_count = n == 2 && (strchr("0123456789-+", parts[1][0]) ||
					   strcmp(parts[1], PIPELINE_GRES_ALL) == 0);

	*subject = parts[0];
	if (strcmp(parts[0], "gres") == 0)
		return "leave out the 'gres:' prefix%.0s";
	if (!is_name(parts[0], 64, "_") || !isalpha((unsigned char)parts[0][0]))
		return "name '%s' must start with a letter (then letters, "
		       "digits or '_')";
	*subject = parts[1];
	if (second_is_count)
		return strcmp(parts[1], PIPELINE_GRES_ALL) == 0
			       ? NULL : gres_count_bad(parts[1]);
	if (n >= 2 && (!is_name(parts[1], 64, "_.-") ||
		       !isalpha((unsigned char)parts[1][0])))
		return "type '%s' must start with a letter (then letters, "
		       "digits, '_', '.' or '-')";
	*subject = parts[2];
	if (n == 3 && strcmp(parts[2], PIPELINE_GRES_ALL) == 0)
		return NULL;
	return n == 3 ? gres_count_bad(parts[2]) : NULL;
}

struct pipeline_gres *pipeline_gres_parse(const char *text, size_t *n)
{
	struct pipeline_gres *items = NULL;
	char *copy = xstrdup(text), *save = NULL;

	*n = 0;
	for (char *it = strtok_r(copy, ",", &save); it;
	     it = strtok_r(NULL, ",", &save)) {
		char *f[3], *fs = NULL, *paren = strchr(it, '(');
		size_t nf = 0;
		long count = 1;

		if (paren)
			*paren = '\0';
		for (char *t = strtok_r(it, ":", &fs); t && nf < 3;
		     t = strtok_r(NULL, ":", &fs))
			f[nf++] = t;
		if (nf == 0)
			continue;
		if (nf > 1 && isdigit((unsigned char)f[nf - 1][0]) &&
		    util_parse_long(f[nf - 1], &count) == 0)
			nf--;
		else if (nf > 1 && strcmp(f[nf - 1], PIPELINE_GRES_ALL) == 0)
			nf--; /* all of a node's: at least one */
		items = xrealloc(items, (*n + 1) * sizeof(*items));
		items[*n] = (struct pipeline_gres){
			.name = xstrdup(f[0]),
			.type = nf > 1 && strcmp(f[1], "(null)") != 0
					? xstrdup(f[1]) : NULL,
			.count = count,
		};
		(*n)++;
	}
	free(copy);
	return items;
}

void pipeline_gres_free(struct pipeline_gres *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(items[i].name);
		free(items[i].type);
	}
	free(items);
}

long pipeline_gres_count(const char *gres, const char *name)
{
	size_t n;
	struct pipeline_gres *items = pipeline_gres_parse(gres ? gres : "", &n);
	long total = 0;

	for (size_t i = 0; i < n; i++)
		if (strcmp(items[i].name, name) == 0)
			total += items[i].count;
	pipeline_gres_free(items, n);
	return total;
}

bool pipeline_gres_wants_all(const char *gres)
{
	size_t len = strlen(PIPELINE_GRES_ALL);

	for (const char *p = gres; (p = strstr(p, ":" PIPELINE_GRES_ALL)); p++)
		if (p[len + 1] == '\0' || p[len + 1] == ',')
			return true;
	return false;
}

char *pipeline_gres_resolve(const char *gres, long count)
{
	struct strbuf out = STRBUF_INIT;
	size_t len = strlen(PIPELINE_GRES_ALL);

	strbuf_init(&out);
	for (const char *p = gres; *p;) {
		if (p[0] == ':' && strncmp(p + 1, PIPELINE_GRES_ALL, len) == 0 &&
		    (p[len + 1] == '\0' || p[len + 1] == ',')) {
			strbuf_addf(&out, ":%ld", count);
			p += len + 1;
		} else {
			strbuf_addch(&out, *p++);
		}
	}
	return strbuf_detach(&out);
}

/* Why one gres item (NAME, NAME:COUNT, NAME:TYPE or NAME:TYPE:COUNT) is
 * wrong, appended to why; true when it is fine.  Names and types start with
 * a letter; a second field that starts with a digit or a sign is a count. */
static bool gres_item_ok(const char *item, size_t len, struct strbuf *why)
{
	char *copy = xstrndup(item, len), *parts[4], *save = NULL;
	const char *bad = NULL, *subject = NULL;
	size_t n = 0;

	/* strtok_r would skip empty fields: refuse them first */
	if (copy[0] == ':' || copy[len - 1] == ':' || strstr(copy, "::"))
		bad = "empty field in '%s'";
	for (char *t = bad ? NULL : strtok_r(copy, ":", &save); t && n < 4;
	     t = strtok_r(NULL, ":", &save))
		parts[n++] = t;
	if (!bad && n > 3)
		bad = "too many fields in '%s'";
	if (bad) {
		free(copy);
		copy = xstrndup(item, len); /* strtok_r cut it */
		subject = copy;
	} else {
		bad = gres_fields_bad(parts, n, &subject);
	}
	if (bad)
		strbuf_addf(why, bad, SHOW(subject));
	free(copy);
	return !bad;
}

/* True when text is a comma-separated list of good gres items; else why
 * gets the reason. */
static bool gres_ok(const char *text, struct strbuf *why)
{
	const char *p = text;

	for (;;) {
		size_t n = strcspn(p, ",");

		if (n == 0) {
			strbuf_addstr(why, "empty item");
			return false;
		}
		if (!gres_item_ok(p, n, why))
			return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

static void load_node_list(struct loader *ld, struct pipeline_slurm *s,
			   const struct ytree_node *seq)
{
	if (seq->n == 0) {
		report(ld, seq, "'nodes' in 'slurm' lists no nodes");
		return;
	}
	s->nodes = PIPELINE_NODES_LIST;
	s->node_names = xcalloc(seq->n, sizeof(*s->node_names));
	s->node_names_at = xcalloc(seq->n, sizeof(*s->node_names_at));
	for (size_t i = 0; i < seq->n; i++) {
		const struct ytree_node *it = seq->items[i];
		const char *name = ytree_text(&ld->e, it, "node name", " in 'slurm'");

		if (!name)
			continue;
		if (!is_name(name, 255, "._-") || !isalnum((unsigned char)*name)) {
			report(ld, it, "invalid node name '%s' in 'slurm' "
				       "(use a host name)", SHOW(name));
			continue;
		}
		for (size_t j = 0; j < s->n_node_names; j++) {
			if (strcmp(s->node_names[j], name) == 0) {
				report(ld, it, "node '%s' listed twice in 'slurm'",
				       SHOW(name));
				name = NULL;
				break;
			}
		}
		if (!name)
			continue;
		s->node_names_at[s->n_node_names] =
			(struct pipeline_pos){ it->line, it->col };
		s->node_names[s->n_node_names++] = xstrdup(name);
	}
}

static void load_nodes(struct loader *ld, struct pipeline_slurm *s,
		       const struct ytree_node *map)
{
	const struct ytree_pair *pair = ytree_pair(map, "nodes");
	const struct ytree_node *v;
	const char *text;
	long count;

	s->nodes = PIPELINE_NODES_COUNT;
	s->node_count = 1;
	if (!pair)
		return;
	v = pair->value;
	if (v->kind == YTREE_SEQUENCE) {
		load_node_list(ld, s, v);
		return;
	}
	if (v->kind == YTREE_MAPPING) {
		report(ld, v, "'nodes' in 'slurm' must be a count, 'each' or a "
			      "list of node names, not a mapping");
		return;
	}
	text = ytree_text(&ld->e, v, "'nodes'", " in 'slurm'");
	if (!text)
		return;
	if (strcmp(text, "each") == 0)
		s->nodes = PIPELINE_NODES_EACH;
	else if (util_parse_long(text, &count) == 0 && count >= 1 &&
		 count <= PIPELINE_NODES_MAX)
		s->node_count = count;
	else
		report(ld, v, "invalid value '%s' for 'nodes' in 'slurm' (expected "
			      "a node count from 1 to %d, 'each' or a list of node "
			      "names)", SHOW(text), PIPELINE_NODES_MAX);
}

/* partition, account, qos: one word each. */
static char *get_word(struct loader *ld, const struct ytree_node *map,
		      const char *key)
{
	const struct ytree_node *at;
	const char *text = ytree_get_text(&ld->e, map, key, " in 'slurm'", &at);

	if (!text)
		return NULL;
	if (!is_word(text)) {
		report(ld, at, "invalid %s '%s' in 'slurm' (one word, no spaces)",
		       key, SHOW(text));
		return NULL;
	}
	return xstrdup(text);
}

static void load_slurm(struct loader *ld, struct pipeline_slurm *s,
		       const struct ytree_node *map)
{
	struct strbuf why = STRBUF_INIT;
	const struct ytree_node *at;
	const char *text;

	if (map->kind != YTREE_MAPPING) {
		report(ld, map, "'slurm' must be a mapping, not %s",
		       ytree_describe(map));
		return;
	}
	ytree_check_keys(&ld->e, map, slurm_keys, " in 'slurm'");
	s->partition = get_word(ld, map, "partition");
	s->account = get_word(ld, map, "account");
	s->qos = get_word(ld, map, "qos");
	text = ytree_get_text(&ld->e, map, "constraint", " in 'slurm'", &at);
	if (text)
		s->constraint = xstrdup(text);
	text = ytree_get_text(&ld->e, map, "gres", " in 'slurm'", &at);
	strbuf_init(&why);
	if (text && !gres_ok(text, &why))
		report(ld, at, "invalid gres '%s' in 'slurm': %s (expected "
			       "NAME[:TYPE][:COUNT], such as 'gpu:1' or "
			       "'gpu:h100:2')", SHOW(text), why.buf);
	else if (text)
		s->gres = xstrdup(text);
	strbuf_release(&why);
	s->time_s = get_duration(ld, map, "time", " in 'slurm'", &s->time_text);
	load_nodes(ld, s, map);
	if (s->gres && pipeline_gres_wants_all(s->gres) &&
	    s->nodes != PIPELINE_NODES_EACH)
		report(ld, at, "gres '%s' in 'slurm' asks for all of each node's "
			       "%s, which needs 'nodes: each'", SHOW(s->gres),
		       "devices");
	s->partition_at = pos_of(map, "partition");
	s->gres_at = pos_of(map, "gres");
	s->time_at = pos_of(map, "time");
	s->nodes_at = pos_of(map, "nodes");
}

/* ---- steps ---------------------------------------------------------------- */

bool pipeline_step_id_reserved(const char *id)
{
	static const char *const reserved[] = { PIPELINE_RESERVED_STEP_IDS };

	for (size_t i = 0; i < ARRAY_SIZE(reserved); i++)
		if (strcmp(id, reserved[i]) == 0)
			return true;
	return false;
}

static void load_step_id(struct loader *ld, struct pipeline *p, size_t i,
			 const struct ytree_node *node, struct step_aux *all)
{
	struct step_aux *aux = &all[i];
	const struct ytree_node *at;
	const char *id = ytree_get_text(&ld->e, node, "id", "", &at);

	aux->id_at = at;
	if (!at)
		report(ld, node, "missing required key 'id' in step %zu", i + 1);
	else if (id && !is_name(id, PIPELINE_STEP_ID_MAX, "_-"))
		report(ld, at, "invalid step id '%s' (use 1 to %d letters, "
			       "digits, '_' or '-')", SHOW(id),
		       PIPELINE_STEP_ID_MAX);
	else if (id && pipeline_step_id_reserved(id))
		report(ld, at, "step id '%s' is reserved (the run directory's "
			       "own '%s/' is there)", SHOW(id), id);
	else if (id)
		p->steps[i].id = xstrdup(id);
	for (size_t j = 0; p->steps[i].id && j < i; j++) {
		if (p->steps[j].id && strcmp(p->steps[j].id, id) == 0) {
			report(ld, at, "duplicate step id '%s' (first at %u:%u)",
			       id, all[j].id_at->line, all[j].id_at->col);
			free(p->steps[i].id);
			p->steps[i].id = NULL;
			break;
		}
	}
	aux->who = p->steps[i].id ? xasprintf("step '%s'", p->steps[i].id)
				  : xasprintf("step %zu", i + 1);
	aux->where = xasprintf(" in %s", aux->who);
}

static void load_step_plugin(struct loader *ld, struct pipeline_step *st,
			     const struct ytree_node *node, const char *where)
{
	const struct ytree_node *at;
	const char *name = ytree_get_text(&ld->e, node, "plugin", where, &at);

	if (!at) {
		report(ld, node, "missing required key 'plugin'%s", where);
		return;
	}
	if (!name)
		return;
	if (!plugin_name_is_valid(name)) {
		report(ld, at, "invalid plugin name '%s'%s (use a-z, 0-9, '_' "
			       "or '-')", SHOW(name), where);
		return;
	}
	st->plugin = xstrdup(name);
	plugin_check_step(ld->pc, &ld->e, st, name, at, ytree_pair(node, "with"),
			  where);
}

static void load_step_scalars(struct loader *ld, struct pipeline_step *st,
			      const struct ytree_node *node, const char *where)
{
	const struct ytree_node *at;
	const char *text = ytree_get_text(&ld->e, node, "on", where, &at);
	static const char *const ons[] = { "slurm", "daemon", NULL };
	long v;

	if (text && !in_list(ons, text)) {
		const char *near = util_did_you_mean(text, ons);

		if (near)
			report(ld, at, "invalid value '%s' for 'on'%s%s%s%s",
			       SHOW(text), where, HINT(near));
		else
			report(ld, at, "invalid value '%s' for 'on'%s (expected "
				       "'slurm' or 'daemon')", SHOW(text), where);
	}
	st->on_daemon = text && strcmp(text, "daemon") == 0;
	text = ytree_get_text(&ld->e, node, "retries", where, &at);
	if (text && (util_parse_long(text, &v) < 0 || v < 0 ||
		     v > PIPELINE_RETRIES_MAX))
		report(ld, at, "'retries'%s must be an integer from 0 to %d, "
			       "not '%s'", where, PIPELINE_RETRIES_MAX, SHOW(text));
	else if (text)
		st->retries = (int)v;
	st->timeout_s = get_duration(ld, node, "timeout", where,
				     &st->timeout_text);
	st->pending_limit_s = get_duration(ld, node, "pending_limit", where,
					   &st->pending_limit_text);
	st->min_success = get_fraction(ld, node, "min_success", where);
	st->timeout_at = pos_of(node, "timeout");
}

static void add_need(struct pipeline_step *st, struct step_aux *aux,
		     const struct ytree_node *at)
{
	size_t n = st->n_needs + 1;

	st->needs = xrealloc(st->needs, n * sizeof(*st->needs));
	st->needs_idx = xrealloc(st->needs_idx, n * sizeof(*st->needs_idx));
	aux->need_at = xrealloc(aux->need_at, n * sizeof(*aux->need_at));
	st->needs[st->n_needs] = xstrdup(at->text);
	st->needs_idx[st->n_needs] = NO_STEP;
	aux->need_at[st->n_needs] = at;
	st->n_needs = n;
}

static void load_step_needs(struct loader *ld, struct pipeline_step *st,
			    const struct ytree_node *node, struct step_aux *aux)
{
	const struct ytree_pair *pair = ytree_pair(node, "needs");
	const struct ytree_node *v;

	if (!pair)
		return;
	v = pair->value;
	if (v->kind == YTREE_MAPPING) {
		report(ld, v, "'needs'%s must be a list of step ids, not a "
			      "mapping", aux->where);
		return;
	}
	if (v->kind == YTREE_SCALAR) {
		if (ytree_text(&ld->e, v, "'needs'", aux->where))
			add_need(st, aux, v);
		return;
	}
	for (size_t i = 0; i < v->n; i++)
		if (ytree_text(&ld->e, v->items[i], "item of 'needs'", aux->where))
			add_need(st, aux, v->items[i]);
}

static void load_step(struct loader *ld, struct pipeline *p, size_t i,
		      const struct ytree_node *node, struct step_aux *all)
{
	struct pipeline_step *st = &p->steps[i];
	struct step_aux *aux = &all[i];

	st->line = node->line;
	st->col = node->col;
	if (node->kind != YTREE_MAPPING) {
		report(ld, node, "step %zu must be a mapping with 'id' and "
				 "'plugin', not %s", i + 1, ytree_describe(node));
		aux->who = xasprintf("step %zu", i + 1);
		aux->where = xasprintf(" in %s", aux->who);
		return;
	}
	load_step_id(ld, p, i, node, all);
	ytree_check_keys(&ld->e, node, step_keys, aux->where);
	/* `on` first: a step's plugin options and its app keys depend on
	 * where it runs */
	load_step_scalars(ld, st, node, aux->where);
	load_step_plugin(ld, st, node, aux->where);
	load_step_needs(ld, st, node, aux);
	pipeline_app_load(&ld->e, &st->app, node, st->on_daemon, aux->where);
	pipeline_app_check_nodes(&ld->e, &st->app, node, p->slurm.node_count,
				 p->slurm.nodes == PIPELINE_NODES_COUNT &&
					 p->slurm.nodes_at.line != 0,
				 aux->where);
}

static size_t step_index(const struct pipeline *p, const char *id)
{
	for (size_t i = 0; i < p->n_steps; i++)
		if (p->steps[i].id && strcmp(p->steps[i].id, id) == 0)
			return i;
	return NO_STEP;
}

/* The ids a step may need, for hints: every valid id but its own. */
static const char **other_ids(const struct pipeline *p, size_t self)
{
	const char **ids = xcalloc(p->n_steps + 1, sizeof(*ids));
	size_t n = 0;

	for (size_t i = 0; i < p->n_steps; i++)
		if (p->steps[i].id && i != self)
			ids[n++] = p->steps[i].id;
	return ids;
}

/* Resolve step i's need j into needs_idx[j] (NO_STEP when it is wrong). */
static void resolve_need(struct loader *ld, struct pipeline *p, size_t i,
			 size_t j, const struct step_aux *aux)
{
	struct pipeline_step *st = &p->steps[i];
	const struct ytree_node *at = aux[i].need_at[j];
	size_t k = step_index(p, st->needs[j]);

	if (k == NO_STEP) {
		const char **ids = other_ids(p, i);
		const char *near = util_did_you_mean(st->needs[j], ids);

		report(ld, at, "%s needs unknown step '%s'%s%s%s", aux[i].who,
		       SHOW(st->needs[j]), HINT(near));
		free(ids);
		return;
	}
	if (k == i) {
		report(ld, at, "%s needs itself", aux[i].who);
		return;
	}
	for (size_t e = 0; e < j; e++) {
		if (st->needs_idx[e] == k) {
			report(ld, at, "%s needs '%s' twice", aux[i].who,
			       st->needs[j]);
			return;
		}
	}
	st->needs_idx[j] = k;
}

static void resolve_needs(struct loader *ld, struct pipeline *p,
			  const struct step_aux *aux)
{
	for (size_t i = 0; i < p->n_steps; i++)
		for (size_t j = 0; j < p->steps[i].n_needs; j++)
			resolve_need(ld, p, i, j, aux);
}

/* A cycle longer than this is shown by its first CYCLE_HEAD steps, "...",
 * and its last step. */
#define CYCLE_SHOWN_MAX 8
#define CYCLE_HEAD 4

/* Report the cycle that the need at `at` closes: the stack from v up. */
static void report_cycle(struct loader *ld, const struct pipeline *p,
			 const struct ytree_node *at, const size_t *stack,
			 size_t sp, size_t v)
{
	struct strbuf path = STRBUF_INIT;
	size_t k = sp, first, len;

	strbuf_init(&path);
	while (k > 0 && stack[k - 1] != v)
		k--;
	first = k ? k - 1 : 0;
	len = sp - first;
	for (k = first; k < sp; k++) {
		if (len > CYCLE_SHOWN_MAX && k == first + CYCLE_HEAD) {
			strbuf_addstr(&path, "... -> ");
			k = sp - 1;
		}
		strbuf_addf(&path, "%s -> ", p->steps[stack[k]].id);
	}
	if (len > CYCLE_SHOWN_MAX)
		report(ld, at, "dependency cycle of %zu steps: %s%s", len,
		       path.buf, p->steps[v].id);
	else
		report(ld, at, "dependency cycle: %s%s", path.buf,
		       p->steps[v].id);
	strbuf_release(&path);
}

/* Report each cycle the needs close, as "a -> b -> a" (a needs b ...). */
static void find_cycles(struct loader *ld, const struct pipeline *p,
			const struct step_aux *aux)
{
	size_t n = p->n_steps, sp = 0;
	unsigned char *color = xcalloc(n, 1); /* 0 new, 1 on stack, 2 done */
	size_t *pos = xcalloc(n, sizeof(*pos)), *stack = xcalloc(n, sizeof(*stack));

	for (size_t s = 0; s < n; s++) {
		if (color[s])
			continue;
		color[s] = 1;
		stack[sp++] = s;
		while (sp) {
			size_t u = stack[sp - 1], v;
			const struct pipeline_step *st = &p->steps[u];

			if (pos[u] == st->n_needs) {
				color[u] = 2;
				sp--;
				continue;
			}
			v = st->needs_idx[pos[u]++];
			if (v == NO_STEP || color[v] == 2)
				continue;
			if (color[v] == 0) {
				color[v] = 1;
				stack[sp++] = v;
				continue;
			}
			report_cycle(ld, p, aux[u].need_at[pos[u] - 1], stack, sp,
				     v);
		}
	}
	free(color);
	free(pos);
	free(stack);
}

static void load_steps(struct loader *ld, struct pipeline *p,
		       const struct ytree_node *root)
{
	const struct ytree_pair *pair = ytree_pair(root, "steps");
	const struct ytree_node *seq;
	struct step_aux *aux;

	if (!pair) {
		report(ld, root, "missing required key 'steps'");
		return;
	}
	seq = pair->value;
	if (seq->kind != YTREE_SEQUENCE) {
		report(ld, seq, "'steps' must be a sequence of steps, not %s",
		       ytree_describe(seq));
		return;
	}
	if (seq->n == 0 || seq->n > PIPELINE_STEPS_MAX) {
		report(ld, seq, "pipeline has %zu steps (it needs 1 to %d)",
		       seq->n, PIPELINE_STEPS_MAX);
		return;
	}
	p->n_steps = seq->n;
	p->steps = xcalloc(seq->n, sizeof(*p->steps));
	aux = xcalloc(seq->n, sizeof(*aux));
	for (size_t i = 0; i < seq->n; i++)
		load_step(ld, p, i, seq->items[i], aux);
	resolve_needs(ld, p, aux);
	find_cycles(ld, p, aux);
	for (size_t i = 0; i < seq->n; i++) {
		free(aux[i].need_at);
		free(aux[i].who);
		free(aux[i].where);
	}
	free(aux);
}

static void load_head(struct loader *ld, struct pipeline *p,
		      const struct ytree_node *root)
{
	struct strbuf err = STRBUF_INIT;
	const struct ytree_node *at;
	const char *text = ytree_get_text(&ld->e, root, "name", "", &at);

	if (!at)
		report(ld, root, "missing required key 'name'");
	else if (text && !is_name(text, PIPELINE_NAME_MAX, "_.-"))
		report(ld, at, "invalid pipeline name '%s' (use 1 to %d letters, "
			       "digits, '_', '.' or '-')", SHOW(text),
		       PIPELINE_NAME_MAX);
	else if (text)
		p->name = xstrdup(text);
	text = ytree_get_text(&ld->e, root, "description", "", &at);
	if (text)
		p->description = xstrdup(text);
	text = ytree_get_text(&ld->e, root, "schedule", "", &at);
	strbuf_init(&err);
	if (text && cron_parse(text, &p->schedule, &err) < 0)
		report(ld, at, "invalid schedule '%s': %s", SHOW(text), err.buf);
	else if (text)
		p->schedule_text = xstrdup(text);
	strbuf_release(&err);
}

/* Steps without a timeout of their own get their effective one. */
static void settle_timeouts(struct pipeline *p)
{
	for (size_t i = 0; i < p->n_steps; i++) {
		struct pipeline_step *st = &p->steps[i];

		if (st->timeout_text)
			continue;
		st->timeout_s = st->on_daemon ? PIPELINE_DAEMON_TIMEOUT_DEFAULT
					      : p->slurm.time_s;
	}
}

static void load_root(struct loader *ld, struct pipeline *p,
		      const struct ytree_node *root)
{
	const struct ytree_node *slurm = ytree_get(root, "slurm");

	if (root->kind != YTREE_MAPPING) {
		if (ytree_is_null(root))
			report(ld, root, "pipeline is empty (expected a mapping "
					 "with 'name' and 'steps')");
		else
			report(ld, root, "pipeline must be a mapping, not %s",
			       ytree_describe(root));
		return;
	}
	ytree_check_keys(&ld->e, root, top_keys, "");
	load_head(ld, p, root);
	p->slurm.nodes = PIPELINE_NODES_COUNT;
	p->slurm.node_count = 1;
	if (slurm)
		load_slurm(ld, &p->slurm, slurm);
	load_steps(ld, p, root);
	settle_timeouts(p);
}

struct pipeline *pipeline_load(const char *file, const char *text, size_t len,
			       const char *plugin_dir, struct strbuf *errors)
{
	struct loader ld = { .e = YTREE_ERRORS_INIT };
	struct pipeline *p = xcalloc(1, sizeof(*p));
	struct ytree_node *root;

	p->file = xstrdup(file);
	p->yaml = xmalloc(len + 1);
	memcpy(p->yaml, text, len);
	p->yaml[len] = '\0';
	p->yaml_len = len;
	root = ytree_parse(file, text, len, errors);
	if (!root)
		goto out_free;
	ld.pc = plugin_check_new(plugin_dir);
	load_root(&ld, p, root);
	plugin_check_free(ld.pc);
	ytree_free(root);
	ytree_errors_flush(&ld.e, file, errors);
	if (!ld.e.n) {
		ytree_errors_release(&ld.e);
		return p;
	}
	ytree_errors_release(&ld.e);
out_free:
	pipeline_free(p);
	return NULL;
}

/* Read all of standard input (at most YTREE_MAX_BYTES + 1 bytes). */
static int read_stdin(char **out, size_t *len)
{
	size_t cap = YTREE_MAX_BYTES + 2, got = 0;
	char *buf = xmalloc(cap);
	ssize_t n;

	while (got < cap - 1 && (n = read(0, buf + got, cap - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return -errno;
		}
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

struct pipeline *pipeline_load_file(const char *path, const char *plugin_dir,
				    struct strbuf *errors)
{
	bool is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? "<stdin>" : path;
	struct pipeline *p;
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (is_stdin)
		rc = read_stdin(&text, &len);
	else
		rc = util_read_file(path, YTREE_MAX_BYTES, &text, &len);
	if (rc == -EINVAL)
		strbuf_addf(errors, "%s: cannot read: not a regular file\n", name);
	else if (rc == -EFBIG || (rc == 0 && len > YTREE_MAX_BYTES))
		strbuf_addf(errors, "%s: cannot read: over the %d-byte limit\n",
			    name, YTREE_MAX_BYTES);
	else if (rc < 0)
		strbuf_addf(errors, "%s: cannot read: %s\n", name, strerror(-rc));
	if (rc < 0 || len > YTREE_MAX_BYTES) {
		free(text); /* NULL unless read from stdin */
		return NULL;
	}
	p = pipeline_load(name, text, len, plugin_dir, errors);
	free(text);
	return p;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void step_release(struct pipeline_step *st)
{
	free(st->id);
	free(st->plugin);
	free_strv(st->needs, st->n_needs);
	free(st->needs_idx);
	for (size_t i = 0; i < st->n_opts; i++) {
		free(st->opts[i].a);
		free(st->opts[i].b);
	}
	free(st->opts);
	free(st->timeout_text);
	free(st->pending_limit_text);
	free(st->program_option);
	pipeline_app_release(&st->app);
}

void pipeline_free(struct pipeline *p)
{
	struct pipeline_slurm *s;

	if (!p)
		return;
	s = &p->slurm;
	for (size_t i = 0; i < p->n_steps; i++)
		step_release(&p->steps[i]);
	free(p->steps);
	free(s->partition);
	free(s->gres);
	free(s->account);
	free(s->qos);
	free(s->constraint);
	free(s->time_text);
	free_strv(s->node_names, s->n_node_names);
	free(s->node_names_at);
	free(p->file);
	free(p->name);
	free(p->description);
	free(p->schedule_text);
	free(p->yaml);
	free(p);
}

const struct pipeline_step *pipeline_step_find(const struct pipeline *p,
					       const char *id)
{
	size_t i = step_index(p, id);

	return i == NO_STEP ? NULL : &p->steps[i];
}

int pipeline_topo_order(const struct pipeline *p, size_t *order)
{
	bool *done = xcalloc(p->n_steps, sizeof(*done));
	size_t n = 0;
	int rc = 0;

	while (n < p->n_steps && !rc) {
		size_t ready = NO_STEP;

		for (size_t i = 0; i < p->n_steps && ready == NO_STEP; i++) {
			const struct pipeline_step *st = &p->steps[i];
			bool ok = !done[i];

			for (size_t j = 0; ok && j < st->n_needs; j++)
				ok = st->needs_idx[j] == NO_STEP ||
				     done[st->needs_idx[j]];
			if (ok)
				ready = i;
		}
		if (ready == NO_STEP) {
			rc = -ELOOP;
		} else {
			done[ready] = true;
			order[n++] = ready;
		}
	}
	free(done);
	return rc;
}
