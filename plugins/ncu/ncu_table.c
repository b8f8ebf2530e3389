/*
 * ncu_table.c - the metric table: loading and checking etc/ncu-metrics.tsv,
 * and choosing its rows per architecture (see ncu_table.h).
 *
 * The table is small (tens of rows): lookups are linear scans.
 */
#include "ncu_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncu_text.h"
#include "ncu_value.h"

static const char *const known_roles[] = {
	"time_ns", "sm_cycles", "sm_clock_hz", "dram_clock_hz", "passes",
	"gpu_name", "flop_dp_add", "flop_dp_mul", "flop_dp_fma", "flop_sp_add",
	"flop_sp_mul", "flop_sp_fma", "flop_hp_add", "flop_hp_mul",
	"flop_hp_fma", "tensor_fp64", "tensor_fp16", "tensor_bf16",
	"tensor_tf32", "tensor_fp8", "tensor_int8", "tensor_inst",
	"tensor_inst_hfma2", "bytes_l1",
	"bytes_l2", "bytes_dram", "bytes_l1_ncu", "bytes_l2_ncu",
	/* the Instruction Roofline's (set "instruction") */
	"inst_warp", "inst_int", "inst_global", "inst_shared", "txn_l1_global",
	"txn_shared", "txn_l2", "txn_dram", NULL,
};

static bool role_is_known(const char *role)
{
	const char *const *r;

	for (r = known_roles; *r; r++)
		if (strcmp(*r, role) == 0)
			return true;
	return false;
}

static bool is_arch(const char *s)
{
	size_t n = strlen(s);

	if (strcmp(s, "*") == 0)
		return true;
	if (n < 2 || n > 3)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool is_metric_name(const char *s)
{
	if (!*s || !strstr(s, "__"))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
			return false;
	return true;
}

/* The factor a role demands, or 0 when any positive factor will do. */
static double role_factor(const char *role)
{
	if (strncmp(role, "flop_", 5) != 0)
		return 0;
	return strcmp(role + strlen(role) - 3, "fma") == 0 ? 2 : 1;
}

/* Check one split row; field starts in at[] give the error columns. */
static int table_check_row(struct ncu_text_cursor *c,
			   const struct ncu_table_row *m, char *const *at)
{
	double f, want;

	if (!is_arch(m->arch))
		return ncu_text_fail(c, at[0], "arch '%s' is not '*' or a compute capability without the dot (e.g. 90)",
				     m->arch);
	if (!is_metric_name(m->metric))
		return ncu_text_fail(c, at[1], "'%s' is not an ncu metric name", m->metric);
	if (!role_is_known(m->role))
		return ncu_text_fail(c, at[2], "unknown role '%s'", m->role);
	if (ncu_value_parse(m->factor, &f) || !(f > 0))
		return ncu_text_fail(c, at[3], "factor '%s' is not a positive number", m->factor);
	want = role_factor(m->role);
	if (want && f != want)
		return ncu_text_fail(c, at[3], "role '%s' needs factor %g, not '%s'", m->role,
				     want, m->factor);
	if (strcmp(m->set, "default") != 0 && strcmp(m->set, "extra") != 0 &&
	    strcmp(m->set, NCU_TABLE_SET_INSTRUCTION) != 0)
		return ncu_text_fail(c, at[4], "set '%s' is not 'default', 'extra' or 'instruction'",
				     m->set);
	return 0;
}

/* Split the line at c->p (ending at nl) into TAB fields; NUL-terminates. */
static size_t split_tabs(char *p, char *nl, char **f, size_t max)
{
	size_t n = 0;

	if (nl > p && nl[-1] == '\r')
		nl--;
	*nl = '\0';
	f[n++] = p;
	while (n < max && (p = strchr(p, '\t'))) {
		*p++ = '\0';
		f[n++] = p;
	}
	return n;
}

static int table_add(struct ncu_table *t, size_t *cap,
		     const struct ncu_table_row *m)
{
	if (t->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		void *a = realloc(t->rows, ncap * sizeof(*t->rows));

		if (!a)
			return -ENOMEM;
		t->rows = a;
		*cap = ncap;
	}
	t->rows[t->n++] = *m;
	return 0;
}

/* A tensor datapath may be the sum of several metrics (parts): e.g. fp16 on
 * sm_80 is src_fp16_dst_fp16 + src_fp16_dst_fp32.  Parts of one role share
 * its set, so that a datapath is collected whole or not at all. */
static bool role_has_parts(const char *role)
{
	return ncu_table_is_datapath(role) || strncmp(role, "inst_", 5) == 0 ||
	       strncmp(role, "txn_", 4) == 0;
}

static int table_check_duplicates(struct ncu_text_cursor *c,
				  const struct ncu_table *t)
{
	size_t i, j;

	for (i = 0; i < t->n; i++)
		for (j = 0; j < i; j++) {
			if (strcmp(t->rows[i].arch, t->rows[j].arch) != 0 ||
			    strcmp(t->rows[i].role, t->rows[j].role) != 0)
				continue;
			if (strcmp(t->rows[i].metric, t->rows[j].metric) == 0) {
				c->line = t->rows[i].line;
				c->line_start = NULL;
				return ncu_text_fail(c, NULL, "metric '%s' given twice for arch '%s' (line %ld first)",
						     t->rows[i].metric, t->rows[i].arch,
						     t->rows[j].line);
			}
			if (role_has_parts(t->rows[i].role)) {
				if (strcmp(t->rows[i].set, t->rows[j].set) == 0)
					continue;
				c->line = t->rows[i].line;
				c->line_start = NULL;
				return ncu_text_fail(c, NULL, "role '%s' of arch '%s' is in set '%s' here and '%s' on line %ld (the parts of a datapath share one set)",
						     t->rows[i].role, t->rows[i].arch, t->rows[i].set,
						     t->rows[j].set, t->rows[j].line);
			}
			c->line = t->rows[i].line;
			c->line_start = NULL;
			return ncu_text_fail(c, NULL, "role '%s' given twice for arch '%s' (line %ld first)",
					     t->rows[i].role, t->rows[i].arch,
					     t->rows[j].line);
		}
	return 0;
}

static int table_rows(struct ncu_text_cursor *c, struct ncu_table *t)
{
	size_t cap = 0;
	char *f[6];
	int err;

	while (c->p < c->end) {
		char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
		struct ncu_table_row m;
		size_t n;

		if (!nl)
			nl = c->end;
		if (*c->p == '#' || nl == c->p || (*c->p == '\r' && nl == c->p + 1))
			goto next;
		n = split_tabs(c->p, nl, f, 6);
		if (n < 5)
			return ncu_text_fail(c, f[n - 1], "expected 5 TAB-separated columns (arch, metric, role, factor, set), found %zu",
					     n);
		m = (struct ncu_table_row){ .arch = f[0], .metric = f[1],
					    .role = f[2], .factor = f[3],
					    .set = f[4], .line = c->line };
		err = table_check_row(c, &m, f);
		if (!err)
			err = table_add(t, &cap, &m);
		if (err)
			return err;
next:
		c->p = nl < c->end ? nl + 1 : c->end;
		c->line++;
		c->line_start = c->p;
	}
	return table_check_duplicates(c, t);
}

int ncu_table_parse(char *buf, size_t len, const char *name,
		    struct ncu_table **out, char *err, size_t errlen)
{
	struct ncu_table *t = calloc(1, sizeof(*t));
	struct ncu_text_cursor c;
	int ret;

	ncu_text_init(&c, buf, len, name, err, errlen);
	*out = NULL;
	if (!t) {
		free(buf);
		return -ENOMEM;
	}
	t->buf = buf;
	ret = table_rows(&c, t);
	if (!ret && t->n == 0)
		ret = ncu_text_fail(&c, NULL, "no metric rows");
	if (ret) {
		ncu_table_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

int ncu_table_load(const char *path, struct ncu_table **out, char *err,
		   size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int ret = ncu_text_read_file(path, &buf, &len);

	*out = NULL;
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot read the metric table: %s",
				 path, strerror(-ret));
		return ret;
	}
	return ncu_table_parse(buf, len, path, out, err, errlen);
}

void ncu_table_free(struct ncu_table *t)
{
	if (!t)
		return;
	free(t->buf);
	free(t->rows);
	free(t);
}

bool ncu_table_has_arch(const struct ncu_table *t, const char *arch)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->rows[i].arch, arch) == 0)
			return true;
	return false;
}

static bool arch_overrides(const struct ncu_table *t, const char *arch,
			   const char *role)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->rows[i].arch, arch) == 0 &&
		    strcmp(t->rows[i].role, role) == 0)
			return true;
	return false;
}

/* Whether a selection with these extra names takes row m: default rows
 * always, extra rows by role or "all", instruction rows by "instruction". */
static bool wanted(const struct ncu_table_row *m, const char *const *extra, size_t n)
{
	bool instr = strcmp(m->set, NCU_TABLE_SET_INSTRUCTION) == 0;
	size_t i;

	if (strcmp(m->set, "default") == 0)
		return true;
	for (i = 0; i < n; i++)
		if (instr ? strcmp(extra[i], NCU_TABLE_SET_INSTRUCTION) == 0 :
			    strcmp(extra[i], "all") == 0 || strcmp(extra[i], m->role) == 0)
			return true;
	return false;
}

bool ncu_table_has_extra_role(const struct ncu_table *t, const char *role)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(role, NCU_TABLE_SET_INSTRUCTION) == 0 ?
			    strcmp(t->rows[i].set, NCU_TABLE_SET_INSTRUCTION) == 0 :
			    strcmp(t->rows[i].set, "extra") == 0 &&
				    strcmp(t->rows[i].role, role) == 0)
			return true;
	return false;
}

long ncu_table_select(const struct ncu_table *t, const char *arch,
		      const char *const *extra, size_t n_extra,
		      const struct ncu_table_row ***out)
{
	const struct ncu_table_row **sel = malloc((t->n + 1) * sizeof(*sel));
	size_t i, n = 0;

	*out = NULL;
	if (!sel)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		const struct ncu_table_row *m = &t->rows[i];

		if (!wanted(m, extra, n_extra))
			continue;
		if (strcmp(m->arch, arch) == 0 ||
		    (strcmp(m->arch, "*") == 0 && !arch_overrides(t, arch, m->role)))
			sel[n++] = m;
	}
	*out = sel;
	return (long)n;
}

long ncu_table_names(const struct ncu_table *t, const char ***out)
{
	const char **names = malloc((t->n + 1) * sizeof(*names));
	size_t i, j, n = 0;

	*out = NULL;
	if (!names)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		for (j = 0; j < n; j++)
			if (strcmp(names[j], t->rows[i].metric) == 0)
				break;
		if (j == n)
			names[n++] = t->rows[i].metric;
	}
	*out = names;
	return (long)n;
}

bool ncu_table_is_datapath(const char *role)
{
	static const char *const paths[] = { "tensor_fp64", "tensor_fp16",
		"tensor_bf16", "tensor_tf32", "tensor_fp8", "tensor_int8", NULL };

	for (const char *const *p = paths; *p; p++)
		if (strcmp(*p, role) == 0)
			return true;
	return false;
}

size_t ncu_table_datapaths(const struct ncu_table *t, const char *arch,
			   const char *const *extra, size_t n_extra,
			   char *buf, size_t size)
{
	const struct ncu_table_row **all = NULL, **sel = NULL;
	long n_all = ncu_table_select(t, arch, (const char *const[]){ "all" }, 1, &all);
	long n_sel = ncu_table_select(t, arch, extra, n_extra, &sel);
	size_t count = 0, len = 0;

	if (size)
		*buf = '\0';
	for (long i = 0; i < n_all; i++) {
		const char *role = all[i]->role;
		bool taken = false, listed = false;

		if (!ncu_table_is_datapath(role))
			continue;
		for (long k = 0; k < n_sel && !taken; k++)
			taken = strcmp(sel[k]->role, role) == 0;
		for (long k = 0; k < i && !listed; k++)
			listed = strcmp(all[k]->role, role) == 0;
		if (taken || listed)
			continue;
		count++;
		if (size && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s",
						len ? "," : "", role + strlen("tensor_"));
	}
	free(all);
	free(sel);
	return n_all < 0 || n_sel < 0 ? (size_t)-1 : count;
}

bool ncu_table_arch_of_cc(const char *cc, char *buf, size_t size)
{
	const char *dot = cc ? strchr(cc, '.') : NULL;
	size_t major = dot ? (size_t)(dot - cc) : 0;

	if (!dot || major < 1 || major > 2 || strlen(dot + 1) != 1 || size < 8)
		return false;
	if (strspn(cc, "0123456789") != major || !(dot[1] >= '0' && dot[1] <= '9'))
		return false;
	memcpy(buf, cc, major);
	buf[major] = dot[1];
	buf[major + 1] = '\0';
	return true;
}
