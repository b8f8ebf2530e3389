/*
 * migrate.h - apply the numbered, forward-only migrations of sql/.
 *
 * Files are NNN_name.sql, applied in order, each in its own transaction
 * together with its row in schema_migrations; an advisory lock keeps two
 * daemons from migrating at once.  A database newer than the files (a
 * version this daemon does not know) is refused.
 */
#ifndef ROOFLINE_MIGRATE_H
#define ROOFLINE_MIGRATE_H

#include "db.h"
#include "strbuf.h"

/* Apply what is missing from dir.  0 or -EIO with err. */
int migrate_apply_dir(struct db *db, const char *dir, struct strbuf *err);

/* migrate_apply_dir(db, paths_sql_dir(), err). */
int migrate_apply(struct db *db, struct strbuf *err);

#endif
