/*
 * site.h - the facility site: static HTML under the configuration's
 * web_root, rebuilt after runs end by `rooflined --rebuild-site`, which the
 * daemon starts (site_child.h), from the database through the db layer.
 *
 *   index.html                 root's, 0644: the latest facility runs per
 *                              pipeline, the users with runs (links to
 *                              their pages), the fleet, reference kernels
 *   fleet.html                 the fleet tonight: the fleet_ceilings rows of
 *                              each pipeline's latest run that measured
 *                              ceilings (sql/008_fleet.sql)
 *   kernels/K<hash>.html       one reference kernel's history: every kernel
 *                              of a facility run, from kernel_trend
 *   runs/run-N.html            a facility run's report (copied from the
 *                              spool)
 *   users/NAME/index.html      NAME's latest runs per pipeline, and
 *   users/NAME/run-N.html      their reports, each the site's own page with
 *                              the user's HTML as the srcdoc of a sandboxed
 *                              iframe: root's, 0640 in a 0750 directory of
 *                              the web group (web_group), or NAME's 0600 in
 *                              root's 0711 without one (site_files.h)
 *   server/nginx.conf          what a web server must add for users/: a CSP
 *   server/apache.conf         `sandbox` header, no links followed
 *
 * Pages link to each other relatively, so the site works from file:// and
 * behind a web server (docs/report.md has nginx and Apache blocks that let
 * only NAME and staff read users/NAME/).  Each page is written atomically.
 * A report the site already wrote is not copied again.  The findings issue adds
 * its pages as one more builder in site.c's list of pages.
 */
#ifndef ROOFLINE_SITE_H
#define ROOFLINE_SITE_H

#include "config.h"
#include "db.h"

/* Rebuild the site under cfg->web_root (nothing when it is "").  Logs what
 * failed and goes on with the other pages; 0 or the first -errno. */
int site_rebuild(const struct config *cfg, struct db *db);

#endif
