// gemm_lt.cu - one cuBLASLt GEMM per call, D = A^T B, in each tensor-core
// precision of the H100, for the adaptive metric set (docs/collect.md): its
// tensor datapath must count 2 m n k FLOPs (operations for int8) with the
// default set alone.
//
// Usage: gemm_lt TYPE [n] [timed]
//   TYPE   fp16 | bf16   A, B 16-bit, D fp32, CUBLAS_COMPUTE_32F
//          tf32          A, B, D fp32, CUBLAS_COMPUTE_32F_FAST_TF32
//          int8          A, B int8, D int32, CUBLAS_COMPUTE_32I
//          fp8           A, B e4m3, D fp32, CUBLAS_COMPUTE_32F (sm_89+)
//   n      m = n = k (default 4096, a multiple of 16)
//   timed  GEMMs timed with CUDA events after the first (default 0: under
//          Nsight Compute every launch the program makes is that one GEMM)
// cublasLtMatmul with the layouts of cuBLASLt's FP8 rule (A transposed, B
// not: "TN"), the first algorithm its heuristic returns and a 32 MiB
// workspace.  Inputs are small integers (-2..2), exact in every type, so D is
// exact (|D| <= 4 n < 2^24): 64 entries are checked against a CPU dot product
// and the program fails on any difference.  Prints:
//   gemm_lt type=fp8 m=4096 n=4096 k=4096 flops=137438953472 check=ok
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#define CK(call)                                                               \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "gemm_lt: %s failed: %s (%s:%d)\n",    \
				#call, cudaGetErrorString(e_), __FILE__,       \
				__LINE__);                                     \
			exit(1);                                               \
		}                                                              \
	} while (0)
#define CB(call)                                                               \
	do {                                                                   \
		cublasStatus_t s_ = (call);                                    \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                             \
			fprintf(stderr, "gemm_lt: %s failed: status %d (%s:%d)\n", \
				#call, (int)s_, __FILE__, __LINE__);           \
			exit(1);                                               \
		}                                                              \
	} while (0)

struct gemm_type {
	const char *name;
	cudaDataType_t ab, d, scale;
	cublasComputeType_t compute;
	size_t ab_size, d_size;
};

static const gemm_type types[] = {
	{ "fp16", CUDA_R_16F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 4 },
	{ "bf16", CUDA_R_16BF, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 4 },
	{ "tf32", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4 },
	{ "int8", CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, 1, 4 },
	{ "fp8", CUDA_R_8F_E4M3, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1, 4 },
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
	} else if (t.ab == CUDA_R_8F_E4M3) {
		__nv_fp8_e4m3 x((float)v);
		memcpy(p, &x, 1);
	} else {
		int8_t x = (int8_t)v;
		memcpy(p, &x, 1);
	}
}

struct plan {
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t a, b, d;
	cublasLtMatmulHeuristicResult_t algo;
	void *ws;
	size_t ws_size;
};

static void plan_make(cublasLtHandle_t h, const gemm_type &t, int n, plan &p)
{
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	cublasLtMatmulPreference_t pref;
	int found = 0;

	p.ws_size = 32u << 20;
	CK(cudaMalloc(&p.ws, p.ws_size));
	CB(cublasLtMatmulDescCreate(&p.op, t.compute, t.scale));
	CB(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
	CB(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
	// column-major: A is k x m (lda k), B k x n (ldb k), D m x n (ldd m)
	CB(cublasLtMatrixLayoutCreate(&p.a, t.ab, n, n, n));
	CB(cublasLtMatrixLayoutCreate(&p.b, t.ab, n, n, n));
	CB(cublasLtMatrixLayoutCreate(&p.d, t.d, n, n, n));
	CB(cublasLtMatmulPreferenceCreate(&pref));
	CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						&p.ws_size, sizeof(p.ws_size)));
	CB(cublasLtMatmulAlgoGetHeuristic(h, p.op, p.a, p.b, p.d, p.d, pref, 1,
					  &p.algo, &found));
	cublasLtMatmulPreferenceDestroy(pref);
	if (!found) {
		fprintf(stderr, "gemm_lt: cuBLASLt has no algorithm for %s\n", t.name);
		exit(1);
	}
}

static void gemm(cublasLtHandle_t h, const gemm_type &t, const plan &p,
		 const void *A, const void *B, void *D)
{
	const float af = 1, bf = 0;
	const int32_t ai = 1, bi = 0;
	bool i32 = t.compute == CUBLAS_COMPUTE_32I;

	CB(cublasLtMatmul(h, p.op, i32 ? (const void *)&ai : (const void *)&af, A, p.a,
			  B, p.b, i32 ? (const void *)&bi : (const void *)&bf, D, p.d,
			  D, p.d, &p.algo.algo, p.ws, p.ws_size, 0));
}

static int check(const gemm_type &t, int n, const std::vector<int> &a,
		 const std::vector<int> &b, const std::vector<unsigned char> &hd)
{
	int bad = 0;

	for (int s = 0; s < 64; s++) {
		size_t i = (size_t)(s * 7919) % n, j = (size_t)(s * 104729) % n;
		long ref = 0;
		double got;

		for (int l = 0; l < n; l++) // D[i][j] = sum_l A[l + i k] B[l + j k]
			ref += (long)a[i * n + l] * b[j * n + l];
		if (t.d == CUDA_R_32I) {
			int32_t x;
			memcpy(&x, hd.data() + (i + j * n) * 4, 4);
			got = x;
		} else {
			float x;
			memcpy(&x, hd.data() + (i + j * n) * 4, 4);
			got = x;
		}
		if (got != (double)ref && bad++ < 3)
			fprintf(stderr, "gemm_lt: D[%zu][%zu] = %.1f, expected %ld\n",
				i, j, got, ref);
	}
	return bad;
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
		fprintf(stderr, "usage: gemm_lt fp16|bf16|tf32|int8|fp8 [n, a multiple of 16] [timed>=0]\n");
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
	void *A, *B, *D;
	CK(cudaMalloc(&A, nn * t->ab_size));
	CK(cudaMalloc(&B, nn * t->ab_size));
	CK(cudaMalloc(&D, nn * t->d_size));
	CK(cudaMemcpy(A, ha.data(), ha.size(), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(B, hb.data(), hb.size(), cudaMemcpyHostToDevice));
	CK(cudaMemset(D, 0xff, nn * t->d_size));
	cublasLtHandle_t h;
	plan p;
	CB(cublasLtCreate(&h));
	plan_make(h, *t, n, p);
	gemm(h, *t, p, A, B, D);
	CK(cudaDeviceSynchronize());

	std::vector<unsigned char> hd(nn * t->d_size);
	CK(cudaMemcpy(hd.data(), D, hd.size(), cudaMemcpyDeviceToHost));
	int bad = check(*t, n, a, b, hd);
	double flops = 2.0 * n * n * (double)n;
	printf("gemm_lt type=%s m=%d n=%d k=%d flops=%.0f check=%s\n", t->name, n, n,
	       n, flops, bad ? "FAILED" : "ok");
	if (timed > 0) {
		cudaEvent_t e0, e1;
		float ms;
		CK(cudaEventCreate(&e0));
		CK(cudaEventCreate(&e1));
		CK(cudaEventRecord(e0));
		for (int r = 0; r < timed; r++)
			gemm(h, *t, p, A, B, D);
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		printf("gemm_lt type=%s timed=%d ms_per_gemm=%.4f tflops=%.1f\n", t->name,
		       timed, ms / timed, flops / (ms / timed * 1e-3) / 1e12);
	}
	cublasLtMatmulDescDestroy(p.op);
	cublasLtMatrixLayoutDestroy(p.a);
	cublasLtMatrixLayoutDestroy(p.b);
	cublasLtMatrixLayoutDestroy(p.d);
	cublasLtDestroy(h);
	cudaFree(p.ws);
	cudaFree(A);
	cudaFree(B);
	cudaFree(D);
	return bad ? 1 : 0;
}
