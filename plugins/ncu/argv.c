/*
 * argv.c - the ncu plugin's command line (see argv.h).
 */
#include "ncu/argv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int argv_add(struct argv_buf *a, const char *s)
{
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 32;
		void *p = realloc(a->v, cap * sizeof(char *));

		if (!p)
			return -ENOMEM;
		a->v = p;
		a->cap = cap;
	}
	a->v[a->n++] = (char *)(uintptr_t)s;
	a->v[a->n] = NULL;
	return 0;
}

int argv_add_owned(struct argv_buf *a, char *s)
{
	if (!s || a->n_owned == sizeof(a->owned) / sizeof(a->owned[0])) {
		free(s);
		return -ENOMEM;
	}
	a->owned[a->n_owned++] = s;
	return argv_add(a, s);
}

void argv_release(struct argv_buf *a)
{
	size_t i;

	for (i = 0; i < a->n_owned; i++)
		free(a->owned[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

char *argv_metric_list(const struct ncu_table_row *const *sel, size_t n)
{
	size_t len = 1, i;
	char *s, *p;

	for (i = 0; i < n; i++)
		len += strlen(sel[i]->metric) + 1;
	s = p = malloc(len);
	if (!s)
		return NULL;
	*p = '\0';
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s%s", i ? "," : "", sel[i]->metric);
	return s;
}

/* "regex:(A)|(B)" of the kernels option; caller frees. */
static char *kernel_filter(const struct rl_strlist *k)
{
	size_t len = sizeof("regex:"), i;
	char *s, *p;

	for (i = 0; i < k->n; i++)
		len += strlen(k->v[i]) + 3;
	s = p = malloc(len);
	if (!s)
		return NULL;
	p += sprintf(p, "regex:");
	for (i = 0; i < k->n; i++)
		p += sprintf(p, "%s(%s)", i ? "|" : "", k->v[i]);
	return s;
}

static char *long_text(long v)
{
	char *s = malloc(24);

	if (s)
		snprintf(s, 24, "%ld", v);
	return s;
}

int argv_build(struct argv_buf *a, const struct ncu_config *cfg,
	       const char *ncu, const char *program, const char *metrics,
	       const char *log_path)
{
	static const char *const fixed[] = {
		"--clock-control", "none", "--print-units", "base", "--csv",
		"--page", "raw", "--metrics", NULL,
	};
	int err = argv_add(a, ncu);
	size_t i;

	for (i = 0; !err && fixed[i]; i++)
		err = argv_add(a, fixed[i]);
	err = err ? err : argv_add(a, metrics);
	if (!err && cfg->kernels.n && cfg->kernel_name_base)
		err = argv_add(a, "--kernel-name-base") || argv_add(a, cfg->kernel_name_base) ?
			      -ENOMEM : 0;
	if (!err && cfg->kernels.n)
		err = argv_add(a, "-k") ? -ENOMEM : argv_add_owned(a, kernel_filter(&cfg->kernels));
	if (!err && cfg->launch_skip)
		err = argv_add(a, "--launch-skip") ? -ENOMEM : argv_add_owned(a, long_text(cfg->launch_skip));
	if (!err && cfg->launch_count)
		err = argv_add(a, "--launch-count") ? -ENOMEM : argv_add_owned(a, long_text(cfg->launch_count));
	if (!err && cfg->nvtx_include)
		err = argv_add(a, "--nvtx") || argv_add(a, "--nvtx-include") ? -ENOMEM :
		      argv_add(a, cfg->nvtx_include);
	/* The plugin masked every other GPU (CUDA_VISIBLE_DEVICES): ours is 0. */
	if (!err && cfg->device >= 0)
		err = argv_add(a, "--devices") || argv_add(a, "0") ? -ENOMEM : 0;
	err = err ? err : argv_add(a, "--log-file");
	err = err ? err : argv_add(a, log_path);
	err = err ? err : argv_add(a, "--");
	err = err ? err : argv_add(a, program);
	for (i = 1; !err && i < cfg->command.n; i++)
		err = argv_add(a, cfg->command.v[i]);
	return err;
}

char *argv_text(char *const *v)
{
	size_t len = 1, i;
	char *s, *p;

	for (i = 0; v[i]; i++)
		len += strlen(v[i]) + 3;
	s = p = malloc(len);
	if (!s)
		return NULL;
	for (i = 0; v[i]; i++) {
		bool q = !*v[i] || strpbrk(v[i], " \t'\"|()*") != NULL;

		p += sprintf(p, q ? "%s'%s'" : "%s%s", i ? " " : "", v[i]);
	}
	*p = '\0';
	return s;
}
