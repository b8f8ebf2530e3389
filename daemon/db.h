/*
 * db.h - the one module that talks to PostgreSQL (libpq).
 *
 * Values always travel as query parameters (text format), never pasted into
 * SQL.  Every result is freed where it was obtained (db_result_free).  A
 * broken connection is noticed by db_ok() and mended by db_reconnect(); the
 * callers' transactions are short, so nothing is lost by starting again.
 */
#ifndef ROOFLINE_DB_H
#define ROOFLINE_DB_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

struct db;
struct db_result;

/* Connect with a libpq connection string (e.g. "dbname=rooflined host=/run/pg";
 * "" uses PGHOST/PGPORT/PGDATABASE).  NULL on failure with the reason in
 * err.  The session is set to UTC and jit off. */
struct db *db_connect(const char *conninfo, struct strbuf *err);
void db_close(struct db *db);

/* False once the connection is known to be broken. */
bool db_ok(struct db *db);
/* Reset the connection.  0 or -ECONNREFUSED. */
int db_reconnect(struct db *db);
/* Limit the session's waits for locks and its statements' run time (ms;
 * 0: no limit), now and after every reconnect.  0 or -EIO. */
int db_set_timeouts(struct db *db, long lock_timeout_ms,
		    long statement_timeout_ms);
/* The last error text of the connection ("" when none); borrowed. */
const char *db_error(struct db *db);
/* The connection's socket, to wait on with poll(2) for notifications; -1
 * when there is no connection. */
int db_socket(struct db *db);

/* Read what the server sent and drop every pending LISTEN notification.
 * Returns how many there were (>= 0), or -EIO when the connection broke. */
int db_drain_notifications(struct db *db);

/* The role this session runs as (current_user); borrowed, "" if unknown. */
const char *db_user(struct db *db);

/* Run a command; params may be NULL entries (SQL NULL).  Returns the number
 * of rows affected (>= 0) or -EIO; -EAGAIN for a serialisation or deadlock
 * failure worth retrying; -EBUSY when a lock or statement timeout stopped it
 * (another session holds what it needs: worth trying later, not now). */
long db_exec(struct db *db, const char *sql, int nparams,
	     const char *const *params);

/* Run a script of several statements with no parameters (migrations only:
 * constant text from the program's own files).  0 or -EIO. */
int db_exec_script(struct db *db, const char *sql);

/* Run a query; NULL on error (db_error says why).  Caller frees. */
struct db_result *db_query(struct db *db, const char *sql, int nparams,
			   const char *const *params);
/* Run a query and hand its rows to fn at most `batch` at a time (r holds
 * that batch; borrowed for the call), through a cursor, so that a large
 * answer is never all in memory.  The cursor lives in a transaction of its
 * own, or in the caller's when one is open.  fn returns 0 to go on; any
 * other value stops the query and is returned.  0, fn's value, or -EIO
 * (db_error says why). */
int db_query_batches(struct db *db, const char *sql, int nparams,
		     const char *const *params, int batch,
		     int (*fn)(void *arg, const struct db_result *r), void *arg);
int db_rows(const struct db_result *r);
/* Text of a field, or NULL for SQL NULL; borrowed from r. */
const char *db_value(const struct db_result *r, int row, int col);
/* The field as a long (0 for NULL or garbage). */
long db_long(const struct db_result *r, int row, int col);

/* What a column holds, from its PostgreSQL type: what a JSON writer needs
 * to know to print a value as a number, a boolean or a string. */
enum db_type {
	DB_TYPE_TEXT,	/* anything else: text, timestamps, jsonb ... */
	DB_TYPE_INT,	/* smallint, integer, bigint */
	DB_TYPE_FLOAT,	/* real, double precision, numeric */
	DB_TYPE_BOOL,	/* boolean: the text is "t" or "f" */
};

int db_columns(const struct db_result *r);
/* The column's name (its alias in the query); borrowed from r. */
const char *db_column_name(const struct db_result *r, int col);
enum db_type db_column_type(const struct db_result *r, int col);
void db_result_free(struct db_result *r);

int db_begin(struct db *db);
int db_commit(struct db *db);
/* Roll back; safe to call when no transaction is open. */
void db_rollback(struct db *db);

/* COPY ... FROM STDIN in text format: start, put rows (each ends with LF,
 * fields escaped with db_copy_escape), end.  0 or -EIO. */
int db_copy_begin(struct db *db, const char *copy_sql);
int db_copy_put(struct db *db, const char *data, size_t len);
int db_copy_end(struct db *db);
/* Append s to sb escaped for COPY's text format. */
void db_copy_escape(struct strbuf *sb, const char *s);

#endif
