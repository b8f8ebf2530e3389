/* rp_text.c - see rp_text.h. */
#include "rp_text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "html.h"

void rp_esc(struct strbuf *sb, const char *s)
{
	html_escape(sb, s);
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
