/*
 * launch.c - start step attempts and follow them: Slurm jobs through
 * daemon/slurm.c, `on: daemon` steps as children of the daemon.  See engine.h.
 *
 * Both kinds run roofline-job on an attempt directory the daemon prepared:
 *
 *   <spool>/run-<id>/<step>[@<node>]/attempt-<n>/   owned by the run's user
 *       params.tsv   written here before the directory is handed over
 *       job.out      the job's stdout and stderr
 *       records.tsv, exit.tsv   written by roofline-job
 *
 * A daemon child (the keeper, root's) takes a lock on
 * <spool>/.locks/step-<id>, starts the job process (which drops its
 * privileges and execs roofline-job with no descriptor of the daemon's but
 * its stdio, and signals reset) and keeps the lock until the job ends; so a
 * restarted daemon knows whether a child of its predecessor still runs.  The
 * job's own alarm() enforces the step's timeout, whoever its parent is.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "log.h"
#include "records.h"
#include "slurm.h"
#include "spool_dirs.h"
#include "spool_space.h"
#include "step_inputs.h"
#include "step_policy.h"
#include "util.h"

/* Slurm settings of a step, from its `slurm` record in steps.options. */
struct slurm_opts {
	char *partition, *gres, *account, *qos, *constraint;
	long time_s, nodes;
	long tasks, tasks_per_node, gpus_per_task; /* the `app` record's */
};

static int read_option_record(void *arg, const char *kind,
			      const struct rl_field *f)
{
	struct job_spec *spec = arg;

	if (strcmp(kind, "option") == 0)
		job_spec_add_option(spec, rl_field_get(f, "key"),
				    rl_field_get(f, "value"));
	return 0;
}

static int read_slurm_record(void *arg, const char *kind,
			     const struct rl_field *f)
{
	struct slurm_opts *so = arg;
	const char *v;

	(void)kind;
	job_spec_set(&so->partition, rl_field_get(f, "partition"));
	job_spec_set(&so->gres, rl_field_get(f, "gres"));
	job_spec_set(&so->account, rl_field_get(f, "account"));
	job_spec_set(&so->qos, rl_field_get(f, "qos"));
	job_spec_set(&so->constraint, rl_field_get(f, "constraint"));
	if ((v = rl_field_get(f, "time_s")))
		util_parse_long(v, &so->time_s);
	if ((v = rl_field_get(f, "nodes")))
		util_parse_long(v, &so->nodes);
	return 0;
}

static int read_app_record(void *arg, const char *kind,
			   const struct rl_field *f)
{
	struct slurm_opts *so = arg;
	const char *v;

	(void)kind;
	if ((v = rl_field_get(f, "tasks")))
		util_parse_long(v, &so->tasks);
	if ((v = rl_field_get(f, "tasks_per_node")))
		util_parse_long(v, &so->tasks_per_node);
	if ((v = rl_field_get(f, "gpus_per_task")))
		util_parse_long(v, &so->gpus_per_task);
	return 0;
}

/* The step's `app`, `env` and `module` records, on to params.tsv. */
static int copy_app_record(void *arg, const char *kind,
			   const struct rl_field *f)
{
	return job_spec_add_app(arg, kind, f);
}

static void slurm_opts_release(struct slurm_opts *so)
{
	free(so->partition);
	free(so->gres);
	free(so->account);
	free(so->qos);
	free(so->constraint);
}

/* Run fn over the records of s->options (copied: parsing is in place). */
static void each_option_record(const struct step_row *s, const char *kind,
			       records_fn fn, void *arg)
{
	char *copy = xstrdup(s->options);

	records_each_in(copy, "steps.options", kind, fn, arg, NULL);
	free(copy);
}

/* "failed: <its error>" of a needed instance that did not succeed
 * (caller frees). */
static char *missing_why(struct engine *e, const struct step_row *need)
{
	char id[32];
	const char *params[] = { id };
	struct db_result *r;
	char *why;

	snprintf(id, sizeof(id), "%ld", need->id);
	r = db_query(e->db, "select coalesce(error, '') from steps where id = $1",
		     1, params);
	why = xasprintf("%s%s%s", need->state,
			r && db_rows(r) && db_value(r, 0, 0)[0] ? ": " : "",
			r && db_rows(r) ? db_value(r, 0, 0) : "");
	db_result_free(r);
	return why;
}

/* A fan-in's missing inputs also name the nodes the run did not use:
 * "ceilings@n3" -> "node not used: DRAINED (fan)", once per needed
 * per-node step.  0 or -EIO. */
static int add_unused_nodes(struct engine *e, const struct step_row *s,
			    const struct step_row *needs, int n,
			    struct job_spec *spec)
{
	char run[32];
	const char *params[] = { run };
	struct db_result *r;

	snprintf(run, sizeof(run), "%ld", s->run_id);
	r = db_query(e->db, "select node, 'node not used: ' || slurm_state ||"
			    " case when reason = '' then '' else ' (' || reason ||"
			    " ')' end from run_nodes where run_id = $1 and not used"
			    " order by node", 1, params);
	if (!r)
		return -EIO;
	for (int i = 0; i < n; i++) {
		bool first = needs[i].node[0] != '\0';

		for (int k = 0; first && k < i; k++)
			if (needs[k].node[0] &&
			    strcmp(needs[k].step_id, needs[i].step_id) == 0)
				first = false;
		for (int j = 0; first && j < db_rows(r); j++) {
			char *name = xasprintf("%s@%s", needs[i].step_id,
					       db_value(r, j, 0));

			job_spec_add_missing(spec, name, db_value(r, j, 1));
			free(name);
		}
	}
	db_result_free(r);
	return 0;
}

/* Inputs: the output directories of the steps s needs. */
static int add_inputs(struct engine *e, const struct step_row *s,
		      struct job_spec *spec)
{
	char id[32];
	const char *params[] = { id };
	struct step_row *needs;
	int n;

	if (s->n_needs == 0)
		return 0;
	snprintf(id, sizeof(id), "%ld", s->id);
	needs = engine_steps_query(e,
		"select " ENGINE_STEP_COLUMNS " from steps s join runs r on "
		"r.id = s.run_id where s.id in (select unnest(needs) from steps "
		"where id = $1::bigint) order by s.id", 1, params, &n);
	if (!needs)
		return -EIO;
	for (int i = 0; i < n; i++) {
		char *dir = engine_attempt_dir(&needs[i], needs[i].attempt);
		char *name = needs[i].node[0]
				     ? xasprintf("%s@%s", needs[i].step_id, needs[i].node)
				     : xstrdup(needs[i].step_id);

		/* only a fan-in gets here with instances that did not succeed */
		if (strcmp(needs[i].state, "succeeded") == 0) {
			job_spec_add_input(spec, name, dir);
		} else {
			char *why = missing_why(e, &needs[i]);

			job_spec_add_missing(spec, name, why);
			free(why);
		}
		free(name);
		free(dir);
	}
	if (!s->node[0] && n > 0 && add_unused_nodes(e, s, needs, n, spec) < 0) {
		engine_steps_free(needs, n);
		return -EIO;
	}
	engine_steps_free(needs, n);
	return 0;
}

/* The attempt directory's last two components: "<step>[@<node>]" and
 * "attempt-<n>" (caller frees both). */
static void attempt_names(const struct step_row *s, int attempt, char **step,
			  char **att)
{
	*step = xasprintf("%s%s%s", s->step_id, s->node[0] ? "@" : "", s->node);
	*att = xasprintf("attempt-%d", attempt);
}

/*
 * Make the attempt directory dir, write params.tsv (with what the daemon
 * knows: step_inputs.h, and the history input)
 * into it, then hand it to the user; through descriptors only
 * (spool_dirs.h): the run's and the step's directories must be root's
 * alone, and the attempt directory is made here, fresh (one left by an
 * interrupted launch is set aside, never reused).
 */
static int prepare_attempt(struct engine *e, const struct step_row *s,
			   int attempt, const char *dir, uid_t uid, gid_t gid,
			   struct strbuf *err)
{
	struct job_spec spec;
	struct strbuf params = STRBUF_INIT;
	char *step_name, *att_name, *aside = NULL;
	int rc, run_fd, step_fd = -1, att_fd = -1;

	attempt_names(s, attempt, &step_name, &att_name);
	job_spec_init(&spec);
	strbuf_init(&params);
	run_fd = spool_dir_open_root(s->spool_dir);
	if (run_fd >= 0)
		step_fd = spool_dir_root_child(run_fd, step_name, 0711);
	/* an attempt directory left by a launch before a restart (which
	 * launch_repair_submitting relaunches only when nothing of it runs)
	 * is set aside, not reused */
	if (step_fd >= 0)
		att_fd = spool_dir_fresh_aside(step_fd, att_name, &aside);
	if (aside)
		log_warn("%s was left by a launch before a restart: moved aside "
			 "as %s, not reused", dir, aside);
	rc = run_fd < 0 ? run_fd : step_fd < 0 ? step_fd : att_fd < 0 ? att_fd : 0;
	if (rc < 0) {
		strbuf_addf(err, "cannot make %s: %s%s", dir, strerror(-rc),
			    rc == -EPERM ? " (a directory above it is not root's alone)" : "");
		goto out;
	}
	job_spec_set(&spec.plugin, s->plugin);
	job_spec_set(&spec.step_id, s->step_id);
	job_spec_set(&spec.run_dir, s->spool_dir);
	job_spec_set(&spec.out_dir, dir);
	spec.run_id = s->run_id;
	spec.attempt = attempt;
	each_option_record(s, "option", read_option_record, &spec);
	each_option_record(s, "app", copy_app_record, &spec);
	each_option_record(s, "env", copy_app_record, &spec);
	each_option_record(s, "module", copy_app_record, &spec);
	step_policy_programs(e->cfg, s, &spec);
	if (add_inputs(e, s, &spec) < 0) {
		strbuf_addf(err, "cannot read the step's inputs: %s", db_error(e->db));
		rc = -EIO;
		goto out;
	}
	rc = step_inputs_prepare(e, s, att_fd, dir, uid, gid, &spec, err);
	if (rc < 0)
		goto out;
	job_spec_format(&spec, &params);
	rc = spool_file_write(att_fd, JOB_PARAMS_FILE, params.buf, params.len,
			      uid, gid, 0600);
	if (rc == 0)
		rc = spool_dir_hand_over(att_fd, uid, gid, 0700);
	if (rc < 0)
		strbuf_addf(err, "cannot prepare %s: %s", dir, strerror(-rc));
out:
	if (att_fd >= 0)
		close(att_fd);
	if (step_fd >= 0)
		close(step_fd);
	if (run_fd >= 0)
		close(run_fd);
	free(aside);
	free(step_name);
	free(att_name);
	strbuf_release(&params);
	job_spec_release(&spec);
	return rc;
}

/* Append s single-quoted for sh. */
static void sh_quote(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			strbuf_addstr(sb, "'\\''");
		else
			strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, '\'');
}

static char **job_environment(const struct engine *e, uid_t uid)
{
	/* FONTCONFIG_FILE: scripts/deps --unpack's, where gnuplot (a job
	 * or a daemon-side step) finds the stack's fonts */
	static const char *const pass[] = { "ROOFLINE_LIBEXEC", "ROOFLINE_ETC",
					    "LANG", "TZ", "FONTCONFIG_FILE" };
	struct passwd *pw = getpwuid(uid);
	char **env = xcalloc(ARRAY_SIZE(pass) + 7, sizeof(char *));
	size_t n = 0;

	env[n++] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
	/* slurmstepd applies it to the job: its files are the owner's alone */
	env[n++] = xstrdup("SLURM_UMASK=0077");
	env[n++] = xasprintf("ROOFLINE_PLUGIN_DIR=%s", e->cfg->plugin_dir);
	if (pw) {
		env[n++] = xasprintf("HOME=%s", pw->pw_dir);
		env[n++] = xasprintf("USER=%s", pw->pw_name);
	}
	for (size_t i = 0; i < ARRAY_SIZE(pass); i++)
		if (getenv(pass[i]))
			env[n++] = xasprintf("%s=%s", pass[i], getenv(pass[i]));
	env[n] = NULL;
	return env;
}

static void env_free(char **env)
{
	for (char **p = env; *p; p++)
		free(*p);
	free(env);
}

static char *job_name(const struct step_row *s, int attempt)
{
	return xasprintf(ENGINE_JOB_PREFIX "%ld.%d", s->id, attempt);
}

/* A Slurm job request for one attempt and the memory it points into. */
struct job_request {
	struct slurm_job_request req; /* its strings point into the rest */
	struct slurm_opts so;
	struct strbuf script;
	char *name, *out;
	char **env;
	char *dir;    /* the attempt directory when the request owns it */
};

/* Build the request for attempt `attempt` of s in dir (release it with
 * job_request_release). */
static void job_request_build(struct engine *e, const struct step_row *s,
			      int attempt, const char *dir, uid_t uid,
			      gid_t gid, struct job_request *jr)
{
	memset(jr, 0, sizeof(*jr));
	jr->so.nodes = 1;
	jr->name = job_name(s, attempt);
	jr->out = xasprintf("%s/job.out", dir);
	jr->env = job_environment(e, uid);
	strbuf_init(&jr->script);
	each_option_record(s, "slurm", read_slurm_record, &jr->so);
	each_option_record(s, "app", read_app_record, &jr->so);
	if (s->timeout_s > 0)
		jr->so.time_s = s->timeout_s;
	strbuf_addstr(&jr->script, "#!/bin/sh\n# rooflined step attempt\nexec ");
	sh_quote(&jr->script, e->cfg->job_program);
	strbuf_addch(&jr->script, ' ');
	sh_quote(&jr->script, dir);
	strbuf_addch(&jr->script, '\n');
	jr->req = (struct slurm_job_request){
		.name = jr->name, .script = jr->script.buf, .work_dir = dir,
		.std_out = jr->out, .partition = jr->so.partition,
		.gres = jr->so.gres, .account = jr->so.account,
		.qos = jr->so.qos, .constraint = jr->so.constraint,
		.nodelist = s->node[0] ? s->node : NULL,
		.exclude = !s->node[0] && s->avoid_nodes && s->avoid_nodes[0]
				   ? s->avoid_nodes : NULL,
		.nodes = jr->so.nodes > 0 ? jr->so.nodes : 1,
		.tasks = jr->so.tasks, .tasks_per_node = jr->so.tasks_per_node,
		.gpus_per_task = jr->so.gpus_per_task,
		.time_limit_s = jr->so.time_s, .uid = uid, .gid = gid,
		.env = jr->env,
	};
}

static void job_request_release(struct job_request *jr)
{
	env_free(jr->env);
	free(jr->dir);
	strbuf_release(&jr->script);
	slurm_opts_release(&jr->so);
	free(jr->out);
	free(jr->name);
}

static int submit_slurm(struct engine *e, const struct step_row *s,
			int attempt, const char *dir, uid_t uid, gid_t gid,
			uint32_t *job_id, struct strbuf *err)
{
	struct job_request jr;
	int rc;

	job_request_build(e, s, attempt, dir, uid, gid, &jr);
	rc = slurm_submit(&jr.req, job_id, err);
	job_request_release(&jr);
	return rc;
}

static char *lock_path(const struct step_row *s)
{
	return xasprintf("%s/../.locks/step-%ld", s->spool_dir, s->id);
}

/* In the job process: become the user, limit time, exec roofline-job. */
static void exec_job(const struct engine *e, const struct step_row *s,
		     const char *dir, uid_t uid, gid_t gid)
{
	struct passwd *pw = getpwuid(uid);
	char **env = job_environment(e, uid);
	char *out;
	int ofd, nfd;

	if (setgroups(0, NULL) < 0 || (pw && initgroups(pw->pw_name, gid) < 0) ||
	    setgid(gid) < 0 || setuid(uid) < 0 || setuid(0) == 0)
		_exit(71);
	out = xasprintf("%s/job.out", dir);
	ofd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (ofd < 0 || nfd < 0 || dup2(nfd, 0) < 0 || dup2(ofd, 1) < 0 ||
	    dup2(ofd, 2) < 0)
		_exit(72);
	if (chdir(dir) < 0)
		_exit(73);
	/* nothing of the daemon's but stdin (/dev/null), stdout and stderr
	 * (job.out) crosses exec; signals reset */
	util_exec_reset();
	if (s->timeout_s > 0)
		alarm((unsigned)s->timeout_s);
	execle(e->cfg->job_program, "roofline-job", dir, (char *)NULL, env);
	_exit(127);
}

/*
 * In the daemon's child (the keeper, root's): take the step's lock, start
 * the job process in a new session and wait for it, then end as it ended
 * (so that the daemon's waitpid sees its exit status or signal, SIGALRM at
 * its timeout).  The lock descriptor never reaches the job: the user's
 * program cannot hold the lock past its end.  The keeper blocks every
 * signal it may (the job's SIGTERM is the job's), SIGKILL of the session
 * ends both.
 */
static void exec_daemon_child(const struct engine *e, const struct step_row *s,
			      const char *dir, uid_t uid, gid_t gid)
{
	char *lock = lock_path(s);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	sigset_t all;
	pid_t job;
	int status;

	if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0)
		_exit(70);
	setsid();
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	job = fork();
	if (job < 0)
		_exit(74);
	if (job == 0) {
		close(fd);
		exec_job(e, s, dir, uid, gid);
	}
	while (waitpid(job, &status, 0) < 0)
		if (errno != EINTR)
			_exit(75);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		sigset_t one;

		signal(sig, SIG_DFL);
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		raise(sig);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 76);
}

static int spawn_daemon_child(struct engine *e, const struct step_row *s,
			      const char *dir, uid_t uid, gid_t gid,
			      pid_t *pid, struct strbuf *err)
{
	char *locks = xasprintf("%s/../.locks", s->spool_dir);

	util_mkdir_p(locks, 0700);
	free(locks);
	*pid = fork();
	if (*pid < 0) {
		strbuf_addf(err, "cannot fork: %s", strerror(errno));
		return -errno;
	}
	if (*pid == 0)
		exec_daemon_child(e, s, dir, uid, gid);
	return 0;
}

/* The launch of attempt `attempt` failed before anything ran. */
static void launch_failed(struct engine *e, const struct step_row *s,
			  int attempt, const char *error)
{
	struct step_row copy = *s;

	copy.attempt = attempt;
	strcpy(copy.state, "submitting");
	/* the spool filled up between the check and the writes */
	if ((strstr(error, strerror(ENOSPC)) || strstr(error, strerror(EDQUOT))) &&
	    spool_space_give_back(e, &copy, e->cfg->spool_dir, error))
		return;
	engine_step_failed(e, &copy, error, true);
}

/* slurmctld did not answer a submission (a restart, a failover to its
 * backup): the job may exist or not, so the step stays 'submitting' and
 * launch_repair_submitting() adopts it by name or submits it once slurmctld
 * answers; no attempt is counted as failed. */
static void left_submitting(const struct step_row *s, const char *why)
{
	log_warn("run=%ld step=%s attempt %d: %s; left submitting, to be looked"
		 " for by its job name once slurmctld answers", s->run_id,
		 s->step_id, s->attempt, why);
}

/* launch_submitting's answer when it left the Slurm request to the caller. */
#define LAUNCH_DEFERRED UINT32_MAX

/*
 * Launch attempt `attempt` of s, which is already recorded as 'submitting'
 * with that attempt: prepare its directory, then start a daemon child
 * (recorded 'running' here) or submit a Slurm job.  Returns the Slurm job id
 * for the caller to record as 'pending', or 0 (a daemon step, or a failure,
 * already recorded).  With defer, a Slurm step is not submitted: its request
 * goes into *defer, owning the attempt directory's name (the caller submits
 * it, then releases it), and LAUNCH_DEFERRED is returned.
 */
static uint32_t launch_submitting(struct engine *e, const struct step_row *s,
				  int attempt, struct job_request *defer)
{
	struct step_change c = STEP_CHANGE_NONE;
	struct strbuf err = STRBUF_INIT;
	struct step_row cur = *s;
	char *dir = engine_attempt_dir(s, attempt);
	uint32_t job_id = 0;
	pid_t pid;
	uid_t uid;
	gid_t gid;

	strbuf_init(&err);
	cur.attempt = attempt;
	strcpy(cur.state, "submitting");
	if (engine_run_identity(e, s, &uid, &gid, &err) < 0) {
		launch_failed(e, &cur, s->retries + 1, err.buf);
		goto out;
	}
	if (prepare_attempt(e, s, attempt, dir, uid, gid, &err) < 0) {
		launch_failed(e, &cur, attempt, err.buf);
		goto out;
	}
	if (!s->on_daemon && defer) {
		/* dir goes with the request: the caller releases both; the
		 * request borrows s (not cur, which ends here) */
		job_request_build(e, s, attempt, dir, uid, gid, defer);
		defer->dir = dir;
		dir = NULL;
		job_id = LAUNCH_DEFERRED;
		goto out;
	}
	if (!s->on_daemon) {
		int rc = submit_slurm(e, &cur, attempt, dir, uid, gid, &job_id, &err);

		if (rc == -EAGAIN)
			left_submitting(&cur, err.buf);
		else if (rc < 0)
			launch_failed(e, &cur, attempt, err.buf);
		goto out;
	}
	if (spawn_daemon_child(e, &cur, dir, uid, gid, &pid, &err) < 0) {
		launch_failed(e, &cur, attempt, err.buf);
		goto out;
	}
	c.daemon_pid = pid;
	c.started = true;
	c.detail = "daemon child started";
	engine_step_set_state(e, &cur, "running", &c);
out:
	strbuf_release(&err);
	free(dir);
	return job_id;
}

/* Launch a step left 'submitting' (a repair): one at a time. */
static void launch_attempt(struct engine *e, const struct step_row *s,
			   int attempt)
{
	uint32_t job_id = launch_submitting(e, s, attempt, NULL);

	if (job_id) {
		struct step_row cur = *s;

		cur.attempt = attempt;
		engine_steps_set_pending(e, &cur, &job_id, 1);
	}
}

/* Slurm requests of one pass in flight at once (slurm_submit_stream):
 * the configuration's submit_threads, which config.c keeps within the
 * stream's limit. */
_Static_assert(CONFIG_THREADS_MAX <= SLURM_SUBMIT_THREADS_MAX,
	       "submit_threads may exceed the submission stream's threads");

/* What slurmctld answered to deferred request k of a pass: the job into
 * jobs[row], a refusal as a failed launch. */
static void submit_answered(struct engine *e, struct step_row *s,
			    uint32_t *job, uint32_t id, const char *err)
{
	if (id) {
		*job = id;
	} else if (strncmp(err, SLURM_ERR_UNREACHABLE,
			   strlen(SLURM_ERR_UNREACHABLE)) == 0) {
		left_submitting(s, err);
	} else {
		struct step_row cur = *s;

		strcpy(cur.state, "submitting");
		launch_failed(e, &cur, s->attempt, err);
	}
}

void launch_begin(struct engine *e, struct step_row *rows, int n,
		  struct launch_batch *b)
{
	size_t sz = (size_t)(n ? n : 1);
	int slurm_steps = 0;

	memset(b, 0, sizeof(*b));
	b->rows = rows;
	b->n = n;
	/* One statement marks them all 'submitting' (attempt + 1); one more
	 * (launch_end) records the Slurm jobs.  A crash in between leaves
	 * 'submitting', which launch_repair_submitting() resolves by job
	 * name.  Nothing starts while the spool is full (spool_space.h). */
	if (n == 0 || spool_space_hold(e, rows, n) ||
	    engine_steps_mark_submitting(e, rows, n) < 0)
		return;
	b->marked = true;
	for (int i = 0; i < n; i++)
		if (strcmp(rows[i].state, "submitting") == 0 && !rows[i].on_daemon)
			slurm_steps++;
	if (slurm_steps == 0)
		return;
	b->jobs = xcalloc(sz, sizeof(uint32_t));
	b->ids = xcalloc(sz, sizeof(uint32_t));
	b->jr = xcalloc(sz, sizeof(*b->jr));
	b->errs = xcalloc(sz, sizeof(*b->errs));
	b->row = xcalloc(sz, sizeof(int));
	/* Each Slurm request goes to slurmctld as soon as it is made: the
	 * next attempt directories are prepared while the first jobs are
	 * submitted, submit_threads at a time. */
	clock_gettime(CLOCK_MONOTONIC, &b->t0);
	b->threads = slurm_steps < e->cfg->submit_threads
			     ? slurm_steps : (int)e->cfg->submit_threads;
	b->stream = slurm_submit_stream_start(b->threads);
	for (int i = 0; i < n; i++) {
		int k = b->deferred;

		if (strcmp(rows[i].state, "submitting") != 0 || rows[i].on_daemon)
			continue;
		if (launch_submitting(e, &rows[i], rows[i].attempt,
				      &b->jr[k]) != LAUNCH_DEFERRED)
			continue; /* failed, recorded */
		b->row[k] = i;
		strbuf_init(&b->errs[k]);
		slurm_submit_stream_add(b->stream, &b->jr[k].req, &b->ids[k],
					&b->errs[k]);
		b->deferred++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b->made);
}

bool launch_in_flight(const struct launch_batch *b)
{
	return b->stream && slurm_submit_stream_busy(b->stream);
}

void launch_end(struct engine *e, struct launch_batch *b)
{
	if (b->stream) {
		struct timespec end, done;

		clock_gettime(CLOCK_MONOTONIC, &end);
		slurm_submit_stream_finish(b->stream);
		clock_gettime(CLOCK_MONOTONIC, &done);
		/* where a pass's time goes: the daemon making the requests,
		 * its work beside them, the wait for slurmctld's last answer */
		log_info("%d Slurm job requests of a pass, %d in flight at "
			 "once: made in %.2f s, answered in %.2f s (the "
			 "daemon's work beside them until %.2f s)", b->deferred,
			 b->threads, util_seconds_between(&b->t0, &b->made),
			 util_seconds_between(&b->t0, &done),
			 util_seconds_between(&b->t0, &end));
		for (int k = 0; k < b->deferred; k++) {
			submit_answered(e, &b->rows[b->row[k]],
					&b->jobs[b->row[k]], b->ids[k],
					b->errs[k].buf);
			strbuf_release(&b->errs[k]);
			job_request_release(&b->jr[k]);
		}
		engine_steps_set_pending(e, b->rows, b->jobs, b->n);
	}
	/* Daemon children last: they are forked, and a process with threads
	 * (the stream's, until finished above) must not fork but to exec. */
	for (int i = 0; b->marked && i < b->n; i++)
		if (strcmp(b->rows[i].state, "submitting") == 0 &&
		    b->rows[i].on_daemon)
			launch_submitting(e, &b->rows[i], b->rows[i].attempt, NULL);
	free(b->row);
	free(b->errs);
	free(b->jr);
	free(b->ids);
	free(b->jobs);
	memset(b, 0, sizeof(*b));
}

/* ---- following attempts ------------------------------------------------- */

static int by_job_id(const void *a, const void *b)
{
	const struct step_row *x = a, *y = b;

	return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
}

struct poll_state {
	struct engine *e;
	struct step_row *rows;
	bool *seen;
	int n;
	struct ingest_ended ended; /* stored once the poll is over */
};

/* Slurm's reason for a pending job changed: record it (an event too, so
 * `submit --wait` shows it). */
static void note_reason(struct engine *e, const struct step_row *s,
			const char *reason)
{
	struct step_change c = STEP_CHANGE_NONE;
	char *detail;

	if (!*reason || strcmp(reason, s->slurm_reason) == 0)
		return;
	detail = xasprintf("Slurm: %s", reason);
	c.slurm_reason = reason;
	c.detail = detail;
	engine_step_set_state(e, s, s->state, &c);
	free(detail);
}

/* A job pending past its limit: cancel it and count a failed attempt. */
static void pending_too_long(struct engine *e, const struct step_row *s,
			     const struct slurm_job *job)
{
	struct strbuf err = STRBUF_INIT;

	strbuf_init(&err);
	if (slurm_cancel(job->id, &err) < 0) {
		log_error("%s", err.buf);
		goto out;
	}
	strbuf_addf(&err, "Slurm job %u pending for %ld s, over the pending "
		    "limit of %ld s", job->id, s->state_s,
		    engine_pending_limit(e, s));
	if (*job->reason)
		strbuf_addf(&err, " (Slurm: %s)", job->reason);
	if (s->node[0]) {
		struct strbuf node = STRBUF_INIT;

		strbuf_init(&node);
		if (slurm_node_trouble(s->node, &node))
			strbuf_addf(&err, ": %s", node.buf);
		strbuf_release(&node);
	}
	engine_step_failed(e, s, err.buf, true);
out:
	strbuf_release(&err);
}

/*
 * The daemon's own promise for a step's timeout, whatever the plugin does
 * with signals: at the timeout the polite signal (SIGTERM to the Slurm job
 * or the child's process group), kill_grace later SIGKILL (scancel) and a
 * failed attempt.  Returns true when the attempt was ended here.
 */
static bool enforce_timeout(struct engine *e, const struct step_row *s,
			    pid_t group)
{
	struct strbuf err = STRBUF_INIT;
	char *why;

	if (s->timeout_s <= 0 || s->run_s < s->timeout_s)
		return false;
	strbuf_init(&err);
	if (s->run_s < s->timeout_s + e->cfg->kill_grace_s) {
		if (group > 0)
			kill(-group, SIGTERM);
		else if (slurm_signal(s->job_id, SIGTERM, &err) < 0)
			log_error("%s", err.buf);
		strbuf_release(&err);
		return false;
	}
	if (group > 0) {
		kill(-group, SIGKILL);
	} else if (slurm_cancel(s->job_id, &err) < 0) {
		log_error("%s", err.buf);
		strbuf_release(&err);
		return false;
	}
	strbuf_release(&err);
	log_warn("run=%ld step=%s%s%s: still running %ld s after its %ld s "
		    "timeout: killed %s", s->run_id, s->step_id,
		    s->node[0] ? "@" : "", s->node, s->run_s - s->timeout_s,
		    s->timeout_s, group > 0 ? "its process group" : "its Slurm job");
	why = xasprintf("timed out after %ld s (killed)", s->timeout_s);
	engine_step_failed(e, s, why, true);
	free(why);
	return true;
}

/* Whether job, found by s's job id, is s's attempt: a slurmctld that
 * crashed (kill -9) before it saved its state forgets the last jobs and
 * gives their ids to new ones; such a job is not ours, and ours counts as
 * forgotten (its exit record tells). */
static bool job_is_ours(const struct step_row *s, const struct slurm_job *job)
{
	char *name = job_name(s, s->attempt);
	bool same = job->name && strcmp(job->name, name) == 0;

	if (!same)
		log_warn("run=%ld step=%s: Slurm job %u is now '%s', not '%s':"
			 " slurmctld lost ours", s->run_id, s->step_id,
			 (unsigned)job->id, job->name ? job->name : "", name);
	free(name);
	return same;
}

static int on_slurm_job(void *arg, const struct slurm_job *job)
{
	struct poll_state *ps = arg;
	struct step_row key = { .job_id = job->id }, *s;
	struct attempt_end end = { .state = job->state,
				   .exit_code = job->exit_code,
				   .signal = job->signal, .node = job->nodes };
	struct strbuf trouble = STRBUF_INIT;

	s = bsearch(&key, ps->rows, (size_t)ps->n, sizeof(key), by_job_id);
	if (!s || !job_is_ours(s, job))
		return 0;
	ps->seen[s - ps->rows] = true;
	if (job->phase == SLURM_PHASE_PENDING) {
		note_reason(ps->e, s, job->reason);
		if (s->state_s > engine_pending_limit(ps->e, s))
			pending_too_long(ps->e, s, job);
		return 0;
	}
	if (job->phase == SLURM_PHASE_RUNNING) {
		if (strcmp(s->state, "pending") == 0) {
			struct step_change c = STEP_CHANGE_NONE;

			c.started = true;
			c.exec_node = job->nodes;
			c.detail = job->nodes;
			c.slurm_reason = "";
			engine_step_set_state(ps->e, s, "running", &c);
		} else {
			enforce_timeout(ps->e, s, 0);
		}
		return 0;
	}
	strbuf_init(&trouble);
	if (job->phase != SLURM_PHASE_DONE && job->phase != SLURM_PHASE_CANCELLED &&
	    *job->nodes && slurm_node_trouble(job->nodes, &trouble))
		end.trouble = trouble.buf;
	ingest_ended_add(&ps->ended, s, &end);
	strbuf_release(&trouble);
	return 0;
}

/* Slurm job loads of one poll in flight at once (slurm_poll_ids). */
#define LAUNCH_POLL_THREADS 4

static void poll_slurm(struct engine *e)
{
	struct poll_state ps = { .e = e };
	struct strbuf err = STRBUF_INIT;
	struct slurm_job_ref *ids = NULL;

	ps.rows = engine_steps_query(e,
		"select " ENGINE_STEP_COLUMNS " from steps s join runs r on "
		"r.id = s.run_id where s.state in ('pending', 'running') and "
		"not s.on_daemon and s.slurm_job_id is not null", 0, NULL, &ps.n);
	if (!ps.rows || ps.n == 0)
		goto out;
	qsort(ps.rows, (size_t)ps.n, sizeof(*ps.rows), by_job_id);
	ps.seen = xcalloc((size_t)ps.n, sizeof(bool));
	ids = xcalloc((size_t)ps.n, sizeof(*ids));
	strbuf_init(&err);
	for (int i = 0; i < ps.n; i++) {
		const struct step_row *s = &ps.rows[i], *prev = i ? s - 1 : NULL;
		gid_t gid;

		ids[i].id = s->job_id;
		/* rows of one run share their user: look it up once */
		if (prev && prev->run_id == s->run_id)
			ids[i].uid = ids[i - 1].uid;
		else if (engine_run_identity(e, s, &ids[i].uid, &gid, &err) < 0)
			ids[i].uid = (uid_t)-1; /* by its id alone */
	}
	strbuf_reset(&err);
	/* by id or user: the other users' jobs cost nothing (issue 27) */
	if (slurm_poll_ids(ids, (size_t)ps.n, ENGINE_JOB_PREFIX,
			   LAUNCH_POLL_THREADS, on_slurm_job, &ps, &err) < 0) {
		log_error("%s", err.buf);
		goto out;
	}
	/* Jobs Slurm has forgotten: their exit record tells. */
	for (int i = 0; i < ps.n; i++)
		if (!ps.seen[i])
			ingest_ended_add(&ps.ended, &ps.rows[i], NULL);
out:
	ingest_ended_run(e, &ps.ended);
	strbuf_release(&err);
	free(ids);
	free(ps.seen);
	engine_steps_free(ps.rows, ps.n);
}

/* Exit statuses of children reaped by this process, for messages. */
static struct {
	pid_t pid;
	int status;
} reaped[64];
static size_t n_reaped;

static void note_reaped(pid_t pid, int status)
{
	reaped[n_reaped % ARRAY_SIZE(reaped)].pid = pid;
	reaped[n_reaped % ARRAY_SIZE(reaped)].status = status;
	n_reaped++;
}

static void reap_children(void)
{
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		note_reaped(pid, status);
}

/* True while pid is a child of this daemon that has not ended: one started
 * a moment ago may not hold its lock yet. */
static bool own_child_running(pid_t pid)
{
	int status;
	pid_t got;

	if (pid <= 0)
		return false;
	got = waitpid(pid, &status, WNOHANG);
	if (got == pid)
		note_reaped(pid, status);
	return got == 0;
}

static bool reaped_by_alarm(pid_t pid)
{
	for (size_t i = 0; i < ARRAY_SIZE(reaped) && i < n_reaped; i++)
		if (reaped[i].pid == pid && WIFSIGNALED(reaped[i].status) &&
		    WTERMSIG(reaped[i].status) == SIGALRM)
			return true;
	return false;
}

/* The pid holding a daemon step's lock, 0 when none (the child ended). */
static pid_t lock_holder(const struct step_row *s)
{
	char *path = lock_path(s);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = open(path, O_RDWR | O_CLOEXEC);
	pid_t pid = 0;

	free(path);
	if (fd < 0)
		return 0;
	/* only a process's own lock (not an OFD lock: l_pid -1) names it */
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK && fl.l_pid > 0)
		pid = fl.l_pid;
	close(fd);
	return pid;
}

static void poll_daemon_children(struct engine *e)
{
	int n;
	struct step_row *rows;

	reap_children();
	rows = engine_steps_query(e,
		"select " ENGINE_STEP_COLUMNS " from steps s join runs r on "
		"r.id = s.run_id where s.state = 'running' and s.on_daemon",
		0, NULL, &n);
	for (int i = 0; rows && i < n; i++) {
		struct step_row *s = &rows[i];
		char *dir;
		struct job_exit ex;
		uid_t uid;
		gid_t gid;
		struct strbuf err = STRBUF_INIT;

		pid_t holder = lock_holder(s);

		if (!holder && own_child_running(s->daemon_pid))
			holder = s->daemon_pid; /* not locked yet */
		if (holder) {
			enforce_timeout(e, s, holder);
			continue;
		}
		strbuf_init(&err);
		dir = engine_attempt_dir(s, s->attempt);
		if (reaped_by_alarm(s->daemon_pid) &&
		    engine_run_identity(e, s, &uid, &gid, &err) == 0 &&
		    ingest_read_exit(e->cfg, dir, uid, &ex, NULL) == -ENOENT) {
			struct attempt_end end = { .state = "TIMEOUT",
						   .exit_code = -1,
						   .signal = SIGALRM };

			ingest_step_finished(e, s, &end);
		} else {
			ingest_step_finished(e, s, NULL);
		}
		strbuf_release(&err);
		free(dir);
	}
	engine_steps_free(rows, n);
}

void launch_poll(struct engine *e)
{
	poll_slurm(e);
	poll_daemon_children(e);
}

void launch_poll_children(struct engine *e)
{
	poll_daemon_children(e);
}

struct repair_state {
	struct engine *e;
	struct step_row *rows;
	int n;
	bool *adopted;
};

static int on_repair_job(void *arg, const struct slurm_job *job)
{
	struct repair_state *rs = arg;

	for (int i = 0; i < rs->n; i++) {
		char *name = job_name(&rs->rows[i], rs->rows[i].attempt);
		bool match = strcmp(name, job->name) == 0;

		free(name);
		if (match && !rs->adopted[i]) {
			struct step_change c = STEP_CHANGE_NONE;
			char detail[96];

			snprintf(detail, sizeof(detail),
				 "adopted Slurm job %u after a restart", job->id);
			c.job_id = job->id;
			c.detail = detail;
			engine_step_set_state(rs->e, &rs->rows[i], "pending", &c);
			rs->adopted[i] = true;
		}
	}
	return 0;
}

void launch_repair_submitting(struct engine *e)
{
	struct repair_state rs = { .e = e };
	struct strbuf err = STRBUF_INIT;

	rs.rows = engine_steps_query(e,
		"select " ENGINE_STEP_COLUMNS " from steps s join runs r on "
		"r.id = s.run_id where s.state = 'submitting' and s.state_since <"
		" now() - interval '" ENGINE_STR(ENGINE_SUBMIT_GRACE_S) " seconds'",
		0, NULL, &rs.n);
	if (!rs.rows || rs.n == 0)
		goto out;
	rs.adopted = xcalloc((size_t)rs.n, sizeof(bool));
	strbuf_init(&err);
	if (slurm_poll(ENGINE_JOB_PREFIX, on_repair_job, &rs, &err) < 0) {
		log_error("%s", err.buf);
		goto out;
	}
	for (int i = 0; i < rs.n; i++) {
		if (rs.adopted[i])
			continue;
		if (rs.rows[i].on_daemon && lock_holder(&rs.rows[i]))
			continue;
		log_info("step %ld attempt %d was not submitted before a restart; "
			 "submitting it now", rs.rows[i].id, rs.rows[i].attempt);
		launch_attempt(e, &rs.rows[i], rs.rows[i].attempt);
	}
out:
	strbuf_release(&err);
	free(rs.adopted);
	engine_steps_free(rs.rows, rs.n);
}

int launch_cancel(const struct step_row *s)
{
	struct strbuf err = STRBUF_INIT;
	int rc = 0;

	strbuf_init(&err);
	if (s->on_daemon) {
		pid_t pid = lock_holder(s);

		if (pid > 0)
			kill(-pid, SIGKILL); /* its session: roofline-job and children */
	} else if (s->job_id) {
		rc = slurm_cancel(s->job_id, &err);
		if (rc < 0)
			log_error("%s", err.buf);
	}
	strbuf_release(&err);
	return rc;
}
