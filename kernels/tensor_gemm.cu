// tensor_gemm.cu - one cuBLAS GEMM on the tensor cores, C = A^T B, for the
// tensor-core FLOP check of the metric set (docs/collect.md): 2 m n k FLOPs
// (operations for int8) that the tensor datapath of the type must count.
//
// Usage: tensor_gemm TYPE [n] [timed]
//   TYPE   bf16 | fp16   A, B 16-bit, C fp32, CUBLAS_COMPUTE_32F
//          tf32          A, B, C fp32, CUBLAS_COMPUTE_32F_FAST_TF32
//          int8          A, B int8, C int32, CUBLAS_COMPUTE_32I
//   n      m = n = k (default 4096, a multiple of 16)
//   timed  GEMMs timed with CUDA events after the first (default 0: under
//          Nsight Compute every launch the program makes belongs to that one
//          GEMM, so their tensor FLOPs must add up to 2 n^3)
// The inputs are small integers (-2..2), exact in every type, so C is exact
// too (|C| <= 4 n < 2^24): 64 entries are checked against a CPU dot product
// and the program fails on any difference.  Prints one line per fact:
//   tensor_gemm type=bf16 m=4096 n=4096 k=4096 flops=137438953472 ...
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CK(call)                                                               \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "tensor_gemm: %s failed: %s (%s:%d)\n", \
				#call, cudaGetErrorString(e_), __FILE__,       \
				__LINE__);                                     \
			exit(1);                                               \
		}                                                              \
	} while (0)
#define CB(call)                                                               \
	do {                                                                   \
		cublasStatus_t s_ = (call);                                    \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                             \
			fprintf(stderr, "tensor_gemm: %s failed: status %d (%s:%d)\n", \
				#call, (int)s_, __FILE__, __LINE__);           \
			exit(1);                                               \
		}                                                              \
	} while (0)

struct gemm_type {
	const char *name;
	cudaDataType_t ab, c;
	cublasComputeType_t compute;
	size_t ab_size, c_size;
};

static const gemm_type types[] = {
	{ "bf16", CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 4 },
	{ "fp16", CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 4 },
	{ "tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4 },
	{ "int8", CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, 1, 4 },
};

static unsigned long long st = 2463534242ULL;
static int rnd_small(void) // in -2..2
{
	st = st * 6364136223846793005ULL + 1442695040888963407ULL;
	return (int)((st >> 33) % 5) - 2;
}

// Store small integer v as element i of a buffer of type t.
static void put(const gemm_type &t, std::vector<unsigned char> &buf, size_t i,
		int v)
{
	unsigned char *p = buf.data() + i * t.ab_size;
	if (t.ab == CUDA_R_16BF) {
		__nv_bfloat16 x = __float2bfloat16((float)v);
		memcpy(p, &x, 2);
	} else if (t.ab == CUDA_R_16F) {
		__half x = __float2half((float)v);
		memcpy(p, &x, 2);
	} else if (t.ab == CUDA_R_32F) {
		float x = (float)v;
		memcpy(p, &x, 4);
	} else {
		int8_t x = (int8_t)v;
		memcpy(p, &x, 1);
	}
}

static void gemm(cublasHandle_t h, const gemm_type &t, int n, const void *A,
		 const void *B, void *C)
{
	const float af = 1, bf = 0;
	const int32_t ai = 1, bi = 0;
	const void *alpha = t.compute == CUBLAS_COMPUTE_32I ? (const void *)&ai
							    : (const void *)&af;
	const void *beta = t.compute == CUBLAS_COMPUTE_32I ? (const void *)&bi
							   : (const void *)&bf;
	// column-major: A is k x m (lda k), B k x n (ldb k), C m x n (ldc m)
	CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, alpha, A, t.ab, n,
			B, t.ab, n, beta, C, t.c, n, t.compute,
			CUBLAS_GEMM_DEFAULT));
}

int main(int argc, char **argv)
{
	const gemm_type *t = nullptr;
	for (const gemm_type &x : types)
		if (argc > 1 && strcmp(argv[1], x.name) == 0)
			t = &x;
	int n = argc > 2 ? atoi(argv[2]) : 4096;
	int timed = argc > 3 ? atoi(argv[3]) : 0;
	if (!t || n <= 0 || n % 16 || timed < 0) {
		fprintf(stderr, "usage: tensor_gemm bf16|fp16|tf32|int8 [n, a multiple of 16] [timed>=0]\n");
		return 2;
	}
	size_t nn = (size_t)n * n;
	std::vector<int> a(nn), b(nn);
	std::vector<unsigned char> ha(nn * t->ab_size), hb(nn * t->ab_size);
	for (size_t i = 0; i < nn; i++) {
		a[i] = rnd_small();
		b[i] = rnd_small();
		put(*t, ha, i, a[i]);
		put(*t, hb, i, b[i]);
	}
	void *A, *B, *C;
	CK(cudaMalloc(&A, nn * t->ab_size));
	CK(cudaMalloc(&B, nn * t->ab_size));
	CK(cudaMalloc(&C, nn * t->c_size));
	CK(cudaMemcpy(A, ha.data(), ha.size(), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(B, hb.data(), hb.size(), cudaMemcpyHostToDevice));
	CK(cudaMemset(C, 0xff, nn * t->c_size));
	cublasHandle_t h;
	CB(cublasCreate(&h));
	gemm(h, *t, n, A, B, C);
	CK(cudaDeviceSynchronize());

	std::vector<unsigned char> hc(nn * t->c_size);
	CK(cudaMemcpy(hc.data(), C, hc.size(), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int s = 0; s < 64; s++) {
		size_t i = (size_t)(s * 7919) % n, j = (size_t)(s * 104729) % n;
		long ref = 0;
		for (int l = 0; l < n; l++) // C[i][j] = sum_l A[l + i k] B[l + j k]
			ref += (long)a[(size_t)i * n + l] * b[(size_t)j * n + l];
		double got;
		if (t->c == CUDA_R_32I) {
			int32_t x;
			memcpy(&x, hc.data() + (i + j * n) * 4, 4);
			got = x;
		} else {
			float x;
			memcpy(&x, hc.data() + (i + j * n) * 4, 4);
			got = x;
		}
		if (got != (double)ref) {
			if (bad++ < 3)
				fprintf(stderr, "tensor_gemm: C[%zu][%zu] = %.1f, expected %ld\n",
					i, j, got, ref);
		}
	}
	double flops = 2.0 * n * n * (double)n;
	printf("tensor_gemm type=%s m=%d n=%d k=%d flops=%.0f check=%s\n", t->name,
	       n, n, n, flops, bad ? "FAILED" : "ok");
	if (timed > 0) {
		cudaEvent_t e0, e1;
		float ms;
		CK(cudaEventCreate(&e0));
		CK(cudaEventCreate(&e1));
		CK(cudaEventRecord(e0));
		for (int r = 0; r < timed; r++)
			gemm(h, *t, n, A, B, C);
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		printf("tensor_gemm type=%s timed=%d ms_per_gemm=%.4f tflops=%.1f\n",
		       t->name, timed, ms / timed, flops / (ms / timed * 1e-3) / 1e12);
	}
	cublasDestroy(h);
	cudaFree(A);
	cudaFree(B);
	cudaFree(C);
	return bad ? 1 : 0;
}
