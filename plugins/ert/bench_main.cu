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

/* ---- one GPU ---- */

static void run_gpu(int dev, const struct ert_opts *o)
{
	struct ert_gpu g;
	cudaDeviceProp p;
	double t0 = ert_now_s();

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
	ert_print_attributes(dev);
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
			       ert_kvd("wall_s", ert_now_s() - t0)});
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
	double t0 = ert_now_s();

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
	ert_nvml_open();
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
			ert_print_attributes(gi);
		int bad = ert_bench_p2p(gpus, &o, topo);
		ert_print("done", {ert_kvl("gpus", (long long)gpus.size()),
				   ert_kvd("wall_s", ert_now_s() - t0)});
		return bad || ert_failed() ? ERT_EXIT_FAIL : ERT_EXIT_OK;
	}
	if (topo)
		usage("--topo goes with --p2p");
	for (int gi : gpus) {
		if (attributes) {
			ert_print_attributes(gi);
			continue;
		}
		run_gpu(gi, &o);
	}
	if (!attributes)
		ert_print("done", {ert_kvl("gpus", (long long)gpus.size()),
				   ert_kvd("wall_s", ert_now_s() - t0)});
	return ert_failed() ? ERT_EXIT_FAIL : ERT_EXIT_OK;
}
