/*
 * bench_p2p.cu - peer-to-peer bandwidth between every pair of the GPUs
 * measured (ert-bench --p2p).
 *
 * For every ordered pair (i, j), i != j, of the GPUs given (--gpu, default
 * all), three figures, each a `ceiling` line of gpu=i peer=j:
 *   p2p_read          a copy kernel on GPU i reads GPU j's buffer through
 *                     peer access (cudaDeviceEnablePeerAccess) and writes
 *                     its own memory: bytes = the buffer
 *   p2p_write         a copy kernel on GPU i reads its own buffer and writes
 *                     GPU j's
 *   p2p_memcpy        cudaMemcpyPeerAsync from GPU i to GPU j (the copy
 *                     engines)
 * and for every unordered pair (i < j) three bidirectional ones, both
 * directions at once, bytes counted in both (gpu=i peer=j):
 *   p2p_read_bidir    i reads j while j reads i
 *   p2p_write_bidir   i writes j while j writes i
 *   p2p_memcpy_bidir  i -> j and j -> i copies at once
 * Without peer access (cudaDeviceCanAccessPeer 0) the kernel figures are
 * left out (the `link` line says access=0); cudaMemcpyPeerAsync then goes
 * through the host, and is measured as such.
 *
 * Each pair first gets one `link` line:
 *   link  gpu peer access atomics perf_rank nvlink topo
 *   (access, atomics, perf_rank: cudaDeviceGetP2PAttribute; nvlink: NVML's
 *   P2P status for NVLink, 1 ok, 0 not, -1 unknown; topo: the label of
 *   `nvidia-smi topo -m` for the pair when --topo FILE names its captured
 *   output (plugins/ert/topo.h), else "")
 * and each ceiling line carries peer=, topo= and the usual fields.
 *
 * Method: buffers of ERT_P2P_BYTES (512 MiB) per GPU, source filled with
 * hashf(index, gpu + 1); a launch does `reps` copies, reps sized so that one
 * launch lasts about target_ms; after warm_ms of warm-up, `trials` timed
 * launches (CUDA events on GPU i's stream; the peer's stream joins through
 * events, so a bidirectional launch is timed from the first start to the
 * last end).  value = median; max is the best of the trials.  The copy is
 * checked afterwards: 3 x 64 KiB of every destination against the hash.
 */
#include "bench_mem.h"
#include "topo.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

static const size_t ERT_P2P_BYTES = 512u << 20;
static const int P2P_THREADS = 512;
static const int P2P_UNROLL = 4;

/* One GPU of the matrix: its stream, events, buffers. */
struct p2p_dev {
	int dev;
	int sm_count;
	void *nvml;
	cudaStream_t s;
	cudaEvent_t e0, e1;
	float4 *src, *dst;   /* ERT_P2P_BYTES each */
};

__global__ void p2p_fill(float4 *a, size_t n, uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		a[i] = make_float4(hashf(4 * i, seed), hashf(4 * i + 1, seed),
				   hashf(4 * i + 2, seed), hashf(4 * i + 3, seed));
}

/* dst[i] = src[i], P2P_UNROLL independent vectors in flight per thread. */
__global__ void __launch_bounds__(P2P_THREADS)
p2p_copy(float4 *__restrict__ dst, const float4 *__restrict__ src, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	for (; i + (P2P_UNROLL - 1) * stride < n; i += P2P_UNROLL * stride) {
		float4 v[P2P_UNROLL];

#pragma unroll
		for (int k = 0; k < P2P_UNROLL; k++)
			v[k] = src[i + k * stride];
#pragma unroll
		for (int k = 0; k < P2P_UNROLL; k++)
			dst[i + k * stride] = v[k];
	}
	for (; i < n; i += stride)
		dst[i] = src[i];
}

/* One direction of a figure: who runs it, from where to where. */
struct p2p_dir {
	p2p_dev *run;            /* the GPU whose stream it is enqueued on */
	const float4 *from;
	float4 *to;
	int from_dev, to_dev;
	bool memcpy_engine;      /* cudaMemcpyPeerAsync, else the copy kernel */
	uint32_t seed;           /* what `to` must hold afterwards */
};

static size_t p2p_vecs(void)
{
	return ERT_P2P_BYTES / sizeof(float4);
}

static void enqueue(const p2p_dir &d, long reps)
{
	size_t n = p2p_vecs();

	CK(cudaSetDevice(d.run->dev));
	for (long r = 0; r < reps; r++) {
		if (d.memcpy_engine) {
			CK(cudaMemcpyPeerAsync(d.to, d.to_dev, d.from, d.from_dev,
					       ERT_P2P_BYTES, d.run->s));
		} else {
			p2p_copy<<<d.run->sm_count * 4, P2P_THREADS, 0, d.run->s>>>(
				d.to, d.from, n);
			CK(cudaGetLastError());
		}
	}
}

/*
 * One timed launch of the directions (one or two, at once); seconds.  The
 * first direction's GPU holds the events; the second's stream starts after
 * the first event and the first's end waits for it.
 */
static double timed(std::vector<p2p_dir> &dirs, long reps)
{
	p2p_dev *a = dirs[0].run;
	float ms = 0;

	CK(cudaSetDevice(a->dev));
	CK(cudaEventRecord(a->e0, a->s));
	for (size_t k = 1; k < dirs.size(); k++) {
		CK(cudaSetDevice(dirs[k].run->dev));
		CK(cudaStreamWaitEvent(dirs[k].run->s, a->e0, 0));
	}
	for (const p2p_dir &d : dirs)
		enqueue(d, reps);
	for (size_t k = 1; k < dirs.size(); k++) {
		p2p_dev *b = dirs[k].run;

		CK(cudaSetDevice(b->dev));
		CK(cudaEventRecord(b->e1, b->s));
		CK(cudaSetDevice(a->dev));
		CK(cudaStreamWaitEvent(a->s, b->e1, 0));
	}
	CK(cudaSetDevice(a->dev));
	CK(cudaEventRecord(a->e1, a->s));
	CK(cudaEventSynchronize(a->e1));
	CK(cudaEventElapsedTime(&ms, a->e0, a->e1));
	return ms * 1e-3;
}

/* 3 x 64 KiB of d.to (start, middle, end) against hashf(., d.seed). */
static bool check_dir(const p2p_dir &d)
{
	const size_t chunk = 4096, n = p2p_vecs();
	const size_t at[3] = { 0, n / 2, n - chunk };
	std::vector<float4> h(chunk);

	for (size_t off : at) {
		CK(cudaSetDevice(d.to_dev));
		CK(cudaMemcpy(h.data(), d.to + off, chunk * sizeof(float4),
			      cudaMemcpyDeviceToHost));
		for (size_t i = 0; i < chunk; i++) {
			size_t v = off + i;

			if (h[i].x != hashf(4 * v, d.seed) ||
			    h[i].w != hashf(4 * v + 3, d.seed))
				return false;
		}
	}
	return true;
}

static double median_v(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	size_t n = v.size();

	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Clear the destinations so that the check sees this figure's copy. */
static void clear_dst(const std::vector<p2p_dir> &dirs)
{
	for (const p2p_dir &d : dirs) {
		CK(cudaSetDevice(d.to_dev));
		CK(cudaMemset(d.to, 0, ERT_P2P_BYTES));
		CK(cudaDeviceSynchronize());
	}
}

static void measure(const struct ert_opts *o, const char *name, p2p_dev *gi,
		    p2p_dev *gj, std::vector<p2p_dir> dirs, const char *topo,
		    int *failed)
{
	double bytes1 = (double)ERT_P2P_BYTES * dirs.size(), t;
	std::vector<double> rates, sm, mem, pw;
	unsigned long long reasons = 0;
	long reps;

	clear_dst(dirs);
	timed(dirs, 1); /* first touch: peer mappings, clocks up */
	t = timed(dirs, 1);
	reps = std::max(1L, (long)(o->target_ms * 1e-3 / (t > 0 ? t : 1e-6)));
	for (double w = 0; w < o->warm_ms * 1e-3;)
		w += timed(dirs, reps);
	for (int k = 0; k < o->trials; k++) {
		t = timed(dirs, reps);
		rates.push_back(bytes1 * reps / t);
		struct ert_clock_sample s;
		if (ert_nvml_sample(gi->nvml, &s) && s.sm) {
			sm.push_back(s.sm);
			mem.push_back(s.mem);
			pw.push_back(s.power_mw * 1e-3);
			reasons |= s.reasons;
		}
	}
	bool ok = true;
	for (const p2p_dir &d : dirs)
		ok = ok && check_dir(d);
	if (!ok) {
		fprintf(stderr, "ert-bench: gpu %d peer %d: %s: wrong copy\n",
			gi->dev, gj->dev, name);
		*failed = 1;
	}
	double med = median_v(rates);
	double lo = *std::min_element(rates.begin(), rates.end());
	double hi = *std::max_element(rates.begin(), rates.end());
	char rs[32];
	std::vector<std::string> kv = {
		ert_kvl("gpu", gi->dev), ert_kvl("peer", gj->dev),
		ert_kv("name", name), ert_kv("kind", "bandwidth"),
		ert_kv("unit", "B/s"), ert_kvl("trials", (long long)rates.size()),
		ert_kvd("min", lo), ert_kvd("median", med), ert_kvd("max", hi),
		ert_kvd("spread_pct", (hi - lo) / med * 100),
		ert_kvd("sm_clock_mhz", sm.empty() ? 0 : median_v(sm)),
		ert_kvd("mem_clock_mhz", mem.empty() ? 0 : median_v(mem)),
		ert_kvd("power_w", pw.empty() ? 0 : median_v(pw))};
	snprintf(rs, sizeof(rs), "0x%llx", reasons);
	kv.push_back(ert_kv("throttle", rs));
	kv.push_back(ert_kv("geometry",
			    dirs[0].memcpy_engine
				    ? std::string("cudaMemcpyPeerAsync")
				    : geo((long)gi->sm_count * 4, P2P_THREADS,
					  "unroll=" + std::to_string(P2P_UNROLL))));
	kv.push_back(ert_kvl("ws_bytes", (long long)ERT_P2P_BYTES));
	kv.push_back(ert_kvl("reps", reps));
	kv.push_back(ert_kvd("trial_s", bytes1 * reps / med));
	kv.push_back(ert_kvl("directions", (long long)dirs.size()));
	kv.push_back(ert_kv("topo", topo));
	if (o->mode && *o->mode)
		kv.push_back(ert_kv("mode", o->mode));
	kv.push_back(ert_kv("check", ok ? "ok" : "fail"));
	ert_print("ceiling", kv);
}

/* The captured `nvidia-smi topo -m`, or "" (no file or unreadable). */
static std::string read_topo(const char *path)
{
	std::string s;
	char buf[4096];
	size_t n;
	FILE *f;

	if (!path)
		return s;
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "ert-bench: --topo %s: %s\n", path, strerror(errno));
		exit(ERT_EXIT_USAGE);
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		s.append(buf, n);
	fclose(f);
	return s;
}

int ert_bench_p2p(const std::vector<int> &gpus, const struct ert_opts *o,
		  const char *topo_path)
{
	std::string topo = read_topo(topo_path);
	std::vector<p2p_dev> d(gpus.size());
	int failed = 0;

	for (size_t k = 0; k < gpus.size(); k++) {
		p2p_dev &g = d[k];
		cudaDeviceProp p;

		g.dev = gpus[k];
		CK(cudaSetDevice(g.dev));
		CK(cudaGetDeviceProperties(&p, g.dev));
		g.sm_count = p.multiProcessorCount;
		g.nvml = ert_nvml_device(g.dev);
		CK(cudaStreamCreateWithFlags(&g.s, cudaStreamNonBlocking));
		CK(cudaEventCreate(&g.e0));
		CK(cudaEventCreate(&g.e1));
		CK(cudaMalloc(&g.src, ERT_P2P_BYTES));
		CK(cudaMalloc(&g.dst, ERT_P2P_BYTES));
		p2p_fill<<<g.sm_count * 4, 256, 0, g.s>>>(g.src, p2p_vecs(),
							 (uint32_t)g.dev + 1);
		CK(cudaGetLastError());
		CK(cudaStreamSynchronize(g.s));
	}
	std::vector<std::vector<int>> access(d.size(), std::vector<int>(d.size()));
	std::vector<std::vector<std::string>> label(
		d.size(), std::vector<std::string>(d.size()));
	for (size_t a = 0; a < d.size(); a++)
		for (size_t b = 0; b < d.size(); b++) {
			int acc = 0, atom = 0, rank = -1;
			char lab[64] = "";

			if (a == b)
				continue;
			CK(cudaDeviceCanAccessPeer(&acc, d[a].dev, d[b].dev));
			if (acc) {
				CK(cudaSetDevice(d[a].dev));
				cudaError_t e = cudaDeviceEnablePeerAccess(d[b].dev, 0);
				if (e == cudaErrorPeerAccessAlreadyEnabled)
					cudaGetLastError();
				else
					CK(e);
				CK(cudaDeviceGetP2PAttribute(
					&atom, cudaDevP2PAttrNativeAtomicSupported,
					d[a].dev, d[b].dev));
				CK(cudaDeviceGetP2PAttribute(
					&rank, cudaDevP2PAttrPerformanceRank,
					d[a].dev, d[b].dev));
			}
			if (!topo.empty() &&
			    topo_link(topo.c_str(), d[a].dev, d[b].dev, lab,
				      sizeof(lab)) < 0)
				fprintf(stderr, "ert-bench: --topo: no link GPU%d-GPU%d "
					"in %s\n", d[a].dev, d[b].dev, topo_path);
			access[a][b] = acc;
			label[a][b] = lab;
			ert_print("link",
				  {ert_kvl("gpu", d[a].dev), ert_kvl("peer", d[b].dev),
				   ert_kvl("access", acc), ert_kvl("atomics", atom),
				   ert_kvl("perf_rank", rank),
				   ert_kvl("nvlink", ert_nvml_p2p_nvlink(d[a].nvml,
									 d[b].nvml)),
				   ert_kv("topo", lab)});
		}
	for (size_t a = 0; a < d.size(); a++)
		for (size_t b = 0; b < d.size(); b++) {
			if (a == b)
				continue;
			p2p_dev *i = &d[a], *j = &d[b];
			const char *lab = label[a][b].c_str();
			p2p_dir rd = {i, j->src, i->dst, j->dev, i->dev, false,
				      (uint32_t)j->dev + 1};
			p2p_dir wr = {i, i->src, j->dst, i->dev, j->dev, false,
				      (uint32_t)i->dev + 1};
			p2p_dir cp = wr;
			cp.memcpy_engine = true;

			if (access[a][b]) {
				measure(o, "p2p_read", i, j, {rd}, lab, &failed);
				measure(o, "p2p_write", i, j, {wr}, lab, &failed);
			}
			measure(o, "p2p_memcpy", i, j, {cp}, lab, &failed);
		}
	for (size_t a = 0; a < d.size(); a++)
		for (size_t b = a + 1; b < d.size(); b++) {
			p2p_dev *i = &d[a], *j = &d[b];
			const char *lab = label[a][b].c_str();
			p2p_dir rij = {i, j->src, i->dst, j->dev, i->dev, false,
				       (uint32_t)j->dev + 1};
			p2p_dir rji = {j, i->src, j->dst, i->dev, j->dev, false,
				       (uint32_t)i->dev + 1};
			p2p_dir wij = {i, i->src, j->dst, i->dev, j->dev, false,
				       (uint32_t)i->dev + 1};
			p2p_dir wji = {j, j->src, i->dst, j->dev, i->dev, false,
				       (uint32_t)j->dev + 1};
			p2p_dir cij = wij, cji = wji;
			cij.memcpy_engine = cji.memcpy_engine = true;

			if (access[a][b] && access[b][a]) {
				measure(o, "p2p_read_bidir", i, j, {rij, rji}, lab,
					&failed);
				measure(o, "p2p_write_bidir", i, j, {wij, wji}, lab,
					&failed);
			}
			measure(o, "p2p_memcpy_bidir", i, j, {cij, cji}, lab, &failed);
		}
	for (p2p_dev &g : d) {
		CK(cudaSetDevice(g.dev));
		CK(cudaFree(g.src));
		CK(cudaFree(g.dst));
		CK(cudaEventDestroy(g.e0));
		CK(cudaEventDestroy(g.e1));
		CK(cudaStreamDestroy(g.s));
	}
	return failed;
}
