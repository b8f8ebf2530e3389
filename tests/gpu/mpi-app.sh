#!/bin/bash
# tests/gpu/mpi-app.sh OUTDIR APPDIR - a real MPI+CUDA code through the
# product's path on a 2-GPU machine without a package registry: unpack the
# stack with Debian's Open MPI (scripts/deps --download DIR --slim --mpi,
# then --unpack), start the local cluster as one node holding both GPUs,
# put APPDIR/jacobi (built on the development machine, never committed:
# docs/pipelines.md says how) into the demo user's home, and run
# tests/gpu/mpi-app.yaml through scripts/demo (`roofline submit --wait` as
# that user): srun starts 2 ranks, one GPU each, and ncu profiles both.
# Writes into OUTDIR: env.txt (machine, GPUs, links made), steps.tsv,
# cluster-start.out, demo.out, ranks.tsv (per rank: node, GPU UUID, kernel
# records, the launches' gpu__time_duration), summary.tsv (each rank's
# collect_summary record), logs.tar.gz (the step's directory: launcher and
# rank logs, ncu tables; the cluster's and daemon's logs).  It stops itself
# after STACK_LIMIT_S seconds (default 360).  Needs root.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${1:?usage: tests/gpu/mpi-app.sh OUTDIR APPDIR}
APPDIR=${2:?usage: tests/gpu/mpi-app.sh OUTDIR APPDIR}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
APPDIR=$(cd "$APPDIR" && pwd)
LIMIT=${STACK_LIMIT_S:-360}
DEBS=${STACK_DEBS:-$REPO/debs}
PREFIX=${STACK_PREFIX:-/opt/rooflined-stack}
export VARIANT=${VARIANT:-release}
export ROOFLINE_VAR=${ROOFLINE_VAR:-/var/tmp/rooflined-mpi}
export ROOFLINE_DEMO_USER=rldemo
T0=$(date +%s)
STEPS=$OUTDIR/steps.tsv
printf 'step\trc\tseconds\n' >"$STEPS"

say() { printf 'mpi-app: %s\n' "$*"; }
left() { echo $((LIMIT - ($(date +%s) - T0))); }
step() { # step NAME CMD...: output into OUTDIR/NAME.out, time into steps.tsv
	local name=$1 t rc s
	shift
	t=$(left)
	((t >= 15)) || { printf '%s\tskipped\t0\n' "$name" >>"$STEPS"; return 99; }
	s=$(date +%s.%N)
	timeout -k 5 "$t" "$@" >"$OUTDIR/$name.out" 2>&1
	rc=$?
	printf '%s\t%s\t%s\n' "$name" "$rc" "$(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')" >>"$STEPS"
	say "$name: rc $rc"
	return "$rc"
}

finish() {
	if [[ -n ${PGHOST:-} ]]; then
		psql -X -A -F $'\t' -P footer=off -c "select s.run_id, r.fields->>'rank' as rank, r.fields->>'node' as node,
			r.fields->>'gpu_uuid' as gpu_uuid, count(*) as kernels,
			string_agg(r.fields->>'gpu__time_duration.sum', ',' order by r.seq) as gpu_time_ns
			from step_records r join steps s on s.id = r.step
			where r.kind = 'kernel' group by 1, 2, 3, 4 order by 1, 2" >"$OUTDIR/ranks.tsv" 2>&1
		psql -X -A -F $'\t' -P footer=off -c "select s.run_id, s.state, s.error, r.fields::text
			from steps s left join step_records r on r.step = s.id and r.kind = 'collect_summary'
			order by s.run_id, r.seq" >"$OUTDIR/summary.tsv" 2>&1
	fi
	tar -C / --exclude='*/pg/data/base' --exclude='*/pg/data/pg_wal' -czf "$OUTDIR/logs.tar.gz" \
		"${ROOFLINE_VAR#/}" 2>/dev/null
	timeout 30 "$REPO/scripts/cluster" stop >/dev/null 2>&1
	say "done after $(($(date +%s) - T0)) s"
}
trap finish EXIT

{
	echo "# machine"
	date -u
	uname -a
	grep PRETTY /etc/os-release
	nvidia-smi -L
	nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version --format=csv
	ncu --version | tail -1
	echo "# the application (APPDIR)"
	cat "$APPDIR/SOURCE" 2>/dev/null
	ls -l "$APPDIR"
} >"$OUTDIR/env.txt" 2>&1

step unpack "$REPO/scripts/deps" --unpack "$DEBS" "$PREFIX" --ldconfig || exit 1
grep '^export' "$OUTDIR/unpack.out" >"$PREFIX.env"
# shellcheck disable=SC1090
. "$PREFIX.env"
rm -f "$OUTDIR/unpack.out"
for u in munge postgres; do
	getent passwd "$u" >/dev/null ||
		useradd --system --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin "$u"
done
# A Slurm job's PATH is /usr/local/bin:/usr/bin:/bin (daemon/launch.c): the
# launcher (srun, from the unpacked stack) must be there too.
for p in ncu nvidia-smi srun; do
	if ! PATH=/usr/local/bin:/usr/bin:/bin command -v "$p" >/dev/null; then
		src=$(command -v "$p" || ls /usr/local/cuda/bin/"$p" 2>/dev/null) &&
			ln -sf "$src" /usr/local/bin/"$p" && echo "linked /usr/local/bin/$p -> $src" >>"$OUTDIR/env.txt"
	fi
done
# Debian's Open MPI and PMIx find their components, help files and
# configuration where Debian put them (and Slurm's mpi/pmix dlopens
# pmix2/lib/libpmix.so there): link those places to the unpacked copies
# where the machine has none of its own.
{
	echo "# Open MPI / PMIx places"
	for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 \
		/usr/share/openmpi /usr/share/pmix /etc/openmpi; do
		if [[ ! -e $PREFIX$d ]]; then
			echo "$d: not in the stack"
		elif [[ -e $d ]]; then
			echo "$d: the machine has its own, kept: $(ls "$d" | head -5 | tr '\n' ' ')"
		else
			ln -s "$PREFIX$d" "$d" && echo "$d -> $PREFIX$d"
		fi
	done
	ls -l /usr/lib/x86_64-linux-gnu/pmix2/lib/ 2>&1
	ldconfig -p | grep -E 'libmpi\.so|libpmix' 
} >>"$OUTDIR/env.txt" 2>&1

mkdir -p "$ROOFLINE_VAR"
chmod 0755 "$ROOFLINE_VAR"
ROOFLINE_NODES=1 ROOFLINE_GPUS_PER_NODE=2 step cluster-start "$REPO/scripts/cluster" start || exit 1
eval "$("$REPO/scripts/cluster" env)"
{
	echo "# slurm.conf MpiDefault, gres.conf"
	grep -E '^(MpiDefault|TmpFS)' "$SLURM_CONF"
	cat "$ROOFLINE_VAR/slurm/gres.conf"
} >>"$OUTDIR/env.txt" 2>&1

# The application in the user's own directory, as its developer keeps it.
"$REPO/scripts/cluster" add-user "$ROOFLINE_DEMO_USER" >/dev/null
home=$(getent passwd "$ROOFLINE_DEMO_USER" | cut -d: -f6)
install -d -o "$ROOFLINE_DEMO_USER" -m 0755 "$home/jacobi" "$home/jacobi/bin"
install -o "$ROOFLINE_DEMO_USER" -m 0755 "$APPDIR/jacobi" "$home/jacobi/bin/jacobi"

step demo "$REPO/scripts/demo" "$REPO/tests/gpu/mpi-app.yaml" && exit 0
# If srun's mpi/pmix cannot serve the machine's MPI (a machine with an Open
# MPI and PMIx of its own, newer than the ones Slurm's plugin was built
# for), the same pipeline with `launcher: mpirun` (one node: mpirun starts
# the ranks itself, no Slurm PMIx), so that the ranks are still profiled
# through the product's path; demo-mpirun.out says how that went.
sed 's/^    tasks: 2$/    tasks: 2\n    launcher: mpirun/' "$REPO/tests/gpu/mpi-app.yaml" >"$ROOFLINE_VAR/mpi-app-mpirun.yaml"
grep -q 'launcher: mpirun' "$ROOFLINE_VAR/mpi-app-mpirun.yaml" &&
	step demo-mpirun "$REPO/scripts/demo" "$ROOFLINE_VAR/mpi-app-mpirun.yaml"
