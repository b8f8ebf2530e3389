/*
 * leader.h - which of the rooflined processes on one database is the active
 * one.  The active daemon holds SHARE UPDATE EXCLUSIVE on the table
 * rooflined_lock in a session of its own (struct leader's db), whose
 * transaction stays open for as long as it leads and does nothing else; no
 * other role has any privilege on that table (sql/020_security.sql).  A
 * second daemon on the same database is a standby: it names its session
 * "rooflined standby pid N on HOST" and asks for the lock every
 * LEADER_POLL_MS, without waiting in the lock queue, until the holder's
 * session ends (its process died, its host or its session was cut off),
 * then leads.  This file owns that session and nothing else; the engine
 * (engine.c) decides what leading means.
 */
#ifndef ROOFLINE_LEADER_H
#define ROOFLINE_LEADER_H

#include <signal.h>
#include <stdbool.h>

#include "db.h"
#include "strbuf.h"

/* The table whose lock makes the active daemon. */
#define LEADER_LOCK_TABLE "rooflined_lock"
/* How often a standby asks for the lock: the takeover comes at most this
 * long after the holder's session ended. */
#define LEADER_POLL_MS 250

struct leader {
	struct db *db;    /* owned: the session that holds or asks for the lock */
	long backend;     /* that session's PostgreSQL backend pid while it
			   * holds the lock, else 0 */
};

/* Tell PostgreSQL who speaks in db: "rooflined pid N on HOST", or with
 * standby "rooflined standby pid N on HOST" (what `roofline status` and a
 * second daemon print). */
void leader_name_session(struct db *db, bool standby);

/* Take the lock now, in a session made here (again after it broke).  0,
 * -EEXIST (another session holds it: err names it) or -EIO with err. */
int leader_take(struct leader *l, const char *conninfo, struct strbuf *err);

/* Whether the lock is still ours: the session answers.  When it broke, the
 * lock is taken again: 0, -EEXIST (another daemon took it meanwhile: err
 * names it) or -EIO (the database is unreachable). */
int leader_check(struct leader *l, const char *conninfo, struct strbuf *err);

/* Wait as a standby until the lock is ours (0) or *stop is set (-EINTR).
 * Logs the holder when the wait begins and whenever the holder changes;
 * an unreachable database is retried, and said once a minute. */
int leader_wait(struct leader *l, const char *conninfo,
		volatile sig_atomic_t *stop);

/* End the session: the lock, if held, is free for a standby. */
void leader_release(struct leader *l);

#endif
