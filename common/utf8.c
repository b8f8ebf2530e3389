/* utf8.c - see utf8.h. */
#include "utf8.h"

#include <stdio.h>
#include <string.h>

size_t utf8_char_len(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned cp, min;
	size_t len;

	if (n == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2, cp = p[0] & 0x1f, min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3, cp = p[0] & 0x0f, min = 0x800;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4, cp = p[0] & 0x07, min = 0x10000;
	} else {
		return 0; /* a continuation byte, 0xc0/0xc1, 0xf5-0xff */
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool utf8_valid(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t n = utf8_char_len(s + i, len - i);

		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

size_t utf8_sanitize(char *dst, size_t size, const char *src)
{
	return utf8_escape(dst, size, src, 0);
}

size_t utf8_escape(char *dst, size_t size, const char *src, unsigned flags)
{
	size_t left = strlen(src), out = 0;
	char esc[8];

	while (left > 0) {
		const unsigned char c = (unsigned char)src[0];
		size_t n = utf8_char_len(src, left), take;
		const char *from = src;

		if ((flags & UTF8_ESCAPE_LINE) && (c == '\n' || c == '\t')) {
			snprintf(esc, sizeof(esc), "\\%c", c == '\n' ? 'n' : 't');
			from = esc, take = 2, n = 1;
		} else if (n == 0 || c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			from = esc, take = 4, n = 1;
		} else if (n == 2 && c == 0xc2 && (unsigned char)src[1] < 0xa0) {
			snprintf(esc, sizeof(esc), "\\u%04x",
				 (unsigned char)src[1]);
			from = esc, take = 6;
		} else {
			take = n;
		}
		if (out + take >= size)
			break;
		memcpy(dst + out, from, take);
		out += take;
		src += n;
		left -= n;
	}
	dst[out] = '\0';
	return out;
}
