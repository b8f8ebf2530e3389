/* config.c - see config.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "paths.h"
#include "plugin_loader.h"
#include "records.h"
#include "util.h"
#include "yaml_tree.h"

enum cfg_type {
	CFG_STRING, CFG_MS, CFG_SECONDS, CFG_LEVEL, CFG_LOG, CFG_COUNT,
	CFG_MONTHS, CFG_RETENTION, CFG_BOOL, CFG_BYTES, CFG_LINE, CFG_RECORDS,
	CFG_THREADS
};

struct cfg_key {
	const char *key;
	enum cfg_type type;
	size_t offset;
	const char *help;
};

#define STR(f) CFG_STRING, offsetof(struct config, f)
#define RETAIN(f) CFG_MONTHS, offsetof(struct config, f), \
	"months kept, e.g. 36, '36 months', '3 years', or forever"
static const struct cfg_key cfg_keys[] = {
	{ "database", STR(database), "libpq connection string" },
	{ "spool_dir", STR(spool_dir), "run directories" },
	{ "plugin_dir", STR(plugin_dir), "plugins" },
	{ "pipeline_dir", STR(pipeline_dir), "facility pipelines" },
	{ "job_program", STR(job_program), "roofline-job on compute nodes" },
	{ "facility_user", STR(facility_user), "user facility runs run as" },
	{ "pidfile", STR(pidfile), "pid file" },
	{ "slurm_conf", STR(slurm_conf), "slurm.conf" },
	{ "web_root", STR(web_root), "the facility site's directory (\"\": none)" },
	{ "web_group", STR(web_group), "group a web server reads users' site pages as" },
	{ "poll_interval", CFG_MS, offsetof(struct config, poll_interval_ms),
	  "engine tick, e.g. 2s or 500ms" },
	{ "retry_backoff", CFG_SECONDS, offsetof(struct config, retry_backoff_s),
	  "first retry delay" },
	{ "kill_grace", CFG_SECONDS, offsetof(struct config, kill_grace_s),
	  "time between a timed-out step's SIGTERM and its SIGKILL" },
	{ "pending_limit", CFG_SECONDS, offsetof(struct config, pending_limit_s),
	  "longest wait of a Slurm job in the queue before it counts as failed" },
	{ "submit_threads", CFG_THREADS, offsetof(struct config, submit_threads),
	  "Slurm job submissions in flight at once, 1 to 16" },
	{ "db_sessions", CFG_THREADS, offsetof(struct config, db_sessions),
	  "PostgreSQL sessions for work shared out (ended attempts, history queries), 1 to 16" },
	{ "db_lock_timeout", CFG_MS, offsetof(struct config, db_lock_timeout_ms),
	  "longest wait of one of the daemon's statements for a lock, e.g. 5s" },
	{ "db_statement_timeout", CFG_MS,
	  offsetof(struct config, db_statement_timeout_ms),
	  "longest run of one of the daemon's statements (not migrations)" },
	{ "log_level", CFG_LEVEL, offsetof(struct config, log_level),
	  "error, warning, info or debug" },
	{ "log", CFG_LOG, offsetof(struct config, log_syslog),
	  "stderr or syslog" },
	{ "notify_command", STR(notify_command),
	  "run once per new finding, the finding as JSON on stdin" },
	{ "notify_user", STR(notify_user),
	  "user the notify command runs as (default: facility_user)" },
	{ "notify_tries", CFG_COUNT, offsetof(struct config, notify_tries),
	  "attempts of the notify command per finding" },
	{ "notify_timeout", CFG_SECONDS, offsetof(struct config, notify_timeout_s),
	  "longest run of the notify command before it is killed" },
	{ "notify_backoff", CFG_SECONDS, offsetof(struct config, notify_backoff_s),
	  "wait before the notify command's next try; doubles each try" },
	{ "partitions_ahead", CFG_COUNT, offsetof(struct config, partitions_ahead),
	  "months of history partitions made ahead, 1 to 120" },
	{ "retain_step_records", RETAIN(retain_step_records) },
	{ "retain_points", RETAIN(retain_points) },
	{ "retain_kernel_profiles", RETAIN(retain_kernel_profiles) },
	{ "retain_ceilings", RETAIN(retain_ceilings) },
	{ "user_daemon_steps", CFG_BOOL, offsetof(struct config, user_daemon_steps),
	  "true or false: whether users' runs may have steps on the daemon" },
	{ "ncu_program", STR(ncu_program),
	  "the ncu a user's daemon-side step runs (\"\": ncu in PATH)" },
	{ "gnuplot_program", STR(gnuplot_program),
	  "the gnuplot a user's daemon-side step runs (\"\": gnuplot in PATH)" },
	{ "retention", CFG_RETENTION, offsetof(struct config, retention_detach),
	  "drop or detach: what happens to partitions past their retention" },
	{ "ingest_max_bytes", CFG_BYTES, offsetof(struct config, ingest_max_bytes),
	  "largest records.tsv ingested, e.g. 256MiB (1 byte to 1TiB)" },
	{ "ingest_max_line", CFG_LINE, offsetof(struct config, ingest_max_line),
	  "longest record line (and exit.tsv) read, e.g. 1MiB (at most 64MiB)" },
	{ "ingest_max_records", CFG_RECORDS,
	  offsetof(struct config, ingest_max_records),
	  "most records ingested from one step attempt (1 to 10^12)" },
};

void config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->database = xstrdup("");
	cfg->spool_dir = xstrdup("/var/spool/rooflined");
	cfg->plugin_dir = paths_plugin_dir();
	cfg->pipeline_dir = xstrdup("");
	cfg->job_program = paths_program("roofline-job");
	cfg->facility_user = xstrdup("nobody");
	cfg->pidfile = xstrdup("");
	cfg->slurm_conf = xstrdup("");
	cfg->web_root = xstrdup("");
	cfg->web_group = xstrdup("");
	cfg->poll_interval_ms = 2000;
	cfg->retry_backoff_s = 30;
	cfg->kill_grace_s = 10;
	cfg->pending_limit_s = 3600;
	cfg->submit_threads = 4;
	cfg->db_sessions = 4;
	cfg->db_lock_timeout_ms = 5000;
	cfg->db_statement_timeout_ms = 600000;
	cfg->log_level = RL_LOG_INFO;
	cfg->log_syslog = false;
	cfg->notify_command = xstrdup("");
	cfg->notify_user = xstrdup("");
	cfg->notify_tries = 3;
	cfg->notify_timeout_s = 30;
	cfg->notify_backoff_s = 60;
	cfg->partitions_ahead = 3;
	cfg->retention_detach = false; /* retain_*: 0, forever */
	cfg->user_daemon_steps = true;
	cfg->ncu_program = xstrdup("");
	cfg->gnuplot_program = xstrdup("");
	cfg->ingest_max_bytes = CONFIG_INGEST_MAX_BYTES;
	cfg->ingest_max_line = CONFIG_INGEST_MAX_LINE;
	cfg->ingest_max_records = CONFIG_INGEST_MAX_RECORDS;
}

void config_release(struct config *cfg)
{
	for (size_t i = 0; i < ARRAY_SIZE(cfg_keys); i++) {
		if (cfg_keys[i].type == CFG_STRING)
			free(*(char **)((char *)cfg + cfg_keys[i].offset));
	}
	memset(cfg, 0, sizeof(*cfg));
}

/* "500ms", "2s", "1m" or a Slurm-style duration. */
static int parse_ms(const char *text, long *ms)
{
	size_t n = strlen(text);
	long v;

	if (n > 2 && strcmp(text + n - 2, "ms") == 0) {
		char *num = xstrndup(text, n - 2);
		int rc = util_parse_long(num, &v);

		free(num);
		if (rc < 0 || v <= 0)
			return -EINVAL;
		*ms = v;
		return 0;
	}
	if (util_parse_duration(text, &v) < 0 || v <= 0)
		return -EINVAL;
	*ms = v * 1000;
	return 0;
}

/* "forever" (0), or N months: "36", "36 months", "3 years" (N > 0). */
static int parse_months(const char *text, long *months)
{
	char *end;
	long v;

	if (strcmp(text, "forever") == 0) {
		*months = 0;
		return 0;
	}
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || v <= 0 || v > 1200)
		return -EINVAL;
	while (*end == ' ')
		end++;
	if (*end == '\0' || strcmp(end, "month") == 0 || strcmp(end, "months") == 0) {
		*months = v;
		return 0;
	}
	if ((strcmp(end, "year") == 0 || strcmp(end, "years") == 0) && v <= 100) {
		*months = v * 12;
		return 0;
	}
	return -EINVAL;
}

/* "1048576", "512 KiB", "1MiB", "2 GiB" (KiB/MiB/GiB/TiB: powers of
 * 1024; K, M, G, T too) into 1..max bytes. */
static int parse_bytes(const char *text, long max, long *bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	char *end;
	long v;
	int shift = 0;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || v <= 0)
		return -EINVAL;
	while (*end == ' ')
		end++;
	for (size_t i = 0; *end && i < ARRAY_SIZE(units); i++)
		if (strcmp(end, units[i]) == 0 ||
		    (end[0] == units[i][0] && end[1] == '\0'))
			shift = 10 * (int)(i + 1);
	if ((*end && !shift && strcmp(end, "B") != 0) || v > max >> shift)
		return -EINVAL;
	*bytes = v << shift;
	return 0;
}

static int set_key(struct config *cfg, const struct cfg_key *k,
		   const char *text)
{
	void *field = (char *)cfg + k->offset;
	long v;

	switch (k->type) {
	case CFG_STRING:
		free(*(char **)field);
		*(char **)field = xstrdup(text);
		return 0;
	case CFG_MS:
		return parse_ms(text, (long *)field);
	case CFG_SECONDS:
		if (util_parse_duration(text, &v) < 0 || v < 0)
			return -EINVAL;
		*(long *)field = v;
		return 0;
	case CFG_LEVEL:
		return log_level_parse(text, (enum rl_log_level *)field);
	case CFG_LOG:
		if (strcmp(text, "syslog") != 0 && strcmp(text, "stderr") != 0)
			return -EINVAL;
		*(bool *)field = text[1] == 'y';
		return 0;
	case CFG_COUNT:
		if (util_parse_long(text, &v) < 0 || v < 1 || v > 120)
			return -EINVAL;
		*(long *)field = v;
		return 0;
	case CFG_MONTHS:
		return parse_months(text, (long *)field);
	case CFG_BOOL:
		if (strcmp(text, "true") != 0 && strcmp(text, "false") != 0)
			return -EINVAL;
		*(bool *)field = text[0] == 't';
		return 0;
	case CFG_RETENTION:
		if (strcmp(text, "drop") != 0 && strcmp(text, "detach") != 0)
			return -EINVAL;
		*(bool *)field = text[1] == 'e';
		return 0;
	case CFG_BYTES:
		return parse_bytes(text, 1L << 40, (long *)field);
	case CFG_LINE:
		return parse_bytes(text, RECORDS_LINE_MAX, (long *)field);
	case CFG_RECORDS:
		if (util_parse_long(text, &v) < 0 || v < 1 || v > 1000000000000L)
			return -EINVAL;
		*(long *)field = v;
		return 0;
	case CFG_THREADS:
		if (util_parse_long(text, &v) < 0 || v < 1 ||
		    v > CONFIG_THREADS_MAX)
			return -EINVAL;
		*(long *)field = v;
		return 0;
	}
	return -EINVAL;
}

static const struct cfg_key *find_key(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(cfg_keys); i++)
		if (strcmp(cfg_keys[i].key, key) == 0)
			return &cfg_keys[i];
	return NULL;
}

static void report_unknown(const char *path, const struct ytree_node *k,
			   struct strbuf *err)
{
	const char *names[ARRAY_SIZE(cfg_keys) + 1];
	const char *near;

	for (size_t i = 0; i < ARRAY_SIZE(cfg_keys); i++)
		names[i] = cfg_keys[i].key;
	names[ARRAY_SIZE(cfg_keys)] = NULL;
	near = util_did_you_mean(k->text, names);
	strbuf_addf(err, "%s:%u:%u: unknown key '%s'%s%s%s\n", path, k->line,
		    k->col, k->text, near ? " (did you mean '" : "",
		    near ? near : "", near ? "'?)" : "");
}

static int apply_tree(struct config *cfg, const char *path,
		      const struct ytree_node *root, struct strbuf *err)
{
	int rc = 0;

	if (ytree_is_null(root))
		return 0;
	if (root->kind != YTREE_MAPPING) {
		strbuf_addf(err, "%s:%u:%u: expected a mapping of settings, not %s\n",
			    path, root->line, root->col, ytree_describe(root));
		return -EINVAL;
	}
	for (size_t i = 0; i < root->n; i++) {
		const struct ytree_node *k = root->pairs[i].key;
		const struct ytree_node *v = root->pairs[i].value;
		const struct cfg_key *ck;

		if (k->kind != YTREE_SCALAR || !(ck = find_key(k->text))) {
			if (k->kind == YTREE_SCALAR)
				report_unknown(path, k, err);
			rc = -EINVAL;
			continue;
		}
		if (v->kind != YTREE_SCALAR || set_key(cfg, ck, v->text) < 0) {
			strbuf_addf(err, "%s:%u:%u: bad value for '%s' (%s)\n", path,
				    v->line, v->col, ck->key, ck->help);
			rc = -EINVAL;
		}
	}
	return rc;
}

int config_load(struct config *cfg, const char *path, struct strbuf *err)
{
	struct ytree_node *root;
	char *text;
	size_t len;
	int rc = util_read_file(path, YTREE_MAX_BYTES, &text, &len);

	if (rc < 0) {
		strbuf_addf(err, "%s: cannot read: %s\n", path, strerror(-rc));
		return rc;
	}
	root = ytree_parse(path, text, len, err);
	free(text);
	if (!root)
		return -EINVAL;
	rc = apply_tree(cfg, path, root, err);
	ytree_free(root);
	if (rc < 0) {
		config_release(cfg);
		config_defaults(cfg);
	}
	return rc;
}
