/* Unit tests: daemon/spool_dirs.c, root's work in the run directories
 * (issue 21): no link followed, no directory of another reused; and
 * daemon/site_files.c's reader of users' reports. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "site_files.h"
#include "spool_dirs.h"

static char base[] = "/tmp/test_spool_dirs.XXXXXX";
static int base_fd;

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(base))
		return -1;
	chmod(base, 0711);
	base_fd = open(base, O_RDONLY | O_DIRECTORY);
	return base_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	close(base_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void root_dirs_must_be_roots_alone(void **state)
{
	struct stat st;
	int fd;

	(void)state;
	fd = spool_dir_root_child(base_fd, "run-1", 0711);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0711);
	close(fd);
	/* again: the same directory, accepted */
	fd = spool_dir_root_child(base_fd, "run-1", 0711);
	assert_true(fd >= 0);
	close(fd);
	/* a link where a directory should be is not followed */
	assert_int_equal(symlinkat(base, base_fd, "run-2"), 0);
	fd = spool_dir_root_child(base_fd, "run-2", 0711);
	assert_true(fd == -ELOOP || fd == -ENOTDIR);
	/* a directory others may write is refused */
	assert_int_equal(mkdirat(base_fd, "run-3", 0700), 0);
	assert_int_equal(fchmodat(base_fd, "run-3", 0777, 0), 0);
	assert_int_equal(spool_dir_root_child(base_fd, "run-3", 0711), -EPERM);
	if (geteuid() == 0) { /* one another user owns is refused */
		assert_int_equal(fchownat(base_fd, "run-1", 65534, 65534, 0), 0);
		assert_int_equal(spool_dir_root_child(base_fd, "run-1", 0711), -EPERM);
	}
}

static void fresh_dirs_are_never_reused(void **state)
{
	int fd;

	(void)state;
	fd = spool_dir_fresh(base_fd, "inputs");
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(spool_dir_fresh(base_fd, "inputs"), -EEXIST);
	assert_int_equal(symlinkat(base, base_fd, "attempt-1"), 0);
	assert_int_equal(spool_dir_fresh(base_fd, "attempt-1"), -EEXIST);
}

static void a_left_directory_is_set_aside(void **state)
{
	char *aside = NULL;
	struct stat st;
	int fd;

	(void)state;
	assert_int_equal(mkdirat(base_fd, "attempt-3", 0700), 0);
	fd = openat(base_fd, "attempt-3/old.txt", O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	fd = spool_dir_fresh_aside(base_fd, "attempt-3", &aside);
	assert_true(fd >= 0);
	assert_non_null(aside);
	assert_int_equal(strncmp(aside, ".attempt-3.left.", 16), 0);
	/* the new one is empty, the old one kept under its new name */
	assert_int_equal(fstatat(fd, "old.txt", &st, 0), -1);
	assert_int_equal(fstatat(base_fd, aside, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISDIR(st.st_mode));
	close(fd);
	free(aside);
	fd = spool_dir_fresh_aside(base_fd, "attempt-4", &aside);
	assert_true(fd >= 0);
	assert_null(aside);
	close(fd);
}

static void files_replace_links_never_follow_them(void **state)
{
	char target[512], buf[16] = { 0 };
	struct stat st;
	int dir, fd;

	(void)state;
	snprintf(target, sizeof(target), "%s/canary", base);
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "root", 4), 4);
	close(fd);
	dir = spool_dir_fresh(base_fd, "attempt-2");
	assert_true(dir >= 0);
	assert_int_equal(symlinkat(target, dir, "params.tsv"), 0);
	assert_int_equal(spool_file_write(dir, "params.tsv", "user", 4, geteuid(),
					  getegid(), 0600), 0);
	assert_int_equal(fstatat(dir, "params.tsv", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	fd = open(target, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), 4);
	close(fd);
	assert_string_equal(buf, "root");
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(spool_dir_hand_over(dir, geteuid(), getegid(), 0700), 0);
	close(dir);
}

/* The site's reader of users' reports: a FIFO or a link is refused at once
 * (before issue 21 a FIFO held the daemon in open()). */
static void reports_are_regular_files_only(void **state)
{
	char *data = NULL;
	size_t len;

	(void)state;
	assert_int_equal(mkfifoat(base_fd, "report.html", 0600), 0);
	assert_int_equal(site_file_read_owned(base, "report.html", geteuid(),
					      1024, &data, &len), -EPERM);
	assert_int_equal(symlinkat("/etc/passwd", base_fd, "link.html"), 0);
	assert_int_equal(site_file_read_owned(base, "link.html", geteuid(), 1024,
					      &data, &len), -EPERM);
	assert_int_equal(site_file_read_owned(base, "../etc/passwd", geteuid(),
					      1024, &data, &len), -EPERM);
	assert_null(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(root_dirs_must_be_roots_alone),
		cmocka_unit_test(fresh_dirs_are_never_reused),
		cmocka_unit_test(a_left_directory_is_set_aside),
		cmocka_unit_test(files_replace_links_never_follow_them),
		cmocka_unit_test(reports_are_regular_files_only),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
