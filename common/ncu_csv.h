/*
 * ncu_csv.h - reader for Nsight Compute's CSV exports (libc only).
 *
 * Reads the two layouts that `ncu --csv` prints, live or from a report
 * (`ncu -i x.ncu-rep --csv`):
 *
 *   raw      (--page raw): a header row of column names, a units row, then
 *            one row per profiled kernel launch with one column per metric;
 *   details  (--page details, ncu's default): one row per launch and metric,
 *            with "Metric Name", "Metric Unit" and "Metric Value" columns.
 *
 * Both start with the launch's identity columns ("ID", "Process ID",
 * "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
 * "Block Size", "Grid Size", "Device", "CC").  Fields are RFC 4180 CSV:
 * quoted, "" for a quote inside a field, commas and parentheses inside kernel
 * names.  Lines before the header that are not CSV - ncu's own "==PROF==" and
 * "==WARNING==" lines, the profiled program's output when it shares ncu's
 * stream - are skipped and counted; "==WARNING=="/"==PROF==" lines after it
 * are skipped too.  These are errors, reported as "NAME:LINE:COL: what":
 * an "==ERROR==" line anywhere; no header; a row whose field count differs
 * from the header's; an unterminated quote or text after a closing quote (a
 * truncated or damaged file); a launch without any value of the selected
 * metrics (a kernel ncu could not profile); a value that is not a number
 * where the metric has a unit.  On any error nothing is returned: a caller
 * never sees half a profile.
 *
 * Values: the caller selects the metrics it wants by name; for each launch
 * the reader keeps their text, with ncu's thousands separators removed
 * ("1,234,567" becomes "1234567"), otherwise exactly as printed.  "n/a" and
 * empty values, and metrics the file lacks, are NULL: the caller records them
 * as missing.
 *
 * Device properties: a column whose name starts with "device__" (the GPU's
 * attributes, device__attribute_*), "nvlink__", "numa__" or "c2clink__" (its
 * links and NUMA placement) describes the GPU, not the launch: the raw page
 * repeats the same ~190 of them in every row (ncu_csv_is_device_column()).
 * The reader keeps them once per distinct device (the Device column): the
 * values of the first launch on it (on the details page, that launch's rows
 * of such metrics, if any), in struct ncu_csv_device.  Everything
 * else with "__" in its name (metrics, launch__*, profiler__*) belongs to the
 * launch.
 *
 * The file is parsed in place in one buffer that the table owns; all strings
 * handed out point into it and live until ncu_csv_free().
 */
#ifndef ROOFLINE_NCU_CSV_H
#define ROOFLINE_NCU_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "rooflined_plugin.h" /* struct rl_field */

enum ncu_csv_layout {
	NCU_CSV_RAW = 1,
	NCU_CSV_DETAILS,
};

/* One profiled kernel launch. */
struct ncu_csv_launch {
	/* Identity columns; NULL when the file has no such column. */
	const char *id;       /* ncu's launch ID */
	const char *kernel;   /* the kernel name exactly as ncu printed it */
	const char *pid;
	const char *process;
	const char *host;
	const char *context;
	const char *stream;
	const char *block;    /* "(256, 1, 1)" */
	const char *grid;
	const char *device;   /* ncu's device index */
	const char *cc;       /* "9.0" */
	size_t device_index;  /* its device: the table's devices[device_index] */
	/* [n_metrics] in the caller's order: value text or NULL (missing). */
	const char **values;
	/* [n_metrics]: the unit text ("" for none) or NULL when missing. */
	const char **units;
	long line;            /* 1-based line of the (first) row in the file */
};

/* One distinct device (GPU) of the launches, from the first launch on it. */
struct ncu_csv_device {
	const char *device;   /* the Device column (ncu's index); NULL: no column */
	const char *cc;       /* the CC column, or NULL */
	const char **names;   /* [n] device property columns, in file order */
	const char **values;  /* [n] their values (text, thousands separators
	                         removed); properties printed n/a or empty are
	                         left out */
	size_t n, cap;        /* cap: the reader's */
	size_t first_launch;  /* index of the first launch on it */
};

struct ncu_csv {
	char *buf;                 /* owned: the file, parsed in place */
	enum ncu_csv_layout layout;
	size_t n_metrics;          /* the selection's length */
	size_t n_launches;
	struct ncu_csv_launch *launches;
	size_t skipped_lines;      /* non-CSV lines (ncu messages, program output) */
	size_t n_devices;          /* distinct Device values, in order of appearance */
	struct ncu_csv_device *devices;
	/* storage behind the launches' values/units (owned) */
	const char **value_store;
	const char **unit_store;
};

/* Size of the error buffer callers should pass. */
#define NCU_CSV_ERRLEN 512

/*
 * Parse an export held in buf (len bytes, buf[len] == '\0').  Takes
 * ownership of buf (malloc'd) whatever the result.  `name` names the input in
 * messages (borrowed).  `metrics` are the n_metrics metric names to keep
 * (borrowed; n_metrics may be 0: then every launch must still be a valid row,
 * and no launch is checked for values).  On success *out gets a table that
 * the caller frees with ncu_csv_free() and 0 is returned; otherwise -EINVAL
 * (bad content; err gets "name:line:col: why") or -ENOMEM, and *out is NULL.
 */
int ncu_csv_parse(char *buf, size_t len, const char *name,
		  const char *const *metrics, size_t n_metrics,
		  struct ncu_csv **out, char *err, size_t errlen);

/*
 * Read the file at path and parse it as above; -errno when it cannot be read
 * (err says so, naming the path).
 */
int ncu_csv_read_file(const char *path, const char *const *metrics,
		      size_t n_metrics, struct ncu_csv **out, char *err,
		      size_t errlen);

void ncu_csv_free(struct ncu_csv *t);

/*
 * Convert a value printed in unit `unit` to ncu's base unit of that kind
 * (bytes, ns, hz, byte/second, ...), e.g. "4.61" Kbyte -> 4610 byte, as
 * `ncu --print-units base` would have printed it.  *base gets the base unit's
 * name (static).  Returns 0, 1 when a conversion was applied (the value had a
 * prefix: ncu rounded it, so it is less exact than a base-unit export), or
 * -EINVAL when the value is not a number.  Unknown units pass unchanged (0).
 */
int ncu_csv_to_base(const char *unit, const char *value, double *out,
		    const char **base);

/* Parse a value the reader kept (no separators) as a double; 0 or -EINVAL. */
int ncu_csv_number(const char *text, double *out);

/*
 * True when a column of that name is a property of the device rather than
 * of the launch: it starts with "device__", "nvlink__", "numa__" or
 * "c2clink__" and is a metric name ([A-Za-z0-9_.] only).
 */
bool ncu_csv_is_device_column(const char *name);

/* ---- the metric table (etc/ncu-metrics.tsv) ------------------------------
 *
 * TAB-separated rows: arch, metric, role, factor, set, note (see the file's
 * header).  Loading validates every row: arch "*" or a compute capability
 * without the dot, a metric name of [A-Za-z0-9_.], a known role, a positive
 * factor (2 for flop_*_fma, 1 for other flop_* roles), set "default" or
 * "extra", and no role twice for one arch; errors read "path:line:col: why".
 */
struct ncu_csv_metric {
	const char *arch;   /* "*" or "90" */
	const char *metric;
	const char *role;
	const char *factor; /* as written */
	const char *set;    /* "default" or "extra" */
	long line;
};

struct ncu_csv_table {
	char *buf; /* owned: the file's text; the rows point into it */
	struct ncu_csv_metric *rows;
	size_t n;
};

/* Parse a table held in buf (takes ownership).  0, -EINVAL or -ENOMEM. */
int ncu_csv_table_parse(char *buf, size_t len, const char *name,
			struct ncu_csv_table **out, char *err, size_t errlen);

/* Read and parse the table at path; -errno when it cannot be read. */
int ncu_csv_table_load(const char *path, struct ncu_csv_table **out,
		       char *err, size_t errlen);

void ncu_csv_table_free(struct ncu_csv_table *t);

/* True when the table has rows of its own for arch (not only "*" rows). */
bool ncu_csv_table_has_arch(const struct ncu_csv_table *t, const char *arch);

/*
 * The rows that apply to arch ("90"): its own rows, and the "*" rows of
 * roles it does not override.  Rows of set "extra" only when their role is
 * one of the n_extra names in extra, or extra holds "all".  In table order.
 * *out is a malloc'd array (caller frees) of pointers into t.  Returns the
 * count, or -ENOMEM.
 */
long ncu_csv_table_select(const struct ncu_csv_table *t, const char *arch,
			  const char *const *extra, size_t n_extra,
			  const struct ncu_csv_metric ***out);

/* True when role is a role of some "extra" row of the table. */
bool ncu_csv_table_has_extra_role(const struct ncu_csv_table *t,
				  const char *role);

/* Every distinct metric name of the table (all archs and sets), malloc'd
 * array of borrowed strings.  Returns the count, or -ENOMEM. */
long ncu_csv_table_names(const struct ncu_csv_table *t, const char ***out);

/* "9.0" -> "90" into buf (size >= 8); false when cc is not "D.D" or "DD.D". */
bool ncu_csv_arch_of_cc(const char *cc, char *buf, size_t size);

/* ---- kernel records -------------------------------------------------------
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
 */
struct ncu_csv_column {
	const char *metric; /* borrowed */
	const char *role;   /* borrowed, may be NULL */
	size_t slot;        /* index into the parsed table's values, or
	                       (size_t)-1 when the parse did not select it */
};

struct ncu_csv_record {
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
 * with launch i's record.  extra: fields to add after the identity (NULL-
 * terminated, borrowed; may be NULL).  0 or -ENOMEM.
 */
int ncu_csv_kernel_record(const struct ncu_csv *t, size_t i,
			  const struct ncu_csv_column *cols, size_t ncols,
			  const struct rl_field *extra,
			  struct ncu_csv_record *rec);

/*
 * Fill rec with device d's record (d < t->n_devices).  extra: fields to add
 * after gpu_index, gpu_name and cc (NULL-terminated, borrowed; may be NULL).
 * At most NCU_CSV_MAX_DEVICE_FIELDS properties are written (a records line
 * holds at most 512 fields); `dropped` counts any left out.  0 or -ENOMEM.
 */
#define NCU_CSV_MAX_DEVICE_FIELDS 480
int ncu_csv_device_record(const struct ncu_csv *t, size_t d,
			  const struct rl_field *extra,
			  struct ncu_csv_record *rec);

void ncu_csv_record_release(struct ncu_csv_record *rec);

#endif
