/*
 * strmap.c - string -> index map with linear probing (see strmap.h).
 *
 * FNV-1a hashes; the table is kept at most half full, so probes stay short.
 */
#include "strmap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

int strmap_init(struct strmap *m, size_t want)
{
	size_t cap = 16;

	while (cap < want * 2)
		cap *= 2;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = calloc(cap, sizeof(*m->vals));
	if (!m->keys || !m->vals)
		return -ENOMEM;
	m->cap = cap;
	m->n = 0;
	return 0;
}

void strmap_release(struct strmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
}

size_t strmap_get(const struct strmap *m, const char *key)
{
	size_t i = (size_t)hash_str(key) & (m->cap - 1);

	while (m->keys[i]) {
		if (strcmp(m->keys[i], key) == 0)
			return m->vals[i];
		i = (i + 1) & (m->cap - 1);
	}
	return SIZE_MAX;
}

int strmap_put(struct strmap *m, const char *key, size_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		struct strmap bigger;
		size_t j;

		if (strmap_init(&bigger, m->cap) < 0) {
			strmap_release(&bigger);
			return -ENOMEM;
		}
		for (j = 0; j < m->cap; j++)
			if (m->keys[j])
				strmap_put(&bigger, m->keys[j], m->vals[j]);
		strmap_release(m);
		*m = bigger;
	}
	i = (size_t)hash_str(key) & (m->cap - 1);
	while (m->keys[i]) {
		if (strcmp(m->keys[i], key) == 0)
			return 0;
		i = (i + 1) & (m->cap - 1);
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}
