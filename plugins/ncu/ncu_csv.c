/*
 * ncu_csv.c - reader for Nsight Compute's CSV exports (see ncu_csv.h).
 *
 * One pass over the buffer: fields are found with memchr, unquoted in place
 * and NUL-terminated where they are kept; fields of columns nobody selected
 * are only skipped.  That keeps 100,000 launches of a 365-column raw page
 * well under a second.  Device property columns (ncu_csv_is_device_column)
 * are kept only from a row whose device has not been seen yet: the raw page
 * repeats them in every row, the table holds them once per device.  Fields
 * and lines: ncu_text.c; numbers: ncu_value.c; name/ID lookups: strmap.c.
 */
#include "ncu_csv.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncu_text.h"
#include "ncu_value.h"
#include "strmap.h"

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

/* A parsed row: identity fields and, for details, the metric triple. */
struct row {
	char *ident[N_IDENT];
	char *mname, *munit, *mvalue;
	char *mvalue_at;
	long line;
	char *line_start;
};

struct parser {
	struct ncu_text_cursor c;
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

/* ---- values ------------------------------------------------------------- */

/*
 * Normalise a kept metric value in place: NULL when missing, separators
 * dropped from numbers; text is allowed only for metrics without a unit.
 */
static int keep_value(struct parser *ps, char *v, char *at, size_t slot,
		      const char *unit, const char **out)
{
	bool commas;

	if (ncu_value_is_missing(v)) {
		*out = NULL;
		return 0;
	}
	if (ncu_value_is_number(v, &commas)) {
		if (commas)
			ncu_value_drop_commas(v);
	} else if (unit && *unit) {
		return ncu_text_fail(&ps->c, at, "metric '%s' (%s): value '%s' is not a number",
				     ps->metrics[slot], unit, v);
	}
	*out = v;
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

/* Add a property to dev unless it has it (details: a name in two sections). */
static int device_add(struct ncu_csv_device *dev, const char *name, char *value,
		      bool check)
{
	const char *v = ncu_value_clean(value); /* a device property's */
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

	return ncu_text_fail(&ps->c, at,
			     "launch %s '%s' has no value for any of the %zu selected metrics "
			     "(a kernel ncu could not profile?)",
			     l->id ? l->id : "?", l->kernel ? l->kernel : "?",
			     ps->n_metrics);
}


/*
 * Handle a line that is not CSV ("==PROF== ...", program output).  Returns
 * 1 when it was skipped, 0 when it is CSV, -EINVAL for an ==ERROR== line or
 * (after the header) anything but an ncu message.
 */
static int skip_message(struct parser *ps, bool in_table)
{
	struct ncu_text_cursor *c = &ps->c;

	if (ncu_text_starts_with(c->p, c->end, "==ERROR=="))
		return ncu_text_fail(c, c->p, "ncu reported an error: %.*s",
				     ncu_text_line_len(c), c->p);
	if (ncu_text_starts_with(c->p, c->end, "==WARNING==")) {
		ps->last_warning = c->p;
		ps->last_warning_line = c->line;
	}
	if (ncu_text_starts_with(c->p, c->end, "==")) {
		ncu_text_next_line(c);
		return 1;
	}
	if (*c->p == '\n' || *c->p == '\r') {
		ncu_text_next_line(c);
		return 1;
	}
	if (in_table)
		return 0;
	if (*c->p == '"' && ncu_text_starts_with(c->p, c->end, "\"ID\","))
		return 0;
	ps->t->skipped_lines++;
	ncu_text_next_line(c);
	return 1;
}

/* ---- header ------------------------------------------------------------- */

static int read_header(struct parser *ps)
{
	struct ncu_text_cursor *c = &ps->c;
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
		r = ncu_text_field(c, 1, &f);
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
			return ncu_text_fail(&ps->c, header_at,
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
static void back_to_row(struct ncu_text_cursor *c, const struct row *r)
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
	struct ncu_text_cursor *c = &ps->c;
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
		end = ncu_text_field(c, role != COL_SKIP || (dev >= 0 && want), &f);
		if (end < 0)
			return end;
		if (dev >= 0 && want)
			dvals[dev] = f;
		if (end && col + 1 < ps->ncols) {
			back_to_row(c, r);
			return ncu_text_fail(c, c->p > start ? c->p - 1 : c->p,
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
		return ncu_text_fail(c, extra_at, "row has more fields than the header's %zu",
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
	struct ncu_text_cursor *c = &ps->c;
	size_t idx, i, n = ps->n_metrics;
	char *first_at = NULL;
	int err;

	if (!r->ident[IDENT_ID] || !*r->ident[IDENT_ID])
		return ncu_text_fail(c, r->line_start, "row without a launch ID");
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
	struct ncu_text_cursor *c = &ps->c;
	size_t idx, slot, n = ps->n_metrics;
	int err;

	if (!r->ident[IDENT_ID] || !*r->ident[IDENT_ID])
		return ncu_text_fail(c, r->line_start, "row without a launch ID");
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
	struct ncu_text_cursor *c = &ps->c;
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
		return ncu_text_fail(c, c->p, "no CSV table: %.*s",
				     ncu_text_line_len(c), c->p);
	}
	return ncu_text_fail(c, c->p, "no CSV table (no header line starting with \"ID\",)");
}

static int read_rows(struct parser *ps)
{
	struct ncu_text_cursor *c = &ps->c;
	size_t n = ps->n_metrics ? ps->n_metrics : 1;
	char **vals = calloc(n, sizeof(char *)), **at = calloc(n, sizeof(char *));
	char **dvals = calloc(ps->n_dev_cols + 1, sizeof(char *));
	bool first = true;
	struct ncu_text_cursor next;
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
	struct ncu_text_cursor header, after;
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
	ncu_text_init(&ps.c, buf, len, name, err, errlen);
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

int ncu_csv_read_file(const char *path, const char *const *metrics,
		      size_t n_metrics, struct ncu_csv **out, char *err,
		      size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int ret = ncu_text_read_file(path, &buf, &len);

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
