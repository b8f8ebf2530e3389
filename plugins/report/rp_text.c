/* rp_text.c - see rp_text.h. */
#include "rp_text.h"

#include <math.h>
#include <stdio.h>
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

void rp_esc(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (p && *p)
		p += esc_one(sb, p);
}

void rp_esc_short(struct strbuf *sb, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end;

	if (!s)
		return;
	if (strlen(s) <= max) {
		rp_esc(sb, s);
		return;
	}
	end = p + (max > 3 ? max - 3 : 0);
	while (*p && p < end)
		p += esc_one(sb, p);
	strbuf_addstr(sb, "...");
}

void rp_num(struct strbuf *sb, double v)
{
	double a = fabs(v);
	int digits;

	if (!isfinite(v)) {
		strbuf_addstr(sb, "n/a");
		return;
	}
	if (a == 0) {
		strbuf_addch(sb, '0');
		return;
	}
	if (a < 1e-3 || a >= 1e7) {
		strbuf_addf(sb, "%.3e", v);
		return;
	}
	digits = 3 - (int)floor(log10(a));
	if (digits < 0)
		digits = 0;
	strbuf_addf(sb, "%.*f", digits, v);
}

void rp_tick(struct strbuf *sb, int e)
{
	static const char *const pre[] = { "", "k", "M", "G", "T", "P" };

	if (e < 0)
		strbuf_addf(sb, "%.*f", -e, pow(10, e));
	else if (e / 3 < 6)
		strbuf_addf(sb, "%d%s", (int)pow(10, e % 3), pre[e / 3]);
	else
		strbuf_addf(sb, "1e%d", e);
}

void rp_giga(struct strbuf *sb, double v, const char *unit)
{
	static const char *const pre[] = { "G", "T", "P" };
	int i = 0;

	while (v >= 1000 && i < 2) {
		v /= 1000;
		i++;
	}
	strbuf_addf(sb, "%.3g %s%s", v, pre[i], unit);
}
