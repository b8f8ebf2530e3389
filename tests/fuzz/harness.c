/* harness.c - see harness.h. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = xmalloc(size + 1);

	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

size_t fuzz_lines(char *text, char **items, size_t max)
{
	size_t n = 0;
	char *p = text;

	while (p && n < max) {
		char *nl = strchr(p, '\n');

		items[n++] = p;
		if (nl)
			*nl++ = '\0';
		p = nl;
	}
	return n;
}
