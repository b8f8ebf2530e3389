/* spool_dirs.c - see spool_dirs.h. */
#include "spool_dirs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "site_files.h"
#include "util.h"

/* fd is a directory root owns and only root may write; else close it. */
static int root_alone(int fd)
{
	struct stat st;
	int rc = 0;

	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISDIR(st.st_mode))
		rc = -ENOTDIR;
	else if (st.st_uid != geteuid() || (st.st_mode & 022))
		rc = -EPERM;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int spool_dir_open_root(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : root_alone(fd);
}

int spool_dir_root_child(int parent_fd, const char *name, mode_t mode)
{
	bool made = mkdirat(parent_fd, name, mode) == 0;
	int fd;

	if (!made && errno != EEXIST)
		return -errno;
	fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* mkdirat's mode is under the umask */
	if (made && fchmod(fd, mode) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return root_alone(fd);
}

int spool_dir_fresh(int parent_fd, const char *name)
{
	int fd;

	if (mkdirat(parent_fd, name, 0700) < 0)
		return -errno;
	fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : root_alone(fd);
}

int spool_dir_fresh_aside(int parent_fd, const char *name, char **aside)
{
	int fd = spool_dir_fresh(parent_fd, name);

	*aside = NULL;
	if (fd != -EEXIST)
		return fd;
	*aside = xasprintf(".%s.left.%ld.%ld", name, (long)time(NULL),
			   (long)getpid());
	if (renameat(parent_fd, name, parent_fd, *aside) < 0) {
		fd = -errno;
		free(*aside);
		*aside = NULL;
		return fd;
	}
	return spool_dir_fresh(parent_fd, name);
}

int spool_file_write(int dir_fd, const char *name, const void *data,
		     size_t len, uid_t uid, gid_t gid, mode_t mode)
{
	const struct site_owner o = { uid, gid, 0700, mode };

	return site_file_write(dir_fd, name, data, len, &o);
}

int spool_dir_hand_over(int fd, uid_t uid, gid_t gid, mode_t mode)
{
	if (fchown(fd, uid, gid) < 0 || fchmod(fd, mode) < 0)
		return -errno;
	return 0;
}
