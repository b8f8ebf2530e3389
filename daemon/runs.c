/*
 * runs.c - starting, cancelling and finishing runs.  See engine.h.
 *
 * Starting a run re-reads its YAML with the daemon's own plugins (what a
 * user's `roofline submit` checked on a login node is not trusted) and
 * expands it into step instances in one transaction: a Slurm step of a
 * `nodes: each` or node-list pipeline gets one instance per node, needing the
 * instances of its needs on the same node; a daemon step needs every
 * instance of its needs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "site_child.h"
#include "log.h"
#include "pipeline.h"
#include "records.h"
#include "slurm.h"
#include "spool_dirs.h"
#include "spool_space.h"
#include "step_policy.h"
#include "util.h"

/* The name of the first gres a pipeline asks for ("gpu" of "gpu:h100:2"),
 * or NULL (caller frees). */
static char *gres_name(const struct pipeline *p)
{
	const char *g = p->slurm.gres;

	return g && *g ? xstrndup(g, strcspn(g, ":,")) : NULL;
}

/* Slurm's judgement of one partition's nodes, asked once per pass over the
 * queued runs however many of them fan out over it (250 runs queued at once
 * would otherwise ask slurmctld for every node 250 times). */
struct partition_cache {
	char *partition, *gres;       /* the question; NULL: default / none */
	struct slurm_node_state *all; /* the answer, owned */
	size_t n_all;
	bool filled;
};

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void partition_cache_release(struct partition_cache *c)
{
	free(c->partition);
	free(c->gres);
	slurm_nodes_free(c->all, c->n_all);
	memset(c, 0, sizeof(*c));
}

/* The partition's nodes, from the cache when it holds the same question;
 * *all is borrowed from the cache.  0 or -errno with err. */
static int partition_nodes(struct partition_cache *c, const char *partition,
			   const char *gres,
			   const struct slurm_node_state **all, size_t *n_all,
			   struct strbuf *err)
{
	if (!c->filled || !same_text(c->partition, partition) ||
	    !same_text(c->gres, gres)) {
		int rc;

		partition_cache_release(c);
		rc = slurm_partition_nodes(partition, &c->all, &c->n_all, err);
		if (rc < 0)
			return rc;
		for (size_t i = 0; gres && i < c->n_all; i++) {
			struct slurm_node_state *nd = &c->all[i];

			if (nd->usable && pipeline_gres_count(nd->gres, gres) == 0) {
				nd->usable = false;
				free(nd->reason);
				nd->reason = xasprintf("no '%s' gres", gres);
			}
		}
		c->partition = partition ? xstrdup(partition) : NULL;
		c->gres = gres ? xstrdup(gres) : NULL;
		c->filled = true;
	}
	*all = c->all;
	*n_all = c->n_all;
	return 0;
}

/* The nodes a run's Slurm steps are spread over: NULL-terminated, "" for
 * a pipeline that is not per node (caller frees).  For `nodes: each`, *all
 * gets every node of the partition as Slurm judged it (the unused ones are
 * recorded), borrowed from cache. */
static char **run_nodes(const struct pipeline *p, struct partition_cache *cache,
			size_t *n, const struct slurm_node_state **all,
			size_t *n_all, struct strbuf *err)
{
	char **nodes = NULL, *gres = gres_name(p);
	int rc;

	*n = 0;
	switch (p->slurm.nodes) {
	case PIPELINE_NODES_EACH:
		rc = partition_nodes(cache, p->slurm.partition, gres, all, n_all,
				     err);
		free(gres);
		if (rc < 0)
			return NULL;
		nodes = xcalloc(*n_all + 1, sizeof(char *));
		for (size_t i = 0; i < *n_all; i++)
			if ((*all)[i].usable)
				nodes[(*n)++] = xstrdup((*all)[i].name);
		if (*n == 0) {
			strbuf_addf(err, "no usable node in partition '%s'",
				    p->slurm.partition ? p->slurm.partition
						       : "(default)");
			for (size_t i = 0; i < *n_all; i++)
				strbuf_addf(err, "%s %s %s%s%s%s", i ? "," : ":",
					    (*all)[i].name, (*all)[i].state,
					    (*all)[i].reason[0] ? " (" : "",
					    (*all)[i].reason,
					    (*all)[i].reason[0] ? ")" : "");
			free(nodes);
			return NULL;
		}
		return nodes;
	case PIPELINE_NODES_LIST:
		free(gres);
		nodes = xcalloc(p->slurm.n_node_names + 1, sizeof(char *));
		for (size_t i = 0; i < p->slurm.n_node_names; i++)
			nodes[i] = xstrdup(p->slurm.node_names[i]);
		*n = p->slurm.n_node_names;
		return nodes;
	case PIPELINE_NODES_COUNT:
		break;
	}
	free(gres);
	nodes = xcalloc(2, sizeof(char *));
	nodes[0] = xstrdup("");
	*n = 1;
	return nodes;
}

/* Record every node of a `nodes: each` partition (NULL: Slurm's default,
 * recorded as ''), used or not, with what Slurm said of it.  0 or -EIO. */
static int record_run_nodes(struct engine *e, long run_id, const char *partition,
			    const struct slurm_node_state *all, size_t n_all)
{
	char run[32];

	snprintf(run, sizeof(run), "%ld", run_id);
	for (size_t i = 0; i < n_all; i++) {
		const char *params[] = { run, all[i].name,
					 all[i].usable ? "true" : "false",
					 all[i].state, all[i].reason,
					 partition ? partition : "" };

		if (db_exec(e->db, "insert into run_nodes (run_id, node, used,"
				   " slurm_state, reason, partition) values ($1, $2,"
				   " $3, $4, $5, $6) on conflict do nothing", 6, params) < 0)
			return -EIO;
		if (!all[i].usable)
			log_info("run %ld: node %s not used: %s%s%s", run_id,
				 all[i].name, all[i].state,
				 all[i].reason[0] ? ", " : "", all[i].reason);
	}
	return 0;
}

static void free_nodes(char **nodes)
{
	for (char **p = nodes; p && *p; p++)
		free(*p);
	free(nodes);
}

/* steps.options text: the step's `with:` and its Slurm settings; a gres
 * count "all" becomes the node's own count (node_gres). */
static void step_options_text(const struct pipeline *p,
			      const struct pipeline_step *st, long node_gres,
			      struct strbuf *out)
{
	const struct pipeline_slurm *sl = &p->slurm;
	char time_s[32], nodes[32];
	char *gres = sl->gres ? pipeline_gres_resolve(sl->gres, node_gres)
			      : xstrdup("");

	for (size_t i = 0; i < st->n_opts; i++)
		records_format(out, "option", (const struct rl_field[]){
			{ "key", st->opts[i].a }, { "value", st->opts[i].b },
			{ NULL, NULL } });
	snprintf(time_s, sizeof(time_s), "%ld", sl->time_s);
	snprintf(nodes, sizeof(nodes), "%ld",
		 sl->nodes == PIPELINE_NODES_COUNT
			 ? pipeline_app_nodes(&st->app, sl->node_count,
					      sl->nodes_at.line != 0)
			 : 1);
	records_format(out, "slurm", (const struct rl_field[]){
		{ "partition", sl->partition ? sl->partition : "" },
		{ "gres", gres },
		{ "account", sl->account ? sl->account : "" },
		{ "qos", sl->qos ? sl->qos : "" },
		{ "constraint", sl->constraint ? sl->constraint : "" },
		{ "time_s", time_s }, { "nodes", nodes }, { NULL, NULL } });
	pipeline_app_format(&st->app, out);
	free(gres);
}

struct expansion {
	const struct pipeline *p;
	char **nodes;
	size_t n_nodes;
	const struct slurm_node_state *all; /* nodes: each: the partition */
	size_t n_all;
	long *ids;   /* [step * n_nodes + node]; 0 where no instance */
};

/* "{id,id,...}" of the instances of need `ni` that an instance on `node`
 * (index k, or SIZE_MAX for a single instance) waits for. */
static void needs_literal(const struct expansion *x, size_t ni, size_t k,
			  struct strbuf *out)
{
	bool first = true;

	for (size_t j = 0; j < x->n_nodes; j++) {
		long id = x->ids[ni * x->n_nodes + j];

		if (!id || (k != SIZE_MAX && x->p->steps[ni].on_daemon == false &&
			    j != k))
			continue;
		strbuf_addf(out, "%s%ld", first ? "" : ",", id);
		first = false;
	}
}

/* How many of the asked gres `node` has (1 when unknown). */
static long node_gres_count(const struct expansion *x, const char *node)
{
	char *name = gres_name(x->p);
	long count = 0;

	for (size_t i = 0; name && node[0] && i < x->n_all; i++)
		if (strcmp(x->all[i].name, node) == 0)
			count = pipeline_gres_count(x->all[i].gres, name);
	free(name);
	return count > 0 ? count : 1;
}

static int insert_instance(struct engine *e, long run_id,
			   const struct expansion *x, size_t si, size_t k)
{
	const struct pipeline_step *st = &x->p->steps[si];
	const char *node = st->on_daemon ? "" : x->nodes[k];
	struct strbuf needs = STRBUF_INIT, opts = STRBUF_INIT;
	char run[32], retries[32], timeout[32], pending[32], minsucc[32];
	const char *params[11];
	struct db_result *r;
	int rc = -EIO;

	strbuf_init(&needs);
	strbuf_init(&opts);
	strbuf_addch(&needs, '{');
	for (size_t i = 0; i < st->n_needs; i++) {
		if (needs.len > 1)
			strbuf_addch(&needs, ',');
		needs_literal(x, st->needs_idx[i],
			      st->on_daemon || !node[0] ? SIZE_MAX : k, &needs);
	}
	strbuf_addch(&needs, '}');
	step_options_text(x->p, st, node_gres_count(x, node), &opts);
	snprintf(run, sizeof(run), "%ld", run_id);
	snprintf(retries, sizeof(retries), "%d", st->retries);
	snprintf(timeout, sizeof(timeout), "%ld", st->timeout_s);
	params[0] = run;
	params[1] = st->id;
	params[2] = node;
	params[3] = st->plugin;
	params[4] = st->on_daemon ? "true" : "false";
	params[5] = needs.buf;
	params[6] = retries;
	params[7] = st->timeout_s > 0 ? timeout : NULL;
	params[8] = opts.buf;
	snprintf(pending, sizeof(pending), "%ld", st->pending_limit_s);
	params[9] = st->pending_limit_s > 0 ? pending : NULL;
	snprintf(minsucc, sizeof(minsucc), "%.6g", st->min_success);
	params[10] = st->min_success > 0 ? minsucc : NULL;
	r = db_query(e->db, "insert into steps (run_id, step_id, node, plugin,"
			    " on_daemon, needs, retries, timeout_s, options,"
			    " pending_limit_s, min_success, waiting_on) values"
			    " ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
			    " cardinality($6::bigint[])) returning id", 11, params);
	if (r && db_rows(r) == 1) {
		x->ids[si * x->n_nodes + k] = db_long(r, 0, 0);
		rc = 0;
	}
	db_result_free(r);
	strbuf_release(&needs);
	strbuf_release(&opts);
	return rc;
}

static int insert_steps(struct engine *e, long run_id, struct expansion *x)
{
	size_t *order = xcalloc(x->p->n_steps, sizeof(size_t));
	int rc = pipeline_topo_order(x->p, order);

	for (size_t i = 0; i < x->p->n_steps && rc == 0; i++) {
		size_t si = order[i];
		size_t count = x->p->steps[si].on_daemon ? 1 : x->n_nodes;

		for (size_t k = 0; k < count && rc == 0; k++)
			rc = insert_instance(e, run_id, x, si, k);
	}
	free(order);
	return rc;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Write one attached file (bytea in hex text form) as `name` in the
 * directory open at dir_fd, owned by the run's user. */
static int write_input(int dir_fd, const char *name, const char *hex,
		       uid_t uid, gid_t gid)
{
	size_t n = strlen(hex) > 2 ? (strlen(hex) - 2) / 2 : 0;
	unsigned char *data = xmalloc(n + 1);
	int rc;

	for (size_t i = 0; i < n; i++)
		data[i] = (unsigned char)(hex_digit(hex[2 + 2 * i]) << 4 |
					  hex_digit(hex[3 + 2 * i]));
	rc = spool_file_write(dir_fd, name, data, n, uid, gid, 0600);
	free(data);
	return rc;
}

/* The run's attachments into inputs/ of the run directory open at run_fd:
 * made fresh (one left by an earlier start is set aside, never reused),
 * filled while it is root's, handed to the owner last.  0 or -errno with
 * err. */
static int stage_inputs(struct engine *e, long run_id, int run_fd,
			const char *spool, bool facility, const char *owner,
			struct strbuf *err)
{
	char id[32];
	const char *params[] = { id };
	struct db_result *r;
	char *aside = NULL;
	uid_t uid;
	gid_t gid;
	int rc = 0, fd = -1;

	snprintf(id, sizeof(id), "%ld", run_id);
	/* The names first, then each file alone: one file's content in
	 * memory at a time (sql/004, sql/020 bound their number and size). */
	r = db_query(e->db, "select name from run_files where run_id = $1"
			    " order by name", 1, params);
	if (!r) {
		strbuf_addf(err, "cannot read the run's files: %s", db_error(e->db));
		return -EIO;
	}
	if (db_rows(r) == 0)
		goto out;
	rc = engine_user_identity(e, facility, owner, &uid, &gid, err);
	if (rc < 0)
		goto out;
	/* one left by a start before a restart is set aside, not reused */
	fd = spool_dir_fresh_aside(run_fd, "inputs", &aside);
	if (aside)
		log_warn("%s/inputs was left by a start before a restart: moved "
			 "aside as %s, not reused", spool, aside);
	free(aside);
	rc = fd < 0 ? fd : 0;
	for (int i = 0; rc == 0 && i < db_rows(r); i++) {
		const char *fparams[] = { id, db_value(r, i, 0) };
		struct db_result *f = db_query(e->db, "select content from run_files"
					       " where run_id = $1 and name = $2",
					       2, fparams);

		if (!f || db_rows(f) != 1) {
			strbuf_addf(err, "cannot read the run's file %s: %s",
				    db_value(r, i, 0), f ? "gone" : db_error(e->db));
			rc = -EIO;
		} else {
			rc = write_input(fd, db_value(r, i, 0), db_value(f, 0, 0),
					 uid, gid);
		}
		db_result_free(f);
	}
	if (rc == 0)
		rc = spool_dir_hand_over(fd, uid, gid, 0700);
	if (rc < 0 && !err->len)
		strbuf_addf(err, "cannot write the run's files into %s/inputs: %s",
			    spool, strerror(-rc));
out:
	if (fd >= 0)
		close(fd);
	db_result_free(r);
	return rc;
}

/* Fail queued run run_id with error; true when it is no longer queued. */
static bool run_fail(struct engine *e, long run_id, const char *error)
{
	char id[32];
	const char *params[] = { id, error };
	long changed;

	snprintf(id, sizeof(id), "%ld", run_id);
	changed = db_exec(e->db, "update runs set state = 'failed', error = $2,"
				 " ended_at = now() where id = $1 and state ="
				 " 'queued'", 2, params);
	log_error("run %ld failed to start: %s", run_id, error);
	return changed >= 0;
}

/* A queued run made ready to be recorded as started: its steps expanded and
 * its directory made; only the database part is left (record_start). */
struct run_start {
	long id;
	char *spool;        /* owned */
	struct pipeline *p; /* owned */
	struct expansion x; /* x.nodes and x.ids owned, x.all borrowed */
};

static void run_start_release(struct run_start *rs)
{
	free(rs->x.ids);
	free_nodes(rs->x.nodes);
	pipeline_free(rs->p);
	free(rs->spool);
	memset(rs, 0, sizeof(*rs));
}

/*
 * Everything of starting run `run_id` but the database: re-read its YAML,
 * expand it over its nodes, make its directory and stage its files (only
 * when has_files: the queued query says whether it has any).  0 and *rs
 * filled (caller releases), or -1 when the run failed (recorded here).
 */
static int prepare_start(struct engine *e, struct partition_cache *cache,
			 long run_id, const char *yaml, bool facility,
			 const char *owner, bool has_files, struct run_start *rs)
{
	struct strbuf err = STRBUF_INIT;
	char name[32];
	uid_t uid;
	gid_t gid;
	int rc = -1, spool_fd = -1, run_fd = -1;

	memset(rs, 0, sizeof(*rs));
	rs->id = run_id;
	strbuf_init(&err);
	snprintf(name, sizeof(name), "run-%ld", run_id);
	if (engine_user_identity(e, facility, owner, &uid, &gid, &err) < 0) {
		run_fail(e, run_id, err.buf);
		goto out;
	}
	rs->p = pipeline_load(name, yaml, strlen(yaml), e->cfg->plugin_dir, &err);
	if (!rs->p || !(rs->x.nodes = run_nodes(rs->p, cache, &rs->x.n_nodes,
						  &rs->x.all, &rs->x.n_all,
						  &err))) {
		if (err.len && err.buf[err.len - 1] == '\n')
			err.buf[--err.len] = '\0';
		run_fail(e, run_id, err.buf);
		goto out;
	}
	if (step_policy_check(e->cfg, rs->p, facility, &err) < 0) {
		run_fail(e, run_id, err.buf);
		goto out;
	}
	rs->x.p = rs->p;
	rs->x.ids = xcalloc(rs->p->n_steps * rs->x.n_nodes, sizeof(long));
	rs->spool = xasprintf("%s/run-%ld", e->cfg->spool_dir, run_id);
	/* root's, 0711: its owner reaches the attempt directories beneath,
	 * nobody lists it */
	spool_fd = spool_dir_open_root(e->cfg->spool_dir);
	run_fd = spool_fd < 0 ? spool_fd : spool_dir_root_child(spool_fd, name, 0711);
	if (run_fd < 0) {
		strbuf_addf(&err, "cannot make %s: %s", rs->spool, strerror(-run_fd));
		run_fail(e, run_id, err.buf);
	} else if (has_files && stage_inputs(e, run_id, run_fd, rs->spool,
					     facility, owner, &err) < 0) {
		run_fail(e, run_id, err.buf);
	} else {
		rc = 0;
	}
	if (run_fd >= 0)
		close(run_fd);
	if (spool_fd >= 0)
		close(spool_fd);
out:
	if (rc < 0)
		run_start_release(rs);
	strbuf_release(&err);
	return rc;
}

/* The database part of starting rs, inside the caller's transaction: its
 * step instances and nodes.  0 or -EIO. */
static int record_start(struct engine *e, struct run_start *rs)
{
	if (insert_steps(e, rs->id, &rs->x) < 0 ||
	    record_run_nodes(e, rs->id, rs->p->slurm.partition, rs->x.all,
			     rs->x.n_all) < 0)
		return -EIO;
	return 0;
}

/* Mark runs [0, n) of rs 'running' with their spool directories, in one
 * statement.  0 when every one of them was still queued, else -EIO. */
static int mark_running(struct engine *e, const struct run_start *rs, int n)
{
	struct strbuf ids = STRBUF_INIT, spools = STRBUF_INIT;
	const char *params[2];
	long changed;

	strbuf_init(&ids);
	strbuf_init(&spools);
	strbuf_addch(&ids, '{');
	strbuf_addch(&spools, '{');
	for (int i = 0; i < n; i++) {
		strbuf_addf(&ids, "%s%ld", i ? "," : "", rs[i].id);
		strbuf_addstr(&spools, i ? ",\"" : "\"");
		for (const char *c = rs[i].spool; *c; c++) {
			if (*c == '"' || *c == '\\')
				strbuf_addch(&spools, '\\');
			strbuf_addch(&spools, *c);
		}
		strbuf_addch(&spools, '"');
	}
	strbuf_addch(&ids, '}');
	strbuf_addch(&spools, '}');
	params[0] = ids.buf;
	params[1] = spools.buf;
	changed = db_exec(e->db, "update runs r set state = 'running', started_at"
			  " = now(), spool_dir = u.spool from unnest($1::bigint[],"
			  " $2::text[]) as u(id, spool) where r.id = u.id and"
			  " r.state = 'queued'", 2, params);
	strbuf_release(&ids);
	strbuf_release(&spools);
	if (changed < 0)
		return (int)changed;
	return changed == n ? 0 : -EIO;
}

static void log_started(const struct run_start *rs)
{
	log_info("run %ld (%s) started: %zu steps x %zu node(s)", rs->id,
		 rs->p->name, rs->p->n_steps, rs->x.n_nodes);
}

/* Record the prepared runs as started in one transaction: a few round trips
 * for the whole pass instead of five per run.  0, or -EIO (rolled back:
 * nothing of any of them was recorded). */
static int record_starts(struct engine *e, struct run_start *rs, int n)
{
	int i;

	if (n == 0)
		return 0;
	if (db_begin(e->db) < 0)
		return -EIO;
	for (i = 0; i < n && record_start(e, &rs[i]) == 0; i++)
		;
	if (i < n || mark_running(e, rs, n) < 0 || db_commit(e->db) < 0) {
		db_rollback(e->db);
		return -EIO;
	}
	for (i = 0; i < n; i++)
		log_started(&rs[i]);
	return 0;
}

/* The same one run at a time, each in its own transaction: what a pass falls
 * back to when the batch failed, so that one run that cannot be recorded
 * fails alone, at once, with the database's reason (it is never left queued
 * to be prepared again every pass), except one whose row another session
 * holds (a lock timeout): that one waits, queued.  Returns how many left
 * the queue. */
static int record_starts_one_by_one(struct engine *e, struct run_start *rs,
				    int n)
{
	int gone = 0;

	for (int i = 0; i < n; i++) {
		int rc = -EIO;

		if (db_begin(e->db) == 0 && record_start(e, &rs[i]) == 0 &&
		    (rc = mark_running(e, &rs[i], 1)) == 0 &&
		    db_commit(e->db) == 0) {
			log_started(&rs[i]);
			gone++;
		} else if (rc == -EBUSY) {
			/* a session holds the run's row (its owner's, say)
			 * past db_lock_timeout: it stays queued, tried again
			 * at a later pass, and is not counted as gone */
			log_warn("run %ld is locked by another session: "
				 "starting it later", rs[i].id);
			db_rollback(e->db);
		} else {
			char *why = xasprintf("cannot record the run's start: %s",
					      db_error(e->db));

			db_rollback(e->db);
			if (db_ok(e->db) && run_fail(e, rs[i].id, why))
				gone++;
			free(why);
		}
	}
	return gone;
}

int runs_start_queued(struct engine *e, int max)
{
	char limit[32];
	const char *params[] = { limit };
	struct db_result *r;

	/* a run's directory and its attached files go into the spool: while
	 * it is full, queued runs wait (spool_space.h) instead of failing */
	if (spool_space_hold_runs(e))
		return 0;
	snprintf(limit, sizeof(limit), "%d", max > 0 && max < RUNS_START_MAX
						     ? max : RUNS_START_MAX);
	r = db_query(e->db,
		"select id, yaml, facility, owner, exists (select 1 from run_files f"
		" where f.run_id = runs.id) from runs where state = 'queued'"
		" and not cancel_requested order by id limit $1::int"
		/* a run whose row another session holds (a user's open
		 * transaction) waits for a later pass, not this one */
		" for no key update of runs skip locked", 1, params);
	struct partition_cache cache = { 0 };
	int n = r ? db_rows(r) : 0, ready = 0, gone = 0;
	struct run_start *rs = xcalloc((size_t)(n ? n : 1), sizeof(*rs));

	for (int i = 0; i < n; i++)
		if (prepare_start(e, &cache, db_long(r, i, 0), db_value(r, i, 1),
				  db_value(r, i, 2)[0] == 't', db_value(r, i, 3),
				  db_value(r, i, 4)[0] == 't', &rs[ready]) == 0)
			ready++;
		else
			gone++; /* failed, recorded (or the database is gone) */
	if (record_starts(e, rs, ready) == 0)
		gone += ready;
	else if (db_ok(e->db))
		gone += record_starts_one_by_one(e, rs, ready);
	for (int i = 0; i < ready; i++)
		run_start_release(&rs[i]);
	free(rs);
	partition_cache_release(&cache);
	db_result_free(r);
	/* the engine ticks again at once only when a full batch left the
	 * queue: runs that stay queued must not make it spin */
	return gone;
}

void runs_handle_cancels(struct engine *e)
{
	struct db_result *r;
	struct step_row *steps;
	int n;

	db_exec(e->db, "update runs set state = 'cancelled', ended_at = now(),"
		       " error = 'cancelled before it started' where id in (select"
		       " id from runs where state = 'queued' and cancel_requested"
		       " for no key update skip locked)", 0, NULL);
	steps = engine_steps_query(e,
		"select " ENGINE_STEP_COLUMNS " from steps s join runs r on"
		" r.id = s.run_id where r.state = 'running' and r.cancel_requested"
		" and s.state in ('waiting', 'retry_wait', 'submitting', 'pending',"
		" 'running')", 0, NULL, &n);
	for (int i = 0; steps && i < n; i++) {
		struct step_change c = STEP_CHANGE_NONE;

		if (launch_cancel(&steps[i]) < 0)
			continue; /* Slurm refused: try again next tick */
		c.ended = true;
		c.error = "cancelled";
		c.detail = "run cancelled";
		engine_step_set_state(e, &steps[i], "cancelled", &c);
	}
	engine_steps_free(steps, n);
	r = db_query(e->db, "select id from runs where state = 'running' and"
			    " cancel_requested", 0, NULL);
	if (r && db_rows(r))
		runs_finish_done(e);
	db_result_free(r);
}

void runs_finish_done(struct engine *e)
{
	struct db_result *r = db_query(e->db,
		"update runs r set ended_at = now(), state = case"
		"  when r.cancel_requested then 'cancelled'"
		"  when exists (select 1 from steps s where s.run_id = r.id and"
		"    s.state in ('failed', 'skipped', 'cancelled')) then 'failed'"
		"  else 'succeeded' end,"
		" error = (select string_agg(s.step_id || case when s.node = ''"
		"   then '' else '@' || s.node end || ': ' || s.error, '; '"
		"   order by s.id) from steps s where s.run_id = r.id and"
		"   s.state = 'failed')"
		" where r.id in (select l.id from runs l where l.state = 'running'"
		"  and not exists (select 1 from steps s"
		"  where s.run_id = l.id and s.state in ('waiting', 'retry_wait',"
		"  'submitting', 'pending', 'running'))"
		/* a run whose row another session holds ends next pass */
		"  for no key update of l skip locked)"
		" returning r.id, r.state, coalesce(r.error, '')", 0, NULL);

	for (int i = 0; r && i < db_rows(r); i++)
		log_info("run %ld %s%s%s", db_long(r, i, 0), db_value(r, i, 1),
			 db_value(r, i, 2)[0] ? ": " : "", db_value(r, i, 2));
	/* the facility site shows ended runs: rebuild it when some ended */
	if (r && db_rows(r))
		site_child_request(e->cfg);
	db_result_free(r);
}

void runs_resolve_fan_in(struct engine *e)
{
	struct db_result *r;

	/* Only an ended instance can make a fan-in hopeless. */
	if (!e->fan_in_dirty)
		return;
	e->fan_in_dirty = false;
	r = db_query(e->db,
		"select s.id, string_agg(format('at most %s of %s instances of %s"
		" can succeed (%s needed)', g.ok + g.active, g.total, g.step_id,"
		" g.needed),"
		" '; ') from steps s join runs r on r.id = s.run_id"
		" cross join lateral (select n.step_id, count(*) filter (where"
		"  n.state = 'succeeded') as ok, count(*) filter (where n.state in"
		"  ('waiting', 'retry_wait', 'submitting', 'pending', 'running'))"
		"  as active, count(*) as total, greatest(1, ceil(coalesce("
		"  s.min_success, 0) * count(*))) as needed from steps n where"
		"  n.id = any(s.needs) and n.node <> '' group by n.step_id) g"
		" where r.state = 'running' and s.state = 'waiting' and s.node = ''"
		" and g.ok + g.active < g.needed group by s.id", 0, NULL);

	for (int i = 0; r && i < db_rows(r); i++) {
		const char *params[] = { db_value(r, i, 0) };
		struct step_change c = STEP_CHANGE_NONE;
		struct step_row *rows;
		int n;

		rows = engine_steps_query(e, "select " ENGINE_STEP_COLUMNS
			" from steps s join runs r on r.id = s.run_id where s.id ="
			" $1::bigint and s.state = 'waiting'", 1, params, &n);
		c.error = db_value(r, i, 1);
		c.detail = c.error;
		c.ended = true;
		if (rows && n == 1 &&
		    engine_step_set_state(e, &rows[0], "skipped", &c) == 0)
			engine_skip_dependents(e, &rows[0]);
		engine_steps_free(rows, n);
	}
	db_result_free(r);
}

long runs_queue_facility(struct engine *e, long pipeline_id, const char *name,
			 const char *yaml)
{
	char pid[32];
	const char *params[] = { name, pid, e->cfg->facility_user, yaml };
	struct db_result *r;
	long id = -EIO;

	snprintf(pid, sizeof(pid), "%ld", pipeline_id);
	r = db_query(e->db, "insert into runs (pipeline_name, pipeline_id, owner,"
			    " facility, yaml, trigger) values ($1, $2, $3, true, $4,"
			    " 'schedule') returning id", 4, params);
	if (r && db_rows(r) == 1)
		id = db_long(r, 0, 0);
	db_result_free(r);
	return id;
}
