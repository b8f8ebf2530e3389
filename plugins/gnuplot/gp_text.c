/*
 * gp_text.c - text for gnuplot: quoting, numbers, times.
 * See gp_text.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gp_text.h"

/* Length of the valid UTF-8 sequence at p (2-4 bytes), or 0. */
static int utf8_len(const unsigned char *p)
{
	int n = 0;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/*
 * Write s with control characters as spaces, invalid UTF-8 as '?', and each
 * byte found in `from` replaced by the string at the same index of `to`.
 */
static void put_clean(FILE *f, const char *s, const char *from,
		      const char *const *to)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = *p >= 0x80 ? utf8_len(p) : 1;
		const char *hit = *p < 0x80 ? strchr(from, *p) : NULL;

		if (n == 0) {
			fputc('?', f);
			n = 1;
		} else if (*p < 0x20 || *p == 0x7f) {
			fputc(' ', f);
		} else if (hit) {
			fputs(to[hit - from], f);
		} else {
			fwrite(p, 1, (size_t)n, f);
		}
		p += n;
	}
}

void gp_text_script_quote(FILE *f, const char *s)
{
	static const char *const to[] = { "''", "''" };

	fputc('\'', f);
	put_clean(f, s, "'`", to);
	fputc('\'', f);
}

void gp_text_data_quote(FILE *f, const char *s)
{
	static const char *const to[] = { "'", "/" };

	fputc('"', f);
	put_clean(f, s, "\"\\", to);
	fputc('"', f);
}

void gp_text_record_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\\': fputs("\\\\", f); break;
		case '\t': fputs("\\t", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		default: fputc(*s, f);
		}
	}
}

bool gp_text_parse_num(const char *s, double *out)
{
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	*out = strtod(s, &end);
	return !*end && !errno && isfinite(*out);
}

/* "+02", "-05:30", "+0530" at s into seconds east of UTC; the end or NULL. */
static const char *parse_zone(const char *s, double *east)
{
	int h = 0, m = 0, n = 0;
	int sign = *s == '-' ? -1 : 1;

	*east = 0;
	if (*s == 'Z')
		return s + 1;
	if (*s != '+' && *s != '-')
		return s;
	if (sscanf(s + 1, "%2d%n", &h, &n) != 1)
		return NULL;
	s += 1 + n;
	if (*s == ':')
		s++;
	if (sscanf(s, "%2d%n", &m, &n) == 1)
		s += n;
	*east = sign * (h * 3600.0 + m * 60.0);
	return s;
}

bool gp_text_parse_time(const char *s, double *out)
{
	struct tm tm = { 0 };
	double sec = 0, east;
	int n = 0;

	if (gp_text_parse_num(s, out))
		return true;
	if (!s || sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon,
			 &tm.tm_mday, &n) != 3)
		return false;
	s += n;
	if ((*s == 'T' || *s == ' ') &&
	    sscanf(s + 1, "%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &n) == 2) {
		s += 1 + n;
		if (*s == ':' && sscanf(s + 1, "%lf%n", &sec, &n) == 1)
			s += 1 + n;
	}
	s = parse_zone(s, &east);
	if (!s || *s || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*out = (double)timegm(&tm) + sec - east;
	return true;
}

void gp_text_rate(double value, const char *unit, char *out, size_t cap)
{
	static const char prefix[] = "GTP";
	double v = value / 1e9;
	int i = 0;

	while (i < 2 && v >= 1000) {
		v /= 1000;
		i++;
	}
	snprintf(out, cap, v < 10 ? "%.2f %c%s" : v < 100 ? "%.1f %c%s" : "%.0f %c%s",
		 v, prefix[i], unit);
}

void gp_text_plain(const char *s, char *out, size_t cap)
{
	size_t n = 0;

	for (; *s && n + 1 < cap; s++)
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr(" ._+-()", *s))
			out[n++] = *s;
	if (cap)
		out[n] = '\0';
}

void gp_text_roof_title(const char *name, char *out, size_t cap)
{
	static const char *const t[][2] = {
		{ "fp64_fma", "FP64 FMA" }, { "fp64_add", "FP64 no-FMA" },
		{ "fp32_fma", "FP32 FMA" }, { "fp32_add", "FP32 no-FMA" },
		{ "fp16_fma", "FP16 FMA" }, { "fp16_add", "FP16 no-FMA" },
		{ "tc_fp16", "Tensor FP16" }, { "tc_bf16", "Tensor BF16" },
		{ "tc_tf32", "Tensor TF32" }, { "tc_fp64", "Tensor FP64" },
		{ "tc_int8", "Tensor INT8" }, { "tc_fp8", "Tensor FP8" },
		{ "l1", "L1" }, { "shared", "Shared" }, { "l2", "L2" },
		{ "hbm_triad", "HBM" }, { "hbm_read", "HBM read" },
		{ "hbm_write", "HBM write" }, { "hbm", "HBM" }, { "dram", "DRAM" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(t[i][0], name) == 0) {
			snprintf(out, cap, "%s", t[i][1]);
			return;
		}
	}
	gp_text_plain(name, out, cap);
}
