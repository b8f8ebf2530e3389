/*
 * slurm.h - the one module that talks to Slurm (libslurm, 22.05 API).
 *
 * libslurm's API changes between majors; this small interface is all the
 * daemon sees of it.  The daemon runs as root (or SlurmUser), which lets it
 * submit a job as the user who owns the run.
 */
#ifndef ROOFLINE_SLURM_H
#define ROOFLINE_SLURM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "strbuf.h"

/* Where a job is, in the terms the engine needs. */
enum slurm_phase {
	SLURM_PHASE_PENDING,
	SLURM_PHASE_RUNNING,
	SLURM_PHASE_DONE,    /* COMPLETED */
	SLURM_PHASE_FAILED,  /* FAILED, TIMEOUT, NODE_FAIL, OOM, BOOT_FAIL, ... */
	SLURM_PHASE_CANCELLED,
};

struct slurm_job_request {
	const char *name;       /* job name; the engine's key for crash repair */
	const char *script;     /* "#!/bin/sh\n..." */
	const char *work_dir;
	const char *std_out;    /* stdout and stderr go here */
	const char *partition;  /* NULL: the default partition */
	const char *gres;       /* "gpu:1" (NULL: none) */
	const char *account, *qos, *constraint; /* NULL: none */
	const char *nodelist;   /* required node(s), NULL: any */
	const char *exclude;    /* nodes to avoid ("a,b"), NULL: none */
	long nodes;             /* number of nodes, >= 1 */
	long tasks;             /* --ntasks; 0: Slurm's default */
	long tasks_per_node;    /* --ntasks-per-node; 0: none */
	long gpus_per_task;     /* --gpus-per-task; 0: none */
	long time_limit_s;      /* 0: the partition's default */
	uid_t uid;
	gid_t gid;
	char **env;             /* NULL-terminated "K=V" strings */
};

/* A job as seen in one poll.  Strings are borrowed until the next poll. */
struct slurm_job {
	uint32_t id;
	const char *name;
	enum slurm_phase phase;
	const char *state;      /* Slurm's name: "PENDING", "TIMEOUT", ... */
	const char *reason;     /* Slurm's reason ("ReqNodeNotAvail, Unavailable
				 * nodes:n1"), "" when none */
	const char *nodes;      /* allocated nodes, may be "" */
	time_t start, end;
	int exit_code;          /* exit status of the batch script, or -1 */
	int signal;             /* signal that ended it, or 0 */
	uid_t uid;
};

/* Read the Slurm configuration (SLURM_CONF or conf_path).  Call once. */
void slurm_setup(const char *conf_path);
void slurm_teardown(void);

/* What err begins with when slurmctld did not answer a submission
 * (restarting, or failing over to its backup): the job may or may not
 * exist, so the engine looks for it by name later instead of counting a
 * failed attempt. */
#define SLURM_ERR_UNREACHABLE "slurmctld did not answer"

/* Submit a batch job, never requeued by Slurm (the engine owns retries).
 * 0 and *job_id, -EIO with Slurm's reason in err, or -EAGAIN when slurmctld
 * did not answer (err begins with SLURM_ERR_UNREACHABLE). */
int slurm_submit(const struct slurm_job_request *req, uint32_t *job_id,
		 struct strbuf *err);

/*
 * A submission stream: requests submitted as slurm_submit() does, up to
 * `threads` of them in flight at once (slurmctld serves RPCs concurrently;
 * one at a time, the caller would wait on each round trip in turn), handed
 * over one by one while the first are already in flight, so that the caller
 * prepares request k+1 while its threads submit request k.
 *
 * start() makes `threads` threads (at most SLURM_SUBMIT_THREADS_MAX) that
 * only call slurm_submit().  add() queues a request whose memory, *job_id
 * and *err (initialised) the caller keeps until finish(), which waits for
 * every queued request and frees the stream.  *job_id gets the job id, or
 * 0 with Slurm's reason appended to *err (SLURM_ERR_UNREACHABLE first when
 * slurmctld did not answer).  While a stream is open the process has those
 * threads: no fork() then (a child of a threaded process may only exec).
 * Without a thread (pthread_create failed) add() submits at once.
 */
#define SLURM_SUBMIT_THREADS_MAX 16
struct slurm_submit_stream;
struct slurm_submit_stream *slurm_submit_stream_start(int threads);
void slurm_submit_stream_add(struct slurm_submit_stream *st,
			     const struct slurm_job_request *req,
			     uint32_t *job_id, struct strbuf *err);
void slurm_submit_stream_finish(struct slurm_submit_stream *st);
/* Whether some request added to st has not been answered yet. */
bool slurm_submit_stream_busy(struct slurm_submit_stream *st);

/*
 * Ask slurmctld for every job it knows, in ONE call, and call fn for each job
 * whose name starts with name_prefix.  Returns 0, fn's nonzero value, or
 * -EIO with err set.  Jobs Slurm has forgotten (after MinJobAge) are simply
 * absent.  Its cost grows with every job of the cluster, other users' too
 * (on a busy one, the whole job table each time it changed): only for
 * finding jobs by name whose ids are unknown (repair after a crash); follow
 * known jobs with slurm_poll_ids().
 */
int slurm_poll(const char *name_prefix,
	       int (*fn)(void *arg, const struct slurm_job *job), void *arg,
	       struct strbuf *err);

/* A job the daemon follows: its id, and the user it runs as ((uid_t)-1
 * when not known: then it is asked for by its id alone). */
struct slurm_job_ref {
	uint32_t id;
	uid_t uid;
};

/*
 * Follow the n jobs of jobs, asking slurmctld for these jobs only, so that
 * the cost never grows with the cluster's other users' jobs: per user, each
 * job by its id when the user has at most a few here (one small RPC each),
 * else that user's jobs in one RPC; up to `threads` RPCs in flight.  Then
 * call fn, in this thread, for each of the jobs Slurm knows whose name
 * starts with name_prefix (in no set order; a job id reused by another job
 * counts as forgotten).  Returns 0, fn's nonzero value, or -EIO with err set
 * when Slurm could not answer (then fn is not called at all, so that no job
 * is taken for forgotten by mistake).  The job passed to fn lives until fn
 * returns.
 */
int slurm_poll_ids(const struct slurm_job_ref *jobs, size_t n,
		   const char *name_prefix, int threads,
		   int (*fn)(void *arg, const struct slurm_job *job), void *arg,
		   struct strbuf *err);

/* Cancel a job (SIGKILL to every step, as scancel).  0, or -EIO; a job that
 * already ended counts as cancelled (0). */
int slurm_cancel(uint32_t job_id, struct strbuf *err);

/* Send sig to every step of a job, the batch script included (the polite
 * signal before a cancel).  0 or -EIO; a job that already ended counts as
 * signalled. */
int slurm_signal(uint32_t job_id, int sig, struct strbuf *err);

/* Append what Slurm says of node `name`: "rl-node2 is DOWN* (Not
 * responding)".  Returns true when the node is down, drained, failing or not
 * responding (its jobs will not run), false when it is usable or unknown
 * (then nothing is appended). */
bool slurm_node_trouble(const char *name, struct strbuf *out);

/* A node of a partition as Slurm sees it. */
struct slurm_node_state {
	char *name;
	bool usable;     /* up, not drained, failing, not responding or
			  * reserved */
	char *state;     /* Slurm's: "IDLE", "MIXED", "DRAINED", "DOWN*" */
	char *reason;    /* Slurm's reason, "" when none */
	char *gres;      /* its gres, as Slurm writes it ("gpu:h100:2(S:0)") */
};

/* Every node of a partition (the default partition if NULL), in Slurm's
 * order.  Caller frees with slurm_nodes_free.  0 or -EIO/-ENOENT with err. */
int slurm_partition_nodes(const char *partition,
			  struct slurm_node_state **nodes, size_t *n,
			  struct strbuf *err);
void slurm_nodes_free(struct slurm_node_state *nodes, size_t n);

/*
 * The cluster as a submission is checked against before anything is queued
 * (roofline submit): its partitions with their time limits and nodes, and
 * each node's generic resources.  Plain data, so that checks can be tested
 * without Slurm (daemon/pipeline_cluster.h).
 */
struct slurm_part {
	char *name;
	bool is_default;
	long max_time_min;  /* MaxTime in minutes; -1: no limit (INFINITE) */
	char **nodes;       /* its nodes' names */
	size_t n_nodes;
};

struct slurm_node {
	char *name;
	char *gres;         /* as Slurm shows it, e.g. "gpu:h100:2(S:0),fpga:1";
	                       "" when it has none */
};

struct slurm_cluster {
	struct slurm_part *parts;
	size_t n_parts;
	struct slurm_node *nodes;
	size_t n_nodes;
};

/* The configuration file a client reads: $SLURM_CONF, else libslurm's
 * default (/etc/slurm/slurm.conf).  Borrowed.  slurm_setup() ends the
 * process when it cannot read it: check it first. */
const char *slurm_conf_file(void);

/* Ask slurmctld for its partitions and nodes (two calls; slurm_setup()
 * first).  0 and *out (caller frees with slurm_cluster_free), or -EIO with
 * Slurm's reason in err. */
int slurm_cluster_load(struct slurm_cluster **out, struct strbuf *err);

void slurm_cluster_free(struct slurm_cluster *c);

#endif
