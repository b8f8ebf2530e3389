/*
 * test_roofline_math - plugins/hierarchical/roofline_math.c on its own: the point
 * arithmetic, the seeds' FMA-ratio figures, the number parser against
 * strtod, the kernel table, the ceilings per GPU and their matching.
 * (tests/unit/test_hierarchical.c runs it through the plugin on the H100
 * fixtures.)
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hierarchical/roofline_math.h"

#define assert_close(a, b) do { double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= 1e-12 * fabs(b_))) \
		fail_msg("%s = %.17g, want %s = %.17g", #a, a_, #b, b_); } while (0)

static void test_point(void **state)
{
	struct roofline_math_in in = { .flops = 1e9, .time_s = 1, .peak = 1e10,
				       .latency_pct = 10 };
	struct roofline_math_point pt;

	(void)state;
	/* no level: the peak is the roof */
	assert_int_equal(roofline_math_point(&in, &pt), 0);
	assert_int_equal(pt.bound_level, RLM_COMPUTE);
	assert_close(pt.gflops, 1);
	/* AI 10 at L1 x 1e9 B/s = 1e10: the ridge point, so the peak binds */
	in.bytes[RLM_L1] = 1e8, in.has_bytes[RLM_L1] = true;
	in.bw[RLM_L1] = 1e9, in.has_bw[RLM_L1] = true;
	assert_int_equal(roofline_math_point(&in, &pt), 0);
	assert_int_equal(pt.bound_level, RLM_COMPUTE);
	assert_close(pt.ai[RLM_L1], 10);
	assert_close(pt.roof_gflops[RLM_L1], 10);
	assert_close(pt.pct_of_bound, 10);
	assert_int_equal(pt.verdict, RLM_COMPUTE_BOUND);
	/* L2 (AI 1 x 1e9 B/s) binds: at 10 % of it bandwidth-bound, under it
	 * latency-bound */
	in.bytes[RLM_L2] = 1e9, in.has_bytes[RLM_L2] = true;
	in.bw[RLM_L2] = 1e9, in.has_bw[RLM_L2] = true;
	in.time_s = 10;
	assert_int_equal(roofline_math_point(&in, &pt), 0);
	assert_int_equal(pt.bound_level, RLM_L2);
	assert_close(pt.roof_gflops[RLM_L2], 1);
	assert_close(pt.pct_of_roof[RLM_L1], 1);
	assert_int_equal(pt.verdict, RLM_BANDWIDTH_BOUND);
	in.time_s = 10.001;
	assert_int_equal(roofline_math_point(&in, &pt), 0);
	assert_int_equal(pt.verdict, RLM_LATENCY_BOUND);
	/* a level without bytes or without a ceiling takes no part */
	in.has_bw[RLM_L2] = false;
	in.bytes[RLM_DRAM] = 0, in.has_bytes[RLM_DRAM] = true;
	in.bw[RLM_DRAM] = 1, in.has_bw[RLM_DRAM] = true;
	assert_int_equal(roofline_math_point(&in, &pt), 0);
	assert_false(pt.level_ok[RLM_L2]);
	assert_false(pt.level_ok[RLM_DRAM]);
	assert_int_equal(pt.bound_level, RLM_COMPUTE);
	in.time_s = 0;
	assert_int_equal(roofline_math_point(&in, &pt), -EINVAL);
	assert_string_equal(roofline_math_level_name(RLM_DRAM), "dram");
	assert_string_equal(roofline_math_level_name(RLM_COMPUTE), "compute");
	assert_string_equal(roofline_math_verdict_name(RLM_LATENCY_BOUND), "latency-bound");
}

static void test_fma(void **state)
{
	double partial = roofline_math_partial_fma(6.7e12, 0.519);
	double f[3] = { 1, 1, 0 }, pk[3] = { 1, 3, 0 };

	(void)state;
	/* SC20 (GPP on V100): alpha 51.9 % -> (2 alpha + 1 - alpha) / 2 = 76 %
	 * of 6.7 TFLOP/s = 5.1 TFLOP/s */
	assert_close(partial / 6.7e12, 0.7595);
	assert_int_equal((long)(partial / 1e11 + 0.5), 51);
	assert_close(roofline_math_alpha(519, 400, 81), 0.519);
	assert_close(roofline_math_partial_fma(1, 0), 0.5); /* no FMA: half */
	assert_close(roofline_math_partial_fma(1, 1), 1);
	assert_true(isnan(roofline_math_alpha(0, 0, 0)));
	/* a mix at its peaks, one after the other: 2 / (1/1 + 1/3) */
	assert_close(roofline_math_mix_peak(f, pk, 3), 1.5);
	pk[0] = 0;
	assert_close(roofline_math_mix_peak(f, pk, 3), 0);
}

static void test_number(void **state)
{
	static const char *const bad[] = { "", "n/a", "12x", "inf", "nan", ".", "1..2",
					   "1e999", " 1", NULL };
	char buf[64];
	double d;

	(void)state;
	for (int i = 0; bad[i]; i++)
		assert_int_equal(roofline_math_number(bad[i], &d), -EINVAL);
	assert_int_equal(roofline_math_number("10485760000", &d), 0);
	assert_close(d, 10485760000.0);
	assert_int_equal(roofline_math_number("18446744073709551617", &d), 0);
	assert_close(d, 18446744073709551617.0);
	assert_int_equal(roofline_math_number("1.5e3", &d), 0);
	assert_close(d, 1500);
	/* the fast path gives strtod's result, bit for bit */
	srand(1);
	for (int i = 0; i < 200000; i++) {
		long long a = ((long long)rand() << 20) ^ rand();
		int scale = rand() % 8;

		snprintf(buf, sizeof(buf), "%lld.%0*d", a % 100000000000LL, scale ? scale : 1,
			 rand() % (scale ? (int)pow(10, scale) : 10));
		assert_int_equal(roofline_math_number(buf, &d), 0);
		if (d != strtod(buf, NULL))
			fail_msg("'%s': %.17g, strtod %.17g", buf, d, strtod(buf, NULL));
	}
}

/* ---- tensor datapaths of several parts --------------------------------------- */

/*
 * sm_80's fp16 is two counters (fp16 and fp32 accumulators): the datapath is
 * their sum, each times its own factor; present only when both are.  The
 * values are made up: no such GPU here.
 */
static void test_parts(void **state)
{
	static const char text[] =
		"80\tsm__ops_path_tensor_src_fp16_dst_fp16.sum\ttensor_fp16\t1\textra\n"
		"80\tsm__ops_path_tensor_src_fp16_dst_fp32.sum\ttensor_fp16\t2\textra\n"
		"80\tsm__ops_path_tensor_src_bf16_dst_fp32.sum\ttensor_bf16\t1\tdefault\n"
		"80\tsm__inst_executed_pipe_tensor.sum\ttensor_inst\t1\tdefault\n"
		"*\tsm__sass_thread_inst_executed_op_hfma_pred_on.sum\tflop_hp_fma\t2\tdefault\n";
	char err[NCU_TABLE_ERRLEN], *buf = strdup(text), list[64];
	struct rlm_arch a = { 0 };
	struct rlm_sample smp = { 0 };
	struct ncu_table *t;
	struct rlm_inv iv;
	struct rl_field f[] = {
		{ "sm__ops_path_tensor_src_fp16_dst_fp16.sum", "1000" },
		{ "sm__ops_path_tensor_src_fp16_dst_fp32.sum", "300" },
		{ "sm__inst_executed_pipe_tensor.sum", "64" },
		{ "sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "1024" },
		{ "missing", "" }, { NULL, NULL },
	};

	(void)state;
	assert_int_equal(ncu_table_parse(buf, strlen(buf), "m.tsv", &t, err, sizeof(err)), 0);
	assert_int_equal(roofline_math_arch_init(&a, t, "80"), 0);
	assert_int_equal(a.n_parts, 1);
	assert_int_equal(roofline_math_read(&a, f, &iv), 0);
	assert_true(iv.present & (1u << RLM_TC_FP16));
	assert_true(iv.v[RLM_TC_FP16] == 1000 + 2 * 300);
	/* bf16 absent: not collected, not missing, whatever its set */
	assert_false(iv.present & (1u << RLM_TC_BF16));
	assert_false(roofline_math_is_missing(&a, &iv, RLM_TC_BF16));
	roofline_math_sample_add(&smp, &a, &iv, false);
	assert_int_equal(roofline_math_uncounted(&a, &smp, list, sizeof(list)), 1);
	assert_string_equal(list, "bf16");
	/* 64 tensor-pipe instructions, 1024 HFMA = 32 HFMA2.MMA moves: 32 MMA */
	assert_true(roofline_math_mma_inst(&a, &smp) == 64 - 1024 / 32);
	/* one part absent: the datapath is not there */
	f[1].key = "other__metric.sum";
	assert_int_equal(roofline_math_read(&a, f, &iv), 0);
	assert_false(iv.present & (1u << RLM_TC_FP16));
	/* one part listed missing: the datapath is missing */
	f[1].key = "sm__ops_path_tensor_src_fp16_dst_fp32.sum";
	f[4].value = "sm__ops_path_tensor_src_fp16_dst_fp32.sum";
	assert_int_equal(roofline_math_read(&a, f, &iv), 0);
	assert_false(iv.present & (1u << RLM_TC_FP16));
	assert_true(roofline_math_is_missing(&a, &iv, RLM_TC_FP16));
	/* n/a in a part: missing too */
	f[4].value = "";
	f[0].value = "n/a";
	assert_int_equal(roofline_math_read(&a, f, &iv), 0);
	assert_true(roofline_math_is_missing(&a, &iv, RLM_TC_FP16));
	roofline_math_arch_release(&a);
	ncu_table_free(t);
}

/* ---- kernels and ceilings --------------------------------------------------- */

static void test_kernels(void **state)
{
	struct rlm_kernels t = { 0 };
	struct rlm_arch a = { .arch = "90" };
	struct rlm_inv iv = { 0 };
	char name[32];

	(void)state;
	iv.id[RLM_ID_GPU_INDEX] = "0";
	iv.id[RLM_ID_GPU_NAME] = "H100";
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "k%d", i);
		iv.id[RLM_ID_KERNEL] = name;
		assert_non_null(roofline_math_kernel(&t, &a, &iv, "n1", true));
	}
	assert_int_equal(t.n, 1000);
	iv.id[RLM_ID_KERNEL] = "k417";
	assert_int_equal(roofline_math_kernel(&t, &a, &iv, "n1", false)->index, 417);
	assert_string_equal(t.v[417]->kernel, "k417");
	assert_string_equal(t.v[417]->node, "n1");
	assert_string_equal(t.v[417]->gpu_uuid, "");
	/* another node or GPU is another kernel */
	assert_null(roofline_math_kernel(&t, &a, &iv, "n2", false));
	iv.id[RLM_ID_GPU_INDEX] = "1";
	assert_null(roofline_math_kernel(&t, &a, &iv, "n1", false));
	roofline_math_kernels_release(&t);
}

static int add(struct rlm_gpus *gs, const char *node, const char *uuid,
	       const char *index, const char *name, const char *method,
	       const char *value)
{
	const struct rl_field f[] = {
		{ "gpu_index", index }, { "gpu_uuid", uuid }, { "gpu_name", "H100" },
		{ "method", method }, { "name", name }, { "value", value },
		{ "unit", "B/s" }, { NULL, NULL },
	};

	return roofline_math_add_ceiling(gs, node, f);
}

static void test_ceilings(void **state)
{
	struct rlm_gpus gs = { 0 };
	struct rlm_kernel k = { .node = "n1", .gpu_index = "0", .gpu_uuid = "",
				.gpu_name = "H100" };

	(void)state;
	assert_int_equal(add(&gs, "n1", "GPU-a", "0", "l2", "empirical", "7e12"), 0);
	assert_int_equal(add(&gs, "n1", "GPU-a", "0", "l2", "empirical", "9e12"), 0);
	assert_int_equal(add(&gs, "n1", "GPU-a", "0", "l2", "theoretical", "1e13"), 0);
	assert_int_equal(add(&gs, "n2", "GPU-b", "0", "l2", "empirical", "6e12"), 0);
	assert_int_equal(add(&gs, "n3", "", "0", "l2", "empirical", "5e12"), 0);
	assert_int_equal(add(&gs, "n3", "", "0", "l1", "empirical", "n/a"), 0);
	assert_int_equal(add(&gs, "n3", "", "0", "l1", "empirical", "0"), 0);
	assert_int_equal(gs.n, 3);
	assert_int_equal(gs.n_records, 5);
	assert_int_equal(gs.n_ignored, 2);
	/* the first record of a ceiling wins */
	assert_close(roofline_math_ceiling(&gs.v[0], "l2", "empirical")->value, 7e12);
	assert_close(roofline_math_ceiling(&gs.v[0], "l2", "theoretical")->value, 1e13);
	assert_null(roofline_math_ceiling(&gs.v[0], "l1", "empirical"));
	/* the kernel's node and index; then uuid; then any node if allowed */
	assert_int_equal(roofline_math_match(&gs, &k, true), 0);
	k.node = "n3";
	assert_int_equal(roofline_math_match(&gs, &k, true), 2);
	k.node = "n9";
	assert_int_equal(roofline_math_match(&gs, &k, true), -1);
	assert_true(roofline_math_match(&gs, &k, false) >= 0);
	k.gpu_uuid = "GPU-b";
	assert_int_equal(roofline_math_match(&gs, &k, true), 1);
	/* another GPU of the same name (a second H100 of node n1): only
	 * without same_node */
	k.gpu_uuid = "GPU-z", k.node = "n1";
	assert_int_equal(roofline_math_match(&gs, &k, true), -1);
	assert_int_equal(roofline_math_match(&gs, &k, false), 0);
	k.gpu_uuid = "", k.node = "", k.gpu_name = "A100";
	assert_int_equal(roofline_math_match(&gs, &k, true), -1);
	roofline_math_gpus_release(&gs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_point),
		cmocka_unit_test(test_fma),
		cmocka_unit_test(test_number),
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_kernels),
		cmocka_unit_test(test_ceilings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
