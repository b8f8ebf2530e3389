/* db.c - see db.h.  The only file that includes libpq-fe.h. */
#include "db.h"

#include <errno.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

struct db {
	PGconn *conn;
	char *conninfo;
	char user[128];
	char error[512];
	long lock_timeout_ms;      /* 0: PostgreSQL's (none) */
	long statement_timeout_ms; /* 0: PostgreSQL's (none) */
};

struct db_result {
	PGresult *res;
};

/* Server NOTICEs ("relation already exists, skipping") are for debugging. */
static void db_notice(void *arg, const char *message)
{
	(void)arg;
	log_debug("PostgreSQL: %.*s", (int)strcspn(message, "\n"), message);
}

/* The session's limits, as set_config() calls with values as parameters. */
static int db_apply_timeouts(struct db *db)
{
	char lock[32], stmt[32];
	const char *params[] = { lock, stmt };
	PGresult *res;
	int rc;

	snprintf(lock, sizeof(lock), "%ld", db->lock_timeout_ms);
	snprintf(stmt, sizeof(stmt), "%ld", db->statement_timeout_ms);
	res = PQexecParams(db->conn, "select set_config('lock_timeout', $1, false),"
			   " set_config('statement_timeout', $2, false)", 2, NULL,
			   params, NULL, NULL, 0);
	rc = PQresultStatus(res) == PGRES_TUPLES_OK ? 0 : -EIO;
	PQclear(res);
	return rc;
}

static int db_setup_session(struct db *db)
{
	/* search_path: pg_catalog first (implicitly), then the schema, whose
	 * CREATE only the daemon's role has (daemon/migrate.c); no "$user". */
	static const char *const setup =
		"set timezone = 'UTC'; set jit = off; "
		"set application_name = 'rooflined'; set search_path = public";
	PGresult *res;
	int rc;

	PQsetNoticeProcessor(db->conn, db_notice, NULL);
	res = PQexec(db->conn, setup);
	rc = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : -EIO;
	PQclear(res);
	if (rc == 0 && (db->lock_timeout_ms || db->statement_timeout_ms))
		rc = db_apply_timeouts(db);
	res = PQexec(db->conn, "select current_user");
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		snprintf(db->user, sizeof(db->user), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return rc;
}

struct db *db_connect(const char *conninfo, struct strbuf *err)
{
	struct db *db = xcalloc(1, sizeof(*db));

	db->conninfo = xstrdup(conninfo ? conninfo : "");
	db->conn = PQconnectdb(db->conninfo);
	if (!db->conn || PQstatus(db->conn) != CONNECTION_OK) {
		const char *msg = db->conn ? PQerrorMessage(db->conn) : "out of memory";

		strbuf_addf(err, "cannot connect to PostgreSQL: %.*s",
			    (int)strcspn(msg, "\n"), msg);
		db_close(db);
		return NULL;
	}
	if (db_setup_session(db) < 0) {
		strbuf_addf(err, "cannot set up the session: %s",
			    PQerrorMessage(db->conn));
		db_close(db);
		return NULL;
	}
	return db;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	if (db->conn)
		PQfinish(db->conn);
	free(db->conninfo);
	free(db);
}

bool db_ok(struct db *db)
{
	return PQstatus(db->conn) == CONNECTION_OK;
}

int db_reconnect(struct db *db)
{
	PQreset(db->conn);
	if (PQstatus(db->conn) != CONNECTION_OK || db_setup_session(db) < 0)
		return -ECONNREFUSED;
	return 0;
}

int db_set_timeouts(struct db *db, long lock_timeout_ms,
		    long statement_timeout_ms)
{
	db->lock_timeout_ms = lock_timeout_ms;
	db->statement_timeout_ms = statement_timeout_ms;
	return db_apply_timeouts(db);
}

const char *db_error(struct db *db)
{
	const char *msg = PQerrorMessage(db->conn);

	/* The first line only: "ERROR:  ..." without LINE/HINT decorations. */
	snprintf(db->error, sizeof(db->error), "%.*s", (int)strcspn(msg, "\n"),
		 msg);
	return db->error;
}

int db_socket(struct db *db)
{
	return PQsocket(db->conn);
}

int db_drain_notifications(struct db *db)
{
	PGnotify *note;
	int n = 0;

	if (PQconsumeInput(db->conn) != 1)
		return -EIO;
	while ((note = PQnotifies(db->conn))) {
		PQfreemem(note);
		n++;
	}
	return n;
}

const char *db_user(struct db *db)
{
	return db->user;
}

/* -EAGAIN for a serialisation failure or a deadlock (worth retrying now),
 * -EBUSY for a lock or statement timeout (another session holds what the
 * statement needs: try later), else -EIO. */
static long failure(const PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	if (!state)
		return -EIO;
	if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0)
		return -EAGAIN;
	/* lock_not_available (lock_timeout, NOWAIT), query_canceled */
	if (strcmp(state, "55P03") == 0 || strcmp(state, "57014") == 0)
		return -EBUSY;
	return -EIO;
}

long db_exec(struct db *db, const char *sql, int nparams,
	     const char *const *params)
{
	PGresult *res = PQexecParams(db->conn, sql, nparams, NULL, params,
				     NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);
	long rc;

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		const char *n = PQcmdTuples(res);

		rc = n && *n ? strtol(n, NULL, 10) : 0;
	} else {
		rc = failure(res);
		log_debug("SQL failed: %s: %s", sql, PQresultErrorMessage(res));
	}
	PQclear(res);
	return rc;
}

int db_exec_script(struct db *db, const char *sql)
{
	PGresult *res = PQexec(db->conn, sql);
	int rc = PQresultStatus(res) == PGRES_COMMAND_OK ||
			 PQresultStatus(res) == PGRES_TUPLES_OK ? 0 : -EIO;

	PQclear(res);
	return rc;
}

struct db_result *db_query(struct db *db, const char *sql, int nparams,
			   const char *const *params)
{
	PGresult *res = PQexecParams(db->conn, sql, nparams, NULL, params,
				     NULL, NULL, 0);
	struct db_result *r;

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		log_debug("SQL failed: %s: %s", sql, PQresultErrorMessage(res));
		PQclear(res);
		return NULL;
	}
	r = xmalloc(sizeof(*r));
	r->res = res;
	return r;
}

int db_query_batches(struct db *db, const char *sql, int nparams,
		     const char *const *params, int batch,
		     int (*fn)(void *arg, const struct db_result *r), void *arg)
{
	bool own = PQtransactionStatus(db->conn) == PQTRANS_IDLE;
	char *declare = xasprintf("declare rl_batches no scroll cursor for %s", sql);
	char *fetch = xasprintf("fetch forward %d from rl_batches", batch);
	int rc = own && db_begin(db) < 0 ? -EIO : 0;
	bool declared = false;

	if (rc == 0 && db_exec(db, declare, nparams, params) < 0)
		rc = -EIO;
	declared = rc == 0;
	while (rc == 0) {
		struct db_result *r = db_query(db, fetch, 0, NULL);

		if (!r) {
			rc = -EIO;
			break;
		}
		if (db_rows(r) == 0) {
			db_result_free(r);
			break;
		}
		rc = fn(arg, r);
		db_result_free(r);
	}
	/* in the caller's transaction the cursor must go whatever happened
	 * (unless an error aborted the transaction, which ends it anyway) */
	if (declared && (rc == 0 || !own) &&
	    db_exec(db, "close rl_batches", 0, NULL) < 0 && rc == 0)
		rc = -EIO;
	if (own) {
		if (rc == 0)
			rc = db_commit(db) < 0 ? -EIO : 0;
		else
			db_rollback(db);
	}
	free(declare);
	free(fetch);
	return rc;
}

int db_rows(const struct db_result *r)
{
	return PQntuples(r->res);
}

const char *db_value(const struct db_result *r, int row, int col)
{
	if (PQgetisnull(r->res, row, col))
		return NULL;
	return PQgetvalue(r->res, row, col);
}

long db_long(const struct db_result *r, int row, int col)
{
	const char *v = db_value(r, row, col);

	return v ? strtol(v, NULL, 10) : 0;
}

int db_columns(const struct db_result *r)
{
	return PQnfields(r->res);
}

const char *db_column_name(const struct db_result *r, int col)
{
	return PQfname(r->res, col);
}

enum db_type db_column_type(const struct db_result *r, int col)
{
	/* Built-in type OIDs (catalog/pg_type_d.h, fixed since PostgreSQL 7):
	 * server headers are not needed for six numbers. */
	switch (PQftype(r->res, col)) {
	case 16:			/* bool */
		return DB_TYPE_BOOL;
	case 20: case 21: case 23:	/* int8, int2, int4 */
		return DB_TYPE_INT;
	case 700: case 701: case 1700:	/* float4, float8, numeric */
		return DB_TYPE_FLOAT;
	default:
		return DB_TYPE_TEXT;
	}
}

void db_result_free(struct db_result *r)
{
	if (!r)
		return;
	PQclear(r->res);
	free(r);
}

int db_begin(struct db *db)
{
	return db_exec(db, "begin", 0, NULL) < 0 ? -EIO : 0;
}

int db_commit(struct db *db)
{
	long rc = db_exec(db, "commit", 0, NULL);

	return rc < 0 ? (int)rc : 0;
}

void db_rollback(struct db *db)
{
	if (PQtransactionStatus(db->conn) != PQTRANS_IDLE)
		db_exec(db, "rollback", 0, NULL);
}

int db_copy_begin(struct db *db, const char *copy_sql)
{
	PGresult *res = PQexec(db->conn, copy_sql);
	int rc = PQresultStatus(res) == PGRES_COPY_IN ? 0 : -EIO;

	if (rc)
		log_debug("COPY failed: %s", PQresultErrorMessage(res));
	PQclear(res);
	return rc;
}

int db_copy_put(struct db *db, const char *data, size_t len)
{
	return PQputCopyData(db->conn, data, (int)len) == 1 ? 0 : -EIO;
}

int db_copy_end(struct db *db)
{
	PGresult *res;
	int rc = 0;

	if (PQputCopyEnd(db->conn, NULL) != 1)
		return -EIO;
	while ((res = PQgetResult(db->conn))) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			log_debug("COPY failed: %s", PQresultErrorMessage(res));
			rc = -EIO;
		}
		PQclear(res);
	}
	return rc;
}

void db_copy_escape(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\\': strbuf_add(sb, "\\\\", 2); break;
		case '\t': strbuf_add(sb, "\\t", 2); break;
		case '\n': strbuf_add(sb, "\\n", 2); break;
		case '\r': strbuf_add(sb, "\\r", 2); break;
		default: strbuf_addch(sb, *s);
		}
	}
}
