/*
 * bench_core.cu - ert-bench's measuring core: NVML (loaded at run time),
 * the output lines, the timing harness (ert_measure, the working-set sweep)
 * and the device attributes.  See ert_bench.h.
 *
 * Below bench_main.cu (the command line and one GPU's run) and the bench
 * groups (bench_compute.cu, bench_memory.cu, bench_hbm.cu, bench_tensor.cu,
 * bench_p2p.cu), which call it; it calls none of them.
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

void ert_nvml_open(void)
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

bool ert_failed(void)
{
	return g_failed != 0;
}

double ert_now_s(void)
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

void ert_print_attributes(int dev)
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
