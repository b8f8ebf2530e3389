/*
 * ncu_record.c - `device` and `kernel` records of a parsed ncu CSV table
 * (see ncu_record.h).
 *
 * A record is refilled per launch and its scratch arrays only grow, so a
 * caller that reuses one record allocates once, not once per launch.
 */
#include "ncu_record.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncu_value.h"

static int record_reserve(struct ncu_record *rec, size_t fields,
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

static void add_field(struct ncu_record *rec, size_t *n, const char *key,
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
				const struct ncu_record_column *col, char **num,
				bool *rounded)
{
	const char *v, *unit, *base;
	double d;

	*rounded = false;
	if (col->slot == (size_t)-1 || !l->values || !(v = l->values[col->slot]))
		return NULL;
	unit = l->units[col->slot];
	if (!has_prefix(unit) || ncu_value_to_base(unit, v, &d, &base) != 1)
		return v;
	*rounded = true;
	v = *num;
	*num += snprintf(*num, 32, "%.17g", d) + 1;
	return v;
}

static const char *column_of_role(const struct ncu_record_column *cols,
				  const char **vals, size_t ncols,
				  const char *role)
{
	size_t i;

	for (i = 0; i < ncols; i++)
		if (cols[i].role && strcmp(cols[i].role, role) == 0)
			return vals[i];
	return NULL;
}

int ncu_record_kernel(const struct ncu_csv *t, size_t i,
		      const struct ncu_record_column *cols, size_t ncols,
		      const struct rl_field *extra,
		      struct ncu_record *rec)
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

int ncu_record_device(const struct ncu_csv *t, size_t d,
		      const struct rl_field *extra,
		      struct ncu_record *rec)
{
	const struct ncu_csv_device *dev = &t->devices[d];
	const char *name = NULL;
	size_t n = 0, k, n_extra = 0, props = dev->n;

	while (extra && extra[n_extra].key)
		n_extra++;
	if (props > NCU_RECORD_MAX_DEVICE_FIELDS)
		props = NCU_RECORD_MAX_DEVICE_FIELDS;
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

void ncu_record_release(struct ncu_record *rec)
{
	free(rec->fields);
	free(rec->text);
	free(rec->vals);
	memset(rec, 0, sizeof(*rec));
}
