/* site_page.c - see site_page.h. */
#include "site_page.h"

#include "html.h"

static const char css[] =
	"body{font:14px/1.45 system-ui,'DejaVu Sans',sans-serif;max-width:1100px;"
	"margin:0 auto;padding:0 16px 40px;color:#1a1a1a}h1{font-size:22px}"
	"h2{font-size:17px;border-bottom:1px solid #ccc;margin-top:26px}"
	"table{border-collapse:collapse;font-size:13px}th,td{padding:3px 8px;"
	"border-bottom:1px solid #e3e3e3;text-align:left}th{background:#f3f3f3}"
	"td.n{text-align:right}nav a{margin-right:14px}.note{color:#555}"
	".name{font-family:'DejaVu Sans Mono',monospace}tr.flag td{color:#a33f00;"
	"font-weight:600}.controls label{margin-right:12px}";

void site_page_begin(struct strbuf *sb, const char *title, const char *root,
		     const char *csp, const char *head)
{
	strbuf_addstr(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta http-equiv=\"Content-Security-Policy\" content=\"");
	strbuf_addstr(sb, csp);
	strbuf_addstr(sb, "\">\n<title>");
	html_escape(sb, title);
	strbuf_addf(sb, "</title>\n<style>%s</style>\n%s</head>\n<body>\n<nav>"
		    "<a href=\"%sindex.html\">Site index</a><a href=\"%sfleet.html\">Fleet</a>"
		    "<a href=\"%stonight.html\">Tonight</a></nav>\n<h1>", css, head ? head : "",
		    root, root, root);
	html_escape(sb, title);
	strbuf_addstr(sb, "</h1>\n");
}

void site_page_end(struct strbuf *sb)
{
	strbuf_addstr(sb, "</body>\n</html>\n");
}

void site_page_cell(struct strbuf *sb, const char *v, bool num)
{
	strbuf_addstr(sb, num ? "<td class=\"n\">" : "<td>");
	html_escape(sb, v);
	strbuf_addstr(sb, "</td>");
}
