/*
 * engine-poll - the cost of the engine's one Slurm call per tick, alone:
 * daemon/slurm.c's slurm_poll(), as launch.c's poll_slurm() makes it (the
 * "rl." prefix, a callback per matching job), without the database.
 *
 *   engine-poll CALLS INTERVAL_MS [PREFIX [IDFILE]]
 *
 * With IDFILE (lines "JOBID UID", as `squeue -h -o '%i %U'` writes them; a
 * line without UID: asked for by its id alone), each call is
 * slurm_poll_ids() over those jobs instead, as poll_slurm() makes it since
 * issue 27 (per user: a few jobs by id, many in one per-user RPC; 4 in
 * flight): the two ways side by side under the same cluster.
 *
 * The first call of a process loads every job (no earlier answer to compare
 * with); later calls pass the previous answer's update time, as the daemon
 * does, and slurmctld answers "no change" when its job table has not changed
 * since.  Prints one line per call:
 *   call I: wall W ms, cpu C ms, matched M, rss R kB, hwm H kB
 * (the bytes slurmctld sends back are counted from outside: libslurm reads
 * them with recv(), which /proc/PID/io does not count; bench/night-scale.sh
 * runs this under strace).  CPU is this process's user + system time (getrusage), wall is monotonic;
 * rss and hwm are VmRSS and VmHWM after the call: what holding the answer
 * costs (slurm.c keeps the last one), and the peak while the next one is
 * loaded beside it.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "log.h"
#include "slurm.h"
#include "util.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* A field of /proc/self/status in kB, 0 if absent. */
static long status_kb(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

/* The jobs of path, "JOBID [UID]" a line; exits on an unreadable file. */
static struct slurm_job_ref *read_ids(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	struct slurm_job_ref *ids = NULL;
	char line[128];

	*n = 0;
	if (!f) {
		fprintf(stderr, "engine-poll: cannot read '%s'\n", path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long id, uid;
		int got = sscanf(line, "%lu %lu", &id, &uid);

		if (got < 1)
			continue;
		ids = xrealloc(ids, (*n + 1) * sizeof(*ids));
		ids[*n].id = (uint32_t)id;
		ids[(*n)++].uid = got == 2 ? (uid_t)uid : (uid_t)-1;
	}
	fclose(f);
	return ids;
}

static int count_job(void *arg, const struct slurm_job *job)
{
	(void)job;
	(*(long *)arg)++;
	return 0;
}

int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	const char *prefix = argc > 3 ? argv[3] : "rl.";
	long calls, interval;
	struct slurm_job_ref *ids = NULL;
	size_t n_ids = 0;
	int rc = 0;

	if (argc < 3 || argc > 5 || util_parse_long(argv[1], &calls) < 0 ||
	    util_parse_long(argv[2], &interval) < 0 || calls < 1 || interval < 0) {
		fprintf(stderr, "usage: engine-poll CALLS INTERVAL_MS [PREFIX [IDFILE]]\n");
		return 2;
	}
	if (argc == 5)
		ids = read_ids(argv[4], &n_ids);
	log_init("engine-poll", RL_LOG_INFO, false);
	slurm_setup(NULL);
	strbuf_init(&err);
	printf("before: rss %ld kB\n", status_kb("VmRSS"));
	for (long i = 1; i <= calls && rc == 0; i++) {
		double t0 = now_ms(), c0 = cpu_ms();
		long matched = 0;
		int prc = ids ? slurm_poll_ids(ids, n_ids, prefix, 4, count_job,
					       &matched, &err)
			      : slurm_poll(prefix, count_job, &matched, &err);

		if (prc < 0) {
			fprintf(stderr, "engine-poll: %s\n", err.buf);
			rc = 1;
			break;
		}
		printf("call %ld: wall %.2f ms, cpu %.2f ms, matched %ld, "
		       "rss %ld kB, hwm %ld kB\n", i, now_ms() - t0,
		       cpu_ms() - c0, matched, status_kb("VmRSS"),
		       status_kb("VmHWM"));
		fflush(stdout);
		if (i < calls)
			poll(NULL, 0, (int)interval);
	}
	strbuf_release(&err);
	free(ids);
	slurm_teardown();
	return rc;
}
