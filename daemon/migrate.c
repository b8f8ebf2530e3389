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
	/* A migration rewrites tables: no statement limit (the daemon's
	 * lock_timeout stays, so a user's open transaction fails the start
	 * instead of hanging it). */
	if (db_begin(db) < 0 ||
	    db_exec(db, "set local statement_timeout = 0", 0, NULL) < 0)
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
	if ((have = current_version(db)) < 0) {
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
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return rc;
}

/* Revoke CREATE on public from PUBLIC and from every role granted it
 * directly (the owner keeps it).  Where the daemon's role may not (the
 * schema is a superuser's, PostgreSQL 14 or older), PostgreSQL warns and
 * the checks below refuse. */
static const char revoke_public_sql[] =
	"do $$ declare g regrole; begin"
	" revoke create on schema public from public;"
	" for g in select distinct a.grantee::regrole from pg_namespace n,"
	"  aclexplode(n.nspacl) a where n.nspname = 'public' and"
	"  a.privilege_type = 'CREATE' and a.grantee <> 0 and"
	"  a.grantee <> n.nspowner loop"
	"  execute format('revoke create on schema public from %s', g);"
	" end loop; end $$";

/* Non-superuser roles but ours that may create in public. */
static const char creators_sql[] =
	"select string_agg(quote_ident(r.rolname), ', ' order by r.rolname)"
	" from pg_roles r where not r.rolsuper and r.rolname <> current_user"
	" and r.rolname <> 'pg_database_owner'"
	" and has_schema_privilege(r.oid, 'public', 'CREATE')";

/* Objects in public owned by a role that is neither ours nor a superuser. */
static const char foreign_sql[] =
	"with o(what, owner) as ("
	" select format('function %s', p.oid::regprocedure), p.proowner"
	"  from pg_proc p where p.pronamespace = 'public'::regnamespace"
	" union all select format('operator %s', o.oid::regoperator), o.oprowner"
	"  from pg_operator o where o.oprnamespace = 'public'::regnamespace"
	" union all select format('type %s', t.oid::regtype), t.typowner"
	"  from pg_type t where t.typnamespace = 'public'::regnamespace"
	" union all select format('relation %s', c.oid::regclass), c.relowner"
	"  from pg_class c where c.relnamespace = 'public'::regnamespace)"
	" select string_agg(format('%s (owner %s)', o.what, r.rolname), '; '"
	"  order by o.what) from o join pg_roles r on r.oid = o.owner"
	" where not r.rolsuper and r.rolname <> current_user";

int migrate_guard_public(struct db *db, struct strbuf *err)
{
	struct db_result *r;
	const char *v;
	int rc = 0;

	if (db_exec_script(db, revoke_public_sql) < 0) {
		strbuf_addf(err, "cannot revoke CREATE on schema public: %s",
			    db_error(db));
		return -EIO;
	}
	r = db_query(db, creators_sql, 0, NULL);
	if (!r) {
		strbuf_addf(err, "cannot read schema public's privileges: %s",
			    db_error(db));
		return -EIO;
	}
	if ((v = db_value(r, 0, 0))) {
		strbuf_addf(err, "schema public, where the daemon's functions look "
			    "names up, lets %s create objects: as a superuser, "
			    "REVOKE CREATE ON SCHEMA public FROM PUBLIC (and from "
			    "each of them); refusing to run", v);
		rc = -EPERM;
	}
	db_result_free(r);
	if (rc)
		return rc;
	r = db_query(db, foreign_sql, 0, NULL);
	if (!r) {
		strbuf_addf(err, "cannot list schema public: %s", db_error(db));
		return -EIO;
	}
	if ((v = db_value(r, 0, 0))) {
		strbuf_addf(err, "schema public holds objects of other roles, which "
			    "could stand in for what the daemon's functions call: "
			    "%s; drop them (or move them to a schema of their "
			    "own); refusing to run", v);
		rc = -EPERM;
	}
	db_result_free(r);
	return rc;
}

int migrate_apply(struct db *db, struct strbuf *err)
{
	char *dir;
	int rc = migrate_guard_public(db, err);

	if (rc < 0)
		return rc;
	dir = paths_sql_dir();
	rc = migrate_apply_dir(db, dir, err);

	free(dir);
	return rc;
}
