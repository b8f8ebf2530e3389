/*
 * partitions.h - the history tables' monthly partitions and their retention.
 *
 * step_records, points, kernel_profiles and ceilings are partitioned by
 * month (sql/010_partitions.sql), and so is kernel_points (the points
 * grouped per kernel, sql/017_kernel_points.sql), which keeps what points
 * keeps (retain_points; its aggregates are points_monthly).  This module, on
 * the daemon's behalf:
 *   - keeps the partitions of this month and the `partitions_ahead` months
 *     after it in place, so that an ingest always finds its partition;
 *   - for each table with a retention (config retain_<table>), rolls each
 *     month that ended into <table>_monthly and seals its partition, then
 *     drops (or, with `retention: detach`, detaches) the partitions whose
 *     whole month is older than the retention.
 * The work itself is SQL functions of 010_partitions.sql (rl_partitions_ahead,
 * rl_history_rollup_due) and 018_history_due.sql (rl_history_due, the due
 * partitions listed once; rl_history_remove, one partition a call), each one
 * transaction; this module calls them and logs
 * one line per partition made, rolled up, and dropped or detached.  It
 * keeps no state but the time of its next pass.
 */
#ifndef ROOFLINE_PARTITIONS_H
#define ROOFLINE_PARTITIONS_H

#include <time.h>

#include "config.h"
#include "db.h"

/* One pass: partitions ahead, then rollups and retention.  Borrows db and
 * cfg.  0, or -EIO when a step failed (logged; the others still ran). */
int partitions_maintain(struct db *db, const struct config *cfg);

/* partitions_maintain() when *due has come (0: at once), then sets *due to a
 * day later, or an hour later after a failure. */
void partitions_tick(struct db *db, const struct config *cfg, time_t *due);

#endif
