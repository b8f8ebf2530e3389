/*
 * site_page.h - the facility site's page frame: head (CSP, style, the
 * navigation), end, table cells.  Used by site.c and site_tonight.c; libc
 * and common/ only (html.h, strbuf.h).
 */
#ifndef ROOFLINE_SITE_PAGE_H
#define ROOFLINE_SITE_PAGE_H

#include <stdbool.h>

#include "strbuf.h"

/* Every page of the site runs no script ... */
#define SITE_PAGE_CSP "script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'"
/* ... but tonight.html, which runs the site's own tonight.js (root's file
 * beside it) and nothing else: no inline script, no other origin. */
#define SITE_TONIGHT_CSP "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; " \
	"img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'"

/* Append the top of a page to sb: title escaped, root the relative path back
 * to the site's root ("", "../"), csp the page's policy (one of the above),
 * head extra text put in <head> as it is (NULL: none; the caller's own
 * constant markup). */
void site_page_begin(struct strbuf *sb, const char *title, const char *root,
		     const char *csp, const char *head);

/* Append the end of a page. */
void site_page_end(struct strbuf *sb);

/* Append one <td> with v escaped; num: right-aligned. */
void site_page_cell(struct strbuf *sb, const char *v, bool num);

#endif
