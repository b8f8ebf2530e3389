/*
 * bench_hbm.cu - HBM bandwidth: triad a[i] = b[i] + s*c[i], read-only and
 * write-only, each the fastest of a set of kernels and launch geometries
 * (the geometry of the winner is printed with its figure).
 *
 * Bytes counted are the bytes the kernel asks for: the triad 3 x the element
 * size per element (no write-allocate read: full 32-byte sector writes need
 * none), read and write 1 x.  The arrays (struct bufs) are far larger than
 * any L2: 2 GiB each where the device has 16 GiB or more; candidates use all
 * of each array or its first half.
 *
 * Two kernel shapes, both geometry candidates:
 *  - grid-stride ("stride=grid"): persistent blocks, as many as are
 *    resident, walk the arrays together, UNR 16-byte accesses in flight per
 *    thread and array; cache hints streaming (ld.cs/st.cs), default or
 *    L2::256B prefetch; for the triad also separate load and store hints,
 *    contiguous per-block slices and the arrays shifted against each other.
 *  - flat ("stride=none"): one launch covers the array once, UNR elements
 *    per thread (blockDim apart), elements of 8 bytes (double, as BabelStream
 *    does) or 16 (float4); a candidate's launch enqueues `reps` such
 *    launches back to back.
 * Loaded values are summed and the sum stored only under a condition that
 * never holds (sink()), so no load is dead code.  The triad's output is
 * checked: grid-stride against the host's hash of b and c, flat against
 * b and c read back from the device.
 */
#include "bench_mem.h"

#include <cmath>

/* ---- grid-stride kernels ---- */

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

__device__ __forceinline__ float4 fma4(float s, const float4 &y,
					const float4 &x)
{
	return make_float4(fmaf(s, y.x, x.x), fmaf(s, y.y, x.y),
			   fmaf(s, y.z, x.z), fmaf(s, y.w, x.w));
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
				st_hbm<SH>(a + i + u * stride, fma4(s, y[u], x[u]));
		}
		for (; i < end; i += stride)
			st_hbm<SH>(a + i, fma4(s, ld_hbm<LH>(c + i), ld_hbm<LH>(b + i)));
	}
}

/* ---- flat kernels: one pass per launch, UNR elements per thread ---- */

/* V is double or float4; H 0 streaming (ld.cs/st.cs), 1 default. */
template <typename V, int H> __device__ __forceinline__ V ldv(const V *p)
{
	return H == 0 ? __ldcs(p) : *p;
}

template <typename V, int H> __device__ __forceinline__ void stv(V *p, V v)
{
	if (H == 0)
		__stcs(p, v);
	else
		*p = v;
}

__device__ __forceinline__ double vtriad(double s, double y, double x)
{
	return fma(s, y, x);
}

__device__ __forceinline__ float4 vtriad(double s, const float4 &y,
					 const float4 &x)
{
	return fma4((float)s, y, x);
}

__device__ __forceinline__ float vsum(double v) { return (float)v; }
__device__ __forceinline__ float vsum(const float4 &v)
{
	return v.x + v.y + v.z + v.w;
}

__device__ __forceinline__ void vmake(size_t i, double s, double *v)
{
	*v = s * (double)(i & 1023) + 1.0;
}

__device__ __forceinline__ void vmake(size_t i, double s, float4 *v)
{
	float x = (float)s * (float)(i & 1023) + 1.0f;

	*v = make_float4(x, x + 1, x + 2, x + 3);
}

/* The first element of this thread: block b covers [b*UNR*T, (b+1)*UNR*T). */
__device__ __forceinline__ size_t flat_i0(int unr)
{
	return (size_t)blockIdx.x * blockDim.x * unr + threadIdx.x;
}

template <typename V, int UNR, int LH, int SH>
__global__ void k_triad_flat(V *__restrict__ a, const V *__restrict__ b,
			     const V *__restrict__ c, size_t n, double s)
{
	const size_t i0 = flat_i0(UNR);
	V x[UNR], y[UNR];

#pragma unroll
	for (int u = 0; u < UNR; u++)
		if (i0 + u * blockDim.x < n) {
			x[u] = ldv<V, LH>(b + i0 + u * blockDim.x);
			y[u] = ldv<V, LH>(c + i0 + u * blockDim.x);
		}
#pragma unroll
	for (int u = 0; u < UNR; u++)
		if (i0 + u * blockDim.x < n)
			stv<V, SH>(a + i0 + u * blockDim.x, vtriad(s, y[u], x[u]));
}

template <typename V, int UNR, int H>
__global__ void k_read_flat(const V *__restrict__ a, size_t n, float *out)
{
	const size_t i0 = flat_i0(UNR);
	float acc = 0;

#pragma unroll
	for (int u = 0; u < UNR; u++)
		if (i0 + u * blockDim.x < n)
			acc += vsum(ldv<V, H>(a + i0 + u * blockDim.x));
	if (acc == -1.0f)
		out[blockIdx.x % 4096 * blockDim.x + threadIdx.x] = acc;
}

template <typename V, int UNR, int H>
__global__ void k_write_flat(V *__restrict__ a, size_t n, double s)
{
	const size_t i0 = flat_i0(UNR);

#pragma unroll
	for (int u = 0; u < UNR; u++)
		if (i0 + u * blockDim.x < n) {
			V v;

			vmake(i0 + u * blockDim.x, s, &v);
			stv<V, H>(a + i0 + u * blockDim.x, v);
		}
}

/* ---- host side ---- */

static const char *hint_name[] = {"cs", "default", "L2::256B"};

static std::string hints(int lh, int sh)
{
	return lh == sh ? std::string(hint_name[lh])
			: std::string("ld.") + hint_name[lh] + "+st." + hint_name[sh];
}

static std::string array_text(size_t vec16)
{
	return " array=" + std::to_string((vec16 * 16) >> 20) + "MiB";
}

/* Element count of `vec16` 16-byte vectors in elements of V. */
template <typename V> static size_t elems(size_t vec16)
{
	return vec16 * 16 / sizeof(V);
}

template <typename V> static const char *elem_name()
{
	return sizeof(V) == 8 ? "elem=8B" : "elem=16B";
}

/* A flat (one element per thread and unroll step) candidate's grid over
 * `vec16` vectors of V, and its geometry text with `hint` (the hint word). */
template <typename V, int UNR> static long flat_blocks(int threads, size_t vec16)
{
	const long per_block = (long)threads * UNR;

	return ((long)elems<V>(vec16) + per_block - 1) / per_block;
}

template <typename V, int UNR>
static std::string flat_geometry(long bl, int threads, const std::string &hint,
				 size_t vec16)
{
	return geo(bl, threads, std::string("stride=none unroll=") +
					std::to_string(UNR) + " " + elem_name<V>() +
					" hint=" + hint + array_text(vec16));
}

/*
 * Check a triad's output at a few places: a = b + s*c, with b and c read
 * back from the device (nb: elements of V; s as the kernel used it).
 */
template <typename V>
static bool check_triad_readback(const V *a, const V *b, const V *c, size_t n,
				 double s)
{
	const size_t idx[4] = {0, n / 3, n / 2 + 7, n - 1};
	const int k = sizeof(V) / sizeof(float) == 4 ? 4 : 1;

	for (size_t i : idx) {
		V va, vb, vc;

		CK(cudaMemcpy(&va, a + i, sizeof(V), cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(&vb, b + i, sizeof(V), cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(&vc, c + i, sizeof(V), cudaMemcpyDeviceToHost));
		if (k == 1) {
			double got, x, y;

			memcpy(&got, &va, 8);
			memcpy(&x, &vb, 8);
			memcpy(&y, &vc, 8);
			if (!(std::fabs(got - std::fma(s, y, x)) <=
			      1e-12 * std::fabs(got)))
				return false;
		} else {
			float got[4], x[4], y[4];

			memcpy(got, &va, 16);
			memcpy(x, &vb, 16);
			memcpy(y, &vc, 16);
			for (int j = 0; j < 4; j++)
				if (!(std::fabs(got[j] - std::fma((float)s, y[j], x[j])) <=
				      1e-6f * std::fabs(got[j])))
					return false;
		}
	}
	return true;
}

/* One flat triad candidate over the first `vec16` vectors of each array. */
template <typename V, int UNR, int LH, int SH>
static ert_cand triad_flat_cand(struct ert_gpu *g, const bufs &m, int threads,
				size_t vec16)
{
	const size_t n = elems<V>(vec16);
	const long bl = flat_blocks<V, UNR>(threads, vec16);
	V *a = (V *)m.a;
	const V *b = (const V *)m.b, *c3 = (const V *)m.c;
	ert_cand c;

	c.geometry = flat_geometry<V, UNR>(bl, threads, hints(LH, SH), vec16);
	c.ws_bytes = (long)(3 * vec16 * 16);
	c.launch = [g, a, b, c3, bl, threads, n](long reps) {
		for (long r = 0; r < reps; r++)
			k_triad_flat<V, UNR, LH, SH><<<bl, threads, 0, g->stream>>>(
				a, b, c3, n, 0.75);
		return 3.0 * sizeof(V) * n * reps;
	};
	c.check = [a, b, c3, n](long) {
		return check_triad_readback<V>(a, b, c3, n, 0.75);
	};
	return c;
}

template <typename V, int UNR, int H>
static ert_cand read_flat_cand(struct ert_gpu *g, const bufs &m, int threads,
			       size_t vec16)
{
	const size_t n = elems<V>(vec16);
	const long bl = flat_blocks<V, UNR>(threads, vec16);
	const V *b = (const V *)m.b;
	ert_cand c;

	c.geometry = flat_geometry<V, UNR>(bl, threads, hint_name[H], vec16);
	c.ws_bytes = (long)(vec16 * 16);
	c.launch = [g, b, bl, threads, n](long reps) {
		for (long r = 0; r < reps; r++)
			k_read_flat<V, UNR, H><<<bl, threads, 0, g->stream>>>(
				b, n, g->scratch);
		return (double)sizeof(V) * n * reps;
	};
	return c;
}

template <typename V, int UNR, int H>
static ert_cand write_flat_cand(struct ert_gpu *g, const bufs &m, int threads,
				size_t vec16)
{
	const size_t n = elems<V>(vec16);
	const long bl = flat_blocks<V, UNR>(threads, vec16);
	V *a = (V *)m.a;
	ert_cand c;

	c.geometry = flat_geometry<V, UNR>(bl, threads, hint_name[H], vec16);
	c.ws_bytes = (long)(vec16 * 16);
	c.launch = [g, a, bl, threads, n](long reps) {
		for (long r = 0; r < reps; r++)
			k_write_flat<V, UNR, H><<<bl, threads, 0, g->stream>>>(
				a, n, 0.5);
		return (double)sizeof(V) * n * reps;
	};
	return c;
}

/*
 * One grid-stride triad candidate over the first `vec16` vectors:
 * a+oa = (b+ob) + 0.75 (c+oc), offsets in vectors (< SLACK_VEC), so that
 * the three streams start at different places inside the DRAM pages and
 * channels.
 */
template <int UNR, int LH, int SH, bool SLICE>
static ert_cand triad_cand(struct ert_gpu *g, const bufs &m, int threads,
			   size_t vec16, size_t oa = 0, size_t ob = 0,
			   size_t oc = 0)
{
	const size_t n = vec16;
	float4 *a = m.a + oa;
	const float4 *b = m.b + ob, *c3 = m.c + oc;
	int bl = g->sm_count * resident(k_triad<UNR, LH, SH, SLICE>, threads, 0);
	ert_cand c;
	std::string more = "stride=grid unroll=" + std::to_string(UNR) +
			   " hint=" + hints(LH, SH) + array_text(vec16);

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

/* Grid-stride read and write candidates over the first `vec16` vectors. */
template <int UNR, int H>
static void rw_cands(struct ert_gpu *g, const bufs &m, int threads,
		     size_t vec16, std::vector<ert_cand> &rd,
		     std::vector<ert_cand> &wr)
{
	const size_t n = vec16;
	const std::string more = "stride=grid unroll=" + std::to_string(UNR) +
				 " hint=" + hint_name[H] + array_text(vec16);
	int bl;
	ert_cand c;

	bl = g->sm_count * resident(k_read<UNR, H>, threads, 0);
	c.geometry = geo(bl, threads, more);
	c.ws_bytes = (long)(n * 16);
	c.launch = [g, m, bl, threads, n](long reps) {
		k_read<UNR, H><<<bl, threads, 0, g->stream>>>(m.b, n, (int)reps,
							       g->scratch);
		return 16.0 * n * reps;
	};
	rd.push_back(c);
	if (H == 2)
		return; /* L2::256B is a load hint */
	bl = g->sm_count * resident(k_write<UNR, H>, threads, 0);
	c.geometry = geo(bl, threads, more);
	c.launch = [g, m, bl, threads, n](long reps) {
		k_write<UNR, H><<<bl, threads, 0, g->stream>>>(m.a, n, (int)reps,
								0.5f);
		return 16.0 * n * reps;
	};
	wr.push_back(c);
}

/* The flat candidates of all three figures over the first vec16 vectors. */
template <typename V, int UNR, int H>
static void flat_cands(struct ert_gpu *g, const bufs &m, int threads,
		       size_t vec16, std::vector<ert_cand> &rd,
		       std::vector<ert_cand> &wr, std::vector<ert_cand> &tr)
{
	rd.push_back(read_flat_cand<V, UNR, H>(g, m, threads, vec16));
	wr.push_back(write_flat_cand<V, UNR, H>(g, m, threads, vec16));
	tr.push_back(triad_flat_cand<V, UNR, H, H>(g, m, threads, vec16));
}

void ert_bench_hbm(struct ert_gpu *g, const bufs &m)
{
	std::vector<ert_cand> rd, wr, tr;
	const size_t all = m.n, half = m.n / 2;

	/* grid-stride, as before, over half of each array */
	rw_cands<4, 0>(g, m, 1024, half, rd, wr);
	rw_cands<4, 1>(g, m, 1024, half, rd, wr);
	rw_cands<4, 2>(g, m, 1024, half, rd, wr);
	tr.push_back(triad_cand<4, 0, 0, false>(g, m, 1024, half));
	tr.push_back(triad_cand<4, 1, 1, false>(g, m, 1024, half));
	tr.push_back(triad_cand<4, 1, 0, false>(g, m, 1024, all));
	/* flat: BabelStream's shape (8-byte elements, one per thread) and
	 * 16-byte ones, over the whole arrays */
	flat_cands<double, 1, 1>(g, m, 1024, all, rd, wr, tr);
	flat_cands<double, 1, 0>(g, m, 1024, all, rd, wr, tr);
	flat_cands<float4, 1, 1>(g, m, 1024, all, rd, wr, tr);
	flat_cands<float4, 1, 0>(g, m, 1024, all, rd, wr, tr);
	flat_cands<float4, 2, 0>(g, m, 256, all, rd, wr, tr);
	if (!g->opts->quick) {
		rw_cands<4, 0>(g, m, 256, half, rd, wr);
		rw_cands<2, 0>(g, m, 1024, half, rd, wr);
		rw_cands<8, 1>(g, m, 256, half, rd, wr);
		rw_cands<4, 0>(g, m, 1024, all, rd, wr);
		flat_cands<double, 1, 1>(g, m, 256, all, rd, wr, tr);
		flat_cands<double, 2, 1>(g, m, 512, all, rd, wr, tr);
		flat_cands<double, 1, 1>(g, m, 1024, half, rd, wr, tr);
		flat_cands<float4, 1, 1>(g, m, 512, all, rd, wr, tr);
		flat_cands<float4, 4, 0>(g, m, 128, all, rd, wr, tr);
		flat_cands<float4, 1, 0>(g, m, 1024, half, rd, wr, tr);
		tr.push_back(triad_flat_cand<float4, 1, 1, 0>(g, m, 1024, all));
		tr.push_back(triad_flat_cand<double, 1, 1, 0>(g, m, 1024, all));
		/* separate hints, slices and shifted arrays (8 KiB x odd, and
		 * 512-byte multiples that are not 4 KiB multiples) */
		tr.push_back(triad_cand<4, 0, 1, false>(g, m, 1024, half));
		tr.push_back(triad_cand<4, 1, 1, false>(g, m, 1024, half, 0,
							37 * 512, 71 * 512));
		tr.push_back(triad_cand<4, 1, 1, true>(g, m, 1024, half));
		tr.push_back(triad_cand<4, 2, 0, false>(g, m, 1024, half));
		tr.push_back(triad_cand<8, 1, 1, false>(g, m, 512, half));
		tr.push_back(triad_cand<2, 0, 0, false>(g, m, 1024, half));
	}
	ert_measure(g, "hbm_triad", "bandwidth", "B/s", tr);
	ert_measure(g, "hbm_read", "bandwidth", "B/s", rd);
	ert_measure(g, "hbm_write", "bandwidth", "B/s", wr);
}
