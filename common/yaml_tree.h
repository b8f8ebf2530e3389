/*
 * yaml_tree.h - a YAML document as a small owned tree (the one file that
 * touches libyaml).
 *
 * The tree keeps what a validator needs to talk to a person: every node's
 * 1-based line and column, whether a scalar was written plain or quoted (so
 * `retries: ~` is null but `retries: "~"` is the string "~"), and a mapping's
 * key/value pairs in file order with duplicate keys kept, so the caller can
 * report them.  No type resolution happens here: every scalar is text.
 *
 * Refused, each with one "name:line:col: message" line in err: syntax
 * errors (libyaml's problem and mark), anchors and aliases (not needed, and
 * they make "billion laughs" documents possible), more than one document,
 * nesting deeper than YTREE_MAX_DEPTH, and input over YTREE_MAX_BYTES.
 */
#ifndef ROOFLINE_YAML_TREE_H
#define ROOFLINE_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

#define YTREE_MAX_BYTES (1024 * 1024)
#define YTREE_MAX_DEPTH 64

enum ytree_kind {
	YTREE_SCALAR = 1,
	YTREE_SEQUENCE,
	YTREE_MAPPING,
};

struct ytree_node;

struct ytree_pair {
	struct ytree_node *key;   /* usually a scalar, but any node */
	struct ytree_node *value;
};

struct ytree_node {
	enum ytree_kind kind;
	unsigned line, col;       /* 1-based position where the node starts */
	/* YTREE_SCALAR */
	char *text;               /* NUL-terminated, never NULL for a scalar */
	size_t len;               /* bytes of text (it may hold a "\0" escape) */
	bool quoted;              /* written quoted, as a block, or with a tag */
	/* YTREE_SEQUENCE: n items; YTREE_MAPPING: n pairs */
	size_t n;
	struct ytree_node **items;
	struct ytree_pair *pairs;
};

/*
 * Parse text (len bytes, need not be NUL-terminated) named `name` in
 * messages.  Returns the root node of the one document (caller frees with
 * ytree_free), or NULL with one "name:line:col: message\n" line appended to
 * err.  An empty stream (nothing but comments) gives an empty plain scalar at
 * 1:1, which ytree_is_null() recognises.
 */
struct ytree_node *ytree_parse(const char *name, const char *text, size_t len,
			       struct strbuf *err);

/* Free a tree from ytree_parse; NULL is fine. */
void ytree_free(struct ytree_node *node);

/* True for a plain scalar that YAML reads as null: "", "~", "null",
 * "Null" or "NULL". */
bool ytree_is_null(const struct ytree_node *node);

/* The value of the first pair of mapping map whose key is the scalar key, or
 * NULL (also when map is not a mapping).  Borrowed from the tree. */
const struct ytree_node *ytree_get(const struct ytree_node *map,
				   const char *key);

/* The first pair of mapping map whose key is the scalar key, or NULL. */
const struct ytree_pair *ytree_pair(const struct ytree_node *map,
				    const char *key);

/* The pair before pair i of map with the same scalar key (a duplicate key),
 * or NULL. */
const struct ytree_pair *ytree_earlier_key(const struct ytree_node *map,
					   size_t i);

/* "a scalar", "a sequence", "a mapping" (with article, for messages); a
 * scalar that ytree_is_null() reads as null is "null". */
const char *ytree_describe(const struct ytree_node *node);

/*
 * Checking a tree against a schema, reporting like a compiler.
 *
 * A reader collects every error it finds, each tied to the node it is about,
 * then flushes them sorted by position as "file:line:col: message" lines.
 * Messages say what failed first, quote the subject, have no final period;
 * `where` arguments are suffixes such as " in step 'profile'" (or "").
 */
struct ytree_error {
	unsigned line, col;
	size_t seq;
	char *msg;
};

struct ytree_errors {
	struct ytree_error *v;
	size_t n, alloc;
};

#define YTREE_ERRORS_INIT { NULL, 0, 0 }

/* Free the messages; e may be used again. */
void ytree_errors_release(struct ytree_errors *e);

/* Record an error about node at (NULL: 1:1).  Control characters in the
 * message are written as \xNN so that it stays one line. */
void ytree_error(struct ytree_errors *e, const struct ytree_node *at,
		 const char *fmt, ...) RL_PRINTF(3, 4);

/* Append each error as "file:line:col: message\n" to out, sorted by line,
 * column, then order of report. */
void ytree_errors_flush(const struct ytree_errors *e, const char *file,
			struct strbuf *out);

/* Report non-scalar keys, duplicate keys and, when known (NULL-terminated)
 * is given, keys not in it, with a did-you-mean. */
void ytree_check_keys(struct ytree_errors *e, const struct ytree_node *map,
		      const char *const *known, const char *where);

/* v's text when v is a non-null scalar without NUL characters; else report
 * "WHAT WHERE must be a scalar, not a mapping" (or "has no value", ...) and
 * return NULL.  Borrowed from the tree. */
const char *ytree_text(struct ytree_errors *e, const struct ytree_node *v,
		       const char *what, const char *where);

/* Text of map's `key` as ytree_text reads it (WHAT is "'key'"); *at gets the
 * value node, or NULL when the key is absent (then NULL is returned and
 * nothing reported). */
const char *ytree_get_text(struct ytree_errors *e, const struct ytree_node *map,
			   const char *key, const char *where,
			   const struct ytree_node **at);

/* s for a message: itself, or its first 60 bytes (whole characters) and
 * "..." in buf when longer than 64. */
const char *ytree_show(const char *s, char buf[72]);
#define YTREE_SHOW(s) ytree_show((s), (char[72]){ 0 })

#endif
