/*
 * ert_bench.h - internal interface between the parts of ert-bench (CUDA C++).
 *
 * ert-bench is one program built from plugins/ert/bench_*.cu:
 *   bench_main.cu     command line, device attributes, NVML clocks (dlopen),
 *                     the measuring harness and the TSV output
 *   bench_compute.cu  FP64/FP32/FP16x2 FMA and add-only register loops
 *   bench_instr.cu    warp instructions per second (the Instruction Roofline)
 *   bench_tensor.cu   tensor-core loops: mma.sync (sm_80+) and wgmma (sm_90a)
 *   bench_memory.cu   L1, shared memory, the sweep, the L2 ceiling
 *   bench_hbm.cu      HBM triad/read/write
 *   bench_p2p.cu      peer-to-peer bandwidth between the GPUs (--p2p)
 *   (bench_mem.h: what the last two share)
 *
 * Each bench_* file adds its figures through the harness below; the harness
 * owns the timing (CUDA events), the geometry search, the trials and the
 * output.  Nothing here is visible outside the program.
 */
#ifndef ERT_BENCH_H
#define ERT_BENCH_H

#include <cuda_runtime.h>
#include "plateau.h"
#include <functional>
#include <string>
#include <vector>

/*
 * Block 0 thread 0 of a clocked kernel marks its start (end = 0) and end
 * (end = 1) with the SM cycle counter and the global nanosecond timer, so the
 * host can tell the SM clock the kernel really ran at.
 */
#ifdef __CUDACC__
__device__ __forceinline__ void ert_clk_mark(unsigned long long *clk, int end)
{
	if (clk && blockIdx.x == 0 && threadIdx.x == 0) {
		unsigned long long t;

		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		clk[2 * end] = clock64();
		clk[2 * end + 1] = t;
	}
}
#endif

/* Exit statuses of ert-bench. */
enum {
	ERT_EXIT_OK = 0,
	ERT_EXIT_FAIL = 1,    /* a CUDA call or a result check failed */
	ERT_EXIT_USAGE = 2,
	ERT_EXIT_NODEV = 3,   /* no CUDA device (or no driver) */
};

/* Groups of figures, selectable with --only. */
enum {
	ERT_G_FP64 = 1u << 0,
	ERT_G_FP32 = 1u << 1,
	ERT_G_FP16 = 1u << 2,
	ERT_G_TENSOR = 1u << 3,
	ERT_G_HBM = 1u << 4,
	ERT_G_L2 = 1u << 5,   /* the working-set sweep */
	ERT_G_L1 = 1u << 6,
	ERT_G_SHARED = 1u << 7,
	ERT_G_ALL = 0xffu,    /* the default: every group but those below */
	ERT_G_INST = 1u << 8, /* opt-in: warp instructions (bench_instr.cu) */
};

struct ert_opts {
	int quick;          /* nightly mode: fewer candidates, shorter trials */
	int trials;         /* timed trials per figure */
	int sweep_trials;   /* timed trials per sweep point */
	double target_ms;   /* aimed duration of one timed launch */
	double warm_ms;     /* least warm-up time before the trials */
	unsigned groups;    /* ERT_G_* */
	const char *mode;   /* --mode label for every ceiling line, or NULL */
};

/* One GPU being measured. */
struct ert_gpu {
	int index;
	int sm_count;
	int cc_major, cc_minor;
	size_t l2_bytes;
	size_t smem_per_sm;
	size_t smem_optin;   /* per block, after cudaFuncSetAttribute */
	size_t mem_bytes;
	const struct ert_opts *opts;
	void *nvml;          /* nvmlDevice_t or NULL */
	cudaStream_t stream;
	cudaEvent_t ev0, ev1;
	float *scratch;      /* device, ERT_SCRATCH_FLOATS floats: kernel results */
	unsigned long long *clk; /* device, 4 values: see ert_clk_mark() */
	double gpu_time_s;   /* sum of every timed launch on this GPU */
	long launches;
};

#define ERT_SCRATCH_FLOATS (1u << 22)

/*
 * One launch geometry a figure can be measured with.  launch(reps) enqueues
 * one kernel launch doing `reps` repetitions on g->stream and returns the
 * work it does (FLOP, OP or bytes); reps scales the duration linearly.
 */
struct ert_cand {
	std::string geometry;  /* e.g. "grid=528x1 block=256 ilp=8" */
	std::function<double(long reps)> launch;
	long reps0 = 1;        /* repetitions for the first, calibrating launch */
	bool fixed = false;    /* no calibration: every launch does reps0 */
	long ws_bytes = 0;     /* working set of the launch (bandwidth), or 0 */
	bool clocked = false;  /* the kernel calls ert_clk_mark(g->clk, ...) */
	/*
	 * Optional: called once after the trials with the reps they used; checks
	 * the results the last launch left and returns false when one is wrong.
	 */
	std::function<bool(long reps)> check;
};

/*
 * Measure one figure: calibrate and time each candidate once, keep the
 * fastest, warm it up, time opts->trials launches sampling the clocks, print a
 * `ceiling` line.  The winner's check (if any) runs after the trials; a wrong
 * result makes the program fail.  Exits the program on a CUDA error.
 */
void ert_measure(struct ert_gpu *g, const char *name, const char *kind,
		 const char *unit, std::vector<ert_cand> &cands);

/*
 * One sweep point: time `trials` launches of cand, print a `sweep` line;
 * returns the point (ws, median, min, max of the trials).
 */
struct plateau_point ert_sweep_point(struct ert_gpu *g, const char *series,
				     const char *level_guess, ert_cand &cand);

/*
 * One sweep point with several geometry candidates: each is timed once, the
 * fastest is measured by ert_sweep_point (whose point it returns).
 */
struct plateau_point ert_sweep_best(struct ert_gpu *g, const char *series,
				    const char *level_guess,
				    std::vector<ert_cand> &cands);

/* Abort with a message naming the call when err is not cudaSuccess. */
void ert_cuda_check(cudaError_t err, const char *what, const char *file,
		    int line);
#define CK(call) ert_cuda_check((call), #call, __FILE__, __LINE__)

/* Print a line to stdout: type then key=value fields (already formatted). */
void ert_print(const char *type, const std::vector<std::string> &kv);
std::string ert_kv(const char *key, const std::string &value);
std::string ert_kvd(const char *key, double value);   /* %.17g */
std::string ert_kvl(const char *key, long long value);

/* bench_core.cu: load NVML (once, before any ert_nvml_*; without it they
 * report nothing), the monotonic clock in seconds, whether a result check
 * failed (exit status 1 at the end), and a GPU's `attr` line. */
void ert_nvml_open(void);
double ert_now_s(void);
bool ert_failed(void);
void ert_print_attributes(int dev);

/* NVML, when it loaded (else these answer "nothing"): the handle of CUDA
 * device dev or NULL; a clock/power sample (false: none); whether NVML says
 * a and b talk over NVLink (1), not (0), or it cannot tell (-1). */
struct ert_clock_sample {
	unsigned sm, mem, power_mw;
	unsigned long long reasons;
};
void *ert_nvml_device(int dev);
bool ert_nvml_sample(void *dev, struct ert_clock_sample *s);
int ert_nvml_p2p_nvlink(void *a, void *b);

/* The benchmark families. */
void ert_bench_compute(struct ert_gpu *g);
void ert_bench_instr(struct ert_gpu *g);
void ert_bench_tensor(struct ert_gpu *g);
void ert_bench_memory(struct ert_gpu *g);
/*
 * The peer-to-peer matrix over gpus (bench_p2p.cu); topo_path: a captured
 * `nvidia-smi topo -m` or NULL.  Returns 1 when a copy was wrong, else 0.
 */
int ert_bench_p2p(const std::vector<int> &gpus, const struct ert_opts *o,
		  const char *topo_path);

#endif /* ERT_BENCH_H */
