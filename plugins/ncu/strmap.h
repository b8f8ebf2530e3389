/*
 * strmap.h - an open-addressing map from strings to indexes (libc only).
 *
 * Made for the CSV reader's lookups (metric name -> slot, launch ID ->
 * launch): keys are borrowed, never copied or freed, and must outlive the
 * map; a key is inserted once and never removed.  The map owns its arrays
 * only: strmap_release() frees them.
 */
#ifndef ROOFLINE_STRMAP_H
#define ROOFLINE_STRMAP_H

#include <stddef.h>

struct strmap {
	size_t cap; /* power of two */
	size_t n;
	const char **keys;
	size_t *vals;
};

/*
 * Make m empty with room for about `want` keys.  0 or -ENOMEM (then call
 * strmap_release() all the same).
 */
int strmap_init(struct strmap *m, size_t want);

/* Free m's arrays; m may be zeroed or half-initialised.  Idempotent. */
void strmap_release(struct strmap *m);

/* The value of key, or SIZE_MAX (<stdint.h>) when absent; m initialised. */
size_t strmap_get(const struct strmap *m, const char *key);

/* Insert key (borrowed) with val unless present (then val is ignored);
 * grows as needed.  0, or -ENOMEM. */
int strmap_put(struct strmap *m, const char *key, size_t val);

#endif
