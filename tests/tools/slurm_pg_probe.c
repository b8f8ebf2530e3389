/*
 * slurm_pg_probe - the foundation's end-to-end check, without the engine:
 * submit a batch job through libslurm (daemon/slurm.c) as a given user, wait
 * for it, and write its end state and exit code into a PostgreSQL table
 * through libpq with parameters (daemon/db.c).
 *
 *   slurm_pg_probe USER EXIT_CODE WORKDIR
 *
 * Prints "job <id> <state> <exit code>" and exits 0 when the row was stored.
 */
#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "slurm.h"
#include "util.h"

struct seen {
	uint32_t id;
	int done;
	char state[32];
	int exit_code;
};

static int on_job(void *arg, const struct slurm_job *job)
{
	struct seen *s = arg;

	if (job->id != s->id)
		return 0;
	if (job->phase != SLURM_PHASE_PENDING && job->phase != SLURM_PHASE_RUNNING) {
		s->done = 1;
		snprintf(s->state, sizeof(s->state), "%s", job->state);
		s->exit_code = job->exit_code;
	}
	return 0;
}

static int store(const struct seen *s, struct strbuf *err)
{
	struct db *db = db_connect("", err);
	char id[32], code[32];
	const char *params[] = { id, s->state, code };
	int rc = -EIO;

	if (!db)
		return -EIO;
	snprintf(id, sizeof(id), "%u", s->id);
	snprintf(code, sizeof(code), "%d", s->exit_code);
	if (db_exec(db, "create table if not exists probe_jobs (job_id bigint"
			" primary key, state text not null, exit_code int not null,"
			" at timestamptz not null default now())", 0, NULL) >= 0 &&
	    db_exec(db, "insert into probe_jobs (job_id, state, exit_code)"
			" values ($1, $2, $3)", 3, params) == 1)
		rc = 0;
	else
		strbuf_addf(err, "cannot store: %s", db_error(db));
	db_close(db);
	return rc;
}

int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT, script = STRBUF_INIT;
	struct seen s = { 0 };
	struct passwd *pw;
	char *out;
	int rc = 1;

	if (argc != 4 || !(pw = getpwnam(argv[1]))) {
		fprintf(stderr, "usage: slurm_pg_probe USER EXIT_CODE WORKDIR\n");
		return 2;
	}
	log_init("slurm_pg_probe", RL_LOG_INFO, false);
	strbuf_init(&err);
	strbuf_init(&script);
	strbuf_addf(&script, "#!/bin/sh\nid -u > uid.txt\nexit %d\n", atoi(argv[2]));
	out = xasprintf("%s/job.out", argv[3]);
	slurm_setup(NULL);
	struct slurm_job_request req = {
		.name = "rl.probe", .script = script.buf, .work_dir = argv[3],
		.std_out = out, .gres = "gpu:1", .nodes = 1, .time_limit_s = 60,
		.uid = pw->pw_uid, .gid = pw->pw_gid,
		.env = (char *[]){ "PATH=/usr/bin:/bin", NULL },
	};
	if (slurm_submit(&req, &s.id, &err) < 0)
		goto out;
	for (int i = 0; i < 600 && !s.done; i++) {
		if (slurm_poll("rl.", on_job, &s, &err) < 0)
			goto out;
		if (!s.done)
			poll(NULL, 0, 100);
	}
	if (!s.done) {
		strbuf_addf(&err, "job %u did not end within 60 s", s.id);
		goto out;
	}
	if (store(&s, &err) == 0) {
		printf("job %u %s %d\n", s.id, s.state, s.exit_code);
		rc = 0;
	}
out:
	if (rc)
		fprintf(stderr, "slurm_pg_probe: %s\n", err.buf);
	slurm_teardown();
	strbuf_release(&err);
	strbuf_release(&script);
	free(out);
	return rc;
}
