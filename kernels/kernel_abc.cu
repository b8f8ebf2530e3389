// kernel_abc.cu - the three toy kernels of NERSC's "Roofline on NVIDIA GPUs"
// tutorial, written here from its description (seeds/nersc-roofline-on-
// nvidia-gpus-README.md, "Three Toy Kernels"):
//
//   kernel_A  compute-bound: every thread does NADD (10000) dependent double
//             adds on a value kept in a register and stores it once, so it
//             moves 8 bytes for 10000 FLOPs (AI 1250 at DRAM, by design).
//   kernel_B  the same code, launched with a dynamic shared-memory allocation
//             larger than half an SM's shared memory and 64-thread blocks, so
//             one block (2 warps) is resident per SM: occupancy 2/64 = 3.125%
//             on a 64-warp SM; same AI, latency-bound, far below the roof.
//   kernel_C  memory-bound: one double add per element, one load and one
//             store (AI 1/16 by design); consecutive threads of a warp touch
//             elements 32 bytes apart (a stride of 4 doubles), every element
//             of B is read once and every element of A written once.
//
// Usage: kernel_abc [--quick]   (--quick: smaller launches, for smoke tests)
// Prints what each kernel did and checks every result; exits 1 on failure.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define NADD 10000

#define CK(call)                                                              \
	do {                                                                  \
		cudaError_t e_ = (call);                                      \
		if (e_ != cudaSuccess) {                                      \
			fprintf(stderr, "kernel_abc: %s failed: %s (%s:%d)\n", \
				#call, cudaGetErrorString(e_), __FILE__,      \
				__LINE__);                                    \
			exit(1);                                              \
		}                                                             \
	} while (0)

// NADD dependent adds of `inc`; the start value comes from the index so the
// compiler can neither fold the loop nor reassociate it (no fast-math).
__global__ void kernel_A(double *A, long n, double inc)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	double x = (double)(i & 1023);
#pragma unroll 100
	for (int j = 0; j < NADD; j++)
		x += inc;
	A[i] = x;
}

// Identical body; only the launch (shared memory, block size) differs.
__global__ void kernel_B(double *A, long n, double inc)
{
	extern __shared__ double throttle[]; // never touched: it only limits occupancy
	(void)throttle;
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	double x = (double)(i & 1023);
#pragma unroll 100
	for (int j = 0; j < NADD; j++)
		x += inc;
	A[i] = x;
}

// Thread t of n works on element (t % q) * 4 + t / q, q = n / 4: a warp's
// 32 threads touch 32 different 32-byte sectors, and over the whole grid each
// element is read once and written once.
__global__ void kernel_C(double *A, const double *B, long n, double inc)
{
	long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
	long q = n / 4;
	if (t >= n)
		return;
	long e = (t % q) * 4 + t / q;
	A[e] = B[e] + inc;
}

static int check_ab(const char *name, const std::vector<double> &h, double inc)
{
	long bad = 0;
	for (size_t i = 0; i < h.size(); i++) {
		// inc = 0.5 and integer starts: every partial sum is exact.
		double want = (double)(i & 1023) + NADD * inc;
		if (h[i] != want && bad++ < 5)
			fprintf(stderr, "%s: A[%zu] = %.17g, want %.17g\n", name, i,
				h[i], want);
	}
	printf("%s: check %s (%ld of %zu wrong)\n", name, bad ? "FAILED" : "ok",
	       bad, h.size());
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	int dev = 0, sms = 0, smem_sm = 0, smem_optin = 0, maxw = 0;
	cudaDeviceProp p;
	CK(cudaGetDevice(&dev));
	CK(cudaGetDeviceProperties(&p, dev));
	sms = p.multiProcessorCount;
	smem_sm = (int)p.sharedMemPerMultiprocessor;
	smem_optin = (int)p.sharedMemPerBlockOptin;
	maxw = p.maxThreadsPerMultiProcessor / 32;
	printf("device %d: %s, cc %d.%d, %d SMs, %d B shared/SM, %d warps/SM\n",
	       dev, p.name, p.major, p.minor, sms, smem_sm, maxw);

	const double inc = 0.5;
	long na = quick ? 64L * 1024 : 1L << 20; // kernel_A threads
	int tpb_a = 256;
	int tpb_b = 64;
	long nb = (long)tpb_b * sms * (quick ? 1 : 4); // a few waves of one block per SM
	long nc = quick ? 1L << 20 : 1L << 24;         // kernel_C elements
	int tpb_c = 256;
	// More than half the SM's shared memory, within the per-block opt-in:
	// only one block of kernel_B fits on an SM.
	int smem_b = smem_sm / 2 + 1024;
	if (smem_b > smem_optin)
		smem_b = smem_optin;

	double *dA, *dC, *dB;
	CK(cudaMalloc(&dA, sizeof(double) * (na > nb ? na : nb)));
	CK(cudaMalloc(&dC, sizeof(double) * nc));
	CK(cudaMalloc(&dB, sizeof(double) * nc));
	std::vector<double> hb(nc);
	for (long i = 0; i < nc; i++)
		hb[i] = (double)((i * 7919) % 4096) * 0.25;
	CK(cudaMemcpy(dB, hb.data(), sizeof(double) * nc, cudaMemcpyHostToDevice));
	CK(cudaMemset(dC, 0xff, sizeof(double) * nc)); // poison: NaNs

	int fails = 0;
	std::vector<double> h;

	CK(cudaMemset(dA, 0xff, sizeof(double) * na));
	kernel_A<<<(unsigned)((na + tpb_a - 1) / tpb_a), tpb_a>>>(dA, na, inc);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	h.resize(na);
	CK(cudaMemcpy(h.data(), dA, sizeof(double) * na, cudaMemcpyDeviceToHost));
	printf("kernel_A: %ld threads x %d double adds = %.17g FLOP, %ld B stored, "
	       "grid %ld block %d\n", na, NADD, (double)na * NADD, na * 8,
	       (na + tpb_a - 1) / tpb_a, tpb_a);
	fails += check_ab("kernel_A", h, inc);

	CK(cudaFuncSetAttribute(kernel_B, cudaFuncAttributeMaxDynamicSharedMemorySize,
				smem_b));
	int per_sm = 0;
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_B, tpb_b,
							 smem_b));
	CK(cudaMemset(dA, 0xff, sizeof(double) * nb));
	kernel_B<<<(unsigned)((nb + tpb_b - 1) / tpb_b), tpb_b, smem_b>>>(dA, nb, inc);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	h.resize(nb);
	CK(cudaMemcpy(h.data(), dA, sizeof(double) * nb, cudaMemcpyDeviceToHost));
	printf("kernel_B: %ld threads x %d double adds = %.17g FLOP, %ld B stored, "
	       "grid %ld block %d, %d B dynamic shared, %d block(s)/SM = "
	       "occupancy %.4g%%\n", nb, NADD, (double)nb * NADD, nb * 8,
	       (nb + tpb_b - 1) / tpb_b, tpb_b, smem_b, per_sm,
	       100.0 * per_sm * tpb_b / 32 / maxw);
	fails += check_ab("kernel_B", h, inc);

	kernel_C<<<(unsigned)((nc + tpb_c - 1) / tpb_c), tpb_c>>>(dC, dB, nc, inc);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	h.resize(nc);
	CK(cudaMemcpy(h.data(), dC, sizeof(double) * nc, cudaMemcpyDeviceToHost));
	long bad = 0;
	for (long i = 0; i < nc; i++)
		if (h[i] != hb[i] + inc && bad++ < 5)
			fprintf(stderr, "kernel_C: A[%ld] = %.17g, want %.17g\n", i,
				h[i], hb[i] + inc);
	printf("kernel_C: %ld elements, 1 double add each = %ld FLOP, %ld B loaded "
	       "+ %ld B stored, stride 32 B within a warp, grid %ld block %d\n",
	       nc, nc, nc * 8, nc * 8, (nc + tpb_c - 1) / tpb_c, tpb_c);
	printf("kernel_C: check %s (%ld of %ld wrong)\n", bad ? "FAILED" : "ok",
	       bad, nc);
	fails += bad ? 1 : 0;

	CK(cudaFree(dA));
	CK(cudaFree(dB));
	CK(cudaFree(dC));
	printf("kernel_abc: %s\n", fails ? "FAILED" : "all checks passed");
	return fails ? 1 : 0;
}
