/*
 * notify.h - people told of each new finding, once.
 *
 * Every finding (sql/011_findings.sql) is born with notify_state 'pending'.
 * In each full engine tick the daemon takes the pending ones due, logs a
 * line per finding (the daemon's log: syslog with `log: syslog`), and runs
 * the configured notify_command once per finding: `/bin/sh -c COMMAND` as
 * notify_user (default facility_user; never root), the finding as one JSON
 * object on stdin (keys: docs/findings.md), ROOFLINE_FINDING_ID in the
 * environment.  Exit 0 marks it 'sent'; anything else, or running past
 * notify_timeout (then the command's process group is killed), is retried
 * after notify_backoff (doubling) up to notify_tries times, then 'failed'.
 * Without a command the finding is 'logged'.
 *
 * Never twice, even across a crash: the state becomes 'sending' (committed)
 * before the command starts; a daemon that finds 'sending' at start knows
 * it died meanwhile and marks it 'interrupted' without running it again.
 * The command runs synchronously, so a hook should hand its work off
 * (sendmail queues; curl --max-time).
 */
#ifndef ROOFLINE_NOTIFY_H
#define ROOFLINE_NOTIFY_H

#include "engine_state.h"

/* At start: findings left 'sending' by a crash become 'interrupted'. */
void notify_recover(struct engine *e);

/* Tell of the pending findings that are due (a few per call). */
void notify_pending(struct engine *e);

#endif /* ROOFLINE_NOTIFY_H */
