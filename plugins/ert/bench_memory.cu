/*
 * bench_memory.cu - bandwidth: HBM (triad, read, write), L1, shared memory,
 * and the ERT-style working-set sweep from which the caller finds the L1, L2
 * and HBM plateaus.
 *
 * Bytes counted are the bytes the kernel asks for (16-byte vectors): triad
 * a[i] = b[i] + s*c[i] counts 3 x 16 per element (no write-allocate read:
 * full 32-byte sector writes need none), read 16, write 16.  HBM arrays are
 * 1 GiB each (at most 1/8 of the device memory), 20x the H100's L2.  Every
 * buffer is filled with hashed values in [0.5, 1.5) before use.  Loads that
 * the loop repeats over the same addresses (L1, shared, sweep) are asm
 * volatile and offset by r*zero (see k_l1), so neither the compiler nor
 * ptxas can hoist or merge them; HBM kernels take a cache-hint variant
 * (streaming, default, L2::256B prefetch) as a geometry candidate, the triad
 * also separate load/store hints, contiguous per-block slices and the arrays
 * shifted against each other; the sweep's ld.global.cg series takes the
 * fastest of a chunk kernel and grid-stride kernels at each size; every kernel
 * sums what it loads and stores the sum only under a condition that never
 * holds (the values are positive), so no load is dead code.  The triad's
 * output is checked against the host.
 */
#include "ert_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

__host__ __device__ inline float hashf(size_t i, uint32_t seed)
{
	uint32_t h = (uint32_t)i * 2654435761u ^ seed ^ (uint32_t)(i >> 32);

	h ^= h >> 15;
	h *= 2246822519u;
	h ^= h >> 13;
	return 0.5f + (float)(h & 0xffffff) * (1.0f / 16777216.0f);
}

__global__ void k_fill(float4 *p, size_t n, uint32_t seed)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		p[i] = make_float4(hashf(4 * i, seed), hashf(4 * i + 1, seed),
				   hashf(4 * i + 2, seed), hashf(4 * i + 3, seed));
}

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

/* ---- HBM ---- */

/*
 * Cache hints, a geometry candidate like any other: 0 streaming (ld.cs /
 * st.cs), 1 default, 2 loads with the L2::256B prefetch hint and default
 * stores.
 */
template <int H> __device__ __forceinline__ float4 ld_hbm(const float4 *p)
{
	float4 v;

	if (H == 0)
		return __ldcs(p);
	if (H == 1)
		return *p;
	asm volatile("ld.global.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
		     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
		     : "l"(p));
	return v;
}

template <int H> __device__ __forceinline__ void st_hbm(float4 *p, float4 v)
{
	if (H == 0)
		__stcs(p, v);
	else
		*p = v;
}

template <int UNR, int H>
__global__ void k_read(const float4 *__restrict__ a, size_t n, int reps,
		       float *out)
{
	const size_t stride = (size_t)gridDim.x * blockDim.x;
	const size_t i0 = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	float4 acc = make_float4(0, 0, 0, 0);

	for (int r = 0; r < reps; r++) {
		size_t i = i0;

		for (; i + (UNR - 1) * stride < n; i += UNR * stride) {
			float4 v[UNR];
#pragma unroll
			for (int u = 0; u < UNR; u++)
				v[u] = ld_hbm<H>(a + i + u * stride);
#pragma unroll
			for (int u = 0; u < UNR; u++)
				acc4(acc, v[u]);
		}
		for (; i < n; i += stride)
			acc4(acc, ld_hbm<H>(a + i));
	}
	sink(out, acc);
}

template <int UNR, int H>
__global__ void k_write(float4 *__restrict__ a, size_t n, int reps, float s)
{
	const size_t stride = (size_t)gridDim.x * blockDim.x;
	const size_t i0 = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	for (int r = 0; r < reps; r++) {
		size_t i = i0;

		for (; i + (UNR - 1) * stride < n; i += UNR * stride) {
#pragma unroll
			for (int u = 0; u < UNR; u++) {
				float x = s * (float)((i + u * stride) & 1023) + 1.0f;
				st_hbm<H>(a + i + u * stride,
					  make_float4(x, x + 1, x + 2, x + 3));
			}
		}
		for (; i < n; i += stride) {
			float x = s * (float)(i & 1023) + 1.0f;
			st_hbm<H>(a + i, make_float4(x, x + 1, x + 2, x + 3));
		}
	}
}

/*
 * Triad a[i] = b[i] + s*c[i].  LH: the loads' cache hint, SH: the stores'
 * (see ld_hbm/st_hbm).  SLICE false: grid-stride loop (the whole grid sweeps
 * the arrays together); true: persistent blocks, each with one contiguous
 * slice of n/gridDim elements that its threads walk blockDim at a time.
 */
template <int UNR, int LH, int SH, bool SLICE>
__global__ void k_triad(float4 *__restrict__ a, const float4 *__restrict__ b,
			const float4 *__restrict__ c, size_t n, int reps, float s)
{
	size_t stride, i0, end;

	if (SLICE) {
		const size_t per = (n + gridDim.x - 1) / gridDim.x;

		stride = blockDim.x;
		i0 = blockIdx.x * per + threadIdx.x;
		end = min(n, (blockIdx.x + 1) * per);
	} else {
		stride = (size_t)gridDim.x * blockDim.x;
		i0 = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
		end = n;
	}
	for (int r = 0; r < reps; r++) {
		size_t i = i0;

		for (; i + (UNR - 1) * stride < end; i += UNR * stride) {
			float4 x[UNR], y[UNR];
#pragma unroll
			for (int u = 0; u < UNR; u++) {
				x[u] = ld_hbm<LH>(b + i + u * stride);
				y[u] = ld_hbm<LH>(c + i + u * stride);
			}
#pragma unroll
			for (int u = 0; u < UNR; u++)
				st_hbm<SH>(a + i + u * stride,
					   make_float4(fmaf(s, y[u].x, x[u].x),
						       fmaf(s, y[u].y, x[u].y),
						       fmaf(s, y[u].z, x[u].z),
						       fmaf(s, y[u].w, x[u].w)));
		}
		for (; i < end; i += stride) {
			float4 x = ld_hbm<LH>(b + i), y = ld_hbm<LH>(c + i);
			st_hbm<SH>(a + i, make_float4(fmaf(s, y.x, x.x), fmaf(s, y.y, x.y),
						      fmaf(s, y.z, x.z), fmaf(s, y.w, x.w)));
		}
	}
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

__device__ __forceinline__ float4 ld_cg(const float4 *p)
{
	float4 v;

	asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];"
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
 * own).  `loads` is a multiple of UNR.
 */
template <int UNR>
__global__ void k_sweep_gs(const float4 *buf, int nvec, long loads, float *out)
{
	const long T = (long)gridDim.x * blockDim.x;
	const int step = (int)(T % nvec);
	int i = (int)((blockIdx.x * (long)blockDim.x + threadIdx.x) % nvec);
	float4 acc = make_float4(0, 0, 0, 0);

	for (long f = 0; f < loads; f += UNR) {
		float4 v[UNR];
#pragma unroll
		for (int u = 0; u < UNR; u++) {
			v[u] = ld_cg(buf + i);
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

/* bench_main.cu: ert_sweep_point over the fastest of several candidates */
void ert_sweep_best(struct ert_gpu *g, const char *series,
		    const char *level_guess, std::vector<ert_cand> &cands);

struct bufs {
	float4 *a, *b, *c;
	size_t n;    /* vectors per array (each allocated with SLACK_VEC more) */
};

/* Room after each HBM array for the triad's offset candidates: 4 MiB. */
static const size_t SLACK_VEC = (4u << 20) / 16;

/* Resident blocks of `threads` per SM for kernel f (at least 1). */
template <typename F> static int resident(F f, int threads, size_t smem)
{
	int n = 0;

	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, threads, smem));
	return std::max(n, 1);
}

static std::string geo(int blocks, int threads, const std::string &more)
{
	return "grid=" + std::to_string(blocks) + "x1 block=" +
	       std::to_string(threads) + (more.empty() ? "" : " " + more);
}

static const char *hint_name[] = {"cs", "default", "L2::256B"};

/*
 * One triad candidate: a+oa = (b+ob) + 0.75 (c+oc), offsets in vectors
 * (< SLACK_VEC): the three streams start at different places relative to
 * each other inside the DRAM pages and channels.
 */
template <int UNR, int LH, int SH, bool SLICE>
static ert_cand triad_cand(struct ert_gpu *g, const bufs &m, int threads,
			   size_t oa, size_t ob, size_t oc)
{
	const size_t n = m.n;
	float4 *a = m.a + oa;
	const float4 *b = m.b + ob, *c3 = m.c + oc;
	int bl = g->sm_count * resident(k_triad<UNR, LH, SH, SLICE>, threads, 0);
	ert_cand c;
	std::string more = "unroll=" + std::to_string(UNR) + " hint=" +
			   (LH == SH ? std::string(hint_name[LH])
				     : std::string("ld.") + hint_name[LH] + "+st." +
					       hint_name[SH]);

	if (SLICE)
		more += " slice";
	if (oa || ob || oc)
		more += " offsets=" + std::to_string(oa * 16) + "," +
			std::to_string(ob * 16) + "," + std::to_string(oc * 16);
	c.geometry = geo(bl, threads, more);
	c.ws_bytes = (long)(3 * n * 16);
	c.launch = [g, a, b, c3, bl, threads, n](long reps) {
		k_triad<UNR, LH, SH, SLICE><<<bl, threads, 0, g->stream>>>(
			a, b, c3, n, (int)reps, 0.75f);
		return 48.0 * n * reps;
	};
	c.check = [a, n, ob, oc](long) {
		/* a = b + 0.75 c at a few places, against the host's hash */
		size_t idx[4] = {0, n / 3, n / 2 + 7, n - 1};
		for (size_t i : idx) {
			float4 v;
			CK(cudaMemcpy(&v, a + i, sizeof(v), cudaMemcpyDeviceToHost));
			float want[4];
			for (int k = 0; k < 4; k++)
				want[k] = std::fma(0.75f, hashf(4 * (oc + i) + k, 3),
						   hashf(4 * (ob + i) + k, 2));
			if (std::fabs(v.x - want[0]) > 1e-6f * std::fabs(want[0]) ||
			    std::fabs(v.w - want[3]) > 1e-6f * std::fabs(want[3]))
				return false;
		}
		return true;
	};
	return c;
}

template <int UNR, int H>
static void hbm_cands(struct ert_gpu *g, const bufs &m, int threads,
		      std::vector<ert_cand> &rd, std::vector<ert_cand> &wr,
		      std::vector<ert_cand> &tr)
{
	const size_t n = m.n;
	const long ws = (long)(n * 16);
	const std::string more = "unroll=" + std::to_string(UNR) + " hint=" +
				 hint_name[H];
	int bl;
	ert_cand c;

	c.reps0 = 1;
	bl = g->sm_count * resident(k_read<UNR, H>, threads, 0);
	c.geometry = geo(bl, threads, more);
	c.ws_bytes = ws;
	c.launch = [g, m, bl, threads, n](long reps) {
		k_read<UNR, H><<<bl, threads, 0, g->stream>>>(m.b, n, (int)reps,
							       g->scratch);
		return 16.0 * n * reps;
	};
	rd.push_back(c);
	if (H != 2) {
		bl = g->sm_count * resident(k_write<UNR, H>, threads, 0);
		c.geometry = geo(bl, threads, more);
		c.launch = [g, m, bl, threads, n](long reps) {
			k_write<UNR, H><<<bl, threads, 0, g->stream>>>(
				m.a, n, (int)reps, 0.5f);
			return 16.0 * n * reps;
		};
		wr.push_back(c);
	}
	tr.push_back(triad_cand<UNR, H, H, false>(g, m, threads, 0, 0, 0));
}

static void bench_hbm(struct ert_gpu *g, const bufs &m)
{
	std::vector<ert_cand> rd, wr, tr;

	hbm_cands<4, 0>(g, m, 1024, rd, wr, tr);
	hbm_cands<4, 1>(g, m, 1024, rd, wr, tr);
	hbm_cands<4, 2>(g, m, 1024, rd, wr, tr);
	hbm_cands<4, 0>(g, m, 256, rd, wr, tr);
	if (!g->opts->quick) {
		hbm_cands<2, 0>(g, m, 1024, rd, wr, tr);
		hbm_cands<2, 1>(g, m, 512, rd, wr, tr);
		hbm_cands<8, 1>(g, m, 256, rd, wr, tr);
		hbm_cands<8, 2>(g, m, 256, rd, wr, tr);
	}
	/* separate load and store hints, contiguous slices per block, and
	 * the three arrays shifted against each other (8 KiB x odd, and
	 * 512-byte multiples that are not 4 KiB multiples) */
	if (!g->opts->quick) {
		tr.push_back(triad_cand<4, 0, 1, false>(g, m, 1024, 0, 0, 0));
		tr.push_back(triad_cand<4, 1, 0, false>(g, m, 1024, 0, 0, 0));
		tr.push_back(triad_cand<4, 1, 1, false>(g, m, 1024, 0, 37 * 512,
							71 * 512));
		tr.push_back(triad_cand<4, 1, 1, false>(g, m, 1024, 0, 1001 * 32,
							2003 * 32));
		tr.push_back(triad_cand<4, 1, 1, true>(g, m, 1024, 0, 0, 0));
		tr.push_back(triad_cand<4, 2, 0, false>(g, m, 1024, 0, 0, 0));
		tr.push_back(triad_cand<4, 0, 0, false>(g, m, 1024, 0, 37 * 512,
							71 * 512));
		tr.push_back(triad_cand<4, 1, 1, false>(g, m, 1024, 5 * 512,
							1001 * 32, 2003 * 32));
		tr.push_back(triad_cand<8, 1, 1, false>(g, m, 512, 0, 0, 0));
	}
	ert_measure(g, "hbm_triad", "bandwidth", "B/s", tr);
	ert_measure(g, "hbm_read", "bandwidth", "B/s", rd);
	ert_measure(g, "hbm_write", "bandwidth", "B/s", wr);
}

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

/* One grid-stride sweep candidate (ld.global.cg) of `ws` bytes. */
template <int UNR>
static ert_cand sweep_gs_cand(struct ert_gpu *g, const bufs &m, long ws,
			      int threads)
{
	const int bl = g->sm_count * resident(k_sweep_gs<UNR>, threads, 0);
	const int nvec = (int)(ws / 16);
	ert_cand c;

	/* about 8 GiB per launch, in multiples of UNR loads per thread */
	long loads = ((8L << 30) / (16L * bl * threads) + UNR - 1) / UNR * UNR;

	c.geometry = geo(bl, threads, "ld.cg stride=grid unroll=" +
					      std::to_string(UNR));
	c.reps0 = loads;
	c.ws_bytes = ws;
	c.launch = [g, m, bl, threads, nvec](long n) {
		k_sweep_gs<UNR><<<bl, threads, 0, g->stream>>>(m.b, nvec, n,
								g->scratch);
		return 16.0 * bl * threads * n;
	};
	return c;
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

static void bench_sweep(struct ert_gpu *g, const bufs &m)
{
	const long max_ws = (long)(m.n * 16);
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
			if (cg && ws <= (long)g->l2_bytes) {
				c.push_back(sweep_gs_cand<2>(g, m, ws, 1024));
				c.push_back(sweep_gs_cand<4>(g, m, ws, 1024));
				c.push_back(sweep_gs_cand<8>(g, m, ws, 256));
				if (!g->opts->quick) {
					c.push_back(sweep_gs_cand<4>(g, m, ws, 512));
					c.push_back(sweep_gs_cand<8>(g, m, ws, 1024));
					c.push_back(sweep_gs_cand<16>(g, m, ws, 256));
					c.push_back(sweep_gs_cand<2>(g, m, ws, 512));
					c.push_back(sweep_gs_cand<1>(g, m, ws, 1024));
				}
			}
			const char *guess =
				!cg && c[0].ws_bytes <= l1_guess ? "l1"
				: c[0].ws_bytes <= (long)g->l2_bytes ? "l2" : "hbm";

			ert_sweep_best(g, cg ? "cg" : "ca", guess, c);
		}
}

void ert_bench_memory(struct ert_gpu *g)
{
	bufs m;
	size_t bytes = std::min((size_t)1 << 30, g->mem_bytes / 8);

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
		bench_hbm(g, m);
	bench_l1_shared(g, m);
	if (g->opts->groups & ERT_G_L2)
		bench_sweep(g, m);
	CK(cudaFree(m.a));
	CK(cudaFree(m.b));
	CK(cudaFree(m.c));
}
