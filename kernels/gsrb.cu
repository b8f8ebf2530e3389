// gsrb.cu - the three Gauss-Seidel Red-Black (GSRB) smoother variants of
// HPGMG-CUDA that the GTC 2019 Roofline talk (S9624, "Code Example 2: HPGMG",
// seeds/gtc2019-roofline-performance-analysis-slides.txt) profiles, written
// here from the slides' description:
//
//   GSRB_FP      every thread updates its point and multiplies the correction
//                by a red/black mask read from a small array (1.0 or 0.0): all
//                points do the FLOPs, half of them are wasted.
//   GSRB_BRANCH  a branch on the colour: red points do the FLOPs, black points
//                copy x -> xo.  Half the FLOPs of GSRB_FP, the same bytes.
//   GSRB_STRIDE2 each thread owns two neighbouring points in i, copies one and
//                updates the other: half the threads, the FLOPs of
//                GSRB_BRANCH, a strided write pattern.
//
// The operator is HPGMG's variable-coefficient Helmholtz,
//   A x = a alpha x - b h^-2 div(beta grad x),
// with face coefficients beta_i, beta_j, beta_k and Dinv = 1 / diag(A).  The
// update of a point of the active colour is
//   xo = x + Dinv (rhs - A x);
// a point of the other colour is copied.  One smooth is two launches (colour
// 0 then colour 1, swapping x and xo).  Threads cover (i, j) of the box and
// loop over KB planes in k (gridDim.z = n / KB), as HPGMG's kernels loop over
// k within a box.
//
// Usage: gsrb [n ...]   (default levels 64 128 256: boxes of n^3 points)
// Prints what each launch did and checks every variant against a CPU
// reference of the same smooth; exits 1 on failure.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(call)                                                               \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "gsrb: %s failed: %s (%s:%d)\n", #call, \
				cudaGetErrorString(e_), __FILE__, __LINE__);   \
			exit(1);                                               \
		}                                                              \
	} while (0)

#define KB 8   // k planes per thread
#define TX 32  // threads per block in i
#define TY 4   // threads per block in j

struct level {
	int n;              // interior points per dimension
	int jStride, kStride;
	long volume;        // (n+2)^3 with one ghost layer
	double a, b, h2inv;
	double *x, *xo, *rhs, *alpha, *beta_i, *beta_j, *beta_k, *Dinv;
	double *RedBlack_FP; // 2 planes of kStride doubles: mask[(k^c)&1][ij]
};

// Index of interior point (i, j, k), 0-based, in a ghosted array.
__host__ __device__ static inline long idx(const level &L, int i, int j, int k)
{
	return (long)(i + 1) + (long)(j + 1) * L.jStride + (long)(k + 1) * L.kStride;
}

__host__ __device__ static inline double apply_op(const level &L,
						  const double *x, long ijk)
{
	const int js = L.jStride, ks = L.kStride;
	return L.a * L.alpha[ijk] * x[ijk] -
	       L.b * L.h2inv *
		       (L.beta_i[ijk + 1] * (x[ijk + 1] - x[ijk]) -
			L.beta_i[ijk] * (x[ijk] - x[ijk - 1]) +
			L.beta_j[ijk + js] * (x[ijk + js] - x[ijk]) -
			L.beta_j[ijk] * (x[ijk] - x[ijk - js]) +
			L.beta_k[ijk + ks] * (x[ijk + ks] - x[ijk]) -
			L.beta_k[ijk] * (x[ijk] - x[ijk - ks]));
}

// Point (i, j, k) is updated in colour c when (i ^ j ^ k ^ c ^ 1) & 1, the
// slides' test.
__host__ __device__ static inline int is_active(int i, int j, int k, int c)
{
	return (i ^ j ^ k ^ c ^ 1) & 1;
}

__global__ void GSRB_FP(level L, const double *__restrict__ x,
			double *__restrict__ xo, int color)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int j = blockIdx.y * blockDim.y + threadIdx.y;
	int klo = blockIdx.z * KB;
	if (i >= L.n || j >= L.n)
		return;
	for (int k = klo; k < klo + KB && k < L.n; k++) {
		long ijk = idx(L, i, j, k);
		const double *__restrict__ RedBlack =
			L.RedBlack_FP + ((k ^ color) & 1) * L.kStride;
		const double Ax = apply_op(L, x, ijk);
		const double lambda = L.Dinv[ijk];
		const long ij = (i + 1) + (long)(j + 1) * L.jStride;
		xo[ijk] = x[ijk] + RedBlack[ij] * lambda * (L.rhs[ijk] - Ax);
	}
}

__global__ void GSRB_BRANCH(level L, const double *__restrict__ x,
			    double *__restrict__ xo, int color)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int j = blockIdx.y * blockDim.y + threadIdx.y;
	int klo = blockIdx.z * KB;
	if (i >= L.n || j >= L.n)
		return;
	for (int k = klo; k < klo + KB && k < L.n; k++) {
		long ijk = idx(L, i, j, k);
		if (is_active(i, j, k, color)) {
			const double Ax = apply_op(L, x, ijk);
			const double lambda = L.Dinv[ijk];
			xo[ijk] = x[ijk] + lambda * (L.rhs[ijk] - Ax);
		} else {
			xo[ijk] = x[ijk];
		}
	}
}

// Thread tx owns points 2tx and 2tx+1 in i (n is even).
__global__ void GSRB_STRIDE2(level L, const double *__restrict__ x,
			     double *__restrict__ xo, int color)
{
	int tx = blockIdx.x * blockDim.x + threadIdx.x;
	int j = blockIdx.y * blockDim.y + threadIdx.y;
	int klo = blockIdx.z * KB;
	if (2 * tx >= L.n || j >= L.n)
		return;
	for (int k = klo; k < klo + KB && k < L.n; k++) {
		int i = !((j ^ k ^ color) & 1) + tx * 2; // the copied point
		long ijk = idx(L, i, j, k);
		xo[ijk] = x[ijk];
		i = ((j ^ k ^ color) & 1) + tx * 2;      // the updated point
		ijk = idx(L, i, j, k);
		const double Ax = apply_op(L, x, ijk);
		const double lambda = L.Dinv[ijk];
		xo[ijk] = x[ijk] + lambda * (L.rhs[ijk] - Ax);
	}
}

// ---- host side -------------------------------------------------------------

static unsigned long long lcg_state = 88172645463325252ULL;
static double rnd(void) // in [0, 1), deterministic
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(lcg_state >> 11) * (1.0 / 9007199254740992.0);
}

struct host_level {
	std::vector<double> x, rhs, alpha, beta_i, beta_j, beta_k, Dinv, mask;
};

static void host_init(level &L, host_level &H)
{
	long v = L.volume;
	H.x.resize(v); H.rhs.resize(v); H.alpha.resize(v);
	H.beta_i.resize(v); H.beta_j.resize(v); H.beta_k.resize(v);
	H.Dinv.assign(v, 0.0);
	for (long p = 0; p < v; p++) {
		H.x[p] = rnd();
		H.rhs[p] = rnd();
		H.alpha[p] = 1.0 + rnd();
		H.beta_i[p] = 1.0 + rnd();
		H.beta_j[p] = 1.0 + rnd();
		H.beta_k[p] = 1.0 + rnd();
	}
	for (int k = 0; k < L.n; k++)
		for (int j = 0; j < L.n; j++)
			for (int i = 0; i < L.n; i++) {
				long q = idx(L, i, j, k);
				double diag = L.a * H.alpha[q] +
					      L.b * L.h2inv *
						      (H.beta_i[q] + H.beta_i[q + 1] +
						       H.beta_j[q] + H.beta_j[q + L.jStride] +
						       H.beta_k[q] + H.beta_k[q + L.kStride]);
				H.Dinv[q] = 1.0 / diag;
			}
	H.mask.assign(2L * L.kStride, 0.0);
	for (int p = 0; p < 2; p++)
		for (int j = 0; j < L.n; j++)
			for (int i = 0; i < L.n; i++)
				H.mask[p * (long)L.kStride + (i + 1) + (long)(j + 1) * L.jStride] =
					((i ^ j ^ p ^ 1) & 1) ? 1.0 : 0.0;
}

// One colour of the smooth on the CPU, the reference.
static void host_sweep(const level &L, const host_level &H, const double *x,
		       double *xo, int color)
{
	level C = L; // the same operator over host arrays
	C.alpha = (double *)H.alpha.data(); C.beta_i = (double *)H.beta_i.data();
	C.beta_j = (double *)H.beta_j.data(); C.beta_k = (double *)H.beta_k.data();
	for (int k = 0; k < L.n; k++)
		for (int j = 0; j < L.n; j++)
			for (int i = 0; i < L.n; i++) {
				long q = idx(L, i, j, k);
				if (is_active(i, j, k, color))
					xo[q] = x[q] + H.Dinv[q] * (H.rhs[q] - apply_op(C, x, q));
				else
					xo[q] = x[q];
			}
}

static double *to_device(const std::vector<double> &h)
{
	double *d;
	CK(cudaMalloc(&d, sizeof(double) * h.size()));
	CK(cudaMemcpy(d, h.data(), sizeof(double) * h.size(), cudaMemcpyHostToDevice));
	return d;
}

typedef void (*gsrb_fn)(level, const double *, double *, int);

// Run one smooth (colour 0 then 1) of a variant from the initial x; compare
// with the CPU result.  Returns 0 when it matches.
static int run_variant(level &L, const host_level &H, const char *name,
		       gsrb_fn fn, const std::vector<double> &want)
{
	dim3 block(TX, TY, 1);
	int nx = (fn == GSRB_STRIDE2) ? L.n / 2 : L.n;
	dim3 grid((nx + TX - 1) / TX, (L.n + TY - 1) / TY, (L.n + KB - 1) / KB);
	CK(cudaMemcpy(L.x, H.x.data(), sizeof(double) * L.volume, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(L.xo, H.x.data(), sizeof(double) * L.volume, cudaMemcpyHostToDevice));
	double *in = L.x, *out = L.xo;
	for (int c = 0; c < 2; c++) {
		fn<<<grid, block>>>(L, in, out, c);
		CK(cudaGetLastError());
		double *t = in; in = out; out = t;
	}
	CK(cudaDeviceSynchronize());
	std::vector<double> got(L.volume);
	CK(cudaMemcpy(got.data(), in, sizeof(double) * L.volume, cudaMemcpyDeviceToHost));
	double maxrel = 0.0;
	long bad = 0;
	for (int k = 0; k < L.n; k++)
		for (int j = 0; j < L.n; j++)
			for (int i = 0; i < L.n; i++) {
				long q = idx(L, i, j, k);
				double d = fabs(got[q] - want[q]) / fmax(fabs(want[q]), 1e-300);
				if (!(d <= 1e-12))
					bad++;
				if (d > maxrel || d != d)
					maxrel = d;
			}
	long pts = (long)L.n * L.n * L.n;
	printf("%s n=%d: 2 launches (colours 0,1) grid %ux%ux%u block %ux%u, "
	       "%ld points, %ld updated per launch; max rel diff vs CPU %.3g: %s\n",
	       name, L.n, grid.x, grid.y, grid.z, block.x, block.y, pts, pts / 2,
	       maxrel, bad ? "FAILED" : "ok");
	return bad ? 1 : 0;
}

static int run_level(int n)
{
	level L = {};
	host_level H;
	L.n = n;
	L.jStride = n + 2;
	L.kStride = (n + 2) * (n + 2);
	L.volume = (long)(n + 2) * L.kStride;
	L.a = 1.0; // HPGMG's Helmholtz test: a = b = 1 on the unit cube
	L.b = 1.0;
	L.h2inv = (double)n * n;
	host_init(L, H);

	// CPU reference of one smooth.
	std::vector<double> r0(H.x), r1(H.x);
	host_sweep(L, H, H.x.data(), r1.data(), 0);
	host_sweep(L, H, r1.data(), r0.data(), 1);

	L.x = to_device(H.x); L.xo = to_device(H.x); L.rhs = to_device(H.rhs);
	L.alpha = to_device(H.alpha); L.beta_i = to_device(H.beta_i);
	L.beta_j = to_device(H.beta_j); L.beta_k = to_device(H.beta_k);
	L.Dinv = to_device(H.Dinv); L.RedBlack_FP = to_device(H.mask);

	int fails = 0;
	fails += run_variant(L, H, "GSRB_FP", GSRB_FP, r0);
	fails += run_variant(L, H, "GSRB_BRANCH", GSRB_BRANCH, r0);
	fails += run_variant(L, H, "GSRB_STRIDE2", GSRB_STRIDE2, r0);

	double *all[] = {L.x, L.xo, L.rhs, L.alpha, L.beta_i, L.beta_j, L.beta_k,
			 L.Dinv, L.RedBlack_FP};
	for (double *p : all)
		CK(cudaFree(p));
	return fails;
}

int main(int argc, char **argv)
{
	std::vector<int> levels;
	for (int a = 1; a < argc; a++) {
		int n = atoi(argv[a]);
		if (n < 8 || n % KB || n % 2) {
			fprintf(stderr, "gsrb: level '%s' must be a multiple of %d, >= 8\n",
				argv[a], KB);
			return 2;
		}
		levels.push_back(n);
	}
	if (levels.empty())
		levels = {64, 128, 256};
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, 0));
	printf("device 0: %s, cc %d.%d, %d SMs, %zu B L2\n", p.name, p.major,
	       p.minor, p.multiProcessorCount, (size_t)p.l2CacheSize);
	int fails = 0;
	for (int n : levels)
		fails += run_level(n);
	printf("gsrb: %s\n", fails ? "FAILED" : "all checks passed");
	return fails ? 1 : 0;
}
