/* notify.c - see notify.h. */
#include "notify.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define NOTIFY_BATCH "20"
#define NOTIFY_WAIT_MS 50

/* The finding as the hook reads it: PostgreSQL writes the JSON. */
#define FINDING_JSON \
	"select row_to_json(x)::text from (select id, scope, subject, measure, " \
	"pipeline_name as pipeline, class, severity, state, node, gpu_uuid, " \
	"gpu_name, kernel, value, reference, drop_pct, threshold_pct, " \
	"noise_pct, cause, nights, first_night, last_night, first_run, " \
	"last_run, owner, facility, detail from findings where id = $1::bigint) x"

void notify_recover(struct engine *e)
{
	struct db_result *r = db_query(e->db,
		"update findings set notify_state = 'interrupted', notify_error = "
		"'the daemon stopped while the notify command ran; not run again' "
		"where notify_state = 'sending' returning id", 0, NULL);

	for (int i = 0; r && i < db_rows(r); i++)
		log_warn("finding %s: the daemon stopped while its notify command "
			 "ran: not run again (never twice)", db_value(r, i, 0));
	db_result_free(r);
}

static int hook_identity(const struct engine *e, uid_t *uid, gid_t *gid,
			 char **home)
{
	const char *user = e->cfg->notify_user[0] ? e->cfg->notify_user
						  : e->cfg->facility_user;
	struct passwd *pw = getpwnam(user);

	if (!pw) {
		log_error("notify_command: no operating-system user '%s' to run as", user);
		return -ENOENT;
	}
	if (pw->pw_uid == 0) {
		log_error("notify_command: refusing to run it as root (user '%s')", user);
		return -EPERM;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	*home = pw->pw_dir;
	return 0;
}

/* Child: become the hook's user, read the JSON on stdin, run the command. */
static void exec_hook(const struct engine *e, int in, uid_t uid, gid_t gid,
		      const char *home, const char *id)
{
	char *env[] = { xasprintf("ROOFLINE_FINDING_ID=%s", id),
			xasprintf("HOME=%s", home),
			"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
			"LANG=C.UTF-8", NULL };
	int devnull = open("/dev/null", O_WRONLY);

	setpgid(0, 0);
	if (dup2(in, 0) < 0 || devnull < 0 || dup2(devnull, 1) < 0)
		_exit(70);
	if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
		_exit(71);
	if (chdir("/") < 0)
		_exit(72);
	util_exec_reset(); /* SIGPIPE's default, no descriptor but stdio */
	execle("/bin/sh", "sh", "-c", e->cfg->notify_command, (char *)NULL, env);
	_exit(127);
}

/* Run the hook for finding id with json on stdin: "" on success, else why
 * (a static string or buf). */
static const char *run_hook(const struct engine *e, const char *id,
			    const char *json, char *buf, size_t size)
{
	int fds[2], status;
	uid_t uid;
	gid_t gid;
	char *home;
	pid_t pid;
	long waited = 0;

	if (hook_identity(e, &uid, &gid, &home) < 0)
		return "no user to run the notify command as";
	if (pipe2(fds, O_CLOEXEC) < 0)
		return "cannot make a pipe";
	pid = fork();
	if (pid < 0) {
		close(fds[0]), close(fds[1]);
		return "cannot fork";
	}
	if (pid == 0) {
		close(fds[1]);
		exec_hook(e, fds[0], uid, gid, home, id);
	}
	close(fds[0]);
	/* a hook that does not read stdin gets EPIPE here, not a signal */
	if (write(fds[1], json, strlen(json)) < 0 || write(fds[1], "\n", 1) < 0)
		log_debug("finding %s: the notify command did not read its input", id);
	close(fds[1]);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (waited >= e->cfg->notify_timeout_s * 1000) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			snprintf(buf, size, "timed out after %ld s (killed)",
				 e->cfg->notify_timeout_s);
			return buf;
		}
		poll(NULL, 0, NOTIFY_WAIT_MS);
		waited += NOTIFY_WAIT_MS;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return "";
	if (WIFEXITED(status))
		snprintf(buf, size, "exit status %d", WEXITSTATUS(status));
	else
		snprintf(buf, size, "killed by signal %d", WTERMSIG(status));
	return buf;
}

/* One line per finding in the daemon's log (syslog in production). */
static void log_finding(const struct db_result *r, int i)
{
	log_warn("finding %s (%s, %s): %s %s %s on %s (%s): %s, %s %% below "
		 "%s (threshold %s %%)%s%s",
		 db_value(r, i, 0), db_value(r, i, 1), db_value(r, i, 2),
		 db_value(r, i, 3), db_value(r, i, 4), db_value(r, i, 5),
		 db_value(r, i, 7), db_value(r, i, 6), db_value(r, i, 8),
		 db_value(r, i, 9), db_value(r, i, 10), db_value(r, i, 11),
		 db_value(r, i, 12)[0] ? "; likely cause: " : "", db_value(r, i, 12));
}

static void notify_one(struct engine *e, const struct db_result *r, int i)
{
	const char *id = db_value(r, i, 0);
	const char *params[] = { id, NULL, NULL };
	struct db_result *j;
	char why[128], backoff[32];
	const char *err;
	long tries;

	if (db_long(r, i, 13) == 0) /* one line per finding, not per try */
		log_finding(r, i);
	if (!e->cfg->notify_command[0]) {
		db_exec(e->db, "update findings set notify_state = 'logged' "
			       "where id = $1::bigint and notify_state = 'pending'",
			1, params);
		return;
	}
	/* committed before the command starts: never run twice */
	if (db_exec(e->db, "update findings set notify_state = 'sending', "
			   "notify_tries = notify_tries + 1 where id = $1::bigint "
			   "and notify_state = 'pending'", 1, params) != 1)
		return;
	j = db_query(e->db, FINDING_JSON, 1, params);
	if (!j || db_rows(j) != 1) {
		db_result_free(j);
		db_exec(e->db, "update findings set notify_state = 'pending' "
			       "where id = $1::bigint", 1, params);
		return;
	}
	err = run_hook(e, id, db_value(j, 0, 0), why, sizeof(why));
	db_result_free(j);
	tries = db_long(r, i, 13) + 1;
	if (!err[0]) {
		log_info("finding %s: notify command succeeded (try %ld)", id, tries);
		db_exec(e->db, "update findings set notify_state = 'sent', "
			       "notify_error = null where id = $1::bigint", 1, params);
		return;
	}
	params[1] = err;
	if (tries < e->cfg->notify_tries) {
		long wait = e->cfg->notify_backoff_s << (tries - 1 < 10 ? tries - 1 : 10);

		snprintf(backoff, sizeof(backoff), "%ld", wait);
		params[2] = backoff;
		log_warn("finding %s: notify command failed (%s), try %ld of %ld; "
			 "next in %ld s", id, err, tries, e->cfg->notify_tries, wait);
		db_exec(e->db, "update findings set notify_state = 'pending', "
			       "notify_error = $2, notify_next_at = now() + "
			       "make_interval(secs => $3::bigint) where id = $1::bigint",
			3, params);
	} else {
		log_error("finding %s: notify command failed (%s) %ld times: given up",
			  id, err, tries);
		db_exec(e->db, "update findings set notify_state = 'failed', "
			       "notify_error = $2 where id = $1::bigint", 2, params);
	}
}

void notify_pending(struct engine *e)
{
	struct db_result *r = db_query(e->db,
		"select id, severity, pipeline_name, scope, subject, measure, "
		"coalesce(gpu_name, ''), coalesce(node, '-'), class, "
		"round(drop_pct::numeric, 1), "
		"case when class = 'moved left' then 'baseline AI' "
		"     when scope = 'gpu' and class = 'fleet outlier' then 'fleet median' "
		"     when scope = 'gpu' then 'own history' else 'baseline' end, "
		"round(threshold_pct::numeric, 1), coalesce(cause, ''), notify_tries "
		"from findings where notify_state = 'pending' and "
		"(notify_next_at is null or notify_next_at <= now()) "
		"order by id limit " NOTIFY_BATCH
		/* a finding whose row a user's session holds (its owner may
		 * lock it: UPDATE of state) waits for a later pass */
		" for no key update skip locked", 0, NULL);

	for (int i = 0; r && i < db_rows(r); i++)
		notify_one(e, r, i);
	db_result_free(r);
}
