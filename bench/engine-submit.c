/*
 * engine-submit - Slurm's own submit rate, for comparison with rooflined's:
 * N batch jobs submitted back to back through daemon/slurm.c's
 * slurm_submit(), the very call the engine makes (launch.c), with a job of
 * the same shape (a named one-node job of a partition, run as USER), but no
 * database, no attempt directory and no plugin behind it.
 *
 *   engine-submit USER PARTITION N PREFIX [NODE,NODE... [GRES]]
 *
 * Each job runs `true` with /tmp as its working directory and its output
 * thrown away; its name is PREFIX.<i>.  With a node list, job i is pinned to
 * node i mod the list's length (the request's nodelist, as the engine pins
 * a `nodes: each` instance), and asks for GRES when given.  Prints one line:
 *   submitted N jobs in W s (R jobs/s), client CPU C s, first job F, last L
 * Exit status 0 when all N were accepted, 1 otherwise.
 * ENGINE_SUBMIT_SLEEP=S makes each job `sleep S` instead (the running jobs
 * of other users in bench/night-scale.sh's background).
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "log.h"
#include "slurm.h"
#include "util.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
	static char env_path[] = "PATH=/usr/bin:/bin";
	char *env[] = { env_path, NULL };
	struct strbuf err = STRBUF_INIT;
	uint32_t first = 0, last = 0;
	char *nodes[256], *list = NULL;
	long n_nodes = 0;
	struct passwd *pw;
	double t0, c0, wall, cpu;
	long n, ok = 0, sleep_s = 0;
	char *script;

	if (argc < 5 || argc > 7 || !(pw = getpwnam(argv[1])) ||
	    util_parse_long(argv[3], &n) < 0 || n < 1) {
		fprintf(stderr, "usage: engine-submit USER PARTITION N PREFIX "
			"[NODE,NODE... [GRES]]\n");
		return 2;
	}
	if (argc >= 6) {
		list = xstrdup(argv[5]);
		for (char *save = NULL, *t = strtok_r(list, ",", &save);
		     t && n_nodes < 256; t = strtok_r(NULL, ",", &save))
			nodes[n_nodes++] = t;
	}
	if (getenv("ENGINE_SUBMIT_SLEEP") &&
	    util_parse_long(getenv("ENGINE_SUBMIT_SLEEP"), &sleep_s) < 0) {
		fprintf(stderr, "engine-submit: ENGINE_SUBMIT_SLEEP is not a number\n");
		return 2;
	}
	script = sleep_s > 0 ? xasprintf("#!/bin/sh\nsleep %ld\n", sleep_s)
			     : xstrdup("#!/bin/sh\ntrue\n");
	log_init("engine-submit", RL_LOG_INFO, false);
	slurm_setup(NULL);
	strbuf_init(&err);
	t0 = now_s();
	c0 = cpu_s();
	for (long i = 0; i < n; i++) {
		char *name = xasprintf("%s.%ld", argv[4], i);
		struct slurm_job_request req = {
			.name = name, .script = script,
			.work_dir = "/tmp", .std_out = "/dev/null",
			.partition = argv[2], .nodes = 1, .time_limit_s = 300 + sleep_s,
			.uid = pw->pw_uid, .gid = pw->pw_gid, .env = env,
			.nodelist = n_nodes ? nodes[i % n_nodes] : NULL,
			.gres = argc == 7 ? argv[6] : NULL,
		};
		uint32_t id;

		if (slurm_submit(&req, &id, &err) == 0) {
			if (!ok++)
				first = id;
			last = id;
		} else {
			fprintf(stderr, "engine-submit: %s\n", err.buf);
			strbuf_reset(&err);
		}
		free(name);
	}
	wall = now_s() - t0;
	cpu = cpu_s() - c0;
	printf("submitted %ld jobs in %.3f s (%.1f jobs/s), client CPU %.3f s, "
	       "first job %u, last %u\n", ok, wall, (double)ok / wall, cpu,
	       first, last);
	strbuf_release(&err);
	free(list);
	free(script);
	slurm_teardown();
	return ok == n ? 0 : 1;
}
