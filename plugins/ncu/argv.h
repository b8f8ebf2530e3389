/*
 * argv.h - the ncu plugin's command line (plugins/ncu.c runs it):
 *
 *   ncu --clock-control none --print-units base --csv --page raw
 *       --metrics SET [-k regex:K] [--launch-skip N] [--launch-count N]
 *       [--nvtx --nvtx-include R] --log-file OUT/ncu.csv -- PROGRAM ARGS...
 *
 * (with --kernel-name-base B before -k when cfg->kernel_name_base is set).
 * An argv_buf is a NULL-terminated argv under construction.  It borrows the
 * strings given to argv_add() (they must outlive it) and owns those given
 * to argv_add_owned(); argv_release() frees what it owns.  Nothing here is
 * exported from the .so (-fvisibility=hidden).
 */
#ifndef ROOFLINE_NCU_ARGV_H
#define ROOFLINE_NCU_ARGV_H

#include <stddef.h>

#include "ncu_table.h"
#include "rooflined/plugin.h"

/* The plugin's options (plugins/ncu.c has their table). */
struct ncu_config {
	struct rl_strlist command;
	struct rl_strlist kernels;
	long launch_skip;
	long launch_count;
	char *nvtx_include;
	char *metrics_table;
	char *arch;
	char *ncu;
	struct rl_strlist extra;
	long device;    /* -1: the GPUs as given; else one of them (gpus.h) */
	struct rl_strlist ranks; /* steps with `tasks`: ranks to profile
	                            (launch.h); none: rank 0 */
	int adaptive;   /* the targeted second pass for uncounted tensor work */
	struct rl_strlist instruction_kernels; /* regexes: the instruction pass */
	/* Not an option: NULL, or "demangled" for the targeted second pass,
	 * whose kernel regexes match the full names ncu printed (adapt.h). */
	const char *kernel_name_base;
};

struct argv_buf {
	char **v;       /* NULL-terminated once anything was added */
	size_t n, cap;
	char *owned[8]; /* strings built here, freed with the argv */
	size_t n_owned;
};

/* Append s (borrowed).  0 or -ENOMEM. */
int argv_add(struct argv_buf *a, const char *s);

/* Append s, which the argv then owns (freed with it, or now on failure);
 * s NULL (an allocation that failed) or no room left: -ENOMEM. */
int argv_add_owned(struct argv_buf *a, char *s);

/* Free the array and the owned strings; a is zeroed, ready for reuse. */
void argv_release(struct argv_buf *a);

/* "m1,m2,..." of the selected rows' metrics; caller frees.  NULL: ENOMEM. */
char *argv_metric_list(const struct ncu_table_row *const *sel, size_t n);

/*
 * Append the whole ncu command line to a (empty, zeroed): ncu (a path),
 * the fixed options, --metrics metrics, the filters cfg asks for, --log-file
 * log_path, then program (a path) and cfg->command's arguments after its
 * first.  Borrows ncu, program, metrics, log_path and cfg's strings.  0 or
 * -ENOMEM (a is left for argv_release()).
 */
int argv_build(struct argv_buf *a, const struct ncu_config *cfg,
	       const char *ncu, const char *program, const char *metrics,
	       const char *log_path);

/* The command line as one string, shell-quoted where it needs to be, for
 * the summary record and the log; caller frees.  NULL: out of memory. */
char *argv_text(char *const *v);

#endif
