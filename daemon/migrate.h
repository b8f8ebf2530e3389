/*
 * migrate.h - apply the numbered, forward-only migrations of sql/.
 *
 * Files are NNN_name.sql, applied in order, each in its own transaction
 * together with its row in schema_migrations.  The caller holds the
 * one-daemon lock (engine.c), which keeps two daemons from migrating at
 * once.  A database newer than the files (a version this daemon does not
 * know) is refused.
 *
 * Before any of that, schema public is made the daemon's alone: the
 * functions of sql/ resolve names in it (search_path pg_catalog, public), so
 * a user's function there with a closer argument type (e.g.
 * width_bucket(date, date[])) would run with the daemon's privileges.
 * CREATE on it is revoked from everyone but its owner, and a schema that
 * still lets another role create, or holds another role's functions,
 * operators, types or relations (superusers' aside), is refused.
 */
#ifndef ROOFLINE_MIGRATE_H
#define ROOFLINE_MIGRATE_H

#include "db.h"
#include "strbuf.h"

/* Apply what is missing from dir.  0 or -EIO with err. */
int migrate_apply_dir(struct db *db, const char *dir, struct strbuf *err);

/* The guard of schema public described above.  0, or -EPERM with err
 * naming what is wrong and what to run, or -EIO. */
int migrate_guard_public(struct db *db, struct strbuf *err);

/* migrate_guard_public(), then migrate_apply_dir(db, paths_sql_dir(), err). */
int migrate_apply(struct db *db, struct strbuf *err);

#endif
