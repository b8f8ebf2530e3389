/*
 * bench/l2-explore.cu - an EXPLORATION tool, not a ceiling: how the L2 read
 * rate of ert-bench's grid-stride sweep kernel depends on the launch length,
 * the working set and the geometry, trial by trial.  Written for issue 13
 * (the L2 rate of long launches differed from the sweep's), kept with the
 * output it gave (docs/ceilings.md).
 *
 * The kernel is the same access pattern as k_sweep_gs in
 * plugins/ert/bench_memory.cu: the whole grid reads the set as one array,
 * thread t at t, t+T, t+2T... modulo the set, UNR ld.global.cg of 16 bytes
 * in flight per thread.  For each working set, geometry and launch length it
 * prints one line per timed launch (after one untimed launch):
 *   trial ws_bytes blocks threads unr ms k rate_Bps
 *
 * Build: nvcc -O3 -arch=sm_90 -o l2-explore bench/l2-explore.cu
 */
#include <cstdio>
#include <cstdlib>

static void ck(cudaError_t e, const char *what, int line)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "l2-explore:%d: %s: %s\n", line, what,
			cudaGetErrorString(e));
		exit(1);
	}
}
#define CK(x) ck((x), #x, __LINE__)

__device__ __forceinline__ float4 ld_cg(const float4 *p)
{
	float4 v;

	asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];"
		     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
		     : "l"(p));
	return v;
}

template <int UNR>
__global__ void k_gs(const float4 *buf, int nvec, long loads, float *out)
{
	const long T = (long)gridDim.x * blockDim.x;
	const int step = (int)(T % nvec);
	int i = (int)((blockIdx.x * (long)blockDim.x + threadIdx.x) % nvec);
	float s = 0;

	for (long f = 0; f < loads; f += UNR) {
		float4 v[UNR];
#pragma unroll
		for (int u = 0; u < UNR; u++) {
			v[u] = ld_cg(buf + i);
			i += step;
			i = i >= nvec ? i - nvec : i;
		}
#pragma unroll
		for (int u = 0; u < UNR; u++)
			s += v[u].x + v[u].y + v[u].z + v[u].w;
	}
	if (s == -1.0f)
		out[0] = s;
}

__global__ void k_fill(float4 *p, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = make_float4(1.0f, 1.5f, 0.5f, 1.25f);
}

static void run(const float4 *buf, float *out, long ws, int blocks,
		int threads, int unr, double ms, int trials, int sms)
{
	const int nvec = (int)(ws / 16);
	const long T = (long)blocks * threads;
	cudaEvent_t e0, e1;
	float t;
	long loads;

	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	/* about 8 TB/s x ms of loads, then the first launch's rate sets it */
	loads = (long)(8e12 * ms * 1e-3 / (16.0 * T)) / 4 * 4;
	for (int k = -1; k < trials; k++) {
		CK(cudaEventRecord(e0));
		if (unr == 2)
			k_gs<2><<<blocks, threads>>>(buf, nvec, loads, out);
		else
			k_gs<4><<<blocks, threads>>>(buf, nvec, loads, out);
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&t, e0, e1));
		if (k >= 0)
			printf("trial\tws_bytes=%ld\tblocks=%d\tthreads=%d\tunr=%d"
			       "\tms=%.3f\tk=%d\trate_Bps=%.6g\n", ws, blocks,
			       threads, unr, t, k, 16.0 * T * loads / (t * 1e-3));
	}
	CK(cudaGetLastError());
	(void)sms;
}

int main(void)
{
	static const long ws[] = {5931008, 11857920, 23719936};
	static const double len[] = {1, 10, 100};
	int sms;
	float4 *buf;
	float *out;

	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaMalloc(&buf, 64 << 20));
	CK(cudaMalloc(&out, 64));
	k_fill<<<(64 << 20) / 16 / 256, 256>>>(buf, (64 << 20) / 16);
	CK(cudaGetLastError());
	for (long w : ws)
		for (double ms : len) {
			run(buf, out, w, sms, 1024, 2, ms, 5, sms);
			run(buf, out, w, 2 * sms, 1024, 4, ms, 5, sms);
		}
	return 0;
}
