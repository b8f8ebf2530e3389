/*
 * spool_dirs.h - the run directories, made and filled by a daemon that runs
 * as root, through directory descriptors only.
 *
 *   <spool>/                       root's, 0711 (rooflined.c)
 *     run-<id>/                    root's, 0711: nobody but root writes here
 *       inputs/                    made fresh, filled, then handed to the user
 *       <step>[@<node>]/           root's, 0711
 *         attempt-<n>/             made fresh, filled, then handed to the user
 *
 * Everything a user may write (inputs/, attempt-N/ once handed over) is
 * below a directory only root writes; root never works by path beneath it.
 * A root directory is opened with O_DIRECTORY | O_NOFOLLOW and accepted only
 * when root owns it and nobody else can write it.  A directory that is handed
 * to a user is made by this call (mkdirat: an existing one is refused, never
 * reused; one left by an interrupted start or launch is set aside), filled while it is still root's 0700, and given away last with
 * fchown/fchmod on its descriptor.  Files are written under a fresh name
 * with O_EXCL | O_NOFOLLOW, given owner and mode on the descriptor, and
 * renamed into place (site_files.h).
 */
#ifndef ROOFLINE_SPOOL_DIRS_H
#define ROOFLINE_SPOOL_DIRS_H

#include <stddef.h>
#include <sys/types.h>

/* Open the directory at path (its last component not followed) if root owns
 * it and no one else can write it.  The descriptor, or -errno (-EPERM: not
 * root's alone, -ELOOP/-ENOTDIR: a link or not a directory). */
int spool_dir_open_root(const char *path);

/* Open root's directory `name` in the one open at parent_fd, making it
 * (mode) when missing; an existing one must be root's alone, as above.  The
 * descriptor or -errno. */
int spool_dir_root_child(int parent_fd, const char *name, mode_t mode);

/* Make directory `name` in parent_fd, root's and 0700, and open it; one that
 * exists already is refused (-EEXIST), whoever made it.  The descriptor or
 * -errno. */
int spool_dir_fresh(int parent_fd, const char *name);

/* spool_dir_fresh, but one that exists already (in a parent only root
 * writes, only root made it: a start or a launch a restart interrupted) is
 * renamed aside as ".NAME.left.<time>.<pid>" (renameat follows nothing),
 * never reused, and a fresh one made.  *aside: that name (caller frees), or
 * NULL.  The descriptor or -errno. */
int spool_dir_fresh_aside(int parent_fd, const char *name, char **aside);

/* Write data as file `name` (mode) in the directory open at dir_fd, owned by
 * uid:gid: a fresh temporary name, then renameat.  0 or -errno. */
int spool_file_write(int dir_fd, const char *name, const void *data,
		     size_t len, uid_t uid, gid_t gid, mode_t mode);

/* Give the directory open at fd to uid:gid with mode.  0 or -errno. */
int spool_dir_hand_over(int fd, uid_t uid, gid_t gid, mode_t mode);

#endif
