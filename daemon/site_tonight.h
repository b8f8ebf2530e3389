/*
 * site_tonight.h - the facility site's "tonight" page (issue 27): the latest
 * facility fleet judgement at any size, flagged GPUs first.
 *
 *   tonight.html        root's: the flagged GPUs (a table that needs no
 *                       script), then the explorer (filters: model, node,
 *                       partition, ceiling, flagged only; sorting; a summary
 *                       per model and ceiling; pages of TONIGHT_PAGE_ROWS
 *                       rows) drawn by tonight.js from the page's JSON data
 *                       block; CSP SITE_TONIGHT_CSP (site_page.h)
 *   tonight.js          the explorer (daemon/site_tonight.js, embedded)
 *   gpus/G<hash>.html   one GPU's last TONIGHT_HISTORY_NIGHTS nights of each
 *                       ceiling (ceiling_series), linked from every row
 *
 * Source: rl_fleet_tonight() (sql/023_fleet_tonight.sql) of the newest
 * facility run whose fleet step succeeded, sequential figures only.  Size:
 * docs/fleet.md "Tonight at 8,000 GPUs" (the limit the browser test holds).
 */
#ifndef ROOFLINE_SITE_TONIGHT_H
#define ROOFLINE_SITE_TONIGHT_H

#include "db.h"
#include "site_files.h"
#include "strbuf.h"

#define TONIGHT_HISTORY_NIGHTS 30

/*
 * Write the pages above into the site's root (root_fd, borrowed), files
 * owned as o; append the index's section to index.  Logs what failed; 0 or
 * the first -errno (-EIO: a query failed).
 */
int site_tonight_build(struct db *db, int root_fd, const struct site_owner *o,
		       struct strbuf *index);

#endif
