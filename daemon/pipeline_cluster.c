/* pipeline_cluster.c - see pipeline_cluster.h. */
#include "pipeline_cluster.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "yaml_tree.h"

/* Names listed in a message before "...". */
#define LIST_MAX 8

struct checker {
	const struct pipeline *p;
	const struct slurm_cluster *c;
	const struct slurm_part *part; /* the partition the jobs go to */
	struct ytree_errors e;
};

static void report_at(struct checker *ck, struct pipeline_pos at,
		      const char *fmt, ...) RL_PRINTF(3, 4);

static void report_at(struct checker *ck, struct pipeline_pos at,
		      const char *fmt, ...)
{
	struct ytree_node node = { .line = at.line ? at.line : 1,
				   .col = at.line ? at.col : 1 };
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	strbuf_init(&msg);
	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	ytree_error(&ck->e, &node, "%s", msg.buf);
	strbuf_release(&msg);
}

/* "a, b, c" (at most LIST_MAX, then ", ...") into out; "none" when n is 0. */
static void add_list(struct strbuf *out, char *const *names, size_t n)
{
	if (n == 0)
		strbuf_addstr(out, "none");
	for (size_t i = 0; i < n && i < LIST_MAX; i++)
		strbuf_addf(out, "%s%s", i ? ", " : "", names[i]);
	if (n > LIST_MAX)
		strbuf_addstr(out, ", ...");
}

/* Add name to the set names[0..*n) unless it is there; takes ownership. */
static void set_add(char ***names, size_t *n, char *name)
{
	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*names)[i], name) == 0) {
			free(name);
			return;
		}
	}
	*names = xrealloc(*names, (*n + 1) * sizeof(**names));
	(*names)[(*n)++] = name;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* ---- gres ------------------------------------------------------------------ */

static const struct slurm_node *node_find(const struct slurm_cluster *c,
					  const char *name)
{
	for (size_t i = 0; i < c->n_nodes; i++)
		if (strcmp(c->nodes[i].name, name) == 0)
			return &c->nodes[i];
	return NULL;
}

/* True when the node has want: that many of that name (of that type, when
 * one is asked for), summed over its items. */
static bool node_has(const struct slurm_node *node, const struct pipeline_gres *want)
{
	size_t n;
	struct pipeline_gres *have = pipeline_gres_parse(node->gres, &n);
	long total = 0;

	for (size_t i = 0; i < n; i++)
		if (strcmp(have[i].name, want->name) == 0 &&
		    (!want->type ||
		     (have[i].type && strcmp(have[i].type, want->type) == 0)))
			total += have[i].count;
	pipeline_gres_free(have, n);
	return total >= want->count;
}

/* How many nodes of the partition have every item of want[0..n). */
static size_t part_nodes_with(const struct checker *ck,
			      const struct pipeline_gres *want, size_t n)
{
	size_t found = 0;

	for (size_t i = 0; i < ck->part->n_nodes; i++) {
		const struct slurm_node *node = node_find(ck->c, ck->part->nodes[i]);
		bool all = node != NULL;

		for (size_t j = 0; all && j < n; j++)
			all = node_has(node, &want[j]);
		found += all;
	}
	return found;
}

/* The gres items of the given nodes (all of the cluster's when names is
 * NULL), as "NAME[:TYPE]:COUNT" (with_count) or "NAME", each once. */
static char **gres_seen(const struct checker *ck, char *const *names,
			size_t n_names, bool with_count, size_t *n)
{
	char **seen = NULL;
	size_t nodes = names ? n_names : ck->c->n_nodes;

	*n = 0;
	for (size_t i = 0; i < nodes; i++) {
		const struct slurm_node *node =
			names ? node_find(ck->c, names[i]) : &ck->c->nodes[i];
		struct pipeline_gres *items;
		size_t k;

		if (!node)
			continue;
		items = pipeline_gres_parse(node->gres, &k);
		for (size_t j = 0; j < k; j++)
			set_add(&seen, n, !with_count ? xstrdup(items[j].name)
				: items[j].type ? xasprintf("%s:%s:%ld", items[j].name,
							    items[j].type, items[j].count)
				: xasprintf("%s:%ld", items[j].name, items[j].count));
		pipeline_gres_free(items, k);
	}
	return seen;
}

static bool in_names(char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* Item i of the comma-separated text, as written.  Caller frees. */
static char *nth_item(const char *text, size_t i)
{
	for (; i > 0 && strchr(text, ','); i--)
		text = strchr(text, ',') + 1;
	return xstrndup(text, strcspn(text, ","));
}

/* Report the first item nobody has; true when there was one. */
static bool check_gres_items(struct checker *ck, const struct pipeline_gres *want,
			     size_t n, const char *text)
{
	const struct pipeline_slurm *s = &ck->p->slurm;
	struct strbuf list = STRBUF_INIT;
	size_t n_names, n_have;
	char **names = gres_seen(ck, NULL, 0, false, &n_names);
	char **have = gres_seen(ck, ck->part->nodes, ck->part->n_nodes, true,
				&n_have);
	bool bad = false;

	strbuf_init(&list);
	for (size_t i = 0; i < n && !bad; i++) {
		strbuf_reset(&list);
		if (!in_names(names, n_names, want[i].name)) {
			add_list(&list, names, n_names);
			report_at(ck, s->gres_at, "unknown gres '%s' in 'slurm' (gres "
				  "of the cluster's nodes: %s)", want[i].name,
				  list.buf);
			bad = true;
		} else if (part_nodes_with(ck, &want[i], 1) == 0) {
			char *item = nth_item(text, i);

			add_list(&list, have, n_have);
			report_at(ck, s->gres_at, "no node of partition '%s' has gres "
				  "'%s' (its nodes have: %s)", ck->part->name,
				  item, list.buf);
			free(item);
			bad = true;
		}
	}
	free_names(names, n_names);
	free_names(have, n_have);
	strbuf_release(&list);
	return bad;
}

static void check_gres(struct checker *ck)
{
	const struct pipeline_slurm *s = &ck->p->slurm;
	size_t n;
	struct pipeline_gres *want;

	if (!s->gres)
		return;
	want = pipeline_gres_parse(s->gres, &n);
	if (!check_gres_items(ck, want, n, s->gres) &&
	    part_nodes_with(ck, want, n) == 0)
		report_at(ck, s->gres_at, "no node of partition '%s' has all of "
			  "gres '%s'", ck->part->name, s->gres);
	pipeline_gres_free(want, n);
}

/* ---- time, nodes, partition ------------------------------------------------ */

static void check_time(struct checker *ck)
{
	const struct slurm_part *part = ck->part;
	bool slurm_time_reported = false;
	char limit[32];

	if (part->max_time_min < 0)
		return;
	if (part->max_time_min >= 24 * 60)
		snprintf(limit, sizeof(limit), "%ld-%02ld:%02ld:00",
			 part->max_time_min / (24 * 60),
			 part->max_time_min / 60 % 24, part->max_time_min % 60);
	else
		snprintf(limit, sizeof(limit), "%02ld:%02ld:00",
			 part->max_time_min / 60, part->max_time_min % 60);
	for (size_t i = 0; i < ck->p->n_steps; i++) {
		const struct pipeline_step *st = &ck->p->steps[i];
		/* Slurm gets whole minutes, rounded up (daemon/slurm.c) */
		long minutes = (st->timeout_s + 59) / 60;

		if (st->on_daemon || minutes <= part->max_time_min)
			continue;
		if (st->timeout_text) {
			report_at(ck, st->timeout_at, "timeout '%s' in step '%s' is "
				  "over the time limit of partition '%s' "
				  "(MaxTime=%s)", YTREE_SHOW(st->timeout_text),
				  st->id, part->name, limit);
		} else if (!slurm_time_reported) {
			report_at(ck, ck->p->slurm.time_at, "time '%s' in 'slurm' is "
				  "over the time limit of partition '%s' "
				  "(MaxTime=%s)",
				  YTREE_SHOW(ck->p->slurm.time_text), part->name,
				  limit);
			slurm_time_reported = true;
		}
	}
}

static void check_nodes(struct checker *ck)
{
	const struct pipeline_slurm *s = &ck->p->slurm;
	const struct slurm_part *part = ck->part;
	struct strbuf list = STRBUF_INIT;

	strbuf_init(&list);
	add_list(&list, part->nodes, part->n_nodes);
	if (s->nodes == PIPELINE_NODES_COUNT &&
	    (size_t)s->node_count > part->n_nodes)
		report_at(ck, s->nodes_at, "'nodes' in 'slurm' asks for %ld nodes, "
			  "but partition '%s' has %zu (%s)", s->node_count,
			  part->name, part->n_nodes, list.buf);
	for (size_t i = 0; s->nodes == PIPELINE_NODES_LIST && i < s->n_node_names;
	     i++)
		if (!in_names(part->nodes, part->n_nodes, s->node_names[i]))
			report_at(ck, s->node_names_at[i], "node '%s' in 'slurm' is "
				  "not in partition '%s' (its nodes: %s)",
				  s->node_names[i], part->name, list.buf);
	strbuf_release(&list);
}

/* The partition the jobs go to, or NULL (reported). */
static const struct slurm_part *find_partition(struct checker *ck)
{
	const struct pipeline *p = ck->p;
	const char *want = p->slurm.partition;
	char **names = xcalloc(ck->c->n_parts + 1, sizeof(*names));
	const struct slurm_part *found = NULL;
	struct strbuf list = STRBUF_INIT;
	const char *near;

	strbuf_init(&list);
	for (size_t i = 0; i < ck->c->n_parts; i++) {
		const struct slurm_part *pt = &ck->c->parts[i];

		names[i] = pt->name;
		if (want ? strcmp(pt->name, want) == 0 : pt->is_default)
			found = pt;
	}
	add_list(&list, names, ck->c->n_parts);
	near = want ? util_did_you_mean(want, (const char *const *)names) : NULL;
	if (!found && want && near)
		report_at(ck, p->slurm.partition_at, "unknown partition '%s' in "
			  "'slurm' (did you mean '%s'?)", YTREE_SHOW(want), near);
	else if (!found && want)
		report_at(ck, p->slurm.partition_at, "unknown partition '%s' in "
			  "'slurm' (the cluster's partitions: %s)",
			  YTREE_SHOW(want), list.buf);
	for (size_t i = 0; !found && !want && i < p->n_steps; i++) {
		if (p->steps[i].on_daemon)
			continue;
		report_at(ck, (struct pipeline_pos){ p->steps[i].line,
						     p->steps[i].col },
			  "step '%s' runs on Slurm, but 'slurm' names no partition "
			  "and the cluster has no default one (its partitions: %s)",
			  p->steps[i].id, list.buf);
		break;
	}
	strbuf_release(&list);
	free(names);
	return found;
}

static bool has_slurm_steps(const struct pipeline *p)
{
	for (size_t i = 0; i < p->n_steps; i++)
		if (!p->steps[i].on_daemon)
			return true;
	return false;
}

int pipeline_cluster_check(const struct pipeline *p,
			   const struct slurm_cluster *c,
			   struct strbuf *errors)
{
	struct checker ck = { .p = p, .c = c, .e = YTREE_ERRORS_INIT };
	int rc;

	if (!has_slurm_steps(p))
		return 0;
	ck.part = find_partition(&ck);
	if (ck.part) {
		check_gres(&ck);
		check_time(&ck);
		check_nodes(&ck);
	}
	ytree_errors_flush(&ck.e, p->file, errors);
	rc = ck.e.n ? -EINVAL : 0;
	ytree_errors_release(&ck.e);
	return rc;
}
