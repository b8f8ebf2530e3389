/*
 * ncu_csv.c - reader for Nsight Compute's CSV exports (see ncu_csv.h).
 *
 * One pass over the buffer: fields are found with memchr, unquoted in place
 * and NUL-terminated where they are kept; fields of columns nobody selected
 * are only skipped.  That keeps 100,000 launches of a 365-column raw page
 * well under a second.  Device property columns (ncu_csv_is_device_column)
 * are kept only from a row whose device has not been seen yet: the raw page
 * repeats them in every row, the table holds them once per device.
 */
#include "ncu_csv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The identity columns, in the order of struct ncu_csv_launch's fields. */
static const char *const ident_names[] = {
	"ID", "Kernel Name", "Process ID", "Process Name", "Host Name",
	"Context", "Stream", "Block Size", "Grid Size", "Device", "CC",
};
#define N_IDENT (sizeof(ident_names) / sizeof(ident_names[0]))
#define IDENT_ID 0
#define IDENT_KERNEL 1
#define IDENT_DEVICE 9

/* Column roles in a row: skip, identity field i, metric slot, details parts. */
enum {
	COL_SKIP = -1,
	COL_METRIC_NAME = -2,
	COL_METRIC_UNIT = -3,
	COL_METRIC_VALUE = -4,
};
/* col_map values >= 0: < N_IDENT an identity field, else N_IDENT + slot. */

struct cursor {
	char *p, *end;
	char *line_start;
	long line;
	const char *name;
	char *err;
	size_t errlen;
};

/* A parsed row: identity fields and, for details, the metric triple. */
struct row {
	char *ident[N_IDENT];
	char *mname, *munit, *mvalue;
	char *mvalue_at;
	long line;
	char *line_start;
};

/* Open-addressing string -> index map (selected metrics, details IDs). */
struct strmap {
	size_t cap; /* power of two */
	size_t n;
	const char **keys;
	size_t *vals;
};

struct parser {
	struct cursor c;
	const char *const *metrics;
	size_t n_metrics;
	struct strmap sel;      /* metric name -> slot */
	size_t ncols;
	int *col_map;
	char **col_names;
	char **raw_units;       /* raw: [n_metrics] from the units row */
	struct ncu_csv *t;
	size_t cap_launches;
	struct strmap ids;      /* details: launch ID -> index */
	int *dev_map;           /* raw: [ncols] device property index or -1 */
	const char **dev_names; /* raw: [n_dev_cols] their names */
	size_t n_dev_cols;
	long device_col;        /* the Device column, or -1 */
	size_t cap_devices;
	char *last_warning;     /* the last ==WARNING== line before the header */
	long last_warning_line;
};

static int fail_at(struct cursor *c, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Format "name:line:col: message" into c->err; returns -EINVAL. */
static int fail_at(struct cursor *c, const char *at, const char *fmt, ...)
{
	va_list ap;
	long col = at && at >= c->line_start ? (long)(at - c->line_start) + 1 : 1;
	int n;

	if (!c->err || !c->errlen)
		return -EINVAL;
	n = snprintf(c->err, c->errlen, "%s:%ld:%ld: ", c->name, c->line, col);
	if (n < 0 || (size_t)n >= c->errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ---- string map ------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int strmap_init(struct strmap *m, size_t want)
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

static void strmap_release(struct strmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
}

/* Index of key, or SIZE_MAX when absent. */
static size_t strmap_get(const struct strmap *m, const char *key)
{
	size_t i = (size_t)hash_str(key) & (m->cap - 1);

	while (m->keys[i]) {
		if (strcmp(m->keys[i], key) == 0)
			return m->vals[i];
		i = (i + 1) & (m->cap - 1);
	}
	return SIZE_MAX;
}

/* Insert key (borrowed) unless present; 0, or -ENOMEM. */
static int strmap_put(struct strmap *m, const char *key, size_t val)
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

/* ---- fields ------------------------------------------------------------- */

/* After a field: consume its delimiter.  1 at the end of a row, else 0. */
static inline int end_of_field(struct cursor *c, char *at)
{
	if (at >= c->end)
		return c->p = c->end, 1;
	if (*at == ',')
		return c->p = at + 1, 0;
	if (*at == '\n' || (*at == '\r' && at + 1 < c->end && at[1] == '\n')) {
		c->p = at + (*at == '\n' ? 1 : 2);
		c->line++;
		c->line_start = c->p;
		return 1;
	}
	return fail_at(c, at, "unexpected '%c' after a field (expected ',' or end of line)",
		       *at);
}

/*
 * Parse one field at c->p.  When keep is set, the field is unquoted in place,
 * NUL-terminated and *out points at it.  Returns 1 at the end of a row, 0
 * when more fields follow, or -EINVAL.
 */
static int parse_field(struct cursor *c, int keep, char **out)
{
	char *p = c->p, *open = p, *open_line = c->line_start, *w, *q;
	long open_no = c->line;
	int r;

	if (p < c->end && *p == '"') {
		p++;
		w = p;
		for (;;) {
			/* buf[len] is '\0': the scan stops at the end of the buffer */
			q = p;
			while (*q != '"' && *q != '\n' && *q != '\0')
				q++;
			if (q >= c->end) {
				c->line = open_no;
				c->line_start = open_line;
				return fail_at(c, open,
					       "unterminated quoted field (truncated file?)");
			}
			if (keep && w != p)
				memmove(w, p, (size_t)(q - p));
			w += q - p;
			if (*q != '"') { /* a newline or NUL byte inside the field */
				if (*q == '\n') {
					c->line++;
					c->line_start = q + 1;
				}
				if (keep)
					*w = *q;
				w++;
				p = q + 1;
				continue;
			}
			if (q + 1 < c->end && q[1] == '"') {
				if (keep)
					*w = '"';
				w++;
				p = q + 2;
				continue;
			}
			p = q + 1;
			break;
		}
		r = end_of_field(c, p);
		if (r < 0)
			return r;
		if (keep) {
			*w = '\0';
			*out = open + 1;
		}
		return r;
	}
	q = p;
	while (q < c->end && *q != ',' && *q != '\n' && *q != '\r' && *q != '"')
		q++;
	if (q < c->end && *q == '"')
		return fail_at(c, q, "quote inside an unquoted field");
	r = end_of_field(c, q);
	if (r < 0)
		return r;
	if (keep) {
		if (q < c->end)
			*q = '\0';
		*out = open;
	}
	return r;
}

/* ---- values ------------------------------------------------------------- */

/* Digits with optional "," thousands groups, optional fraction, exponent. */
static bool is_number(const char *s, bool *has_commas)
{
	const char *d;
	size_t group;

	*has_commas = false;
	if (*s == '-' || *s == '+')
		s++;
	d = s;
	group = 0;
	while ((*s >= '0' && *s <= '9') || *s == ',') {
		if (*s == ',') {
			if (group == 0 || (*has_commas && group != 3) ||
			    (!*has_commas && group > 3))
				return false;
			*has_commas = true;
			group = 0;
		} else {
			group++;
		}
		s++;
	}
	if (s == d || (*has_commas && group != 3))
		return false;
	if (*s == '.') {
		s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

static void drop_commas(char *s)
{
	char *w = s;

	for (; *s; s++)
		if (*s != ',')
			*w++ = *s;
	*w = '\0';
}

static bool is_missing(const char *v)
{
	return !*v || strcmp(v, "n/a") == 0 || strcmp(v, "nan") == 0 ||
	       strcmp(v, "-nan") == 0 || strcmp(v, "inf") == 0 ||
	       strcmp(v, "-inf") == 0;
}

/*
 * Normalise a kept metric value in place: NULL when missing, separators
 * dropped from numbers; text is allowed only for metrics without a unit.
 */
static int keep_value(struct parser *ps, char *v, char *at, size_t slot,
		      const char *unit, const char **out)
{
	bool commas;

	if (is_missing(v)) {
		*out = NULL;
		return 0;
	}
	if (is_number(v, &commas)) {
		if (commas)
			drop_commas(v);
	} else if (unit && *unit) {
		return fail_at(&ps->c, at, "metric '%s' (%s): value '%s' is not a number",
			       ps->metrics[slot], unit, v);
	}
	*out = v;
	return 0;
}

int ncu_csv_number(const char *text, double *out)
{
	char *end;

	if (!text || !*text)
		return -EINVAL;
	errno = 0;
	*out = strtod(text, &end);
	if (*end || errno == ERANGE)
		return -EINVAL;
	return 0;
}

/* ---- devices ------------------------------------------------------------ */

bool ncu_csv_is_device_column(const char *name)
{
	static const char *const prefixes[] = {
		"device__", "nvlink__", "numa__", "c2clink__",
	};
	size_t i, n;

	if (!name || !strchr("dnc", name[0]))
		return false;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		n = strlen(prefixes[i]);
		if (strncmp(name, prefixes[i], n) == 0)
			break;
	}
	if (i == sizeof(prefixes) / sizeof(prefixes[0]) || !name[n])
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_.") == strlen(name);
}

/* The device whose Device column is dev (NULL: none), or SIZE_MAX. */
static size_t find_device(const struct ncu_csv *t, const char *dev)
{
	size_t i;

	for (i = t->n_devices; i-- > 0;) {
		const char *d = t->devices[i].device;

		if (d == dev || (d && dev && strcmp(d, dev) == 0))
			return i;
	}
	return SIZE_MAX;
}

/* The device of launch idx, added (with no properties yet) when new. */
static int launch_device(struct parser *ps, size_t idx)
{
	struct ncu_csv *t = ps->t;
	struct ncu_csv_launch *l = &t->launches[idx];
	size_t d = find_device(t, l->device);

	if (d == SIZE_MAX) {
		if (t->n_devices == ps->cap_devices) {
			size_t cap = ps->cap_devices ? ps->cap_devices * 2 : 4;
			void *a = realloc(t->devices, cap * sizeof(*t->devices));

			if (!a)
				return -ENOMEM;
			t->devices = a;
			ps->cap_devices = cap;
		}
		d = t->n_devices++;
		memset(&t->devices[d], 0, sizeof(t->devices[d]));
		t->devices[d].device = l->device;
		t->devices[d].cc = l->cc;
		t->devices[d].first_launch = idx;
	}
	l->device_index = d;
	return 0;
}

/* A device property's value: NULL when missing, separators dropped. */
static const char *device_value(char *v)
{
	bool commas;

	if (!v || is_missing(v))
		return NULL;
	if (is_number(v, &commas) && commas)
		drop_commas(v);
	return v;
}

/* Add a property to dev unless it has it (details: a name in two sections). */
static int device_add(struct ncu_csv_device *dev, const char *name, char *value,
		      bool check)
{
	const char *v = device_value(value);
	size_t i;

	if (!v)
		return 0;
	for (i = 0; check && i < dev->n; i++)
		if (strcmp(dev->names[i], name) == 0)
			return 0;
	if (dev->n == dev->cap) {
		size_t cap = dev->cap ? dev->cap * 2 : 16;
		void *a = realloc(dev->names, cap * sizeof(*dev->names));

		if (!a)
			return -ENOMEM;
		dev->names = a;
		a = realloc(dev->values, cap * sizeof(*dev->values));
		if (!a)
			return -ENOMEM;
		dev->values = a;
		dev->cap = cap;
	}
	dev->names[dev->n] = name;
	dev->values[dev->n++] = v;
	return 0;
}

/*
 * Whether a raw row must keep its device property fields, decided at its
 * first one (col): yes when its Device value is new, or not read yet.
 */
static int row_wants_device(const struct parser *ps, const struct row *r,
			    size_t col)
{
	if (ps->device_col > (long)col)
		return 1;
	return find_device(ps->t, r->ident[IDENT_DEVICE]) == SIZE_MAX;
}

/* ---- launches ----------------------------------------------------------- */

/* Append a launch with all metrics missing; its index in *idx. */
static int add_launch(struct parser *ps, const struct row *r, size_t *idx)
{
	struct ncu_csv *t = ps->t;
	struct ncu_csv_launch *l;
	size_t i, n = ps->n_metrics;

	if (t->n_launches == ps->cap_launches) {
		size_t cap = ps->cap_launches ? ps->cap_launches * 2 : 64;
		void *a = realloc(t->launches, cap * sizeof(*t->launches));

		if (!a)
			return -ENOMEM;
		t->launches = a;
		if (n) {
			a = realloc(t->value_store, cap * n * sizeof(char *));
			if (!a)
				return -ENOMEM;
			t->value_store = a;
			a = realloc(t->unit_store, cap * n * sizeof(char *));
			if (!a)
				return -ENOMEM;
			t->unit_store = a;
		}
		ps->cap_launches = cap;
	}
	*idx = t->n_launches++;
	l = &t->launches[*idx];
	memset(l, 0, sizeof(*l));
	l->id = r->ident[0];
	l->kernel = r->ident[1];
	l->pid = r->ident[2];
	l->process = r->ident[3];
	l->host = r->ident[4];
	l->context = r->ident[5];
	l->stream = r->ident[6];
	l->block = r->ident[7];
	l->grid = r->ident[8];
	l->device = r->ident[9];
	l->cc = r->ident[10];
	l->line = r->line;
	for (i = 0; i < n; i++) {
		t->value_store[*idx * n + i] = NULL;
		t->unit_store[*idx * n + i] = NULL;
	}
	return launch_device(ps, *idx);
}

static bool launch_has_values(const struct parser *ps, size_t idx)
{
	size_t i;

	for (i = 0; i < ps->n_metrics; i++)
		if (ps->t->value_store[idx * ps->n_metrics + i])
			return true;
	return ps->n_metrics == 0;
}

static int no_values(struct parser *ps, size_t idx, char *at)
{
	const struct ncu_csv_launch *l = &ps->t->launches[idx];

	return fail_at(&ps->c, at,
		       "launch %s '%s' has no value for any of the %zu selected metrics "
		       "(a kernel ncu could not profile?)",
		       l->id ? l->id : "?", l->kernel ? l->kernel : "?",
		       ps->n_metrics);
}

/* ---- lines -------------------------------------------------------------- */

static bool starts_with(const char *p, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(end - p) >= n && memcmp(p, prefix, n) == 0;
}

/* Move the cursor to the next line; the current one ends at its LF. */
static void next_line(struct cursor *c)
{
	char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));

	c->p = nl ? nl + 1 : c->end;
	c->line++;
	c->line_start = c->p;
}

/* Length of the current line without its CR/LF (for quoting it). */
static int line_len(const struct cursor *c)
{
	const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	size_t n = nl ? (size_t)(nl - c->p) : (size_t)(c->end - c->p);

	if (n && c->p[n - 1] == '\r')
		n--;
	return n > 300 ? 300 : (int)n;
}

/*
 * Handle a line that is not CSV ("==PROF== ...", program output).  Returns
 * 1 when it was skipped, 0 when it is CSV, -EINVAL for an ==ERROR== line or
 * (after the header) anything but an ncu message.
 */
static int skip_message(struct parser *ps, bool in_table)
{
	struct cursor *c = &ps->c;

	if (starts_with(c->p, c->end, "==ERROR=="))
		return fail_at(c, c->p, "ncu reported an error: %.*s", line_len(c),
			       c->p);
	if (starts_with(c->p, c->end, "==WARNING==")) {
		ps->last_warning = c->p;
		ps->last_warning_line = c->line;
	}
	if (starts_with(c->p, c->end, "==")) {
		next_line(c);
		return 1;
	}
	if (*c->p == '\n' || *c->p == '\r') {
		next_line(c);
		return 1;
	}
	if (in_table)
		return 0;
	if (*c->p == '"' && starts_with(c->p, c->end, "\"ID\","))
		return 0;
	ps->t->skipped_lines++;
	next_line(c);
	return 1;
}

/* ---- header ------------------------------------------------------------- */

static int read_header(struct parser *ps)
{
	struct cursor *c = &ps->c;
	size_t cap = 64;
	char *f;
	int r;

	ps->col_names = malloc(cap * sizeof(char *));
	if (!ps->col_names)
		return -ENOMEM;
	do {
		if (ps->ncols == cap) {
			void *a = realloc(ps->col_names, cap * 2 * sizeof(char *));

			if (!a)
				return -ENOMEM;
			ps->col_names = a;
			cap *= 2;
		}
		r = parse_field(c, 1, &f);
		if (r < 0)
			return r;
		ps->col_names[ps->ncols++] = f;
	} while (r == 0);
	return 0;
}

static long find_col(const struct parser *ps, const char *name)
{
	size_t i;

	for (i = 0; i < ps->ncols; i++)
		if (strcmp(ps->col_names[i], name) == 0)
			return (long)i;
	return -1;
}

/* Decide each column's role; the layout follows from the columns. */
static int map_columns(struct parser *ps, char *header_at)
{
	long name = find_col(ps, "Metric Name"), value = find_col(ps, "Metric Value");
	long unit = find_col(ps, "Metric Unit");
	size_t i;

	ps->col_map = malloc(ps->ncols * sizeof(int));
	if (!ps->col_map)
		return -ENOMEM;
	for (i = 0; i < ps->ncols; i++)
		ps->col_map[i] = COL_SKIP;
	ps->device_col = -1;
	for (i = 0; i < N_IDENT; i++) {
		long col = find_col(ps, ident_names[i]);

		if (i == IDENT_DEVICE)
			ps->device_col = col;
		if (col >= 0)
			ps->col_map[col] = (int)i;
		else if (i == IDENT_ID || i == IDENT_KERNEL)
			return fail_at(&ps->c, header_at,
				       "the header has no '%s' column (not an ncu CSV export?)",
				       ident_names[i]);
	}
	if (name >= 0 && value >= 0) {
		ps->t->layout = NCU_CSV_DETAILS;
		ps->col_map[name] = COL_METRIC_NAME;
		ps->col_map[value] = COL_METRIC_VALUE;
		if (unit >= 0)
			ps->col_map[unit] = COL_METRIC_UNIT;
		return 0;
	}
	ps->t->layout = NCU_CSV_RAW;
	ps->dev_map = malloc(ps->ncols * sizeof(int));
	ps->dev_names = malloc(ps->ncols * sizeof(char *));
	if (!ps->dev_map || !ps->dev_names)
		return -ENOMEM;
	for (i = 0; i < ps->ncols; i++) {
		size_t slot;

		ps->dev_map[i] = -1;
		if (ps->col_map[i] != COL_SKIP)
			continue;
		/* a selected property (display name) is kept for both */
		if (ncu_csv_is_device_column(ps->col_names[i])) {
			ps->dev_map[i] = (int)ps->n_dev_cols;
			ps->dev_names[ps->n_dev_cols++] = ps->col_names[i];
		}
		slot = strmap_get(&ps->sel, ps->col_names[i]);
		if (slot != SIZE_MAX)
			ps->col_map[i] = (int)(N_IDENT + slot);
	}
	return 0;
}

/* ---- rows --------------------------------------------------------------- */

/* Point the cursor's line back at row r (for errors found after it). */
static void back_to_row(struct cursor *c, const struct row *r)
{
	c->line = r->line;
	c->line_start = r->line_start;
}

/*
 * Parse one row into r (identity, details triple) and, for raw rows, the
 * kept metric fields into vals[slot] (with their positions in at[slot]) and,
 * when the row's device is new, its device property fields into dvals[]
 * (*new_device set).
 */
static int parse_row(struct parser *ps, struct row *r, char **vals, char **at,
		     char **dvals, int *new_device)
{
	struct cursor *c = &ps->c;
	size_t col;
	int end = 0, want = -1;

	memset(r, 0, sizeof(*r));
	r->line = c->line;
	r->line_start = c->line_start;
	for (col = 0; col < ps->ncols; col++) {
		int role = ps->col_map[col];
		int dev = ps->dev_map ? ps->dev_map[col] : -1;
		char *f = NULL, *start = c->p;

		if (dev >= 0 && want < 0)
			want = row_wants_device(ps, r, col);
		end = parse_field(c, role != COL_SKIP || (dev >= 0 && want), &f);
		if (end < 0)
			return end;
		if (dev >= 0 && want)
			dvals[dev] = f;
		if (end && col + 1 < ps->ncols) {
			back_to_row(c, r);
			return fail_at(c, c->p > start ? c->p - 1 : c->p,
				       "row has %zu fields, the header has %zu (truncated or damaged file?)",
				       col + 1, ps->ncols);
		}
		if (role == COL_SKIP)
			continue;
		if (role >= 0 && (size_t)role < N_IDENT) {
			r->ident[role] = f;
		} else if (role >= (int)N_IDENT) {
			vals[role - (int)N_IDENT] = f;
			at[role - (int)N_IDENT] = start;
		} else if (role == COL_METRIC_NAME) {
			r->mname = f;
		} else if (role == COL_METRIC_UNIT) {
			r->munit = f;
		} else {
			r->mvalue = f;
			r->mvalue_at = start;
		}
	}
	if (!end) {
		char *extra_at = c->p;

		back_to_row(c, r);
		return fail_at(c, extra_at, "row has more fields than the header's %zu",
			       ps->ncols);
	}
	*new_device = want > 0;
	return 0;
}

/* The raw page's units row: ID empty.  Returns 1 when this row was it. */
static int take_units(struct parser *ps, struct row *r, char **vals)
{
	size_t i;

	if (r->ident[IDENT_ID] && *r->ident[IDENT_ID])
		return 0;
	for (i = 0; i < ps->n_metrics; i++)
		ps->raw_units[i] = vals[i];
	return 1;
}

/* A new device's properties from the row that introduced it. */
static int fill_device(struct parser *ps, size_t idx, char **dvals)
{
	struct ncu_csv_device *dev = &ps->t->devices[ps->t->launches[idx].device_index];
	size_t i;
	int err = 0;

	if (dev->first_launch != idx)
		return 0; /* a device seen before (Device column after them) */
	for (i = 0; !err && i < ps->n_dev_cols; i++)
		err = device_add(dev, ps->dev_names[i], dvals[i], false);
	return err;
}

static int store_raw(struct parser *ps, struct row *r, char **vals, char **at,
		     char **dvals, int new_device)
{
	struct cursor *c = &ps->c;
	size_t idx, i, n = ps->n_metrics;
	char *first_at = NULL;
	int err;

	if (!r->ident[IDENT_ID] || !*r->ident[IDENT_ID])
		return fail_at(c, r->line_start, "row without a launch ID");
	err = add_launch(ps, r, &idx);
	if (!err && new_device)
		err = fill_device(ps, idx, dvals);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		const char *unit = ps->raw_units[i];

		if (!vals[i])
			continue;
		if (!first_at)
			first_at = at[i];
		err = keep_value(ps, vals[i], at[i], i, unit,
				 &ps->t->value_store[idx * n + i]);
		if (err)
			return err;
		if (ps->t->value_store[idx * n + i])
			ps->t->unit_store[idx * n + i] = unit ? unit : "";
	}
	if (!launch_has_values(ps, idx))
		return no_values(ps, idx, first_at ? first_at : r->line_start);
	return 0;
}

static int find_or_add_launch(struct parser *ps, struct row *r, size_t *idx)
{
	struct ncu_csv *t = ps->t;
	size_t found;
	int err;

	if (t->n_launches &&
	    strcmp(t->launches[t->n_launches - 1].id, r->ident[IDENT_ID]) == 0) {
		*idx = t->n_launches - 1;
		return 0;
	}
	found = strmap_get(&ps->ids, r->ident[IDENT_ID]);
	if (found != SIZE_MAX) {
		*idx = found;
		return 0;
	}
	err = add_launch(ps, r, idx);
	if (err)
		return err;
	return strmap_put(&ps->ids, r->ident[IDENT_ID], *idx);
}

static int store_details(struct parser *ps, struct row *r)
{
	struct cursor *c = &ps->c;
	size_t idx, slot, n = ps->n_metrics;
	int err;

	if (!r->ident[IDENT_ID] || !*r->ident[IDENT_ID])
		return fail_at(c, r->line_start, "row without a launch ID");
	err = find_or_add_launch(ps, r, &idx);
	if (err)
		return err;
	if (r->mname && ncu_csv_is_device_column(r->mname)) {
		struct ncu_csv_device *dev =
			&ps->t->devices[ps->t->launches[idx].device_index];

		/* from the device's first launch, as on the raw page */
		if (dev->first_launch == idx) {
			err = device_add(dev, r->mname, r->mvalue, true);
			if (err)
				return err;
		}
	}
	slot = r->mname ? strmap_get(&ps->sel, r->mname) : SIZE_MAX;
	if (slot == SIZE_MAX || ps->t->value_store[idx * n + slot])
		return 0; /* not selected, or seen in an earlier section */
	err = keep_value(ps, r->mvalue, r->mvalue_at, slot, r->munit,
			 &ps->t->value_store[idx * n + slot]);
	if (err)
		return err;
	if (ps->t->value_store[idx * n + slot])
		ps->t->unit_store[idx * n + slot] = r->munit ? r->munit : "";
	return 0;
}

/* ---- driver ------------------------------------------------------------- */

static int find_header(struct parser *ps)
{
	struct cursor *c = &ps->c;
	int r;

	while (c->p < c->end) {
		r = skip_message(ps, false);
		if (r < 0)
			return r;
		if (r == 0)
			return 0;
	}
	if (ps->last_warning) {
		c->line = ps->last_warning_line;
		c->line_start = ps->last_warning;
		c->p = ps->last_warning;
		return fail_at(c, c->p, "no CSV table: %.*s", line_len(c), c->p);
	}
	return fail_at(c, c->p, "no CSV table (no header line starting with \"ID\",)");
}

static int read_rows(struct parser *ps)
{
	struct cursor *c = &ps->c;
	size_t n = ps->n_metrics ? ps->n_metrics : 1;
	char **vals = calloc(n, sizeof(char *)), **at = calloc(n, sizeof(char *));
	char **dvals = calloc(ps->n_dev_cols + 1, sizeof(char *));
	bool first = true;
	struct cursor next;
	struct row r;
	int err = 0, new_device = 0;

	if (!vals || !at || !dvals) {
		err = -ENOMEM;
		goto out_free;
	}
	while (c->p < c->end) {
		err = skip_message(ps, true);
		if (err < 0)
			goto out_free;
		if (err == 1)
			continue;
		memset(vals, 0, n * sizeof(char *));
		err = parse_row(ps, &r, vals, at, dvals, &new_device);
		if (err < 0)
			goto out_free;
		/* Errors about the row's values point into the row. */
		next = *c;
		back_to_row(c, &r);
		if (ps->t->layout == NCU_CSV_DETAILS)
			err = store_details(ps, &r);
		else if (first && take_units(ps, &r, vals))
			err = 0;
		else
			err = store_raw(ps, &r, vals, at, dvals, new_device);
		if (err < 0)
			goto out_free;
		*c = next;
		first = false;
	}
out_free:
	free(vals);
	free(at);
	free(dvals);
	return err;
}

/* Details launches accumulate over rows: check them once all are read. */
static int check_details(struct parser *ps)
{
	size_t i;

	for (i = 0; i < ps->t->n_launches; i++) {
		if (!launch_has_values(ps, i)) {
			ps->c.line = ps->t->launches[i].line;
			ps->c.line_start = NULL;
			return no_values(ps, i, NULL);
		}
	}
	return 0;
}

static void finish(struct ncu_csv *t)
{
	size_t i;

	for (i = 0; i < t->n_launches; i++) {
		t->launches[i].values = t->value_store ? t->value_store + i * t->n_metrics : NULL;
		t->launches[i].units = t->unit_store ? t->unit_store + i * t->n_metrics : NULL;
	}
}

static int parse(struct parser *ps)
{
	struct cursor header, after;
	size_t i;
	char *header_at;
	int err;

	err = strmap_init(&ps->sel, ps->n_metrics);
	if (err)
		return err;
	for (i = 0; i < ps->n_metrics; i++) {
		err = strmap_put(&ps->sel, ps->metrics[i], i);
		if (err)
			return err;
	}
	err = strmap_init(&ps->ids, 64);
	if (err)
		return err;
	ps->raw_units = calloc(ps->n_metrics ? ps->n_metrics : 1, sizeof(char *));
	if (!ps->raw_units)
		return -ENOMEM;
	err = find_header(ps);
	if (err)
		return err;
	header_at = ps->c.p;
	header = ps->c;
	err = read_header(ps);
	if (err)
		return err;
	after = ps->c;
	ps->c.line = header.line; /* errors about columns point at the header */
	ps->c.line_start = header.line_start;
	err = map_columns(ps, header_at);
	if (err)
		return err;
	ps->c = after;
	err = read_rows(ps);
	if (err)
		return err;
	if (ps->t->layout == NCU_CSV_DETAILS)
		return check_details(ps);
	return 0;
}

int ncu_csv_parse(char *buf, size_t len, const char *name,
		  const char *const *metrics, size_t n_metrics,
		  struct ncu_csv **out, char *err, size_t errlen)
{
	struct parser ps;
	int ret;

	*out = NULL;
	memset(&ps, 0, sizeof(ps));
	ps.t = calloc(1, sizeof(*ps.t));
	if (!ps.t) {
		free(buf);
		return -ENOMEM;
	}
	ps.t->buf = buf;
	ps.t->n_metrics = n_metrics;
	ps.metrics = metrics;
	ps.n_metrics = n_metrics;
	ps.c = (struct cursor){ .p = buf, .end = buf + len, .line_start = buf,
				.line = 1, .name = name, .err = err,
				.errlen = errlen };
	ret = parse(&ps);
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "%s: out of memory", name);
	strmap_release(&ps.sel);
	strmap_release(&ps.ids);
	free(ps.col_map);
	free(ps.col_names);
	free(ps.raw_units);
	free(ps.dev_map);
	free(ps.dev_names);
	if (ret) {
		ncu_csv_free(ps.t);
		return ret;
	}
	finish(ps.t);
	*out = ps.t;
	return 0;
}

/* Read a whole file into a NUL-terminated malloc'd buffer. */
static int slurp(const char *path, char **out, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out_close;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out_close;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			free(buf);
			goto out_close;
		}
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
out_close:
	close(fd);
	return ret;
}

int ncu_csv_read_file(const char *path, const char *const *metrics,
		      size_t n_metrics, struct ncu_csv **out, char *err,
		      size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int ret = slurp(path, &buf, &len);

	*out = NULL;
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot read: %s", path,
				 strerror(-ret));
		return ret;
	}
	return ncu_csv_parse(buf, len, path, metrics, n_metrics, out, err,
			     errlen);
}

void ncu_csv_free(struct ncu_csv *t)
{
	if (!t)
		return;
	free(t->buf);
	free(t->launches);
	free(t->value_store);
	free(t->unit_store);
	for (size_t i = 0; i < t->n_devices; i++) {
		free(t->devices[i].names);
		free(t->devices[i].values);
	}
	free(t->devices);
	free(t);
}

/* ---- units -------------------------------------------------------------- */

static const struct {
	const char *unit;
	const char *base;
	double scale;
} unit_table[] = {
	{ "byte", "byte", 1 },        { "Kbyte", "byte", 1e3 },
	{ "Mbyte", "byte", 1e6 },     { "Gbyte", "byte", 1e9 },
	{ "Tbyte", "byte", 1e12 },    { "ns", "ns", 1 },
	{ "nsecond", "ns", 1 },       { "us", "ns", 1e3 },
	{ "usecond", "ns", 1e3 },     { "ms", "ns", 1e6 },
	{ "msecond", "ns", 1e6 },     { "s", "ns", 1e9 },
	{ "second", "ns", 1e9 },      { "hz", "hz", 1 },
	{ "Khz", "hz", 1e3 },         { "Mhz", "hz", 1e6 },
	{ "Ghz", "hz", 1e9 },         { "byte/second", "byte/second", 1 },
	{ "Kbyte/second", "byte/second", 1e3 },
	{ "Mbyte/second", "byte/second", 1e6 },
	{ "Gbyte/second", "byte/second", 1e9 },
	{ "Tbyte/second", "byte/second", 1e12 },
	{ "cycle", "cycle", 1 },      { "Kcycle", "cycle", 1e3 },
	{ "Mcycle", "cycle", 1e6 },   { "Gcycle", "cycle", 1e9 },
	{ "inst", "inst", 1 },        { "Kinst", "inst", 1e3 },
	{ "Minst", "inst", 1e6 },     { "Ginst", "inst", 1e9 },
};

int ncu_csv_to_base(const char *unit, const char *value, double *out,
		    const char **base)
{
	char tmp[128];
	bool commas;
	size_t i;

	if (strlen(value) >= sizeof(tmp))
		return -EINVAL;
	strcpy(tmp, value);
	if (!is_number(tmp, &commas))
		return -EINVAL;
	if (commas)
		drop_commas(tmp);
	if (ncu_csv_number(tmp, out))
		return -EINVAL;
	*base = unit ? unit : "";
	for (i = 0; unit && i < sizeof(unit_table) / sizeof(unit_table[0]); i++) {
		if (strcmp(unit, unit_table[i].unit) != 0)
			continue;
		*base = unit_table[i].base;
		if (unit_table[i].scale == 1)
			return 0;
		*out *= unit_table[i].scale;
		return 1;
	}
	return 0;
}

/* ---- the metric table --------------------------------------------------- */

static const char *const known_roles[] = {
	"time_ns", "sm_cycles", "sm_clock_hz", "dram_clock_hz", "passes",
	"gpu_name", "flop_dp_add", "flop_dp_mul", "flop_dp_fma", "flop_sp_add",
	"flop_sp_mul", "flop_sp_fma", "flop_hp_add", "flop_hp_mul",
	"flop_hp_fma", "tensor_fp64", "tensor_fp16", "tensor_bf16",
	"tensor_tf32", "tensor_fp8", "tensor_int8", "tensor_inst", "bytes_l1",
	"bytes_l2", "bytes_dram", "bytes_l1_ncu", "bytes_l2_ncu", NULL,
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
static int table_check_row(struct cursor *c, const struct ncu_csv_metric *m,
			   char *const *at)
{
	double f, want;

	if (!is_arch(m->arch))
		return fail_at(c, at[0], "arch '%s' is not '*' or a compute capability without the dot (e.g. 90)",
			       m->arch);
	if (!is_metric_name(m->metric))
		return fail_at(c, at[1], "'%s' is not an ncu metric name", m->metric);
	if (!role_is_known(m->role))
		return fail_at(c, at[2], "unknown role '%s'", m->role);
	if (ncu_csv_number(m->factor, &f) || !(f > 0))
		return fail_at(c, at[3], "factor '%s' is not a positive number", m->factor);
	want = role_factor(m->role);
	if (want && f != want)
		return fail_at(c, at[3], "role '%s' needs factor %g, not '%s'", m->role,
			       want, m->factor);
	if (strcmp(m->set, "default") != 0 && strcmp(m->set, "extra") != 0)
		return fail_at(c, at[4], "set '%s' is neither 'default' nor 'extra'", m->set);
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

static int table_add(struct ncu_csv_table *t, size_t *cap,
		     const struct ncu_csv_metric *m)
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

static int table_check_duplicates(struct cursor *c, const struct ncu_csv_table *t)
{
	size_t i, j;

	for (i = 0; i < t->n; i++)
		for (j = 0; j < i; j++)
			if (strcmp(t->rows[i].arch, t->rows[j].arch) == 0 &&
			    strcmp(t->rows[i].role, t->rows[j].role) == 0) {
				c->line = t->rows[i].line;
				c->line_start = NULL;
				return fail_at(c, NULL, "role '%s' given twice for arch '%s' (line %ld first)",
					       t->rows[i].role, t->rows[i].arch,
					       t->rows[j].line);
			}
	return 0;
}

static int table_rows(struct cursor *c, struct ncu_csv_table *t)
{
	size_t cap = 0;
	char *f[6];
	int err;

	while (c->p < c->end) {
		char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
		struct ncu_csv_metric m;
		size_t n;

		if (!nl)
			nl = c->end;
		if (*c->p == '#' || nl == c->p || (*c->p == '\r' && nl == c->p + 1))
			goto next;
		n = split_tabs(c->p, nl, f, 6);
		if (n < 5)
			return fail_at(c, f[n - 1], "expected 5 TAB-separated columns (arch, metric, role, factor, set), found %zu",
				       n);
		m = (struct ncu_csv_metric){ .arch = f[0], .metric = f[1],
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

int ncu_csv_table_parse(char *buf, size_t len, const char *name,
			struct ncu_csv_table **out, char *err, size_t errlen)
{
	struct ncu_csv_table *t = calloc(1, sizeof(*t));
	struct cursor c = { .p = buf, .end = buf + len, .line_start = buf,
			    .line = 1, .name = name, .err = err,
			    .errlen = errlen };
	int ret;

	*out = NULL;
	if (!t) {
		free(buf);
		return -ENOMEM;
	}
	t->buf = buf;
	ret = table_rows(&c, t);
	if (!ret && t->n == 0)
		ret = fail_at(&c, NULL, "no metric rows");
	if (ret) {
		ncu_csv_table_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

int ncu_csv_table_load(const char *path, struct ncu_csv_table **out,
		       char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int ret = slurp(path, &buf, &len);

	*out = NULL;
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot read the metric table: %s",
				 path, strerror(-ret));
		return ret;
	}
	return ncu_csv_table_parse(buf, len, path, out, err, errlen);
}

void ncu_csv_table_free(struct ncu_csv_table *t)
{
	if (!t)
		return;
	free(t->buf);
	free(t->rows);
	free(t);
}

bool ncu_csv_table_has_arch(const struct ncu_csv_table *t, const char *arch)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->rows[i].arch, arch) == 0)
			return true;
	return false;
}

static bool arch_overrides(const struct ncu_csv_table *t, const char *arch,
			   const char *role)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->rows[i].arch, arch) == 0 &&
		    strcmp(t->rows[i].role, role) == 0)
			return true;
	return false;
}

static bool wanted_extra(const char *role, const char *const *extra, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(extra[i], "all") == 0 || strcmp(extra[i], role) == 0)
			return true;
	return false;
}

bool ncu_csv_table_has_extra_role(const struct ncu_csv_table *t,
				  const char *role)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->rows[i].set, "extra") == 0 &&
		    strcmp(t->rows[i].role, role) == 0)
			return true;
	return false;
}

long ncu_csv_table_select(const struct ncu_csv_table *t, const char *arch,
			  const char *const *extra, size_t n_extra,
			  const struct ncu_csv_metric ***out)
{
	const struct ncu_csv_metric **sel = malloc((t->n + 1) * sizeof(*sel));
	size_t i, n = 0;

	*out = NULL;
	if (!sel)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		const struct ncu_csv_metric *m = &t->rows[i];

		if (strcmp(m->set, "extra") == 0 && !wanted_extra(m->role, extra, n_extra))
			continue;
		if (strcmp(m->arch, arch) == 0 ||
		    (strcmp(m->arch, "*") == 0 && !arch_overrides(t, arch, m->role)))
			sel[n++] = m;
	}
	*out = sel;
	return (long)n;
}

long ncu_csv_table_names(const struct ncu_csv_table *t, const char ***out)
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

bool ncu_csv_arch_of_cc(const char *cc, char *buf, size_t size)
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

/* ---- kernel records ----------------------------------------------------- */

static int record_reserve(struct ncu_csv_record *rec, size_t fields,
			  size_t text, size_t vals)
{
	if (fields > rec->cap) {
		void *a = realloc(rec->fields, fields * sizeof(*rec->fields));

		if (!a)
			return -ENOMEM;
		rec->fields = a;
		rec->cap = fields;
	}
	if (text > rec->text_cap) {
		void *a = realloc(rec->text, text);

		if (!a)
			return -ENOMEM;
		rec->text = a;
		rec->text_cap = text;
	}
	if (vals > rec->vals_cap) {
		void *a = realloc(rec->vals, vals * sizeof(*rec->vals));

		if (!a)
			return -ENOMEM;
		rec->vals = a;
		rec->vals_cap = vals;
	}
	return 0;
}

static void add_field(struct ncu_csv_record *rec, size_t *n, const char *key,
		      const char *value)
{
	if (!value)
		return;
	rec->fields[*n].key = key;
	rec->fields[*n].value = value;
	(*n)++;
}

/* Append name to a comma-separated list being built at *end. */
static void list_add(char **end, const char *start, const char *name)
{
	size_t n = strlen(name);

	if (*end > start)
		*(*end)++ = ',';
	memcpy(*end, name, n);
	*end += n;
	**end = '\0';
}

/* Could unit be a prefixed (non-base) one?  Cheap test before the table. */
static bool has_prefix(const char *unit)
{
	if (!unit || !*unit)
		return false;
	if (strchr("KMGT", unit[0]))
		return true;
	return strcmp(unit, "us") == 0 || strcmp(unit, "usecond") == 0 ||
	       strcmp(unit, "ms") == 0 || strcmp(unit, "msecond") == 0 ||
	       strcmp(unit, "s") == 0 || strcmp(unit, "second") == 0;
}

/* The value text a column gets: exact, or converted to base units. */
static const char *column_value(const struct ncu_csv_launch *l,
				const struct ncu_csv_column *col, char **num,
				bool *rounded)
{
	const char *v, *unit, *base;
	double d;

	*rounded = false;
	if (col->slot == (size_t)-1 || !l->values || !(v = l->values[col->slot]))
		return NULL;
	unit = l->units[col->slot];
	if (!has_prefix(unit) || ncu_csv_to_base(unit, v, &d, &base) != 1)
		return v;
	*rounded = true;
	v = *num;
	*num += snprintf(*num, 32, "%.17g", d) + 1;
	return v;
}

static const char *column_of_role(const struct ncu_csv_column *cols,
				  const char **vals, size_t ncols,
				  const char *role)
{
	size_t i;

	for (i = 0; i < ncols; i++)
		if (cols[i].role && strcmp(cols[i].role, role) == 0)
			return vals[i];
	return NULL;
}

int ncu_csv_kernel_record(const struct ncu_csv *t, size_t i,
			  const struct ncu_csv_column *cols, size_t ncols,
			  const struct rl_field *extra,
			  struct ncu_csv_record *rec)
{
	const struct ncu_csv_launch *l = &t->launches[i];
	size_t n = 0, k, names = 0, n_extra = 0;
	char *num, *missing, *miss_end, *rounded, *round_end;

	while (extra && extra[n_extra].key)
		n_extra++;
	for (k = 0; k < ncols; k++)
		names += strlen(cols[k].metric) + 1;
	if (record_reserve(rec, 20 + n_extra + ncols, ncols * 32 + 2 * names + 2,
			   ncols + 1))
		return -ENOMEM;
	num = rec->text;
	missing = miss_end = rec->text + ncols * 32;
	*missing = '\0';
	rounded = round_end = missing + names + 1;
	*rounded = '\0';
	for (k = 0; k < ncols; k++) {
		bool conv;

		rec->vals[k] = column_value(l, &cols[k], &num, &conv);
		if (!rec->vals[k])
			list_add(&miss_end, missing, cols[k].metric);
		else if (conv)
			list_add(&round_end, rounded, cols[k].metric);
	}
	add_field(rec, &n, "kernel", l->kernel);
	add_field(rec, &n, "invocation", l->id);
	add_field(rec, &n, "gpu_index", l->device);
	add_field(rec, &n, "gpu_name", column_of_role(cols, rec->vals, ncols, "gpu_name"));
	add_field(rec, &n, "cc", l->cc);
	add_field(rec, &n, "grid", l->grid);
	add_field(rec, &n, "block", l->block);
	for (k = 0; k < n_extra; k++)
		add_field(rec, &n, extra[k].key, extra[k].value);
	add_field(rec, &n, "sm_clock_hz", column_of_role(cols, rec->vals, ncols, "sm_clock_hz"));
	add_field(rec, &n, "dram_clock_hz", column_of_role(cols, rec->vals, ncols, "dram_clock_hz"));
	add_field(rec, &n, "process", l->process);
	add_field(rec, &n, "pid", l->pid);
	add_field(rec, &n, "host", l->host);
	add_field(rec, &n, "context", l->context);
	add_field(rec, &n, "stream", l->stream);
	for (k = 0; k < ncols; k++)
		if (!ncu_csv_is_device_column(cols[k].metric)) /* the device record's */
			add_field(rec, &n, cols[k].metric, rec->vals[k]);
	add_field(rec, &n, "missing", missing);
	if (*rounded)
		add_field(rec, &n, "rounded", rounded);
	rec->fields[n].key = NULL;
	rec->fields[n].value = NULL;
	return 0;
}

int ncu_csv_device_record(const struct ncu_csv *t, size_t d,
			  const struct rl_field *extra,
			  struct ncu_csv_record *rec)
{
	const struct ncu_csv_device *dev = &t->devices[d];
	const char *name = NULL;
	size_t n = 0, k, n_extra = 0, props = dev->n;

	while (extra && extra[n_extra].key)
		n_extra++;
	if (props > NCU_CSV_MAX_DEVICE_FIELDS)
		props = NCU_CSV_MAX_DEVICE_FIELDS;
	if (record_reserve(rec, 6 + n_extra + props, 32, 1))
		return -ENOMEM;
	for (k = 0; k < dev->n && !name; k++)
		if (strcmp(dev->names[k], "device__attribute_display_name") == 0)
			name = dev->values[k];
	add_field(rec, &n, "gpu_index", dev->device);
	add_field(rec, &n, "gpu_name", name);
	add_field(rec, &n, "cc", dev->cc);
	for (k = 0; k < n_extra; k++)
		add_field(rec, &n, extra[k].key, extra[k].value);
	for (k = 0; k < props; k++)
		add_field(rec, &n, dev->names[k], dev->values[k]);
	if (props < dev->n) {
		snprintf(rec->text, 32, "%zu", dev->n - props);
		add_field(rec, &n, "dropped", rec->text);
	}
	rec->fields[n].key = NULL;
	rec->fields[n].value = NULL;
	return 0;
}

void ncu_csv_record_release(struct ncu_csv_record *rec)
{
	free(rec->fields);
	free(rec->text);
	free(rec->vals);
	memset(rec, 0, sizeof(*rec));
}
