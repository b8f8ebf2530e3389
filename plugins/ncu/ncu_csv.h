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
 * The file is parsed in place in one buffer that the parsed table (struct
 * ncu_csv) owns; all strings handed out point into it and live until
 * ncu_csv_free().  The caller's metric names and the input's name are
 * borrowed for the parse only.
 *
 * Related modules: ncu_table.h chooses the metrics to select (the metric
 * table), ncu_record.h turns a parsed table into `device` and `kernel`
 * records, ncu_value.h parses the kept values; ncu_text.h and strmap.h are
 * this reader's building blocks.
 */
#ifndef ROOFLINE_NCU_CSV_H
#define ROOFLINE_NCU_CSV_H

#include <stdbool.h>
#include <stddef.h>

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
 * (err says so, naming the path).  The path names the input in messages.
 */
int ncu_csv_read_file(const char *path, const char *const *metrics,
		      size_t n_metrics, struct ncu_csv **out, char *err,
		      size_t errlen);

/* Free t, its buffer and everything it handed out (NULL: nothing). */
void ncu_csv_free(struct ncu_csv *t);

/*
 * True when a column of that name is a property of the device rather than
 * of the launch: it starts with "device__", "nvlink__", "numa__" or
 * "c2clink__" and is a metric name ([A-Za-z0-9_.] only).
 */
bool ncu_csv_is_device_column(const char *name);

#endif
