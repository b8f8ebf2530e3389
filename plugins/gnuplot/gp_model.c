/*
 * gp_model.c - the gnuplot plugin's model types' helpers.  See gp_model.h.
 */
#include <stdlib.h>
#include <string.h>

#include "gp_model.h"

const char *const gp_level_names[GP_N_LEVELS] = { "l1", "l2", "dram" };
const char *const gp_prec_names[GP_N_PRECS] = {
	"fp64", "fp32", "fp16", "tc_fp64", "tc_fp16", "tc_bf16", "tc_tf32", "tc_fp8",
	"tc_int8", "tensor", "all" };
const char *const gp_mode_names[GP_N_MODES] = {
	"auto", "roofline", "compare", "history", "fleet", "gpu_history", "trajectory" };

void *gp_push(void *base, size_t *n, size_t *cap, size_t size, const void *item)
{
	char *b = base;

	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;

		b = realloc(base, c * size);
		if (!b)
			return NULL;
		*cap = c;
	}
	memcpy(b + *n * size, item, size);
	(*n)++;
	return b;
}

size_t gp_strtab_index(struct gp_strtab *t, const char *s)
{
	char *copy, **v;

	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i], s) == 0)
			return i;
	copy = strdup(s);
	v = copy ? gp_push(t->v, &t->n, &t->cap, sizeof(char *), &copy) : NULL;
	if (!v) {
		free(copy);
		return GP_NONE;
	}
	t->v = v;
	return t->n - 1;
}

void gp_strtab_free(struct gp_strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
}

int gp_name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}
