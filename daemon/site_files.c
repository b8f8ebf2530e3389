/* site_files.c - see site_files.h. */
#include "site_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int site_dir_open(int parent_fd, const char *name, const struct site_owner *o)
{
	int fd;

	if (mkdirat(parent_fd, name, o->dir_mode) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchown(fd, o->uid, o->gid) < 0 || fchmod(fd, o->dir_mode) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int site_file_open(struct site_file *f, int dir_fd, const char *name)
{
	static unsigned long seq;

	if ((size_t)snprintf(f->name, sizeof(f->name), "%s", name) >= sizeof(f->name))
		return -ENAMETOOLONG;
	snprintf(f->tmp, sizeof(f->tmp), ".%s.tmp.%ld.%lu", name, (long)getpid(), ++seq);
	f->dir_fd = dir_fd;
	f->fd = openat(dir_fd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		       O_CLOEXEC, 0600);
	return f->fd < 0 ? -errno : 0;
}

int site_file_add(struct site_file *f, const void *data, size_t len)
{
	return write_all(f->fd, data, len);
}

int site_file_close(struct site_file *f, const struct site_owner *o, bool keep)
{
	int rc = 0;

	if (keep && (fchown(f->fd, o->uid, o->gid) < 0 || fchmod(f->fd, o->file_mode) < 0))
		rc = -errno;
	if (close(f->fd) < 0 && !rc)
		rc = -errno;
	f->fd = -1;
	if (keep && !rc && renameat(f->dir_fd, f->tmp, f->dir_fd, f->name) < 0)
		rc = -errno;
	if (!keep || rc)
		unlinkat(f->dir_fd, f->tmp, 0);
	return rc;
}

int site_file_write(int dir_fd, const char *name, const void *data, size_t len,
		    const struct site_owner *o)
{
	struct site_file f;
	int rc = site_file_open(&f, dir_fd, name);

	if (rc)
		return rc;
	rc = site_file_add(&f, data, len);
	if (rc) {
		site_file_close(&f, o, false);
		return rc;
	}
	return site_file_close(&f, o, true);
}

int site_file_read_owned(const char *dir, const char *name, uid_t uid,
			 size_t max, char **out, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int dfd, fd, rc = 0;

	if (!*name || strchr(name, '/') || strcmp(name, "..") == 0)
		return -EPERM;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	/* O_NONBLOCK: a FIFO must not hold the daemon in open() */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
			       O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != uid || st.st_nlink != 1) {
		rc = -EPERM;
		goto out_close;
	}
	if ((size_t)st.st_size > max) {
		rc = -EFBIG;
		goto out_close;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
out_close:
	close(fd);
	return rc;
}

bool site_file_ours(int dir_fd, const char *name, const struct site_owner *o)
{
	struct stat st;

	return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode) && st.st_nlink == 1 && st.st_uid == o->uid &&
	       (st.st_mode & 07777) == o->file_mode;
}

void site_dir_prune(int dir_fd, const struct site_owner *o,
		    void (*gone)(const char *name, const char *why))
{
	int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		const char *why = NULL;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(st.st_mode))
			why = "a symbolic link";
		else if (S_ISDIR(st.st_mode))
			why = "a directory";
		else if (!S_ISREG(st.st_mode))
			why = "not a regular file";
		else if (st.st_uid != o->uid || st.st_nlink != 1)
			why = "not written by the site";
		if (!why)
			continue;
		if (unlinkat(dir_fd, de->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) == 0)
			gone(de->d_name, why);
		else
			gone(de->d_name, "cannot be removed");
	}
	closedir(d);
}
