/*
 * gp_exec.h - find and run gnuplot: fork/exec with an argv, never a shell.
 *
 * Part of the gnuplot plugin (plugins/gnuplot.c), linked into gnuplot.so and
 * its test.  libc only.
 */
#ifndef ROOFLINE_GP_EXEC_H
#define ROOFLINE_GP_EXEC_H

#include <stddef.h>

/*
 * The program `name` as a path into out (cap bytes): name itself when it
 * holds a '/', else the first executable file of that name in $PATH.
 * 0, -ENOENT (not found), -EACCES (found, not executable) or -ENAMETOOLONG.
 */
int gp_exec_find(const char *name, char *out, size_t cap);

/*
 * Run `prog -d script` (no init files) in directory dir, stdin and stdout
 * /dev/null, stderr into dir/log_name; kill it after timeout_s seconds.
 * Returns the exit status (0-255), 128 + signal when it died of one,
 * -ETIMEDOUT when it was killed for time, or -errno when it could not run.
 * err (cap bytes) gets the first non-blank line of the log (empty when
 * gnuplot said nothing), or what went wrong when it could not run.
 */
int gp_exec_run(const char *prog, const char *dir, const char *script,
		const char *log_name, long timeout_s, char *err, size_t cap);

#endif
