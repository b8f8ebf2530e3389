// gpp.cu - BerkeleyGW's General Plasmon Pole (GPP) kernel, the real code of
// the GTC 2019 Roofline talk (slides 57-65, "Code Example 1: GPP") and of the
// SC20 talk (seeds/sc20-roofline-gpp-berkeleygw-talk.md), written here from
// their description of its loops:
//
//   for band = 1, nbands          # O(1,000)
//     for igp = 1, ngpown         # O(10,000)
//       for ig = 1, ncouls        # O(100,000)
//         for iw = 1, nw          # small, <10
//           complex arithmetic, divs, sqrts...
//         reduction to arrays[iw]
//
// Each (band, igp, ig, iw) term is GPP's self-energy update (the flagOCC path
// of BerkeleyGW's Sigma): with wdiff = wx - wtilde, delw = wtilde / wdiff;
// when |wdiff| > 0.5 and |delw| < 2, sch = delw * I_eps and ssx = Omega2 /
// (wx^2 - wtilde^2); else, when |delw| > 1e-6, ssx = -Omega2 * delw /
// (4 wtilde^2 (delw + 1/2)); |ssx| above sexcut * |I_eps| at a negative
// frequency is cut; ssx and sch, times the band's matrix elements
// matngmatmgp = aqsn(band, ig) * conj(aqsm(band, igp)) * vcoul(igp) / 2, are
// summed over band, igp and ig into ssx[iw] and sch[iw].  All complex double.
// The inputs are made on the GPU from a hash of their index (no file, no
// host transfer), with magnitudes that send the terms down every branch.
//
// Kernels (one launch each; NW, the number of frequencies, is a template
// argument so that the iw loop unrolls, as in the talks):
//
//   gpp_v1<NW,S>  the GTC/SC20 baseline: band = blockIdx.x, igp = blockIdx.y,
//                 ig over the block's threads; complex divides (two real
//                 divisions each) and absolute values (square roots).  S is
//                 GTC's ig stride: the ig loop split in two, the blocking
//                 loop outside (ig = igs + S * thread), S = 1, 2, 4, 8
//   gpp_v2<NW>    v1, divides replaced by reciprocals (one 1/x per divide)
//   gpp_v3<NW>    v1, |a+bi| > c replaced by a^2+b^2 > c^2 (no square roots)
//   gpp_v4<NW>    both
//   gpp_v5<NW>    v4 with the loops reordered for arithmetic intensity: igp,
//                 ig over the grid, band inside each thread (wtilde and I_eps
//                 loaded once per thread instead of once per band)
//   gpp_v6<NW>    v5 with a register cap for occupancy (__launch_bounds__)
//   gpp_v7<NW>    v6 with cache blocking: the grid is ordered so that the
//                 blocks resident at one time share one ig tile of aqsn
//                 (nbands x 256 x 16 B), which then stays in L2
//   gpp_v8<NW>    v7 with the band arrays (conj(aqsm) vcoul / 2 and the band
//                 energies) in shared memory
//
// The SC20 list is v1 baseline, v2 "replace divides with reciprocals", v3
// "replace square roots with power of 2", v4 "replace divides and square
// roots", v5 "loop reordering to gain arithmetic intensity", v6 "further
// increase occupancy", v7 "cache blocking", v8 "cache more arrays in shared
// memory".
//
// Usage: gpp [--exp nw|stride|versions|all] [--nw N] [--only K] [--reps R] [--selftest]
//            [nbands nvband ncouls nodes_per_group]
//   default problem: 512 2 32768 20 (the talks' "medium" size; ngpown =
//   ncouls / nodes_per_group = 1638); default experiment: all.
//   --exp nw        gpp_v1<nw,1> for nw = 1..6            (GTC experiment 1)
//   --exp stride    gpp_v1<6,S> for S = 1, 2, 4, 8        (GTC experiment 3)
//   --exp versions  gpp_v1 .. gpp_v8 at nw = 3            (SC20)
//   --nw N          versions only: 1..6 (default 3)
//   --only K        versions only: run v1 and vK alone (vK checked against
//                   v1; a pipeline profiles vK with the ncu plugin's kernels)
//   --reps R        launches per kernel (the median time is printed)
//   --selftest      first, every kernel on a small problem against a CPU
//                   loop of the same terms
// Build it twice for GTC experiment 2: with FMA contraction (--fmad=true, the
// default; bin/gpp) and without (--fmad=false -DGPP_FMAD=0; bin/gpp_nofma).
//
// Check: every kernel's 4 x nw sums (ssx and sch, real and imaginary) are
// compared with the experiment's reference kernel (v1 at the same nw; for nw
// and stride the largest-nw / stride-1 launch, whose first nw frequencies are
// the same sums): |x - ref| <= 1e-9 x max |ref| of that quantity, summed in a
// different order by atomics.  Exit status 1 when one differs, or when the
// self-test's GPU sums differ from the CPU's by more than that.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#ifndef GPP_FMAD
#define GPP_FMAD 1
#endif

#define CK(call)                                                               \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "gpp: %s failed: %s (%s:%d)\n", #call,  \
				cudaGetErrorString(e_), __FILE__, __LINE__);   \
			exit(1);                                               \
		}                                                              \
	} while (0)

#define NW_MAX 6
#define NQ 4            // per frequency: ssx.re, ssx.im, sch.re, sch.im
#define THREADS 256     // threads per block, every kernel
#define V6_MIN_BLOCKS 3 // v6..v8: __launch_bounds__(256, 3): <= 80 registers, 24 warps per SM
#define TOLERANCE 1e-9

// GPP's constants (BerkeleyGW's limittwo = 0.5^2, sexcut = 4, TOL_Zero)
#define LIMIT_WDIFF 0.5   // |wdiff| above this ...
#define LIMIT_DELW 2.0    // ... and |delw| below this: the first branch
#define TOL_ZERO 1e-6     // |delw| above this: the second branch
#define SEXCUT 4.0
#define WX0 -1.0          // wx(band, iw) = e(band) + WX0 + DW * iw
#define DW 0.5

struct cplx {
	double re, im;
};

__host__ __device__ static inline cplx mk(double r, double i) { return { r, i }; }
__host__ __device__ static inline cplx add(cplx a, cplx b) { return { a.re + b.re, a.im + b.im }; }
__host__ __device__ static inline cplx mul(cplx a, cplx b)
{
	return { a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re };
}
__host__ __device__ static inline cplx scale(cplx a, double s) { return { a.re * s, a.im * s }; }
__host__ __device__ static inline cplx conj(cplx a) { return { a.re, -a.im }; }
__host__ __device__ static inline double norm(cplx a) { return a.re * a.re + a.im * a.im; }
__host__ __device__ static inline double cabs_(cplx a) { return sqrt(norm(a)); }

// a / b, the plain way: two real divisions.
__host__ __device__ static inline cplx cdiv(cplx a, cplx b)
{
	double n = norm(b);
	return { (a.re * b.re + a.im * b.im) / n, (a.im * b.re - a.re * b.im) / n };
}

// a / b through one reciprocal: a conj(b) (1 / |b|^2).
__host__ __device__ static inline cplx cdiv_rcp(cplx a, cplx b)
{
	return scale(mul(a, conj(b)), 1.0 / norm(b));
}

// The problem: sizes, the device arrays and where the sums go.
struct gpp_args {
	int nbands, nvband, ncouls, ngpown;
	const cplx *aqsm, *aqsn; // [nbands][ncouls]
	const cplx *eps, *wt;    // I_eps_array, wtilde_array: [ngpown][ncouls]
	const double *vcoul;     // [ncouls]
	const double *ekq;       // band energies [nbands]
	const int *inv_igp;      // [ngpown] -> ig index of igp
	double *out;             // [NW_MAX][NQ]
};

// ---- one term ----------------------------------------------------------------

// What does not depend on the frequency: wtilde^2, Omega2 = wtilde^2 I_eps,
// and the cut-off (sexcut |I_eps|, or its square).
struct gpp_g {
	cplx wt, wt2, eps, om2;
	double cut;
};

template <bool SQUARES>
__host__ __device__ static inline gpp_g gpp_g_of(cplx wt, cplx eps)
{
	gpp_g g;
	g.wt = wt;
	g.eps = eps;
	g.wt2 = mul(wt, wt);
	g.om2 = mul(g.wt2, eps);
	g.cut = SQUARES ? SEXCUT * SEXCUT * norm(eps) : SEXCUT * cabs_(eps);
	return g;
}

// The term of frequency wxt, times mat, added to ssx and sch.  RECIP:
// reciprocals instead of divides; SQUARES: squared magnitudes instead of
// absolute values.
template <bool RECIP, bool SQUARES>
__host__ __device__ static inline void gpp_term(double wxt, const gpp_g &g, cplx mat,
						cplx &ssx_acc, cplx &sch_acc)
{
	cplx wdiff = mk(wxt - g.wt.re, -g.wt.im);
	cplx delw = RECIP ? cdiv_rcp(g.wt, wdiff) : cdiv(g.wt, wdiff);
	bool first, second;
	if (SQUARES) {
		double d2 = norm(delw);
		first = norm(wdiff) > LIMIT_WDIFF * LIMIT_WDIFF && d2 < LIMIT_DELW * LIMIT_DELW;
		second = d2 > TOL_ZERO * TOL_ZERO;
	} else {
		double d = cabs_(delw);
		first = cabs_(wdiff) > LIMIT_WDIFF && d < LIMIT_DELW;
		second = d > TOL_ZERO;
	}
	cplx sch = mk(0, 0), ssx = mk(0, 0);
	if (first) {
		sch = mul(delw, g.eps);
		cplx cden = mk(wxt * wxt - g.wt2.re, -g.wt2.im);
		ssx = RECIP ? cdiv_rcp(g.om2, cden) : cdiv(g.om2, cden);
	} else if (second) {
		cplx cden = mul(scale(g.wt2, 4.0), mk(delw.re + 0.5, delw.im));
		cplx num = scale(mul(g.om2, delw), -1.0);
		ssx = RECIP ? cdiv_rcp(num, cden) : cdiv(num, cden);
	}
	bool cut = SQUARES ? norm(ssx) > g.cut : cabs_(ssx) > g.cut;
	if (cut && wxt < 0.0)
		ssx = mk(0, 0);
	ssx_acc = add(ssx_acc, mul(ssx, mat));
	sch_acc = add(sch_acc, mul(sch, mat));
}

// conj(aqsm(band, igp)) vcoul(igp) / 2: the band's factor of matngmatmgp.
__host__ __device__ static inline cplx gpp_band_factor(const gpp_args &a, int band, int igp)
{
	return scale(conj(a.aqsm[(size_t)band * a.ncouls + igp]), 0.5 * a.vcoul[igp]);
}

// ---- the reduction -------------------------------------------------------------

__device__ static inline double warp_sum(double v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	return v;
}

// Sum the block's NW x NQ partial sums (warp shuffles, then warp 0 over the
// warps' sums in shared memory) and add them to out with one atomic each.
template <int NW>
__device__ static inline void block_reduce(const cplx *ssx, const cplx *sch, double *out)
{
	__shared__ double part[THREADS / 32][NW * NQ];
	double v[NW * NQ];
#pragma unroll
	for (int w = 0; w < NW; w++) {
		v[w * NQ + 0] = ssx[w].re;
		v[w * NQ + 1] = ssx[w].im;
		v[w * NQ + 2] = sch[w].re;
		v[w * NQ + 3] = sch[w].im;
	}
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
	for (int i = 0; i < NW * NQ; i++) {
		double s = warp_sum(v[i]);
		if (lane == 0)
			part[warp][i] = s;
	}
	__syncthreads();
	if (warp == 0) {
#pragma unroll
		for (int i = 0; i < NW * NQ; i++) {
			double s = warp_sum(lane < (int)(blockDim.x >> 5) ? part[lane][i] : 0.0);
			if (lane == 0)
				atomicAdd(&out[i], s);
		}
	}
}

// ---- v1..v4: band and igp over the grid, ig over the threads -------------------

template <int NW, int S, bool RECIP, bool SQUARES>
__device__ static inline void gpp_band_igp(const gpp_args &a)
{
	const int band = blockIdx.x, my_igp = blockIdx.y;
	const int igp = a.inv_igp[my_igp];
	const cplx f = gpp_band_factor(a, band, igp);
	const double e = a.ekq[band];
	const cplx *aqsn = a.aqsn + (size_t)band * a.ncouls;
	const cplx *wt = a.wt + (size_t)my_igp * a.ncouls;
	const cplx *eps = a.eps + (size_t)my_igp * a.ncouls;
	cplx ssx[NW], sch[NW];
#pragma unroll
	for (int w = 0; w < NW; w++)
		ssx[w] = sch[w] = mk(0, 0);
	for (int igs = 0; igs < S; igs++) {
		for (int j = threadIdx.x; j * S + igs < a.ncouls; j += blockDim.x) {
			const int ig = j * S + igs;
			const gpp_g g = gpp_g_of<SQUARES>(wt[ig], eps[ig]);
			const cplx mat = mul(aqsn[ig], f);
#pragma unroll
			for (int w = 0; w < NW; w++)
				gpp_term<RECIP, SQUARES>(e + WX0 + DW * w, g, mat, ssx[w], sch[w]);
		}
	}
	block_reduce<NW>(ssx, sch, a.out);
}

template <int NW, int S>
__global__ void __launch_bounds__(THREADS) gpp_v1(gpp_args a) { gpp_band_igp<NW, S, false, false>(a); }
template <int NW>
__global__ void __launch_bounds__(THREADS) gpp_v2(gpp_args a) { gpp_band_igp<NW, 1, true, false>(a); }
template <int NW>
__global__ void __launch_bounds__(THREADS) gpp_v3(gpp_args a) { gpp_band_igp<NW, 1, false, true>(a); }
template <int NW>
__global__ void __launch_bounds__(THREADS) gpp_v4(gpp_args a) { gpp_band_igp<NW, 1, true, true>(a); }

// ---- v5..v8: igp and ig over the grid, band inside the thread -----------------

// BLOCKED: the grid is 1-D, igp fastest, so that the blocks resident at one
// time work on the same ig tile.  SMEM: the band factors and energies of the
// block's igp come from shared memory (filled first) instead of global loads.
template <int NW, bool BLOCKED, bool SMEM>
__device__ static inline void gpp_igp_ig(const gpp_args &a)
{
	extern __shared__ double smem[];
	int tile, my_igp;
	if (BLOCKED) {
		tile = blockIdx.x / a.ngpown;
		my_igp = blockIdx.x % a.ngpown;
	} else {
		tile = blockIdx.x;
		my_igp = blockIdx.y;
	}
	const int igp = a.inv_igp[my_igp];
	cplx *sf = (cplx *)smem;
	double *se = (double *)(sf + a.nbands);
	if (SMEM) {
		for (int b = threadIdx.x; b < a.nbands; b += blockDim.x) {
			sf[b] = gpp_band_factor(a, b, igp);
			se[b] = a.ekq[b];
		}
		__syncthreads();
	}
	const int ig = tile * THREADS + threadIdx.x;
	cplx ssx[NW], sch[NW];
#pragma unroll
	for (int w = 0; w < NW; w++)
		ssx[w] = sch[w] = mk(0, 0);
	if (ig < a.ncouls) {
		const size_t gi = (size_t)my_igp * a.ncouls + ig;
		const gpp_g g = gpp_g_of<true>(a.wt[gi], a.eps[gi]);
		for (int band = 0; band < a.nbands; band++) {
			const cplx f = SMEM ? sf[band] : gpp_band_factor(a, band, igp);
			const double e = SMEM ? se[band] : a.ekq[band];
			const cplx mat = mul(a.aqsn[(size_t)band * a.ncouls + ig], f);
#pragma unroll
			for (int w = 0; w < NW; w++)
				gpp_term<true, true>(e + WX0 + DW * w, g, mat, ssx[w], sch[w]);
		}
	}
	block_reduce<NW>(ssx, sch, a.out);
}

template <int NW>
__global__ void __launch_bounds__(THREADS) gpp_v5(gpp_args a) { gpp_igp_ig<NW, false, false>(a); }
template <int NW>
__global__ void __launch_bounds__(THREADS, V6_MIN_BLOCKS) gpp_v6(gpp_args a) { gpp_igp_ig<NW, false, false>(a); }
template <int NW>
__global__ void __launch_bounds__(THREADS, V6_MIN_BLOCKS) gpp_v7(gpp_args a) { gpp_igp_ig<NW, true, false>(a); }
template <int NW>
__global__ void __launch_bounds__(THREADS, V6_MIN_BLOCKS) gpp_v8(gpp_args a) { gpp_igp_ig<NW, true, true>(a); }

// ---- inputs ----------------------------------------------------------------------

// A uniform number in [0, 1) from an index and a salt (splitmix64).
__host__ __device__ static inline double uhash(unsigned long long i, unsigned long long salt)
{
	unsigned long long z = i * 0x9E3779B97F4A7C15ull + salt * 0xD1B54A32D192ED03ull + 1;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

__global__ void fill_cplx(cplx *p, size_t n, unsigned long long salt, double r0,
			  double rw, double iw)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = mk(r0 + rw * uhash(i, salt), iw * (uhash(i, salt + 1) - 0.5));
}

// The small arrays, on the host (also the self-test's CPU inputs).
static void small_arrays(int nbands, int nvband, int ncouls, int ngpown, int nodes,
			 std::vector<double> &vcoul, std::vector<double> &ekq,
			 std::vector<int> &inv_igp)
{
	vcoul.resize(ncouls);
	ekq.resize(nbands);
	inv_igp.resize(ngpown);
	for (int i = 0; i < ncouls; i++)
		vcoul[i] = 0.5 + uhash(i, 11);
	// occupied bands (band < nvband) have negative energies, so that the
	// cut-off at negative frequencies applies to them
	for (int b = 0; b < nbands; b++)
		ekq[b] = b < nvband ? -(2.0 + uhash(b, 13)) : 3.0 * uhash(b, 13) - 1.0;
	for (int p = 0; p < ngpown; p++)
		inv_igp[p] = (int)(((long)p * nodes + p % 7) % ncouls);
}

// Input distributions: wtilde around 0.5..2.5 (so that wx - wtilde takes both
// signs and both branches occur), I_eps, aqsm, aqsn with positive real parts
// (sums that do not cancel).
#define WT_ARGS 0.5, 2.0, 0.2
#define EPS_ARGS 0.1, 0.9, 0.2
#define AQ_ARGS 0.5, 1.0, 0.5

struct problem {
	int nbands, nvband, ncouls, ngpown, nodes;
	cplx *aqsm, *aqsn, *eps, *wt;
	double *vcoul, *ekq, *out;
	int *inv_igp;
	gpp_args args;
	size_t bytes;
};

static void problem_init(problem &p, int nbands, int nvband, int ncouls, int nodes)
{
	p.nbands = nbands;
	p.nvband = nvband;
	p.ncouls = ncouls;
	p.nodes = nodes;
	p.ngpown = ncouls / nodes;
	size_t nb = (size_t)nbands * ncouls, ng = (size_t)p.ngpown * ncouls;
	std::vector<double> vcoul, ekq;
	std::vector<int> inv;
	small_arrays(nbands, nvband, ncouls, p.ngpown, nodes, vcoul, ekq, inv);
	CK(cudaMalloc(&p.aqsm, nb * sizeof(cplx)));
	CK(cudaMalloc(&p.aqsn, nb * sizeof(cplx)));
	CK(cudaMalloc(&p.eps, ng * sizeof(cplx)));
	CK(cudaMalloc(&p.wt, ng * sizeof(cplx)));
	CK(cudaMalloc(&p.vcoul, ncouls * sizeof(double)));
	CK(cudaMalloc(&p.ekq, nbands * sizeof(double)));
	CK(cudaMalloc(&p.inv_igp, p.ngpown * sizeof(int)));
	CK(cudaMalloc(&p.out, NW_MAX * NQ * sizeof(double)));
	fill_cplx<<<1024, 256>>>(p.aqsm, nb, 1, AQ_ARGS);
	fill_cplx<<<1024, 256>>>(p.aqsn, nb, 3, AQ_ARGS);
	fill_cplx<<<1024, 256>>>(p.eps, ng, 5, EPS_ARGS);
	fill_cplx<<<1024, 256>>>(p.wt, ng, 7, WT_ARGS);
	CK(cudaGetLastError());
	CK(cudaMemcpy(p.vcoul, vcoul.data(), ncouls * sizeof(double), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(p.ekq, ekq.data(), nbands * sizeof(double), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(p.inv_igp, inv.data(), p.ngpown * sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaDeviceSynchronize());
	p.args = { nbands, nvband, ncouls, p.ngpown, p.aqsm, p.aqsn, p.eps, p.wt,
		   p.vcoul, p.ekq, p.inv_igp, p.out };
	p.bytes = 2 * nb * sizeof(cplx) + 2 * ng * sizeof(cplx) + ncouls * sizeof(double);
}

static void problem_free(problem &p)
{
	cudaFree(p.aqsm);
	cudaFree(p.aqsn);
	cudaFree(p.eps);
	cudaFree(p.wt);
	cudaFree(p.vcoul);
	cudaFree(p.ekq);
	cudaFree(p.inv_igp);
	cudaFree(p.out);
}

// ---- variants --------------------------------------------------------------------

typedef void (*launch_fn)(const problem &);

template <int NW, int S>
static void launch_v1(const problem &p) { gpp_v1<NW, S><<<dim3(p.nbands, p.ngpown), THREADS>>>(p.args); }
template <int NW>
static void launch_v2(const problem &p) { gpp_v2<NW><<<dim3(p.nbands, p.ngpown), THREADS>>>(p.args); }
template <int NW>
static void launch_v3(const problem &p) { gpp_v3<NW><<<dim3(p.nbands, p.ngpown), THREADS>>>(p.args); }
template <int NW>
static void launch_v4(const problem &p) { gpp_v4<NW><<<dim3(p.nbands, p.ngpown), THREADS>>>(p.args); }

static int tiles(const problem &p) { return (p.ncouls + THREADS - 1) / THREADS; }

template <int NW>
static void launch_v5(const problem &p) { gpp_v5<NW><<<dim3(tiles(p), p.ngpown), THREADS>>>(p.args); }
template <int NW>
static void launch_v6(const problem &p) { gpp_v6<NW><<<dim3(tiles(p), p.ngpown), THREADS>>>(p.args); }
template <int NW>
static void launch_v7(const problem &p) { gpp_v7<NW><<<tiles(p) * p.ngpown, THREADS>>>(p.args); }
template <int NW>
static void launch_v8(const problem &p)
{
	size_t sm = (size_t)p.nbands * (sizeof(cplx) + sizeof(double));
	if (sm > 48 * 1024)
		CK(cudaFuncSetAttribute(gpp_v8<NW>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
	gpp_v8<NW><<<tiles(p) * p.ngpown, THREADS, sm>>>(p.args);
}

struct variant {
	const char *name; // the kernel's name in ncu's table
	int nw, stride;
	launch_fn launch;
};

static const variant NW_SWEEP[] = {
	{ "gpp_v1<1, 1>", 1, 1, launch_v1<1, 1> }, { "gpp_v1<2, 1>", 2, 1, launch_v1<2, 1> },
	{ "gpp_v1<3, 1>", 3, 1, launch_v1<3, 1> }, { "gpp_v1<4, 1>", 4, 1, launch_v1<4, 1> },
	{ "gpp_v1<5, 1>", 5, 1, launch_v1<5, 1> }, { "gpp_v1<6, 1>", 6, 1, launch_v1<6, 1> },
};
static const variant STRIDES[] = {
	{ "gpp_v1<6, 1>", 6, 1, launch_v1<6, 1> }, { "gpp_v1<6, 2>", 6, 2, launch_v1<6, 2> },
	{ "gpp_v1<6, 4>", 6, 4, launch_v1<6, 4> }, { "gpp_v1<6, 8>", 6, 8, launch_v1<6, 8> },
};
#define VERSIONS_OF(N)                                                                  \
	{ { "gpp_v1<" #N ", 1>", N, 1, launch_v1<N, 1> }, { "gpp_v2<" #N ">", N, 1, launch_v2<N> }, \
	  { "gpp_v3<" #N ">", N, 1, launch_v3<N> }, { "gpp_v4<" #N ">", N, 1, launch_v4<N> },   \
	  { "gpp_v5<" #N ">", N, 1, launch_v5<N> }, { "gpp_v6<" #N ">", N, 1, launch_v6<N> },   \
	  { "gpp_v7<" #N ">", N, 1, launch_v7<N> }, { "gpp_v8<" #N ">", N, 1, launch_v8<N> } }
static const variant VERSIONS[NW_MAX][8] = { VERSIONS_OF(1), VERSIONS_OF(2), VERSIONS_OF(3),
					     VERSIONS_OF(4), VERSIONS_OF(5), VERSIONS_OF(6) };

struct result {
	double ms;            // median over the launches
	double sums[NW_MAX * NQ];
};

static result run_variant(const problem &p, const variant &v, int reps)
{
	result r;
	std::vector<float> t(reps);
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (int i = 0; i < reps; i++) {
		// poison the sums that this nw does not write, zero the others
		std::vector<double> init(NW_MAX * NQ, NAN);
		std::fill(init.begin(), init.begin() + v.nw * NQ, 0.0);
		CK(cudaMemcpy(p.out, init.data(), init.size() * sizeof(double), cudaMemcpyHostToDevice));
		CK(cudaEventRecord(a));
		v.launch(p);
		CK(cudaGetLastError());
		CK(cudaEventRecord(b));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&t[i], a, b));
	}
	CK(cudaMemcpy(r.sums, p.out, sizeof(r.sums), cudaMemcpyDeviceToHost));
	std::sort(t.begin(), t.end());
	r.ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	return r;
}

// Largest |x - ref| / max|ref| over each quantity q (ssx.re ... sch.im) of the
// first nw frequencies; NaN (an unwritten sum) gives infinity.
static double rel_diff(const double *x, const double *ref, int nw)
{
	double worst = 0;
	for (int q = 0; q < NQ; q++) {
		double m = 0;
		for (int w = 0; w < nw; w++)
			m = std::max(m, fabs(ref[w * NQ + q]));
		for (int w = 0; w < nw; w++) {
			double d = fabs(x[w * NQ + q] - ref[w * NQ + q]);
			if (!(d == d))
				return INFINITY;
			worst = std::max(worst, m > 0 ? d / m : d);
		}
	}
	return worst;
}

static double checksum(const double *s, int nw)
{
	double c = 0;
	for (int i = 0; i < nw * NQ; i++)
		c += s[i];
	return c;
}

// Run the variants, compare each with ref_index's sums, print a table.
// Returns the number of variants whose sums differ.
static int experiment(const char *title, const problem &p, const variant *v, int n,
		      int ref_index, int reps, std::vector<result> *keep)
{
	std::vector<result> r(n);
	for (int i = 0; i < n; i++)
		r[i] = run_variant(p, v[i], reps);
	const result &ref = r[ref_index];
	int bad = 0;
	printf("\n== %s: %d launch(es) each, reference %s, tolerance %.0e\n", title, reps,
	       v[ref_index].name, TOLERANCE);
	printf("%-14s %3s %6s %12s %9s %24s %10s %s\n", "kernel", "nw", "stride", "median_ms",
	       "speedup", "checksum", "rel_diff", "check");
	for (int i = 0; i < n; i++) {
		double d = rel_diff(r[i].sums, ref.sums, v[i].nw);
		bool ok = d <= TOLERANCE;
		bad += !ok;
		printf("%-14s %3d %6d %12.3f %8.2fx %24.15e %10.2e %s\n", v[i].name, v[i].nw,
		       v[i].stride, r[i].ms, r[0].ms / r[i].ms, checksum(r[i].sums, v[i].nw), d,
		       ok ? "ok" : "DIFFERS");
	}
	for (int w = 0; w < v[ref_index].nw; w++)
		printf("  %s iw=%d: ssx = %.15e %+.15ei  sch = %.15e %+.15ei\n", v[ref_index].name, w,
		       ref.sums[w * NQ], ref.sums[w * NQ + 1], ref.sums[w * NQ + 2], ref.sums[w * NQ + 3]);
	if (keep)
		*keep = r;
	return bad;
}

// ---- the self-test: a small problem, the same terms summed on the CPU -----------

static int selftest(void)
{
	const int nbands = 8, nvband = 2, ncouls = 600, nodes = 10; // 600: a partial tile
	problem p;
	problem_init(p, nbands, nvband, ncouls, nodes);
	size_t nb = (size_t)nbands * ncouls, ng = (size_t)p.ngpown * ncouls;
	std::vector<cplx> aqsm(nb), aqsn(nb), eps(ng), wt(ng);
	CK(cudaMemcpy(aqsm.data(), p.aqsm, nb * sizeof(cplx), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(aqsn.data(), p.aqsn, nb * sizeof(cplx), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(eps.data(), p.eps, ng * sizeof(cplx), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(wt.data(), p.wt, ng * sizeof(cplx), cudaMemcpyDeviceToHost));
	std::vector<double> vcoul, ekq;
	std::vector<int> inv;
	small_arrays(nbands, nvband, ncouls, p.ngpown, nodes, vcoul, ekq, inv);
	gpp_args h = { nbands, nvband, ncouls, p.ngpown, aqsm.data(), aqsn.data(), eps.data(),
		       wt.data(), vcoul.data(), ekq.data(), inv.data(), nullptr };
	cplx ssx[NW_MAX] = {}, sch[NW_MAX] = {};
	long branch[3] = { 0, 0, 0 };
	for (int band = 0; band < nbands; band++)
		for (int my = 0; my < p.ngpown; my++) {
			cplx f = gpp_band_factor(h, band, inv[my]);
			for (int ig = 0; ig < ncouls; ig++) {
				size_t gi = (size_t)my * ncouls + ig;
				gpp_g g = gpp_g_of<false>(wt[gi], eps[gi]);
				cplx mat = mul(aqsn[(size_t)band * ncouls + ig], f);
				for (int w = 0; w < NW_MAX; w++) {
					double wxt = ekq[band] + WX0 + DW * w;
					cplx before = sch[w];
					cplx sx = ssx[w];
					gpp_term<false, false>(wxt, g, mat, ssx[w], sch[w]);
					branch[before.re != sch[w].re ? 0 : sx.re != ssx[w].re ? 1 : 2]++;
				}
			}
		}
	double ref[NW_MAX * NQ];
	for (int w = 0; w < NW_MAX; w++) {
		ref[w * NQ] = ssx[w].re;
		ref[w * NQ + 1] = ssx[w].im;
		ref[w * NQ + 2] = sch[w].re;
		ref[w * NQ + 3] = sch[w].im;
	}
	printf("self-test: %d %d %d %d (ngpown %d), CPU terms by branch: first %ld, second %ld, "
	       "none/cut %ld\n", nbands, nvband, ncouls, nodes, p.ngpown, branch[0], branch[1], branch[2]);
	int bad = 0;
	std::vector<const variant *> all;
	for (const variant &v : NW_SWEEP)
		all.push_back(&v);
	for (const variant &v : STRIDES)
		all.push_back(&v);
	for (int n = 0; n < NW_MAX; n++)
		for (const variant &v : VERSIONS[n])
			all.push_back(&v);
	for (const variant *v : all) {
		result r = run_variant(p, *v, 1);
		double d = rel_diff(r.sums, ref, v->nw);
		bool ok = d <= TOLERANCE;
		bad += !ok;
		if (!ok || v->nw == 3 || v->nw == 6)
			printf("  %-14s against the CPU: rel_diff %.2e %s\n", v->name, d, ok ? "ok" : "DIFFERS");
	}
	printf("self-test: %zu kernels, %d differ\n", all.size(), bad);
	problem_free(p);
	return bad;
}

// ---- main --------------------------------------------------------------------------

static int usage(void)
{
	fprintf(stderr, "usage: gpp [--exp nw|stride|versions|all] [--nw N] [--only K] [--reps R] [--selftest]\n"
			"           [nbands nvband ncouls nodes_per_group]   (default 512 2 32768 20)\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *exp = "all";
	int nw = 3, reps = 1, self = 0, only = 0, size[4] = { 512, 2, 32768, 20 }, nsize = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--exp") && i + 1 < argc)
			exp = argv[++i];
		else if (!strcmp(argv[i], "--nw") && i + 1 < argc)
			nw = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--selftest"))
			self = 1;
		else if (argv[i][0] != '-' && nsize < 4)
			size[nsize++] = atoi(argv[i]);
		else
			return usage();
	}
	bool e_nw = !strcmp(exp, "nw"), e_st = !strcmp(exp, "stride"),
	     e_v = !strcmp(exp, "versions"), e_all = !strcmp(exp, "all");
	if (!(e_nw || e_st || e_v || e_all) || nw < 1 || nw > NW_MAX || reps < 1 || only < 0 || only > 8 ||
	    (nsize != 0 && nsize != 4) || size[0] < 1 || size[1] < 0 || size[1] > size[0] ||
	    size[3] < 1 || size[2] < size[3] || size[2] / size[3] > 65535)
		return usage();

	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	int bad = 0;
	if (self)
		bad += selftest();
	problem p;
	problem_init(p, size[0], size[1], size[2], size[3]);
	printf("gpp: nbands %d nvband %d ncouls %d nodes_per_group %d -> ngpown %d; %.2f GB of "
	       "inputs; FMA contraction %s; %s (cc %d.%d, %d SMs)\n",
	       p.nbands, p.nvband, p.ncouls, p.nodes, p.ngpown, p.bytes / 1e9, GPP_FMAD ? "on" : "off",
	       prop.name, prop.major, prop.minor, prop.multiProcessorCount);
	if (e_nw || e_all)
		bad += experiment("nw sweep (GTC experiment 1)", p, NW_SWEEP, 6, 5, reps, nullptr);
	if (e_st || e_all)
		bad += experiment("ig stride at nw 6 (GTC experiment 3)", p, STRIDES, 4, 0, reps, nullptr);
	if (e_v || e_all) {
		char t[64];
		snprintf(t, sizeof t, "SC20 versions at nw %d", nw);
		if (only) {
			variant pair[2] = { VERSIONS[nw - 1][0], VERSIONS[nw - 1][only - 1] };
			bad += experiment(t, p, pair, only == 1 ? 1 : 2, 0, reps, nullptr);
		} else {
			bad += experiment(t, p, VERSIONS[nw - 1], 8, 0, reps, nullptr);
		}
	}
	problem_free(p);
	printf("\ngpp: %s\n", bad ? "FAILED: some sums differ" : "all sums agree");
	return bad ? 1 : 0;
}
