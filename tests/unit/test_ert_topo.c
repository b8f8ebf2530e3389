/*
 * test_ert_topo.c - plugins/ert/topo.c: the link label of a pair of GPUs in
 * `nvidia-smi topo -m` output, and the datasheet figure of a label.
 *
 * The matrices are written here as nvidia-smi prints them (TAB-separated,
 * " X " on the diagonal, the legend below), and the one recorded on the
 * 4 x H200 node (tests/fixtures/p2p/topo.txt, escapes in its header) is read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ert/topo.h"

static const char nvswitch4[] =
	"\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
	"GPU0\t X \tNV18\tNV18\tNV18\tSYS\t0-63\t0\t\tN/A\n"
	"GPU1\tNV18\t X \tNV18\tNV18\tSYS\t0-63\t0\t\tN/A\n"
	"GPU2\tNV18\tNV18\t X \tNV18\tPIX\t0-63\t0\t\tN/A\n"
	"GPU3\tNV18\tNV18\tNV18\t X \tSYS\t0-63\t0\t\tN/A\n"
	"\n"
	"Legend:\n"
	"\n"
	"  X    = Self\n"
	"  SYS  = Connection traversing PCIe as well as the SMP interconnect\n"
	"  NV#  = Connection traversing a bonded set of # NVLinks\n";

/* A PCIe pair, in a terminal's copy: bold escapes around the header. */
static const char pcie2[] =
	"\t\033[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\033[0m\n"
	"GPU0\t X \tSYS\t0-31\t0\n"
	"GPU1\tPHB \t X \t0-31\t0\n";

static void test_nvswitch(void **state)
{
	char b[32];

	(void)state;
	assert_int_equal(topo_link(nvswitch4, 0, 3, b, sizeof(b)), 0);
	assert_string_equal(b, "NV18");
	assert_int_equal(topo_link(nvswitch4, 2, 1, b, sizeof(b)), 0);
	assert_string_equal(b, "NV18");
	assert_int_equal(topo_link(nvswitch4, 1, 1, b, sizeof(b)), 0);
	assert_string_equal(b, "X");
	/* no GPU4 row or column */
	assert_int_equal(topo_link(nvswitch4, 4, 0, b, sizeof(b)), -ENOENT);
	assert_int_equal(topo_link(nvswitch4, 0, 4, b, sizeof(b)), -ENOENT);
	assert_string_equal(b, "");
}

static void test_pcie_escapes(void **state)
{
	char b[32];

	(void)state;
	assert_int_equal(topo_link(pcie2, 0, 1, b, sizeof(b)), 0);
	assert_string_equal(b, "SYS");
	assert_int_equal(topo_link(pcie2, 1, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "PHB");
}

static void test_not_a_matrix(void **state)
{
	char b[8];

	(void)state;
	assert_int_equal(topo_link("", 0, 1, b, sizeof(b)), -EINVAL);
	assert_int_equal(topo_link("Failed to initialize NVML\n", 0, 1, b,
				   sizeof(b)), -EINVAL);
	/* a truncated cell */
	assert_int_equal(topo_link(nvswitch4, 0, 1, b, 3), 0);
	assert_string_equal(b, "NV");
}

static void test_recorded(void **state)
{
	FILE *f = fopen("tests/fixtures/p2p/topo.txt", "r");
	static char text[65536];
	size_t n;
	char b[32];

	(void)state;
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			assert_int_equal(topo_link(text, i, j, b, sizeof(b)), 0);
			assert_string_equal(b, i == j ? "X" : "NV18");
		}
	assert_int_equal(topo_link(text, 0, 4, b, sizeof(b)), -ENOENT);
}

static void test_datasheet(void **state)
{
	(void)state;
	assert_true(topo_datasheet_Bps("NV18") == 450e9);
	assert_true(topo_datasheet_Bps("NV4") == 100e9);
	assert_true(topo_datasheet_Bps("SYS") == 64e9);
	assert_true(topo_datasheet_Bps("PIX") == 64e9);
	assert_true(topo_datasheet_Bps("NV") == 0);
	assert_true(topo_datasheet_Bps("NV18x") == 0);
	assert_true(topo_datasheet_Bps("X") == 0);
	assert_true(topo_datasheet_Bps(NULL) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvswitch),
		cmocka_unit_test(test_pcie_escapes),
		cmocka_unit_test(test_not_a_matrix),
		cmocka_unit_test(test_recorded),
		cmocka_unit_test(test_datasheet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
