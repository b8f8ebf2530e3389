/* perturb.c - see perturb.h. */
#include "perturb.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_one(const char *item, struct perturb_rule *r, char *err,
		     size_t errsize)
{
	char change[32], extra[2];
	char *end;
	double pct;

	memset(r, 0, sizeof(*r));
	snprintf(r->text, sizeof(r->text), "%s", item);
	if (sscanf(item, "%127s %95s %31s %1s", r->kernel, r->metrics, change,
		   extra) != 3) {
		snprintf(err, errsize, "perturb '%s': expected KERNEL METRICS "
			 "+N%% or -N%% (e.g. \"kernel_C* dram__bytes.* +60%%\")", item);
		return -EINVAL;
	}
	pct = strtod(change, &end);
	if ((change[0] != '+' && change[0] != '-') || end == change ||
	    strcmp(end, "%") || pct <= -100) {
		snprintf(err, errsize, "perturb '%s': the change '%s' must be +N%% "
			 "or -N%% (above -100%%)", item, change);
		return -EINVAL;
	}
	r->factor = 1 + pct / 100;
	return 0;
}

int perturb_parse(char *const *items, size_t n, struct perturb_rules *rules,
		  char *err, size_t errsize)
{
	rules->v = n ? calloc(n, sizeof(*rules->v)) : NULL;
	rules->n = 0;
	if (n && !rules->v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int rc = parse_one(items[i], &rules->v[i], err, errsize);

		if (rc < 0) {
			perturb_release(rules);
			return rc;
		}
		rules->n++;
	}
	return 0;
}

void perturb_release(struct perturb_rules *rules)
{
	free(rules->v);
	rules->v = NULL;
	rules->n = 0;
}

int perturb_apply(const struct perturb_rules *rules,
		  const struct rl_field *in, struct rl_field *out, size_t max,
		  char *text, size_t textsize)
{
	const char *kernel = rl_field_get(in, "kernel");
	unsigned long used_rules = 0;
	size_t nf = 0, used = 0;
	int changed = 0;

	for (const struct rl_field *f = in; f->key; f++) {
		const char *v = f->value;

		if (nf + 2 >= max)
			return -E2BIG;
		for (size_t i = 0; kernel && i < rules->n; i++) {
			const struct perturb_rule *r = &rules->v[i];
			char *end;
			double d;
			int len;

			if (fnmatch(r->kernel, kernel, 0) || fnmatch(r->metrics, f->key, 0))
				continue;
			d = strtod(v, &end);
			if (end == v || *end)
				continue;
			len = snprintf(text + used, textsize - used, "%.17g", d * r->factor);
			if (len < 0 || (size_t)len >= textsize - used)
				return -E2BIG;
			v = text + used;
			used += (size_t)len + 1;
			if (i < 8 * sizeof(used_rules))
				used_rules |= 1ul << i;
		}
		out[nf].key = f->key;
		out[nf++].value = v;
	}
	for (size_t i = 0; i < rules->n && i < 8 * sizeof(used_rules); i++) {
		int len;

		if (!(used_rules & (1ul << i)))
			continue;
		/* "perturbed: RULE; RULE", written on from the first rule's text */
		len = snprintf(text + used, textsize - used, "%s%s",
			       changed ? "; " : "perturbed: ", rules->v[i].text);
		if (len < 0 || (size_t)len >= textsize - used)
			return -E2BIG;
		if (!changed)
			out[nf].value = text + used;
		used += (size_t)len;
		changed++;
	}
	if (changed) {
		if (used >= textsize)
			return -E2BIG;
		text[used] = '\0';
		out[nf++].key = "synthetic";
	}
	out[nf].key = NULL;
	return changed;
}
