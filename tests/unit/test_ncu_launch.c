/*
 * test_ncu_launch - plugins/ncu/launch.c: the `ranks` option read against
 * the step's tasks, the launcher's command line around ncu's (srun with
 * --gpu-bind=per_task when gpus_per_task is set, mpirun -np N), and each
 * rank's files read back.  The wrapper script itself runs in
 * tests/integration/app.t (4 ranks under srun on the local cluster).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ncu/launch.h"

static void ranks_parsed(void **state)
{
	char *items[] = { "3", "0", "all", "x", "4", "1", "1" };
	struct rl_strlist none = { 0, NULL }, two = { 2, items };
	struct rl_strlist all = { 1, items + 2 }, bad = { 1, items + 3 };
	struct rl_strlist over = { 1, items + 4 }, twice = { 2, items + 5 };
	struct launch_ranks r;
	char err[256];

	(void)state;
	assert_int_equal(launch_ranks_parse(&none, 4, &r, err, sizeof(err)), 0);
	assert_int_equal(launch_ranks_count(&r, 4), 1);
	assert_int_equal(launch_ranks_at(&r, 0), 0);
	launch_ranks_release(&r);
	assert_int_equal(launch_ranks_parse(&two, 4, &r, err, sizeof(err)), 0);
	assert_int_equal(launch_ranks_count(&r, 4), 2);
	assert_int_equal(launch_ranks_at(&r, 0), 0); /* sorted */
	assert_int_equal(launch_ranks_at(&r, 1), 3);
	launch_ranks_release(&r);
	assert_int_equal(launch_ranks_parse(&all, 4, &r, err, sizeof(err)), 0);
	assert_int_equal(launch_ranks_count(&r, 4), 4);
	assert_int_equal(launch_ranks_at(&r, 3), 3);
	launch_ranks_release(&r);
	assert_int_equal(launch_ranks_parse(&bad, 4, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "ranks: 'x' is not 'all' nor a rank of the step's 4 tasks (0 to 3)");
	assert_int_equal(launch_ranks_parse(&over, 4, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "ranks: '4' is not 'all' nor a rank of the step's 4 tasks (0 to 3)");
	assert_int_equal(launch_ranks_parse(&twice, 4, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "ranks: rank 1 listed twice");
}

/* argv from 0 to its NULL, one item a line */
static char *lines(char *const *v)
{
	size_t n = 1;
	char *s;

	for (size_t i = 0; v[i]; i++)
		n += strlen(v[i]) + 1;
	s = calloc(1, n);
	for (size_t i = 0; v[i]; i++) {
		/* the wrapper script is constant: shown by name */
		strcat(s, strncmp(v[i], "out=$1", 6) == 0 ? "SCRIPT" : v[i]);
		strcat(s, "\n");
	}
	return s;
}

static void command_lines(void **state)
{
	char *ncu[] = { "/bin/ncu", "--csv", "--metrics", "m1,m2", "--log-file",
			"/o/ncu.csv", "--", "/home/u/app", "-i", "deck", NULL };
	char *bad[] = { "/bin/ncu", "--", "/home/u/app", NULL };
	char *items[] = { "1", "3" };
	struct rl_strlist two = { 2, items };
	struct launch_ranks r;
	struct argv_buf a = { 0 };
	char err[64], *s;

	(void)state;
	assert_int_equal(launch_ranks_parse(&two, 4, &r, err, sizeof(err)), 0);
	assert_int_equal(launch_build(&a, "srun", "/usr/bin/srun", 4, 1, &r, "/o", ncu), 0);
	s = lines(a.v);
	assert_string_equal(s, "/usr/bin/srun\n--kill-on-bad-exit=1\n--gpu-bind=per_task:1\n"
			       "/bin/bash\n-c\nSCRIPT\nrooflined-rank\n/o\n1,3\nsrun\n4\n"
			       "/bin/ncu\n--csv\n--metrics\nm1,m2\n/home/u/app\n-i\ndeck\n");
	free(s);
	argv_release(&a);
	assert_int_equal(launch_build(&a, "mpirun", "/usr/bin/mpirun", 4, 0, &r, "/o", ncu), 0);
	s = lines(a.v);
	assert_string_equal(s, "/usr/bin/mpirun\n-np\n4\n/bin/bash\n-c\nSCRIPT\nrooflined-rank\n"
			       "/o\n1,3\nmpirun\n4\n/bin/ncu\n--csv\n--metrics\nm1,m2\n"
			       "/home/u/app\n-i\ndeck\n");
	free(s);
	argv_release(&a);
	assert_int_equal(launch_build(&a, "srun", "/usr/bin/srun", 4, 0, &r, "/o", bad), -EINVAL);
	argv_release(&a);
	launch_ranks_release(&r);
}

static void rank_files(void **state)
{
	char dir[] = "/tmp/test_ncu_launch.XXXXXX", path[128], node[64];
	struct gpus g;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(launch_rank_info(dir, 2, node, sizeof(node), &g), -ENOENT);
	snprintf(path, sizeof(path), "%s/rank-2.node", dir);
	f = fopen(path, "w");
	fputs("rl-node3\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/rank-2.gpus", dir);
	f = fopen(path, "w");
	fputs("00000000:00:07.0, GPU-83f11279-bec6-fda0-8a34-0b9a7653663a\n", f);
	fclose(f);
	assert_int_equal(launch_rank_info(dir, 2, node, sizeof(node), &g), 0);
	assert_string_equal(node, "rl-node3");
	assert_int_equal(g.n, 1);
	assert_string_equal(g.v[0].uuid, "GPU-83f11279-bec6-fda0-8a34-0b9a7653663a");
	unlink(path);
	snprintf(path, sizeof(path), "%s/rank-2.node", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ranks_parsed),
		cmocka_unit_test(command_lines),
		cmocka_unit_test(rank_files),
	};
	return cmocka_run_group_tests_name("ncu_launch", tests, NULL, NULL);
}
