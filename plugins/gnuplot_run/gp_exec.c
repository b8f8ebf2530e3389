/*
 * gp_exec.c - find and run gnuplot.  See gp_exec.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gp_exec.h"

static int check_file(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return -ENOENT;
	return access(path, X_OK) == 0 ? 0 : -EACCES;
}

int gp_exec_find(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH"), *p, *end;
	int rc = -ENOENT;

	if (!name || !*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		if ((size_t)snprintf(out, cap, "%s", name) >= cap)
			return -ENAMETOOLONG;
		return check_file(out);
	}
	for (p = path ? path : "/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		int r;

		end = strchrnul(p, ':');
		if (end == p)
			continue;
		if ((size_t)snprintf(out, cap, "%.*s/%s", (int)(end - p), p, name) >= cap)
			continue;
		r = check_file(out);
		if (r == 0)
			return 0;
		if (r == -EACCES)
			rc = r;
	}
	return rc;
}

/* Child side: never returns. */
static void child(const char *prog, const char *dir, const char *script,
		  int log_fd)
{
	int null_fd = open("/dev/null", O_RDWR);

	if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(null_fd, 1) < 0 ||
	    dup2(log_fd, 2) < 0 || chdir(dir) != 0) {
		dprintf(log_fd, "cannot set up gnuplot's process: %s\n", strerror(errno));
		_exit(127);
	}
	execl(prog, prog, "-d", script, (char *)NULL);
	dprintf(2, "cannot run '%s': %s\n", prog, strerror(errno));
	_exit(127);
}

/* Wait for pid up to timeout_s; its status, or -ETIMEDOUT after killing it. */
static int wait_child(pid_t pid, long timeout_s, int *status)
{
	struct timespec start, now, tick = { 0, 5 * 1000 * 1000 };

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= timeout_s) {
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			return -ETIMEDOUT;
		}
		nanosleep(&tick, NULL);
	}
}

/*
 * What gnuplot said, in one line, into err: its first error or warning
 * ("script" line N: ...; gnuplot echoes the faulty line above it), else the
 * first non-blank line.
 */
static void first_line(const char *path, char *err, size_t cap)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t\r\n");

		s[strcspn(s, "\r\n")] = '\0';
		found = *s == '"' && strstr(s, "\" line ") && strstr(s, ": ");
		if (found || (*s && !err[0]))
			snprintf(err, cap, "%s", s);
	}
	if (f)
		fclose(f);
}

int gp_exec_run(const char *prog, const char *dir, const char *script,
		const char *log_name, long timeout_s, char *err, size_t cap)
{
	char log_path[4096];
	int fd, status = 0, rc;
	pid_t pid;

	err[0] = '\0';
	if ((size_t)snprintf(log_path, sizeof(log_path), "%s/%s", dir, log_name) >= sizeof(log_path))
		return -ENAMETOOLONG;
	fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	pid = fork();
	if (pid == 0)
		child(prog, dir, script, fd); /* dup2 clears O_CLOEXEC on 2 */
	rc = pid < 0 ? -errno : wait_child(pid, timeout_s > 0 ? timeout_s : 60, &status);
	close(fd);
	if (rc < 0) {
		snprintf(err, cap, "%s", rc == -ETIMEDOUT ? "killed: ran out of time" : strerror(-rc));
		return rc;
	}
	first_line(log_path, err, cap);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
