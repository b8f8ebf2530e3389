/* slurm.c - see slurm.h.  The only file that includes slurm/slurm.h. */
#include "slurm.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void kept_release(void);

/* Exported by libslurm 22.05 (src/common/slurm_protocol_defs.c) though
 * slurm.h does not declare them; both return static strings. */
extern char *slurm_job_reason_string(enum job_state_reason inx);
extern char *slurm_node_state_string(uint32_t inx);

void slurm_setup(const char *conf_path)
{
	slurm_init(conf_path);
}

void slurm_teardown(void)
{
	kept_release();
	slurm_fini();
}

static char *opt_dup(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

/* Errors that say slurmctld did not answer (restarting, failing over to its
 * backup), not that it refused: the job may or may not exist. */
static bool controller_unreachable(int code)
{
	switch (code) {
	case SLURM_COMMUNICATIONS_CONNECTION_ERROR:
	case SLURM_COMMUNICATIONS_SEND_ERROR:
	case SLURM_COMMUNICATIONS_RECEIVE_ERROR:
	case SLURM_COMMUNICATIONS_SHUTDOWN_ERROR:
	case SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR:
	case SLURMCTLD_COMMUNICATIONS_SEND_ERROR:
	case SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR:
	case SLURMCTLD_COMMUNICATIONS_SHUTDOWN_ERROR:
	case SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT:
	case ESLURM_IN_STANDBY_MODE:
	case ESLURM_IN_STANDBY_USE_BACKUP:
		return true;
	default:
		return false;
	}
}

int slurm_submit(const struct slurm_job_request *req, uint32_t *job_id,
		 struct strbuf *err)
{
	job_desc_msg_t desc;
	submit_response_msg_t *resp = NULL;
	size_t env_n = 0;
	int rc = 0;

	slurm_init_job_desc_msg(&desc);
	desc.name = xstrdup(req->name);
	desc.script = xstrdup(req->script);
	desc.work_dir = xstrdup(req->work_dir);
	desc.std_out = xstrdup(req->std_out);
	desc.partition = opt_dup(req->partition);
	desc.account = opt_dup(req->account);
	desc.qos = opt_dup(req->qos);
	desc.features = opt_dup(req->constraint);
	desc.req_nodes = opt_dup(req->nodelist);
	desc.exc_nodes = opt_dup(req->exclude);
	desc.requeue = 0;
	desc.tres_per_node = req->gres && *req->gres
				     ? xasprintf("gres:%s", req->gres) : NULL;
	desc.min_nodes = req->nodes > 0 ? (uint32_t)req->nodes : 1;
	/* sbatch --ntasks also asks for a CPU per task: without min_cpus the
	 * allocation may hold one CPU, and srun then refuses the step ("More
	 * processors requested than permitted", seen on the 2-GPU machine) */
	if (req->tasks > 0) {
		desc.num_tasks = (uint32_t)req->tasks;
		desc.min_cpus = (uint32_t)req->tasks;
	}
	if (req->tasks_per_node > 0)
		desc.ntasks_per_node = (uint16_t)req->tasks_per_node;
	desc.tres_per_task = req->gpus_per_task > 0
				     ? xasprintf("gres:gpu:%ld", req->gpus_per_task)
				     : NULL;
	if (req->time_limit_s > 0)
		desc.time_limit = (uint32_t)((req->time_limit_s + 59) / 60);
	desc.user_id = req->uid;
	desc.group_id = req->gid;
	while (req->env && req->env[env_n])
		env_n++;
	desc.environment = req->env;
	desc.env_size = (uint32_t)env_n;

	if (slurm_submit_batch_job(&desc, &resp) != SLURM_SUCCESS) {
		int code = slurm_get_errno();

		rc = controller_unreachable(code) ? -EAGAIN : -EIO;
		strbuf_addf(err, "%s job '%s': %s", rc == -EAGAIN ?
			    SLURM_ERR_UNREACHABLE : "Slurm refused", req->name,
			    slurm_strerror(code));
	} else {
		*job_id = resp->job_id;
	}
	if (resp)
		slurm_free_submit_response_response_msg(resp);
	desc.environment = NULL; /* borrowed */
	free(desc.name);
	free(desc.script);
	free(desc.work_dir);
	free(desc.std_out);
	free(desc.partition);
	free(desc.account);
	free(desc.qos);
	free(desc.features);
	free(desc.req_nodes);
	free(desc.exc_nodes);
	free(desc.tres_per_node);
	free(desc.tres_per_task);
	return rc;
}

/*
 * A submission stream: requests queued by one thread while `threads` workers
 * submit them.  The queue is an array of pointers to the caller's memory,
 * grown under the lock; a worker takes the next request not yet taken, or
 * waits while the queue is empty and open.
 */
struct submit_item {
	const struct slurm_job_request *req;
	uint32_t *job_id;
	struct strbuf *err;
};

struct slurm_submit_stream {
	struct submit_item *items;
	size_t n, cap, next, answered;
	bool closed;
	pthread_mutex_t lock;
	pthread_cond_t more;
	pthread_t tids[SLURM_SUBMIT_THREADS_MAX];
	int started;
};

static void *submit_worker(void *arg)
{
	struct slurm_submit_stream *st = arg;

	for (;;) {
		struct submit_item it;

		pthread_mutex_lock(&st->lock);
		while (st->next == st->n && !st->closed)
			pthread_cond_wait(&st->more, &st->lock);
		if (st->next == st->n) {
			pthread_mutex_unlock(&st->lock);
			return NULL;
		}
		it = st->items[st->next++];
		pthread_mutex_unlock(&st->lock);
		if (slurm_submit(it.req, it.job_id, it.err) < 0)
			*it.job_id = 0;
		pthread_mutex_lock(&st->lock);
		st->answered++;
		pthread_mutex_unlock(&st->lock);
	}
}

bool slurm_submit_stream_busy(struct slurm_submit_stream *st)
{
	bool busy;

	if (!st || st->started == 0)
		return false;
	pthread_mutex_lock(&st->lock);
	busy = st->answered < st->n;
	pthread_mutex_unlock(&st->lock);
	return busy;
}

struct slurm_submit_stream *slurm_submit_stream_start(int threads)
{
	struct slurm_submit_stream *st = xcalloc(1, sizeof(*st));

	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->more, NULL);
	if (threads > SLURM_SUBMIT_THREADS_MAX)
		threads = SLURM_SUBMIT_THREADS_MAX;
	for (; st->started < threads; st->started++)
		if (pthread_create(&st->tids[st->started], NULL, submit_worker,
				   st) != 0)
			break;
	return st;
}

void slurm_submit_stream_add(struct slurm_submit_stream *st,
			     const struct slurm_job_request *req,
			     uint32_t *job_id, struct strbuf *err)
{
	*job_id = 0;
	if (st->started == 0) { /* no thread could be made: this one submits */
		if (slurm_submit(req, job_id, err) < 0)
			*job_id = 0;
		return;
	}
	pthread_mutex_lock(&st->lock);
	if (st->n == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 64;
		st->items = xrealloc(st->items, st->cap * sizeof(*st->items));
	}
	st->items[st->n++] = (struct submit_item){ req, job_id, err };
	pthread_cond_signal(&st->more);
	pthread_mutex_unlock(&st->lock);
}

void slurm_submit_stream_finish(struct slurm_submit_stream *st)
{
	if (!st)
		return;
	pthread_mutex_lock(&st->lock);
	st->closed = true;
	pthread_cond_broadcast(&st->more);
	pthread_mutex_unlock(&st->lock);
	for (int t = 0; t < st->started; t++)
		pthread_join(st->tids[t], NULL);
	pthread_cond_destroy(&st->more);
	pthread_mutex_destroy(&st->lock);
	free(st->items);
	free(st);
}

static enum slurm_phase phase_of(uint32_t state)
{
	switch (state & JOB_STATE_BASE) {
	case JOB_PENDING: return SLURM_PHASE_PENDING;
	case JOB_RUNNING:
	case JOB_SUSPENDED: return SLURM_PHASE_RUNNING;
	case JOB_COMPLETE: return SLURM_PHASE_DONE;
	case JOB_CANCELLED: return SLURM_PHASE_CANCELLED;
	default: return SLURM_PHASE_FAILED;
	}
}

static const char *state_name(uint32_t state)
{
	static const char *const names[] = {
		[JOB_PENDING] = "PENDING", [JOB_RUNNING] = "RUNNING",
		[JOB_SUSPENDED] = "SUSPENDED", [JOB_COMPLETE] = "COMPLETED",
		[JOB_CANCELLED] = "CANCELLED", [JOB_FAILED] = "FAILED",
		[JOB_TIMEOUT] = "TIMEOUT", [JOB_NODE_FAIL] = "NODE_FAIL",
		[JOB_PREEMPTED] = "PREEMPTED", [JOB_BOOT_FAIL] = "BOOT_FAIL",
		[JOB_DEADLINE] = "DEADLINE", [JOB_OOM] = "OUT_OF_MEMORY",
	};
	uint32_t base = state & JOB_STATE_BASE;

	return base < ARRAY_SIZE(names) && names[base] ? names[base] : "UNKNOWN";
}

/*
 * Our jobs from the last full answer, copied out of libslurm's message (which
 * is freed at once: it holds every job of every user, megabytes on a busy
 * cluster).  An unchanged job table then costs one small RPC: slurmctld
 * answers "no change" to an update_time at least as new as its last change.
 */
struct kept_job {
	struct slurm_job job;   /* its strings point at the owned copies */
	char *name, *reason, *nodes;
};

static struct {
	struct kept_job *jobs;
	size_t n;
	char *prefix;
	time_t update;          /* last_update of the answer they came from */
} kept;

static void kept_job_release(struct kept_job *k);

static void kept_release(void)
{
	for (size_t i = 0; i < kept.n; i++)
		kept_job_release(&kept.jobs[i]);
	free(kept.jobs);
	free(kept.prefix);
	memset(&kept, 0, sizeof(kept));
}

/* "Reason, description" as squeue shows it; "" for none (caller frees). */
static char *job_reason(const slurm_job_info_t *j)
{
	const char *why = j->state_reason != WAIT_NO_REASON
				  ? slurm_job_reason_string(j->state_reason) : NULL;
	const char *desc = j->state_desc && *j->state_desc ? j->state_desc : NULL;

	if (why && desc)
		return xasprintf("%s, %s", why, desc);
	return xstrdup(why ? why : desc ? desc : "");
}

/* Copy Slurm's record j into k (its strings owned by k). */
static void kept_set(struct kept_job *k, const slurm_job_info_t *j)
{
	int status = (int)j->exit_code;

	k->name = xstrdup(j->name ? j->name : "");
	k->reason = job_reason(j);
	k->nodes = xstrdup(j->nodes ? j->nodes : "");
	k->job = (struct slurm_job){
		.id = j->job_id,
		.name = k->name,
		.phase = phase_of(j->job_state),
		.state = state_name(j->job_state),
		.reason = k->reason,
		.nodes = k->nodes,
		.start = j->start_time,
		.end = j->end_time,
		.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0,
		.uid = j->user_id,
	};
}

static void kept_job_release(struct kept_job *k)
{
	free(k->name);
	free(k->reason);
	free(k->nodes);
}

/* Replace the kept jobs with msg's jobs named prefix*. */
static void kept_fill(const job_info_msg_t *msg, const char *prefix)
{
	size_t plen = strlen(prefix);

	kept_release();
	kept.prefix = xstrdup(prefix);
	kept.update = msg->last_update;
	kept.jobs = xcalloc(msg->record_count ? msg->record_count : 1,
			    sizeof(*kept.jobs));
	for (uint32_t i = 0; i < msg->record_count; i++) {
		const slurm_job_info_t *j = &msg->job_array[i];

		if (!j->name || strncmp(j->name, prefix, plen) != 0)
			continue;
		kept_set(&kept.jobs[kept.n++], j);
	}
}

int slurm_poll(const char *name_prefix,
	       int (*fn)(void *arg, const struct slurm_job *job), void *arg,
	       struct strbuf *err)
{
	job_info_msg_t *msg = NULL;
	bool cached = kept.prefix && strcmp(kept.prefix, name_prefix) == 0;
	/* One second earlier: a job submitted in the same second as the last
	 * answer must not hide behind "no change". */
	time_t since = cached ? kept.update - 1 : 0;
	int rc;

	if (slurm_load_jobs(since, &msg, SHOW_ALL) == SLURM_SUCCESS) {
		kept_fill(msg, name_prefix);
		slurm_free_job_info_msg(msg);
	} else if (!cached || slurm_get_errno() != SLURM_NO_CHANGE_IN_DATA) {
		strbuf_addf(err, "cannot load Slurm's jobs: %s",
			    slurm_strerror(slurm_get_errno()));
		return -EIO;
	}
	for (size_t i = 0; i < kept.n; i++) {
		rc = fn(arg, &kept.jobs[i].job);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * slurm_poll_ids: the jobs grouped by user.  A user with few tracked jobs:
 * one REQUEST_JOB_INFO_SINGLE per job (slurm_load_job; slurmctld finds it in
 * its job hash).  A user with many: one REQUEST_JOB_USER_INFO
 * (slurm_load_job_user), which returns that user's jobs only.  Either way
 * neither the RPCs nor the bytes depend on other users' jobs, and a night's
 * 2,000 node jobs of the facility user cost one RPC, not 2,000 (each RPC
 * carries a munge credential: about 0.6 ms of CPU here).  The loads run in
 * up to `threads` threads; each keeps only the records it was asked for.
 */
#define POLL_PER_ID_MAX 8   /* a user's tracked jobs loaded one by one */

struct poll_task {
	uid_t uid;
	size_t first, n;        /* refs sorted[first .. first + n) */
};

struct ids_pool {
	const struct slurm_job_ref *sorted; /* by uid, then id */
	const char *prefix;
	size_t plen;
	struct kept_job *out;   /* parallel to sorted; name NULL: not known */
	struct poll_task *tasks;
	size_t n_tasks, next;
	int error;              /* first Slurm error other than "no such job" */
	pthread_mutex_t lock;
};

static bool ours(const slurm_job_info_t *j, const char *prefix, size_t plen)
{
	/* another's job under a reused id counts as ours forgotten */
	return j->name && strncmp(j->name, prefix, plen) == 0;
}

static int by_uid_id(const void *a, const void *b)
{
	const struct slurm_job_ref *x = a, *y = b;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Slurm's error of a failed load: 0 when it only did not know the job. */
static int load_error(void)
{
	int rc = slurm_get_errno();

	return rc == ESLURM_INVALID_JOB_ID ? 0 : (rc ? rc : SLURM_ERROR);
}

/* Load job id by its id into *k (k->name stays NULL when Slurm does not
 * know it as ours); 0 or Slurm's error. */
static int load_by_id(struct ids_pool *pool, uint32_t id, struct kept_job *k)
{
	job_info_msg_t *msg = NULL;

	if (slurm_load_job(&msg, id, SHOW_ALL) != SLURM_SUCCESS)
		return load_error();
	for (uint32_t i = 0; i < msg->record_count; i++) {
		const slurm_job_info_t *j = &msg->job_array[i];

		if (j->job_id == id && ours(j, pool->prefix, pool->plen)) {
			kept_set(k, j);
			break;
		}
	}
	slurm_free_job_info_msg(msg);
	return 0;
}

static int run_task(struct ids_pool *pool, const struct poll_task *t)
{
	const struct slurm_job_ref *refs = pool->sorted + t->first;
	struct kept_job *out = pool->out + t->first;
	job_info_msg_t *msg = NULL;
	int rc = 0;

	if (t->n == 1)
		return load_by_id(pool, refs[0].id, &out[0]);
	if (slurm_load_job_user(&msg, (uint32_t)t->uid, SHOW_ALL) != SLURM_SUCCESS)
		return load_error();
	for (uint32_t i = 0; i < msg->record_count; i++) {
		const slurm_job_info_t *j = &msg->job_array[i];
		struct slurm_job_ref key = { .id = j->job_id, .uid = t->uid };
		const struct slurm_job_ref *r =
			bsearch(&key, refs, t->n, sizeof(*refs), by_uid_id);

		if (r && !out[r - refs].name && ours(j, pool->prefix, pool->plen))
			kept_set(&out[r - refs], j);
	}
	slurm_free_job_info_msg(msg);
	/* not in the user's answer: forgotten, or not that user's after all
	 * (then a job that runs would be taken for ended): ask by its id */
	for (size_t i = 0; i < t->n && !rc; i++)
		if (!out[i].name)
			rc = load_by_id(pool, refs[i].id, &out[i]);
	return rc;
}

static void *ids_worker(void *arg)
{
	struct ids_pool *pool = arg;

	for (;;) {
		size_t i;
		int rc;

		pthread_mutex_lock(&pool->lock);
		i = pool->error ? pool->n_tasks : pool->next++;
		pthread_mutex_unlock(&pool->lock);
		if (i >= pool->n_tasks)
			return NULL;
		rc = run_task(pool, &pool->tasks[i]);
		if (rc) {
			pthread_mutex_lock(&pool->lock);
			if (!pool->error)
				pool->error = rc;
			pthread_mutex_unlock(&pool->lock);
		}
	}
}

/* The loads of sorted[0..n): per user, one task per job or one for all. */
static size_t plan_tasks(const struct slurm_job_ref *sorted, size_t n,
			 struct poll_task *tasks)
{
	size_t n_tasks = 0;

	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && sorted[j].uid == sorted[i].uid; j++)
			;
		if (j - i > POLL_PER_ID_MAX && sorted[i].uid != (uid_t)-1) {
			tasks[n_tasks++] = (struct poll_task){ sorted[i].uid, i, j - i };
			continue;
		}
		for (size_t k = i; k < j; k++)
			tasks[n_tasks++] = (struct poll_task){ sorted[k].uid, k, 1 };
	}
	return n_tasks;
}

int slurm_poll_ids(const struct slurm_job_ref *jobs, size_t n,
		   const char *name_prefix, int threads,
		   int (*fn)(void *arg, const struct slurm_job *job), void *arg,
		   struct strbuf *err)
{
	struct ids_pool pool = { .prefix = name_prefix,
				 .plen = strlen(name_prefix) };
	struct slurm_job_ref *sorted;
	pthread_t tids[SLURM_SUBMIT_THREADS_MAX];
	int started = 0, rc = 0;

	if (n == 0)
		return 0;
	sorted = xcalloc(n, sizeof(*sorted));
	memcpy(sorted, jobs, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), by_uid_id);
	pool.sorted = sorted;
	pool.out = xcalloc(n, sizeof(*pool.out));
	pool.tasks = xcalloc(n, sizeof(*pool.tasks));
	pool.n_tasks = plan_tasks(sorted, n, pool.tasks);
	pthread_mutex_init(&pool.lock, NULL);
	if (threads > SLURM_SUBMIT_THREADS_MAX)
		threads = SLURM_SUBMIT_THREADS_MAX;
	for (; started < threads - 1 && (size_t)started + 1 < pool.n_tasks; started++)
		if (pthread_create(&tids[started], NULL, ids_worker, &pool) != 0)
			break;
	ids_worker(&pool);
	for (int t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	pthread_mutex_destroy(&pool.lock);
	if (pool.error) {
		strbuf_addf(err, "cannot load Slurm's jobs: %s",
			    slurm_strerror(pool.error));
		rc = -EIO;
	}
	for (size_t i = 0; i < n && !rc; i++)
		if (pool.out[i].name)
			rc = fn(arg, &pool.out[i].job);
	for (size_t i = 0; i < n; i++)
		kept_job_release(&pool.out[i]);
	free(pool.out);
	free(pool.tasks);
	free(sorted);
	return rc;
}

int slurm_cancel(uint32_t job_id, struct strbuf *err)
{
	if (slurm_kill_job(job_id, SIGKILL, 0) == SLURM_SUCCESS)
		return 0;
	switch (slurm_get_errno()) {
	case ESLURM_ALREADY_DONE:
	case ESLURM_INVALID_JOB_ID:
		return 0;
	}
	strbuf_addf(err, "cannot cancel Slurm job %u: %s", job_id,
		    slurm_strerror(slurm_get_errno()));
	return -EIO;
}

int slurm_signal(uint32_t job_id, int sig, struct strbuf *err)
{
	if (slurm_kill_job(job_id, (uint16_t)sig, KILL_FULL_JOB) == SLURM_SUCCESS)
		return 0;
	switch (slurm_get_errno()) {
	case ESLURM_ALREADY_DONE:
	case ESLURM_INVALID_JOB_ID:
	case ESLURM_JOB_PENDING:
		return 0;
	}
	strbuf_addf(err, "cannot signal Slurm job %u: %s", job_id,
		    slurm_strerror(slurm_get_errno()));
	return -EIO;
}

static bool node_usable(const node_info_t *n);

bool slurm_node_trouble(const char *name, struct strbuf *out)
{
	node_info_msg_t *info = NULL;
	char *copy = xstrdup(name);
	bool trouble = false;

	if (slurm_load_node_single(&info, copy, SHOW_ALL) == SLURM_SUCCESS &&
	    info->record_count == 1) {
		const node_info_t *n = &info->node_array[0];

		trouble = !node_usable(n);
		if (trouble) {
			strbuf_addf(out, "node %s is %s", name,
				    slurm_node_state_string(n->node_state));
			if (n->reason && *n->reason)
				strbuf_addf(out, " (%s)", n->reason);
		}
	}
	if (info)
		slurm_free_node_info_msg(info);
	free(copy);
	return trouble;
}

static bool node_usable(const node_info_t *n)
{
	uint32_t s = n->node_state;

	if ((s & NODE_STATE_BASE) == NODE_STATE_DOWN ||
	    (s & NODE_STATE_BASE) == NODE_STATE_FUTURE)
		return false;
	return !(s & (NODE_STATE_DRAIN | NODE_STATE_FAIL | NODE_STATE_NO_RESPOND));
}

static int nodes_in(const char *hostlist, char ***nodes, size_t *n)
{
	hostlist_t hl = slurm_hostlist_create(hostlist);
	char *host;

	if (!hl)
		return -EINVAL;
	while ((host = slurm_hostlist_shift(hl))) {
		*nodes = xrealloc(*nodes, (*n + 2) * sizeof(char *));
		(*nodes)[(*n)++] = xstrdup(host);
		(*nodes)[*n] = NULL;
		free(host);
	}
	slurm_hostlist_destroy(hl);
	return 0;
}

static void judge_node(const node_info_t *nd, struct slurm_node_state *out)
{
	out->name = xstrdup(nd->name);
	out->state = xstrdup(slurm_node_state_string(nd->node_state));
	out->usable = node_usable(nd) && !(nd->node_state & NODE_STATE_RES);
	out->gres = xstrdup(nd->gres ? nd->gres : "");
	if (nd->reason && *nd->reason)
		out->reason = xstrdup(nd->reason);
	else if (nd->node_state & NODE_STATE_RES)
		out->reason = xstrdup("in a reservation");
	else
		out->reason = xstrdup("");
}

int slurm_partition_nodes(const char *partition,
			  struct slurm_node_state **nodes, size_t *n,
			  struct strbuf *err)
{
	partition_info_msg_t *parts = NULL;
	node_info_msg_t *info = NULL;
	char **all = NULL;
	size_t n_all = 0;
	int rc = -ENOENT;

	*nodes = NULL;
	*n = 0;
	if (slurm_load_partitions(0, &parts, SHOW_ALL) != SLURM_SUCCESS ||
	    slurm_load_node(0, &info, SHOW_ALL) != SLURM_SUCCESS) {
		strbuf_addf(err, "cannot load Slurm's partitions and nodes: %s",
			    slurm_strerror(slurm_get_errno()));
		rc = -EIO;
		goto out;
	}
	for (uint32_t i = 0; i < parts->record_count; i++) {
		partition_info_t *p = &parts->partition_array[i];
		bool match = partition ? strcmp(p->name, partition) == 0
				       : (p->flags & PART_FLAG_DEFAULT);

		if (match && p->nodes) {
			nodes_in(p->nodes, &all, &n_all);
			rc = 0;
			break;
		}
	}
	if (rc) {
		strbuf_addf(err, "no Slurm partition '%s'",
			    partition ? partition : "(default)");
		goto out;
	}
	*nodes = xcalloc(n_all ? n_all : 1, sizeof(**nodes));
	for (size_t i = 0; i < n_all; i++) {
		for (uint32_t j = 0; j < info->record_count; j++) {
			const node_info_t *nd = &info->node_array[j];

			if (nd->name && strcmp(nd->name, all[i]) == 0) {
				judge_node(nd, &(*nodes)[(*n)++]);
				break;
			}
		}
	}
out:
	for (size_t i = 0; i < n_all; i++)
		free(all[i]);
	free(all);
	if (parts)
		slurm_free_partition_info_msg(parts);
	if (info)
		slurm_free_node_info_msg(info);
	return rc;
}

void slurm_nodes_free(struct slurm_node_state *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(nodes[i].name);
		free(nodes[i].state);
		free(nodes[i].reason);
		free(nodes[i].gres);
	}
	free(nodes);
}

/* ---- the cluster, for checks before submission --------------------------- */

const char *slurm_conf_file(void)
{
	const char *env = getenv("SLURM_CONF");

	return env && *env ? env : "/etc/slurm/slurm.conf";
}

static void part_fill(struct slurm_part *out, const partition_info_t *p)
{
	out->name = xstrdup(p->name ? p->name : "");
	out->is_default = p->flags & PART_FLAG_DEFAULT;
	out->max_time_min = p->max_time == INFINITE || p->max_time == NO_VAL
				    ? -1 : (long)p->max_time;
	if (p->nodes)
		(void)nodes_in(p->nodes, &out->nodes, &out->n_nodes);
}

int slurm_cluster_load(struct slurm_cluster **out, struct strbuf *err)
{
	partition_info_msg_t *parts = NULL;
	node_info_msg_t *info = NULL;
	struct slurm_cluster *c;

	*out = NULL;
	if (slurm_load_partitions(0, &parts, SHOW_ALL) != SLURM_SUCCESS ||
	    slurm_load_node(0, &info, SHOW_ALL) != SLURM_SUCCESS) {
		strbuf_addf(err, "cannot load Slurm's partitions and nodes: %s",
			    slurm_strerror(slurm_get_errno()));
		if (parts)
			slurm_free_partition_info_msg(parts);
		return -EIO;
	}
	c = xcalloc(1, sizeof(*c));
	c->parts = xcalloc(parts->record_count + 1, sizeof(*c->parts));
	for (uint32_t i = 0; i < parts->record_count; i++)
		part_fill(&c->parts[c->n_parts++], &parts->partition_array[i]);
	c->nodes = xcalloc(info->record_count + 1, sizeof(*c->nodes));
	for (uint32_t i = 0; i < info->record_count; i++) {
		const node_info_t *nd = &info->node_array[i];

		if (!nd->name)
			continue;
		c->nodes[c->n_nodes].name = xstrdup(nd->name);
		c->nodes[c->n_nodes++].gres = xstrdup(nd->gres ? nd->gres : "");
	}
	slurm_free_partition_info_msg(parts);
	slurm_free_node_info_msg(info);
	*out = c;
	return 0;
}

void slurm_cluster_free(struct slurm_cluster *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_parts; i++) {
		for (size_t j = 0; j < c->parts[i].n_nodes; j++)
			free(c->parts[i].nodes[j]);
		free(c->parts[i].nodes);
		free(c->parts[i].name);
	}
	free(c->parts);
	for (size_t i = 0; i < c->n_nodes; i++) {
		free(c->nodes[i].name);
		free(c->nodes[i].gres);
	}
	free(c->nodes);
	free(c);
}
