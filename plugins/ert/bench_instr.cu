/*
 * bench_instr.cu - the measured warp-instruction ceiling of the Instruction
 * Roofline (Ding and Williams, PMBS'19; docs/instruction-roofline.md).
 *
 * The theoretical rate is one warp instruction per scheduler per cycle: SMs
 * x 4 schedulers x clock on sm_70 and later.  This measures how close a
 * kernel gets: each thread runs ILP independent FP32 FMA chains (FFMA issues
 * from every scheduler each cycle on sm_80/sm_90: 128 FP32 lanes per SM =
 * 4 warps' worth), UNROLL times per loop trip, in registers, like the FP32
 * compute ceiling (bench_compute.cu), but counted in warp instructions: a
 * warp's trip is ILP x UNROLL FFMA plus the loop's own counter and branch
 * (2 more per trip, counted too: the figure is issued warp instructions, as
 * smsp__inst_executed counts them).  The chains are summed and stored, so
 * the compiler deletes none; thread 0's sum is checked against a CPU replay
 * bit for bit.
 *
 * Ceiling line: name inst_warp, kind instruction, unit inst/s (warp
 * instructions per second).  Opt-in group "inst" (not in the default set of
 * groups: the nightly ceilings stay as they were).
 */
#include "ert_bench.h"

#include <cmath>

/* Warp instructions per loop trip beside the FFMAs: the counter's add, the
 * compare and the branch (IADD3, ISETP, BRA).  docs/instruction-roofline.md
 * sets the count against smsp__inst_executed measured on the H100. */
#define INST_LOOP_OVERHEAD 3

template <int ILP, int UNROLL>
__global__ void __launch_bounds__(1024)
k_inst(float *out, int reps, float a, float b, unsigned long long *clk)
{
	const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
	float x[ILP];

	ert_clk_mark(clk, 0);
#pragma unroll
	for (int j = 0; j < ILP; j++)
		x[j] = 1.0f + (tid % 7) * 0.125f + j * 0.0625f;
	for (int r = 0; r < reps; r++) {
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
#pragma unroll
			for (int j = 0; j < ILP; j++)
				x[j] = __fmaf_rn(x[j], a, b);
		}
	}
	float s = x[0];
#pragma unroll
	for (int j = 1; j < ILP; j++)
		s = __fadd_rn(s, x[j]);
	out[tid] = s;
	ert_clk_mark(clk, 1);
}

static float replay0(int ilp, int unroll, long reps, float a, float b)
{
	float s = 0;

	for (int j = 0; j < ilp; j++) {
		float x = 1.0f + j * 0.0625f;

		for (long r = 0; r < reps; r++)
			for (int u = 0; u < unroll; u++)
				x = std::fma(x, a, b);
		s = j == 0 ? x : s + x;
	}
	return s;
}

template <int ILP, int UNROLL>
static ert_cand inst_cand(struct ert_gpu *g, int threads, float a, float b)
{
	int blocks = g->sm_count * (2048 / threads);
	ert_cand c;

	c.geometry = "grid=" + std::to_string(blocks) + "x1 block=" +
		     std::to_string(threads) + " ilp=" + std::to_string(ILP) +
		     " unroll=" + std::to_string(UNROLL);
	c.reps0 = 16;
	c.clocked = true;
	c.launch = [g, blocks, threads, a, b](long reps) {
		k_inst<ILP, UNROLL><<<blocks, threads, 0, g->stream>>>(
			g->scratch, (int)reps, a, b, g->clk);
		/* warp instructions of the timed loop (setup and the final
		 * sum are a few dozen per warp, left out) */
		return (double)blocks * (threads / 32) * reps *
		       (UNROLL * ILP + INST_LOOP_OVERHEAD);
	};
	c.check = [g, a, b](long reps) {
		float got;

		CK(cudaMemcpy(&got, g->scratch, sizeof(got), cudaMemcpyDeviceToHost));
		return got == replay0(ILP, UNROLL, reps, a, b);
	};
	return c;
}

void ert_bench_instr(struct ert_gpu *g)
{
	std::vector<ert_cand> c;
	float a = 0.999f, b = 0.001f; /* x -> 1: values stay normal */

	c.push_back(inst_cand<8, 64>(g, 256, a, b));
	c.push_back(inst_cand<8, 64>(g, 1024, a, b));
	c.push_back(inst_cand<4, 128>(g, 512, a, b));
	if (!g->opts->quick) {
		c.push_back(inst_cand<8, 64>(g, 512, a, b));
		c.push_back(inst_cand<4, 128>(g, 256, a, b));
	}
	ert_measure(g, "inst_warp", "instruction", "inst/s", c);
}
