/* html.c - see html.h. */
#include "html.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

static size_t esc_one(struct strbuf *sb, const unsigned char *p)
{
	size_t n = utf8_len(p);

	switch (*p) {
	case '&': strbuf_addstr(sb, "&amp;"); return 1;
	case '<': strbuf_addstr(sb, "&lt;"); return 1;
	case '>': strbuf_addstr(sb, "&gt;"); return 1;
	case '"': strbuf_addstr(sb, "&quot;"); return 1;
	case '\'': strbuf_addstr(sb, "&#39;"); return 1;
	default: break;
	}
	if (n == 0) {
		strbuf_addstr(sb, "\xef\xbf\xbd");
		return 1;
	}
	if (n == 1 && (*p < 0x20 || *p == 0x7f)) {
		strbuf_addch(sb, ' ');
		return 1;
	}
	strbuf_add(sb, p, n);
	return n;
}

void html_escape(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (p && *p)
		p += esc_one(sb, p);
}

size_t html_escape_char(struct strbuf *sb, const char *s)
{
	return esc_one(sb, (const unsigned char *)s);
}
