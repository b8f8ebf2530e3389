/*
 * engine-poll - the cost of the engine's one Slurm call per tick, alone:
 * daemon/slurm.c's slurm_poll(), as launch.c's poll_slurm() makes it (the
 * "rl." prefix, a callback per matching job), without the database.
 *
 *   engine-poll CALLS INTERVAL_MS [PREFIX]
 *
 * The first call of a process loads every job (no earlier answer to compare
 * with); later calls pass the previous answer's update time, as the daemon
 * does, and slurmctld answers "no change" when its job table has not changed
 * since.  Prints one line per call:
 *   call I: wall W ms, cpu C ms, matched M, rss R kB, hwm H kB
 * CPU is this process's user + system time (getrusage), wall is monotonic;
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
	int rc = 0;

	if (argc < 3 || argc > 4 || util_parse_long(argv[1], &calls) < 0 ||
	    util_parse_long(argv[2], &interval) < 0 || calls < 1 || interval < 0) {
		fprintf(stderr, "usage: engine-poll CALLS INTERVAL_MS [PREFIX]\n");
		return 2;
	}
	log_init("engine-poll", RL_LOG_INFO, false);
	slurm_setup(NULL);
	strbuf_init(&err);
	printf("before: rss %ld kB\n", status_kb("VmRSS"));
	for (long i = 1; i <= calls && rc == 0; i++) {
		double t0 = now_ms(), c0 = cpu_ms();
		long matched = 0;

		if (slurm_poll(prefix, count_job, &matched, &err) < 0) {
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
	slurm_teardown();
	return rc;
}
