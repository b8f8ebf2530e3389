/*
 * rooflined - the daemon: loads its configuration and the facility
 * pipelines, applies the sql/ migrations, and runs the engine (engine.h)
 * until SIGTERM.  SIGHUP reloads the configuration and the pipelines.
 * SIGTERM stops between two ticks and leaves Slurm jobs and daemon children
 * running: the next start picks them up from the database.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "db.h"
#include "engine.h"
#include "log.h"
#include "paths.h"
#include "session_pool.h"
#include "site.h"
#include "site_child.h"
#include "slurm.h"
#include "util.h"

static volatile sig_atomic_t stop_requested, reload_requested;
/* Written to by SIGCHLD: a daemon child ended, its dependents may start. */
static int child_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_requested = 1;
	else
		stop_requested = 1;
}

static long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

static void on_child(int sig)
{
	int saved = errno;

	(void)sig;
	if (write(child_pipe[1], "c", 1) < 0) {
		/* full: a wake-up is already pending */
	}
	errno = saved;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rooflined [-c FILE] [-f] [-v] [--no-standby] [--check-config]\n"
		"       rooflined [-c FILE] [-f] --rebuild-site\n"
		"\n"
		"Runs roofline pipelines as Slurm jobs and records every result in\n"
		"PostgreSQL.\n"
		"\n"
		"  -c, --config FILE   configuration (default %s if it\n"
		"                      exists, else built-in defaults)\n"
		"  -f, --foreground    stay in the foreground, log to stderr unless the\n"
		"                      configuration says syslog\n"
		"  -v, --verbose       log level debug\n"
		"      --no-standby    exit 1 when another rooflined holds the database,\n"
		"                      instead of waiting as its standby to take over\n"
		"      --check-config  load the configuration and exit 0 if it is valid\n"
		"      --rebuild-site  rebuild the facility site under web_root once and\n"
		"                      exit (what the daemon starts when runs end)\n"
		"  -h, --help          this text\n"
		"      --version       print the version and exit\n"
		"\n"
		"Signals: SIGHUP reloads the configuration and facility pipelines;\n"
		"SIGTERM stops, leaving running jobs to the next start.\n"
		"A second rooflined on the same database is a standby: it waits, and\n"
		"takes over when the active one's database session ends.\n"
		"Exit status: 0 stopped cleanly, 1 failed to start, 2 usage.\n"
		"See rooflined(8) and rooflined.yaml(5).\n", ROOFLINE_CONFIG_FILE);
}

static int load_config(struct config *cfg, const char *path)
{
	struct strbuf err = STRBUF_INIT;
	int rc = 0;

	strbuf_init(&err);
	config_defaults(cfg);
	if (path && config_load(cfg, path, &err) < 0) {
		fprintf(stderr, "%s", err.buf);
		rc = -EINVAL;
	}
	strbuf_release(&err);
	return rc;
}

/* Create and lock the pid file; a second daemon finds it locked. */
static int take_pidfile(const char *path)
{
	char buf[32];
	int fd, n;

	if (!path || !*path)
		return 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_error("cannot open pid file %s: %s", path, strerror(errno));
		return -errno;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		log_error("another rooflined holds %s", path);
		close(fd);
		return -EEXIST;
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -EIO;
	}
	return fd; /* kept open (and locked) until exit */
}

static int daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	setsid();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	if (chdir("/") < 0)
		return -errno;
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		if (!getenv("ROOFLINED_KEEP_STDERR"))
			dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	return 0;
}

/*
 * The spool root: root's, traversable but not listable (0711), so that one
 * user cannot list another's runs; run directories beneath are made by
 * runs.c, attempt directories by launch.c.  0 or -errno (logged).
 */
static int spool_prepare(const char *dir)
{
	struct stat st;
	int rc = util_mkdir_p(dir, 0711);

	if (rc == 0 && (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode)))
		rc = -ENOTDIR;
	if (rc == 0 && st.st_uid == getuid() && chmod(dir, 0711) < 0)
		rc = -errno;
	if (rc < 0)
		log_error("cannot prepare the spool %s: %s", dir, strerror(-rc));
	return rc;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(child_pipe, O_CLOEXEC | O_NONBLOCK) == 0) {
		sa.sa_handler = on_child;
		sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
		sigaction(SIGCHLD, &sa, NULL);
	}
}

/*
 * Sleep until the next poll is due, or sooner: a daemon child ended
 * (SIGCHLD), the database announced a new run or a cancellation (a NOTIFY
 * that the runs table bears out: any role may send one), or a signal came.  Returns true when only a child's end woke it (the next
 * tick may look at daemon children alone); Slurm is still asked once per
 * interval.
 */
static bool wait_for_work(struct engine *e, long interval_ms)
{
	struct timespec start, now;
	char drain[64];

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long left = interval_ms; left > 0;) {
		struct pollfd fds[2] = {
			{ .fd = child_pipe[0], .events = POLLIN },
			{ .fd = engine_wakeup_fd(e), .events = POLLIN },
		};
		bool news;

		if (poll(fds, 2, (int)left) <= 0)
			return false;
		while (fds[0].revents &&
		       read(child_pipe[0], drain, sizeof(drain)) > 0)
			;
		/* Any role may NOTIFY the channel: a wake-up without new work
		 * does not make a full pass (engine_wakeup_has_work). */
		news = fds[1].revents && engine_wakeup_has_work(e);
		if (fds[0].revents || news)
			return fds[0].revents && !news;
		if (stop_requested || reload_requested)
			return false;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = interval_ms - ms_between(&start, &now);
	}
	return false;
}

static void reload(struct engine *e, struct config *cfg, const char *path)
{
	struct config fresh;

	reload_requested = 0;
	if (load_config(&fresh, path) < 0) {
		log_error("reload: %s is invalid; keeping the running configuration",
			  path ? path : "(defaults)");
		config_release(&fresh);
		return;
	}
	config_release(cfg);
	*cfg = fresh;
	log_init("rooflined", cfg->log_level, cfg->log_syslog);
	if (e->db)
		db_set_timeouts(e->db, cfg->db_lock_timeout_ms,
				cfg->db_statement_timeout_ms);
	session_pool_close(&e->pool); /* opened again with these settings */
	schedule_load_pipelines(e);
	e->partitions_due = 0; /* the retention may have changed: apply it now */
	log_info("configuration and pipelines reloaded");
}

/* Tick until SIGTERM; 0, or -EEXIST when another daemon took over the
 * database while ours was disconnected (this one goes back to standby). */
static int run_loop(struct engine *e, struct config *cfg, const char *path)
{
	bool children_only = false;
	struct timespec last_full = { 0 }, now;

	while (!stop_requested) {
		int rc;

		if (reload_requested)
			reload(e, cfg, path);
		/* a full pass at least once per interval, however busy children are */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ms_between(&last_full, &now) >= cfg->poll_interval_ms)
			children_only = false;
		if (!children_only)
			last_full = now;
		rc = engine_tick(e, children_only);
		if (rc == -EEXIST)
			return rc;
		children_only = false;
		/* a pass that left work behind is followed by another at once */
		if (rc <= 0 && !stop_requested)
			children_only = wait_for_work(e, cfg->poll_interval_ms);
	}
	return 0;
}

/* --rebuild-site: the site rebuilt over a connection of its own (what
 * site_child.h starts when runs end).  0, or 1 when a page or the
 * connection failed (logged). */
static int rebuild_site(const struct config *cfg)
{
	struct strbuf err = STRBUF_INIT;
	struct db *db;
	int rc;

	strbuf_init(&err);
	db = db_connect(cfg->database, &err);
	if (!db) {
		log_error("site: cannot connect to the database: %s", err.buf);
		strbuf_release(&err);
		return 1;
	}
	rc = site_rebuild(cfg, db);
	db_close(db);
	strbuf_release(&err);
	return rc < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "rebuild-site", no_argument, NULL, 'R' },
		{ "no-standby", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	bool foreground = false, verbose = false, check = false, standby = true;
	bool site = false;
	bool waiting;
	struct strbuf err = STRBUF_INIT;
	struct config cfg;
	struct engine e;
	int c, pidfd, rc;

	while ((c = getopt_long(argc, argv, "c:fvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'f': foreground = true; break;
		case 'v': verbose = true; break;
		case 'C': check = true; break;
		case 'R': site = true; break;
		case 'S': standby = false; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("rooflined %s\n", ROOFLINE_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (!path && access(ROOFLINE_CONFIG_FILE, F_OK) == 0)
		path = ROOFLINE_CONFIG_FILE;
	paths_export_defaults();
	if (load_config(&cfg, path) < 0)
		return 1;
	if (check) {
		printf("%s: ok\n", path ? path : "(defaults)");
		config_release(&cfg);
		return 0;
	}
	if (verbose)
		cfg.log_level = RL_LOG_DEBUG;
	log_init("rooflined", cfg.log_level, cfg.log_syslog);
	umask(077); /* run files are their owner's alone (and root's) */
	if (site) {
		log_init("rooflined", cfg.log_level, cfg.log_syslog || !foreground);
		rc = rebuild_site(&cfg);
		config_release(&cfg);
		return rc;
	}
	site_child_init(path, foreground);
	slurm_setup(cfg.slurm_conf[0] ? cfg.slurm_conf : NULL);
	strbuf_init(&err);
	/* Before going to the background: a second daemon on this database
	 * (with --no-standby), or none at all, is said on the terminal with a
	 * non-zero exit. */
	rc = engine_init(&e, &cfg, &err);
	waiting = rc == -EEXIST && standby;
	if (rc < 0 && !waiting) {
		fprintf(stderr, "rooflined: %s\n", err.buf);
		log_init("rooflined", cfg.log_level, cfg.log_syslog || !foreground);
		log_error("%s", err.buf);
		if (rc == -EEXIST)
			engine_release(&e);
		strbuf_release(&err);
		return 1;
	}
	log_init("rooflined", cfg.log_level, cfg.log_syslog || !foreground);
	if (!foreground && daemonize() < 0) {
		fprintf(stderr, "rooflined: cannot go to the background: %s\n",
			strerror(errno));
		return 1;
	}
	engine_name_session(&e);
	pidfd = take_pidfile(cfg.pidfile);
	if (pidfd < 0)
		return 1;
	install_signals();
	log_info("%s (pid %ld, spool %s, plugins %s)", waiting ? "standing by" :
		 "started", (long)getpid(), cfg.spool_dir, cfg.plugin_dir);
	if (spool_prepare(cfg.spool_dir) < 0)
		return 1;
	for (;;) {
		if (waiting) {
			strbuf_reset(&err);
			rc = engine_standby(&e, &stop_requested, &err);
			if (rc == -EINTR)
				break;
			if (rc < 0) { /* the database went away as it took over */
				log_error("%s; standing by again", err.buf);
				poll(NULL, 0, 1000);
				continue;
			}
			log_info("started (pid %ld): the active rooflined now",
				 (long)getpid());
		}
		schedule_load_pipelines(&e);
		rc = run_loop(&e, &cfg, path);
		if (rc != -EEXIST || !standby)
			break;
		log_info("another rooflined leads this database now: going back to standby");
		waiting = true;
	}
	log_info("stopping; running jobs are left to the next start");
	engine_release(&e);
	slurm_teardown();
	if (pidfd > 0 && cfg.pidfile[0])
		unlink(cfg.pidfile);
	config_release(&cfg);
	strbuf_release(&err);
	return rc < 0 ? 1 : 0;
}
