/* spool_space.c - a full spool holds launches.  See spool_space.h. */
#include "spool_space.h"

#include <errno.h>
#include <stdio.h>
#include <sys/statvfs.h>
#include <time.h>

#include "log.h"

bool spool_space_short(const char *dir, struct strbuf *why)
{
	struct statvfs st;
	unsigned long long avail;

	if (statvfs(dir, &st) < 0)
		return false;
	avail = (unsigned long long)st.f_bavail * st.f_frsize;
	if (avail >= (unsigned long long)SPOOL_SPACE_MIN_FREE)
		return false;
	strbuf_addf(why, "the file system of %s is full (%llu KiB free)", dir,
		    avail / 1024);
	return true;
}

bool spool_space_hold(struct engine *e, const struct step_row *rows, int n)
{
	static time_t said;
	struct strbuf why = STRBUF_INIT;
	bool hold;

	if (n == 0)
		return false;
	strbuf_init(&why);
	hold = spool_space_short(e->cfg->spool_dir, &why);
	if (hold && time(NULL) - said >= 60) {
		log_error("%s: run=%ld step=%s%s%s and %d more step(s) wait for"
			  " space before they start", why.buf, rows[0].run_id,
			  rows[0].step_id, rows[0].node[0] ? "@" : "",
			  rows[0].node, n - 1);
		said = time(NULL);
	}
	if (!hold)
		said = 0;
	strbuf_release(&why);
	return hold;
}

bool spool_space_hold_runs(struct engine *e)
{
	static time_t said;
	struct strbuf why = STRBUF_INIT;
	bool hold;

	strbuf_init(&why);
	hold = spool_space_short(e->cfg->spool_dir, &why);
	if (hold && time(NULL) - said >= 60) {
		log_error("%s: queued runs wait for space before they start", why.buf);
		said = time(NULL);
	}
	if (!hold)
		said = 0;
	strbuf_release(&why);
	return hold;
}

bool spool_space_give_back(struct engine *e, const struct step_row *s,
			   const char *dir, const char *error)
{
	struct step_change c = STEP_CHANGE_NONE;
	struct strbuf why = STRBUF_INIT, msg = STRBUF_INIT;
	char id[32];
	const char *params[] = { id };
	bool full;

	strbuf_init(&why);
	full = spool_space_short(dir, &why);
	if (!full)
		goto out;
	strbuf_init(&msg);
	strbuf_addf(&msg, "attempt %d failed while %s (%s): not counted;"
		    " the step waits for space", s->attempt, why.buf,
		    error && *error ? error : "no exit record");
	snprintf(id, sizeof(id), "%ld", s->id);
	/* one more retry for the one the full disk took */
	if (db_exec(e->db, "update steps set retries = retries + 1 where id = $1",
		    1, params) < 0) {
		strbuf_release(&msg);
		full = false; /* the caller fails it as usual */
		goto out;
	}
	c.error = msg.buf;
	c.detail = msg.buf;
	c.retry_in_s = 0;
	engine_step_set_state(e, s, "retry_wait", &c);
	strbuf_release(&msg);
out:
	strbuf_release(&why);
	return full;
}
