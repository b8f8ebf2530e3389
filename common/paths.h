/*
 * paths.h - where a program finds its plugins, migrations, data files and
 * sibling programs: the one place that knows the two layouts.
 *
 * Resolved from the running executable, so the build tree and an installed
 * tree both work without configuration and an installed tree can move
 * (make install PREFIX=... needs no rebuild):
 *
 *   what             build tree (SRC/build/V/bin/X)   installed (PREFIX/{bin,sbin}/X)
 *   plugins          SRC/build/V/plugins              PREFIX/lib/rooflined/plugins
 *   programs         SRC/build/V/bin/NAME             PREFIX/sbin/NAME
 *                                                     (roofline: PREFIX/bin)
 *   CUDA programs    SRC/build/V/bin                  PREFIX/lib/rooflined
 *   migrations       SRC/sql                          PREFIX/share/rooflined/sql
 *   data tables      SRC/etc                          PREFIX/share/rooflined/etc
 *
 * The build tree is recognised by SRC/build/V/plugins and SRC/sql both being
 * directories; anything else is an installed tree.  Environment variables
 * override: ROOFLINE_PLUGIN_DIR (plugins), ROOFLINE_SQL_DIR (migrations),
 * ROOFLINE_LIBEXEC (CUDA programs), ROOFLINE_ETC (data tables).
 *
 * Every function returns a string the caller frees.
 */
#ifndef ROOFLINE_PATHS_H
#define ROOFLINE_PATHS_H

#include <stdbool.h>

/* The directory of plugins (*.so). */
char *paths_plugin_dir(void);

/* The directory of the sql/ migrations. */
char *paths_sql_dir(void);

/* The absolute path of one of our programs ("roofline-job", "roofline",
 * "rooflined") in the layout the running program belongs to. */
char *paths_program(const char *name);

/* Set ROOFLINE_LIBEXEC and ROOFLINE_ETC in the environment when unset, so
 * plugins and their children see them.  Call once at start. */
void paths_export_defaults(void);

#endif
