/*
 * bench/stream-peer.cu - COMPARISON KERNELS, not rooflined's measurements.
 *
 * Plain memory kernels of the kind the simplest public benchmarks use,
 * written for this project so that ert-bench's HBM and L2 ceilings can be
 * compared with them side by side, in the same device run:
 *  - BabelStream's five kernels as BabelStream's CUDA version shapes them
 *    (its method, not its code): arrays of 2^28 doubles (option -n LOG2),
 *    one element per thread, blocks of 1024, start values a=0.1 b=0.2
 *    c=0.0, scalar 0.4, 100 iterations of copy, mul, add, triad, dot in
 *    that order; dot on 4 blocks per SM with a shared-memory reduction;
 *    bytes counted as BabelStream counts them (copy/mul 2, add/triad 3,
 *    dot 2 arrays); the headline rate from the fastest iteration, the
 *    first one left out.  Timed with CUDA events around each kernel
 *    (BabelStream times with the host clock around kernel + synchronize,
 *    which can only make it slower).
 *  - a plain read (each thread loads one double) and a plain write (each
 *    thread stores one), timed the same way after the BabelStream loop.
 *  - a plain L2 read: working sets of 3-32 MB (10^6 bytes); a launch has
 *    enough blocks of 1024 threads to read 2 GB; block k reads chunk
 *    k mod nchunks (64 KiB: 8 doubles per thread, ld.global.cg) of the set.
 *    20 timed launches per size after 2 untimed ones.
 * The results are checked against the host's replay of the scalar
 * arithmetic (BabelStream's check).
 *
 * Output: one line per kernel, TAB-separated, key=value fields:
 *   peer name bytes iters best_Bps median_Bps min_Bps spread_pct
 *   (best from the shortest time; spread = (max - min) / median of the
 *   rates over the counted iterations)
 *   check name ok|fail
 * Exit status 1 on a CUDA error or a wrong result.
 *
 * Build: nvcc -O3 -arch=sm_90 -o stream-peer bench/stream-peer.cu
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define TBSIZE 1024

static void ck(cudaError_t e, const char *what, int line)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "stream-peer:%d: %s: %s\n", line, what,
			cudaGetErrorString(e));
		exit(1);
	}
}
#define CK(x) ck((x), #x, __LINE__)

__global__ void k_init(double *a, double *b, double *c, double ia, double ib,
		       double ic, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		a[i] = ia;
		b[i] = ib;
		c[i] = ic;
	}
}

__global__ void k_copy(const double *a, double *c, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i];
}

__global__ void k_mul(double *b, const double *c, double s, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		b[i] = s * c[i];
}

__global__ void k_add(const double *a, const double *b, double *c, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void k_triad(double *a, const double *b, const double *c, double s,
			size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		a[i] = b[i] + s * c[i];
}

__global__ void k_dot(const double *a, const double *b, double *sums, size_t n)
{
	__shared__ double tb[TBSIZE];
	double s = 0;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)blockDim.x * gridDim.x)
		s += a[i] * b[i];
	tb[threadIdx.x] = s;
	for (int off = blockDim.x / 2; off > 0; off /= 2) {
		__syncthreads();
		if (threadIdx.x < off)
			tb[threadIdx.x] += tb[threadIdx.x + off];
	}
	if (threadIdx.x == 0)
		sums[blockIdx.x] = tb[0];
}

/* Plain read: the value is stored only if it is -1 (it never is). */
__global__ void k_read(const double *a, double *out, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n && a[i] == -1.0)
		out[0] = a[i];
}

__global__ void k_write(double *a, double v, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		a[i] = v;
}

/* Plain L2 read: block k reads chunk k % nchunks, 8 doubles per thread. */
__global__ void k_l2(const double *buf, int nchunks, double *out)
{
	const double *p = buf + (size_t)(blockIdx.x % nchunks) * (8 * TBSIZE) +
			  threadIdx.x;
	double s = 0;

#pragma unroll
	for (int k = 0; k < 8; k++)
		s += __ldcg(p + k * TBSIZE);
	if (s == -1.0)
		out[0] = s;
}

struct timer {
	cudaEvent_t e0, e1;
};

static double elapsed(timer &t)
{
	float ms;

	CK(cudaEventSynchronize(t.e1));
	CK(cudaEventElapsedTime(&ms, t.e0, t.e1));
	return ms * 1e-3;
}

static void report(const char *name, double bytes, std::vector<double> &times)
{
	std::vector<double> r;

	for (double t : times)
		r.push_back(bytes / t);
	std::sort(r.begin(), r.end());
	double med = r.size() % 2 ? r[r.size() / 2]
				  : (r[r.size() / 2 - 1] + r[r.size() / 2]) / 2;
	printf("peer\tname=%s\tbytes=%.17g\titers=%zu\tbest_Bps=%.17g\t"
	       "median_Bps=%.17g\tmin_Bps=%.17g\tspread_pct=%.4g\n",
	       name, bytes, r.size(), r.back(), med, r.front(),
	       (r.back() - r.front()) / med * 100);
}

static int check(const char *name, double got, double want, double tol)
{
	int ok = std::fabs(got - want) <= tol * std::fabs(want);

	printf("check\tname=%s\t%s\tgot=%.17g\twant=%.17g\n", name,
	       ok ? "ok" : "fail", got, want);
	return ok;
}

/* BabelStream's loop; returns 0 when the results check. */
static int stream(size_t n, int iters, int sms, timer &t)
{
	const double s = 0.4;
	const unsigned bl = (unsigned)((n + TBSIZE - 1) / TBSIZE);
	const int dot_bl = 4 * sms;
	double *a, *b, *c, *sums, sum = 0;
	std::vector<double> tm[7];
	std::vector<double> hs(dot_bl);

	CK(cudaMalloc(&a, n * 8));
	CK(cudaMalloc(&b, n * 8));
	CK(cudaMalloc(&c, n * 8));
	CK(cudaMalloc(&sums, dot_bl * 8));
	k_init<<<bl, TBSIZE>>>(a, b, c, 0.1, 0.2, 0.0, n);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	for (int k = 0; k < iters; k++) {
		for (int j = 0; j < 5; j++) {
			CK(cudaEventRecord(t.e0));
			if (j == 0)
				k_copy<<<bl, TBSIZE>>>(a, c, n);
			else if (j == 1)
				k_mul<<<bl, TBSIZE>>>(b, c, s, n);
			else if (j == 2)
				k_add<<<bl, TBSIZE>>>(a, b, c, n);
			else if (j == 3)
				k_triad<<<bl, TBSIZE>>>(a, b, c, s, n);
			else
				k_dot<<<dot_bl, TBSIZE>>>(a, b, sums, n);
			CK(cudaGetLastError());
			CK(cudaEventRecord(t.e1));
			double dt = elapsed(t);
			if (k > 0)
				tm[j].push_back(dt);
		}
		CK(cudaMemcpy(hs.data(), sums, dot_bl * 8, cudaMemcpyDeviceToHost));
		sum = 0;
		for (double x : hs)
			sum += x;
	}
	report("copy", 2.0 * 8 * n, tm[0]);
	report("mul", 2.0 * 8 * n, tm[1]);
	report("add", 3.0 * 8 * n, tm[2]);
	report("triad", 3.0 * 8 * n, tm[3]);
	report("dot", 2.0 * 8 * n, tm[4]);

	/* BabelStream's check: replay the scalars */
	double ga = 0.1, gb = 0.2, gc = 0.0;
	for (int k = 0; k < iters; k++) {
		gc = ga;
		gb = s * gc;
		gc = ga + gb;
		ga = gb + s * gc;
	}
	double ha, hb, hc;
	CK(cudaMemcpy(&ha, a + n / 2, 8, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(&hb, b + n - 1, 8, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(&hc, c, 8, cudaMemcpyDeviceToHost));
	int ok = check("a", ha, ga, 1e-8) & check("b", hb, gb, 1e-8) &
		 check("c", hc, gc, 1e-8) &
		 check("dot", sum, ga * gb * (double)n, 1e-8);

	/* plain read and write */
	for (int k = 0; k < iters; k++) {
		CK(cudaEventRecord(t.e0));
		k_read<<<bl, TBSIZE>>>(a, sums, n);
		CK(cudaEventRecord(t.e1));
		double dt = elapsed(t);
		CK(cudaEventRecord(t.e0));
		k_write<<<bl, TBSIZE>>>(c, 0.5 + k, n);
		CK(cudaEventRecord(t.e1));
		double dw = elapsed(t);
		if (k > 0) {
			tm[5].push_back(dt);
			tm[6].push_back(dw);
		}
	}
	CK(cudaGetLastError());
	report("read", 8.0 * n, tm[5]);
	report("write", 8.0 * n, tm[6]);
	CK(cudaMemcpy(&hc, c + n - 1, 8, cudaMemcpyDeviceToHost));
	ok &= check("write", hc, 0.5 + iters - 1, 0);
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	CK(cudaFree(sums));
	return ok ? 0 : 1;
}

/* The plain L2 read over working sets of 3-32 MB. */
static void l2(timer &t)
{
	static const double mb[] = {3, 4, 6, 8, 11, 16, 22, 32};
	const size_t chunk = 8 * TBSIZE * 8; /* bytes */
	double *buf, *out;
	std::vector<double> med;

	CK(cudaMalloc(&buf, 33000000));
	CK(cudaMalloc(&out, 8));
	k_init<<<(33000000 / 8 + TBSIZE - 1) / TBSIZE, TBSIZE>>>(
		buf, buf, buf, 1.0, 1.0, 1.0, 33000000 / 8);
	CK(cudaGetLastError());
	for (double m : mb) {
		const int nchunks = (int)(m * 1e6 / chunk);
		const unsigned bl = (unsigned)(2e9 / chunk) / nchunks * nchunks;
		const double bytes = (double)bl * chunk;
		std::vector<double> tm;
		char name[32];

		for (int k = 0; k < 22; k++) {
			CK(cudaEventRecord(t.e0));
			k_l2<<<bl, TBSIZE>>>(buf, nchunks, out);
			CK(cudaEventRecord(t.e1));
			double dt = elapsed(t);
			if (k >= 2)
				tm.push_back(dt);
		}
		CK(cudaGetLastError());
		snprintf(name, sizeof(name), "l2_%gMB", nchunks * chunk / 1e6);
		report(name, bytes, tm);
	}
	CK(cudaFree(buf));
	CK(cudaFree(out));
}

int main(int argc, char **argv)
{
	int log2n = 28, iters = 100, sms = 0;
	timer t;
	cudaDeviceProp p;

	if (argc > 1)
		log2n = atoi(argv[1]);
	if (log2n < 20 || log2n > 31) {
		fprintf(stderr, "usage: stream-peer [LOG2N (20-31, default 28)]\n");
		return 2;
	}
	CK(cudaGetDeviceProperties(&p, 0));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	printf("# stream-peer: %s, %d SMs, arrays of 2^%d doubles, %d iterations\n",
	       p.name, sms, log2n, iters);
	CK(cudaEventCreate(&t.e0));
	CK(cudaEventCreate(&t.e1));
	int rc = stream((size_t)1 << log2n, iters, sms, t);
	l2(t);
	return rc;
}
