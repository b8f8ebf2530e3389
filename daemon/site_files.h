/*
 * site_files.h - the facility site's files on disk, written safely by a
 * daemon that runs as root into directories users own.
 *
 * The site (daemon/site.h) has two kinds of directory: root's (the web root
 * itself, runs/, kernels/, users/: 0755) and one per user (users/NAME:
 * owned by NAME, 0750 with the configured web group, else 0700 with the
 * user's own group).  A user's directory holds files only, never
 * subdirectories, and is reached with O_NOFOLLOW | O_DIRECTORY from root's
 * users/ directory; each file is written under a fresh name with O_EXCL |
 * O_NOFOLLOW through the directory's descriptor, given its owner and mode
 * there, and renamed into place: a link the user planted is never followed.
 */
#ifndef ROOFLINE_SITE_FILES_H
#define ROOFLINE_SITE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Who a directory or file belongs to, and its mode. */
struct site_owner {
	uid_t uid;
	gid_t gid;
	mode_t dir_mode, file_mode;
};

/*
 * Open (making it when missing) directory `name` inside the directory open
 * at parent_fd (AT_FDCWD: name is a path) with owner o; an existing one is
 * given o too.  Returns the directory's descriptor (O_DIRECTORY |
 * O_NOFOLLOW: a link there is refused), or -errno.
 */
int site_dir_open(int parent_fd, const char *name, const struct site_owner *o);

/* Write data as file `name` in the directory open at dir_fd, atomically
 * (a fresh temporary name, then renameat), with owner o.  0 or -errno. */
int site_file_write(int dir_fd, const char *name, const void *data, size_t len,
		    const struct site_owner *o);

/*
 * Read the file at path if it is a regular file owned by uid with one link
 * (opened O_NOFOLLOW: the daemon reads users' files as root), at most max
 * bytes.  Caller frees *out.  0 or -errno (-EPERM: not the user's, or a
 * link).
 */
int site_file_read_owned(const char *path, uid_t uid, size_t max, char **out,
			 size_t *len);

/* Does file `name` exist in the directory open at dir_fd (not followed)? */
bool site_file_exists(int dir_fd, const char *name);

#endif
