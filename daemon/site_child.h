/*
 * site_child.h - the facility site rebuilt in a process of its own.
 *
 * When runs end the engine asks for a rebuild (site_child_request).  It is
 * made by `rooflined --rebuild-site [-c FILE]` (site.h's site_rebuild over
 * a connection of its own), started with fork and exec at once: the
 * daemon's loop does not wait on the site, and the rows its pages are made
 * of (at 4,000 GPUs, tonight's figures and every GPU's history: 115 MiB
 * at the peak) are never in the daemon's memory.  One rebuild at a time: a
 * request while one runs makes another due, started by site_child_poll
 * (every tick) once that one has ended.  The engine's reaper collects the
 * child (launch.c); its lines go to the daemon's log.
 */
#ifndef ROOFLINE_SITE_CHILD_H
#define ROOFLINE_SITE_CHILD_H

#include <stdbool.h>

#include "config.h"

/* The configuration file the child is to read (NULL: built-in defaults),
 * copied, and whether the daemon stays in the foreground (the child then
 * logs to stderr too, else to syslog).  Called once, at the start. */
void site_child_init(const char *config_path, bool foreground);

/* A rebuild is due; started now unless one runs.  Nothing when
 * cfg->web_root is "". */
void site_child_request(const struct config *cfg);

/* Start the due rebuild once the running one has ended. */
void site_child_poll(const struct config *cfg);

#endif
