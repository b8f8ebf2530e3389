/*
 * benchio.c - run a benchmark program and parse its key=value TSV output.
 */
#include "benchio.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- parsing ---- */

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

/* Split one line (no LF) in place into l; fields points at room enough. */
static int parse_line(char *line, struct benchio_line *l,
		      struct rl_field *fields)
{
	char *save = NULL, *tok = strtok_r(line, "\t", &save);

	l->type = tok;
	l->fields = fields;
	l->nfields = 0;
	while ((tok = strtok_r(NULL, "\t", &save))) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok)
			return -EINVAL;
		*eq = '\0';
		fields[l->nfields].key = tok;
		fields[l->nfields].value = eq + 1;
		l->nfields++;
	}
	fields[l->nfields].key = NULL;
	fields[l->nfields].value = NULL;
	return 0;
}

static int is_blank_or_comment(const char *s)
{
	while (*s == ' ' || *s == '\r')
		s++;
	return *s == '\0' || *s == '#';
}

int benchio_parse(char *buf, struct benchio_doc *doc, size_t *bad_line)
{
	size_t nlines = count_char(buf, '\n') + 1, ntabs = count_char(buf, '\t');
	struct rl_field *fields;
	char *line = buf, *next;
	size_t lineno = 0, used = 0;
	int err = -ENOMEM;

	memset(doc, 0, sizeof(*doc));
	doc->buf = buf;
	doc->lines = calloc(nlines, sizeof(*doc->lines));
	/* one slot per TAB plus a terminator per line is always enough */
	fields = calloc(ntabs + nlines, sizeof(*fields));
	if (!doc->lines || !fields)
		goto out_fail;
	for (; line; line = next) {
		struct benchio_line *l = &doc->lines[doc->n];

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (is_blank_or_comment(line))
			continue;
		line[strcspn(line, "\r")] = '\0';
		if (parse_line(line, l, fields + used) < 0) {
			if (bad_line)
				*bad_line = lineno;
			err = -EINVAL;
			goto out_fail;
		}
		l->lineno = lineno;
		used += l->nfields + 1;
		doc->n++;
	}
	if (doc->n == 0)
		free(fields); /* nothing points into it */
	return 0;
out_fail:
	free(fields);
	free(doc->lines);
	free(buf);
	memset(doc, 0, sizeof(*doc));
	return err;
}

int benchio_load(const char *path, struct benchio_doc *doc, size_t *bad_line)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	int err;

	memset(doc, 0, sizeof(*doc));
	if (!f)
		return -errno;
	do {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap ? cap * 2 : 65536);

			if (!nb) {
				err = -ENOMEM;
				goto out_close;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got > 0);
	if (ferror(f)) {
		err = -EIO;
		goto out_close;
	}
	buf[len] = '\0';
	fclose(f);
	return benchio_parse(buf, doc, bad_line);
out_close:
	free(buf);
	fclose(f);
	return err;
}

void benchio_release(struct benchio_doc *doc)
{
	/* every line's fields live in one array: the first line's */
	if (doc->lines && doc->n)
		free(doc->lines[0].fields);
	free(doc->lines);
	free(doc->buf);
	memset(doc, 0, sizeof(*doc));
}

const char *benchio_get(const struct benchio_line *l, const char *key)
{
	return rl_field_get(l->fields, key);
}

int benchio_get_double(const struct benchio_line *l, const char *key,
		       double *out)
{
	const char *v = benchio_get(l, key);
	char *end;

	if (!v)
		return -ENOENT;
	errno = 0;
	*out = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(*out))
		return -EINVAL;
	return 0;
}

/* ---- running ---- */

char *benchio_resolve(const char *explicit_path, const char *name)
{
	const char *dir = getenv("ROOFLINE_LIBEXEC");
	char *path;

	if (explicit_path && *explicit_path)
		return strdup(explicit_path);
	if (dir && *dir && asprintf(&path, "%s/%s", dir, name) >= 0) {
		if (access(path, X_OK) == 0)
			return path;
		free(path);
	}
	return strdup(name);
}

/* In the child: redirect, exec; on failure report errno through fd. */
static void child_exec(char *const argv[], const char *out_path,
		       const char *err_path, int report_fd)
{
	int in = open("/dev/null", O_RDONLY);
	int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int er = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int e;

	if (in < 0 || out < 0 || er < 0 || dup2(in, 0) < 0 ||
	    dup2(out, 1) < 0 || dup2(er, 2) < 0) {
		e = errno;
		goto fail;
	}
	if (strchr(argv[0], '/'))
		execv(argv[0], argv);
	else
		execvp(argv[0], argv);
	e = errno;
fail:
	if (write(report_fd, &e, sizeof(e)) < 0)
		_exit(126);
	_exit(127);
}

/* Wait for pid, killing it after timeout_s (0: never). */
static int wait_child(pid_t pid, long timeout_s, int *status)
{
	const struct timespec tick = {0, 20 * 1000 * 1000};
	long waited_ms = 0;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, timeout_s > 0 ? WNOHANG : 0);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (timeout_s > 0 && waited_ms >= timeout_s * 1000) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			return -ETIMEDOUT;
		}
		if (r == 0) {
			nanosleep(&tick, NULL);
			waited_ms += 20;
		}
	}
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

int benchio_run(char *const argv[], const char *out_path, const char *err_path,
		long timeout_s, int *status)
{
	int pfd[2], child_errno = 0, st;
	pid_t pid;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(pfd[0]);
		close(pfd[1]);
		return -e;
	}
	if (pid == 0) {
		close(pfd[0]);
		child_exec(argv, out_path, err_path, pfd[1]);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == (ssize_t)sizeof(child_errno)) {
		/* exec failed: reap the child, report why */
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return -child_errno;
	}
	return wait_child(pid, timeout_s, status);
}

int benchio_last_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int found = 0;

	if (!f)
		return -errno;
	if (size)
		buf[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (!*line || !size)
			continue;
		snprintf(buf, size, "%s", line);
		found = 1;
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

/* ---- records ---- */

void benchio_rec_init(struct benchio_rec *r)
{
	r->nf = 0;
	r->used = 0;
	r->overflow = 0;
	r->f[0].key = NULL;
	r->f[0].value = NULL;
}

/* Copy s into the pool; NULL when full. */
static const char *rec_store(struct benchio_rec *r, const char *s)
{
	size_t n = strlen(s) + 1;
	char *dst;

	if (n > sizeof(r->pool) - r->used)
		return NULL;
	dst = r->pool + r->used;
	memcpy(dst, s, n);
	r->used += n;
	return dst;
}

void benchio_rec_add(struct benchio_rec *r, const char *key, const char *value)
{
	const char *k, *v;

	if (!value)
		return;
	if (r->nf == BENCHIO_REC_FIELDS) {
		r->overflow = 1;
		return;
	}
	k = rec_store(r, key);
	v = k ? rec_store(r, value) : NULL;
	if (!v) {
		r->overflow = 1;
		return;
	}
	r->f[r->nf].key = k;
	r->f[r->nf].value = v;
	r->nf++;
	r->f[r->nf].key = NULL;
	r->f[r->nf].value = NULL;
}

void benchio_rec_addd(struct benchio_rec *r, const char *key, double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.17g", v);
	benchio_rec_add(r, key, buf);
}

void benchio_rec_addl(struct benchio_rec *r, const char *key, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	benchio_rec_add(r, key, buf);
}

void benchio_rec_add_gpu(struct benchio_rec *r, const struct benchio_line *attr)
{
	benchio_rec_add(r, "gpu_index", benchio_get(attr, "gpu"));
	benchio_rec_add(r, "gpu_uuid", benchio_get(attr, "uuid"));
	benchio_rec_add(r, "gpu_name", benchio_get(attr, "name"));
	benchio_rec_add(r, "driver", benchio_get(attr, "driver"));
	benchio_rec_add(r, "cuda", benchio_get(attr, "cuda_runtime"));
	benchio_rec_add(r, "cc", benchio_get(attr, "cc"));
}
