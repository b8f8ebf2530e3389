/*
 * site_files.h - the facility site's files on disk, written safely by a
 * daemon that runs as root into directories users own.
 *
 * Every directory of the site is root's: the web root itself, runs/,
 * kernels/, users/ (0755) and one per user (users/NAME: 0750 with the
 * configured web group, else 0711), so no user can plant a link or a page
 * there; what an earlier version left in a user's directory that the site
 * did not write is pruned.  A directory is reached with O_NOFOLLOW |
 * O_DIRECTORY from its parent's descriptor; each file is written under a
 * fresh name with O_EXCL | O_NOFOLLOW through the directory's descriptor,
 * given its owner and mode there, and renamed into place.
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

/* The same, written in pieces (a file too large to hold in memory):
 * site_file_open makes the temporary, site_file_add appends to it, and
 * site_file_close gives it owner o and renames it to its name when keep is
 * true, else removes it (a failed writer calls it with false).  Each is 0
 * or -errno; after a failed open there is nothing to close. */
struct site_file {
	int dir_fd, fd;
	char name[256], tmp[320];
};
int site_file_open(struct site_file *f, int dir_fd, const char *name);
int site_file_add(struct site_file *f, const void *data, size_t len);
int site_file_close(struct site_file *f, const struct site_owner *o, bool keep);

/*
 * Read file `name` (no '/') of directory dir if it is a regular file owned
 * by uid with one link, at most max bytes; neither dir nor name is followed
 * when a link, and the file is opened O_NONBLOCK (a FIFO is refused, never
 * waited on): the daemon reads users' files as root.  Caller frees *out.  0
 * or -errno (-EPERM: not the user's, not a regular file, or a link).
 */
int site_file_read_owned(const char *dir, const char *name, uid_t uid,
			 size_t max, char **out, size_t *len);

/* Is `name` in dir_fd a file the site wrote with owner o (regular, one
 * link, o's owner and file mode)? */
bool site_file_ours(int dir_fd, const char *name, const struct site_owner *o);

/* Remove from the directory open at dir_fd every entry the site did not
 * write for owner o: links, directories (when empty), FIFOs and other
 * non-files, files of another owner; gone(name, why) is told of each. */
void site_dir_prune(int dir_fd, const struct site_owner *o,
		    void (*gone)(const char *name, const char *why));

#endif
