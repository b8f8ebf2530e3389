/*
 * config.h - rooflined's configuration (etc/rooflined.yaml).
 *
 * Every key has a default, so an empty file is a valid configuration.  The
 * daemon reloads it on SIGHUP; a file that fails to load leaves the running
 * configuration untouched.
 */
#ifndef ROOFLINE_CONFIG_H
#define ROOFLINE_CONFIG_H

#include <stdbool.h>

#include "rooflined/plugin.h"
#include "strbuf.h"

struct config {
	char *database;        /* libpq connection string; "" = PG* env */
	char *spool_dir;       /* where run directories are made */
	char *plugin_dir;      /* plugins (*.so) */
	char *pipeline_dir;    /* facility pipelines (*.yaml); "" = none */
	char *job_program;     /* absolute path of roofline-job */
	char *facility_user;   /* OS user facility pipelines run as */
	char *pidfile;         /* "" = none */
	char *slurm_conf;      /* "" = SLURM_CONF or Slurm's default */
	char *web_root;        /* the facility site (daemon/site.h); "" = none */
	char *web_group;       /* group a web server reads users' pages as;
				* "" = only each user (and root) */
	long poll_interval_ms; /* engine tick */
	long retry_backoff_s;  /* first retry delay; doubles each attempt */
	long kill_grace_s;     /* polite signal at a step's timeout, SIGKILL
				* (scancel) this much later */
	long pending_limit_s;  /* an attempt pending longer is cancelled and
				* counted as failed (a step may set its own) */
	long submit_threads;   /* Slurm submissions of a launch pass in flight
				* at once (daemon/launch.c), 1 to
				* CONFIG_THREADS_MAX */
	long db_sessions;      /* PostgreSQL sessions for work shared out:
				* a poll's ended attempts (daemon/ingest.c),
				* a step's history queries (step_inputs.c);
				* 1 to CONFIG_THREADS_MAX */
	/* The daemon's PostgreSQL session (daemon/db.c): a statement waits at
	 * most db_lock_timeout_ms for a lock a user's session may hold, and
	 * runs at most db_statement_timeout_ms; migrations are not limited. */
	long db_lock_timeout_ms;
	long db_statement_timeout_ms;
	enum rl_log_level log_level;
	bool log_syslog;
	char *notify_command;  /* sh -c text run per new finding; "" = none */
	char *notify_user;     /* "" = facility_user */
	long notify_tries;     /* attempts per finding (1-120) */
	long notify_timeout_s; /* a try running longer is killed (failed) */
	long notify_backoff_s; /* before the second try; doubles */
	/* History (daemon/partitions.c, sql/010_partitions.sql): months of
	 * partitions kept ready ahead of the current one, and how many months
	 * each history table keeps (0: forever); older monthly partitions are
	 * rolled up, then dropped, or detached when retention_detach. */
	long partitions_ahead;
	long retain_step_records;
	long retain_points;
	long retain_kernel_profiles;
	long retain_ceilings;
	bool retention_detach;
	/* Users' runs on the service node (daemon/step_policy.h): whether
	 * they may have daemon-side steps, and the programs those run. */
	bool user_daemon_steps;
	char *ncu_program;     /* "" = ncu in the child's PATH */
	char *gnuplot_program; /* "" = gnuplot in the child's PATH */
	/* What a step attempt's files, which its user can write, may make the
	 * daemon read (daemon/ingest.c): records.tsv's size, the longest line
	 * of records.tsv and exit.tsv (exit.tsv is one line), and the number
	 * of records.  Past one, the attempt fails, naming the file and the
	 * key. */
	long ingest_max_bytes;
	long ingest_max_line;
	long ingest_max_records;
};

#define CONFIG_THREADS_MAX 16 /* submit_threads, db_sessions */
#define CONFIG_INGEST_MAX_BYTES (256L << 20)
#define CONFIG_INGEST_MAX_LINE (1L << 20)
#define CONFIG_INGEST_MAX_RECORDS 1000000L

/* Fill cfg with defaults (paths next to the running program).  Caller
 * releases with config_release. */
void config_defaults(struct config *cfg);

/* Load path over the defaults into cfg.  0, or -EINVAL/-ENOENT with every
 * problem appended to err as "path:line:col: message" lines; cfg is then
 * left with defaults only. */
int config_load(struct config *cfg, const char *path, struct strbuf *err);

void config_release(struct config *cfg);

#endif
