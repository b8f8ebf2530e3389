/* partitions.c - see partitions.h. */
#include "partitions.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "log.h"
#include "util.h"

#define PARTITIONS_EVERY_S (24 * 3600)
#define HISTORY_RETRY_S 3600

/* The partitioned tables, their retention settings and where their
 * aggregates outlive them.  kernel_points (sql/017_kernel_points.sql) holds
 * the points grouped per kernel: it keeps what points keeps, after it. */
static const struct {
	const char *table;
	size_t retain; /* offset of a long in struct config: months, 0 forever */
	const char *aggregates;
} tables[] = {
	{ "step_records", offsetof(struct config, retain_step_records),
	  "step_records_monthly" },
	{ "points", offsetof(struct config, retain_points), "points_monthly" },
	{ "kernel_points", offsetof(struct config, retain_points),
	  "points_monthly" },
	{ "kernel_profiles", offsetof(struct config, retain_kernel_profiles),
	  "kernel_profiles_monthly" },
	{ "ceilings", offsetof(struct config, retain_ceilings),
	  "ceilings_monthly" },
};

static int make_ahead(struct db *db, long months)
{
	char text[32];
	const char *params[] = { text };
	struct db_result *r;

	snprintf(text, sizeof(text), "%ld", months);
	r = db_query(db, "select p from rl_partitions_ahead($1) p", 1, params);
	if (!r) {
		log_error("history: cannot make the partitions ahead: %s",
			  db_error(db));
		return -EIO;
	}
	for (int i = 0; i < db_rows(r); i++)
		log_info("history: created partition %s", db_value(r, i, 0));
	db_result_free(r);
	return 0;
}

static int roll_up(struct db *db, const char *table, const char *aggregates)
{
	const char *params[] = { table };
	struct db_result *r;

	r = db_query(db, "select partition, month, rows"
			 " from rl_history_rollup_due($1)", 1, params);
	if (!r) {
		log_error("history: cannot roll up %s: %s", table, db_error(db));
		return -EIO;
	}
	for (int i = 0; i < db_rows(r); i++)
		log_info("history: rolled up partition %s (month %s, %s rows) into "
			 "%s; it takes no new rows", db_value(r, i, 0),
			 db_value(r, i, 1), db_value(r, i, 2), aggregates);
	db_result_free(r);
	return 0;
}

/* One partition a transaction (sql/016_history_plans.sql): a drop locks the
 * whole table until commit, and the commit frees the partition's files, so
 * a long retention (the first, over years) holds no lock for longer than
 * one partition takes; a failure keeps what was removed before it.  The due
 * partitions are listed once (sql/018_history_due.sql): listing them reads
 * every partition's bounds from the catalog. */
static int retire(struct db *db, const char *table, const char *aggregates,
		  long months, bool detach)
{
	char text[32];
	const char *params[] = { table, text, detach ? "true" : "false" };
	struct db_result *due, *r;
	int rc = 0;

	snprintf(text, sizeof(text), "%ld", months);
	due = db_query(db, "select partition from rl_history_due($1, $2)", 2,
		       params);
	if (!due) {
		log_error("history: cannot apply the retention of %s: %s", table,
			  db_error(db));
		return -EIO;
	}
	for (int i = 0; i < db_rows(due); i++) {
		const char *one[] = { table, db_value(due, i, 0), params[2] };

		r = db_query(db, "select partition, month, rows, action"
				 " from rl_history_remove($1, $2, $3)", 3, one);
		if (!r) {
			log_error("history: cannot apply the retention of %s: %s",
				  table, db_error(db));
			rc = -EIO;
			break;
		}
		log_info("history: %s partition %s (month %s, %s rows; %s keeps "
			 "%ld months; its aggregates stay in %s)",
			 db_value(r, 0, 3), db_value(r, 0, 0), db_value(r, 0, 1),
			 db_value(r, 0, 2), table, months, aggregates);
		db_result_free(r);
	}
	db_result_free(due);
	return rc;
}

int partitions_maintain(struct db *db, const struct config *cfg)
{
	int rc = make_ahead(db, cfg->partitions_ahead);

	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		long months = *(const long *)((const char *)cfg + tables[i].retain);

		if (months <= 0)
			continue;
		if (roll_up(db, tables[i].table, tables[i].aggregates) < 0 ||
		    retire(db, tables[i].table, tables[i].aggregates, months,
			   cfg->retention_detach) < 0)
			rc = -EIO;
	}
	return rc;
}

void partitions_tick(struct db *db, const struct config *cfg, time_t *due)
{
	time_t now = time(NULL);

	if (*due > now)
		return;
	*due = now + (partitions_maintain(db, cfg) == 0 ? PARTITIONS_EVERY_S
						     : HISTORY_RETRY_S);
}
