/*
 * cmd_daemons.c - `roofline status` without a run: which rooflined is the
 * active one on this database and which wait as its standbys (daemon/leader.h).
 * Every role may read the sessions' application names, which the daemons
 * set to "rooflined [standby ]pid N on HOST".
 */
#include <stdio.h>

#include "cli.h"
#include "cli_db.h"

int cli_status_daemons(void)
{
	struct db *db = cli_db_connect("status");
	struct db_result *r;
	int rc = CLI_FAILED;

	if (!db)
		return CLI_FAILED;
	/* the active one: the session that holds the lock (sql/020); a
	 * standby has two sessions of one name: shown once */
	r = db_query(db, "select 'active:  ' || application_name || ' (PostgreSQL"
		     " backend ' || pid || ')', 0 from pg_stat_activity where pid ="
		     " rooflined_daemon_pid() union all select distinct 'standby: '"
		     " || application_name, 1 from pg_stat_activity where"
		     " application_name like 'rooflined standby pid %' order by 2, 1",
		     0, NULL);
	if (!r) {
		fprintf(stderr, "roofline status: %s\n", db_error(db));
		goto out;
	}
	for (int i = 0; i < db_rows(r); i++) {
		if (db_long(r, i, 1) == 0)
			rc = CLI_OK;
		printf("%s\n", db_value(r, i, 0));
	}
	if (rc != CLI_OK)
		printf("active:  none (no rooflined leads this database)\n");
	db_result_free(r);
out:
	db_close(db);
	return rc;
}
