/*
 * session_pool.h - extra PostgreSQL sessions for work the engine does in
 * parallel: a night's flood of ended attempts is ingested through several
 * sessions at once, each attempt in a transaction of its own, rather than
 * one attempt after another on the engine's session (issue 27: one
 * session is one server process, one core of the database's machine).
 *
 * The pool owns its sessions: connected on first use with the
 * configuration's database and timeouts, named after the daemon (as the
 * engine's own session is) and kept between calls; a session found broken
 * is reset at its next use, and one that cannot be is closed and left out
 * of that call.  session_pool_close() ends them all (a reload, the end of
 * the engine).
 *
 * session_pool_for() is a parallel for: fn(db, i, arg) for each i in
 * [0, n), on up to `sessions` threads, each thread with a session of its
 * own; a free thread takes the next item.  fn must touch nothing but item
 * i and its session (no engine state, no other session): what the items'
 * results call for is the caller's to do, in its own thread, once the call
 * returns.  Not itself thread-safe: one call at a time, from one thread.
 */
#ifndef ROOFLINE_SESSION_POOL_H
#define ROOFLINE_SESSION_POOL_H

#include <stddef.h>

#include "config.h"
#include "db.h"

#define SESSION_POOL_MAX CONFIG_THREADS_MAX /* db_sessions, at most */

struct session_pool {
	struct db *db[SESSION_POOL_MAX]; /* owned, NULL: not connected */
};

typedef void session_pool_fn(struct db *db, size_t i, void *arg);

/* Run fn for every item through up to `sessions` sessions (at most
 * SESSION_POOL_MAX, at most n), connecting those not yet connected.
 * Returns how many sessions ran the items, or 0 when none could be had (fn
 * was not called: the caller runs the items itself; cfg's database was
 * unreachable, and the error is logged). */
int session_pool_for(struct session_pool *p, const struct config *cfg,
		     int sessions, size_t n, session_pool_fn *fn, void *arg);

/* Close every session of the pool. */
void session_pool_close(struct session_pool *p);

#endif
