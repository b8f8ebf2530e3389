/*
 * adapt.c - the ncu plugin's targeted second pass: which rows, which
 * launches, which kernels, and the matching of the two passes (adapt.h).
 */
#include "ncu/adapt.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncu_value.h"

static bool selected(const struct ncu_table_row *const *sel, long n, const char *metric)
{
	for (long i = 0; i < n; i++)
		if (strcmp(sel[i]->metric, metric) == 0)
			return true;
	return false;
}

long adapt_rows(const struct ncu_table *t, const char *arch,
		const char *const *extra, size_t n_extra,
		const struct ncu_table_row ***out)
{
	const struct ncu_table_row **all = NULL, **sel = NULL, **rows = NULL;
	long n_all = ncu_table_select(t, arch, (const char *const[]){ "all" }, 1, &all);
	long n_sel = ncu_table_select(t, arch, extra, n_extra, &sel);
	long n = 0, paths = 0;

	*out = NULL;
	if (n_all < 0 || n_sel < 0 || !(rows = calloc((size_t)n_all + 1, sizeof(*rows)))) {
		n = -ENOMEM;
		goto out_free;
	}
	for (long i = 0; i < n_all; i++)
		if (ncu_table_is_datapath(all[i]->role) && !selected(sel, n_sel, all[i]->metric))
			rows[n++] = all[i];
	paths = n;
	for (long i = 0; paths && i < n_all; i++)
		if ((strcmp(all[i]->role, "tensor_inst_hfma2") == 0 ||
		     strcmp(all[i]->role, "passes") == 0) &&
		    !(strcmp(all[i]->role, "tensor_inst_hfma2") == 0 &&
		      selected(sel, n_sel, all[i]->metric)))
			rows[n++] = all[i];
	if (!paths)
		n = 0;
	*out = rows;
	rows = NULL;
out_free:
	free(rows);
	free(all);
	free(sel);
	return n;
}

long adapt_rows_set(const struct ncu_table *t, const char *arch, const char *set,
		    const struct ncu_table_row ***out)
{
	const struct ncu_table_row **sel = NULL, **rows;
	long n_sel = ncu_table_select(t, arch, (const char *const[]){ set }, 1, &sel);
	long n = 0;

	*out = NULL;
	if (n_sel < 0 || !(rows = calloc((size_t)n_sel + 1, sizeof(*rows)))) {
		free(sel);
		return -ENOMEM;
	}
	for (long i = 0; i < n_sel; i++)
		if (strcmp(sel[i]->set, set) == 0)
			rows[n++] = sel[i];
	for (long i = 0; n && i < n_sel; i++)
		if (strcmp(sel[i]->role, "passes") == 0)
			rows[n++] = sel[i];
	free(sel);
	*out = rows;
	return n;
}

long adapt_mark_names(const struct ncu_csv *t, const struct rl_strlist *re, bool *need,
		      char *err, size_t size)
{
	regex_t *rx = calloc(re->n + 1, sizeof(*rx));
	long marked = 0;
	size_t ok = 0;

	if (!rx)
		return -ENOMEM;
	for (; ok < re->n; ok++) {
		int rc = regcomp(&rx[ok], re->v[ok], REG_EXTENDED | REG_NOSUB);

		if (rc) {
			char why[128];

			regerror(rc, &rx[ok], why, sizeof(why));
			snprintf(err, size, "'%s': %s", re->v[ok], why);
			marked = -EINVAL;
			break;
		}
	}
	for (size_t i = 0; marked >= 0 && i < t->n_launches; i++) {
		need[i] = false;
		for (size_t k = 0; k < re->n && !need[i] && t->launches[i].kernel; k++)
			need[i] = regexec(&rx[k], t->launches[i].kernel, 0, NULL, 0) == 0;
		marked += need[i];
	}
	for (size_t k = 0; k < ok; k++)
		regfree(&rx[k]);
	free(rx);
	return marked;
}

static bool positive(const char *v)
{
	double x;

	return v && ncu_value_parse(v, &x) == 0 && x > 0;
}

size_t adapt_mark(const struct ncu_csv *t, const struct ncu_record_column *cols,
		  size_t ncols, bool *need)
{
	size_t marked = 0;

	for (size_t i = 0; i < t->n_launches; i++) {
		const char *const *v = t->launches[i].values;
		bool witness = false, counted = false;

		for (size_t k = 0; k < ncols; k++) {
			if (!cols[k].role || cols[k].slot == (size_t)-1)
				continue;
			if (strcmp(cols[k].role, "tensor_inst") == 0)
				witness = witness || positive(v[cols[k].slot]);
			else if (ncu_table_is_datapath(cols[k].role))
				counted = counted || positive(v[cols[k].slot]);
		}
		need[i] = witness && !counted;
		marked += need[i];
	}
	return marked;
}

char *adapt_regex_escape(const char *s, char *buf)
{
	char *p = buf;

	for (; *s; s++) {
		if (strchr("\\^$.|?*+()[]{}", *s))
			*p++ = '\\';
		*p++ = *s;
	}
	*p = '\0';
	return buf;
}

void adapt_list_release(struct rl_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int adapt_kernel_list(const struct ncu_csv *t, const bool *need,
		      struct rl_strlist *out)
{
	out->n = 0;
	out->v = calloc(t->n_launches + 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_launches; i++) {
		const char *name = t->launches[i].kernel;
		bool seen = false;
		char *re;

		if (!need[i] || !name)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = need[j] && t->launches[j].kernel &&
			       strcmp(t->launches[j].kernel, name) == 0;
		if (seen)
			continue;
		re = malloc(2 * strlen(name) + sizeof("^(void )?$"));
		if (!re) {
			adapt_list_release(out);
			return -ENOMEM;
		}
		/* ncu prints a template kernel's return type ("void f<1>(int)")
		 * but matches -k without it (seen on the H100): optional */
		if (strncmp(name, "void ", 5) == 0) {
			strcpy(re, "^(void )?");
			name += 5;
		} else {
			strcpy(re, "^");
		}
		adapt_regex_escape(name, re + strlen(re));
		strcat(re, "$");
		out->v[out->n++] = re;
	}
	return 0;
}

/* Which invocation of its kernel launch i of t is (0 for the first). */
static size_t occurrence(const struct ncu_csv *t, size_t i)
{
	size_t k = 0;

	for (size_t j = 0; j < i; j++)
		k += t->launches[j].kernel && t->launches[i].kernel &&
		     strcmp(t->launches[j].kernel, t->launches[i].kernel) == 0;
	return k;
}

long adapt_match(const struct ncu_csv *p1, size_t i, const struct ncu_csv *p2)
{
	const char *name = p1->launches[i].kernel;
	size_t want = occurrence(p1, i), k = 0;

	if (!name)
		return -1;
	for (size_t j = 0; j < p2->n_launches; j++) {
		if (!p2->launches[j].kernel || strcmp(p2->launches[j].kernel, name) != 0)
			continue;
		if (k++ == want)
			return (long)j;
	}
	return -1;
}
