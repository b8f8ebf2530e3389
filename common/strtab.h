/*
 * strtab.h - a set of strings, each kept once.
 *
 * A plugin that reads hundreds of thousands of records holding a few
 * thousand distinct names (GPU UUIDs, ceilings, models, kernels, levels)
 * keeps each name once: equal strings interned in one table are one
 * pointer, which sorts and lookups test before the characters
 * (strtab_cmp).  The table owns its strings until strtab_release.  Open
 * addressing with FNV-1a, grown at half full.  libc only; not thread-safe.
 */
#ifndef ROOFLINE_STRTAB_H
#define ROOFLINE_STRTAB_H

#include <stddef.h>
#include <string.h>

struct strtab {
	char **slot;
	size_t cap, n;
};

#define STRTAB_INIT { NULL, 0, 0 }

/* The table's copy of s, made on first sight; NULL when out of memory.
 * Owned by t: never freed by the caller. */
char *strtab_intern(struct strtab *t, const char *s);

/* Free every string of t and the table; t is empty again. */
void strtab_release(struct strtab *t);

/* strcmp of two strings of one table, or of none: equal ones are one
 * pointer there, so that equality costs no look at the characters. */
static inline int strtab_cmp(const char *a, const char *b)
{
	return a == b ? 0 : strcmp(a, b);
}

#endif
