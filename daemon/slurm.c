/* slurm.c - see slurm.h.  The only file that includes slurm/slurm.h. */
#include "slurm.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void slurm_setup(const char *conf_path)
{
	slurm_init(conf_path);
}

void slurm_teardown(void)
{
	slurm_fini();
}

static char *opt_dup(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
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
	desc.tres_per_node = req->gres && *req->gres
				     ? xasprintf("gres:%s", req->gres) : NULL;
	desc.min_nodes = req->nodes > 0 ? (uint32_t)req->nodes : 1;
	if (req->time_limit_s > 0)
		desc.time_limit = (uint32_t)((req->time_limit_s + 59) / 60);
	desc.user_id = req->uid;
	desc.group_id = req->gid;
	while (req->env && req->env[env_n])
		env_n++;
	desc.environment = req->env;
	desc.env_size = (uint32_t)env_n;

	if (slurm_submit_batch_job(&desc, &resp) != SLURM_SUCCESS) {
		strbuf_addf(err, "Slurm refused job '%s': %s", req->name,
			    slurm_strerror(slurm_get_errno()));
		rc = -EIO;
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
	free(desc.tres_per_node);
	return rc;
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

/* The last answer, kept so that an unchanged job table costs one small RPC
 * (slurmctld answers "no change" to an update_time at least as new). */
static job_info_msg_t *last_jobs;

int slurm_poll(const char *name_prefix,
	       int (*fn)(void *arg, const struct slurm_job *job), void *arg,
	       struct strbuf *err)
{
	job_info_msg_t *msg = NULL;
	time_t since = last_jobs ? last_jobs->last_update : 0;
	size_t plen = strlen(name_prefix);
	int rc;

	rc = slurm_load_jobs(since, &msg, SHOW_ALL);
	if (rc != SLURM_SUCCESS) {
		if (slurm_get_errno() != SLURM_NO_CHANGE_IN_DATA) {
			strbuf_addf(err, "cannot load Slurm's jobs: %s",
				    slurm_strerror(slurm_get_errno()));
			return -EIO;
		}
		msg = last_jobs;
	} else {
		if (last_jobs)
			slurm_free_job_info_msg(last_jobs);
		last_jobs = msg;
	}
	for (uint32_t i = 0; msg && i < msg->record_count; i++) {
		const slurm_job_info_t *j = &msg->job_array[i];
		struct slurm_job job;
		int status = (int)j->exit_code;

		if (!j->name || strncmp(j->name, name_prefix, plen) != 0)
			continue;
		job = (struct slurm_job){
			.id = j->job_id,
			.name = j->name,
			.phase = phase_of(j->job_state),
			.state = state_name(j->job_state),
			.reason = j->state_desc ? j->state_desc : "",
			.nodes = j->nodes ? j->nodes : "",
			.start = j->start_time,
			.end = j->end_time,
			.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0,
			.uid = j->user_id,
		};
		rc = fn(arg, &job);
		if (rc)
			return rc;
	}
	return 0;
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

int slurm_partition_nodes(const char *partition, char ***nodes, size_t *n,
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
	for (size_t i = 0; i < n_all; i++) {
		for (uint32_t j = 0; j < info->record_count; j++) {
			const node_info_t *nd = &info->node_array[j];

			if (nd->name && strcmp(nd->name, all[i]) == 0 &&
			    node_usable(nd)) {
				*nodes = xrealloc(*nodes, (*n + 2) * sizeof(char *));
				(*nodes)[(*n)++] = xstrdup(all[i]);
				(*nodes)[*n] = NULL;
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
