/*
 * bench_compute.cu - FP64, FP32 and FP16 (half2) peaks, FMA and add-only.
 *
 * Each thread runs ILP independent chains x = fma(x, a, b) (or x = x + a,
 * x = x + b alternately for the no-FMA ceiling), UNROLL times per loop trip,
 * entirely in registers.  a and b are kernel arguments, so the compiler can
 * neither fold the chains nor, since the sum of every chain is stored at the
 * end, delete any of them.  The intrinsics (__fma_rn, __dadd_rn, ...) pin the
 * instruction: the SASS of these loops is DFMA/FFMA/HFMA2 (or DADD/FADD/HADD2)
 * plus one counter increment and one branch per UNROLL*ILP operations
 * (checked with cuobjdump -sass, see docs/ceilings.md).
 *
 * FLOP counted: FMA 2 per lane (4 per half2 lane), add 1 (2 per half2 lane).
 * FP64/FP32 results are checked bit for bit against a CPU replay of thread 0;
 * FP16 results are checked to be finite and non-zero.
 */
#include "ert_bench.h"

#include <cmath>
#include <cuda_fp16.h>

template <typename T> struct fp;

template <> struct fp<double> {
	static __device__ __forceinline__ double fma(double x, double a, double b)
	{
		return __fma_rn(x, a, b);
	}
	static __device__ __forceinline__ double add(double x, double a)
	{
		return __dadd_rn(x, a);
	}
	static __host__ __device__ double seed(unsigned tid, int j)
	{
		return 1.0 + (tid % 7) * 0.125 + j * 0.0625;
	}
	static const int flop_per_lane = 1;
};

template <> struct fp<float> {
	static __device__ __forceinline__ float fma(float x, float a, float b)
	{
		return __fmaf_rn(x, a, b);
	}
	static __device__ __forceinline__ float add(float x, float a)
	{
		return __fadd_rn(x, a);
	}
	static __host__ __device__ float seed(unsigned tid, int j)
	{
		return 1.0f + (tid % 7) * 0.125f + j * 0.0625f;
	}
	static const int flop_per_lane = 1;
};

template <> struct fp<__half2> {
	static __device__ __forceinline__ __half2 fma(__half2 x, __half2 a,
						      __half2 b)
	{
		return __hfma2(x, a, b);
	}
	static __device__ __forceinline__ __half2 add(__half2 x, __half2 a)
	{
		return __hadd2(x, a);
	}
	static __device__ __half2 seed(unsigned tid, int j)
	{
		return __floats2half2_rn(1.0f + (tid % 7) * 0.125f + j * 0.0625f,
					 1.5f - (tid % 5) * 0.0625f);
	}
	static const int flop_per_lane = 2;
};

template <typename T, int ILP, int UNROLL, bool FMA>
__global__ void __launch_bounds__(1024)
k_fp(T *out, int reps, T a, T b, unsigned long long *clk)
{
	const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
	T x[ILP];

	ert_clk_mark(clk, 0);
#pragma unroll
	for (int j = 0; j < ILP; j++)
		x[j] = fp<T>::seed(tid, j);
	for (int r = 0; r < reps; r++) {
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
#pragma unroll
			for (int j = 0; j < ILP; j++)
				x[j] = FMA ? fp<T>::fma(x[j], a, b)
					   : fp<T>::add(x[j], (u & 1) ? b : a);
		}
	}
	T s = x[0];
#pragma unroll
	for (int j = 1; j < ILP; j++)
		s = fp<T>::add(s, x[j]);
	out[tid] = s;
	ert_clk_mark(clk, 1);
}

/* CPU replay of thread tid's stored sum (double and float only). */
template <typename T>
static T replay(unsigned tid, int ilp, int unroll, bool fma, long reps, T a,
		T b)
{
	T s = 0;

	for (int j = 0; j < ilp; j++) {
		T x = fp<T>::seed(tid, j);

		for (long r = 0; r < reps; r++)
			for (int u = 0; u < unroll; u++)
				x = fma ? std::fma(x, a, b) : x + ((u & 1) ? b : a);
		s = j == 0 ? x : s + x;
	}
	return s;
}

template <typename T> static bool check_value(struct ert_gpu *g, long reps,
					      int ilp, int unroll, bool fma,
					      T a, T b);

template <> bool check_value<double>(struct ert_gpu *g, long reps, int ilp,
				     int unroll, bool fma, double a, double b)
{
	double got;

	CK(cudaMemcpy(&got, g->scratch, sizeof(got), cudaMemcpyDeviceToHost));
	return got == replay<double>(0, ilp, unroll, fma, reps, a, b);
}

template <> bool check_value<float>(struct ert_gpu *g, long reps, int ilp,
				    int unroll, bool fma, float a, float b)
{
	float got;

	CK(cudaMemcpy(&got, g->scratch, sizeof(got), cudaMemcpyDeviceToHost));
	return got == replay<float>(0, ilp, unroll, fma, reps, a, b);
}

template <> bool check_value<__half2>(struct ert_gpu *g, long, int, int, bool,
				      __half2, __half2)
{
	__half2 got;

	CK(cudaMemcpy(&got, g->scratch, sizeof(got), cudaMemcpyDeviceToHost));
	float lo = __low2float(got), hi = __high2float(got);
	return std::isfinite(lo) && std::isfinite(hi) && lo != 0 && hi != 0;
}

template <typename T, int ILP, int UNROLL, bool FMA>
static ert_cand make_cand(struct ert_gpu *g, int threads, T a, T b)
{
	int blocks = g->sm_count * (2048 / threads);
	ert_cand c;

	c.geometry = "grid=" + std::to_string(blocks) + "x1 block=" +
		     std::to_string(threads) + " ilp=" + std::to_string(ILP) +
		     " unroll=" + std::to_string(UNROLL);
	c.reps0 = 16;
	c.ws_bytes = 0;
	c.clocked = true;
	c.launch = [g, blocks, threads, a, b](long reps) {
		k_fp<T, ILP, UNROLL, FMA><<<blocks, threads, 0, g->stream>>>(
			(T *)g->scratch, (int)reps, a, b, g->clk);
		return (double)blocks * threads * reps * UNROLL * ILP *
		       fp<T>::flop_per_lane * (FMA ? 2 : 1);
	};
	c.check = [g, a, b](long reps) {
		return check_value<T>(g, reps, ILP, UNROLL, FMA, a, b);
	};
	return c;
}

template <typename T, bool FMA>
static void measure(struct ert_gpu *g, const char *name, T a, T b)
{
	std::vector<ert_cand> c;

	c.push_back(make_cand<T, 8, 64, FMA>(g, 256, a, b));
	c.push_back(make_cand<T, 8, 64, FMA>(g, 1024, a, b));
	c.push_back(make_cand<T, 4, 128, FMA>(g, 512, a, b));
	if (!g->opts->quick) {
		c.push_back(make_cand<T, 8, 64, FMA>(g, 512, a, b));
		c.push_back(make_cand<T, 4, 128, FMA>(g, 256, a, b));
		c.push_back(make_cand<T, 4, 128, FMA>(g, 1024, a, b));
	}
	ert_measure(g, name, "compute", "FLOP/s", c);
}

void ert_bench_compute(struct ert_gpu *g)
{
	/* x -> x*a + b converges to b/(1-a) = 1: values stay normal */
	if (g->opts->groups & ERT_G_FP64) {
		measure<double, true>(g, "fp64_fma", 0.999, 0.001);
		measure<double, false>(g, "fp64_add", 0.001, -0.000999);
	}
	if (g->opts->groups & ERT_G_FP32) {
		measure<float, true>(g, "fp32_fma", 0.999f, 0.001f);
		measure<float, false>(g, "fp32_add", 0.001f, -0.000999f);
	}
	if (g->opts->groups & ERT_G_FP16) {
		measure<__half2, true>(g, "fp16_fma",
				       __floats2half2_rn(0.999f, 0.998f),
				       __floats2half2_rn(0.001f, 0.002f));
		measure<__half2, false>(g, "fp16_add",
					__floats2half2_rn(0.001f, 0.002f),
					__floats2half2_rn(-0.000999f, -0.002f));
	}
}
