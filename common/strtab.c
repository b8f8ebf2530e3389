/* strtab.c - see strtab.h. */
#include "strtab.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t hash(const char *s)
{
	uint64_t h = 14695981039346656037u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* The free slot or s's slot in a table of cap (a power of two) slots. */
static size_t find(char *const *slot, size_t cap, const char *s)
{
	size_t i = (size_t)hash(s) & (cap - 1);

	while (slot[i] && strcmp(slot[i], s))
		i = (i + 1) & (cap - 1);
	return i;
}

static int grow(struct strtab *t)
{
	size_t cap = t->cap ? 2 * t->cap : 1024;
	char **slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -1;
	for (size_t k = 0; k < t->cap; k++)
		if (t->slot[k])
			slot[find(slot, cap, t->slot[k])] = t->slot[k];
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

char *strtab_intern(struct strtab *t, const char *s)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap && grow(t) < 0)
		return NULL;
	i = find(t->slot, t->cap, s);
	if (!t->slot[i]) {
		t->slot[i] = strdup(s);
		if (!t->slot[i])
			return NULL;
		t->n++;
	}
	return t->slot[i];
}

void strtab_release(struct strtab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slot[i]);
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
}
