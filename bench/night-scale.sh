#!/bin/bash
# bench/night-scale.sh - a night at a large facility's scale (issue 27):
# 2,000 nodes x 4 GPUs, SYNTHETIC and labelled so (the figures are the
# recorded H100 runs of tests/fixtures with declared noise, as
# bench/findings-bench.sql makes them), on the local cluster with a
# background of other users' jobs.  A benchmark, not a test: it prints what
# it measured and checks only that each stage ran.  Results: docs/fleet.md.
#
# Stages, one after the other in one run, on one cluster (4 slurmd nodes
# stand in for 2,000: many jobs per node):
#   slurm     the background: FOREIGN pending jobs of another user (rlother,
#             a DOWN partition) and RUNNING of its jobs that sleep, plus a
#             job submitted every 0.5 s (a busy cluster's table never
#             stands still); the daemon's own NODE_JOBS jobs stand in
#             pending.  Then bench/engine-poll's polls, the two ways side
#             by side, with 0 and with FOREIGN foreign jobs queued:
#               before  slurm_poll(): slurm_load_jobs, the whole table (the
#                       daemon's poll until issue 27)
#               after   slurm_poll_ids(): the daemon's jobs only (per user:
#                       a few by id, many in one per-user RPC)
#             each: wall and CPU per poll (plain run), the bytes received
#             from slurmctld per poll (a second run under strace -yy) and
#             sdiag's RPC counts and times by type (reset before each)
#   fanout    bench/fanout-bench.sh with NODE_JOBS / 4 runs over the 4
#             nodes (NODE_JOBS node jobs): the daemon's submission rate
#             against slurm_submit()'s own for the same jobs, in the same
#             run, and the daemon's peak RSS (VmHWM), beside the background;
#             FANOUT_ROUNDS rounds of both, alternated (the median ratio);
#             the jobs held while they are submitted (fanout-bench's HOLD=1,
#             as issue 13's engine-bench measured submission), HOLD=0 with
#             them starting on these cores as they are submitted
#   findings  bench/findings-bench.sh at GPUS GPUs x NIGHTS nights and
#             KERNELS kernels x KRUNS runs: the fleet step, the regressions
#             step, the ingest of one night's ceilings (GPUS x 18), the
#             site rebuilt on that database (SITE=1)
#   grow      the same at GROW_GPUS GPUs (30 nights) and at GROW_NIGHTS
#             nights (1,000 GPUs): grow.tsv and grow.png (gnuplot)
#
# Usage: bench/night-scale.sh [-o DIR]
#   (env) GPUS=8000 NIGHTS=90 NODE_JOBS=2000 FOREIGN=20000 RUNNING=64
#   KERNELS=50000 KRUNS=31 POLLS=5 POLL_MS=2000 GROW_GPUS="1000 2000 4000 8000"
#   GROW_NIGHTS="30 90 365" STAGES="slurm fanout findings grow" FANOUT_ROUNDS=3
# Environment: ROOFLINE_VAR (default <repo>/var/night-scale: its own cluster
# of 4 nodes, MaxJobCount raised for the background; removed at the end
# unless KEEP=1).  FINDINGS_VAR: the findings stage measures on the database
# a findings-bench run with KEEP=1 left there (its cluster, REUSE_DB=1: the
# generation of 8,000 GPUs x 90 nights takes 15-20 min here), the background
# still queued in this run's cluster; FINDINGS_REPEATS its repeats (3; the grow
# stage 1).
# Needs root, strace, gnuplot.  BENCH_VARIANT names another build than
# release.
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): GPUS=16 NIGHTS=3 NODE_JOBS=8
# FOREIGN=40 RUNNING=2 KERNELS=20 KRUNS=3 POLLS=2 POLL_MS=200 GROW_GPUS=8 GROW_NIGHTS=5
# FANOUT_ROUNDS=2
# STAGES="slurm fanout grow" (grow runs findings' code at 8 GPUs x 3 nights
# and 8 x 5, 20 kernels x 3 runs), -o $BENCH_SMOKE_DIR (else a new
# temporary directory).
set -euo pipefail

PROG=night-scale
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=/tmp/night-scale.$(date -u +%Y%m%dT%H%M%S)
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then
	: "${GPUS:=16}" "${NIGHTS:=3}" "${NODE_JOBS:=8}" "${FOREIGN:=40}" "${RUNNING:=2}"
	: "${KERNELS:=20}" "${KRUNS:=3}" "${POLLS:=2}" "${GROW_GPUS:=8}" "${GROW_NIGHTS:=5}"
	: "${STAGES:=slurm fanout grow}" # findings: the same findings_at as grow
	: "${POLL_MS:=200}" "${FANOUT_ROUNDS:=2}"
	OUT=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/night-scale-smoke.XXXXXX)}
fi
GPUS=${GPUS:-8000} NIGHTS=${NIGHTS:-90} NODE_JOBS=${NODE_JOBS:-2000}
FOREIGN=${FOREIGN:-20000} RUNNING=${RUNNING:-64} KERNELS=${KERNELS:-50000}
FANOUT_ROUNDS=${FANOUT_ROUNDS:-3}
KRUNS=${KRUNS:-31} POLLS=${POLLS:-5} POLL_MS=${POLL_MS:-2000} GROW_GPUS=${GROW_GPUS:-1000 2000 4000 8000}
GROW_NIGHTS=${GROW_NIGHTS:-30 90 365} STAGES=${STAGES:-slurm fanout findings grow}
while getopts o:h opt; do
	case $opt in
	o) OUT=$OPTARG ;;
	h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) exit 2 ;;
	esac
done

export ROOFLINE_VAR=${ROOFLINE_VAR:-$REPO/var/night-scale}
export ROOFLINE_NODES=4
VAR=$ROOFLINE_VAR
IDLE=nsidle # the DOWN partition: foreign and stand-in jobs stay pending
BUSY=nsbusy # the running foreign jobs: oversubscribed, as fanout-bench's jobs
MADE_BUSY=0
export ROOFLINE_SLURM_EXTRA="MaxJobCount=$((FOREIGN + 4 * NODE_JOBS + 20000))
SchedulerParameters=batch_sched_delay=0
PartitionName=$IDLE Nodes=ALL State=DOWN MaxTime=INFINITE"
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
OTHER=rlother
CHURN=

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
report() { printf '%s\n' "$*" | tee -a "$OUT/summary.txt"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
median() { sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", NR ? a[int((NR + 1) / 2)] : -1 }'; }
has_stage() { [[ " $STAGES " == *" $1 "* ]]; }

((EUID == 0)) || die "must run as root (it starts a private Slurm and PostgreSQL)"
command -v strace >/dev/null || die "needs strace (the bytes a poll receives)"
mkdir -p "$OUT"
: >"$OUT/summary.txt"

cleanup() {
	[[ -z $CHURN ]] || { kill "$CHURN" 2>/dev/null; wait "$CHURN" 2>/dev/null; }
	if [[ -n ${SLURM_CONF:-} ]]; then
		scancel -u "$OTHER" 2>/dev/null || true
		scancel -p "$IDLE" 2>/dev/null || true
		((MADE_BUSY == 0)) || scontrol delete PartitionName=$BUSY 2>/dev/null || true
	fi
	bench_cluster_release
}
trap cleanup EXIT

B=build/$BENCH_VARIANT
make -s -C "$REPO" -j2 VARIANT="$BENCH_VARIANT" $B/bench/engine-poll $B/bench/engine-submit \
	$B/bin/roofline $B/bin/rooflined $B/bin/roofline-job
bench_snapshot -- engine-poll engine-submit
bench_cluster_start --nodes 4 || die "the cluster did not start"
"$REPO/scripts/cluster" add-user "$OTHER" >/dev/null
if ! scontrol -o show partition "$BUSY" >/dev/null 2>&1; then
	scontrol create PartitionName=$BUSY Nodes=ALL OverSubscribe=FORCE:32 MaxTime=INFINITE State=UP
	MADE_BUSY=1
fi
CTLD_PORT=$(scontrol show config | awk '$1 == "SlurmctldPort" { print $3 }')

report "# night at scale (issue 27), SYNTHETIC: $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- daemon common sql bench || echo '+local changes')"
report "# machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/^Mem/ { print $2 }') GiB, shared with other work; $(sinfo -V); load at start $(load)"
report "# sizes: $GPUS GPUs ($((GPUS / 4)) nodes x 4) x $NIGHTS nights; $NODE_JOBS node jobs; background $FOREIGN pending + $RUNNING running jobs of $OTHER; $KERNELS kernels x $KRUNS runs; stages: $STAGES"

# ---- slurm: the background and the polls ---------------------------------
sdiag_jobs() { # the job-reading and submitting RPC types: "TYPE count N, ave_time us, total_time us"
	sdiag | awk '/^Remote Procedure Call statistics by message type/ { on = 1; next }
		/^Remote Procedure Call statistics by user/ { on = 0 }
		on && /REQUEST_(JOB_INFO|JOB_USER_INFO|SUBMIT_BATCH)/ {
			line = $0; sub(/^[ \t]*/, "", line); gsub(/[ \t]+/, " ", line); print line }'
}
# poll_side MODE N: POLLS polls MODE (before|after) beside N foreign jobs,
# plain then under strace; the jobs matched: the stand-ins (rl.own*), not
# other rl.* jobs a cluster shared with other work may hold
poll_side() {
	local mode=$1 tag="$2 foreign" f=$OUT/poll.f$2.$1 args=()
	[[ $mode == after ]] && args=("$OUT/own-ids.txt")
	sdiag --reset >/dev/null
	"$SNAP_BENCH/engine-poll" "$POLLS" "$POLL_MS" rl.own "${args[@]}" >"$f.txt"
	sdiag_jobs >"$f.sdiag"
	# (LeakSanitizer cannot run under ptrace: a san build's leak check off)
	LSAN_OPTIONS=detect_leaks=0 strace -f -qq -yy -e trace=read,recvfrom,recvmsg -e signal=none -o "$f.strace" \
		"$SNAP_BENCH/engine-poll" "$POLLS" "$POLL_MS" rl.own "${args[@]}" >"$f.traced.txt"
	local bytes
	bytes=$(awk -v port=":$CTLD_PORT]" 'index($0, port) && / = [0-9]+$/ { n += $NF } END { print n + 0 }' "$f.strace")
	rm -f "$f.strace"
	report "$(printf '  %-6s %-14s matched %5s  wall/poll %9s ms  cpu/poll %8s ms  received/poll %11s bytes  hwm %6s kB' \
		"$mode" "$tag" "$(awk '/^call/ { m = $10 } END { sub(/,/, "", m); print m }' "$f.txt")" \
		"$(awk '/^call/ { print $4 }' "$f.txt" | median)" \
		"$(awk '/^call/ { print $7 }' "$f.txt" | median)" \
		"$((bytes / POLLS))" "$(awk '/^call/ { h = $(NF - 1) } END { print h }' "$f.txt")")"
	sed 's/^/           sdiag: /' "$f.sdiag" | tee -a "$OUT/summary.txt"
}
if has_stage slurm; then
	report "== slurm: the daemon's poll, before (whole table) and after (by id), $NODE_JOBS own jobs, $POLLS polls $POLL_MS ms apart"
	"$SNAP_BENCH/engine-submit" "$BUSER" "$IDLE" "$NODE_JOBS" rl.own >"$OUT/own-submit.txt"
	squeue -h -p "$IDLE" -u "$BUSER" -o '%i %U' >"$OUT/own-ids.txt"
	report "  own stand-ins: $(cat "$OUT/own-submit.txt")"
	poll_side before 0
	poll_side after 0
	"$SNAP_BENCH/engine-submit" "$OTHER" "$IDLE" "$FOREIGN" other >"$OUT/foreign-submit.txt"
	report "  background: $FOREIGN pending: $(cat "$OUT/foreign-submit.txt")"
	: >"$OUT/running-submit.txt"
	((RUNNING == 0)) || ENGINE_SUBMIT_SLEEP=3600 "$SNAP_BENCH/engine-submit" "$OTHER" "$BUSY" "$RUNNING" otherrun \
		>"$OUT/running-submit.txt"
	until_true() { local t=$1 i; shift; for ((i = 0; i < t * 5; i++)); do "$@" && return 0; sleep 0.2; done; "$@"; }
	running_at_least() { (($(squeue -h -u "$OTHER" -t R -o %i | wc -l) >= $1)); }
	until_true 60 running_at_least "$RUNNING" || true
	report "  background: $(squeue -h -u "$OTHER" -t R -o %i | wc -l) running: $(cat "$OUT/running-submit.txt")"
	(while :; do
		runuser -u "$OTHER" -- env SLURM_CONF="$SLURM_CONF" sbatch -Q -p "$IDLE" -J churn \
			-o /dev/null --wrap true >/dev/null 2>&1 || true
		sleep 0.5
	done) &
	CHURN=$!
	report "  background: one more pending job every 0.5 s while the polls run; slurmctld jobs now $(squeue -h -o %i | wc -l)"
	poll_side before "$FOREIGN"
	poll_side after "$FOREIGN"
	kill "$CHURN" 2>/dev/null; wait "$CHURN" 2>/dev/null || true
	CHURN=
	scancel -p "$IDLE" -u "$BUSER" || true
fi

# ---- fanout: NODE_JOBS node jobs through the daemon beside the background --
if has_stage fanout; then
	report "== fanout: $NODE_JOBS node jobs ($((NODE_JOBS / 4)) runs x 4 nodes), beside the background (load $(load))"
	BENCH_SMOKE=0 "$REPO/bench/fanout-bench.sh" -n "$((NODE_JOBS / 4))" -r "$FANOUT_ROUNDS" \
		-o "$OUT/fanout" >"$OUT/fanout.log" 2>&1 ||
		report "  fanout-bench FAILED: $(tail -3 "$OUT/fanout.log" | tr '\n' ' ')"
	grep -E '^(== round|S |D |R |M |   daemon submission|   queued -> last)' "$OUT/fanout/summary.txt" | tee -a "$OUT/summary.txt"
	# fanout-bench's figure: the medians of its rounds (its M line)
	sed -n 's/^M  median of \([0-9]*\) round(s): daemon \([0-9.]*\) jobs\/s, slurm_submit() alone \([0-9.]*\) jobs\/s; ratio \([0-9.]*\) x (rounds: \(.*\))$/  fan-out rate: daemon \2 jobs\/s against slurm_submit()'"'"'s \3 jobs\/s: \4 x (median of \1 round(s), each a ratio of an S and a D next to each other: \5)/p' \
		"$OUT/fanout/summary.txt" | tee -a "$OUT/summary.txt"
fi

# ---- findings: the fleet and regressions steps, the ingest ---------------
# findings_at GPUS NIGHTS KERNELS KRUNS TAG: one findings-bench run; its summary in $OUT/findings.TAG
findings_at() {
	local dir=$OUT/findings.$5 kept=(env) repeats=1
	rm -rf "$dir" # a summary is appended to: an older run's would stay in it
	if [[ $5 == main ]]; then
		repeats=${FINDINGS_REPEATS:-3}
		# on a database an earlier findings-bench kept
		[[ -z ${FINDINGS_VAR:-} ]] ||
			kept=(env ROOFLINE_VAR="$FINDINGS_VAR" REUSE_DB=1 KEEP=1 EXPLAIN=0)
	fi
	"${kept[@]}" NODES=$((($1 + 3) / 4)) GPN=4 NIGHTS=$2 KERNELS=$3 KRUNS=$4 WINDOW=$2 SITE=1 BENCH_SMOKE=0 \
		"$REPO/bench/findings-bench.sh" -n "$repeats" -o "$dir" >"$dir.log" 2>&1 ||
		report "  [$5] findings-bench FAILED: $(tail -3 "$dir.log" | tr '\n' ' ')"
	grep -E '^generated|fleet\.after|regressions\.after|ingest of one night|site rebuilt' "$dir/summary.txt" |
		sed "s/^/  [$5] /" | tee -a "$OUT/summary.txt"
}
total_ms() { sed -n "s/^ *$1\.after .* total *\([0-9.]*\) ms.*/\1/p" "$2/summary.txt"; }
ingest_ms() { sed -n 's/.*ingest of one night as the daemon does it (.*): \([0-9.]*\) ms = .*/\1/p' "$1/summary.txt"; }
site_ms() { sed -n 's/^  site rebuilt: wall \([0-9.]*\) ms.*/\1/p' "$1/summary.txt"; }
if has_stage findings; then
	report "== findings: $GPUS GPUs x $NIGHTS nights, $KERNELS kernels x $KRUNS runs (load $(load))"
	findings_at "$GPUS" "$NIGHTS" "$KERNELS" "$KRUNS" main
fi
if has_stage grow; then
	report "== grow: GPUs at 30 nights ($GROW_GPUS), nights at 1,000 GPUs ($GROW_NIGHTS); 500 kernels x 31 runs"
	printf 'axis\tgpus\tnights\tfleet_ms\tregressions_ms\tingest_ms\tsite_ms\n' >"$OUT/grow.tsv"
	n30=30 g1k=1000 gk=500 gr=31
	[[ ${BENCH_SMOKE:-0} == 1 ]] && n30=3 g1k=8 gk=20 gr=3
	for g in $GROW_GPUS; do
		findings_at "$g" "$n30" "$gk" "$gr" "g$g"
		printf 'gpus\t%s\t%s\t%s\t%s\t%s\t%s\n' "$g" "$n30" "$(total_ms fleet "$OUT/findings.g$g")" \
			"$(total_ms regressions "$OUT/findings.g$g")" "$(ingest_ms "$OUT/findings.g$g")" \
			"$(site_ms "$OUT/findings.g$g")" >>"$OUT/grow.tsv"
	done
	for n in $GROW_NIGHTS; do
		findings_at "$g1k" "$n" "$gk" "$gr" "n$n"
		printf 'nights\t%s\t%s\t%s\t%s\t%s\t%s\n' "$g1k" "$n" "$(total_ms fleet "$OUT/findings.n$n")" \
			"$(total_ms regressions "$OUT/findings.n$n")" "$(ingest_ms "$OUT/findings.n$n")" \
			"$(site_ms "$OUT/findings.n$n")" >>"$OUT/grow.tsv"
	done
	column -t "$OUT/grow.tsv" | sed 's/^/  /' | tee -a "$OUT/summary.txt"
	if command -v gnuplot >/dev/null; then
		gnuplot <<GP 2>>"$OUT/gnuplot.err" || true
set terminal pngcairo size 900,380 font ",10"
set output "$OUT/grow.png"
set datafile separator "\t"
set multiplot layout 1,2 title "a night at scale, SYNTHETIC (bench/night-scale.sh grow stage)"
set key top left
set ylabel "ms"
set logscale y
set xlabel "GPUs (31 nights)"
plot "< awk -F'\t' '\$1 == \"gpus\"' $OUT/grow.tsv" using 2:4 with linespoints title "fleet step", \
     "" using 2:5 with linespoints title "regressions (500 kernels)", \
     "" using 2:6 with linespoints title "ingest of a night", \
     "" using 2:7 with linespoints title "site rebuilt"
set xlabel "nights (1,000 GPUs)"
plot "< awk -F'\t' '\$1 == \"nights\"' $OUT/grow.tsv" using 3:4 with linespoints title "fleet step", \
     "" using 3:5 with linespoints title "regressions (500 kernels)", \
     "" using 3:6 with linespoints title "ingest of a night", \
     "" using 3:7 with linespoints title "site rebuilt"
unset multiplot
GP
		[[ -s $OUT/grow.png ]] && report "  plot: $OUT/grow.png"
	fi
fi
report "# load at end $(load); raw results in $OUT"
