/*
 * adapt.h - the ncu plugin's targeted second pass (docs/collect.md,
 * "Adaptive collection").
 *
 * The default set leaves tensor datapaths out (fp16, tf32, fp8, int8 on the
 * H100: each costs 1-3 replay passes).  A launch whose tensor witness
 * (role tensor_inst, sm__inst_executed_pipe_tensor.sum) is non-zero while
 * none of the collected datapaths counted anything did tensor work that
 * the first pass could not attribute (or only HFMA2.MMA register moves).
 * Those launches alone are profiled again, with the datapaths the first
 * pass lacked, tensor_inst_hfma2 (which tells the moves apart) and the
 * passes row; the second pass's values join the first pass's record of the
 * same launch, matched by kernel name and invocation (the n-th launch of a
 * kernel in one pass is the n-th in the other: the program is run again
 * with the same arguments).  Launches without tensor work keep the first
 * pass's metrics and passes.
 *
 * Nothing here runs a process; plugins/ncu.c runs the passes.  Arrays are
 * malloc'd and the caller frees them; strings are borrowed from the table
 * or the parsed CSV unless said otherwise.  Nothing here is exported from
 * the .so (-fvisibility=hidden).
 */
#ifndef ROOFLINE_NCU_ADAPT_H
#define ROOFLINE_NCU_ADAPT_H

#include <stdbool.h>
#include <stddef.h>

#include "ncu_csv.h"
#include "ncu_record.h"
#include "ncu_table.h"
#include "rooflined/plugin.h"

/*
 * The rows of the second pass on arch: every tensor-datapath row (all of a
 * datapath's parts) that the selection with these extra names lacks, then
 * the tensor_inst_hfma2 row and the passes row when the arch has them and
 * the selection lacks them.  Returns the count (0: no datapath is missing,
 * no second pass) or -ENOMEM; *out is a malloc'd array (caller frees).
 */
long adapt_rows(const struct ncu_table *t, const char *arch,
		const char *const *extra, size_t n_extra,
		const struct ncu_table_row ***out);

/*
 * The rows of a second pass that collects one set of the table (the
 * Instruction Roofline's, NCU_TABLE_SET_INSTRUCTION) on arch: that set's
 * rows, then the passes row.  Count (0: the arch has none of the set) or
 * -ENOMEM; *out malloc'd.
 */
long adapt_rows_set(const struct ncu_table *t, const char *arch, const char *set,
		    const struct ncu_table_row ***out);

/*
 * Mark the launches whose kernel name (as ncu printed it) matches one of
 * the POSIX extended regexes re (the ncu option instruction_kernels).
 * Returns how many, or -EINVAL when a regex does not compile (err gets
 * "'RE': why", size bytes).
 */
long adapt_mark_names(const struct ncu_csv *t, const struct rl_strlist *re, bool *need,
		      char *err, size_t size);

/*
 * Mark the launches of the first pass (t, with its columns) that need the
 * second: the tensor_inst value is a number > 0 and no column of a
 * datapath role holds a number > 0.  need has t->n_launches entries.
 * Returns how many were marked.
 */
size_t adapt_mark(const struct ncu_csv *t, const struct ncu_record_column *cols,
		  size_t ncols, bool *need);

/*
 * The kernels option of the second pass: one regex per distinct name of
 * the marked launches, "^NAME$" with NAME's regex characters escaped, to
 * be matched against ncu's demangled names (--kernel-name-base demangled);
 * a leading "void " (a template kernel's return type, which ncu prints but
 * does not match) becomes optional: "^(void )?f<1>\(int\)$".
 * out->v and each string are malloc'd: free with adapt_list_release().
 * 0 or -ENOMEM.
 */
int adapt_kernel_list(const struct ncu_csv *t, const bool *need,
		      struct rl_strlist *out);

void adapt_list_release(struct rl_strlist *l);

/* Escape the ECMAScript regex characters of s ("a(b)*" -> "a\(b\)\*")
 * into buf (size >= 2 * strlen(s) + 1).  Returns buf. */
char *adapt_regex_escape(const char *s, char *buf);

/*
 * The launch of p2 that is launch i of p1: the same kernel name and the
 * same invocation of it (the k-th launch of that name in p1 is the k-th in
 * p2).  Returns its index, or -1 when p2 has no such launch.
 */
long adapt_match(const struct ncu_csv *p1, size_t i, const struct ncu_csv *p2);

#endif
