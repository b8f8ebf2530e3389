/*
 * findings-bench - a daemon-side findings step, timed as the daemon runs it
 * (bench/findings-bench.sh; results in docs/findings-bench.md).
 *
 *   findings-bench -P PLUGIN -r RUN -d DIR -j ROOFLINE_JOB -p PLUGIN_DIR
 *                  [-I INPUTS] [-o KEY=VALUE]... [-n REPEATS] [-s SESSIONS]
 *
 * Each repeat makes DIR/attempt-N and does what daemon/launch.c's
 * prepare_attempt() and a daemon child do for a step of PLUGIN in run RUN:
 *
 *   (a) step_inputs_prepare() - daemon/step_inputs.c itself, linked in:
 *       the history queries of the plugin's sets, their rows as records,
 *       the attempt's history/records.tsv, and the run's snapshot (three
 *       small queries; the step row here has no id, so no run_step
 *       records) - then params.tsv (job_spec_format).  Until issue 25 the
 *       snapshot was a separate call that this benchmark left out;
 *   (b) roofline-job on the attempt directory (fork + exec, as the daemon's
 *       child does, without the change of user): the plugin reads its
 *       inputs and the history and writes records.tsv and exit.tsv.
 *
 * INPUTS is a file of "STEP<TAB>DIR" lines: the needed steps' attempt
 * directories (what launch.c's add_inputs() finds in the database).
 * Prints one line per repeat:
 *   repeat I: history W ms (cpu C ms, pg cpu P ms, B bytes, peak RSS K kB),
 *   job W ms (cpu C ms), total W ms, records R, exit S
 * "history cpu" is this process's CPU (formatting the records), "pg cpu"
 * the PostgreSQL backends' (/proc/PID/stat: the benchmark runs beside the
 * server, as root) over the same call: the engine's session's and those of
 * its session pool, which reads a set's queries at once (SESSIONS, the
 * daemon's db_sessions, 4 by default; 1: one after another on the
 * engine's session; the pool's sessions are opened before the first
 * repeat).  "peak RSS" is this process's
 * high-water mark once the history is written: what preparing the step
 * costs the daemon in memory (nothing else here is large).  "job cpu" is roofline-job's (its
 * rusage).  On a shared machine the CPU times say what the work costs; the
 * wall times also say how long it waited for a CPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "db.h"
#include "engine.h"
#include "step_inputs.h"
#include "job_host.h"
#include "log.h"
#include "strbuf.h"
#include "util.h"

struct bench_args {
	const char *plugin, *dir, *job_program, *plugin_dir, *inputs;
	long run, repeats, sessions;
	const char *opts[64];
	int n_opts;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double ru_ms(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1e3 +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e3;
}

static double cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru_ms(&ru);
}

/* This process's peak resident set (kB). */
static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* The CPU time (ms) of process pid so far, -1 if unknown. */
static double proc_cpu_ms(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* after "pid (comm)": state is field 3, utime and stime 14 and 15 */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &ut, &st) != 2)
		return -1;
	return (double)(ut + st) * 1e3 / (double)sysconf(_SC_CLK_TCK);
}

/* The PostgreSQL backend serving session db. */
static long backend_pid(struct db *db)
{
	struct db_result *r = db_query(db, "select pg_backend_pid()", 0, NULL);
	long pid = r && db_rows(r) == 1 ? db_long(r, 0, 0) : -1;

	if (r)
		db_result_free(r);
	return pid;
}

/* The backends of the engine's session and of its pool's: their CPU. */
struct backends {
	long pid[1 + SESSION_POOL_MAX];
	int n;
};

static void open_nothing(struct db *db, size_t i, void *arg)
{
	(void)db, (void)i, (void)arg;
}

static void backends_find(struct engine *e, struct backends *b)
{
	if (e->cfg->db_sessions > 1)
		session_pool_for(&e->pool, e->cfg, (int)e->cfg->db_sessions,
				 (size_t)e->cfg->db_sessions, open_nothing, NULL);
	b->n = 0;
	b->pid[b->n++] = backend_pid(e->db);
	for (int i = 0; i < SESSION_POOL_MAX; i++)
		if (e->pool.db[i])
			b->pid[b->n++] = backend_pid(e->pool.db[i]);
}

static double backends_cpu_ms(const struct backends *b)
{
	double ms = 0;

	for (int i = 0; i < b->n; i++)
		ms += proc_cpu_ms(b->pid[i]);
	return ms;
}

static int usage(void)
{
	fprintf(stderr, "usage: findings-bench -P PLUGIN -r RUN -d DIR -j ROOFLINE_JOB "
		"-p PLUGIN_DIR [-I INPUTS] [-o KEY=VALUE]... [-n REPEATS] [-s SESSIONS]\n");
	return 2;
}

static int parse_args(int argc, char **argv, struct bench_args *a)
{
	int c;

	a->repeats = 3;
	a->sessions = 4;
	while ((c = getopt(argc, argv, "P:r:d:j:p:I:o:n:s:")) != -1) {
		switch (c) {
		case 'P': a->plugin = optarg; break;
		case 'r': a->run = atol(optarg); break;
		case 'd': a->dir = optarg; break;
		case 'j': a->job_program = optarg; break;
		case 'p': a->plugin_dir = optarg; break;
		case 'I': a->inputs = optarg; break;
		case 'o':
			if (a->n_opts == 64 || !strchr(optarg, '='))
				return -1;
			a->opts[a->n_opts++] = optarg;
			break;
		case 'n': a->repeats = atol(optarg); break;
		case 's': a->sessions = atol(optarg); break;
		default: return -1;
		}
	}
	return a->plugin && a->run > 0 && a->dir && a->job_program &&
			       a->plugin_dir && a->repeats > 0 && a->sessions >= 1 &&
			       a->sessions <= SESSION_POOL_MAX ? 0 : -1;
}

/* The needed steps' directories, "STEP<TAB>DIR" per line. */
static int add_inputs(struct job_spec *spec, const char *path)
{
	char line[4096];
	FILE *f;

	if (!path)
		return 0;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');

		line[strcspn(line, "\n")] = '\0';
		if (!tab)
			continue;
		*tab = '\0';
		job_spec_add_input(spec, line, tab + 1);
	}
	fclose(f);
	return 0;
}

static void fill_spec(struct job_spec *spec, const struct bench_args *a,
		      const char *out_dir, int attempt)
{
	job_spec_set(&spec->plugin, a->plugin);
	job_spec_set(&spec->step_id, a->plugin);
	job_spec_set(&spec->run_dir, a->dir);
	job_spec_set(&spec->out_dir, out_dir);
	spec->run_id = a->run;
	spec->attempt = attempt;
	for (int i = 0; i < a->n_opts; i++) {
		char *kv = xstrdup(a->opts[i]), *eq = strchr(kv, '=');

		*eq = '\0';
		job_spec_add_option(spec, kv, eq + 1);
		free(kv);
	}
}

/* Run roofline-job on dir; its exit status, or -1.  *cpu gets its CPU. */
static int run_job(const struct bench_args *a, const char *dir, double *cpu)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		setenv("ROOFLINE_PLUGIN_DIR", a->plugin_dir, 1);
		execl(a->job_program, a->job_program, dir, (char *)NULL);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return -1;
	*cpu = ru_ms(&ru);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static long count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;
	int ch;

	while (f && (ch = getc(f)) != EOF)
		n += ch == '\n';
	if (f)
		fclose(f);
	return f ? n : -1;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int one_repeat(struct engine *e, const struct bench_args *a,
		      const struct step_row *s, int i, const struct backends *pg)
{
	struct job_spec spec;
	struct strbuf err = STRBUF_INIT, params = STRBUF_INIT;
	char *dir = xasprintf("%s/attempt-%d", a->dir, i);
	char *path = xasprintf("%s/%s", dir, JOB_PARAMS_FILE);
	char *hist = xasprintf("%s/history/%s", dir, JOB_RECORDS_FILE);
	char *out = xasprintf("%s/%s", dir, JOB_RECORDS_FILE);
	double t0, c0, p0, t_hist, c_hist, p_hist, t_job, c_job = 0;
	long rss_kb = 0;
	int rc, status, dir_fd;

	job_spec_init(&spec);
	strbuf_init(&err);
	strbuf_init(&params);
	rc = mkdir(dir, 0700) < 0 ? -errno : 0;
	if (rc == 0) {
		fill_spec(&spec, a, dir, i);
		rc = add_inputs(&spec, a->inputs);
	}
	if (rc < 0) {
		fprintf(stderr, "findings-bench: cannot prepare %s: %s\n", dir, strerror(-rc));
		goto out;
	}
	t0 = now_ms(), c0 = cpu_ms(), p0 = backends_cpu_ms(pg);
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	rc = dir_fd < 0 ? -errno
			: step_inputs_prepare(e, s, dir_fd, dir, getuid(),
					      getgid(), &spec, &err);
	if (dir_fd >= 0)
		close(dir_fd);
	if (rc == 0) {
		job_spec_format(&spec, &params);
		rc = util_write_file_replace(path, params.buf, params.len, 0600);
	}
	t_hist = now_ms() - t0, c_hist = cpu_ms() - c0;
	p_hist = backends_cpu_ms(pg) - p0;
	rss_kb = peak_rss_kb();
	if (rc < 0) {
		fprintf(stderr, "findings-bench: history: %s\n", err.len ? err.buf : strerror(-rc));
		goto out;
	}
	t0 = now_ms();
	status = run_job(a, dir, &c_job);
	t_job = now_ms() - t0;
	printf("repeat %d: history %.1f ms (cpu %.1f ms, pg cpu %.1f ms, %ld bytes, "
	       "peak RSS %ld kB), job %.1f ms (cpu %.1f ms), total %.1f ms, "
	       "records %ld, exit %d\n",
	       i, t_hist, c_hist, p_hist, file_size(hist), rss_kb, t_job, c_job,
	       t_hist + t_job, count_lines(out), status);
	fflush(stdout);
	rc = status == 0 ? 0 : -EIO;
out:
	job_spec_release(&spec);
	strbuf_release(&err);
	strbuf_release(&params);
	free(dir), free(path), free(hist), free(out);
	return rc;
}

int main(int argc, char **argv)
{
	struct bench_args a = { 0 };
	struct config cfg = { 0 };
	struct engine e = { 0 };
	struct step_row s = { 0 };
	struct backends pg;
	struct strbuf err = STRBUF_INIT;
	int rc = 0;

	if (parse_args(argc, argv, &a) < 0)
		return usage();
	strbuf_init(&err);
	log_init("findings-bench", RL_LOG_WARNING, false);
	cfg.plugin_dir = xstrdup(a.plugin_dir);
	cfg.database = xstrdup("");
	cfg.db_sessions = a.sessions;
	e.cfg = &cfg;
	e.db = db_connect("", &err);
	if (!e.db) {
		fprintf(stderr, "findings-bench: %s\n", err.buf);
		return 1;
	}
	s.run_id = a.run;
	s.on_daemon = true;
	snprintf(s.plugin, sizeof(s.plugin), "%s", a.plugin);
	snprintf(s.step_id, sizeof(s.step_id), "%s", a.plugin);
	backends_find(&e, &pg);
	for (int i = 1; i <= a.repeats && rc == 0; i++)
		rc = one_repeat(&e, &a, &s, i, &pg);
	db_close(e.db);
	session_pool_close(&e.pool);
	free(cfg.plugin_dir);
	free(cfg.database);
	strbuf_release(&err);
	return rc ? 1 : 0;
}
