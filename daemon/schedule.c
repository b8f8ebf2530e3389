/*
 * schedule.c - facility pipelines and their cron schedules.  See engine.h.
 *
 * The pipeline directory is read at start and on SIGHUP; the pipelines
 * table remembers each pipeline's next slot, so a schedule missed while the
 * daemon was down fires once when it comes back (its next_fire_at is in the
 * past), and then moves to the first slot after now.  Queuing the run and
 * moving the slot happen in one transaction, so a crash cannot fire twice.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cron.h"
#include "engine.h"
#include "log.h"
#include "pipeline.h"
#include "util.h"

static int is_yaml(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' &&
	       ((n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0) ||
		(n > 4 && strcmp(d->d_name + n - 4, ".yml") == 0));
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void epoch_text(char *buf, size_t size, time_t t)
{
	snprintf(buf, size, "%lld", (long long)t);
}

static int store_pipeline(struct engine *e, const char *path,
			  const struct pipeline *p)
{
	char next[32] = "";
	const char *params[5] = { p->name, path, p->yaml, p->schedule_text, NULL };
	long rc;

	if (p->schedule_text) {
		epoch_text(next, sizeof(next), cron_next(&p->schedule, time(NULL)));
		params[4] = next;
	}
	rc = db_exec(e->db,
		"insert into pipelines (name, source, yaml, schedule, next_fire_at)"
		" values ($1, $2, $3, $4, to_timestamp($5::bigint))"
		" on conflict (name) do update set source = excluded.source,"
		" yaml = excluded.yaml, loaded_at = now(), active = true,"
		" next_fire_at = case when pipelines.schedule is not distinct from"
		"   excluded.schedule and pipelines.active"
		"   then pipelines.next_fire_at else excluded.next_fire_at end,"
		" schedule = excluded.schedule", 5, params);
	return rc < 0 ? -EIO : 0;
}

int schedule_load_pipelines(struct engine *e)
{
	const char *dir = e->cfg->pipeline_dir;
	struct strbuf names = STRBUF_INIT;
	struct dirent **list = NULL;
	int n, loaded = 0, rc = 0;

	if (!dir || !*dir)
		return 0;
	n = scandir(dir, &list, is_yaml, by_name);
	if (n < 0) {
		log_error("cannot read the pipeline directory %s: %s", dir,
			  strerror(errno));
		return -EIO;
	}
	strbuf_init(&names);
	strbuf_addch(&names, '{');
	for (int i = 0; i < n; i++) {
		struct strbuf err = STRBUF_INIT;
		char *path = xasprintf("%s/%s", dir, list[i]->d_name);
		struct pipeline *p;

		strbuf_init(&err);
		p = pipeline_load_file(path, e->cfg->plugin_dir, &err);
		if (!p) {
			log_error("facility pipeline %s is invalid and was not "
				  "loaded:\n%s", path, err.buf);
		} else if (store_pipeline(e, path, p) < 0) {
			rc = -EIO;
		} else {
			strbuf_addf(&names, "%s\"%s\"", loaded ? "," : "", p->name);
			loaded++;
			log_info("facility pipeline '%s' loaded from %s%s%s", p->name,
				 path, p->schedule_text ? ", schedule " : "",
				 p->schedule_text ? p->schedule_text : "");
		}
		pipeline_free(p);
		strbuf_release(&err);
		free(path);
		free(list[i]);
	}
	free(list);
	strbuf_addch(&names, '}');
	const char *params[] = { names.buf };

	if (rc == 0 && db_exec(e->db, "update pipelines set active = false where"
				      " active and not (name = any($1::text[]))",
			       1, params) < 0)
		rc = -EIO;
	strbuf_release(&names);
	return rc;
}

static void fire(struct engine *e, long id, const char *name,
		 const char *yaml, const char *schedule)
{
	struct strbuf err = STRBUF_INIT;
	struct cron c;
	char pid[32], next[32];
	const char *params[] = { pid, next };
	long run;

	strbuf_init(&err);
	if (cron_parse(schedule, &c, &err) < 0) {
		log_error("pipeline '%s': bad schedule: %s", name, err.buf);
		goto out;
	}
	snprintf(pid, sizeof(pid), "%ld", id);
	epoch_text(next, sizeof(next), cron_next(&c, time(NULL)));
	if (db_begin(e->db) < 0)
		goto out;
	run = runs_queue_facility(e, id, name, yaml);
	if (run < 0 ||
	    db_exec(e->db, "update pipelines set next_fire_at ="
			   " to_timestamp($2::bigint) where id = $1", 2, params) != 1 ||
	    db_commit(e->db) < 0) {
		db_rollback(e->db);
		log_error("cannot fire pipeline '%s': %s", name, db_error(e->db));
		goto out;
	}
	log_info("schedule fired: pipeline '%s' queued as run %ld", name, run);
out:
	strbuf_release(&err);
}

void schedule_fire_due(struct engine *e)
{
	struct db_result *r = db_query(e->db,
		"select id, name, yaml, schedule from pipelines where active and"
		" schedule is not null and next_fire_at <= now() order by id",
		0, NULL);

	for (int i = 0; r && i < db_rows(r); i++)
		fire(e, db_long(r, i, 0), db_value(r, i, 1), db_value(r, i, 2),
		     db_value(r, i, 3));
	db_result_free(r);
}
