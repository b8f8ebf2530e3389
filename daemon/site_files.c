/* site_files.c - see site_files.h. */
#include "site_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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

int site_file_write(int dir_fd, const char *name, const void *data, size_t len,
		    const struct site_owner *o)
{
	static unsigned long seq;
	char tmp[512];
	int fd, rc;

	snprintf(tmp, sizeof(tmp), ".%s.tmp.%ld.%lu", name, (long)getpid(), ++seq);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	rc = write_all(fd, data, len);
	if (!rc && (fchown(fd, o->uid, o->gid) < 0 || fchmod(fd, o->file_mode) < 0))
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && renameat(dir_fd, tmp, dir_fd, name) < 0)
		rc = -errno;
	if (rc)
		unlinkat(dir_fd, tmp, 0);
	return rc;
}

int site_file_read_owned(const char *path, uid_t uid, size_t max, char **out,
			 size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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

bool site_file_exists(int dir_fd, const char *name)
{
	struct stat st;

	return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}
