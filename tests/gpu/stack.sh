#!/bin/bash
# tests/gpu/stack.sh OUTDIR - the product's own path on a GPU machine without
# a package registry, in one run: unpack the stack (scripts/deps --unpack:
# Slurm, munge, PostgreSQL, ... and our roofline-gpu package, whose
# ert-bench and kernels the jobs then run), start the local cluster on the
# machine's real /dev/nvidiaN, run `make demo`'s real path (scripts/demo:
# pipelines/kernel-abc.yaml, ert and ncu through Slurm on the GPU), then an
# ordinary user's pipeline on a third-party application built here
# (BabelStream: tests/gpu/build-babelstream.sh, tests/gpu/babelstream.yaml,
# submitted with `roofline submit --wait --attach`), then, while time is
# left, nightly-ceilings over every GPU.  Everything it learns goes into
# OUTDIR: steps.tsv (each step's wall time and exit status),
# cluster-start.out (the unpack's and the cluster's output), demo.out,
# user.out (the application's build, the user's run, its kernels' FLOPs and
# bytes per element), nightly.out, runs.tsv (each step of each run from
# PostgreSQL), env.txt (machine, GPUs, the packages, gres.conf,
# CUDA_VISIBLE_DEVICES of each job), logs.tar.gz (cluster, daemon and
# spool): 8 files, the most the device tool returns.  It stops itself after
# STACK_LIMIT_S seconds (default 480), writing what it has.
#
# Needs root, the debs of 'scripts/deps --download' and roofline-gpu_*.deb
# (make deb) in STACK_DEBS (default <repo>/debs), and a build of rooflined
# in build/$VARIANT (Debian 12 binaries run on a newer glibc; their
# libraries come from the unpacked stack).  The user's pipeline needs
# BabelStream's source in STACK_APP_SRC (skipped without it, or without a
# GPU); STACK_NVML_INCLUDE names a directory holding nvml.h for a toolkit
# without one.  docs/gpu-node.md tells how it was run.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${1:?usage: tests/gpu/stack.sh OUTDIR}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
LIMIT=${STACK_LIMIT_S:-480}
DEBS=${STACK_DEBS:-$REPO/debs}
PREFIX=${STACK_PREFIX:-/opt/rooflined-stack}
export VARIANT=${VARIANT:-release}
export ROOFLINE_VAR=${ROOFLINE_VAR:-/var/tmp/rooflined-gpu}
T0=$(date +%s)
STEPS=$OUTDIR/steps.tsv
printf 'step\trc\tseconds\n' >"$STEPS"

say() { printf 'stack: %s\n' "$*"; }
left() { echo $((LIMIT - ($(date +%s) - T0))); }

# step NAME CMD...: run CMD with what is left of the time, its output into
# OUTDIR/NAME.out, and its wall time and status into steps.tsv.
step() {
	local name=$1 t rc s
	shift
	t=$(left)
	if ((t < 15)); then
		printf '%s\tskipped\t0\n' "$name" >>"$STEPS"
		say "$name: skipped, ${t}s left"
		return 99
	fi
	s=$(date +%s.%N)
	timeout -k 5 "$t" "$@" >"$OUTDIR/$name.out" 2>&1
	rc=$?
	printf '%s\t%s\t%s\n' "$name" "$rc" "$(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')" >>"$STEPS"
	say "$name: rc $rc ($(tail -n 1 "$STEPS" | cut -f3) s)"
	return "$rc"
}

finish() {
	# What the database knows of every run, and the logs, whatever happened.
	if [[ -n ${PGHOST:-} ]]; then
		psql -X -A -F $'\t' -P footer=off -c "select s.run_id, r.state as run_state, s.step_id, s.state,
			s.attempt, s.slurm_job_id, s.exec_node, round(extract(epoch from s.ended_at - s.started_at)::numeric, 1) as seconds,
			round(extract(epoch from r.ended_at - r.submitted_at)::numeric, 1) as run_seconds
			from steps s join runs r on r.id = s.run_id order by s.run_id, s.id" >"$OUTDIR/runs.tsv" 2>&1
	fi
	{
		echo "# each Slurm job's CUDA_VISIBLE_DEVICES: Slurm's -> the machine's (scripts/cluster's TaskProlog)"
		cat "$ROOFLINE_VAR/slurm/log/gpu-jobs.log"
		echo "# the GPUs the ceilings and profiles name"
		grep -rhoE 'gpu_(index|uuid)=[^[:space:]]*' "$ROOFLINE_VAR/demo/spool" 2>/dev/null | sort | uniq -c
	} >>"$OUTDIR/env.txt"
	tar -C / --exclude='*/pg/data/base' --exclude='*/pg/data/pg_wal' -czf "$OUTDIR/logs.tar.gz" \
		"${ROOFLINE_VAR#/}" 2>/dev/null
	# 8 files come back from the device tool: the unpack's output goes
	# with the cluster's.
	if [[ -f $OUTDIR/unpack.out ]]; then
		{ echo "===== scripts/deps --unpack"; cat "$OUTDIR/unpack.out"; echo "===== scripts/cluster"
			cat "$OUTDIR/cluster-start.out" 2>/dev/null; } >"$OUTDIR/cluster-start.tmp" &&
			mv "$OUTDIR/cluster-start.tmp" "$OUTDIR/cluster-start.out" && rm -f "$OUTDIR/unpack.out"
	fi
	ls -la "$OUTDIR"
	timeout 30 "$REPO/scripts/cluster" stop >/dev/null 2>&1
	say "done after $(($(date +%s) - T0)) s"
}
trap finish EXIT

{
	echo "# machine"
	date -u
	uname -a
	grep PRETTY /etc/os-release
	ldd --version | head -1
	nvidia-smi -L
	nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,clocks.max.sm,clocks.max.mem --format=csv
	ls -l /dev/nvidia*
	command -v ncu nvcc
	ncu --version | tail -1
} >"$OUTDIR/env.txt" 2>&1

# 1. The stack, unpacked into a prefix; ldconfig names the libraries the
# system lacks, so slurmstepd, the jobs and runuser find them too.
ldconf=()
((${STACK_LDCONFIG:-1})) && ldconf=(--ldconfig)
step unpack "$REPO/scripts/deps" --unpack "$DEBS" "$PREFIX" "${ldconf[@]}" || exit 1
grep '^export' "$OUTDIR/unpack.out" >"$PREFIX.env"
# shellcheck disable=SC1090
. "$PREFIX.env"
{
	echo "# the unpacked stack"
	slurmd -V
	postgres -V
	munged -V
	gnuplot -V
	ip -V
	echo "# our packages among them"
	for d in "$DEBS"/roofline*.deb; do
		[[ -f $d ]] && dpkg-deb -f "$d" Package Version Architecture Depends
	done
	echo "ROOFLINE_LIBEXEC=${ROOFLINE_LIBEXEC:-unset (no roofline-gpu: the CUDA programs of the build tree)}"
	ls -l "${ROOFLINE_LIBEXEC:-/nonexistent}"
} >>"$OUTDIR/env.txt" 2>&1
# The users the Debian packages' postinst would create.
for u in munge postgres; do
	getent passwd "$u" >/dev/null ||
		useradd --system --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin "$u"
done
# A Slurm job's PATH is /usr/local/bin:/usr/bin:/bin (daemon/launch.c): ncu
# from the CUDA toolkit must be there, as a facility's module would put it.
# Likewise gnuplot for the daemon's chart step (a daemon child's PATH).
for p in ncu nvidia-smi gnuplot; do
	if ! PATH=/usr/local/bin:/usr/bin:/bin command -v "$p" >/dev/null; then
		src=$(command -v "$p" || ls /usr/local/cuda/bin/"$p" 2>/dev/null) &&
			ln -sf "$src" /usr/local/bin/"$p" && echo "linked /usr/local/bin/$p -> $src" >>"$OUTDIR/env.txt"
	fi
done
export PATH=/usr/local/cuda/bin:$PATH

# 2. The cluster: one node holding one GPU for the demo (its ceilings and
# profile must come from one GPU, as scripts/demo sets up when it starts the
# cluster itself).
mkdir -p "$ROOFLINE_VAR"
chmod 0755 "$ROOFLINE_VAR"
# Each job's CUDA_VISIBLE_DEVICES: scripts/cluster's TaskProlog (real GPUs)
# maps Slurm's node-local indices to the machine's and logs them here.
GPU_JOBS_LOG=$ROOFLINE_VAR/slurm/log/gpu-jobs.log
export ROOFLINE_NODES=1
ROOFLINE_GPUS_PER_NODE=1 step cluster-start "$REPO/scripts/cluster" start || exit 1
eval "$("$REPO/scripts/cluster" env)"
gres() {
	echo "# gres.conf ($1)"
	cat "$ROOFLINE_VAR/slurm/gres.conf"
	scontrol show node | grep -E 'NodeName|Gres'
}
gres demo >>"$OUTDIR/env.txt" 2>&1

# 3. make demo's real path (the build is carried; scripts/demo is what
# `make demo` runs after building).
step demo "$REPO/scripts/demo"
echo "demo done" >>"$GPU_JOBS_LOG"
# Which ert-bench and kernel_abc the jobs ran (the packaged ones:
# ROOFLINE_LIBEXEC).
{
	grep -rhoE '(running|cannot run) [^ ]*ert-bench' "$ROOFLINE_VAR/demo/spool"/run-*/ceilings/
	grep -rhoE ' -- [^ ]*kernel_abc' "$ROOFLINE_VAR/demo/spool"/run-*/profile/
} 2>/dev/null | sort | uniq -c | sed 's/^/the demo ran: /' >>"$OUTDIR/env.txt"

# 3b. An ordinary user's pipeline on a third-party application, built here
# from its public source: BabelStream's CUDA version, its program and a
# wrapper attached to the run (the user's own files).
if [[ -n ${STACK_APP_SRC:-} ]] && nvidia-smi -L >/dev/null 2>&1; then
	step user "$REPO/tests/gpu/user-app.sh"
else
	printf 'user\tskipped\t0\n' >>"$STEPS"
	echo "user: skipped (STACK_APP_SRC ${STACK_APP_SRC:-unset}; a GPU: $(nvidia-smi -L 2>&1 | head -1))" >"$OUTDIR/user.out"
fi

# 4. nightly-ceilings over every GPU: the same node now holds all of them.
ngpu=$(find /dev -maxdepth 1 -regex '/dev/nvidia[0-9]+' | wc -l)
"$REPO/scripts/cluster" stop >>"$OUTDIR/cluster-start.out" 2>&1
ROOFLINE_GPUS_PER_NODE=$((ngpu ? ngpu : 2)) step cluster-restart "$REPO/scripts/cluster" start &&
	gres nightly >>"$OUTDIR/env.txt" 2>&1 &&
	cat "$OUTDIR/cluster-restart.out" >>"$OUTDIR/cluster-start.out" && rm -f "$OUTDIR/cluster-restart.out" &&
	step nightly "$REPO/scripts/demo" "$REPO/pipelines/nightly-ceilings.yaml"
seq_run=$(grep -oE '^run [0-9]+:' "$OUTDIR/nightly.out" 2>/dev/null | head -1 | grep -oE '[0-9]+')
if [[ -n $seq_run ]]; then
	psql -X -c "select r.fields->>'gpu_index' as idx, r.fields->>'gpu_uuid' as uuid, s.step_id, count(*)
		from step_records r join steps s on s.id = r.step where s.run_id = $seq_run and r.kind = 'ceiling'
		group by 1, 2, 3 order by 1, 3" >>"$OUTDIR/nightly.out" 2>&1
fi

# 5. An ncu step naming the job's second GPU (device: 1): its kernel
# records must carry nvidia-smi's GPU 1 UUID.  (Output appended to
# nightly.out: 8 files come back.)
if ((ngpu >= 2)); then
	step ncu-device "$REPO/scripts/demo" "$REPO/tests/gpu/ncu-device.yaml"
	run=$(grep -oE '^run [0-9]+:' "$OUTDIR/ncu-device.out" 2>/dev/null | head -1 | grep -oE '[0-9]+')
	{
		echo "===== ncu device: 1 (tests/gpu/ncu-device.yaml), run ${run:-none}"
		cat "$OUTDIR/ncu-device.out"
		echo "nvidia-smi GPU 1: $(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 1)"
		[[ -n $run ]] && psql -X -c "select distinct r.fields->>'gpu_index' as idx, r.fields->>'gpu_uuid' as uuid
			from step_records r join steps s on s.id = r.step where s.run_id = $run and r.kind = 'kernel'"
	} >>"$OUTDIR/nightly.out" 2>&1
	rm -f "$OUTDIR/ncu-device.out"

	# 6. Both GPUs measured at once: two nodes of one GPU each, so
	# nightly-ceilings' `nodes: each` runs two ert jobs together; beside the
	# sequential run above (one job, one GPU after the other).
	"$REPO/scripts/cluster" stop >>"$OUTDIR/cluster-start.out" 2>&1
	ROOFLINE_NODES=2 ROOFLINE_GPUS_PER_NODE=1 step cluster-concurrent "$REPO/scripts/cluster" start &&
		gres concurrent >>"$OUTDIR/env.txt" 2>&1 &&
		step nightly-concurrent "$REPO/scripts/demo" "$REPO/pipelines/nightly-ceilings.yaml"
	cat "$OUTDIR/cluster-concurrent.out" >>"$OUTDIR/cluster-start.out" 2>/dev/null
	rm -f "$OUTDIR/cluster-concurrent.out"
	run=$(grep -oE '^run [0-9]+:' "$OUTDIR/nightly-concurrent.out" 2>/dev/null | head -1 | grep -oE '[0-9]+')
	{
		echo "===== nightly-ceilings, both GPUs at once (2 nodes x 1 GPU), run ${run:-none}"
		grep -v '^ert@\|^spec@\|^ceilings' "$OUTDIR/nightly-concurrent.out"
		if [[ -n $run && -n $seq_run ]]; then
			echo "===== ert ceilings (median), one after the other (run $seq_run) vs at once (run $run)"
			psql -X -A -F $'\t' -P footer=off -c "with c as (select s.run_id, r.fields->>'gpu_uuid' as uuid,
				r.fields->>'name' as name, (r.fields->>'median')::float8 as v
				from step_records r join steps s on s.id = r.step
				where s.run_id in ($seq_run, $run) and r.kind = 'ceiling' and s.step_id = 'ert')
				select a.uuid, a.name, a.v as sequential, b.v as concurrent,
				round((100 * (b.v / a.v - 1))::numeric, 2) as pct
				from c a join c b on a.uuid = b.uuid and a.name = b.name
				where a.run_id = $seq_run and b.run_id = $run order by a.name, a.uuid"
		fi
	} >>"$OUTDIR/nightly.out" 2>&1
	rm -f "$OUTDIR/nightly-concurrent.out"
fi
