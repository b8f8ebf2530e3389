// stream_triad.cu - McCalpin's STREAM triad, a[i] = b[i] + s * c[i], in
// double precision: the bandwidth-bound reference kernel.  2 FLOPs (one DFMA)
// and 24 bytes of compulsory DRAM traffic per element: AI = 1/12.
//
// Usage: stream_triad [n_elements] [repeats]   (default 2^26 elements, 5)
// Launches the triad `repeats` times after one warm-up launch, times each with
// CUDA events, prints the best and median bandwidth and checks every element.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(call)                                                               \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "stream_triad: %s failed: %s (%s:%d)\n", \
				#call, cudaGetErrorString(e_), __FILE__,       \
				__LINE__);                                     \
			exit(1);                                               \
		}                                                              \
	} while (0)

__global__ void triad(double *__restrict__ a, const double *__restrict__ b,
		      const double *__restrict__ c, double s, long n)
{
	long stride = (long)gridDim.x * blockDim.x;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		a[i] = b[i] + s * c[i];
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1L << 26;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	if (n <= 0 || reps <= 0) {
		fprintf(stderr, "usage: stream_triad [n_elements>0] [repeats>0]\n");
		return 2;
	}
	const double s = 3.0;
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, 0));
	int tpb = 256;
	int blocks = p.multiProcessorCount * (p.maxThreadsPerMultiProcessor / tpb) * 4;

	std::vector<double> hb(n), hc(n), ha(n);
	for (long i = 0; i < n; i++) { // small integers and halves: exact results
		hb[i] = (double)(i % 1024);
		hc[i] = 0.5 * (double)(i % 7);
	}
	double *a, *b, *c;
	CK(cudaMalloc(&a, n * sizeof(double)));
	CK(cudaMalloc(&b, n * sizeof(double)));
	CK(cudaMalloc(&c, n * sizeof(double)));
	CK(cudaMemcpy(b, hb.data(), n * sizeof(double), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c, hc.data(), n * sizeof(double), cudaMemcpyHostToDevice));
	CK(cudaMemset(a, 0xff, n * sizeof(double)));

	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	triad<<<blocks, tpb>>>(a, b, c, s, n); // warm-up
	CK(cudaGetLastError());
	std::vector<float> ms(reps);
	for (int r = 0; r < reps; r++) {
		CK(cudaEventRecord(e0));
		triad<<<blocks, tpb>>>(a, b, c, s, n);
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaGetLastError());
		CK(cudaEventElapsedTime(&ms[r], e0, e1));
	}
	CK(cudaMemcpy(ha.data(), a, n * sizeof(double), cudaMemcpyDeviceToHost));
	long bad = 0;
	for (long i = 0; i < n; i++)
		if (ha[i] != hb[i] + s * hc[i] && bad++ < 5)
			fprintf(stderr, "stream_triad: a[%ld] = %.17g, want %.17g\n",
				i, ha[i], hb[i] + s * hc[i]);
	std::vector<float> sorted(ms);
	std::sort(sorted.begin(), sorted.end());
	double bytes = 24.0 * n, flops = 2.0 * n;
	printf("stream_triad: %s, n=%ld (%.17g B compulsory, %.17g FLOP per launch), "
	       "grid %d block %d, %d timed launches\n", p.name, n, bytes, flops,
	       blocks, tpb, reps);
	printf("stream_triad: best %.6g ms = %.6g GB/s, median %.6g ms = %.6g GB/s\n",
	       sorted[0], bytes / sorted[0] * 1e-6, sorted[reps / 2],
	       bytes / sorted[reps / 2] * 1e-6);
	printf("stream_triad: check %s (%ld of %ld wrong)\n", bad ? "FAILED" : "ok",
	       bad, n);
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	return bad ? 1 : 0;
}
