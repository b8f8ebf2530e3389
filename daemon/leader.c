/* leader.c - the active daemon's lock and the standby's wait.  See leader.h. */
#include "leader.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define HOLDER_SQL \
	"select a.application_name, a.pid, a.usename from pg_locks l join" \
	" pg_stat_activity a using (pid) where l.locktype = 'relation' and" \
	" l.granted and l.relation = to_regclass('public." LEADER_LOCK_TABLE \
	"') and l.mode = 'ShareUpdateExclusiveLock'"

void leader_name_session(struct db *db, bool standby)
{
	char name[128], host[64] = "?";
	const char *params[] = { name };

	if (!db)
		return;
	gethostname(host, sizeof(host) - 1);
	snprintf(name, sizeof(name), "rooflined %spid %ld on %s",
		 standby ? "standby " : "", (long)getpid(), host);
	db_exec(db, "select set_config('application_name', $1, false)", 1,
		params);
}

/* Who holds the lock: "NAME, PostgreSQL backend PID, role ROLE" into sb;
 * false when nobody does (or the database cannot say). */
static bool describe_holder(struct db *db, struct strbuf *sb)
{
	struct db_result *r = db_query(db, HOLDER_SQL, 0, NULL);
	bool held = r && db_rows(r) > 0;

	if (held)
		strbuf_addf(sb, "%s, PostgreSQL backend %s, role %s",
			    db_value(r, 0, 0), db_value(r, 0, 1), db_value(r, 0, 2));
	db_result_free(r);
	return held;
}

static void say_held(struct db *db, struct strbuf *err)
{
	struct strbuf who = STRBUF_INIT;

	strbuf_init(&who);
	if (!describe_holder(db, &who))
		strbuf_addstr(&who, "unknown, PostgreSQL backend ?, role ?");
	strbuf_addf(err, "another rooflined already runs on this database (%s):"
		    " one daemon per database", who.buf);
	strbuf_release(&who);
}

/* A session that answers, made or mended here.  0 or -EIO with err. */
static int ensure_session(struct leader *l, const char *conninfo,
			  struct strbuf *err)
{
	if (l->db && !db_ok(l->db)) {
		db_close(l->db);
		l->db = NULL;
	}
	l->backend = 0;
	if (!l->db)
		l->db = db_connect(conninfo, err);
	return l->db ? 0 : -EIO;
}

int leader_take(struct leader *l, const char *conninfo, struct strbuf *err)
{
	struct db_result *r;
	long rc;

	if (ensure_session(l, conninfo, err) < 0)
		return -EIO;
	leader_name_session(l->db, false);
	/* The transaction stays open while we lead: no limit of the
	 * database's or the role's may end it.  The table is made by the
	 * first daemon (before the migrations, which this lock serialises);
	 * its owner alone has privileges on it. */
	if (db_exec_script(l->db,
			   "set idle_in_transaction_session_timeout = 0;"
			   " set statement_timeout = 0; set lock_timeout = 0;"
			   " create table if not exists public." LEADER_LOCK_TABLE " ();"
			   " revoke all on public." LEADER_LOCK_TABLE " from public") < 0) {
		strbuf_addf(err, "cannot make the daemon lock's table: %s",
			    db_error(l->db));
		/* two daemons making it at once: the loser tries again */
		return db_ok(l->db) ? -EEXIST : -EIO;
	}
	db_rollback(l->db);
	if (db_begin(l->db) < 0) {
		strbuf_addf(err, "cannot take the daemon lock: %s", db_error(l->db));
		return -EIO;
	}
	rc = db_exec(l->db, "lock table public." LEADER_LOCK_TABLE
		     " in share update exclusive mode nowait", 0, NULL);
	if (rc >= 0) {
		r = db_query(l->db, "select pg_backend_pid()", 0, NULL);
		l->backend = r && db_rows(r) == 1 ? db_long(r, 0, 0) : 0;
		db_result_free(r);
		if (l->backend > 0)
			return 0;
	}
	db_rollback(l->db);
	if (rc == -EBUSY) {
		say_held(l->db, err);
		return -EEXIST;
	}
	strbuf_addf(err, "cannot take the daemon lock: %s", db_error(l->db));
	return -EIO;
}

int leader_check(struct leader *l, const char *conninfo, struct strbuf *err)
{
	if (l->db && l->backend && db_ok(l->db) &&
	    db_drain_notifications(l->db) >= 0)
		return 0;
	if (l->backend) /* once, not at every try while the database is away */
		log_error("the session holding the daemon lock broke: taking the lock again");
	return leader_take(l, conninfo, err);
}

/* Whether anybody holds the lock now; asked before asking for it, so that
 * a standby does not fill the server's log with failed NOWAITs. */
static bool lock_is_held(struct leader *l, struct strbuf *who)
{
	strbuf_reset(who);
	return describe_holder(l->db, who);
}

int leader_wait(struct leader *l, const char *conninfo,
		volatile sig_atomic_t *stop)
{
	struct strbuf err = STRBUF_INIT, who = STRBUF_INIT, seen = STRBUF_INIT;
	time_t complained = 0;
	int rc = -EINTR;

	strbuf_init(&err);
	strbuf_init(&who);
	strbuf_init(&seen);
	while (!*stop) {
		strbuf_reset(&err);
		if (ensure_session(l, conninfo, &err) < 0) {
			if (time(NULL) - complained >= 60) {
				log_error("standby: %s; retrying", err.buf);
				complained = time(NULL);
			}
			poll(NULL, 0, LEADER_POLL_MS * 4);
			continue;
		}
		if (lock_is_held(l, &who)) {
			if (strcmp(who.buf, seen.buf) != 0) {
				leader_name_session(l->db, true);
				log_info("standby: the active rooflined is %s;"
					 " waiting to take over", who.buf);
				strbuf_reset(&seen);
				strbuf_addstr(&seen, who.buf);
			}
			poll(NULL, 0, LEADER_POLL_MS);
			continue;
		}
		rc = leader_take(l, conninfo, &err);
		if (rc == 0)
			break;
		rc = -EINTR;
		if (l->db && db_ok(l->db))
			leader_name_session(l->db, true);
		poll(NULL, 0, LEADER_POLL_MS);
	}
	if (rc == 0)
		log_info("taking over as the active rooflined (the last one was %s)",
			 seen.len ? seen.buf : "none");
	strbuf_release(&seen);
	strbuf_release(&who);
	strbuf_release(&err);
	return rc;
}

void leader_release(struct leader *l)
{
	db_close(l->db); /* ends the transaction: the lock is free */
	l->db = NULL;
	l->backend = 0;
}
