/*
 * rp_html.h - the run report: one self-contained HTML page.
 *
 * Sections, in order (each a <section id=...> the tests look for): the
 * run's metadata (header), `chart` (rp_svg and the kernel key), `kernels`
 * (the table, sortable by column with a few lines of plain JavaScript),
 * `advice` (rp_advice), `baseline` (the previous run of the pipeline, when
 * the daemon named one), `ceilings` (measured beside theoretical), `steps`
 * (the run's step instances, Slurm job ids) and `files` (links to the raw
 * CSV and the records).  CSS is inline; nothing is fetched.
 *
 * Links are relative to the report's own directory, so the page works from
 * file:// and behind a web server alike (docs/report.md).
 */
#ifndef ROOFLINE_RP_HTML_H
#define ROOFLINE_RP_HTML_H

#include "rp_model.h"
#include "strbuf.h"

/* A link the page offers: text and target path, relative to the page. */
struct rp_link {
	const char *text;
	const char *href;
};

struct rp_page {
	const struct rp_model *m;
	const char *title;        /* NULL: "Roofline report: run N" */
	int width, height;        /* chart size */
	const struct rp_link *links;
	size_t nlinks;
	const char *generated;    /* when, as text */
};

/* Append the whole page to sb. */
void rp_html_page(struct strbuf *sb, const struct rp_page *p);

/* Append path percent-encoded for an href (then HTML-escaped). */
void rp_html_href(struct strbuf *sb, const char *path);

#endif
