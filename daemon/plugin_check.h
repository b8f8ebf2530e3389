/*
 * plugin_check.h - a pipeline step's plugin and its `with:` options, checked
 * against the plugin's option table (a part of pipeline_load, split out of
 * pipeline.c to keep both small).
 *
 * Each plugin is opened once per check, however many steps use it, and
 * closed by plugin_check_free: nothing of a plugin runs but its loader
 * checks.  Errors go to a struct ytree_errors, tied to the offending node.
 */
#ifndef ROOFLINE_PLUGIN_CHECK_H
#define ROOFLINE_PLUGIN_CHECK_H

#include "pipeline.h"
#include "yaml_tree.h"

struct plugin_check;

/* A checker that opens plugins from plugin_dir (borrowed; must outlive the
 * checker).  With NULL, plugin names and options are only checked for form
 * and recorded.  Caller frees with plugin_check_free. */
struct plugin_check *plugin_check_new(const char *plugin_dir);

void plugin_check_free(struct plugin_check *pc);

/*
 * Check step st's plugin `name` (written at plugin_at) and its options
 * (`with`, the pair from the step's mapping, or NULL), and append the
 * options to st->opts as key/value text in order, a list option's key once
 * per item.  Reports unknown plugins (with a did-you-mean over plugin_dir),
 * plugins the loader refuses (its message), unknown options (did-you-mean),
 * values of the wrong type, a list where a value is wanted and the reverse,
 * missing required options, paths that leave the run directory, and a
 * command whose program is an absolute path or climbs out with "..".
 * `where` is the step for messages, e.g. " in step 'profile'".
 */
void plugin_check_step(struct plugin_check *pc, struct ytree_errors *e,
		       struct pipeline_step *st, const char *name,
		       const struct ytree_node *plugin_at,
		       const struct ytree_pair *with, const char *where);

#endif
