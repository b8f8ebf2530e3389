/*
 * roofline submit - check a pipeline here, queue it as the user who typed the
 * command (the database records who that is: peer authentication), print
 * the run id; with --wait, follow the run to its end, a line per state change.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_cluster.h"
#include "cli_db.h"
#include "pipeline.h"
#include "paths.h"
#include "plugin_loader.h"
#include "util.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: roofline submit [--wait] [--attach FILE]... [--night DATE]\n"
		"                       [--plugin-dir DIR] FILE\n"
		"\n"
		"Checks FILE (as `roofline validate --cluster` does) and queues a run\n"
		"of it as you; prints the run id.  An invalid pipeline queues nothing,\n"
		"nor does one that the Slurm cluster would refuse (unknown partition,\n"
		"gres no node of the partition has, time over its MaxTime, nodes not\n"
		"in it); when the cluster cannot be reached (SLURM_CONF, else\n"
		"/etc/slurm/slurm.conf, unreadable, or slurmctld not answering), a\n"
		"warning says so and the run is queued.\n"
		"\n"
		"  -w, --wait         follow the run until it ends, printing a line per\n"
		"                     step state change; exit 0 only if it succeeded\n"
		"  -a, --attach FILE  send FILE with the run; steps find it in the run\n"
		"                     directory as inputs/NAME (NAME: FILE's base name)\n"
		"  --night DATE       the night the run stands for (YYYY-MM-DD; default:\n"
		"                     today, UTC): findings are per night, and a replay\n"
		"                     of recorded nights declares each one here\n"
		"  --plugin-dir DIR   plugins to check the steps against\n"
		"\n"
		"Refused at once, queueing nothing: root, and the daemon's own\n"
		"database role (the owner of the table runs).\n"
		"\n"
		"Exit status: 0 queued (or, with --wait, succeeded), 1 invalid or\n"
		"failed, 2 usage.\n");
}

#define ATTACH_MAX_BYTES (64u << 20)

/* YYYY-MM-DD, a real calendar day. */
static bool night_is_valid(const char *s)
{
	struct tm tm = { 0 };
	const char *end = strptime(s, "%Y-%m-%d", &tm);
	int mday = tm.tm_mday;

	if (!end || *end || strlen(s) != 10)
		return false;
	tm.tm_isdst = -1;
	tm.tm_hour = 12;
	timegm(&tm);
	return tm.tm_mday == mday;
}

/* Store one attached file with run id; 0 or -1 (message printed). */
static int attach_file(struct db *db, const char *run, const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct strbuf hex = STRBUF_INIT;
	const char *params[3] = { run, base, NULL };
	char *data;
	size_t len;
	int rc = util_read_file(path, ATTACH_MAX_BYTES, &data, &len);

	if (rc < 0) {
		fprintf(stderr, "roofline submit: cannot attach %s: %s\n", path,
			rc == -EFBIG ? "larger than 64 MiB" : strerror(-rc));
		return -1;
	}
	strbuf_init(&hex);
	strbuf_addstr(&hex, "\\x");
	for (size_t i = 0; i < len; i++)
		strbuf_addf(&hex, "%02x", (unsigned char)data[i]);
	params[2] = hex.buf;
	if (db_exec(db, "insert into run_files (run_id, name, content) values"
			" ($1, $2, $3::bytea)", 3, params) != 1) {
		fprintf(stderr, "roofline submit: cannot attach %s: %s\n", path,
			db_error(db));
		rc = -1;
	}
	strbuf_release(&hex);
	free(data);
	return rc < 0 ? -1 : 0;
}

/*
 * A run runs as the user who queued it, so it must be queued by a person.
 * Root is refused here, and so is the daemon's own database role: the owner
 * of the table runs (the daemon applies the migrations, so it owns every
 * table; the database's owner may be someone else, such as a DBA).  The
 * daemon would fail such a run anyway (engine_user_identity); refusing it
 * here says so at once and queues nothing.  0, or -1 with a message.
 */
static int refuse_root(void)
{
	if (getuid() != 0 && geteuid() != 0)
		return 0;
	fprintf(stderr, "roofline submit: refusing to queue a run as root (a run "
			"runs as the user who submits it: submit as yourself)\n");
	return -1;
}

static int refuse_daemon_role(struct db *db)
{
	struct db_result *r = db_query(db,
		"select current_user, pg_get_userbyid(relowner) from pg_class"
		" where oid = 'runs'::regclass", 0, NULL);
	int rc = -1;

	if (!r || db_rows(r) != 1)
		fprintf(stderr, "roofline submit: cannot learn the daemon's "
				"database role: %s\n", db_error(db));
	else if (strcmp(db_value(r, 0, 0), db_value(r, 0, 1)) == 0)
		fprintf(stderr, "roofline submit: refusing to queue a run as "
				"'%s', the daemon's own database role (it owns the "
				"table runs; submit as yourself)\n",
			db_value(r, 0, 0));
	else
		rc = 0;
	db_result_free(r);
	return rc;
}

/* Queue the run and its attachments in one transaction; the run id or -1. */
static long queue_run(struct db *db, const struct pipeline *p,
		      const char *night, char **attach, int n_attach)
{
	const char *params[] = { p->name, p->yaml, night };
	struct db_result *r = NULL;
	char run[32];
	long id = -1;

	if (db_begin(db) < 0)
		goto fail;
	r = night ? db_query(db, "insert into runs (pipeline_name, yaml, night) "
			       "values ($1, $2, $3::date) returning id", 3, params)
		  : db_query(db, "insert into runs (pipeline_name, yaml) values "
			       "($1, $2) returning id", 2, params);
	if (!r || db_rows(r) != 1)
		goto fail;
	id = db_long(r, 0, 0);
	snprintf(run, sizeof(run), "%ld", id);
	for (int i = 0; i < n_attach; i++)
		if (attach_file(db, run, attach[i]) < 0)
			goto out_rollback;
	if (db_commit(db) < 0)
		goto fail;
	db_result_free(r);
	return id;
fail:
	fprintf(stderr, "roofline submit: cannot queue the run: %s\n",
		db_error(db));
out_rollback:
	db_rollback(db);
	db_result_free(r);
	return -1;
}

/* Print the step events newer than *last_event; returns the run's state
 * (caller frees) or NULL on a database error. */
static char *follow_once(struct db *db, const char *run, long *last_event)
{
	char last[32];
	const char *params[] = { run, last };
	struct db_result *r;
	char *state = NULL;

	snprintf(last, sizeof(last), "%ld", *last_event);
	r = db_query(db, "select e.id, to_char(e.at, 'HH24:MI:SS'), s.step_id,"
			 " s.node, e.state, e.attempt, coalesce(e.detail, '')"
			 " from step_events e join steps s on s.id = e.step"
			 " where s.run_id = $1 and e.id > $2 order by e.id",
		     2, params);
	for (int i = 0; r && i < db_rows(r); i++) {
		const char *node = db_value(r, i, 3), *detail = db_value(r, i, 6);

		printf("%s  %s%s%s  %s (attempt %s)%s%s\n", db_value(r, i, 1),
		       db_value(r, i, 2), node[0] ? "@" : "", node,
		       db_value(r, i, 4), db_value(r, i, 5), detail[0] ? ": " : "",
		       detail);
		*last_event = db_long(r, i, 0);
	}
	db_result_free(r);
	r = db_query(db, "select state, coalesce(error, '') from runs where id = $1",
		     1, params);
	if (r && db_rows(r) == 1) {
		state = xstrdup(db_value(r, 0, 0));
		if (strcmp(state, "failed") == 0 && db_value(r, 0, 1)[0])
			printf("run %s failed: %s\n", run, db_value(r, 0, 1));
	}
	db_result_free(r);
	fflush(stdout);
	return state;
}

/* True when a rooflined holds this database (sql/006_hardening.sql). */
static bool daemon_running(struct db *db)
{
	struct db_result *r = db_query(db, "select rooflined_daemon_pid() is not"
					   " null", 0, NULL);
	bool yes = !r || (db_rows(r) == 1 && db_value(r, 0, 0)[0] == 't');

	db_result_free(r);
	return yes;
}

/* Polls of FOLLOW_POLL_MS between two looks for a daemon. */
#define FOLLOW_POLL_MS 500
#define DAEMON_CHECK_POLLS 4

static int follow(struct db *db, long id)
{
	char run[32], *state, *last_state = NULL;
	long last_event = 0;
	bool warned = false;
	int rc = CLI_FAILED, polls = 0;

	snprintf(run, sizeof(run), "%ld", id);
	while ((state = follow_once(db, run, &last_event))) {
		/* A queued run with nobody to start it would wait in silence. */
		if (strcmp(state, "queued") == 0 &&
		    ++polls % DAEMON_CHECK_POLLS == 0) {
			bool running = daemon_running(db);

			if (!running && !warned)
				fprintf(stderr, "roofline submit: no rooflined is running for "
					"this database: run %ld stays queued until one starts "
					"(waiting; ^C leaves it queued)\n", id);
			warned = !running;
		}
		if (!last_state || strcmp(state, last_state) != 0)
			printf("run %ld: %s\n", id, state);
		free(last_state);
		last_state = state;
		if (strcmp(state, "succeeded") == 0) {
			rc = CLI_OK;
			break;
		}
		if (strcmp(state, "failed") == 0 || strcmp(state, "cancelled") == 0)
			break;
		fflush(stdout);
		poll(NULL, 0, FOLLOW_POLL_MS);
	}
	free(last_state);
	return rc;
}

int cmd_submit(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "wait", no_argument, NULL, 'w' },
		{ "attach", required_argument, NULL, 'a' },
		{ "plugin-dir", required_argument, NULL, 'p' },
		{ "night", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct strbuf err = STRBUF_INIT;
	char *dir = NULL;
	const char *night = NULL;
	bool wait = false;
	char **attach = xcalloc((size_t)argc, sizeof(char *));
	int n_attach = 0;
	struct pipeline *p = NULL;
	struct db *db = NULL;
	int c, rc = CLI_FAILED;
	long id;

	optind = 1;
	while ((c = getopt_long(argc, argv, "wa:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'w': wait = true; break;
		case 'a': attach[n_attach++] = optarg; break;
		case 'p': free(dir); dir = xstrdup(optarg); break;
		case 'n': night = optarg; break;
		case 'h': usage(stdout); rc = CLI_OK; goto out;
		default: usage(stderr); rc = CLI_USAGE; goto out;
		}
	}
	if (argc - optind != 1) {
		usage(stderr);
		rc = CLI_USAGE;
		goto out;
	}
	if (night && !night_is_valid(night)) {
		fprintf(stderr, "roofline submit: --night '%s': expected a date "
			"YYYY-MM-DD\n", night);
		rc = CLI_USAGE;
		goto out;
	}
	if (refuse_root() < 0)
		goto out;
	if (!dir)
		dir = paths_plugin_dir();
	strbuf_init(&err);
	p = pipeline_load_file(argv[optind], dir, &err);
	if (!p) {
		fprintf(stderr, "%s", err.buf);
		goto out;
	}
	if (cli_cluster_check("submit", p, false) < 0)
		goto out;
	db = cli_db_connect("submit");
	if (!db || refuse_daemon_role(db) < 0 ||
	    (id = queue_run(db, p, night, attach, n_attach)) < 0)
		goto out;
	printf("%ld\n", id);
	fflush(stdout);
	rc = wait ? follow(db, id) : CLI_OK;
out:
	db_close(db);
	pipeline_free(p);
	strbuf_release(&err);
	free(attach);
	free(dir);
	return rc;
}
