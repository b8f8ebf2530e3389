/* migrate.c - see migrate.h. */
#include "migrate.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "paths.h"
#include "util.h"

#define MIGRATE_LOCK_KEY "7316431" /* any constant, shared by all daemons */

static int is_migration(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && d->d_name[0] >= '0' && d->d_name[0] <= '9' &&
	       strcmp(d->d_name + n - 4, ".sql") == 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static long current_version(struct db *db)
{
	struct db_result *r;
	long v;

	if (db_exec(db, "create table if not exists schema_migrations ("
			" version integer primary key, name text not null,"
			" applied_at timestamptz not null default now())",
		    0, NULL) < 0)
		return -EIO;
	r = db_query(db, "select coalesce(max(version), 0) from schema_migrations",
		     0, NULL);
	if (!r)
		return -EIO;
	v = db_long(r, 0, 0);
	db_result_free(r);
	return v;
}

/* Apply one file in its own transaction. */
static int apply_one(struct db *db, const char *dir, const char *name,
		     long version, struct strbuf *err)
{
	char *path = xasprintf("%s/%s", dir, name), *sql = NULL;
	char vtext[32];
	const char *params[2] = { vtext, name };
	int rc = util_read_file(path, 16 << 20, &sql, NULL);

	snprintf(vtext, sizeof(vtext), "%ld", version);
	if (rc < 0) {
		strbuf_addf(err, "%s: %s", path, strerror(-rc));
		goto out;
	}
	rc = -EIO;
	if (db_begin(db) < 0)
		goto fail;
	/* Multi-statement text: simple query protocol, no parameters. */
	if (db_exec_script(db, sql) < 0)
		goto fail;
	if (db_exec(db, "insert into schema_migrations (version, name) "
			"values ($1, $2)", 2, params) < 0 ||
	    db_commit(db) < 0)
		goto fail;
	log_info("applied migration %s", name);
	rc = 0;
	goto out;
fail:
	strbuf_addf(err, "%s: migration failed: %s", path, db_error(db));
	db_rollback(db);
out:
	free(sql);
	free(path);
	return rc;
}

int migrate_apply_dir(struct db *db, const char *dir, struct strbuf *err)
{
	struct dirent **list = NULL;
	long have, newest = 0;
	int n, rc = 0;

	n = scandir(dir, &list, is_migration, by_name);
	if (n < 0) {
		strbuf_addf(err, "cannot read migrations in %s: %s", dir,
			    strerror(errno));
		return -EIO;
	}
	if (db_exec(db, "select pg_advisory_lock(" MIGRATE_LOCK_KEY ")", 0,
		    NULL) < 0 || (have = current_version(db)) < 0) {
		strbuf_addf(err, "cannot read the schema version: %s", db_error(db));
		rc = -EIO;
		goto out;
	}
	for (int i = 0; i < n && !rc; i++) {
		long v = strtol(list[i]->d_name, NULL, 10);

		newest = v > newest ? v : newest;
		if (v > have)
			rc = apply_one(db, dir, list[i]->d_name, v, err);
	}
	if (!rc && have > newest) {
		strbuf_addf(err, "the database is at schema version %ld, newer "
			    "than this program's %ld: refusing to run", have,
			    newest);
		rc = -EIO;
	}
out:
	db_exec(db, "select pg_advisory_unlock(" MIGRATE_LOCK_KEY ")", 0, NULL);
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return rc;
}

int migrate_apply(struct db *db, struct strbuf *err)
{
	char *dir = paths_sql_dir();
	int rc = migrate_apply_dir(db, dir, err);

	free(dir);
	return rc;
}
