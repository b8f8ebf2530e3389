/*
 * options.h - a plugin's option table as data (after Fluent Bit's config_map).
 *
 * The host fills a plugin's config struct from (key, value) text pairs: each
 * pair is checked against the table (unknown keys are errors, with a
 * did-you-mean), converted to the field's C type and stored at its offset.
 * A list option takes one item per options_set call.  options_finish applies
 * the defaults of the keys never set and checks the required ones.
 *
 * Error messages are appended to err without a location: the caller (YAML
 * loader, roofline-job) knows where the value came from and prefixes it.
 */
#ifndef ROOFLINE_OPTIONS_H
#define ROOFLINE_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include "rooflined/plugin.h"
#include "strbuf.h"

struct options {
	const struct rl_plugin *plugin; /* borrowed */
	void *config;                   /* config_size bytes, owned */
	bool *is_set;                   /* one per table entry, owned */
	size_t count;                   /* table entries */
};

/* Check a plugin's table: known types, no duplicate or empty keys, fields
 * inside config_size, parseable defaults.  0, or -EINVAL with "path: why". */
int options_table_check(const struct rl_plugin *p, const char *path,
			struct strbuf *err);

/* The table entry for key, or NULL. */
const struct rl_option *options_find(const struct rl_plugin *p,
				     const char *key);

/* True for options that take a YAML sequence (RL_OPT_LIST, RL_OPT_COMMAND). */
bool options_is_list(const struct rl_option *opt);

/* True for options that name a program the plugin runs, or steer it
 * (RL_OPT_PROGRAM, and every RL_OPT_COMMAND): what a user's daemon-side
 * step may not set (daemon/step_policy.h). */
bool options_names_program(const struct rl_option *opt);

/* A zeroed config for p.  Caller frees with options_free. */
struct options *options_new(const struct rl_plugin *p);

/* Set key to value (append for lists).  0, or -EINVAL with err. */
int options_set(struct options *o, const char *key, const char *value,
		struct strbuf *err);

/* Apply defaults and check required keys.  0, or -EINVAL with err. */
int options_finish(struct options *o, struct strbuf *err);

void options_free(struct options *o);

/* Print the table as `--help` text, one option per line. */
void options_print_help(FILE *out, const struct rl_plugin *p);

/* "string", "int", ... (the type without RL_OPT_PROGRAM) */
const char *options_type_name(enum rl_opt_type type);

#endif
