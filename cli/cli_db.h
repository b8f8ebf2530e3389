/*
 * cli_db.h - how `roofline` subcommands reach the database.
 *
 * The connection is made as the user who typed the command (PostgreSQL peer
 * authentication over the Unix socket): the database, not this program,
 * decides what that user may see and do (sql/002_users.sql).
 */
#ifndef ROOFLINE_CLI_DB_H
#define ROOFLINE_CLI_DB_H

#include "db.h"

/* Connect with $ROOFLINE_DB (a libpq connection string) or the PG*
 * environment; on failure print why (prefixed by `cmd`) and return NULL. */
struct db *cli_db_connect(const char *cmd);

/* Parse a run id argument; print an error and return -1 when invalid. */
long cli_run_id(const char *cmd, const char *text);

/* Print v to stdout as one CSV field, quoted when it holds a comma, quote
 * or line break (RFC 4180). */
void cli_csv_field(const char *v);

#endif
