/*
 * bench_mem.h - what the bandwidth parts of ert-bench share (CUDA C++):
 * the device buffers, the value hash they are filled with, the sinks that
 * keep loads alive, the L2-only load, and the geometry helpers.
 *
 *   bench_memory.cu  allocation, L1, shared memory, the working-set sweep
 *                    and the L2 ceiling measured inside its plateau
 *   bench_hbm.cu     HBM triad, read and write
 *
 * Everything here is inline or a template; nothing is visible outside the
 * program.
 */
#ifndef ERT_BENCH_MEM_H
#define ERT_BENCH_MEM_H

#include "ert_bench.h"

#include <algorithm>
#include <cstdint>
#include <string>

/*
 * The three HBM-sized arrays.  Each holds n 16-byte vectors and is allocated
 * with SLACK_VEC more (room for the triad's offset candidates); all three
 * are filled with hashf(4*i + k, seed) for seeds 1 (a), 2 (b), 3 (c).
 */
struct bufs {
	float4 *a, *b, *c;
	size_t n;
};

/* Room after each HBM array for the triad's offset candidates: 4 MiB. */
static const size_t SLACK_VEC = (4u << 20) / 16;

/* A value in [0.5, 1.5) from an index and a seed: buffers are never zero. */
__host__ __device__ inline float hashf(size_t i, uint32_t seed)
{
	uint32_t h = (uint32_t)i * 2654435761u ^ seed ^ (uint32_t)(i >> 32);

	h ^= h >> 15;
	h *= 2246822519u;
	h ^= h >> 13;
	return 0.5f + (float)(h & 0xffffff) * (1.0f / 16777216.0f);
}

#ifdef __CUDACC__
__device__ __forceinline__ void acc4(float4 &a, const float4 &v)
{
	a.x += v.x;
	a.y += v.y;
	a.z += v.z;
	a.w += v.w;
}

/* Store only under a condition that never holds: all values are > 0. */
__device__ __forceinline__ void sink(float *out, const float4 &a)
{
	if (a.x + a.y + a.z + a.w == -1.0f)
		out[blockIdx.x * blockDim.x + threadIdx.x] = a.x;
}

/* ld.global.cg: cached in the L2 only (SASS: LDG.E.128.STRONG.GPU). */
__device__ __forceinline__ float4 ld_cg(const float4 *p)
{
	float4 v;

	asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];"
		     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
		     : "l"(p));
	return v;
}
#endif

/* Resident blocks of `threads` per SM for kernel f (at least 1). */
template <typename F> static int resident(F f, int threads, size_t smem)
{
	int n = 0;

	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, threads, smem));
	return std::max(n, 1);
}

/* "grid=Bx1 block=T[ more]": the geometry text of a candidate. */
static inline std::string geo(long blocks, int threads, const std::string &more)
{
	return "grid=" + std::to_string(blocks) + "x1 block=" +
	       std::to_string(threads) + (more.empty() ? "" : " " + more);
}

/* bench_hbm.cu: hbm_triad, hbm_read and hbm_write over m. */
void ert_bench_hbm(struct ert_gpu *g, const bufs &m);

#endif /* ERT_BENCH_MEM_H */
