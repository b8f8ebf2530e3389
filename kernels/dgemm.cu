// dgemm.cu - a cuBLAS DGEMM, C = alpha A B + beta C, the compute-bound
// reference.  2 m n k FLOPs; on sm_80 and later cuBLAS runs it on the FP64
// tensor path (DMMA), which ncu counts in sm__ops_path_tensor_src_fp64 and
// not in the DFMA instruction counters.
//
// Usage: dgemm [n] [repeats]   (square n x n x n, default 4096, 3)
// Times `repeats` calls after a warm-up with CUDA events, prints GFLOP/s, and
// checks 64 entries of C against a CPU dot product (relative error < 1e-12).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CK(call)                                                               \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "dgemm: %s failed: %s (%s:%d)\n", #call, \
				cudaGetErrorString(e_), __FILE__, __LINE__);   \
			exit(1);                                               \
		}                                                              \
	} while (0)
#define CB(call)                                                               \
	do {                                                                   \
		cublasStatus_t s_ = (call);                                    \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                             \
			fprintf(stderr, "dgemm: %s failed: status %d (%s:%d)\n", \
				#call, (int)s_, __FILE__, __LINE__);           \
			exit(1);                                               \
		}                                                              \
	} while (0)

static unsigned long long st = 2463534242ULL;
static double rnd(void) // in [-1, 1)
{
	st = st * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(st >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4096;
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	if (n <= 0 || reps <= 0) {
		fprintf(stderr, "usage: dgemm [n>0] [repeats>0]\n");
		return 2;
	}
	size_t nn = (size_t)n * n;
	std::vector<double> hA(nn), hB(nn), hC(nn);
	for (size_t i = 0; i < nn; i++) {
		hA[i] = rnd();
		hB[i] = rnd();
	}
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, 0));
	double *A, *B, *C;
	CK(cudaMalloc(&A, nn * sizeof(double)));
	CK(cudaMalloc(&B, nn * sizeof(double)));
	CK(cudaMalloc(&C, nn * sizeof(double)));
	CK(cudaMemcpy(A, hA.data(), nn * sizeof(double), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(B, hB.data(), nn * sizeof(double), cudaMemcpyHostToDevice));
	CK(cudaMemset(C, 0xff, nn * sizeof(double)));
	cublasHandle_t h;
	CB(cublasCreate(&h));
	const double alpha = 1.0, beta = 0.0;
	// column-major: C = A B
	CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, n, B, n,
		       &beta, C, n)); // warm-up
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	std::vector<float> ms(reps);
	for (int r = 0; r < reps; r++) {
		CK(cudaEventRecord(e0));
		CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, n,
			       B, n, &beta, C, n));
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms[r], e0, e1));
	}
	CK(cudaMemcpy(hC.data(), C, nn * sizeof(double), cudaMemcpyDeviceToHost));
	double maxrel = 0.0;
	int bad = 0;
	for (int t = 0; t < 64; t++) {
		int i = (int)((t * 2654435761u) % (unsigned)n);
		int j = (int)((t * 40503u + 7u) % (unsigned)n);
		double want = 0.0, mag = 0.0;
		for (int k = 0; k < n; k++) {
			want += hA[(size_t)k * n + i] * hB[(size_t)j * n + k];
			mag += fabs(hA[(size_t)k * n + i] * hB[(size_t)j * n + k]);
		}
		double rel = fabs(hC[(size_t)j * n + i] - want) / mag;
		if (!(rel < 1e-12))
			bad++;
		maxrel = std::max(maxrel, rel);
	}
	std::vector<float> s(ms);
	std::sort(s.begin(), s.end());
	double flops = 2.0 * n * (double)n * n;
	printf("dgemm: %s, cuBLAS DGEMM n=m=k=%d (%.17g FLOP per call), %d timed calls\n",
	       p.name, n, flops, reps);
	printf("dgemm: best %.6g ms = %.6g GFLOP/s, median %.6g ms = %.6g GFLOP/s\n",
	       s[0], flops / s[0] * 1e-6, s[reps / 2], flops / s[reps / 2] * 1e-6);
	printf("dgemm: check %s (64 entries vs CPU, max |err|/sum|a b| %.3g)\n",
	       bad ? "FAILED" : "ok", maxrel);
	CB(cublasDestroy(h));
	CK(cudaFree(A));
	CK(cudaFree(B));
	CK(cudaFree(C));
	return bad ? 1 : 0;
}
