/*
 * ncu - collect roofline metrics per kernel launch with Nsight Compute.
 *
 * Runs the step's command under the ncu CLI (fork/exec, no shell):
 *
 *   ncu --clock-control none --print-units base --csv --page raw
 *       --metrics SET [-k regex:K] [--launch-skip N] [--launch-count N]
 *       [--nvtx --nvtx-include R] --log-file OUT/ncu.csv -- PROGRAM ARGS...
 *
 * (built by plugins/ncu/argv.c).  SET is the GPU architecture's rows of the
 * metric table (etc/ncu-metrics.tsv: data, not code; plugins/ncu/ncu_table.h).
 * With --log-file, ncu writes its own lines and the CSV table into
 * OUT/ncu.csv, while the profiled program's stdout and stderr go to
 * OUT/program.log.  The table is parsed (plugins/ncu/ncu_csv.h) and turned into
 * records (plugins/ncu/ncu_record.h): every GPU becomes a `device` record (the raw
 * page's device__attribute_*, nvlink__*, numa__*, c2clink__* columns, once),
 * every launch a `kernel` record (every collected metric but those device
 * properties under its ncu name, in ncu's base units, exact text; `missing`
 * lists what ncu did not deliver: ncu drops metric names it does not know
 * without an error), then one `collect_summary` record.  Anything wrong - ncu
 * or the program failing, an ==ERROR== line, a damaged table, a launch
 * without values - fails the step and emits nothing, so no partial profile is
 * ever stored.
 *
 * A bare program name is looked up in $ROOFLINE_LIBEXEC (the reference
 * kernels), then the run directory, then PATH; a relative path is taken from
 * the run directory; an absolute one (and "~/...", from $HOME) as it is.
 * The program's working directory is the step's `workdir` (checked by the
 * host), else the run directory.
 *
 * A step with `tasks` (an MPI program) is started through its launcher
 * (srun, or mpirun) as that many ranks, and ncu wraps the ranks of option
 * `ranks` (plugins/ncu/launch.h): one collection per rank, OUT/ncu.rank-R.csv,
 * each of its device and kernel records tagged with `rank`, `node` (the
 * rank's) and `gpu_uuid` (from nvidia-smi on the rank's node).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "ncu/adapt.h"
#include "ncu/argv.h"
#include "ncu/gpus.h"
#include "ncu/launch.h"
#include "ncu/ncu_csv.h"
#include "ncu/ncu_record.h"
#include "ncu/ncu_table.h"
#include "ncu/ncu_value.h"
#include "rooflined/plugin.h"

#define NCU_TABLE_NAME "ncu-metrics.tsv"
#define NCU_CSV_FILE "ncu.csv"
#define PROGRAM_LOG_FILE "program.log"
#define ADAPT_CSV_FILE "ncu-adaptive.csv"
#define ADAPT_LOG_FILE "program-adaptive.log"
#define INSTR_CSV_FILE "ncu-instruction.csv"
#define INSTR_LOG_FILE "program-instruction.log"

static const struct rl_option ncu_options[] = {
	{ "command", RL_OPT_COMMAND, NULL, offsetof(struct ncu_config, command),
	  "program to profile and its arguments (bare name: $ROOFLINE_LIBEXEC, run dir, PATH)",
	  1 },
	{ "kernels", RL_OPT_LIST, NULL, offsetof(struct ncu_config, kernels),
	  "kernel name regexes to profile (ncu -k regex:A|B); none: every kernel", 0 },
	{ "launch_skip", RL_OPT_INT, "0", offsetof(struct ncu_config, launch_skip),
	  "matching launches to skip first (ncu --launch-skip)", 0 },
	{ "launch_count", RL_OPT_INT, "0", offsetof(struct ncu_config, launch_count),
	  "matching launches to profile, 0 for all (ncu --launch-count)", 0 },
	{ "nvtx_include", RL_OPT_STRING, NULL, offsetof(struct ncu_config, nvtx_include),
	  "profile only inside this NVTX range (ncu --nvtx --nvtx-include)", 0 },
	{ "metrics_table", RL_OPT_STRING, NULL, offsetof(struct ncu_config, metrics_table),
	  "metric table (default $ROOFLINE_ETC/ncu-metrics.tsv)", 0 },
	{ "arch", RL_OPT_STRING, "auto", offsetof(struct ncu_config, arch),
	  "compute capability without the dot (90), or auto: ask nvidia-smi", 0 },
	{ "ncu", RL_OPT_STRING | RL_OPT_PROGRAM, "ncu", offsetof(struct ncu_config, ncu),
	  "the Nsight Compute CLI (name on PATH, or a path)", 0 },
	{ "extra", RL_OPT_LIST | RL_OPT_PROGRAM, NULL, offsetof(struct ncu_config, extra),
	  "extra-set roles to collect too (bytes_l1_ncu, tensor_fp16, ..., or all); each costs replay passes",
	  0 },
	{ "device", RL_OPT_INT, "-1", offsetof(struct ncu_config, device),
	  "profile on this GPU of the job (entry of CUDA_VISIBLE_DEVICES, else nvidia-smi index); -1: as given",
	  0 },
	{ "ranks", RL_OPT_LIST, NULL, offsetof(struct ncu_config, ranks),
	  "steps with tasks: the MPI ranks to profile, one collection each ([0, 3], or [all]); none: [0]",
	  0 },
	{ "adaptive", RL_OPT_BOOL, "true", offsetof(struct ncu_config, adaptive),
	  "profile again, with the tensor datapaths the set left out, just the launches whose tensor pipe ran while no collected datapath counted",
	  0 },
	{ "instruction_kernels", RL_OPT_LIST, NULL, offsetof(struct ncu_config, instruction_kernels),
	  "collect the Instruction Roofline's rows in a second pass over the launches whose kernel name matches one of these POSIX extended regexes",
	  0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

struct ncu_state {
	struct ncu_table *table;
	char *table_path;
};

/* ---- paths -------------------------------------------------------------- */

static bool is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* The first dir of a ':'-separated list holding an executable name. */
static char *search_dirs(const char *dirs, const char *name)
{
	const char *d = dirs;

	while (d && *d) {
		const char *colon = strchr(d, ':');
		size_t n = colon ? (size_t)(colon - d) : strlen(d);
		char dir[4096], *p;

		if (n && n < sizeof(dir)) {
			memcpy(dir, d, n);
			dir[n] = '\0';
			p = join(dir, name);
			if (p && is_executable(p))
				return p;
			free(p);
		}
		d = colon ? colon + 1 : NULL;
	}
	return NULL;
}

/*
 * Find a program: absolute as is; with a '/' from the run dir; bare:
 * $ROOFLINE_LIBEXEC, the run dir, then PATH.  Caller frees; NULL if absent.
 */
static char *find_program(const char *name, const char *run_dir, bool libexec)
{
	const char *home = getenv("HOME");
	char *p;

	if (name[0] == '/')
		return is_executable(name) ? strdup(name) : NULL;
	if (name[0] == '~' && (!name[1] || name[1] == '/') && home && *home) {
		p = join(home, name[1] ? name + 2 : "");
		if (p && is_executable(p))
			return p;
		free(p);
		return NULL;
	}
	if (strchr(name, '/')) {
		p = join(run_dir, name);
		if (p && is_executable(p))
			return p;
		free(p);
		return NULL;
	}
	if (libexec && (p = search_dirs(getenv("ROOFLINE_LIBEXEC"), name)))
		return p;
	if ((p = search_dirs(run_dir, name)))
		return p;
	return search_dirs(getenv("PATH"), name);
}

/* find_program() made absolute: the child changes into the run directory. */
static char *resolve_program(const char *name, const char *run_dir,
			     bool libexec)
{
	char *p = find_program(name, run_dir, libexec), *abs;

	if (!p || p[0] == '/')
		return p;
	abs = realpath(p, NULL);
	free(p);
	return abs;
}

static char *resolve_ncu(const char *name, const char *run_dir)
{
	char *p = resolve_program(name, run_dir, false);

	if (!p && !strchr(name, '/'))
		p = search_dirs("/usr/local/cuda/bin", name);
	return p;
}

/* ---- processes ---------------------------------------------------------- */

struct child_io {
	const char *cwd;    /* NULL: inherit */
	const char *stdout_path; /* stdout+stderr to this file; NULL: pipe */
	char *capture;      /* pipe mode: first bytes of stdout (NUL-terminated) */
	size_t capture_size;
};

/* In the child: set up fds and cwd, exec; report errno on the status pipe. */
static void child_exec(char *const argv[], const struct child_io *io,
		       int out_fd, int status_fd)
{
	int e;

	if (io->cwd && chdir(io->cwd) < 0)
		goto fail;
	if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0)
		goto fail;
	execv(argv[0], argv);
fail:
	e = errno;
	if (write(status_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* Read the pipe to EOF, keeping the first capture_size-1 bytes. */
static void drain(int fd, struct child_io *io)
{
	size_t got = 0;
	char junk[4096];

	for (;;) {
		char *dst = io->capture && got + 1 < io->capture_size ? io->capture + got : junk;
		size_t room = dst == junk ? sizeof(junk) : io->capture_size - 1 - got;
		ssize_t n = read(fd, dst, room);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (dst != junk)
			got += (size_t)n;
	}
	if (io->capture && io->capture_size)
		io->capture[got] = '\0';
}

/* Wait for pid; exec errors come back on status_fd.  Returns the exit
 * status, 128+signal, or -errno when the program could not be started. */
static int reap(pid_t pid, int status_fd)
{
	int st, e = 0;
	ssize_t n;

	do
		n = read(status_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (n == (ssize_t)sizeof(e))
		return -(e ? e : ENOEXEC);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

/* Open the child's output: a file (truncated) or a pipe. */
static int open_output(const struct child_io *io, int pipe_fds[2])
{
	pipe_fds[0] = pipe_fds[1] = -1;
	if (io->stdout_path) {
		pipe_fds[1] = open(io->stdout_path,
				   O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		return pipe_fds[1] < 0 ? -errno : 0;
	}
	return pipe2(pipe_fds, O_CLOEXEC) < 0 ? -errno : 0;
}

/* Run argv (argv[0] a path) to completion.  See reap() for the result. */
static int run_child(char *const argv[], struct child_io *io)
{
	int out[2], status[2], ret;
	pid_t pid;

	ret = open_output(io, out);
	if (ret)
		return ret;
	if (pipe2(status, O_CLOEXEC) < 0) {
		ret = -errno;
		goto out_close;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(status[0]);
		close(status[1]);
		goto out_close;
	}
	if (pid == 0)
		child_exec(argv, io, out[1], status[1]);
	close(status[1]);
	close(out[1]);
	out[1] = -1;
	if (out[0] >= 0)
		drain(out[0], io);
	ret = reap(pid, status[0]);
	close(status[0]);
out_close:
	if (out[0] >= 0)
		close(out[0]);
	if (out[1] >= 0)
		close(out[1]);
	return ret;
}

/* ---- GPU facts ------------------------------------------------------------ */

/* "Version 2025.3.1.0 (build ...)" -> "2025.3.1.0" from `ncu --version`. */
static int ncu_version(struct rl_ctx *ctx, const char *ncu, char *out,
		       size_t size)
{
	char buf[2048], *v, *end;
	char *argv[] = { (char *)(uintptr_t)ncu, (char *)(uintptr_t)"--version", NULL };
	struct child_io io = { .capture = buf, .capture_size = sizeof(buf) };
	int rc = run_child(argv, &io);

	if (rc != 0 || !(v = strstr(buf, "Version "))) {
		rl_error(ctx, "'%s --version' failed (%s): is Nsight Compute installed?",
			 ncu, rc < 0 ? strerror(-rc) : "no version line");
		return -EINVAL;
	}
	v += strlen("Version ");
	end = v + strcspn(v, " \n");
	snprintf(out, size, "%.*s", (int)(end - v), v);
	return 0;
}

/* The first GPU this job may use: CUDA_VISIBLE_DEVICES' first entry. */
static void visible_gpu(char *buf, size_t size)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");
	size_t n;

	snprintf(buf, size, "0");
	if (!v || !*v)
		return;
	n = strcspn(v, ",");
	if (n && n < size)
		snprintf(buf, size, "%.*s", (int)n, v);
}

/* Ask nvidia-smi for the compute capability; "9.0" -> "90" into arch. */
static int detect_arch(struct rl_ctx *ctx, char *arch, size_t size)
{
	char buf[256], gpu[128], *smi = resolve_program("nvidia-smi", "/", false);
	char *argv[] = { smi, (char *)(uintptr_t)"--query-gpu=compute_cap",
			 (char *)(uintptr_t)"--format=csv,noheader",
			 (char *)(uintptr_t)"-i", gpu, NULL };
	struct child_io io = { .capture = buf, .capture_size = sizeof(buf) };
	int rc = -ENOENT;

	visible_gpu(gpu, sizeof(gpu));
	if (smi)
		rc = run_child(argv, &io);
	free(smi);
	if (rc == 0) {
		buf[strcspn(buf, "\r\n")] = '\0';
		if (ncu_table_arch_of_cc(buf, arch, size))
			return 0;
	}
	rl_error(ctx, "cannot tell the GPU architecture (nvidia-smi --query-gpu=compute_cap: %s); set the option arch, e.g. arch: 90",
		 rc < 0 ? strerror(-rc) : rc > 0 ? "failed" : buf);
	return -EINVAL;
}

/*
 * device >= 0: make that GPU of the job the only one the profiled program
 * sees (CUDA_VISIBLE_DEVICES, with CUDA's indices in nvidia-smi's PCI order
 * when the job set no order), so that ncu's --devices 0 is that GPU.  The
 * job process runs one step, so its environment is this step's.
 */
static int select_device(struct rl_ctx *ctx, const struct ncu_config *cfg)
{
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	char gpu[128];

	if (cfg->device < 0)
		return 0;
	if (gpus_pick(visible, cfg->device, gpu, sizeof(gpu)) < 0) {
		rl_error(ctx, "device: %ld is not a GPU of this job (CUDA_VISIBLE_DEVICES='%s')",
			 cfg->device, visible ? visible : "");
		return -EINVAL;
	}
	if (setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0) < 0 ||
	    setenv("CUDA_VISIBLE_DEVICES", gpu, 1) < 0)
		return -errno;
	rl_info(ctx, "profiling on GPU %s (CUDA_VISIBLE_DEVICES=%s, ncu --devices 0)", gpu, gpu);
	return 0;
}

/* The UUID of every GPU of the node, by PCI address (gpus.h); none (a
 * warning) when nvidia-smi cannot say. */
static void query_uuids(struct rl_ctx *ctx, struct gpus *g)
{
	char buf[8192], *smi = resolve_program("nvidia-smi", "/", false);
	char *argv[] = { smi, (char *)(uintptr_t)"--query-gpu=pci.bus_id,uuid",
			 (char *)(uintptr_t)"--format=csv,noheader", NULL };
	struct child_io io = { .capture = buf, .capture_size = sizeof(buf) };
	int rc = smi ? run_child(argv, &io) : -ENOENT;

	free(smi);
	memset(g, 0, sizeof(*g));
	if (rc == 0 && gpus_parse_smi(buf, g))
		return;
	rl_warn(ctx, "no GPU UUIDs (nvidia-smi --query-gpu=pci.bus_id,uuid: %s): kernel records carry none",
		rc < 0 ? strerror(-rc) : rc > 0 ? "failed" : "no GPU listed");
}

/* ---- records ---------------------------------------------------------------- */

/* Columns of the parsed table for the selected rows (slot = row index). */
static struct ncu_record_column *columns_of(const struct ncu_table_row *const *sel,
					    size_t n)
{
	struct ncu_record_column *cols = calloc(n ? n : 1, sizeof(*cols));
	size_t i;

	for (i = 0; cols && i < n; i++)
		cols[i] = (struct ncu_record_column){ sel[i]->metric, sel[i]->role, i };
	return cols;
}

static const char **names_of(const struct ncu_table_row *const *sel, size_t n)
{
	const char **names = calloc(n ? n : 1, sizeof(*names));
	size_t i;

	for (i = 0; names && i < n; i++)
		names[i] = sel[i]->metric;
	return names;
}

/* Distinct kernel names and the most passes any launch needed. */
static void summarize(const struct ncu_csv *t, const struct ncu_record_column *cols,
		      size_t ncols, long *kernels, long *passes)
{
	size_t i, j, k;

	*kernels = 0;
	*passes = 0;
	for (i = 0; i < t->n_launches; i++) {
		const char *name = t->launches[i].kernel;

		for (j = 0; j < i; j++)
			if (strcmp(t->launches[j].kernel, name) == 0)
				break;
		if (j == i)
			(*kernels)++;
		for (k = 0; k < ncols; k++) {
			double p;

			if (cols[k].role && strcmp(cols[k].role, "passes") == 0 &&
			    !ncu_value_parse(t->launches[i].values[k], &p) && p > *passes)
				*passes = (long)p;
		}
	}
}

/* A second pass (plugins/ncu/adapt.h): the tensor pass or the instruction
 * pass; what it is (its keys), what it collects, what it found. */
struct pass2 {
	const char *what;         /* "tensor" or "instruction", in messages */
	const char *passes_key;   /* "adaptive_passes", "instruction_passes" */
	const char *prefix;       /* of the summary's fields */
	const char *csv_file, *log_file;
	bool clears_tensor;       /* its launches' tensor_not_collected = "" */
	const struct ncu_table_row **sel;
	long n_sel;
	const char **names;
	struct ncu_csv *csv;
	bool *need;          /* per first-pass launch */
	size_t marked, merged;
	long passes;         /* most replay passes of a second-pass launch */
	double wall;
	char *command;
	struct rl_strlist kernels;
	struct argv_buf argv;
};

static void pass2_release(struct pass2 *p)
{
	free(p->sel);
	free(p->names);
	ncu_csv_free(p->csv);
	free(p->need);
	free(p->command);
	adapt_list_release(&p->kernels);
	argv_release(&p->argv);
	memset(p, 0, sizeof(*p));
}

/*
 * Append the fields of launch i from pass p to f (*n used; room for
 * p->n_sel + 2 more): each metric it delivered under its ncu name, its
 * passes as PREFIX_passes, and PREFIX_pass=1 (adaptive=tensor for the
 * tensor pass, as recorded since); the tensor pass also clears
 * tensor_not_collected among the fields before.  False when launch i had
 * no such pass.
 */
static bool pass2_append(const struct ncu_csv *t, size_t i, struct pass2 *p,
			 struct rl_field *f, size_t *n)
{
	long m = p->csv && p->need[i] ? adapt_match(t, i, p->csv) : -1;

	if (m < 0)
		return false;
	for (size_t k = 0; p->clears_tensor && k < *n; k++)
		if (strcmp(f[k].key, "tensor_not_collected") == 0)
			f[k].value = "";
	for (long k = 0; k < p->n_sel; k++) {
		const char *v = p->csv->launches[m].values[k];

		if (v)
			f[(*n)++] = (struct rl_field){
				strcmp(p->sel[k]->role, "passes") == 0 ? p->passes_key :
									 p->sel[k]->metric, v };
	}
	f[(*n)++] = p->clears_tensor ? (struct rl_field){ "adaptive", "tensor" } :
				       (struct rl_field){ "instruction_pass", "1" };
	f[*n] = (struct rl_field){ NULL, NULL };
	p->merged++;
	return true;
}

/*
 * The device records, then the kernel records.  Both carry the GPU's UUID
 * when known; a kernel record also `tensor_not_collected`: the tensor
 * datapaths of its GPU that this step's metric set left out ("" when none,
 * or when the second pass collected them for this launch), so that the
 * analysis and its readers never take an absent datapath for no work
 * (docs/collect.md).
 */
/* The MPI path's tags of one rank's records; NULL fields: not MPI. */
struct rank_tag {
	const char *rank, *node;
};

/* extra[at..] = rank and node when tagged; returns the next free slot. */
static size_t add_tags(struct rl_field *extra, size_t at, const struct rank_tag *tag)
{
	if (tag && tag->rank) {
		extra[at++] = (struct rl_field){ "rank", tag->rank };
		extra[at++] = (struct rl_field){ "node", tag->node };
	}
	extra[at] = (struct rl_field){ NULL, NULL };
	return at;
}

static int emit_kernels(struct rl_ctx *ctx, const struct ncu_csv *t,
			const struct ncu_record_column *cols, size_t ncols,
			const char *version, const struct gpus *g,
			const char *not_collected, const struct rank_tag *tag,
			struct pass2 *p2, size_t n_p2)
{
	struct rl_field extra[8] = {
		{ "source", "ncu" }, { "ncu_version", version },
	};
	/* merged: extra's fields, then each second pass's (pass2_append) */
	size_t room = sizeof(extra) / sizeof(extra[0]);
	struct rl_field *merged;
	struct ncu_record rec = { 0 };
	size_t i, k;
	int err;

	for (i = 0; i < n_p2; i++)
		room += (size_t)p2[i].n_sel + 2;
	merged = calloc(room, sizeof(*merged));
	err = merged ? 0 : -ENOMEM;
	for (i = 0; !err && i < t->n_devices; i++) {
		const char *uuid = gpus_uuid_of(g, &t->devices[i]);

		k = 2;
		if (uuid)
			extra[k++] = (struct rl_field){ "gpu_uuid", uuid };
		add_tags(extra, k, tag);
		err = ncu_record_device(t, i, extra, &rec);
		if (!err)
			err = rl_emit(ctx, "device", rec.fields);
	}
	for (i = 0; !err && i < t->n_launches; i++) {
		const char *uuid = gpus_uuid_of(g, &t->devices[t->launches[i].device_index]);
		size_t n = 2;
		bool any = false;


		extra[n++] = (struct rl_field){ "tensor_not_collected", not_collected };
		if (uuid)
			extra[n++] = (struct rl_field){ "gpu_uuid", uuid };
		n = add_tags(extra, n, tag);
		memcpy(merged, extra, n * sizeof(*merged));
		merged[n] = (struct rl_field){ NULL, NULL };
		for (k = 0; k < n_p2; k++)
			any = pass2_append(t, i, &p2[k], merged, &n) || any;
		err = ncu_record_kernel(t, i, cols, ncols, any ? merged : extra, &rec);
		if (!err)
			err = rl_emit(ctx, "kernel", rec.fields);
	}
	ncu_record_release(&rec);
	free(merged);
	return err;
}

/* One per collection (per rank on the MPI path, tagged like its kernels,
 * with the launcher's command line and the modules the node loaded): the
 * first pass's figures, then each second pass's that ran (PREFIX_launches
 * merged, PREFIX_passes, PREFIX_wall_s, PREFIX_command; PREFIX adaptive for
 * the tensor pass, instruction for the other). */
static int emit_summary(struct rl_ctx *ctx, const struct ncu_csv *t,
			const struct ncu_record_column *cols, size_t ncols,
			double wall_s, const char *command, const char *not_collected,
			const struct rank_tag *tag, const char *launcher,
			const struct pass2 *p2, size_t n_p2)
{
	char kern[24], inv[24], pas[24], wall[32], num[2][3][32], key[2][4][32];
	const char *workdir = rl_step_setting(ctx, "workdir");
	const char *modules = getenv("LOADEDMODULES");
	struct rl_field f[13 + 2 * 4] = { /* 12 fields, 4 per second pass, NULL */
		{ "source", "ncu" }, { "kernels", kern }, { "invocations", inv },
		{ "passes", pas }, { "wall_s", wall }, { "command", command },
		{ "tensor_not_collected", not_collected },
	};
	size_t n = 7;
	long kernels, passes;

	summarize(t, cols, ncols, &kernels, &passes);
	snprintf(kern, sizeof(kern), "%ld", kernels);
	snprintf(inv, sizeof(inv), "%zu", t->n_launches);
	snprintf(pas, sizeof(pas), "%ld", passes);
	snprintf(wall, sizeof(wall), "%.6f", wall_s);
	if (workdir)
		f[n++] = (struct rl_field){ "workdir", workdir };
	if (modules && *modules)
		f[n++] = (struct rl_field){ "modules", modules };
	if (launcher)
		f[n++] = (struct rl_field){ "launcher", launcher };
	n = add_tags(f, n, tag);
	for (size_t k = 0; k < n_p2 && k < 2; k++) {
		static const char *const what[4] = { "launches", "passes", "wall_s", "command" };

		if (!p2[k].csv)
			continue;
		for (int w = 0; w < 4; w++)
			snprintf(key[k][w], sizeof(key[k][w]), "%s_%s", p2[k].prefix, what[w]);
		snprintf(num[k][0], sizeof(num[k][0]), "%zu", p2[k].merged);
		snprintf(num[k][1], sizeof(num[k][1]), "%ld", p2[k].passes);
		snprintf(num[k][2], sizeof(num[k][2]), "%.6f", p2[k].wall);
		for (int w = 0; w < 3; w++)
			f[n++] = (struct rl_field){ key[k][w], num[k][w] };
		f[n++] = (struct rl_field){ key[k][3], p2[k].command };
	}
	f[n] = (struct rl_field){ NULL, NULL };
	return rl_emit(ctx, "collect_summary", f);
}

/* ---- plugin ----------------------------------------------------------------- */

static void ncu_fini(void *state)
{
	struct ncu_state *st = state;

	ncu_table_free(st->table);
	free(st->table_path);
	free(st);
}

/* Every `extra` item must be "all" or a role of the table's extra rows. */
static int check_extra(struct rl_ctx *ctx, const struct ncu_config *cfg,
		       const struct ncu_state *st)
{
	size_t i;

	for (i = 0; i < cfg->extra.n; i++) {
		if (strcmp(cfg->extra.v[i], "all") == 0 ||
		    ncu_table_has_extra_role(st->table, cfg->extra.v[i]))
			continue;
		rl_error(ctx, "extra: '%s' is not 'all' nor a role of an extra row of %s",
			 cfg->extra.v[i], st->table_path);
		return -EINVAL;
	}
	for (i = 0; cfg->instruction_kernels.n && i < cfg->extra.n; i++)
		if (strcmp(cfg->extra.v[i], NCU_TABLE_SET_INSTRUCTION) == 0) {
			rl_error(ctx, "extra: [instruction] (every launch, in the first pass) and instruction_kernels (a second pass over those kernels) exclude each other");
			return -EINVAL;
		}
	return 0;
}

static int ncu_init(struct rl_ctx *ctx, const void *config, void **state)
{
	const struct ncu_config *cfg = config;
	const char *etc = getenv("ROOFLINE_ETC");
	char err[NCU_TABLE_ERRLEN];
	struct ncu_state *st;
	int rc;

	if (cfg->launch_skip < 0 || cfg->launch_count < 0) {
		rl_error(ctx, "launch_skip and launch_count must be >= 0");
		return -EINVAL;
	}
	if (!cfg->metrics_table && !(etc && *etc)) {
		rl_error(ctx, "no metric table: set metrics_table or ROOFLINE_ETC");
		return -EINVAL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->table_path = cfg->metrics_table ? strdup(cfg->metrics_table) :
					      join(etc, NCU_TABLE_NAME);
	rc = st->table_path ? ncu_table_load(st->table_path, &st->table, err,
					     sizeof(err)) : -ENOMEM;
	if (!rc)
		rc = check_extra(ctx, cfg, st);
	else
		rl_error(ctx, "%s", rc == -ENOMEM ? "out of memory" : err);
	if (rc) {
		ncu_fini(st);
		return rc;
	}
	*state = st;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Everything run() needs, owned in one place. */
struct job {
	char arch[8];
	char version[64];
	char not_collected[128]; /* tensor datapaths the set leaves out */
	struct gpus gpus;
	char *ncu, *program, *metrics, *csv_path, *log_path, *command;
	const struct ncu_table_row **sel;
	const char **names; /* the selected rows' metric names */
	long n_sel;
	struct ncu_record_column *cols;
	struct argv_buf argv;
	struct ncu_csv *csv;
	const char *workdir; /* the program's: the step's workdir or run dir */
	long tasks;          /* the step's `tasks`; 0: not MPI */
};

static void job_release(struct job *j)
{
	free(j->ncu);
	free(j->program);
	free(j->metrics);
	free(j->csv_path);
	free(j->log_path);
	free(j->command);
	free(j->sel);
	free(j->names);
	free(j->cols);
	argv_release(&j->argv);
	ncu_csv_free(j->csv);
}

static bool is_arch_text(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n >= 2 && n <= 3 && s[n] == '\0';
}

/* Resolve programs and the metric set; build the command line. */
static enum rl_result prepare(struct rl_ctx *ctx, const struct ncu_config *cfg,
			      struct ncu_state *st, struct job *j)
{
	if (!(j->ncu = resolve_ncu(cfg->ncu, ctx->run_dir))) {
		rl_error(ctx, "cannot find ncu '%s' (on PATH or in /usr/local/cuda/bin)", cfg->ncu);
		return RL_FAIL;
	}
	j->workdir = rl_step_setting(ctx, "workdir");
	if (!j->workdir)
		j->workdir = ctx->run_dir;
	if (rl_step_setting(ctx, "tasks"))
		j->tasks = strtol(rl_step_setting(ctx, "tasks"), NULL, 10);
	if (j->tasks > 0 && cfg->device >= 0) {
		rl_error(ctx, "device: each rank's GPU is the launcher's to give (gpus_per_task); leave device out of a step with tasks");
		return RL_FAIL;
	}
	if (!(j->program = resolve_program(cfg->command.v[0], ctx->run_dir, true))) {
		rl_error(ctx, "cannot find program '%s' in $ROOFLINE_LIBEXEC, the run directory or PATH",
			 cfg->command.v[0]);
		return RL_FAIL;
	}
	if (ncu_version(ctx, j->ncu, j->version, sizeof(j->version)) ||
	    select_device(ctx, cfg))
		return RL_FAIL;
	if (strcmp(cfg->arch, "auto") == 0) {
		if (detect_arch(ctx, j->arch, sizeof(j->arch)))
			return RL_FAIL;
	} else if (!is_arch_text(cfg->arch)) {
		rl_error(ctx, "arch '%s' is not 'auto' or a compute capability without the dot (e.g. 90)",
			 cfg->arch);
		return RL_FAIL;
	} else {
		snprintf(j->arch, sizeof(j->arch), "%s", cfg->arch);
	}
	if (!ncu_table_has_arch(st->table, j->arch))
		rl_warn(ctx, "%s has no rows of its own for arch %s: collecting the '*' rows only",
			st->table_path, j->arch);
	j->n_sel = ncu_table_select(st->table, j->arch,
				    (const char *const *)cfg->extra.v, cfg->extra.n,
				    &j->sel);
	if (ncu_table_datapaths(st->table, j->arch, (const char *const *)cfg->extra.v,
				cfg->extra.n, j->not_collected, sizeof(j->not_collected)))
		rl_info(ctx, "tensor datapaths not collected (extra: [tensor_...] or all adds them, at more replay passes): %s",
			j->not_collected);
	j->metrics = j->n_sel > 0 ? argv_metric_list(j->sel, (size_t)j->n_sel) : NULL;
	j->cols = j->n_sel > 0 ? columns_of(j->sel, (size_t)j->n_sel) : NULL;
	j->names = j->n_sel > 0 ? names_of(j->sel, (size_t)j->n_sel) : NULL;
	j->csv_path = join(ctx->out_dir, NCU_CSV_FILE);
	j->log_path = join(ctx->out_dir, PROGRAM_LOG_FILE);
	if (!j->metrics || !j->cols || !j->names || !j->csv_path || !j->log_path ||
	    argv_build(&j->argv, cfg, j->ncu, j->program, j->metrics, j->csv_path) ||
	    !(j->command = argv_text(j->argv.v))) {
		rl_error(ctx, "out of memory");
		return RL_FAIL;
	}
	return RL_OK;
}

/* The first "==ERROR==" line of ncu's log, for the step's error message. */
static bool first_error(const char *path, char *line, size_t size)
{
	FILE *f = fopen(path, "re");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, (int)size, f))
		found = strncmp(line, "==ERROR==", 9) == 0;
	fclose(f);
	if (found)
		line[strcspn(line, "\r\n")] = '\0';
	return found;
}

/* Run ncu; then parse its table.  The log file holds ncu's own lines too. */
static enum rl_result profile(struct rl_ctx *ctx, struct job *j, double *wall)
{
	struct child_io io = { .cwd = j->workdir, .stdout_path = j->log_path };
	char err[NCU_CSV_ERRLEN];
	double t0 = now_s();
	int rc;

	rl_info(ctx, "running %s", j->command);
	rc = run_child(j->argv.v, &io);
	*wall = now_s() - t0;
	if (rc < 0) {
		rl_error(ctx, "cannot run '%s': %s", j->ncu, strerror(-rc));
		return RL_FAIL;
	}
	if (rc != 0) {
		char line[512];

		if (first_error(j->csv_path, line, sizeof(line)))
			rl_error(ctx, "%s: %s", j->csv_path, line);
		rl_error(ctx, "ncu exited with status %d (the program's output is in %s, ncu's in %s)",
			 rc, j->log_path, j->csv_path);
		return RL_FAIL;
	}
	rc = ncu_csv_read_file(j->csv_path, j->names, (size_t)j->n_sel, &j->csv,
			       err, sizeof(err));
	if (rc) {
		rl_error(ctx, "%s", rc == -ENOMEM ? "out of memory" : err);
		return RL_FAIL;
	}
	return RL_OK;
}

/* The first ==ERROR== line of any profiled rank's log, as an error. */
static void rank_errors(struct rl_ctx *ctx, const struct launch_ranks *rk, long tasks)
{
	char path[4096], line[512];

	for (size_t i = 0; i < launch_ranks_count(rk, tasks); i++) {
		snprintf(path, sizeof(path), "%s/ncu.rank-%ld.csv", ctx->out_dir,
			 launch_ranks_at(rk, i));
		if (first_error(path, line, sizeof(line))) {
			rl_error(ctx, "%s: %s", path, line);
			return;
		}
	}
}

/* One profiled rank's table into records tagged with rank and node. */
static enum rl_result collect_rank(struct rl_ctx *ctx, struct job *j, long rank,
				   double wall, const char *launcher)
{
	char path[4096], node[256], rank_text[24], err[NCU_CSV_ERRLEN];
	struct ncu_csv *csv = NULL;
	struct rank_tag tag = { rank_text, node };
	int rc;

	snprintf(rank_text, sizeof(rank_text), "%ld", rank);
	if (launch_rank_info(ctx->out_dir, rank, node, sizeof(node), &j->gpus) < 0) {
		rl_error(ctx, "rank %ld never started (no %s/rank-%ld.node): see %s/launcher.log",
			 rank, ctx->out_dir, rank, ctx->out_dir);
		return RL_FAIL;
	}
	snprintf(path, sizeof(path), "%s/ncu.rank-%ld.csv", ctx->out_dir, rank);
	rc = ncu_csv_read_file(path, j->names, (size_t)j->n_sel, &csv, err, sizeof(err));
	if (rc) {
		rl_error(ctx, "rank %ld: %s", rank, rc == -ENOMEM ? "out of memory" : err);
		return RL_FAIL;
	}
	if (!j->gpus.n)
		rl_warn(ctx, "rank %ld on %s: no GPU UUIDs (nvidia-smi gave none)", rank, node);
	rl_info(ctx, "rank %ld on %s: %zu kernel launches", rank, node, csv->n_launches);
	rc = emit_kernels(ctx, csv, j->cols, (size_t)j->n_sel, j->version, &j->gpus,
			  j->not_collected, &tag, NULL, 0);
	if (!rc)
		rc = emit_summary(ctx, csv, j->cols, (size_t)j->n_sel, wall, j->command,
				  j->not_collected, &tag, launcher, NULL, 0);
	ncu_csv_free(csv);
	if (rc) {
		rl_error(ctx, "cannot emit records");
		return RL_RETRY;
	}
	return RL_OK;
}

/* The MPI path: the launcher starts `tasks` ranks, ncu wraps the named
 * ones (launch.h); then every profiled rank's table becomes records. */
static enum rl_result run_ranks(struct rl_ctx *ctx, const struct ncu_config *cfg,
				struct job *j)
{
	const char *launcher = rl_step_setting(ctx, "launcher"), *gpt;
	char err[256], *lpath, *log = join(ctx->out_dir, "launcher.log");
	struct launch_ranks rk;
	struct argv_buf a = { 0 };
	struct child_io io = { .cwd = j->workdir, .stdout_path = log };
	enum rl_result r = RL_FAIL;
	double t0, wall;
	int rc;

	launcher = launcher ? launcher : "srun";
	lpath = resolve_program(launcher, ctx->run_dir, false);
	if (!lpath || !log) {
		rl_error(ctx, "cannot find the launcher '%s' on PATH", launcher);
		goto out_free;
	}
	if (launch_ranks_parse(&cfg->ranks, j->tasks, &rk, err, sizeof(err))) {
		rl_error(ctx, "%s", err);
		goto out_free;
	}
	gpt = rl_step_setting(ctx, "gpus_per_task");
	if (launch_build(&a, launcher, lpath, j->tasks, gpt ? strtol(gpt, NULL, 10) : 0,
			 &rk, ctx->out_dir, j->argv.v)) {
		rl_error(ctx, "out of memory");
		goto out_ranks;
	}
	rl_info(ctx, "running %ld ranks with %s in %s, ncu on %s rank(s): %s", j->tasks,
		lpath, j->workdir, rk.all ? "every" : "the named", j->command);
	t0 = now_s();
	rc = run_child(a.v, &io);
	wall = now_s() - t0;
	if (rc != 0) {
		rank_errors(ctx, &rk, j->tasks);
		rl_error(ctx, "%s exited with %s %d (its output is in %s, each rank's in %s/program.rank-R.log)",
			 lpath, rc < 0 ? "error" : "status", rc < 0 ? -rc : rc, log, ctx->out_dir);
		goto out_ranks;
	}
	r = RL_OK;
	for (size_t i = 0; r == RL_OK && i < launch_ranks_count(&rk, j->tasks); i++)
		r = collect_rank(ctx, j, launch_ranks_at(&rk, i), wall, launcher);
out_ranks:
	launch_ranks_release(&rk);
out_free:
	argv_release(&a);
	free(lpath);
	free(log);
	return r;
}

/* The most replay passes of any launch of t (column k of role passes). */
static long max_passes(const struct ncu_csv *t, const struct ncu_table_row *const *sel, long n)
{
	long most = 0;

	for (long k = 0; k < n; k++)
		for (size_t i = 0; strcmp(sel[k]->role, "passes") == 0 && i < t->n_launches; i++) {
			double v;

			if (!ncu_value_parse(t->launches[i].values[k], &v) && v > most)
				most = (long)v;
		}
	return most;
}

/* Run one try of the second pass with filters c and parse its table into
 * p->csv.  0, or -1 (a warning said why; p->csv stays NULL). */
static int pass2_try(struct rl_ctx *ctx, const struct ncu_config *c, struct job *j,
		     struct pass2 *p, const char *metrics, const char *csv, const char *log)
{
	struct child_io io = { .cwd = ctx->run_dir, .stdout_path = log };
	char err[NCU_CSV_ERRLEN];
	double t0;
	int rc;

	argv_release(&p->argv);
	free(p->command);
	p->command = NULL;
	if (argv_build(&p->argv, c, j->ncu, j->program, metrics, csv) ||
	    !(p->command = argv_text(p->argv.v))) {
		rl_warn(ctx, "second pass: out of memory; the first pass's records stand");
		return -1;
	}
	rl_info(ctx, "profiling again: %s", p->command);
	t0 = now_s();
	rc = run_child(p->argv.v, &io);
	p->wall += now_s() - t0;
	if (rc != 0) {
		rl_warn(ctx, "second pass failed (%s; ncu's log: %s)",
			rc < 0 ? strerror(-rc) : "ncu exited non-zero", csv);
		return -1;
	}
	rc = ncu_csv_read_file(csv, p->names, (size_t)p->n_sel, &p->csv, err, sizeof(err));
	if (rc) {
		rl_warn(ctx, "second pass unreadable: %s", rc == -ENOMEM ? "out of memory" : err);
		return -1;
	}
	return 0;
}

/*
 * Run second pass p over its marked launches (p->sel, p->need set): only
 * those kernels (their full names, --kernel-name-base demangled) unless
 * launch_skip or launch_count is set; when that filter profiles nothing (on
 * the H100, ncu's demangled base did not match a template kernel's printed
 * name), once more with the step's own filters: every launch again, the
 * marked ones merged.  Either way invocations line up.  A failure here is
 * a warning: the first pass's records stand as they are.  p gets what ran
 * (p->csv NULL: nothing usable).
 */
static void pass2_run(struct rl_ctx *ctx, const struct ncu_config *cfg, struct job *j,
		      struct pass2 *p)
{
	struct ncu_config c2 = *cfg;
	char *metrics = NULL, *csv = NULL, *log = NULL;
	bool targeted = !cfg->launch_skip && !cfg->launch_count;

	if (targeted && adapt_kernel_list(j->csv, p->need, &p->kernels))
		goto out_oom;
	if (targeted) {
		c2.kernels = p->kernels;
		c2.kernel_name_base = "demangled";
	}
	if (!(metrics = argv_metric_list(p->sel, (size_t)p->n_sel)) ||
	    !(p->names = names_of(p->sel, (size_t)p->n_sel)) ||
	    !(csv = join(ctx->out_dir, p->csv_file)) ||
	    !(log = join(ctx->out_dir, p->log_file)))
		goto out_oom;
	if (pass2_try(ctx, &c2, j, p, metrics, csv, log) &&
	    (!targeted || pass2_try(ctx, cfg, j, p, metrics, csv, log))) {
		rl_warn(ctx, "%s pass: nothing usable; the first pass's records stand", p->what);
		goto out_free;
	}
	p->passes = max_passes(p->csv, p->sel, p->n_sel);
	rl_info(ctx, "%s pass: %zu launch(es) in %.3f s, %ld replay passes", p->what,
		p->csv->n_launches, p->wall, p->passes);
	goto out_free;
out_oom:
	rl_warn(ctx, "%s pass: out of memory; the first pass's records stand", p->what);
out_free:
	free(metrics);
	free(csv);
	free(log);
}

/*
 * The tensor pass (plugins/ncu/adapt.h): ncu once more over the launches
 * that ran tensor-pipe instructions no collected datapath counted, with the
 * datapaths the set left out.
 */
static void tensor_pass(struct rl_ctx *ctx, const struct ncu_config *cfg,
			struct ncu_state *st, struct job *j, struct pass2 *p)
{
	*p = (struct pass2){ .what = "tensor", .passes_key = "adaptive_passes",
			     .prefix = "adaptive", .csv_file = ADAPT_CSV_FILE,
			     .log_file = ADAPT_LOG_FILE, .clears_tensor = true };
	if (!cfg->adaptive || !j->not_collected[0])
		return;
	p->n_sel = adapt_rows(st->table, j->arch, (const char *const *)cfg->extra.v,
			      cfg->extra.n, &p->sel);
	if (p->n_sel <= 0 || !(p->need = calloc(j->csv->n_launches + 1, sizeof(*p->need))))
		return;
	p->marked = adapt_mark(j->csv, j->cols, (size_t)j->n_sel, p->need);
	if (!p->marked)
		return;
	rl_info(ctx, "%zu launch(es) ran tensor-pipe instructions that no collected datapath counted (not collected: %s)",
		p->marked, j->not_collected);
	pass2_run(ctx, cfg, j, p);
}

/*
 * The instruction pass: the Instruction Roofline's rows (set instruction)
 * over the launches of the kernels that option instruction_kernels names,
 * so that the first pass keeps the default set for every launch.
 */
static void instruction_pass(struct rl_ctx *ctx, const struct ncu_config *cfg,
			     struct ncu_state *st, struct job *j, struct pass2 *p)
{
	char err[256];
	long marked;

	*p = (struct pass2){ .what = "instruction", .passes_key = "instruction_passes",
			     .prefix = "instruction", .csv_file = INSTR_CSV_FILE,
			     .log_file = INSTR_LOG_FILE };
	if (!cfg->instruction_kernels.n)
		return;
	p->n_sel = adapt_rows_set(st->table, j->arch, NCU_TABLE_SET_INSTRUCTION, &p->sel);
	if (p->n_sel == 0)
		rl_warn(ctx, "%s has no instruction rows for arch %s: no instruction pass",
			st->table_path, j->arch);
	if (p->n_sel <= 0 || !(p->need = calloc(j->csv->n_launches + 1, sizeof(*p->need))))
		return;
	marked = adapt_mark_names(j->csv, &cfg->instruction_kernels, p->need, err, sizeof(err));
	if (marked <= 0) {
		rl_warn(ctx, "instruction_kernels: %s", marked < 0 ? err : "no launch matches");
		return;
	}
	p->marked = (size_t)marked;
	rl_info(ctx, "%zu launch(es) of instruction_kernels: the instruction rows in a second pass",
		p->marked);
	pass2_run(ctx, cfg, j, p);
}

static enum rl_result ncu_run(struct rl_ctx *ctx, const void *config,
			      void *state)
{
	const struct ncu_config *cfg = config;
	struct pass2 p2[2];
	struct job j;
	enum rl_result r;
	double wall = 0;

	memset(&j, 0, sizeof(j));
	memset(p2, 0, sizeof(p2));
	r = prepare(ctx, cfg, state, &j);
	if (r == RL_OK && j.tasks > 0) {
		r = run_ranks(ctx, cfg, &j);
		job_release(&j);
		return r;
	}
	if (r == RL_OK)
		r = profile(ctx, &j, &wall);
	if (r == RL_OK) {
		rl_info(ctx, "%zu kernel launches profiled in %.3f s", j.csv->n_launches, wall);
		tensor_pass(ctx, cfg, state, &j, &p2[0]);
		instruction_pass(ctx, cfg, state, &j, &p2[1]);
		query_uuids(ctx, &j.gpus);
		if (emit_kernels(ctx, j.csv, j.cols, (size_t)j.n_sel, j.version, &j.gpus,
				 j.not_collected, NULL, p2, 2) ||
		    emit_summary(ctx, j.csv, j.cols, (size_t)j.n_sel, wall, j.command,
				 j.not_collected, NULL, NULL, p2, 2)) {
			rl_error(ctx, "cannot emit records");
			r = RL_RETRY;
		}
		for (int k = 0; k < 2; k++)
			if (p2[k].csv && p2[k].merged < p2[k].marked)
				rl_warn(ctx, "%s pass: %zu of %zu launches matched by kernel and invocation",
					p2[k].what, p2[k].merged, p2[k].marked);
	}
	pass2_release(&p2[0]);
	pass2_release(&p2[1]);
	job_release(&j);
	return r;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "ncu",
	.version = "1.0",
	.stage = RL_STAGE_COLLECT,
	.summary = "per-launch roofline metrics (FLOPs per precision, tensor, L1/L2/DRAM bytes) with Nsight Compute",
	.options = ncu_options,
	.config_size = sizeof(struct ncu_config),
	.init = ncu_init,
	.run = ncu_run,
	.fini = ncu_fini,
};
