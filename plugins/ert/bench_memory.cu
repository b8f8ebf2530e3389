/*
 * bench_memory.cu - bandwidth: L1, shared memory, the ERT-style working-set
 * sweep from which the caller finds the L1, L2 and HBM plateaus, and the L2
 * ceiling measured at the sweep's fastest large sizes; it allocates the buffers
 * and hands the HBM figures to bench_hbm.cu.
 *
 * Bytes counted are the bytes the kernel asks for (16-byte vectors).  Every
 * buffer is filled with hashed values in [0.5, 1.5) before use.  Loads that
 * the loop repeats over the same addresses (L1, shared, sweep) are asm
 * volatile and offset by r*zero (see k_l1), so neither the compiler nor
 * ptxas can hoist or merge them; the sweep's L2 series takes the fastest of
 * a chunk kernel and grid-stride kernels at each size; every kernel sums
 * what it loads and stores the sum only under a condition that never holds
 * (the values are positive), so no load is dead code.
 *
 * The L2 ceiling: the best rate at which a large working set is read from
 * the L2.  The sweep's "cg" sizes in [L2 size / 16, L2 size] (sets too
 * large for the small-set effects of the sweep's first megabytes, and still
 * L2-resident) are ranked by their sweep rate; every grid-stride geometry at
 * each of the three fastest is a candidate, and the fastest is measured like
 * any other figure (warm-up, trials), so the `l2` ceiling line has a spread
 * over trials at one working set, not across sizes.  The L2's rate is not
 * flat over sizes (on the H100, 5.7 and 32 MiB read at 9.1-10.4 TB/s, 8-23
 * MiB at 8.0-8.2), and a roof must not be beaten by a kernel at any of them.
 * Its kernel launches are the sweep's (8 GiB each, about 1 ms), not
 * calibrated to target_ms: persistent one-block-per-SM grids read small
 * sets faster the longer a launch runs (on the H100, 5.7 MiB: 8.0-8.2 TB/s
 * in 1 ms launches, 8.8-8.9 in 9 ms, 9.2-9.4 in 85 ms; bench/l2-explore.cu,
 * docs/ceilings.md).  The fast sizes' rate varies from launch to launch
 * (single-launch trials: 3-4 % spread), so each timed launch of the figure
 * is a batch of L2_BATCH such launches between two events.  The caller
 * reports the range of the sweep's L2 plateau with it.  No size in that
 * range: no `l2` line (the caller then reports the plateau itself, as
 * before).
 */
#include "bench_mem.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

__global__ void k_fill(float4 *p, size_t n, uint32_t seed)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		p[i] = make_float4(hashf(4 * i, seed), hashf(4 * i + 1, seed),
				   hashf(4 * i + 2, seed), hashf(4 * i + 3, seed));
}

/* ---- L1, shared, sweep: repeated loads through inline PTX ---- */

__device__ __forceinline__ float4 ld_ca(const float4 *p)
{
	float4 v;

	asm volatile("ld.global.ca.v4.f32 {%0,%1,%2,%3}, [%4];"
		     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
		     : "l"(p));
	return v;
}

__device__ __forceinline__ float4 ld_na(const float4 *p)
{
	float4 v;

	asm volatile("ld.global.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];"
		     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
		     : "l"(p));
	return v;
}

__device__ __forceinline__ float4 ld_shared(uint32_t addr)
{
	float4 v;

	asm volatile("ld.shared.v4.f32 {%0,%1,%2,%3}, [%4];"
		     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
		     : "r"(addr));
	return v;
}

__device__ __forceinline__ float4 ld_nc(const float4 *p)
{
	float4 v;

	asm volatile("ld.global.nc.v4.f32 {%0,%1,%2,%3}, [%4];"
		     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
		     : "l"(p));
	return v;
}

/*
 * Every block re-reads the same NLOAD*blockDim vectors: an L1-resident set.
 * The address of repetition r is offset by r*zero, zero a kernel argument
 * that is 0 at run time: ptxas, which sees plain loads in a loop without
 * stores, would otherwise hoist them out of the loop (it did, in a first
 * version: the loop timed its FADDs, "488 B/clk/SM").  NC: ld.global.nc.
 */
template <int NLOAD, bool NC>
__global__ void k_l1(const float4 *buf, int reps, float *out, int zero)
{
	const float4 *p = buf + threadIdx.x;
	float4 acc = make_float4(0, 0, 0, 0);

	for (int r = 0; r < reps; r++) {
		const float4 *q = p + r * zero;
		float4 v[NLOAD];
#pragma unroll
		for (int k = 0; k < NLOAD; k++)
			v[k] = NC ? ld_nc(q + k * blockDim.x)
				  : ld_ca(q + k * blockDim.x);
#pragma unroll
		for (int k = 0; k < NLOAD; k++)
			acc4(acc, v[k]);
	}
	sink(out, acc);
}

/* The shared-memory twin of k_l1, with the same r*zero offset. */
template <int NLOAD>
__global__ void k_shared(const float4 *src, int reps, float *out, int zero)
{
	extern __shared__ float4 sm[];
	float4 acc = make_float4(0, 0, 0, 0);

	for (int k = 0; k < NLOAD; k++)
		sm[k * blockDim.x + threadIdx.x] = src[k * blockDim.x + threadIdx.x];
	__syncthreads();
	const uint32_t base =
		(uint32_t)__cvta_generic_to_shared(sm) + threadIdx.x * 16;
	const uint32_t step = blockDim.x * 16;

	for (int r = 0; r < reps; r++) {
		const uint32_t b = base + (uint32_t)(r * zero) * 16;
		float4 v[NLOAD];
#pragma unroll
		for (int k = 0; k < NLOAD; k++)
			v[k] = ld_shared(b + k * step);
#pragma unroll
		for (int k = 0; k < NLOAD; k++)
			acc4(acc, v[k]);
	}
	sink(out, acc);
}

/*
 * The sweep: block b reads chunk b % nchunks (chunk_vec vectors, a multiple
 * of blockDim) over and over, `loads` loads per thread in all (a multiple of
 * 8), so the working set is nchunks * chunk_vec * 16 bytes.  CG: ld.global.cg
 * (cached in L2 only); otherwise default caching (L1 too).
 */
template <bool CG>
__global__ void k_sweep(const float4 *buf, long chunk_vec, int nchunks,
			long loads, float *out)
{
	const float4 *p = buf + (long)(blockIdx.x % nchunks) * chunk_vec +
			  threadIdx.x;
	const int per_pass = (int)(chunk_vec / blockDim.x);
	const long step = blockDim.x;
	float4 acc = make_float4(0, 0, 0, 0);
	int k = 0;

	for (long f = 0; f < loads; f += 8) {
		float4 v[8];
#pragma unroll
		for (int u = 0; u < 8; u++) {
			v[u] = CG ? ld_cg(p + k * step) : ld_ca(p + k * step);
			k = k + 1 == per_pass ? 0 : k + 1;
		}
#pragma unroll
		for (int u = 0; u < 8; u++)
			acc4(acc, v[u]);
	}
	sink(out, acc);
}

/*
 * The sweep's grid-stride candidate: the whole grid reads the nvec vectors
 * of the working set as one array, thread t at t, t + T, t + 2T, ... (T the
 * threads of the grid) modulo nvec, UNR independent ld.global.cg in flight
 * per thread.  A warp reads 512 consecutive bytes; neighbouring warps and
 * blocks read the next ones, so each wave of loads covers T*16 contiguous
 * bytes spread over all L2 slices (no block re-reads a small chunk of its
 * own).  With `stagger`, block b starts b/gridDim of the way into the set
 * (warp-aligned), so that the blocks do not all begin at the same addresses.
 * `loads` is a multiple of UNR.  LD 0: ld.global.cg; 1:
 * ld.global.L1::no_allocate (weak loads that leave nothing in L1: in this
 * pattern an SM reads an address again only after the whole set).
 */
template <int UNR, int LD>
__global__ void k_sweep_gs(const float4 *buf, int nvec, long loads, float *out,
			   int stagger)
{
	const long T = (long)gridDim.x * blockDim.x;
	const int step = (int)(T % nvec);
	const long off = stagger ? (long)blockIdx.x * nvec / gridDim.x / 32 * 32 : 0;
	int i = (int)((blockIdx.x * (long)blockDim.x + threadIdx.x + off) % nvec);
	float4 acc = make_float4(0, 0, 0, 0);

	for (long f = 0; f < loads; f += UNR) {
		float4 v[UNR];
#pragma unroll
		for (int u = 0; u < UNR; u++) {
			v[u] = LD ? ld_na(buf + i) : ld_cg(buf + i);
			i += step;
			i = i >= nvec ? i - nvec : i;
		}
#pragma unroll
		for (int u = 0; u < UNR; u++)
			acc4(acc, v[u]);
	}
	sink(out, acc);
}

/* ---- host side ---- */

template <int NLOAD, bool NC>
static ert_cand l1_cand(struct ert_gpu *g, const bufs &m, int threads)
{
	CK(cudaFuncSetAttribute(k_l1<NLOAD, NC>,
				cudaFuncAttributePreferredSharedMemoryCarveout,
				(int)cudaSharedmemCarveoutMaxL1));
	int bl = g->sm_count * resident(k_l1<NLOAD, NC>, threads, 0);
	ert_cand c;

	c.geometry = geo(bl, threads, "loads=" + std::to_string(NLOAD) +
					      (NC ? " ld.global.nc" : " ld.global.ca"));
	c.reps0 = 64;
	c.ws_bytes = (long)NLOAD * threads * 16;
	c.launch = [g, m, bl, threads](long reps) {
		k_l1<NLOAD, NC><<<bl, threads, 0, g->stream>>>(m.b, (int)reps,
								g->scratch, 0);
		return 16.0 * NLOAD * threads * bl * reps;
	};
	return c;
}

template <int NLOAD>
static ert_cand shared_cand(struct ert_gpu *g, const bufs &m, int threads)
{
	size_t smem = (size_t)NLOAD * threads * 16;
	int bl = g->sm_count * resident(k_shared<NLOAD>, threads, smem);
	ert_cand c;

	c.geometry = geo(bl, threads, "loads=" + std::to_string(NLOAD) +
					      " smem=" + std::to_string(smem));
	c.reps0 = 64;
	c.ws_bytes = (long)(smem * bl);
	c.launch = [g, m, bl, threads, smem](long reps) {
		k_shared<NLOAD><<<bl, threads, smem, g->stream>>>(
			m.b, (int)reps, g->scratch, 0);
		return 16.0 * NLOAD * threads * bl * reps;
	};
	return c;
}

static void bench_l1_shared(struct ert_gpu *g, const bufs &m)
{
	if (g->opts->groups & ERT_G_L1) {
		std::vector<ert_cand> c;

		c.push_back(l1_cand<8, false>(g, m, 256));
		c.push_back(l1_cand<8, true>(g, m, 256));
		c.push_back(l1_cand<16, false>(g, m, 512));
		c.push_back(l1_cand<16, true>(g, m, 512));
		if (!g->opts->quick) {
			c.push_back(l1_cand<4, false>(g, m, 1024));
			c.push_back(l1_cand<4, true>(g, m, 1024));
			c.push_back(l1_cand<16, false>(g, m, 256));
		}
		ert_measure(g, "l1", "bandwidth", "B/s", c);
	}
	if (g->opts->groups & ERT_G_SHARED) {
		std::vector<ert_cand> c;

		c.push_back(shared_cand<8>(g, m, 256));
		c.push_back(shared_cand<4>(g, m, 512));
		c.push_back(shared_cand<8>(g, m, 128));
		if (!g->opts->quick) {
			c.push_back(shared_cand<4>(g, m, 256));
			c.push_back(shared_cand<2>(g, m, 1024));
		}
		ert_measure(g, "shared", "bandwidth", "B/s", c);
	}
}

/*
 * One grid-stride sweep candidate of `ws` bytes: bps blocks of `threads` per
 * SM (0: as many as are resident), UNR loads in flight per thread, LD as in
 * k_sweep_gs.
 */
template <int UNR, int LD>
static ert_cand sweep_gs_cand(struct ert_gpu *g, const bufs &m, long ws,
			      int threads, int bps = 0, int stagger = 0)
{
	const int bl = g->sm_count *
		       (bps ? bps : resident(k_sweep_gs<UNR, LD>, threads, 0));
	const int nvec = (int)(ws / 16);
	ert_cand c;

	/* about 8 GiB per launch, in multiples of UNR loads per thread */
	long loads = ((8L << 30) / (16L * bl * threads) + UNR - 1) / UNR * UNR;

	c.geometry = geo(bl, threads,
			 std::string(LD ? "ld.L1::no_allocate" : "ld.cg") +
				 " stride=grid unroll=" + std::to_string(UNR) +
				 (stagger ? " stagger" : ""));
	c.reps0 = loads;
	c.ws_bytes = ws;
	c.launch = [g, m, bl, threads, nvec, stagger](long n) {
		k_sweep_gs<UNR, LD><<<bl, threads, 0, g->stream>>>(
			m.b, nvec, n, g->scratch, stagger);
		return 16.0 * bl * threads * n;
	};
	return c;
}

/* The grid-stride candidates of one L2-sized working set. */
static void l2_cands(struct ert_gpu *g, const bufs &m, long ws,
		     std::vector<ert_cand> &c)
{
	c.push_back(sweep_gs_cand<2, 0>(g, m, ws, 1024));
	c.push_back(sweep_gs_cand<4, 0>(g, m, ws, 1024));
	c.push_back(sweep_gs_cand<8, 0>(g, m, ws, 256));
	c.push_back(sweep_gs_cand<2, 0>(g, m, ws, 1024, 1));
	c.push_back(sweep_gs_cand<4, 0>(g, m, ws, 512, 1));
	c.push_back(sweep_gs_cand<2, 1>(g, m, ws, 1024, 1));
	c.push_back(sweep_gs_cand<2, 0>(g, m, ws, 1024, 1, 1));
	c.push_back(sweep_gs_cand<4, 0>(g, m, ws, 512, 1, 1));
	c.push_back(sweep_gs_cand<2, 0>(g, m, ws, 1024, 0, 1));
	if (!g->opts->quick) {
		c.push_back(sweep_gs_cand<4, 0>(g, m, ws, 512));
		c.push_back(sweep_gs_cand<8, 0>(g, m, ws, 1024));
		c.push_back(sweep_gs_cand<16, 0>(g, m, ws, 256));
		c.push_back(sweep_gs_cand<2, 0>(g, m, ws, 512));
		c.push_back(sweep_gs_cand<1, 0>(g, m, ws, 1024));
		c.push_back(sweep_gs_cand<2, 0>(g, m, ws, 768, 1));
		c.push_back(sweep_gs_cand<8, 0>(g, m, ws, 512, 1));
		c.push_back(sweep_gs_cand<4, 1>(g, m, ws, 1024));
		c.push_back(sweep_gs_cand<1, 1>(g, m, ws, 1024, 1));
		c.push_back(sweep_gs_cand<2, 0>(g, m, ws, 768, 1, 1));
		c.push_back(sweep_gs_cand<1, 0>(g, m, ws, 1024, 1, 1));
	}
}

/* One sweep point of `ws` bytes (a multiple of threads*16). */
template <bool CG>
static ert_cand sweep_cand(struct ert_gpu *g, const bufs &m, long ws)
{
	const int threads = 256;
	const int bl = g->sm_count * resident(k_sweep<CG>, threads, 0);
	const long nvec = ws / 16;
	ert_cand c;

	/* chunks of k*threads vectors, k the fewest that need no more chunks
	 * than blocks: the working set stays within one chunk of ws */
	const long k = (nvec + (long)bl * threads - 1) / ((long)bl * threads);
	const long chunk = k * threads;
	const int nchunks = (int)std::max(1L, nvec / chunk);

	/* about 8 GiB per launch, in multiples of 8 loads per thread */
	long loads = ((8L << 30) / (16L * bl * threads) + 7) / 8 * 8;

	c.geometry = geo(bl, threads, std::string(CG ? "ld.cg" : "ld.ca") +
					      " chunks=" + std::to_string(nchunks));
	c.reps0 = loads;
	c.ws_bytes = chunk * nchunks * 16;
	c.launch = [g, m, bl, threads, chunk, nchunks](long n) {
		k_sweep<CG><<<bl, threads, 0, g->stream>>>(m.b, chunk, nchunks, n,
							    g->scratch);
		return 16.0 * bl * threads * n;
	};
	return c;
}

/*
 * The sweep; returns the "cg" series' points (size order) for the L2
 * ceiling.
 */
static std::vector<plateau_point> bench_sweep(struct ert_gpu *g, const bufs &m)
{
	/* sizes up to 1 GiB: the HBM plateau needs no more */
	const long max_ws = std::min((long)(m.n * 16), 1L << 30);
	std::vector<plateau_point> cg_pts;
	const long l1_guess = (long)g->sm_count * (long)g->smem_per_sm;
	std::vector<long> sizes;

	CK(cudaFuncSetAttribute(k_sweep<false>,
				cudaFuncAttributePreferredSharedMemoryCarveout,
				(int)cudaSharedmemCarveoutMaxL1));
	for (int k = 0;; k++) {
		long ws = (long)(16384.0 * std::pow(2.0, k / 2.0)) / 4096 * 4096;

		if (ws > max_ws)
			break;
		if (sizes.empty() || sizes.back() != ws)
			sizes.push_back(ws);
	}
	/*
	 * ca: one geometry (each block re-reads its own chunk, so L1 can hold
	 * it).  cg: that kernel and, for working sets up to the L2 size,
	 * grid-stride candidates; the fastest is measured at each size (the
	 * sweep line's geometry).  Above the L2 size the grid-stride pattern
	 * is left out: its cyclic sweep keeps part of a set larger than the
	 * L2 in it (8 TB/s at 64 MiB on the H100, whose L2 replacement is not
	 * LRU), a mix of L2 and HBM that belongs to neither plateau.
	 */
	for (int cg = 0; cg < 2; cg++)
		for (long ws : sizes) {
			std::vector<ert_cand> c;

			if (!cg) {
				c.push_back(sweep_cand<false>(g, m, ws));
			} else {
				c.push_back(sweep_cand<true>(g, m, ws));
				/* the same working set, however the chunks fell */
				ws = c[0].ws_bytes;
			}
			if (cg && ws <= (long)g->l2_bytes)
				l2_cands(g, m, ws, c);
			const char *guess =
				!cg && c[0].ws_bytes <= l1_guess ? "l1"
				: c[0].ws_bytes <= (long)g->l2_bytes ? "l2" : "hbm";

			plateau_point p = ert_sweep_best(g, cg ? "cg" : "ca", guess, c);

			if (cg)
				cg_pts.push_back(p);
		}
	return cg_pts;
}

/* Sweep launches per timed l2 launch (file comment). */
static const int L2_BATCH = 8;

/*
 * The L2 ceiling: the fastest large L2-resident read the sweep found, read
 * again with trials (file comment).  Candidates: every grid-stride geometry
 * at each of the three fastest "cg" sizes in [L2 size / 16, L2 size].
 */
static void bench_l2(struct ert_gpu *g, const bufs &m,
		     const std::vector<plateau_point> &pts)
{
	const double lo = (double)g->l2_bytes / 16, hi = (double)g->l2_bytes;
	std::vector<plateau_point> in;
	std::vector<ert_cand> c;

	for (const plateau_point &p : pts)
		if (p.ws >= lo && p.ws <= hi)
			in.push_back(p);
	if (in.empty()) {
		fprintf(stderr, "ert-bench: gpu %d: no sweep size in [L2/16, L2], "
			"no l2 ceiling\n", g->index);
		return;
	}
	std::sort(in.begin(), in.end(),
		  [](const plateau_point &x, const plateau_point &y) {
			  return x.value > y.value;
		  });
	for (size_t i = 0; i < in.size() && i < 3; i++)
		l2_cands(g, m, (long)in[i].ws, c);
	for (ert_cand &k : c) {
		std::function<double(long)> one = k.launch;

		/* a timed launch is a batch of L2_BATCH sweep launches */
		k.launch = [one](long reps) {
			double work = 0;

			for (int b = 0; b < L2_BATCH; b++)
				work += one(reps);
			return work;
		};
		k.geometry += " batch=" + std::to_string(L2_BATCH);
		k.fixed = true;
	}
	ert_measure(g, "l2", "bandwidth", "B/s", c);
}

void ert_bench_memory(struct ert_gpu *g)
{
	bufs m;
	size_t bytes = std::min((size_t)2 << 30, g->mem_bytes / 8);

	m.n = bytes / 16;
	CK(cudaMalloc(&m.a, (m.n + SLACK_VEC) * 16));
	CK(cudaMalloc(&m.b, (m.n + SLACK_VEC) * 16));
	CK(cudaMalloc(&m.c, (m.n + SLACK_VEC) * 16));
	k_fill<<<g->sm_count * 8, 256, 0, g->stream>>>(m.a, m.n + SLACK_VEC, 1);
	k_fill<<<g->sm_count * 8, 256, 0, g->stream>>>(m.b, m.n + SLACK_VEC, 2);
	k_fill<<<g->sm_count * 8, 256, 0, g->stream>>>(m.c, m.n + SLACK_VEC, 3);
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(g->stream));
	if (g->opts->groups & ERT_G_HBM)
		ert_bench_hbm(g, m);
	bench_l1_shared(g, m);
	if (g->opts->groups & ERT_G_L2)
		bench_l2(g, m, bench_sweep(g, m));
	CK(cudaFree(m.a));
	CK(cudaFree(m.b));
	CK(cudaFree(m.c));
}
