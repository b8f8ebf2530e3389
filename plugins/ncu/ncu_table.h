/*
 * ncu_table.h - the metric table (etc/ncu-metrics.tsv): which ncu metric
 * gives which role on which GPU architecture (libc only).
 *
 * TAB-separated rows: arch, metric, role, factor, set, note (see the file's
 * header).  Loading validates every row: arch "*" or a compute capability
 * without the dot, a metric name of [A-Za-z0-9_.], a known role, a positive
 * factor (2 for flop_*_fma, 1 for other flop_* roles), set "default",
 * "extra" or "instruction", no role twice for one arch except a tensor
 * datapath (tensor_fp64, _fp16, _bf16, _tf32, _fp8, _int8) or an
 * instruction-roofline role (inst_*, txn_*), whose rows are parts that add
 * up (all in one set), and no metric twice for one arch; errors read
 * "path:line:col: why".
 * Lines starting with '#' and empty lines are skipped.
 *
 * Ownership: a struct ncu_table owns its text; every string of its rows
 * points into it and lives until ncu_table_free().  Selections and name
 * lists are malloc'd arrays of pointers into the table: the caller frees the
 * array, never the strings, and drops it before freeing the table.
 *
 * Used by the ncu plugin (the set to collect), ncu_import (every metric the
 * table knows), and the hierarchical plugin and roofline_math (roles).
 */
#ifndef ROOFLINE_NCU_TABLE_H
#define ROOFLINE_NCU_TABLE_H

#include <stdbool.h>
#include <stddef.h>

/* The set of the Instruction Roofline's rows (inst_*, txn_* roles): taken
 * only when the extra names include it ("all" does not). */
#define NCU_TABLE_SET_INSTRUCTION "instruction"

/* Size of the error buffer callers should pass. */
#define NCU_TABLE_ERRLEN 512

/* One row; every string borrowed from the table's text. */
struct ncu_table_row {
	const char *arch;   /* "*" or "90" */
	const char *metric;
	const char *role;
	const char *factor; /* as written */
	const char *set;    /* "default" or "extra" */
	long line;
};

struct ncu_table {
	char *buf; /* owned: the file's text; the rows point into it */
	struct ncu_table_row *rows;
	size_t n;
};

/*
 * Parse a table held in buf (len bytes, buf[len] == '\0'; malloc'd: takes
 * ownership whatever the result).  `name` names it in messages (borrowed).
 * On success *out gets a table the caller frees with ncu_table_free() and 0
 * is returned; otherwise -EINVAL (err gets "name:line:col: why"; a table
 * without rows is an error too) or -ENOMEM, and *out is NULL.
 */
int ncu_table_parse(char *buf, size_t len, const char *name,
		    struct ncu_table **out, char *err, size_t errlen);

/* Read and parse the table at path; -errno when it cannot be read (err says
 * so, naming the path). */
int ncu_table_load(const char *path, struct ncu_table **out, char *err,
		   size_t errlen);

/* Free t and its text (NULL: nothing). */
void ncu_table_free(struct ncu_table *t);

/* True when the table has rows of its own for arch (not only "*" rows). */
bool ncu_table_has_arch(const struct ncu_table *t, const char *arch);

/*
 * The rows that apply to arch ("90"): its own rows, and the "*" rows of
 * roles it does not override.  Rows of set "extra" only when their role is
 * one of the n_extra names in extra, or extra holds "all"; rows of set
 * "instruction" only when extra holds "instruction".  In table order.
 * *out is a malloc'd array (caller frees) of pointers into t.  Returns the
 * count, or -ENOMEM.
 */
long ncu_table_select(const struct ncu_table *t, const char *arch,
		      const char *const *extra, size_t n_extra,
		      const struct ncu_table_row ***out);

/* True when role is a role of some "extra" row of the table, or is
 * "instruction" and the table has rows of that set. */
bool ncu_table_has_extra_role(const struct ncu_table *t, const char *role);

/* Every distinct metric name of the table (all archs and sets), malloc'd
 * array of borrowed strings.  Returns the count, or -ENOMEM. */
long ncu_table_names(const struct ncu_table *t, const char ***out);

/* True for the roles of tensor datapaths: tensor_fp64, _fp16, _bf16, _tf32,
 * _fp8, _int8 (not tensor_inst*). */
bool ncu_table_is_datapath(const char *role);

/*
 * The tensor datapaths arch has rows for (any set) that a selection with
 * these extra roles would not collect: their names without "tensor_"
 * ("fp16,tf32"), comma-separated, into buf (size bytes, truncated; may be
 * 0).  Returns how many, or (size_t)-1 when out of memory.
 */
size_t ncu_table_datapaths(const struct ncu_table *t, const char *arch,
			   const char *const *extra, size_t n_extra,
			   char *buf, size_t size);

/* The table's arch of a compute capability: "9.0" -> "90" into buf
 * (size >= 8); false when cc is not "D.D" or "DD.D" (NULL included). */
bool ncu_table_arch_of_cc(const char *cc, char *buf, size_t size);

#endif
