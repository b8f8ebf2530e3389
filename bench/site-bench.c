/*
 * site-bench - the facility site rebuilt as the daemon rebuilds it after a
 * run ends (daemon/site.c's site_rebuild(), the same database module), on
 * the database PG* names, into DIR.
 *
 *   site-bench DIR [REPEATS [FACILITY_USER]]
 *
 * FACILITY_USER (default root) is the configuration's facility_user: whose
 * spool the facility runs' reports are copied from.
 * Prints one line per repeat:
 *   repeat I: wall W ms, cpu C ms, hwm H kB, files F, bytes B
 * CPU is this process's (the queries' PostgreSQL time is not in it; wall
 * is); hwm is VmHWM after the repeat; files and bytes are what DIR holds
 * then.  Exit status 1 when the rebuild reported a failure.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "config.h"
#include "db.h"
#include "log.h"
#include "site.h"
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

static long hwm_kb(void)
{
	char line[256];
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

static long n_files, n_bytes;

static int count(const char *path, const struct stat *st, int type,
		 struct FTW *ftw)
{
	(void)path, (void)ftw;
	if (type == FTW_F) {
		n_files++;
		n_bytes += (long)st->st_size;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct config cfg = { 0 };
	struct strbuf err = STRBUF_INIT;
	struct db *db;
	long repeats = 1;
	int rc = 0;

	if (argc < 2 || argc > 4 ||
	    (argc >= 3 && (util_parse_long(argv[2], &repeats) < 0 || repeats < 1))) {
		fprintf(stderr, "usage: site-bench DIR [REPEATS [FACILITY_USER]]\n");
		return 2;
	}
	log_init("site-bench", RL_LOG_WARNING, false);
	strbuf_init(&err);
	cfg.web_root = xstrdup(argv[1]);
	cfg.web_group = xstrdup("");
	cfg.facility_user = xstrdup(argc == 4 ? argv[3] : "root");
	db = db_connect("", &err);
	if (!db) {
		fprintf(stderr, "site-bench: %s\n", err.buf);
		return 1;
	}
	for (long i = 1; i <= repeats && rc == 0; i++) {
		double t0 = now_ms(), c0 = cpu_ms();

		rc = site_rebuild(&cfg, db);
		n_files = n_bytes = 0;
		nftw(argv[1], count, 16, FTW_PHYS);
		printf("repeat %ld: wall %.1f ms, cpu %.1f ms, hwm %ld kB, files %ld, "
		       "bytes %ld\n", i, now_ms() - t0, cpu_ms() - c0, hwm_kb(),
		       n_files, n_bytes);
	}
	db_close(db);
	free(cfg.web_root);
	free(cfg.web_group);
	free(cfg.facility_user);
	strbuf_release(&err);
	return rc ? 1 : 0;
}
