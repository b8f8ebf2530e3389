/*
 * records.h - the one text format in which steps hand data over.
 *
 * A record is a kind plus ordered key/value text fields.  A file of records
 * has one per line:
 *
 *     kind<TAB>key=value<TAB>key=value...<LF>
 *
 * Kinds and keys are [A-Za-z0-9_.:-]+ (ncu metric names fit).  In values,
 * backslash, TAB, LF and CR are written as \\, \t, \n and \r; nothing else is
 * escaped, so the files stay readable with grep and awk.  The daemon writes a
 * step's parameters in this format (params.tsv), a plugin's results reach
 * records.tsv through the host, and the job's exit record is exit.tsv.
 */
#ifndef ROOFLINE_RECORDS_H
#define ROOFLINE_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "rooflined/plugin.h"
#include "strbuf.h"

#define RECORDS_MAX_FIELDS 512

/* True when s is a valid kind or key. */
bool records_name_is_valid(const char *s);

/*
 * Append one record line (with its LF) to sb.  -EINVAL when the kind or a key
 * is invalid or a field lacks a value; sb is unchanged then.
 */
int records_format(struct strbuf *sb, const char *kind,
		   const struct rl_field *fields);

/*
 * Parse one line in place (line has no LF; it is modified: escapes are
 * decoded and fields split).  On success *kind points into line and fields[]
 * (room for max entries, the last one used for the NULL terminator) into
 * line too.  Returns the number of fields, or -EINVAL (bad syntax: *col gets
 * the 1-based column of the fault) or -E2BIG.
 */
int records_parse_line(char *line, const char **kind, struct rl_field *fields,
		       size_t max, size_t *col);

/* Callback for records_each: return nonzero to stop (that value is returned). */
typedef int (*records_fn)(void *arg, const char *kind,
			  const struct rl_field *fields);

/*
 * Call fn for each record of `kind` (NULL: every kind) in the file at path.
 * Returns 0, fn's nonzero value, or -errno; on a syntax error, -EINVAL with
 * "path:line:col: why" appended to err (when err is not NULL).
 */
int records_each(const char *path, const char *kind, records_fn fn, void *arg,
		 struct strbuf *err);

/* The same over an open stream (read to its end in chunks of 256 KiB, parsed
 * in place; not closed), with the default limits (records_each_limited). */
int records_each_stream(FILE *in, const char *name, const char *kind,
			records_fn fn, void *arg, struct strbuf *err);

/* The longest line any stream reader takes, LF excluded: a line buffers
 * whole, so without a bound one line without a newline would take all
 * memory. */
#define RECORDS_LINE_MAX (64u << 20)

/* What a reader takes at most of a file it does not trust.  0: no limit
 * (for max_line: RECORDS_LINE_MAX, which is also the most it can be). */
struct records_limits {
	size_t max_bytes;   /* bytes read in all */
	size_t max_line;    /* bytes of one line, LF excluded */
	size_t max_records; /* lines (every line is a record) */
};

/*
 * records_each_stream within lim (NULL: the defaults).  Past a limit the
 * reader stops before handing on the line that crossed it (the records
 * before it were handed on) and returns -EFBIG (max_bytes), -EMSGSIZE
 * (max_line) or -E2BIG (max_records), with "name: more than N bytes",
 * "name:LINE: line longer than N bytes" or "name: more than N records"
 * appended to err.
 */
int records_each_limited(FILE *in, const char *name, const char *kind,
			 const struct records_limits *lim, records_fn fn,
			 void *arg, struct strbuf *err);

/*
 * The same over a buffer in memory (modified in place); `name` is used in
 * error messages.
 */
int records_each_in(char *buf, const char *name, const char *kind,
		    records_fn fn, void *arg, struct strbuf *err);

#endif
