/*
 * ert-bench - empirical roofline ceilings of NVIDIA GPUs (ERT-style).
 *
 * Usage: ert-bench [--quick] [--attributes] [--gpu K[,K...]] [--trials N]
 *                  [--only GROUP[,GROUP...]] [--target-ms MS] [--mode LABEL]
 *                  [--start-at EPOCH_S] [--p2p [--topo FILE]]
 *   --attributes  print one `attr` line per GPU and nothing else
 *   --quick       the nightly mode: fewer geometry candidates, shorter trials
 *   --gpu K       measure GPU K only (repeatable or comma list; default: all,
 *                 one after the other)
 *   --only G      groups: fp64 fp32 fp16 tensor hbm l2 l1 shared (default all;
 *                 l2 is the working-set sweep and the l2 ceiling), and inst
 *                 (warp instructions per second; only when named)
 *   --mode LABEL  add mode=LABEL to every ceiling line ("concurrent" when
 *                 bench/multi-gpu.sh runs one ert-bench per GPU at once,
 *                 "sequential" one GPU after the other); letters, digits,
 *                 '_' and '-' only
 *   --start-at T  after CUDA is set up, wait until the wall clock reads T
 *                 (seconds since the epoch): processes started apart begin
 *                 measuring together
 *   --p2p         measure the peer-to-peer matrix of the GPUs instead
 *                 (bench_p2p.cu: `link` lines and p2p_* ceiling lines with
 *                 a peer= field)
 *   --topo FILE   with --p2p: the captured `nvidia-smi topo -m`, whose label
 *                 of each pair (NV18, SYS...) goes into topo=
 * Exit status: 0 ok, 1 a CUDA error (at once) or a wrong result (at the end,
 * after every figure was printed), 2 usage, 3 no CUDA
 * device or driver ("no CUDA device: ..." on stderr).
 *
 * OUTPUT (stdout), one record per line, TAB-separated.  Field 1 is the line
 * type; every other field is key=value, split at the first '='; values never
 * hold a TAB or a newline.  Lines starting with '#' are comments.  Numbers
 * are base units (FLOP/s, OP/s, B/s, bytes, seconds, MHz, W) printed "%.17g".
 *
 *   attr     gpu name uuid pci cc sm_count sm_clock_max_mhz mem_clock_max_mhz
 *            bus_width_bits l2_bytes smem_per_sm_bytes smem_per_block_optin_bytes
 *            mem_bytes driver cuda_runtime cuda_driver nvml
 *   ceiling  gpu name kind unit trials min median max spread_pct
 *            sm_clock_mhz mem_clock_mhz sm_clock_min_mhz sm_clock_max_mhz
 *            sm_clock_eff_mhz power_w throttle geometry ws_bytes reps
 *            trial_s candidates check [mode]
 *            (a figure from a dedicated kernel; value = median over trials;
 *            `l2` is measured at the sweep's fastest sizes in
 *            [L2 size / 16, L2 size], see bench_memory.cu;
 *            check: ok, fail (a wrong result: exit status 1 at the end) or
 *            none (nothing to check);
 *            clocks are NVML samples taken while the trials ran: median,
 *            min, max; sm_clock_eff_mhz: SM cycles / elapsed ns of block 0
 *            in the last trial (clock64 and %globaltimer; 0 when the kernel
 *            does not mark them); throttle is the OR of NVML's clock-event
 *            reasons, hex)
 *   sweep    gpu series level_guess ws_bytes value unit min max trials
 *            sm_clock_mhz mem_clock_mhz geometry
 *            (one working-set size; series "ca": default-cached loads, L1
 *            allowed; "cg": L2 and below (ld.global.cg, or, for
 *            grid-stride candidates, ld.global.L1::no_allocate, as the
 *            geometry says); level_guess is from the capacities only, the
 *            plateaus are found by the caller)
 *   link     gpu peer access atomics perf_rank nvlink topo
 *            (--p2p only: one per ordered pair, see bench_p2p.cu)
 *   ceiling  (--p2p) gpu peer name kind unit trials min median max
 *            spread_pct sm_clock_mhz mem_clock_mhz power_w throttle geometry
 *            ws_bytes reps trial_s directions topo [mode] check
 *            (names p2p_read p2p_write p2p_memcpy for ordered pairs,
 *            p2p_*_bidir for gpu < peer; see bench_p2p.cu)
 *   gpu_done gpu gpu_time_s launches wall_s
 *            (gpu_time_s: sum of every timed launch, calibration included)
 *   done     gpus wall_s
 *
 * Method: CUDA events around each launch; every figure first times each
 * geometry candidate once (after a calibrating launch that sizes the run to
 * target_ms), keeps the fastest, warms it up (at least warm_ms, so that
 * clocks and power settle), then times `trials` launches.
 * Data are never zero: buffers are filled with hashed values in [0.5, 1.5).
 * Compute loops keep their values in registers and store a sum of them that
 * the host checks (FP64/FP32: bit-exact against a CPU replay).
 */
#include "ert_bench.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <thread>
#include <unistd.h>

/* ---- NVML, loaded at run time (no link dependency, works without it) ---- */

typedef void *nvml_dev_t;
static struct {
	int ok;
	int (*init)(void);
	int (*by_pci)(const char *, nvml_dev_t *);
	int (*clock)(nvml_dev_t, int, unsigned *);
	int (*driver)(char *, unsigned);
	int (*uuid)(nvml_dev_t, char *, unsigned);
	int (*reasons)(nvml_dev_t, unsigned long long *);
	int (*power)(nvml_dev_t, unsigned *);
	int (*p2p)(nvml_dev_t, nvml_dev_t, int, int *);
} nvml;

enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_P2P_CAPS_INDEX_NVLINK = 2, NVML_P2P_STATUS_OK = 0 };

static void nvml_open(void)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	nvml.init = (int (*)(void))dlsym(h, "nvmlInit_v2");
	nvml.by_pci = (int (*)(const char *, nvml_dev_t *))dlsym(
		h, "nvmlDeviceGetHandleByPciBusId_v2");
	nvml.clock = (int (*)(nvml_dev_t, int, unsigned *))dlsym(
		h, "nvmlDeviceGetClockInfo");
	nvml.driver = (int (*)(char *, unsigned))dlsym(
		h, "nvmlSystemGetDriverVersion");
	nvml.uuid = (int (*)(nvml_dev_t, char *, unsigned))dlsym(
		h, "nvmlDeviceGetUUID");
	nvml.reasons = (int (*)(nvml_dev_t, unsigned long long *))dlsym(
		h, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!nvml.reasons)
		nvml.reasons = (int (*)(nvml_dev_t, unsigned long long *))dlsym(
			h, "nvmlDeviceGetCurrentClocksThrottleReasons");
	nvml.power = (int (*)(nvml_dev_t, unsigned *))dlsym(
		h, "nvmlDeviceGetPowerUsage");
	nvml.p2p = (int (*)(nvml_dev_t, nvml_dev_t, int, int *))dlsym(
		h, "nvmlDeviceGetP2PStatus");
	if (nvml.init && nvml.by_pci && nvml.clock && nvml.init() == 0)
		nvml.ok = 1;
}

bool ert_nvml_sample(void *dev, struct ert_clock_sample *s)
{
	memset(s, 0, sizeof(*s));
	if (!nvml.ok || !dev)
		return false;
	if (nvml.clock((nvml_dev_t)dev, NVML_CLOCK_SM, &s->sm) != 0 ||
	    nvml.clock((nvml_dev_t)dev, NVML_CLOCK_MEM, &s->mem) != 0)
		return false;
	if (nvml.power)
		nvml.power((nvml_dev_t)dev, &s->power_mw);
	if (nvml.reasons)
		nvml.reasons((nvml_dev_t)dev, &s->reasons);
	return true;
}

int ert_nvml_p2p_nvlink(void *a, void *b)
{
	int st = -1;

	if (!nvml.ok || !nvml.p2p || !a || !b ||
	    nvml.p2p((nvml_dev_t)a, (nvml_dev_t)b, NVML_P2P_CAPS_INDEX_NVLINK,
		     &st) != 0)
		return -1;
	return st == NVML_P2P_STATUS_OK;
}

/* ---- output ---- */

void ert_print(const char *type, const std::vector<std::string> &kv)
{
	std::string line(type);

	for (const std::string &f : kv)
		line += "\t" + f;
	line += "\n";
	fputs(line.c_str(), stdout);
	fflush(stdout);
}

std::string ert_kv(const char *key, const std::string &value)
{
	std::string v(value);

	std::replace(v.begin(), v.end(), '\t', ' ');
	std::replace(v.begin(), v.end(), '\n', ' ');
	return std::string(key) + "=" + v;
}

std::string ert_kvd(const char *key, double value)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.17g", value);
	return ert_kv(key, buf);
}

std::string ert_kvl(const char *key, long long value)
{
	return ert_kv(key, std::to_string(value));
}

void ert_cuda_check(cudaError_t err, const char *what, const char *file,
		    int line)
{
	if (err == cudaSuccess)
		return;
	fprintf(stderr, "ert-bench: %s failed: %s (%s:%d)\n", what,
		cudaGetErrorString(err), file, line);
	exit(ERT_EXIT_FAIL);
}

/* ---- timing harness ---- */

static int g_failed; /* a result check failed: exit status 1 at the end */

static double now_s(void)
{
	using namespace std::chrono;
	return duration<double>(steady_clock::now().time_since_epoch()).count();
}

/* Time one launch with events; adds to the GPU's time.  Returns seconds. */
static double time_launch(struct ert_gpu *g, ert_cand &c, long reps,
			  double *work, struct ert_clock_sample *sample,
			  double expect_s)
{
	float ms = 0;

	CK(cudaEventRecord(g->ev0, g->stream));
	*work = c.launch(reps);
	CK(cudaGetLastError());
	CK(cudaEventRecord(g->ev1, g->stream));
	if (sample) {
		/* read the clocks while the kernel runs, halfway through */
		if (expect_s > 0)
			std::this_thread::sleep_for(
				std::chrono::duration<double>(expect_s / 2));
		ert_nvml_sample(g->nvml, sample);
	}
	CK(cudaEventSynchronize(g->ev1));
	CK(cudaEventElapsedTime(&ms, g->ev0, g->ev1));
	g->gpu_time_s += ms * 1e-3;
	g->launches++;
	return ms * 1e-3;
}

/*
 * Size reps so that one launch lasts about target_ms; returns reps (reps0
 * itself for a candidate with a fixed launch).
 */
static long calibrate(struct ert_gpu *g, ert_cand &c)
{
	double target = g->opts->target_ms * 1e-3, work, t;
	long reps = c.reps0 > 0 ? c.reps0 : 1;

	if (c.fixed)
		return reps;

	for (;;) {
		t = time_launch(g, c, reps, &work, NULL, 0);
		if (t >= target / 16 || reps > (1L << 40))
			break;
		reps *= 8;
	}
	double scaled = (double)reps * target / (t > 0 ? t : 1e-9);
	return std::max(1L, (long)scaled);
}

static double median_of(std::vector<double> v)
{
	size_t n = v.size();

	if (n == 0)
		return 0;
	std::sort(v.begin(), v.end());
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * With ERT_CANDIDATES set in the environment, every candidate's one timed
 * launch is written to stderr (not to the TSV on stdout):
 *   candidate  gpu=K  name=FIGURE  rate=WORK/S  geometry=...
 */
static void cand_note(struct ert_gpu *g, const char *name, const ert_cand &c,
		      double rate)
{
	static int on = -1;

	if (on < 0)
		on = getenv("ERT_CANDIDATES") != NULL;
	if (on)
		fprintf(stderr, "candidate\tgpu=%d\tname=%s\trate=%.6g\tws_bytes=%ld"
			"\tgeometry=%s\n", g->index, name, rate, c.ws_bytes,
			c.geometry.c_str());
}

void ert_measure(struct ert_gpu *g, const char *name, const char *kind,
		 const char *unit, std::vector<ert_cand> &cands)
{
	size_t best = 0;
	long best_reps = 1;
	double best_rate = -1, work, t;

	for (size_t i = 0; i < cands.size(); i++) {
		long reps = calibrate(g, cands[i]);

		t = time_launch(g, cands[i], reps, &work, NULL, 0);
		cand_note(g, name, cands[i], work / t);
		if (work / t > best_rate) {
			best_rate = work / t;
			best = i;
			best_reps = reps;
		}
	}
	ert_cand &c = cands[best];
	/* a fixed launch may be short: sample its clocks at once */
	double expect = c.fixed ? 0 : g->opts->target_ms * 1e-3;
	std::vector<double> rates, sm, mem, pw;
	unsigned long long reasons = 0;

	/* warm up for at least warm_ms: clocks and power settle first */
	for (double w = 0; w < g->opts->warm_ms * 1e-3;)
		w += time_launch(g, c, best_reps, &work, NULL, 0);
	if (c.clocked)
		CK(cudaMemset(g->clk, 0, 4 * sizeof(*g->clk)));
	for (int i = 0; i < g->opts->trials; i++) {
		struct ert_clock_sample s;

		t = time_launch(g, c, best_reps, &work, &s, expect);
		rates.push_back(work / t);
		if (s.sm) {
			sm.push_back(s.sm);
			mem.push_back(s.mem);
			pw.push_back(s.power_mw * 1e-3);
			reasons |= s.reasons;
		}
	}
	const char *checked = "none";
	if (c.check) {
		checked = c.check(best_reps) ? "ok" : "fail";
		if (!strcmp(checked, "fail")) {
			fprintf(stderr, "ert-bench: gpu %d: %s: wrong result (%s)\n",
				g->index, name, c.geometry.c_str());
			g_failed = 1;
		}
	}
	double eff = 0;
	if (c.clocked) {
		unsigned long long k[4];

		CK(cudaMemcpy(k, g->clk, sizeof(k), cudaMemcpyDeviceToHost));
		if (k[3] > k[1])
			eff = (double)(k[2] - k[0]) / (double)(k[3] - k[1]) * 1e3;
	}
	double med = median_of(rates);
	double lo = *std::min_element(rates.begin(), rates.end());
	double hi = *std::max_element(rates.begin(), rates.end());
	char rs[32];

	snprintf(rs, sizeof(rs), "0x%llx", reasons);
	std::vector<std::string> kv =
		  {ert_kvl("gpu", g->index), ert_kv("name", name),
		   ert_kv("kind", kind), ert_kv("unit", unit),
		   ert_kvl("trials", (long long)rates.size()), ert_kvd("min", lo),
		   ert_kvd("median", med), ert_kvd("max", hi),
		   ert_kvd("spread_pct", (hi - lo) / med * 100),
		   ert_kvd("sm_clock_mhz", median_of(sm)),
		   ert_kvd("mem_clock_mhz", median_of(mem)),
		   ert_kvd("sm_clock_min_mhz",
			   sm.empty() ? 0 : *std::min_element(sm.begin(), sm.end())),
		   ert_kvd("sm_clock_max_mhz",
			   sm.empty() ? 0 : *std::max_element(sm.begin(), sm.end())),
		   ert_kvd("sm_clock_eff_mhz", eff),
		   ert_kvd("power_w", median_of(pw)), ert_kv("throttle", rs),
		   ert_kv("geometry", c.geometry), ert_kvl("ws_bytes", c.ws_bytes),
		   ert_kvl("reps", best_reps),
		   ert_kvd("trial_s", work / med),
		   ert_kvl("candidates", (long long)cands.size()),
		   ert_kv("check", checked)};
	if (g->opts->mode && *g->opts->mode)
		kv.push_back(ert_kv("mode", g->opts->mode));
	ert_print("ceiling", kv);
}

struct plateau_point ert_sweep_point(struct ert_gpu *g, const char *series,
				     const char *level_guess, ert_cand &c)
{
	struct plateau_point pt;

	long reps = c.reps0;
	double work, t;
	std::vector<double> rates, sm, mem;

	time_launch(g, c, reps, &work, NULL, 0); /* warm-up */
	for (int i = 0; i < g->opts->sweep_trials; i++) {
		struct ert_clock_sample s;

		t = time_launch(g, c, reps, &work, i == 0 ? &s : NULL, 0);
		rates.push_back(work / t);
		if (i == 0 && s.sm) {
			sm.push_back(s.sm);
			mem.push_back(s.mem);
		}
	}
	ert_print("sweep",
		  {ert_kvl("gpu", g->index), ert_kv("series", series),
		   ert_kv("level_guess", level_guess),
		   ert_kvl("ws_bytes", c.ws_bytes),
		   ert_kvd("value", median_of(rates)), ert_kv("unit", "B/s"),
		   ert_kvd("min", *std::min_element(rates.begin(), rates.end())),
		   ert_kvd("max", *std::max_element(rates.begin(), rates.end())),
		   ert_kvl("trials", (long long)rates.size()),
		   ert_kvd("sm_clock_mhz", median_of(sm)),
		   ert_kvd("mem_clock_mhz", median_of(mem)),
		   ert_kv("geometry", c.geometry)});
	pt.ws = (double)c.ws_bytes;
	pt.value = median_of(rates);
	pt.min = *std::min_element(rates.begin(), rates.end());
	pt.max = *std::max_element(rates.begin(), rates.end());
	return pt;
}

/*
 * One sweep point with several geometry candidates (declared in
 * bench_memory.cu): one untimed launch of the first fills the caches, each
 * candidate is timed once, and the fastest is measured by ert_sweep_point
 * (its own warm-up launch and trials).  The `geometry` field of the sweep
 * line names the winner.
 */
struct plateau_point ert_sweep_best(struct ert_gpu *g, const char *series,
				    const char *level_guess,
				    std::vector<ert_cand> &cands)
{
	size_t best = 0;
	double best_rate = -1, work, t;

	if (cands.size() > 1) {
		time_launch(g, cands[0], cands[0].reps0, &work, NULL, 0);
		for (size_t i = 0; i < cands.size(); i++) {
			t = time_launch(g, cands[i], cands[i].reps0, &work, NULL, 0);
			cand_note(g, series, cands[i], work / t);
			if (work / t > best_rate) {
				best_rate = work / t;
				best = i;
			}
		}
	}
	return ert_sweep_point(g, series, level_guess, cands[best]);
}

/* ---- device attributes ---- */

static std::string uuid_text(const cudaUUID_t &u)
{
	const unsigned char *b = (const unsigned char *)u.bytes;
	char s[64];
	int n = snprintf(s, sizeof(s), "GPU-");

	for (int i = 0; i < 16; i++) {
		n += snprintf(s + n, sizeof(s) - n, "%02x", b[i]);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			n += snprintf(s + n, sizeof(s) - n, "-");
	}
	return s;
}

static std::string version_text(int v)
{
	return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

void *ert_nvml_device(int dev)
{
	char pci[32];
	nvml_dev_t h = NULL;

	if (!nvml.ok || cudaDeviceGetPCIBusId(pci, sizeof(pci), dev) != cudaSuccess)
		return NULL;
	return nvml.by_pci(pci, &h) == 0 ? h : NULL;
}

static void print_attributes(int dev)
{
	cudaDeviceProp p;
	int clk = 0, mclk = 0, rt = 0, drv = 0;
	char pci[32] = "", driver[96] = "unknown";

	CK(cudaGetDeviceProperties(&p, dev));
	CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev));
	CK(cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, dev));
	CK(cudaRuntimeGetVersion(&rt));
	CK(cudaDriverGetVersion(&drv));
	CK(cudaDeviceGetPCIBusId(pci, sizeof(pci), dev));
	if (nvml.ok && nvml.driver && nvml.driver(driver, sizeof(driver)) != 0)
		snprintf(driver, sizeof(driver), "unknown");
	ert_print("attr",
		  {ert_kvl("gpu", dev), ert_kv("name", p.name),
		   ert_kv("uuid", uuid_text(p.uuid)), ert_kv("pci", pci),
		   ert_kv("cc", std::to_string(p.major) + "." +
					std::to_string(p.minor)),
		   ert_kvl("sm_count", p.multiProcessorCount),
		   ert_kvd("sm_clock_max_mhz", clk / 1000.0),
		   ert_kvd("mem_clock_max_mhz", mclk / 1000.0),
		   ert_kvl("bus_width_bits", p.memoryBusWidth),
		   ert_kvl("l2_bytes", p.l2CacheSize),
		   ert_kvl("smem_per_sm_bytes", (long long)p.sharedMemPerMultiprocessor),
		   ert_kvl("smem_per_block_optin_bytes",
			   (long long)p.sharedMemPerBlockOptin),
		   ert_kvl("mem_bytes", (long long)p.totalGlobalMem),
		   ert_kv("driver", driver), ert_kv("cuda_runtime", version_text(rt)),
		   ert_kv("cuda_driver", version_text(drv)),
		   ert_kvl("nvml", nvml.ok)});
}

/* ---- one GPU ---- */

static void run_gpu(int dev, const struct ert_opts *o)
{
	struct ert_gpu g;
	cudaDeviceProp p;
	double t0 = now_s();

	memset(&g, 0, sizeof(g));
	CK(cudaSetDevice(dev));
	CK(cudaGetDeviceProperties(&p, dev));
	g.index = dev;
	g.opts = o;
	g.sm_count = p.multiProcessorCount;
	g.cc_major = p.major;
	g.cc_minor = p.minor;
	g.l2_bytes = p.l2CacheSize;
	g.smem_per_sm = p.sharedMemPerMultiprocessor;
	g.smem_optin = p.sharedMemPerBlockOptin;
	g.mem_bytes = p.totalGlobalMem;
	g.nvml = ert_nvml_device(dev);
	CK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
	CK(cudaEventCreate(&g.ev0));
	CK(cudaEventCreate(&g.ev1));
	CK(cudaMalloc(&g.scratch, ERT_SCRATCH_FLOATS * sizeof(float)));
	CK(cudaMalloc(&g.clk, 4 * sizeof(*g.clk)));
	print_attributes(dev);
	if (o->groups & (ERT_G_FP64 | ERT_G_FP32 | ERT_G_FP16))
		ert_bench_compute(&g);
	if (o->groups & (ERT_G_HBM | ERT_G_L2 | ERT_G_L1 | ERT_G_SHARED))
		ert_bench_memory(&g);
	if (o->groups & ERT_G_TENSOR)
		ert_bench_tensor(&g);
	if (o->groups & ERT_G_INST)
		ert_bench_instr(&g);
	CK(cudaStreamSynchronize(g.stream));
	ert_print("gpu_done", {ert_kvl("gpu", dev),
			       ert_kvd("gpu_time_s", g.gpu_time_s),
			       ert_kvl("launches", g.launches),
			       ert_kvd("wall_s", now_s() - t0)});
	CK(cudaFree(g.scratch));
	CK(cudaFree(g.clk));
	CK(cudaEventDestroy(g.ev0));
	CK(cudaEventDestroy(g.ev1));
	CK(cudaStreamDestroy(g.stream));
}

/* ---- command line ---- */

static const struct {
	const char *name;
	unsigned bit;
} group_names[] = {
	{"fp64", ERT_G_FP64}, {"fp32", ERT_G_FP32}, {"fp16", ERT_G_FP16},
	{"tensor", ERT_G_TENSOR}, {"hbm", ERT_G_HBM}, {"l2", ERT_G_L2},
	{"l1", ERT_G_L1}, {"shared", ERT_G_SHARED}, {"inst", ERT_G_INST},
};

static void usage(const char *msg)
{
	fprintf(stderr,
		"ert-bench: %s\nusage: ert-bench [--quick] [--attributes] "
		"[--gpu K[,K...]] [--trials N] [--only "
		"fp64,fp32,fp16,tensor,hbm,l2,l1,shared,inst] [--target-ms MS]\n"
		"       [--mode LABEL] [--start-at EPOCH_S] [--p2p [--topo FILE]]\n",
		msg);
	exit(ERT_EXIT_USAGE);
}

static unsigned parse_groups(const char *arg)
{
	unsigned m = 0;
	std::string s(arg);
	size_t pos = 0;

	while (pos <= s.size()) {
		size_t end = s.find(',', pos);
		std::string w = s.substr(pos, end == std::string::npos ? end : end - pos);
		bool found = false;

		for (const auto &gn : group_names)
			if (w == gn.name) {
				m |= gn.bit;
				found = true;
			}
		if (!found)
			usage(("unknown group '" + w + "' in --only").c_str());
		if (end == std::string::npos)
			break;
		pos = end + 1;
	}
	return m;
}

static void parse_gpus(const char *arg, std::vector<int> &gpus)
{
	const char *p = arg;

	while (*p) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v < 0 || v > 1024 || (*end && *end != ','))
			usage((std::string("bad --gpu value '") + arg + "'").c_str());
		gpus.push_back((int)v);
		p = *end ? end + 1 : end;
	}
}

static long parse_long(const char *arg, const char *opt, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg ? arg : "", &end, 10);
	if (!arg || errno || end == arg || *end || v < lo || v > hi)
		usage((std::string("bad value for ") + opt).c_str());
	return v;
}

int main(int argc, char **argv)
{
	struct ert_opts o = {0, 0, 0, 0, 0, ERT_G_ALL, NULL};
	std::vector<int> gpus;
	bool attributes = false, p2p = false;
	const char *topo = NULL;
	double start_at = 0;
	int n = 0;
	long trials = -1, target = -1;
	double t0 = now_s();

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quick"))
			o.quick = 1;
		else if (!strcmp(a, "--attributes"))
			attributes = true;
		else if (!strcmp(a, "--gpu") && v)
			parse_gpus(argv[++i], gpus);
		else if (!strcmp(a, "--trials") && ++i)
			trials = parse_long(v, a, 3, 1000);
		else if (!strcmp(a, "--target-ms") && ++i)
			target = parse_long(v, a, 1, 10000);
		else if (!strcmp(a, "--only") && v)
			o.groups = parse_groups(argv[++i]);
		else if (!strcmp(a, "--mode") && v) {
			o.mode = argv[++i];
			if (!*o.mode || strspn(o.mode, "abcdefghijklmnopqrstuvwxyz"
					   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
					    strlen(o.mode))
				usage("--mode: letters, digits, '_' and '-' only");
		} else if (!strcmp(a, "--start-at") && ++i)
			start_at = (double)parse_long(v, a, 0, 1L << 40);
		else if (!strcmp(a, "--p2p"))
			p2p = true;
		else if (!strcmp(a, "--topo") && v)
			topo = argv[++i];
		else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			usage("help");
		else
			usage((std::string("unknown argument '") + a + "'").c_str());
	}
	o.trials = trials > 0 ? (int)trials : o.quick ? 9 : 21;
	o.sweep_trials = o.quick ? 5 : 9;
	o.target_ms = target > 0 ? (double)target : o.quick ? 10.0 : 25.0;
	o.warm_ms = o.quick ? 200.0 : 500.0;

	cudaError_t err = cudaGetDeviceCount(&n);
	if (err != cudaSuccess || n == 0) {
		if (err != cudaSuccess)
			fprintf(stderr, "no CUDA device: cudaGetDeviceCount: %s "
				"(cudaError %d)\n", cudaGetErrorString(err), (int)err);
		else
			fprintf(stderr, "no CUDA device: cudaGetDeviceCount found "
				"0 devices\n");
		return ERT_EXIT_NODEV;
	}
	for (int gi : gpus)
		if (gi >= n) {
			fprintf(stderr, "no CUDA device: --gpu %d but %d device(s)\n",
				gi, n);
			return ERT_EXIT_NODEV;
		}
	if (gpus.empty())
		for (int i = 0; i < n; i++)
			gpus.push_back(i);
	nvml_open();
	printf("# ert-bench output: see plugins/ert/bench_main.cu for the format\n");
	if (start_at > 0) {
		for (int gi : gpus) { /* CUDA contexts first, then the wait */
			CK(cudaSetDevice(gi));
			CK(cudaFree(0));
		}
		double wall = (double)std::chrono::duration_cast<
			std::chrono::milliseconds>(
			std::chrono::system_clock::now().time_since_epoch()).count() / 1e3;
		if (start_at > wall)
			std::this_thread::sleep_for(
				std::chrono::duration<double>(start_at - wall));
	}
	if (p2p) {
		if (gpus.size() < 2) {
			fprintf(stderr, "ert-bench: --p2p needs 2 GPUs or more, "
				"%zu given\n", gpus.size());
			return ERT_EXIT_USAGE;
		}
		for (int gi : gpus)
			print_attributes(gi);
		int bad = ert_bench_p2p(gpus, &o, topo);
		ert_print("done", {ert_kvl("gpus", (long long)gpus.size()),
				   ert_kvd("wall_s", now_s() - t0)});
		return bad || g_failed ? ERT_EXIT_FAIL : ERT_EXIT_OK;
	}
	if (topo)
		usage("--topo goes with --p2p");
	for (int gi : gpus) {
		if (attributes) {
			print_attributes(gi);
			continue;
		}
		run_gpu(gi, &o);
	}
	if (!attributes)
		ert_print("done", {ert_kvl("gpus", (long long)gpus.size()),
				   ert_kvd("wall_s", now_s() - t0)});
	return g_failed ? ERT_EXIT_FAIL : ERT_EXIT_OK;
}
