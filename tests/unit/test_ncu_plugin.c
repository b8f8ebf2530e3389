/*
 * test_ncu_plugin - plugins/ncu.c against a stand-in host, with a stand-in
 * `ncu` (a shell script that records its arguments, runs the program and
 * writes a real H100 capture from tests/fixtures/ncu as its log file).
 *
 * Checked: the exact ncu command line (fixed flags, the metric set of the
 * table, kernel filter, launch skip/count, NVTX, log file, the program found
 * in $ROOFLINE_LIBEXEC), the records (values against the kernels' design),
 * `missing` for metrics the capture lacks, and that every failure - ncu's
 * status, a damaged table, an unprofiled kernel, no program - emits nothing.
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ncu.c"
#include "records.h"
#include "strbuf.h"
#include "stub_host.h"

#define SASS_DADD "sm__sass_thread_inst_executed_op_dadd_pred_on.sum"

/* ---- fixture world --------------------------------------------------------- */

struct world {
	char dir[256];      /* temp root */
	char out[300], run[300], libexec[300], bin[300];
	char ncu[320], args[320];
	char *cmd_argv[2];
	char *kernels[2];
	char *extra[2];
	struct ncu_config cfg;
	struct stub_host h;
	void *state;
};

static char fixtures[1024];

static const char *fixture(const char *name)
{
	static char buf[4][1400];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", fixtures, name);
	return p;
}

static void write_script(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	char text[4096];

	snprintf(w->dir, sizeof(w->dir), "/tmp/test_ncu_plugin.XXXXXX");
	assert_non_null(mkdtemp(w->dir));
	snprintf(w->out, sizeof(w->out), "%s/out", w->dir);
	snprintf(w->run, sizeof(w->run), "%s/run", w->dir);
	snprintf(w->libexec, sizeof(w->libexec), "%s/libexec", w->dir);
	snprintf(w->bin, sizeof(w->bin), "%s/bin", w->dir);
	snprintf(w->ncu, sizeof(w->ncu), "%s/ncu", w->bin);
	snprintf(w->args, sizeof(w->args), "%s/args", w->dir);
	mkdir(w->out, 0755);
	mkdir(w->run, 0755);
	mkdir(w->libexec, 0755);
	mkdir(w->bin, 0755);
	/* ncu: --version, else record args, run the program, write FAKE_CSV */
	snprintf(text, sizeof(text),
		 "#!/bin/sh\n"
		 "if [ \"$1\" = --version ]; then\n"
		 "  echo 'NVIDIA (R) Nsight Compute Command Line Profiler'\n"
		 "  echo 'Version 2025.3.1.0 (build 36398880) (public-release)'; exit 0\n"
		 "fi\n"
		 "printf '%%s\\n' \"$@\" > '%s'\n"
		 "while [ $# -gt 0 ]; do case $1 in --log-file) log=$2; shift 2;;\n"
		 "  --) shift; break;; *) shift;; esac; done\n"
		 "\"$@\"; rc=$?\n"
		 /* the second pass (adapt.h): every call's args into args2;
		  * FAKE_CSV2_FIRST answers its first try only */
		 "case $log in *ncu-adaptive.csv)\n"
		 "  { echo ==call; cat '%s'; } >> '%s2'\n"
		 "  if [ -n \"$FAKE_CSV2_FIRST\" ] && [ ! -e '%s2.first' ]; then\n"
		 "    : > '%s2.first'; cp \"$FAKE_CSV2_FIRST\" \"$log\"\n"
		 "  else cp \"$FAKE_CSV2\" \"$log\"; fi;;\n"
		 "*ncu-instruction.csv)\n"
		 "  { echo ==call; cat '%s'; } >> '%s3'; cp \"$FAKE_CSV3\" \"$log\";;\n"
		 "*) cp \"$FAKE_CSV\" \"$log\";;\n"
		 "esac\n"
		 "exit ${FAKE_RC:-$rc}\n", w->args, w->args, w->args, w->args, w->args, w->args,
		 w->args);
	write_script(w->ncu, text);
	snprintf(text, sizeof(text), "#!/bin/sh\ncat '%s'\n",
		 fixture("kernel_abc.program.txt"));
	{
		char prog[400];

		snprintf(prog, sizeof(prog), "%s/kernel_abc", w->libexec);
		write_script(prog, text);
	}
	setenv("ROOFLINE_LIBEXEC", w->libexec, 1);
	setenv("FAKE_CSV", fixture("kernel_abc.raw.csv"), 1);
	unsetenv("FAKE_RC");
	unsetenv("FAKE_CSV2_FIRST");
	w->cmd_argv[0] = (char *)(uintptr_t)"kernel_abc";
	w->cfg.command = (struct rl_strlist){ 1, w->cmd_argv };
	w->cfg.metrics_table = (char *)(uintptr_t)"tests/fixtures/ncu/ncu-metrics.recorded.tsv";
	w->cfg.arch = (char *)(uintptr_t)"90";
	w->cfg.device = -1;
	w->cfg.ncu = w->ncu;
	stub_host_init(&w->h, w->run, w->out);
	w->h.ctx.step_id = "profile";
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	if (w->state)
		ncu_fini(w->state);
	stub_host_release(&w->h);
	nftw(w->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(w);
	return 0;
}

static enum rl_result run_plugin(struct world *w)
{
	if (w->state)
		ncu_fini(w->state);
	w->state = NULL;
	if (rooflined_plugin.init(&w->h.ctx, &w->cfg, &w->state) != 0)
		fail_msg("init failed: %s", w->h.log.buf);
	return rooflined_plugin.run(&w->h.ctx, &w->cfg, w->state);
}

/* ---- record access ---------------------------------------------------------- */

/* Record `index` of `kind` as "key=value\n" lines (caller frees), or NULL. */
static char *record(struct world *w, const char *kind, long index)
{
	return stub_host_record(&w->h, kind, index);
}

/* The value of key in a record copy (static buffer). */
static const char *get(const char *rec, const char *key)
{
	return stub_host_get(rec, key);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[1 << 16];
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* ---- tests ------------------------------------------------------------------ */

static void test_command_line(void **state)
{
	struct world *w = *state;
	char *args, *line, *save, *metrics = NULL, *header;
	const char *want[] = { "--clock-control", "none", "--print-units", "base",
			       "--csv", "--page", "raw", "--metrics", NULL };
	char log_file[400], program[400];
	size_t i = 0, n_metrics = 0;

	w->kernels[0] = (char *)(uintptr_t)"kernel_A";
	w->kernels[1] = (char *)(uintptr_t)"kernel_C";
	w->cfg.kernels = (struct rl_strlist){ 2, w->kernels };
	w->cfg.launch_skip = 1;
	w->cfg.launch_count = 2;
	w->cfg.nvtx_include = (char *)(uintptr_t)"solve/";
	assert_int_equal(run_plugin(w), RL_OK);
	args = strdup(read_all(w->args));
	snprintf(log_file, sizeof(log_file), "%s/ncu.csv", w->out);
	snprintf(program, sizeof(program), "%s/kernel_abc", w->libexec);
	for (line = strtok_r(args, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
		if (i < 8)
			assert_string_equal(line, want[i]);
		else if (i == 8)
			metrics = line;
	}
	assert_int_equal(i, 8 + 1 + 2 + 2 + 2 + 3 + 2 + 2);
	metrics = strdup(metrics);
	free(args);
	args = strdup(read_all(w->args)); /* again, intact, for the tail */
	assert_non_null(strstr(args, "\n-k\nregex:(kernel_A)|(kernel_C)\n--launch-skip\n1\n"
				     "--launch-count\n2\n--nvtx\n--nvtx-include\nsolve/\n--log-file\n"));
	assert_non_null(strstr(args, log_file));
	assert_non_null(strstr(args, "\n--\n"));
	assert_non_null(strstr(args, program));
	/* the set: 20 metrics, each a column of the capture made with it */
	header = strstr(read_all(fixture("kernel_abc.raw.csv")), "\"ID\",");
	header = strndup(header, strcspn(header, "\n"));
	for (line = strtok_r(metrics, ",", &save); line; line = strtok_r(NULL, ",", &save)) {
		char col[300];

		snprintf(col, sizeof(col), "\"%s\"", line);
		if (!strstr(header, col))
			fail_msg("metric %s not in the capture", line);
		n_metrics++;
	}
	assert_int_equal(n_metrics, 20);
	free(header);
	free(metrics);
	free(args);
}

static void test_records(void **state)
{
	struct world *w = *state;
	char *a, *sum, *prog, *dev;
	const char *head;
	char want[64], log_path[400];

	assert_int_equal(run_plugin(w), RL_OK);
	/* one device, three kernels, the summary */
	assert_int_equal(w->h.n_records, 5);
	assert_true(strncmp(w->h.records.buf, "device\t", 7) == 0); /* first */
	assert_null(record(w, "device", 1));
	dev = record(w, "device", 0);
	assert_non_null(dev);
	head = "gpu_index=0\ngpu_name=NVIDIA H100 80GB HBM3\ncc=9.0\n";
	assert_true(strncmp(dev, head, strlen(head)) == 0);
	assert_string_equal(get(dev, "source"), "ncu");
	assert_string_equal(get(dev, "ncu_version"), "2025.3.1.0");
	assert_string_equal(get(dev, "device__attribute_display_name"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(get(dev, "device__attribute_multiprocessor_count"), "132");
	assert_string_equal(get(dev, "nvlink__max_count"), "18");
	free(dev);
	a = record(w, "kernel", 0);
	assert_non_null(a);
	assert_string_equal(get(a, "kernel"), "kernel_A(double *, long, double)");
	assert_string_equal(get(a, "invocation"), "0");
	assert_string_equal(get(a, "source"), "ncu");
	assert_string_equal(get(a, "ncu_version"), "2025.3.1.0");
	assert_string_equal(get(a, "gpu_name"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(get(a, "cc"), "9.0");
	assert_string_equal(get(a, "missing"), "");
	/* device properties are the device record's, collected or not */
	assert_null(get(a, "device__attribute_display_name"));
	assert_null(get(a, "device__attribute_multiprocessor_count"));
	assert_string_equal(get(a, "profiler__replayer_passes"), "3");
	/* 4096 blocks x 256 threads x 10000 adds */
	snprintf(want, sizeof(want), "%ld", 4096L * 256 * 10000);
	assert_string_equal(get(a, SASS_DADD), want);
	/* 8 bytes stored per thread, seen at L1 */
	snprintf(want, sizeof(want), "%ld", 4096L * 256 * 8);
	assert_string_equal(get(a, "l1tex__t_bytes.sum"), want);
	free(a);
	a = record(w, "kernel", 2);
	assert_string_equal(get(a, "kernel"), "kernel_C(double *, const double *, long, double)");
	free(a);
	sum = record(w, "collect_summary", 0);
	assert_non_null(sum);
	assert_string_equal(get(sum, "kernels"), "3");
	assert_string_equal(get(sum, "invocations"), "3");
	assert_string_equal(get(sum, "passes"), "3");
	assert_true(atof(get(sum, "wall_s")) > 0);
	assert_non_null(strstr(get(sum, "command"), "--clock-control none --print-units base"));
	free(sum);
	snprintf(log_path, sizeof(log_path), "%s/program.log", w->out);
	prog = read_all(log_path);
	assert_non_null(prog);
	assert_non_null(strstr(prog, "kernel_abc: all checks passed"));
}

static void test_extra_missing(void **state)
{
	struct world *w = *state;
	char *a;

	w->extra[0] = (char *)(uintptr_t)"bytes_l1_ncu";
	w->cfg.extra = (struct rl_strlist){ 1, w->extra };
	assert_int_equal(run_plugin(w), RL_OK);
	a = record(w, "kernel", 1);
	/* asked for, absent from this capture: recorded as missing */
	assert_string_equal(get(a, "missing"), "l1tex__lsu_writeback_active_mem_lgds.sum");
	assert_null(get(a, "l1tex__lsu_writeback_active_mem_lgds.sum"));
	free(a);
	assert_non_null(strstr(read_all(w->args), "l1tex__lsu_writeback_active_mem_lgds.sum"));
}

static void test_extra_all_full_capture(void **state)
{
	struct world *w = *state;
	char *a;

	w->extra[0] = (char *)(uintptr_t)"all";
	w->cfg.extra = (struct rl_strlist){ 1, w->extra };
	setenv("FAKE_CSV", fixture("kernel_abc.full.raw.csv"), 1);
	assert_int_equal(run_plugin(w), RL_OK);
	a = record(w, "kernel", 0);
	assert_string_equal(get(a, "missing"), "");
	assert_string_equal(get(a, "profiler__replayer_passes"), "9");
	assert_non_null(get(a, "sm__ops_path_tensor_src_fp16.sum"));
	assert_non_null(get(a, "lts__lts2xbar_cycles_active.sum"));
	free(a);
}

static void expect_fail(struct world *w, const char *msg)
{
	assert_int_equal(run_plugin(w), RL_FAIL);
	assert_int_equal(w->h.n_records, 0);
	if (!strstr(w->h.log.buf, msg))
		fail_msg("log lacks '%s':\n%s", msg, w->h.log.buf);
}

static void test_ncu_status(void **state)
{
	struct world *w = *state;

	setenv("FAKE_RC", "1", 1);
	expect_fail(w, "ncu exited with status 1");
}

static void test_truncated_capture(void **state)
{
	struct world *w = *state;
	char msg[400];

	setenv("FAKE_CSV", fixture("bad/truncated.csv"), 1);
	snprintf(msg, sizeof(msg), "%s/ncu.csv:8:", w->out);
	expect_fail(w, msg);
	assert_non_null(strstr(w->h.log.buf, "unterminated quoted field"));
}

static void test_unprofiled_kernel(void **state)
{
	struct world *w = *state;

	setenv("FAKE_CSV", fixture("bad/unprofiled-na.csv"), 1);
	expect_fail(w, "launch 1 'kernel_B(double *, long, double)' has no value");
}

static void test_ncu_error_line(void **state)
{
	struct world *w = *state;

	setenv("FAKE_CSV", fixture("bad/error-line.csv"), 1);
	setenv("FAKE_RC", "1", 1);
	expect_fail(w, "==ERROR== An error was reported by the driver");
}

static void test_no_kernels(void **state)
{
	struct world *w = *state;

	setenv("FAKE_CSV", fixture("bad/no-kernels.log"), 1);
	expect_fail(w, "no CSV table: ==WARNING== No kernels were profiled.");
}

static void test_program_not_found(void **state)
{
	struct world *w = *state;

	w->cmd_argv[0] = (char *)(uintptr_t)"no_such_program_xyz";
	expect_fail(w, "cannot find program 'no_such_program_xyz'");
}

static void test_arch_auto(void **state)
{
	struct world *w = *state;
	char smi[400], path[2048];

	snprintf(smi, sizeof(smi), "%s/nvidia-smi", w->bin);
	write_script(smi, "#!/bin/sh\necho '9.0'\n");
	snprintf(path, sizeof(path), "%s:%s", w->bin, getenv("PATH"));
	setenv("PATH", path, 1);
	w->cfg.arch = (char *)(uintptr_t)"auto";
	assert_int_equal(run_plugin(w), RL_OK);
	assert_int_equal(w->h.n_records, 5);
	write_script(smi, "#!/bin/sh\necho 'No devices were found'\n");
	w->h.n_records = 0;
	expect_fail(w, "set the option arch");
}

/*
 * Several GPUs: device: N masks the others (CUDA_VISIBLE_DEVICES) and ncu
 * profiles device 0 of the mask; every record carries the UUID that
 * nvidia-smi gives for the PCI address ncu printed (the capture's H100 is at
 * domain 0, bus 0, device 6).
 */
static void test_device_and_uuid(void **state)
{
	struct world *w = *state;
	char smi[400], path[2048], *k, *dev, *sum;
	struct gpus g;

	snprintf(smi, sizeof(smi), "%s/nvidia-smi", w->bin);
	write_script(smi, "#!/bin/sh\n"
		     "echo '00000000:00:05.0, GPU-other'\n"
		     "echo '00000000:00:06.0, GPU-11fa9a66-941c-7513-180f-6b368fa2307b'\n");
	snprintf(path, sizeof(path), "%s:%s", w->bin, getenv("PATH"));
	setenv("PATH", path, 1);
	setenv("CUDA_VISIBLE_DEVICES", "GPU-aaaa,GPU-bbbb", 1);
	unsetenv("CUDA_DEVICE_ORDER");
	w->cfg.device = 1;
	assert_int_equal(run_plugin(w), RL_OK);
	assert_string_equal(getenv("CUDA_VISIBLE_DEVICES"), "GPU-bbbb");
	assert_string_equal(getenv("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
	assert_non_null(strstr(read_all(w->args), "\n--devices\n0\n--log-file\n"));
	dev = record(w, "device", 0);
	k = record(w, "kernel", 2);
	sum = record(w, "collect_summary", 0);
	assert_string_equal(get(dev, "gpu_uuid"), "GPU-11fa9a66-941c-7513-180f-6b368fa2307b");
	assert_string_equal(get(k, "gpu_uuid"), "GPU-11fa9a66-941c-7513-180f-6b368fa2307b");
	/* the recorded table's arch 90: only fp64 of the six is default */
	assert_string_equal(get(k, "tensor_not_collected"), "fp16,bf16,tf32,fp8,int8");
	assert_string_equal(get(sum, "tensor_not_collected"), "fp16,bf16,tf32,fp8,int8");
	free(dev);
	free(k);
	free(sum);
	/* a GPU the job does not have */
	w->cfg.device = 2;
	setenv("CUDA_VISIBLE_DEVICES", "GPU-aaaa,GPU-bbbb", 1);
	w->h.n_records = 0;
	expect_fail(w, "device: 2 is not a GPU of this job (CUDA_VISIBLE_DEVICES='GPU-aaaa,GPU-bbbb')");
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("CUDA_DEVICE_ORDER");

	/* the parts alone */
	assert_int_equal(gpus_parse_smi("00000000:19:00.0, GPU-a\nbad line\n0000:1A:00.0, GPU-b\n", &g), 2);
	assert_int_equal(g.v[0].bus, 0x19);
	assert_int_equal(g.v[1].bus, 0x1a);
	assert_string_equal(g.v[1].uuid, "GPU-b");
	{
		char out[64];

		assert_int_equal(gpus_pick(NULL, 3, out, sizeof(out)), 0);
		assert_string_equal(out, "3");
		assert_int_equal(gpus_pick("4,5,7", 2, out, sizeof(out)), 0);
		assert_string_equal(out, "7");
		assert_int_equal(gpus_pick("4,5,7", 3, out, sizeof(out)), -ERANGE);
		assert_int_equal(gpus_pick("4", -1, out, sizeof(out)), -ERANGE);
	}
}

static void test_init_errors(void **state)
{
	struct world *w = *state;
	void *st = NULL;

	w->extra[0] = (char *)(uintptr_t)"tensor_fp17";
	w->cfg.extra = (struct rl_strlist){ 1, w->extra };
	assert_int_equal(rooflined_plugin.init(&w->h.ctx, &w->cfg, &st), -EINVAL);
	assert_non_null(strstr(w->h.log.buf, "extra: 'tensor_fp17' is not 'all' nor a role"));
	w->cfg.extra = (struct rl_strlist){ 0, NULL };
	w->cfg.metrics_table = (char *)(uintptr_t)"tests/fixtures/ncu/env.txt";
	assert_true(rooflined_plugin.init(&w->h.ctx, &w->cfg, &st) < 0);
	assert_non_null(strstr(w->h.log.buf, "tests/fixtures/ncu/env.txt:1:"));
	w->cfg.metrics_table = (char *)(uintptr_t)"tests/fixtures/ncu/ncu-metrics.recorded.tsv";
	w->cfg.launch_skip = -1;
	assert_int_equal(rooflined_plugin.init(&w->h.ctx, &w->cfg, &st), -EINVAL);
	w->cfg.launch_skip = 0;
	w->cfg.arch = (char *)(uintptr_t)"9.0";
	assert_int_equal(run_plugin(w), RL_FAIL);
	assert_non_null(strstr(w->h.log.buf, "arch '9.0' is not 'auto'"));
}


/* ---- the targeted second pass (plugins/ncu/adapt.h) ------------------------ */

#define FP16_DATAPATH "sm__ops_path_tensor_src_fp16.sum"
#define FP16_KERNEL "nvjet_sm90_hss_128x256_64x4_2x1_v_bz_coopA_TNN"

/* The H100 recordings of `gemm_lt fp16 4096` under the adaptive default:
 * its first pass (the default set) and its second (tests/fixtures/instr). */
static void use_fp16_gemm(struct world *w)
{
	static char first[1400], second[1400];

	snprintf(first, sizeof(first), "%s/../instr/gemm-fp16-adaptive.ncu.csv", fixtures);
	snprintf(second, sizeof(second), "%s/../instr/gemm-fp16-adaptive.ncu-adaptive.csv", fixtures);
	setenv("FAKE_CSV", first, 1);
	setenv("FAKE_CSV2", second, 1);
	w->cfg.metrics_table = (char *)(uintptr_t)"etc/ncu-metrics.tsv";
	w->cfg.adaptive = 1;
}

static char *args2(struct world *w)
{
	char path[400];

	snprintf(path, sizeof(path), "%s2", w->args);
	return read_all(path);
}

/* The FP16 GEMM's tensor pipe ran while bf16 and fp64 counted nothing: the
 * second pass collects fp16 for that kernel alone and its 2 n^3 FLOPs join
 * the launch's record. */
static void test_adaptive_tensor(void **state)
{
	struct world *w = *state;
	char *k, *sum;
	const char *a;

	use_fp16_gemm(w);
	assert_int_equal(run_plugin(w), RL_OK);
	k = record(w, "kernel", 0);
	assert_non_null(k);
	assert_string_equal(get(k, "kernel"), FP16_KERNEL);
	assert_string_equal(get(k, FP16_DATAPATH), "137438953472"); /* 2 * 4096^3 */
	assert_string_equal(get(k, "tensor_not_collected"), "");
	assert_string_equal(get(k, "adaptive"), "tensor");
	assert_string_equal(get(k, "adaptive_passes"), "6");
	assert_string_equal(get(k, "profiler__replayer_passes"), "4"); /* the first pass's */
	assert_string_equal(get(k, "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum"), "0");
	free(k);
	sum = record(w, "collect_summary", 0);
	assert_string_equal(get(sum, "adaptive_launches"), "1");
	assert_string_equal(get(sum, "tensor_not_collected"), "fp16,tf32,fp8,int8");
	free(sum);
	a = args2(w);
	assert_non_null(a);
	assert_non_null(strstr(a, "\n--kernel-name-base\ndemangled\n-k\nregex:(^" FP16_KERNEL "$)\n"));
	assert_non_null(strstr(a, "sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_src_tf32_dst_fp32.sum,"
				  "sm__ops_path_tensor_src_fp8.sum,sm__ops_path_tensor_src_int8.sum,"));
	assert_null(strstr(strstr(a, "==call") + 1, "==call")); /* one try */
}

/* The targeted filter profiles nothing (as ncu's demangled base did for a
 * template kernel on the H100): the pass is tried again with the step's
 * own filters, and the launch still gets its FLOPs. */
static void test_adaptive_fallback(void **state)
{
	struct world *w = *state;
	char first[1400], *k;
	const char *a, *second;

	use_fp16_gemm(w);
	snprintf(first, sizeof(first), "%s/bad/no-kernels.log", fixtures);
	setenv("FAKE_CSV2_FIRST", first, 1);
	assert_int_equal(run_plugin(w), RL_OK);
	k = record(w, "kernel", 0);
	assert_string_equal(get(k, FP16_DATAPATH), "137438953472");
	assert_string_equal(get(k, "tensor_not_collected"), "");
	free(k);
	a = args2(w);
	second = strstr(strstr(a, "==call") + 1, "==call");
	assert_non_null(second);
	assert_null(strstr(second, "--kernel-name-base"));
	assert_null(strstr(second, "\n-k\n"));
	assert_non_null(strstr(w->h.log.buf, "second pass unreadable"));
}

/* adaptive: false keeps today's single pass: the datapath stays uncounted
 * and named. */
static void test_adaptive_off(void **state)
{
	struct world *w = *state;
	char *k;

	use_fp16_gemm(w);
	w->cfg.adaptive = 0;
	assert_int_equal(run_plugin(w), RL_OK);
	k = record(w, "kernel", 0);
	assert_null(strstr(k, FP16_DATAPATH "="));
	assert_string_equal(get(k, "tensor_not_collected"), "fp16,tf32,fp8,int8");
	free(k);
	assert_null(args2(w));
}

/* kernel_abc: only kernel_C's tensor pipe ran (one HFMA2.MMA move per
 * warp, docs/collect.md), so it alone is marked; the BF16 GEMM's pipe is
 * explained by its counted datapath, so it is not. */
static void test_adaptive_mark(void **state)
{
	const struct ncu_table_row **sel = NULL;
	struct ncu_table *t = NULL;
	struct ncu_csv *csv = NULL;
	struct ncu_record_column *cols;
	const char **names;
	char err[NCU_CSV_ERRLEN];
	bool need[4] = { true, true, true, true };
	long n;

	(void)state;
	assert_int_equal(ncu_table_load("etc/ncu-metrics.tsv", &t, err, sizeof(err)), 0);
	n = ncu_table_select(t, "90", NULL, 0, &sel);
	assert_true(n > 0);
	cols = columns_of(sel, (size_t)n);
	names = names_of(sel, (size_t)n);
	assert_int_equal(ncu_csv_read_file(fixture("../instr/abc-adaptive2.ncu.csv"), names,
					   (size_t)n, &csv, err, sizeof(err)), -ENOENT);
	assert_int_equal(ncu_csv_read_file(fixture("../instr/abc-instr.ncu.csv"), names,
					   (size_t)n, &csv, err, sizeof(err)), 0);
	assert_int_equal(csv->n_launches, 3);
	assert_int_equal(adapt_mark(csv, cols, (size_t)n, need), 1);
	assert_false(need[0]);
	assert_false(need[1]);
	assert_true(need[2]);
	assert_int_equal(adapt_match(csv, 2, csv), 2);
	ncu_csv_free(csv);
	csv = NULL;
	assert_int_equal(ncu_csv_read_file(fixture("../tensor/gemm-bf16.ncu.csv"), names,
					   (size_t)n, &csv, err, sizeof(err)), 0);
	assert_int_equal(adapt_mark(csv, cols, (size_t)n, need), 0);
	ncu_csv_free(csv);
	free(cols);
	free(names);
	free(sel);
	ncu_table_free(t);
}

/* The rows of the second pass on sm_90, with and without extra; the regex
 * of a name; a template kernel's optional 'void '. */
static void test_adaptive_rows_and_regex(void **state)
{
	const struct ncu_table_row **rows = NULL;
	struct ncu_table *t = NULL;
	char err[NCU_TABLE_ERRLEN], buf[256];
	long n;

	(void)state;
	assert_int_equal(ncu_table_load("etc/ncu-metrics.tsv", &t, err, sizeof(err)), 0);
	n = adapt_rows(t, "90", NULL, 0, &rows);
	assert_int_equal(n, 6);
	assert_string_equal(rows[0]->role, "tensor_fp16");
	assert_string_equal(rows[3]->role, "tensor_int8");
	assert_string_equal(rows[4]->role, "passes");
	assert_string_equal(rows[5]->role, "tensor_inst_hfma2");
	free(rows);
	n = adapt_rows(t, "90", (const char *const[]){ "all" }, 1, &rows);
	assert_int_equal(n, 0); /* nothing left out: no second pass */
	free(rows);
	n = adapt_rows(t, "90", (const char *const[]){ "tensor_fp16", "tensor_int8" }, 2, &rows);
	assert_int_equal(n, 4); /* tf32, fp8, passes, hfma2 */
	free(rows);
	ncu_table_free(t);
	assert_string_equal(adapt_regex_escape("kernel_C(double *, long)", buf),
			    "kernel_C\\(double \\*, long\\)");
	assert_string_equal(adapt_regex_escape("a.b|c[1]{2}^$+?\\", buf),
			    "a\\.b\\|c\\[1\\]\\{2\\}\\^\\$\\+\\?\\\\");
}

static void test_adaptive_kernel_list(void **state)
{
	struct ncu_csv *csv = NULL;
	struct rl_strlist l = { 0 };
	char err[NCU_CSV_ERRLEN];
	bool need[16] = { 0 };

	(void)state;
	assert_int_equal(ncu_csv_read_file(fixture("../instr/walls-instr.ncu.csv"), NULL, 0,
					   &csv, err, sizeof(err)), 0);
	assert_int_equal(csv->n_launches, 15);
	need[1] = need[7] = need[13] = true; /* walls_global<1>, walls_shared<1>, transpose_naive */
	assert_int_equal(adapt_kernel_list(csv, need, &l), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0], "^(void )?walls_global<1>\\(const float \\*, float \\*, unsigned int\\)$");
	assert_string_equal(l.v[1], "^(void )?walls_shared<1>\\(float \\*\\)$");
	assert_string_equal(l.v[2], "^transpose_naive\\(const float \\*, float \\*, int\\)$");
	adapt_list_release(&l);
	ncu_csv_free(csv);
}

/* ---- the instruction pass (option instruction_kernels) -------------------- */

/* inst_walls on the H100: the first pass with the default set (run 2), the
 * instruction rows from run 1's capture of the same program. */
static void use_walls(struct world *w, char **re, size_t n)
{
	static char first[1400], third[1400];

	snprintf(first, sizeof(first), "%s/../instr/walls-adaptive.ncu.csv", fixtures);
	snprintf(third, sizeof(third), "%s/../instr/walls-instr.ncu.csv", fixtures);
	setenv("FAKE_CSV", first, 1);
	setenv("FAKE_CSV3", third, 1);
	w->cfg.metrics_table = (char *)(uintptr_t)"etc/ncu-metrics.tsv";
	w->cfg.instruction_kernels = (struct rl_strlist){ n, re };
}

static char *args3(struct world *w)
{
	char path[400];

	snprintf(path, sizeof(path), "%s3", w->args);
	return read_all(path);
}

/* Only the transposes get the instruction rows, merged into their records
 * by kernel and invocation; the first pass stays the default set. */
static void test_instruction_pass(void **state)
{
	struct world *w = *state;
	char *re[] = { (char *)(uintptr_t)"^transpose_" };
	char *k, *sum;
	const char *a;
	long n = stub_host_count(&w->h, "kernel");

	use_walls(w, re, 1);
	assert_int_equal(run_plugin(w), RL_OK);
	n = stub_host_count(&w->h, "kernel") - n;
	assert_int_equal(n, 15);
	k = record(w, "kernel", 13);
	assert_string_equal(get(k, "kernel"), "transpose_naive(const float *, float *, int)");
	assert_string_equal(get(k, "smsp__inst_executed.sum"), "71303168");
	assert_string_equal(get(k, "instruction_pass"), "1");
	assert_string_equal(get(k, "instruction_passes"), "6");
	assert_string_equal(get(k, "profiler__replayer_passes"), "4"); /* the first pass's */
	free(k);
	k = record(w, "kernel", 1); /* walls_global<1>: not named */
	assert_null(strstr(k, "smsp__inst_executed.sum="));
	assert_null(strstr(k, "instruction_pass="));
	free(k);
	sum = record(w, "collect_summary", 0);
	assert_string_equal(get(sum, "instruction_launches"), "2");
	assert_string_equal(get(sum, "instruction_passes"), "6");
	assert_null(strstr(sum, "adaptive_launches="));
	/* the first pass collected no instruction row */
	assert_null(strstr(get(sum, "command"), "smsp__inst_executed.sum"));
	assert_non_null(strstr(get(sum, "command"), "gpu__time_duration.sum"));
	free(sum);
	a = args3(w);
	assert_non_null(a);
	assert_non_null(strstr(a, "\n--metrics\nsmsp__inst_executed.sum,"));
	assert_non_null(strstr(a, "\n-k\nregex:(^transpose_naive\\(const float \\*, float \\*, int\\)$)|"
				  "(^transpose_padded\\(const float \\*, float \\*, int\\)$)\n"));
}

static void test_instruction_pass_errors(void **state)
{
	struct world *w = *state;
	char *re[] = { (char *)(uintptr_t)"(unclosed" };
	char *extra[] = { (char *)(uintptr_t)"instruction" };

	use_walls(w, re, 1);
	assert_int_equal(run_plugin(w), RL_OK); /* a warning, the first pass stands */
	assert_non_null(strstr(w->h.log.buf, "instruction_kernels: '(unclosed'"));
	assert_null(args3(w));
	w->cfg.extra = (struct rl_strlist){ 1, extra };
	assert_int_not_equal(rooflined_plugin.init(&w->h.ctx, &w->cfg, &w->state), 0);
	assert_non_null(strstr(w->h.log.buf, "exclude each other"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_command_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extra_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_extra_all_full_capture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ncu_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_capture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unprofiled_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ncu_error_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_kernels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_not_found, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arch_auto, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_and_uuid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_init_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adaptive_tensor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adaptive_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adaptive_off, setup, teardown),
		cmocka_unit_test(test_adaptive_mark),
		cmocka_unit_test(test_adaptive_rows_and_regex),
		cmocka_unit_test(test_adaptive_kernel_list),
		cmocka_unit_test_setup_teardown(test_instruction_pass, setup, teardown),
		cmocka_unit_test_setup_teardown(test_instruction_pass_errors, setup, teardown),
	};
	const char *d = getenv("NCU_FIXTURES");

	if (!realpath(d ? d : "tests/fixtures/ncu", fixtures)) {
		perror("tests/fixtures/ncu");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
