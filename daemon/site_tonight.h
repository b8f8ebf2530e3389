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
 * The pages' rows (the fleet's judgement, then its GPUs' nights: 2-4 s of
 * the server's at 8,000 GPUs) read on a session of their own, opened with
 * conninfo (borrowed; the caller's configuration's database), by a thread,
 * while the caller builds the rest of the site.  NULL when no thread could
 * start (logged): site_tonight_build then reads them itself, as it does
 * when the session could not be opened.  Owned by the caller until passed
 * to site_tonight_build() or site_tonight_prefetch_cancel(), which wait for
 * the thread and free it.
 */
struct site_tonight_prefetch;
struct site_tonight_prefetch *site_tonight_prefetch(const char *conninfo);
void site_tonight_prefetch_cancel(struct site_tonight_prefetch *p);

/*
 * Write the pages above into the site's root (root_fd, borrowed), files
 * owned as o; append the index's section to index.  The rows are pre's
 * (taken: freed here; NULL or not connected: read on db).  Logs what
 * failed; 0 or the first -errno (-EIO: a query failed).
 */
int site_tonight_build(struct db *db, struct site_tonight_prefetch *pre,
		       int root_fd, const struct site_owner *o, struct strbuf *index);

#endif
