/*
 * ncu_record.h - `device` and `kernel` records from a parsed ncu CSV table
 * (libc only), as the ncu and ncu_import plugins emit them.
 *
 * A `device` record per distinct device, before the kernel records:
 * gpu_index (the Device column), gpu_name (device__attribute_display_name),
 * cc, the caller's extra fields, then every device property column the file
 * has (ncu_csv_is_device_column()) under its ncu name.
 *
 * A `kernel` record per launch: kernel (the name as ncu printed it),
 * invocation (ncu's launch ID), gpu_index, gpu_name, cc, grid, block, the
 * caller's extra fields (source, ncu_version...), sm_clock_hz and
 * dram_clock_hz (the metrics of roles sm_clock_hz/dram_clock_hz), process,
 * pid, host, context, stream, then every collected metric under its ncu name
 * with its value in ncu's base units - except device properties, which are
 * the device record's (a collected one still gives gpu_name and is still
 * listed in `missing` when absent) - then `missing` (the collected metrics
 * the launch lacks, comma-separated) and, when a value was printed with a
 * unit prefix and converted, `rounded` (those metrics: ncu rounded them).
 *
 * Ownership: a struct ncu_record owns its scratch arrays only.  Its fields
 * borrow from the parsed table (struct ncu_csv), the caller's columns and
 * extra fields, and its own scratch: they are valid until the next fill of
 * the same record, ncu_record_release(), or the table's ncu_csv_free(),
 * whichever comes first.  Filling never changes the table.
 */
#ifndef ROOFLINE_NCU_RECORD_H
#define ROOFLINE_NCU_RECORD_H

#include <stddef.h>

#include "ncu_csv.h"
#include "rooflined/plugin.h" /* struct rl_field */

/* A collected metric: where the parsed table holds it, and its role. */
struct ncu_record_column {
	const char *metric; /* borrowed */
	const char *role;   /* borrowed, may be NULL */
	size_t slot;        /* index into the parsed table's values, or
	                       (size_t)-1 when the parse did not select it */
};

struct ncu_record {
	struct rl_field *fields; /* NULL-terminated; strings borrowed from the
	                            table, the columns or text below */
	size_t cap;
	char *text;              /* owned scratch for converted values, lists */
	size_t text_cap;
	const char **vals;       /* owned scratch: each column's final value */
	size_t vals_cap;
};

/*
 * Fill rec (zeroed by the caller before first use, reused across launches)
 * with launch i's record (i < t->n_launches).  extra: fields to add after
 * the identity (NULL-terminated, borrowed; may be NULL).  0 or -ENOMEM.
 */
int ncu_record_kernel(const struct ncu_csv *t, size_t i,
		      const struct ncu_record_column *cols, size_t ncols,
		      const struct rl_field *extra, struct ncu_record *rec);

/*
 * Fill rec with device d's record (d < t->n_devices).  extra: fields to add
 * after gpu_index, gpu_name and cc (NULL-terminated, borrowed; may be NULL).
 * At most NCU_RECORD_MAX_DEVICE_FIELDS properties are written (a records
 * line holds at most 512 fields); `dropped` counts any left out.  0 or
 * -ENOMEM.
 */
#define NCU_RECORD_MAX_DEVICE_FIELDS 480
int ncu_record_device(const struct ncu_csv *t, size_t d,
		      const struct rl_field *extra, struct ncu_record *rec);

/* Free rec's scratch and zero it (ready for reuse). */
void ncu_record_release(struct ncu_record *rec);

#endif
