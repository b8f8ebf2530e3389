/*
 * plugin_loader.h - find, open and verify plugins (include/rooflined/plugin.h).
 *
 * Verification order (Slurm's plugin_version / _verify_syms habit): the file
 * is a readable ELF shared object and not a program; dlopen(RTLD_NOW |
 * RTLD_LOCAL) succeeds; the symbol exists; the ABI number, read first, is
 * ours; the struct is not shorter than this host knows; the name equals the
 * file name; the stage is known; run is set; the option table is sound.
 * Every refusal reads "PATH: fault".
 */
#ifndef ROOFLINE_PLUGIN_LOADER_H
#define ROOFLINE_PLUGIN_LOADER_H

#include <stdbool.h>

#include "rooflined/plugin.h"
#include "strbuf.h"

struct plugin_handle {
	const struct rl_plugin *plugin; /* lives as long as the handle */
	char *path;                     /* owned */
	void *dl;                       /* dlopen handle, owned */
};

/* Open and verify the plugin file at path.  Returns a handle (caller closes
 * it with plugin_loader_close) or NULL with the reason appended to err. */
struct plugin_handle *plugin_loader_open(const char *path, struct strbuf *err);

/* Open plugin `name` from dir: the file is dir/<name>.so with '-' in name
 * read as '_' (so "ncu-import" is ncu_import.so).  NULL with err set. */
struct plugin_handle *plugin_loader_find(const char *dir, const char *name,
					 struct strbuf *err);

void plugin_loader_close(struct plugin_handle *h);

/* The plugin's history sets (NULL-terminated), or NULL when it declares
 * none or was built before the field existed. */
const char *const *plugin_history_sets(const struct rl_plugin *p);

/* "ceilings", "collect", ...; "?" for an unknown stage. */
const char *plugin_stage_name(enum rl_stage stage);

/* True when name is a valid plugin name ([a-z0-9_-]+, at most 64 chars). */
bool plugin_name_is_valid(const char *name);

#endif
