/*
 * spool_space.h - a spool whose file system is full (issue 26 item 4).
 *
 * While the file system that holds the spool has less than
 * SPOOL_SPACE_MIN_FREE bytes free for an unprivileged writer, the engine
 * starts no queued run (its directory and attached files go there) and
 * launches nothing (the steps stay 'waiting' or 'retry_wait', and the log
 * names them and the path, once a minute); an attempt that failed while
 * the spool was full is given back (its step gets one more retry, so the
 * attempt is not counted against it) and waits for space like the others.
 * Nothing of a failed attempt is ingested: records.tsv and exit.tsv are
 * written under a temporary name and renamed only when complete
 * (common/job_host.c), and only a complete exit record with status OK leads
 * to an ingest, in one transaction (ingest.c).
 */
#ifndef ROOFLINE_SPOOL_SPACE_H
#define ROOFLINE_SPOOL_SPACE_H

#include <stdbool.h>

#include "engine.h"
#include "strbuf.h"

#define SPOOL_SPACE_MIN_FREE (1024L * 1024L)

/* Whether dir's file system is that full; why gets "the file system of DIR
 * is full (N KiB free)".  A dir that cannot be asked is not called full. */
bool spool_space_short(const char *dir, struct strbuf *why);

/* Before a launch pass: true (and a log line naming the first of the n
 * ready steps and dir, at most once a minute) when the spool is full and
 * nothing may be launched now. */
bool spool_space_hold(struct engine *e, const struct step_row *rows, int n);

/* Before starting queued runs: true (and a log line at most once a minute)
 * when the spool is full and no run may start now. */
bool spool_space_hold_runs(struct engine *e);

/* An attempt of s failed (error says how) while the spool at dir was full:
 * give it back and wait for space.  True when it did so (the caller does
 * nothing more), false when the spool is not full. */
bool spool_space_give_back(struct engine *e, const struct step_row *s,
			   const char *dir, const char *error);

#endif
