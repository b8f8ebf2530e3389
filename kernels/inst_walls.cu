// inst_walls.cu - the memory walls of the Instruction Roofline (Ding and
// Williams, PMBS'19) and the seeds' shared-memory experiment, on the GPU:
// kernels whose memory instructions make a known number of transactions
// each, so that Nsight Compute's counts place the walls
// (docs/instruction-roofline.md).
//
//   walls_global<S>    every thread of a warp loads one 4-byte word at
//                      index base + lane * S (S = 0, 1, 2, 4, 8, 16, 32 words):
//                      S = 0 is one sector per request, S = 1 the unit-stride
//                      wall (4 sectors of 32 B per 128 B request), S >= 8 the
//                      fully uncoalesced wall (32 sectors per request)
//   walls_shared<W>    every thread reads shared word lane * W (W = 1, 2, 4,
//                      8, 16, 32): a W-way bank conflict, W wavefronts per
//                      request (32 banks of 4 bytes)
//   transpose_naive    32 x 32 tiles of a float matrix through shared memory,
//                      tile[32][32]: the column read is a 32-way conflict
//   transpose_padded   the same with tile[32][33]: no conflict
//
// Usage: inst_walls [walls|transpose|all] [n]
//   n: the transpose's matrix side (default 8192, a multiple of 32).  Every
//   kernel runs once; the transposes are checked against the CPU and the
//   walls' sums against their closed form; a wrong result exits 1.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CK(call)                                                               \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "inst_walls: %s failed: %s (%s:%d)\n", \
				#call, cudaGetErrorString(e_), __FILE__,       \
				__LINE__);                                     \
			exit(1);                                               \
		}                                                              \
	} while (0)

enum { WALL_BLOCKS = 1056, WALL_THREADS = 256, WALL_ITERS = 64 };

// in[] holds 1 everywhere; each thread sums WALL_ITERS loads: the sum is
// WALL_ITERS whatever S.  The warp's loads of one iteration touch words
// base + lane * S, base a multiple of 32 words (128 B aligned) that moves by
// 32 * max(S, 1) words per iteration, so no two loads share a sector.
template <int S>
__global__ void __launch_bounds__(WALL_THREADS) walls_global(const float *in, float *out,
							     unsigned mask)
{
	unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
	float s = 0;

	for (int i = 0; i < WALL_ITERS; i++) {
		unsigned base = (warp * WALL_ITERS + i) * 32u * (S ? S : 1);
		s += in[(base + lane * S) & mask];
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Shared word lane * W: bank (lane * W) % 32, so W lanes share a bank at
// distinct addresses (W-way conflict).  The buffer holds 1.0f everywhere.
template <int W>
__global__ void __launch_bounds__(WALL_THREADS) walls_shared(float *out)
{
	__shared__ float buf[32 * 32 + 32];
	unsigned lane = threadIdx.x & 31;
	float s = 0;

	for (unsigned i = threadIdx.x; i < sizeof(buf) / sizeof(buf[0]); i += blockDim.x)
		buf[i] = 1.0f;
	__syncthreads();
	for (int i = 0; i < WALL_ITERS; i++) {
		// (i & 1) keeps the address loop-variant without changing the bank
		volatile float *p = buf;
		s += p[(lane * W + (i & 1) * 32) % (32 * 32 + 32)];
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Named kernels, so that ncu prints transpose_naive / transpose_padded.
__global__ void __launch_bounds__(1024) transpose_naive(const float *in, float *out, int n)
{
	__shared__ float tile[32][32];
	int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;

	tile[threadIdx.y][threadIdx.x] = in[(size_t)y * n + x];
	__syncthreads();
	x = blockIdx.y * 32 + threadIdx.x;
	y = blockIdx.x * 32 + threadIdx.y;
	out[(size_t)y * n + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void __launch_bounds__(1024) transpose_padded(const float *in, float *out, int n)
{
	__shared__ float tile[32][33];
	int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;

	tile[threadIdx.y][threadIdx.x] = in[(size_t)y * n + x];
	__syncthreads();
	x = blockIdx.y * 32 + threadIdx.x;
	y = blockIdx.x * 32 + threadIdx.y;
	out[(size_t)y * n + x] = tile[threadIdx.x][threadIdx.y];
}

static int check_sums(const float *d_out, size_t count, float want, const char *what)
{
	std::vector<float> h(count);

	CK(cudaMemcpy(h.data(), d_out, count * sizeof(float), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < count; i++)
		if (h[i] != want) {
			fprintf(stderr, "inst_walls: %s: out[%zu] = %g, expected %g\n", what, i,
				h[i], want);
			return 1;
		}
	printf("inst_walls kernel=%s check=ok\n", what);
	return 0;
}

template <int S> static int run_global(const float *in, float *out, unsigned mask)
{
	char name[32];

	walls_global<S><<<WALL_BLOCKS, WALL_THREADS>>>(in, out, mask);
	CK(cudaGetLastError());
	snprintf(name, sizeof(name), "walls_global<%d>", S);
	return check_sums(out, (size_t)WALL_BLOCKS * WALL_THREADS, (float)WALL_ITERS, name);
}

template <int W> static int run_shared(float *out)
{
	char name[32];

	walls_shared<W><<<WALL_BLOCKS, WALL_THREADS>>>(out);
	CK(cudaGetLastError());
	snprintf(name, sizeof(name), "walls_shared<%d>", W);
	return check_sums(out, (size_t)WALL_BLOCKS * WALL_THREADS, (float)WALL_ITERS, name);
}

static int walls(void)
{
	const size_t words = (size_t)1 << 26; // 256 MiB: beyond the 50 MiB L2
	std::vector<float> ones(words, 1.0f);
	float *in, *out;
	int bad = 0;

	CK(cudaMalloc(&in, words * sizeof(float)));
	CK(cudaMalloc(&out, (size_t)WALL_BLOCKS * WALL_THREADS * sizeof(float)));
	CK(cudaMemcpy(in, ones.data(), words * sizeof(float), cudaMemcpyHostToDevice));
	unsigned mask = (unsigned)(words - 1);
	bad |= run_global<0>(in, out, mask);
	bad |= run_global<1>(in, out, mask);
	bad |= run_global<2>(in, out, mask);
	bad |= run_global<4>(in, out, mask);
	bad |= run_global<8>(in, out, mask);
	bad |= run_global<16>(in, out, mask);
	bad |= run_global<32>(in, out, mask);
	bad |= run_shared<1>(out);
	bad |= run_shared<2>(out);
	bad |= run_shared<4>(out);
	bad |= run_shared<8>(out);
	bad |= run_shared<16>(out);
	bad |= run_shared<32>(out);
	CK(cudaFree(in));
	CK(cudaFree(out));
	return bad;
}

static int transpose(int n)
{
	size_t nn = (size_t)n * n;
	std::vector<float> h(nn), t(nn);
	float *in, *out;
	int bad = 0;

	for (size_t i = 0; i < nn; i++)
		h[i] = (float)(i % 65521);
	CK(cudaMalloc(&in, nn * sizeof(float)));
	CK(cudaMalloc(&out, nn * sizeof(float)));
	CK(cudaMemcpy(in, h.data(), nn * sizeof(float), cudaMemcpyHostToDevice));
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "transpose_padded" : "transpose_naive";

		CK(cudaMemset(out, 0, nn * sizeof(float)));
		if (k)
			transpose_padded<<<dim3(n / 32, n / 32), dim3(32, 32)>>>(in, out, n);
		else
			transpose_naive<<<dim3(n / 32, n / 32), dim3(32, 32)>>>(in, out, n);
		CK(cudaGetLastError());
		CK(cudaMemcpy(t.data(), out, nn * sizeof(float), cudaMemcpyDeviceToHost));
		size_t wrong = 0;
		for (size_t r = 0; r < (size_t)n; r++)
			for (size_t c = 0; c < (size_t)n; c++)
				wrong += t[c * n + r] != h[r * n + c];
		printf("inst_walls kernel=%s n=%d check=%s\n", name, n, wrong ? "FAILED" : "ok");
		bad |= wrong != 0;
	}
	CK(cudaFree(in));
	CK(cudaFree(out));
	return bad;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	int n = argc > 2 ? atoi(argv[2]) : 8192;
	bool w = !strcmp(what, "walls") || !strcmp(what, "all");
	bool t = !strcmp(what, "transpose") || !strcmp(what, "all");
	int bad = 0;

	if ((!w && !t) || n <= 0 || n % 32) {
		fprintf(stderr, "usage: inst_walls [walls|transpose|all] [n, a multiple of 32]\n");
		return 2;
	}
	if (w)
		bad |= walls();
	if (t)
		bad |= transpose(n);
	return bad ? 1 : 0;
}
