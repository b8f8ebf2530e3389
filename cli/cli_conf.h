/*
 * cli_conf.h - the client configuration: where `roofline` finds the
 * service's database and Slurm cluster without any setup by its user.
 *
 * The file (roofline(1), FILES) holds NAME=value lines, `#` comments and
 * blank lines.  NAME is one of the environment variables the CLI's libraries
 * read: PGHOST, PGPORT, PGDATABASE (libpq) and SLURM_CONF (libslurm);
 * value is the rest of the line without its surrounding blanks (no quoting).
 * Each line sets its variable unless the environment has it already: a
 * user's own setting wins over the facility's.  libpq and libslurm then read
 * the variables as they always do.
 *
 * Which file: $ROOFLINE_CONF when set ("" reads none), else the packaged one,
 * SYSCONFDIR/rooflined/roofline.conf (compiled in, as the daemon's
 * configuration file is).  A default file that does not exist is no error
 * (a machine without the package); a named one is.
 */
#ifndef ROOFLINE_CLI_CONF_H
#define ROOFLINE_CLI_CONF_H

#include "strbuf.h"

/* The file cli_conf_load(NULL, ...) reads: $ROOFLINE_CONF, else the
 * compiled-in default; "" when none is to be read.  Borrowed. */
const char *cli_conf_file(void);

/*
 * Read the configuration at path (NULL: cli_conf_file()) and set, with
 * setenv(..., 0), each variable it names that the environment lacks.  0 on
 * success (nothing to read included); -EINVAL for a line it cannot take and
 * -errno when the file cannot be read, with err (appended) saying why as
 * "FILE:LINE:COL: message" (or "FILE: message").  A file with an error sets
 * nothing.
 */
int cli_conf_load(const char *path, struct strbuf *err);

#endif
