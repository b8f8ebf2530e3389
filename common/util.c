/* util.c - see util.h. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void die_oom(size_t size)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", size);
	abort();
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		die_oom(size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die_oom(n * size);
	return p;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (!p)
		die_oom(size);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die_oom(strlen(s) + 1);
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		die_oom(n + 1);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die_oom(0);
	return s;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fsync_dir_of(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	int fd, rc = 0;

	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
	} else {
		if (fsync(fd) < 0 && errno != EINVAL)
			rc = -errno;
		close(fd);
	}
	free(dir);
	return rc;
}

static int write_file(const char *path, const void *data, size_t len,
		      mode_t mode, bool durable)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd, rc;

	/* The temporary name is predictable and may sit in a directory its
	 * owner can write to: never reuse what is there (a planted link). */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  mode);
	if (fd < 0) {
		rc = -errno;
		goto out_free_tmp;
	}
	rc = write_all(fd, data, len);
	if (!rc && durable && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	else if (durable)
		rc = fsync_dir_of(path);
out_free_tmp:
	free(tmp);
	return rc;
}

int util_write_file_atomic(const char *path, const void *data, size_t len,
			   mode_t mode)
{
	return write_file(path, data, len, mode, true);
}

int util_write_file_replace(const char *path, const void *data, size_t len,
			    mode_t mode)
{
	return write_file(path, data, len, mode, false);
}

int util_read_file(const char *path, size_t max_bytes, char **out, size_t *len)
{
	struct stat st;
	size_t size, got = 0;
	char *buf;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto out_close;
	}
	if ((size_t)st.st_size > max_bytes) {
		rc = -EFBIG;
		goto out_close;
	}
	size = (size_t)st.st_size;
	buf = xmalloc(size + 1);
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			free(buf);
			goto out_close;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	if (len)
		*len = got;
out_close:
	close(fd);
	return rc;
}

void util_exec_reset(void)
{
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	close_range(3, ~0U, 0);
}

int util_mkdir_p(const char *path, mode_t mode)
{
	char *copy;
	int rc = 0;

	/* Mostly only the last component is missing (an attempt directory
	 * in its run's): one call instead of one per component. */
	if (mkdir(path, mode) == 0 || errno == EEXIST)
		return 0;
	copy = xstrdup(path);
	for (char *p = copy + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;

		*p = '\0';
		if (mkdir(copy, mode) < 0 && errno != EEXIST) {
			rc = -errno;
			break;
		}
		*p = saved;
		if (saved == '\0')
			break;
	}
	free(copy);
	return rc;
}

bool util_path_is_contained(const char *rel)
{
	const char *p = rel;

	if (!rel || !*rel || rel[0] == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += n;
		while (*p == '/')
			p++;
	}
	return true;
}

size_t util_edit_distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row, result;

	if ((la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	row = xcalloc(lb + 1, sizeof(*row));
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0], best;

		row[0] = i;
		best = row[0];
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) !=
				      tolower((unsigned char)b[j - 1]);
			size_t v = diag + cost;

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
			if (v < best)
				best = v;
		}
		if (best > cap) {
			free(row);
			return cap + 1;
		}
	}
	result = row[lb];
	free(row);
	return result;
}

const char *util_did_you_mean(const char *word,
			      const char *const *candidates)
{
	const char *best = NULL;
	size_t best_d = 3;

	for (; *candidates; candidates++) {
		size_t d = util_edit_distance(word, *candidates, 2);

		if (d < best_d) {
			best_d = d;
			best = *candidates;
		}
	}
	return best;
}

int util_parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int util_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

/* Read an unsigned decimal field; advance *p.  -1 when there is none. */
static long take_number(const char **p)
{
	long v = 0;

	if (!isdigit((unsigned char)**p))
		return -1;
	while (isdigit((unsigned char)**p)) {
		if (v > LONG_MAX / 100)
			return -1;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	return v;
}

static int parse_unit_duration(const char *s, long *out)
{
	const char *p = s;
	long v = take_number(&p);
	long scale;

	if (v < 0)
		return -EINVAL;
	switch (*p) {
	case 's': scale = 1; break;
	case 'm': scale = 60; break;
	case 'h': scale = 3600; break;
	case 'd': scale = 86400; break;
	default: return -EINVAL;
	}
	if (p[1] != '\0' || __builtin_mul_overflow(v, scale, out))
		return -EINVAL;
	return 0;
}

/* *out = a * scale + b, or -EINVAL when that does not fit a long. */
static int scaled(long a, long scale, long b, long *out)
{
	long v;

	if (__builtin_mul_overflow(a, scale, &v) ||
	    __builtin_add_overflow(v, b, out))
		return -EINVAL;
	return 0;
}

int util_parse_duration(const char *s, long *out)
{
	const char *p = s;
	long f[3], days = 0;
	int n = 0;

	if (!s || !*s)
		return -EINVAL;
	if (isalpha((unsigned char)s[strlen(s) - 1]))
		return parse_unit_duration(s, out);
	if (strchr(s, '-')) {
		days = take_number(&p);
		if (days < 0 || *p++ != '-')
			return -EINVAL;
	}
	for (;;) {
		if (n == 3)
			return -EINVAL;
		f[n] = take_number(&p);
		if (f[n] < 0)
			return -EINVAL;
		n++;
		if (*p == '\0')
			break;
		if (*p++ != ':')
			return -EINVAL;
	}
	if (strchr(s, '-')) {
		/* D-H, D-H:M, D-H:M:S */
		long h = f[0], m = n > 1 ? f[1] : 0, sec = n > 2 ? f[2] : 0;

		if (h > 23 || m > 59 || sec > 59)
			return -EINVAL;
		return scaled(days, 86400, h * 3600 + m * 60 + sec, out);
	}
	if (n == 1)
		return scaled(f[0], 60, 0, out); /* minutes */
	if (n == 2)
		return f[1] > 59 ? -EINVAL : scaled(f[0], 60, f[1], out);
	if (f[1] > 59 || f[2] > 59)
		return -EINVAL;
	return scaled(f[0], 3600, f[1] * 60 + f[2], out);
}

char *util_exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return xstrdup(buf);
}

double util_seconds_between(const struct timespec *t0, const struct timespec *t)
{
	return (double)(t->tv_sec - t0->tv_sec) +
	       (double)(t->tv_nsec - t0->tv_nsec) / 1e9;
}
