/*
 * Unit tests: daemon/pipeline_cluster.c, a pipeline checked against a
 * cluster described by hand (what daemon/slurm.c would load from
 * slurmctld): partitions, their MaxTime and nodes, the nodes' gres.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pipeline.h"
#include "pipeline_cluster.h"
#include "util.h"

static char *n1_n2[] = { "n1", "n2" };
static char *n1[] = { "n1" };
static char *n2_n3[] = { "n2", "n3" };
static char *n1_n2_n3[] = { "n1", "n2", "n3" };

static struct slurm_part parts[] = {
	{ "gpu", true, -1, n1_n2, 2 },
	{ "short", false, 10, n1, 1 },
	{ "mixed", false, -1, n2_n3, 2 },
	{ "long", false, 2 * 24 * 60 + 90, n1_n2_n3, 3 },
};

static struct slurm_node nodes[] = {
	{ "n1", "gpu:h100:2(S:0-1)" },
	{ "n2", "gpu:1" },
	{ "n3", "fpga:1" },
};

static const struct slurm_cluster cluster = { parts, 4, nodes, 3 };

/* Load yaml (no plugin checks), check it against c; the errors (caller
 * frees), "" when it passes. */
static char *check(const char *yaml, const struct slurm_cluster *c)
{
	struct strbuf err = STRBUF_INIT;
	struct pipeline *p;
	int rc;

	strbuf_init(&err);
	p = pipeline_load("t.yaml", yaml, strlen(yaml), NULL, &err);
	if (!p)
		fail_msg("pipeline refused:\n%s", err.buf);
	rc = pipeline_cluster_check(p, c, &err);
	assert_int_equal(rc, err.len ? -EINVAL : 0);
	pipeline_free(p);
	return strbuf_detach(&err);
}

static void expect(const char *yaml, const char *want)
{
	char *got = check(yaml, &cluster);

	if (strcmp(got, want) != 0)
		fail_msg("yaml:\n%s\ngot:\n%s\nwant:\n%s", yaml, got, want);
	free(got);
}

#define STEP "steps:\n  - {id: a, plugin: x}\n"

static void fits_the_cluster(void **state)
{
	(void)state;
	expect("name: t\nslurm: {partition: gpu, gres: \"gpu:2\", time: 1d}\n"
	       STEP, "");
	/* the default partition, a typed gres, a node list of it */
	expect("name: t\nslurm: {gres: \"gpu:h100:2\", nodes: [n1, n2]}\n" STEP, "");
	expect("name: t\nslurm: {partition: short, time: \"10\"}\n" STEP, "");
	expect("name: t\nslurm: {partition: short, time: \"9:59\"}\n" STEP, "");
	expect("name: t\nslurm: {partition: mixed, gres: fpga, nodes: 2}\n" STEP, "");
	/* a step's own shorter timeout is what Slurm gets */
	expect("name: t\nslurm: {partition: short, time: 2h}\n"
	       "steps:\n  - {id: a, plugin: x, timeout: 5m}\n", "");
	/* no Slurm step: nothing is checked */
	expect("name: t\nslurm: {partition: nosuch, gres: \"tpu:9\"}\n"
	       "steps:\n  - {id: a, plugin: x, on: daemon}\n", "");
}

static void unknown_partition(void **state)
{
	(void)state;
	expect("name: t\nslurm: {partition: gpus, gres: \"tpu:1\"}\n" STEP,
	       "t.yaml:2:20: unknown partition 'gpus' in 'slurm' (did you mean "
	       "'gpu'?)\n");
	expect("name: t\nslurm:\n  partition: nosuch\n" STEP,
	       "t.yaml:3:14: unknown partition 'nosuch' in 'slurm' (the "
	       "cluster's partitions: gpu, short, mixed, long)\n");
}

static void no_default_partition(void **state)
{
	struct slurm_part no_default[] = { { "a", false, -1, n1, 1 },
					   { "b", false, -1, n1, 1 } };
	const struct slurm_cluster c = { no_default, 2, nodes, 3 };
	char *got;

	(void)state;
	got = check("name: t\nsteps:\n  - {id: d, plugin: x, on: daemon}\n"
		    "  - {id: s, plugin: x}\n", &c);
	assert_string_equal(got, "t.yaml:4:5: step 's' runs on Slurm, but "
			    "'slurm' names no partition and the cluster has no "
			    "default one (its partitions: a, b)\n");
	free(got);
}

static void gres_the_cluster_lacks(void **state)
{
	(void)state;
	expect("name: t\nslurm: {gres: \"tpu:1\"}\n" STEP,
	       "t.yaml:2:15: unknown gres 'tpu' in 'slurm' (gres of the "
	       "cluster's nodes: gpu, fpga)\n");
	expect("name: t\nslurm: {gres: \"fpga:1\"}\n" STEP,
	       "t.yaml:2:15: no node of partition 'gpu' has gres 'fpga:1' (its "
	       "nodes have: gpu:h100:2, gpu:1)\n");
	expect("name: t\nslurm: {gres: \"gpu:3\"}\n" STEP,
	       "t.yaml:2:15: no node of partition 'gpu' has gres 'gpu:3' (its "
	       "nodes have: gpu:h100:2, gpu:1)\n");
	expect("name: t\nslurm: {gres: \"gpu:a100:1\"}\n" STEP,
	       "t.yaml:2:15: no node of partition 'gpu' has gres 'gpu:a100:1' "
	       "(its nodes have: gpu:h100:2, gpu:1)\n");
	expect("name: t\nslurm: {partition: short, gres: \"gpu:1,fpga\"}\n" STEP,
	       "t.yaml:2:33: no node of partition 'short' has gres 'fpga' (its "
	       "nodes have: gpu:h100:2)\n");
	expect("name: t\nslurm: {partition: mixed, gres: \"fpga,gpu:h100:1\"}\n" STEP,
	       "t.yaml:2:33: no node of partition 'mixed' has gres 'gpu:h100:1' "
	       "(its nodes have: gpu:1, fpga:1)\n");
	/* each item somewhere in the partition, but never together */
	expect("name: t\nslurm: {partition: mixed, gres: \"gpu:1,fpga:1\"}\n" STEP,
	       "t.yaml:2:33: no node of partition 'mixed' has all of gres "
	       "'gpu:1,fpga:1'\n");
}

static void time_over_max_time(void **state)
{
	(void)state;
	/* 10 min 1 s is 11 minutes to Slurm */
	expect("name: t\nslurm: {partition: short, time: \"10:01\"}\n" STEP,
	       "t.yaml:2:33: time '10:01' in 'slurm' is over the time limit of "
	       "partition 'short' (MaxTime=00:10:00)\n");
	/* reported once at slurm.time for all the steps that inherit it, and
	 * at each step's own timeout */
	expect("name: t\nslurm: {partition: short, time: 2h}\nsteps:\n"
	       "  - {id: a, plugin: x}\n  - {id: b, plugin: x}\n"
	       "  - {id: c, plugin: x, timeout: 11m}\n"
	       "  - {id: d, plugin: x, timeout: 5m}\n"
	       "  - {id: e, plugin: x, on: daemon, timeout: 3h}\n",
	       "t.yaml:2:33: time '2h' in 'slurm' is over the time limit of "
	       "partition 'short' (MaxTime=00:10:00)\n"
	       "t.yaml:6:33: timeout '11m' in step 'c' is over the time limit of "
	       "partition 'short' (MaxTime=00:10:00)\n");
	expect("name: t\nslurm: {partition: long, time: 3d}\n" STEP,
	       "t.yaml:2:32: time '3d' in 'slurm' is over the time limit of "
	       "partition 'long' (MaxTime=2-01:30:00)\n");
	expect("name: t\nslurm: {partition: long, time: \"2-01:30:00\"}\n" STEP, "");
}

static void nodes_of_the_partition(void **state)
{
	(void)state;
	expect("name: t\nslurm: {partition: gpu, nodes: [n1, n3, n9]}\n" STEP,
	       "t.yaml:2:37: node 'n3' in 'slurm' is not in partition 'gpu' (its "
	       "nodes: n1, n2)\n"
	       "t.yaml:2:41: node 'n9' in 'slurm' is not in partition 'gpu' (its "
	       "nodes: n1, n2)\n");
	expect("name: t\nslurm: {partition: short, nodes: 2}\n" STEP,
	       "t.yaml:2:34: 'nodes' in 'slurm' asks for 2 nodes, but partition "
	       "'short' has 1 (n1)\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fits_the_cluster),
		cmocka_unit_test(unknown_partition),
		cmocka_unit_test(no_default_partition),
		cmocka_unit_test(gres_the_cluster_lacks),
		cmocka_unit_test(time_over_max_time),
		cmocka_unit_test(nodes_of_the_partition),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
