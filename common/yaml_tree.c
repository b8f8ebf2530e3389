/* yaml_tree.c - see yaml_tree.h.  The only file that includes <yaml.h>. */
#include "yaml_tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util.h"

struct builder {
	yaml_parser_t parser;
	const char *name;
	const char *text;
	size_t len;
	struct strbuf *err;
};

/* Line and column (1-based) of a byte offset, for reader errors, which
 * libyaml reports as an offset rather than a mark. */
static void offset_position(const struct builder *b, size_t offset,
			    unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < offset && i < b->len; i++) {
		if (b->text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)b->text[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

/* The byte at a 0-based line and character column, or 0. */
static char char_at(const struct builder *b, size_t line, size_t col)
{
	size_t i = 0;

	for (; line > 0 && i < b->len; i++)
		if (b->text[i] == '\n')
			line--;
	for (; i < b->len && b->text[i] != '\n'; i++) {
		if (((unsigned char)b->text[i] & 0xc0) == 0x80)
			continue;
		if (col-- == 0)
			return b->text[i];
	}
	return 0;
}

static void report_at(struct builder *b, yaml_mark_t mark, const char *what)
{
	strbuf_addf(b->err, "%s:%zu:%zu: %s\n", b->name, mark.line + 1,
		    mark.column + 1, what);
}

static void report_parser_error(struct builder *b)
{
	const yaml_parser_t *p = &b->parser;
	const char *problem = p->problem ? p->problem : "unknown error";
	unsigned line, col;

	if (p->error == YAML_MEMORY_ERROR) {
		strbuf_addf(b->err, "%s:1:1: out of memory parsing YAML\n",
			    b->name);
		return;
	}
	if (p->error == YAML_READER_ERROR) {
		offset_position(b, p->problem_offset, &line, &col);
		strbuf_addf(b->err, "%s:%u:%u: invalid YAML: %s\n", b->name,
			    line, col, problem);
		return;
	}
	strbuf_addf(b->err, "%s:%zu:%zu: invalid YAML: %s", b->name,
		    p->problem_mark.line + 1, p->problem_mark.column + 1,
		    problem);
	if (p->context)
		strbuf_addf(b->err, " (%s at %zu:%zu)", p->context,
			    p->context_mark.line + 1, p->context_mark.column + 1);
	if (char_at(b, p->problem_mark.line, p->problem_mark.column) == '\t')
		strbuf_addstr(b->err, " (a tab: YAML indents with spaces)");
	strbuf_addch(b->err, '\n');
}

/* Fetch the next event into ev (caller deletes it).  0, or -1 reported. */
static int next_event(struct builder *b, yaml_event_t *ev)
{
	if (yaml_parser_parse(&b->parser, ev))
		return 0;
	report_parser_error(b);
	return -1;
}

static struct ytree_node *node_new(enum ytree_kind kind,
				   const yaml_event_t *ev)
{
	struct ytree_node *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->line = (unsigned)ev->start_mark.line + 1;
	n->col = (unsigned)ev->start_mark.column + 1;
	return n;
}

static struct ytree_node *build_node(struct builder *b, const yaml_event_t *ev,
				     unsigned depth);

/* Read items until SEQUENCE_END into seq.  0 or -1 (reported). */
static int build_sequence(struct builder *b, struct ytree_node *seq,
			  unsigned depth)
{
	size_t alloc = 0;

	for (;;) {
		yaml_event_t ev;
		struct ytree_node *item;

		if (next_event(b, &ev) < 0)
			return -1;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		item = build_node(b, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (!item)
			return -1;
		if (seq->n == alloc) {
			alloc = alloc ? 2 * alloc : 4;
			seq->items = xrealloc(seq->items,
					      alloc * sizeof(*seq->items));
		}
		seq->items[seq->n++] = item;
	}
}

/* Build the node that starts with the next event; NULL reported. */
static struct ytree_node *build_next(struct builder *b, unsigned depth)
{
	struct ytree_node *n;
	yaml_event_t ev;

	if (next_event(b, &ev) < 0)
		return NULL;
	n = build_node(b, &ev, depth);
	yaml_event_delete(&ev);
	return n;
}

/* Read key/value pairs until MAPPING_END into map.  0 or -1 (reported). */
static int build_mapping(struct builder *b, struct ytree_node *map,
			 unsigned depth)
{
	size_t alloc = 0;

	for (;;) {
		struct ytree_pair pair;
		yaml_event_t ev;

		if (next_event(b, &ev) < 0)
			return -1;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		pair.key = build_node(b, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (!pair.key)
			return -1;
		pair.value = build_next(b, depth + 1);
		if (!pair.value) {
			ytree_free(pair.key);
			return -1;
		}
		if (map->n == alloc) {
			alloc = alloc ? 2 * alloc : 4;
			map->pairs = xrealloc(map->pairs,
					      alloc * sizeof(*map->pairs));
		}
		map->pairs[map->n++] = pair;
	}
}

static struct ytree_node *build_scalar(const yaml_event_t *ev)
{
	struct ytree_node *n = node_new(YTREE_SCALAR, ev);

	n->len = ev->data.scalar.length;
	n->text = xmalloc(n->len + 1);
	memcpy(n->text, ev->data.scalar.value, n->len);
	n->text[n->len] = '\0';
	/* plain_implicit is set only for a plain scalar without a tag */
	n->quoted = !ev->data.scalar.plain_implicit;
	return n;
}

static const unsigned char *event_anchor(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT: return ev->data.scalar.anchor;
	case YAML_SEQUENCE_START_EVENT: return ev->data.sequence_start.anchor;
	case YAML_MAPPING_START_EVENT: return ev->data.mapping_start.anchor;
	default: return NULL;
	}
}

/* Build the node that ev starts (ev stays the caller's); NULL reported. */
static struct ytree_node *build_node(struct builder *b, const yaml_event_t *ev,
				     unsigned depth)
{
	struct ytree_node *n;
	int rc;

	if (ev->type == YAML_ALIAS_EVENT) {
		report_at(b, ev->start_mark, "YAML aliases (*name) are not supported");
		return NULL;
	}
	if (event_anchor(ev)) {
		report_at(b, ev->start_mark, "YAML anchors (&name) are not supported");
		return NULL;
	}
	if (ev->type == YAML_SCALAR_EVENT)
		return build_scalar(ev);
	if (depth >= YTREE_MAX_DEPTH) {
		strbuf_addf(b->err, "%s:%zu:%zu: YAML nested deeper than %d levels\n",
			    b->name, ev->start_mark.line + 1,
			    ev->start_mark.column + 1, YTREE_MAX_DEPTH);
		return NULL;
	}
	if (ev->type == YAML_SEQUENCE_START_EVENT) {
		n = node_new(YTREE_SEQUENCE, ev);
		rc = build_sequence(b, n, depth);
	} else if (ev->type == YAML_MAPPING_START_EVENT) {
		n = node_new(YTREE_MAPPING, ev);
		rc = build_mapping(b, n, depth);
	} else {
		report_at(b, ev->start_mark, "unexpected YAML event");
		return NULL;
	}
	if (rc < 0) {
		ytree_free(n);
		return NULL;
	}
	return n;
}

static struct ytree_node *empty_document(void)
{
	struct ytree_node *n = xcalloc(1, sizeof(*n));

	n->kind = YTREE_SCALAR;
	n->line = n->col = 1;
	n->text = xstrdup("");
	return n;
}

/* After the first document: expect the end of the stream. 0 or -1. */
static int expect_stream_end(struct builder *b)
{
	yaml_event_t ev;
	int rc = 0;

	if (next_event(b, &ev) < 0)
		return -1;
	if (ev.type != YAML_STREAM_END_EVENT) {
		report_at(b, ev.start_mark,
			  "more than one YAML document ('---') in one file");
		rc = -1;
	}
	yaml_event_delete(&ev);
	return rc;
}

/* Read DOCUMENT_START .. DOCUMENT_END STREAM_END; the root or NULL. */
static struct ytree_node *build_stream(struct builder *b)
{
	struct ytree_node *root = NULL;
	yaml_event_t ev;
	int type;

	if (next_event(b, &ev) < 0) /* STREAM_START */
		return NULL;
	yaml_event_delete(&ev);
	if (next_event(b, &ev) < 0)
		return NULL;
	type = ev.type;
	yaml_event_delete(&ev);
	if (type == YAML_STREAM_END_EVENT)
		return empty_document();
	root = build_next(b, 0);
	if (!root)
		return NULL;
	if (next_event(b, &ev) < 0) /* DOCUMENT_END */
		goto out_free_root;
	yaml_event_delete(&ev);
	if (expect_stream_end(b) < 0)
		goto out_free_root;
	return root;
out_free_root:
	ytree_free(root);
	return NULL;
}

struct ytree_node *ytree_parse(const char *name, const char *text, size_t len,
			       struct strbuf *err)
{
	struct builder b = { .name = name, .text = text, .len = len, .err = err };
	struct ytree_node *root;

	if (len > YTREE_MAX_BYTES) {
		strbuf_addf(err, "%s:1:1: file is %zu bytes, over the %d-byte limit\n",
			    name, len, YTREE_MAX_BYTES);
		return NULL;
	}
	if (!yaml_parser_initialize(&b.parser)) {
		strbuf_addf(err, "%s:1:1: out of memory parsing YAML\n", name);
		return NULL;
	}
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
	root = build_stream(&b);
	yaml_parser_delete(&b.parser);
	return root;
}

void ytree_free(struct ytree_node *node)
{
	if (!node)
		return;
	for (size_t i = 0; node->kind == YTREE_SEQUENCE && i < node->n; i++)
		ytree_free(node->items[i]);
	for (size_t i = 0; node->kind == YTREE_MAPPING && i < node->n; i++) {
		ytree_free(node->pairs[i].key);
		ytree_free(node->pairs[i].value);
	}
	free(node->items);
	free(node->pairs);
	free(node->text);
	free(node);
}

bool ytree_is_null(const struct ytree_node *node)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };

	if (!node || node->kind != YTREE_SCALAR || node->quoted)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(nulls); i++)
		if (strcmp(node->text, nulls[i]) == 0)
			return true;
	return false;
}

const struct ytree_pair *ytree_pair(const struct ytree_node *map,
				    const char *key)
{
	for (size_t i = 0; map && map->kind == YTREE_MAPPING && i < map->n; i++) {
		const struct ytree_node *k = map->pairs[i].key;

		if (k->kind == YTREE_SCALAR && strcmp(k->text, key) == 0)
			return &map->pairs[i];
	}
	return NULL;
}

const struct ytree_node *ytree_get(const struct ytree_node *map,
				   const char *key)
{
	const struct ytree_pair *pair = ytree_pair(map, key);

	return pair ? pair->value : NULL;
}

const struct ytree_pair *ytree_earlier_key(const struct ytree_node *map,
					   size_t i)
{
	const struct ytree_node *k = map->pairs[i].key;

	for (size_t j = 0; j < i && k->kind == YTREE_SCALAR; j++) {
		const struct ytree_node *e = map->pairs[j].key;

		if (e->kind == YTREE_SCALAR && strcmp(e->text, k->text) == 0)
			return &map->pairs[j];
	}
	return NULL;
}

const char *ytree_describe(const struct ytree_node *node)
{
	switch (node->kind) {
	case YTREE_SCALAR: return ytree_is_null(node) ? "null" : "a scalar";
	case YTREE_SEQUENCE: return "a sequence";
	case YTREE_MAPPING: return "a mapping";
	}
	return "?";
}

/* ---- schema checking ------------------------------------------------------ */

void ytree_errors_release(struct ytree_errors *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i].msg);
	free(e->v);
	e->v = NULL;
	e->n = e->alloc = 0;
}

void ytree_error(struct ytree_errors *e, const struct ytree_node *at,
		 const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT, clean = STRBUF_INIT;
	struct ytree_error *d;
	va_list ap;

	strbuf_init(&sb);
	strbuf_init(&clean);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	for (const char *c = sb.buf; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			strbuf_addf(&clean, "\\x%02x", (unsigned char)*c);
		else
			strbuf_addch(&clean, *c);
	}
	if (e->n == e->alloc) {
		e->alloc = e->alloc ? 2 * e->alloc : 8;
		e->v = xrealloc(e->v, e->alloc * sizeof(*e->v));
	}
	d = &e->v[e->n];
	d->line = at ? at->line : 1;
	d->col = at ? at->col : 1;
	d->seq = e->n++;
	d->msg = strbuf_detach(&clean);
	strbuf_release(&sb);
}

static int error_cmp(const void *a, const void *b)
{
	const struct ytree_error *x = *(const struct ytree_error *const *)a;
	const struct ytree_error *y = *(const struct ytree_error *const *)b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void ytree_errors_flush(const struct ytree_errors *e, const char *file,
			struct strbuf *out)
{
	const struct ytree_error **sorted = xcalloc(e->n, sizeof(*sorted));

	for (size_t i = 0; i < e->n; i++)
		sorted[i] = &e->v[i];
	qsort(sorted, e->n, sizeof(*sorted), error_cmp);
	for (size_t i = 0; i < e->n; i++)
		strbuf_addf(out, "%s:%u:%u: %s\n", file, sorted[i]->line,
			    sorted[i]->col, sorted[i]->msg);
	free(sorted);
}

static bool in_list(const char *const *list, const char *word)
{
	for (; *list; list++)
		if (strcmp(*list, word) == 0)
			return true;
	return false;
}

void ytree_check_keys(struct ytree_errors *e, const struct ytree_node *map,
		      const char *const *known, const char *where)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct ytree_node *k = map->pairs[i].key;
		const struct ytree_pair *first = ytree_earlier_key(map, i);
		const char *near;

		if (k->kind != YTREE_SCALAR) {
			ytree_error(e, k, "key%s must be a scalar, not %s", where,
				    ytree_describe(k));
		} else if (first) {
			ytree_error(e, k, "duplicate key '%s'%s (first at %u:%u)",
				    YTREE_SHOW(k->text), where, first->key->line,
				    first->key->col);
		} else if (known && !in_list(known, k->text)) {
			near = util_did_you_mean(k->text, known);
			ytree_error(e, k, "unknown key '%s'%s%s%s%s",
				    YTREE_SHOW(k->text), where,
				    near ? " (did you mean '" : "",
				    near ? near : "", near ? "'?)" : "");
		}
	}
}

const char *ytree_text(struct ytree_errors *e, const struct ytree_node *v,
		       const char *what, const char *where)
{
	if (v->kind != YTREE_SCALAR) {
		ytree_error(e, v, "%s%s must be a scalar, not %s", what, where,
			    ytree_describe(v));
		return NULL;
	}
	if (ytree_is_null(v)) {
		ytree_error(e, v, "%s%s has no value", what, where);
		return NULL;
	}
	if (strlen(v->text) != v->len) {
		ytree_error(e, v, "%s%s contains a NUL character", what, where);
		return NULL;
	}
	return v->text;
}

const char *ytree_get_text(struct ytree_errors *e, const struct ytree_node *map,
			   const char *key, const char *where,
			   const struct ytree_node **at)
{
	const struct ytree_pair *pair = ytree_pair(map, key);
	char what[80];

	*at = pair ? pair->value : NULL;
	if (!pair)
		return NULL;
	snprintf(what, sizeof(what), "'%s'", key);
	return ytree_text(e, pair->value, what, where);
}

const char *ytree_show(const char *s, char buf[72])
{
	size_t n = strlen(s);

	if (n <= 64)
		return s;
	n = 60;
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	memcpy(buf, s, n);
	strcpy(buf + n, "...");
	return buf;
}
