// tensor_mixed.cu - one kernel that does tensor-core and CUDA-core work, so
// that the analysis must show two points of it apart, each against its own
// roof: a tensor fp16 point (wmma 16x16x16, fp16 in, fp32 accumulate) and a
// CUDA-core fp32 point (FFMA chains).
//
// Usage: tensor_mixed [blocks] [mma_iters] [ffma_iters] [fp16|bf16]
//   defaults 528 blocks (4 per H100 SM), 2048, 4096, fp16; 256 threads a
//   block.  bf16 (sm_80 and later) is the datapath the default metric set
//   of the H100 counts; fp16 needs the ncu step's extra: [tensor_fp16].
// Per warp, mma_iters wmma::mma_sync of 16x16x16 = 2*16^3 = 8192 FLOPs each;
// per thread, 4 independent chains of ffma_iters FFMAs (2 FLOPs each), then
// FADDs to combine them.  The program prints what the counters must give:
//   tensor_mixed blocks=528 threads=256 mma_iters=2048 ffma_iters=4096
//     tensor_flops=... ffma_flops=...
// and checks the results against the same arithmetic done on the CPU.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#define CK(call)                                                               \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "tensor_mixed: %s failed: %s (%s:%d)\n", \
				#call, cudaGetErrorString(e_), __FILE__,       \
				__LINE__);                                     \
			exit(1);                                               \
		}                                                              \
	} while (0)

using namespace nvcuda;

enum { THREADS = 256, WARPS = THREADS / 32 };

// a, b: one 16x16 tile of T each (row- and column-major).  acc_out: one
// 16x16 fp32 tile per warp.  x_out: one float per thread.
template <typename T>
__global__ void __launch_bounds__(THREADS)
tensor_mixed(const T *a, const T *b, float *acc_out, float *x_out,
	     int mma_iters, int ffma_iters, float y, float z)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
	wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
	wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
	long tid = (long)blockIdx.x * blockDim.x + threadIdx.x;
	long warp = tid / 32;

	wmma::load_matrix_sync(fa, a, 16);
	wmma::load_matrix_sync(fb, b, 16);
	wmma::fill_fragment(acc, 0.0f);
	for (int i = 0; i < mma_iters; i++)
		wmma::mma_sync(acc, fa, fb, acc);
	wmma::store_matrix_sync(acc_out + warp * 256, acc, 16, wmma::mem_row_major);

	float x0 = threadIdx.x * 1e-3f, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;
	for (int i = 0; i < ffma_iters; i++) {
		x0 = fmaf(x0, y, z);
		x1 = fmaf(x1, y, z);
		x2 = fmaf(x2, y, z);
		x3 = fmaf(x3, y, z);
	}
	x_out[tid] = (x0 + x1) + (x2 + x3);
#endif
}

int main(int argc, char **argv)
{
	int blocks = argc > 1 ? atoi(argv[1]) : 528;
	int mma_iters = argc > 2 ? atoi(argv[2]) : 2048;
	int ffma_iters = argc > 3 ? atoi(argv[3]) : 4096;
	const char *type = argc > 4 ? argv[4] : "fp16";
	bool bf16 = strcmp(type, "bf16") == 0;
	if (blocks <= 0 || mma_iters <= 0 || ffma_iters <= 0 ||
	    (!bf16 && strcmp(type, "fp16") != 0)) {
		fprintf(stderr, "usage: tensor_mixed [blocks>0] [mma_iters>0] [ffma_iters>0] [fp16|bf16]\n");
		return 2;
	}
	long threads = (long)blocks * THREADS, warps = threads / 32;
	// Entries 0 or 1/16: every product and sum below is exact in fp16/fp32
	// (a row of A times a column of B is at most 16/256; summed mma_iters
	// times it stays a multiple of 1/256 far below 2^24/256).
	// 2-byte elements: fp16 or bf16 bits, both exact for 0 and 1/16.
	std::vector<unsigned short> ha(256), hb(256);
	std::vector<float> fa(256), fb(256);
	for (int i = 0; i < 256; i++) {
		fa[i] = (i * 7 % 3 == 0) ? 0.0625f : 0.0f;
		fb[i] = (i * 5 % 4 == 1) ? 0.0625f : 0.0f;
		if (bf16) {
			__nv_bfloat16 x = __float2bfloat16(fa[i]), w = __float2bfloat16(fb[i]);
			memcpy(&ha[i], &x, 2);
			memcpy(&hb[i], &w, 2);
		} else {
			__half x = __float2half(fa[i]), w = __float2half(fb[i]);
			memcpy(&ha[i], &x, 2);
			memcpy(&hb[i], &w, 2);
		}
	}
	void *a, *b;
	float *acc, *x;
	CK(cudaMalloc(&a, 256 * 2));
	CK(cudaMalloc(&b, 256 * 2));
	CK(cudaMalloc(&acc, warps * 256 * sizeof(float)));
	CK(cudaMalloc(&x, threads * sizeof(float)));
	CK(cudaMemcpy(a, ha.data(), 256 * 2, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(b, hb.data(), 256 * 2, cudaMemcpyHostToDevice));
	const float y = 0.5f, z = 0.25f; // x -> x/2 + 1/4: exact, converges to 0.5
	if (bf16)
		tensor_mixed<__nv_bfloat16><<<blocks, THREADS>>>((const __nv_bfloat16 *)a,
			(const __nv_bfloat16 *)b, acc, x, mma_iters, ffma_iters, y, z);
	else
		tensor_mixed<__half><<<blocks, THREADS>>>((const __half *)a, (const __half *)b,
			acc, x, mma_iters, ffma_iters, y, z);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());

	std::vector<float> hacc(warps * 256), hx(threads);
	CK(cudaMemcpy(hacc.data(), acc, hacc.size() * sizeof(float), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(hx.data(), x, hx.size() * sizeof(float), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 16; c++) {
			float d = 0; // A row-major (r,k) = a[r*16+k]; B col-major (k,c) = b[c*16+k]
			for (int k = 0; k < 16; k++)
				d += fa[r * 16 + k] * fb[c * 16 + k];
			float want = d * (float)mma_iters;
			for (long w = 0; w < warps; w += warps / 7 + 1)
				if (hacc[w * 256 + r * 16 + c] != want && bad++ < 3)
					fprintf(stderr, "tensor_mixed: warp %ld acc[%d][%d] = %g, expected %g\n",
						w, r, c, hacc[w * 256 + r * 16 + c], want);
		}
	for (long t = 0; t < threads; t += threads / 13 + 1) {
		float v[4] = { (t % THREADS) * 1e-3f, 0, 0, 0 };
		v[1] = v[0] + 1, v[2] = v[0] + 2, v[3] = v[0] + 3;
		for (int i = 0; i < ffma_iters; i++)
			for (int j = 0; j < 4; j++)
				v[j] = fmaf(v[j], y, z);
		float want = (v[0] + v[1]) + (v[2] + v[3]);
		if (hx[t] != want && bad++ < 6)
			fprintf(stderr, "tensor_mixed: x[%ld] = %g, expected %g\n", t, hx[t], want);
	}
	// The loop's FFMAs; the compiler adds a few FADD/FMUL per thread around
	// it (set-up and the final sum: 7 on sm_90, under 0.03 % of the FLOPs).
	printf("tensor_mixed type=%s blocks=%d threads=%d mma_iters=%d ffma_iters=%d "
	       "tensor_flops=%.0f ffma_flops=%.0f check=%s\n",
	       type, blocks, THREADS, mma_iters, ffma_iters,
	       2.0 * 16 * 16 * 16 * (double)mma_iters * warps,
	       2.0 * 4 * ffma_iters * threads, bad ? "FAILED" : "ok");
	cudaFree(a);
	cudaFree(b);
	cudaFree(acc);
	cudaFree(x);
	return bad ? 1 : 0;
}
