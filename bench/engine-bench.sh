#!/bin/bash
# bench/engine-bench.sh - the engine benchmark (issue 3, item 7): rooflined on
# a private local cluster, against Slurm's own rates.  A benchmark, not a
# test: it prints what it measured and checks nothing.
#
#   S  Slurm's own submit rate: N jobs through slurm_submit() (the engine's
#      call, bench/engine-submit.c) and N `sbatch --wrap true`, with the jobs
#      running and with them held (partition down)
#   A  N queued one-step runs (smoke plugin, records: 1) end to end: jobs
#      submitted per second by rooflined (first to last 'pending' event),
#      results ingested per second (first to last 'succeeded'), ingest
#      latency (the 'succeeded' event against the mtime of the job's exit
#      record), the daemon's CPU per run and peak RSS
#   I  ingest capacity: N finished jobs waiting when the daemon starts
#   B  M jobs tracked (held: partition down): daemon CPU per tick at steady
#      state, quiet (Slurm answers "no change") and with the job table
#      changing twice a second; one slurm_poll() alone (bench/engine-poll.c);
#      PostgreSQL's and slurmctld's CPU per tick; RSS; EXPLAIN ANALYZE of the
#      tick's queries; and the same with H finished runs of history
#
# Runs are queued by inserting N rows into `runs` in one statement as the
# benchmark user's own PostgreSQL role (the very insert `roofline submit`
# makes, through the same row-level security): a loop of `roofline submit`
# would queue them at the CLI's pace while the daemon is already starting
# them, and measure the loop.
#
# Usage: bench/engine-bench.sh [-r REPEATS] [-n RUNS] [-m TRACKED] [-p POLL]
#                              [-w SECONDS] [-H HISTORY] [-x PARTS] [-o DIR]
#   -r  repeats of every measurement (default 3; medians are reported)
#   -n  runs per batch in A and I, jobs in S (default 1000)
#   -m  jobs tracked in B (default 10000)
#   -p  the daemon's poll_interval (default 2s, rooflined's default)
#   -w  length of each steady-state window in B (default 30)
#   -H  finished runs of history added for B's last window (default 100000;
#       0 skips it)
#   -x  which parts to run, in order (default SAIB)
#   -o  where raw results go (default /tmp/engine-bench.DATE)
# Environment: ROOFLINE_VAR (default <repo>/var/bench: the private cluster,
# removed at the end unless KEEP=1).  Needs root, perf for the per-tick counts
# and profiles (without it: wall-time estimates only).  A cluster already
# running in ROOFLINE_VAR is used (bench/lib.sh).  BENCH_VARIANT names another
# build than release.
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): defaults -r 1 -n 3 -m 3 -p 300ms
# -w 1 -H 5, -o $BENCH_SMOKE_DIR (else a new temporary directory), the
# settling sleeps 1 s, 100 ms between engine-poll's calls, no wait for Slurm to forget finished jobs, and no perf
# probes or profiles (said in the summary).
set -euo pipefail

PROG=engine-bench
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPEATS=3 RUNS=1000 TRACKED=10000 POLL=2s WINDOW=30 HISTORY=100000 PARTS=SAIB
OUT=/tmp/engine-bench.$(date +%Y%m%d-%H%M%S)
SETTLE=5        # seconds the job table is left to settle before a window
POLL_GAP_MS=1000 # between engine-poll's calls
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then
	REPEATS=1 RUNS=3 TRACKED=3 POLL=300ms WINDOW=1 HISTORY=5 SETTLE=1 POLL_GAP_MS=100
	OUT=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/engine-bench-smoke.XXXXXX)}
fi
while getopts r:n:m:p:w:H:x:o:h opt; do
	case $opt in
	r) REPEATS=$OPTARG ;;
	n) RUNS=$OPTARG ;;
	m) TRACKED=$OPTARG ;;
	p) POLL=$OPTARG ;;
	w) WINDOW=$OPTARG ;;
	H) HISTORY=$OPTARG ;;
	x) PARTS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) exit 2 ;;
	esac
done

export ROOFLINE_VAR=${ROOFLINE_VAR:-$REPO/var/bench}
VAR=$ROOFLINE_VAR
PART=bench
# MaxJobCount: M held jobs plus the finished ones Slurm keeps for MinJobAge.
# batch_sched_delay=0 and an oversubscribed partition: jobs start as fast as
# this one 2-core node can run them (the default runs 2 jobs every 3 s).
ROOFLINE_SLURM_EXTRA="MaxJobCount=$((TRACKED * 3 + RUNS * 20))
SchedulerParameters=batch_sched_delay=0
PartitionName=$PART Nodes=ALL OverSubscribe=FORCE:32 MaxTime=INFINITE State=UP"
export ROOFLINE_SLURM_EXTRA
# One compute node, as the figures in docs/engine-bench.md were measured.
export ROOFLINE_NODES=${ROOFLINE_NODES:-1}
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
DPID=
CHURN_PID=
PROBES=0

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
# report LINE: a result line, printed and kept in $OUT/summary.txt.
report() { printf '%s\n' "$*" | tee -a "$OUT/summary.txt"; }

((EUID == 0)) || die "must run as root (it starts a private Slurm and PostgreSQL)"
[[ $VAR != "$REPO/var" ]] || die "ROOFLINE_VAR must not be the default cluster's $REPO/var"
mkdir -p "$OUT"
: >"$OUT/summary.txt"

# ---- helpers -------------------------------------------------------------------
sql() { psql -X -q -t -A -v ON_ERROR_STOP=1 -c "$1"; }
as_user() {
	runuser -u "$BUSER" -- env -u PGUSER PATH="$PATH" SLURM_CONF="$SLURM_CONF" \
		PGHOST="$PGHOST" PGPORT="$PGPORT" PGDATABASE="$PGDATABASE" "$@"
}
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", a - b }'; }
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN { printf f "\n", b ? a / b : 0 }'; }
# per_ms SECONDS N: milliseconds per item
per_ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b ? a * 1000 / b : 0 }'; }
# median of the numbers on stdin (the lower middle of an even count).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
# pct P: the P-th percentile (nearest rank) of the numbers on stdin.
pct() { sort -g | awk -v p="$1" '{ v[NR] = $1 } END { if (NR) { i = int(NR * p / 100 + 0.999999); if (i < 1) i = 1; print v[i] } }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

# wait_for SECONDS CMD...: until CMD succeeds (tried every $WAIT_STEP s,
# default 0.5); false on time-out.
wait_for() {
	local secs=$1 t0=$SECONDS
	shift
	until "$@"; do
		((SECONDS - t0 < secs)) || return 1
		sleep "${WAIT_STEP:-0.5}"
	done
}

jobs_of_user() { squeue -h -u "$BUSER" -t all -o %A 2>/dev/null | wc -l; }
no_user_jobs() { [[ $(squeue -h -u "$BUSER" -t PD,R,CG,CF 2>/dev/null | wc -l) == 0 ]]; }
slurm_job_count() { squeue -h -t all 2>/dev/null | wc -l; }
slurm_jobs_at_most() { (($(slurm_job_count) <= $1)); }
part_state() { scontrol update PartitionName="$PART" State="$1"; }

daemon_start() {
	local t0=$SECONDS
	"$SNAP_SBIN/rooflined" --foreground --config "$CONF" >>"$DLOG" 2>&1 &
	DPID=$!
	until grep -qs "started (pid $DPID" "$DLOG"; do
		((SECONDS - t0 < 60)) || die "rooflined did not start: $(tail -5 "$DLOG")"
		kill -0 "$DPID" 2>/dev/null || die "rooflined exited: $(tail -5 "$DLOG")"
		sleep 0.2
	done
}

daemon_stop() {
	[[ -n $DPID ]] || return 0
	kill -TERM "$DPID" 2>/dev/null || true
	wait "$DPID" 2>/dev/null || true
	DPID=
}

cleanup() {
	local rc=$?
	set +e
	[[ -n $CHURN_PID ]] && kill "$CHURN_PID" 2>/dev/null
	((PROBES)) && perf probe -q -d 'rlb:*' >/dev/null 2>&1
	if [[ -n ${SLURM_CONF:-} ]] && [[ -r $SLURM_CONF ]]; then
		scancel -u "$BUSER" 2>/dev/null
	fi
	daemon_stop
	bench_cluster_release
	say "raw results in $OUT"
	exit "$rc"
}

# queue_runs N: N runs of the one-step pipeline, as $BUSER; prints "lo hi".
PIPELINE="name: bench
slurm: { partition: $PART, time: \"00:05:00\" }
steps:
  - { id: one, plugin: smoke, with: { records: 1 } }
"
queue_runs() {
	echo "with i as (insert into runs (pipeline_name, yaml) select 'bench', :'yaml'
	      from generate_series(1, $1) returning id) select min(id), max(id) from i;" |
		as_user psql -X -q -t -A -F' ' -v ON_ERROR_STOP=1 -v yaml="$PIPELINE" -f -
}
runs_ended() {
	[[ $(sql "select count(*) from runs where id between $1 and $2 and
		state in ('succeeded', 'failed', 'cancelled')") == $(($2 - $1 + 1)) ]]
}
steps_in() { # steps_in LO HI STATES: all steps of runs LO..HI are in one of STATES
	[[ $(sql "select count(*) from steps where run_id between $1 and $2 and
		state in ($3)") == $(($2 - $1 + 1)) ]]
}
# event_span LO HI STATE: "count first last seconds" of STATE events of runs LO..HI
event_span() {
	sql "select count(*), extract(epoch from min(e.at)), extract(epoch from max(e.at)),
		extract(epoch from max(e.at) - min(e.at)) from step_events e
		join steps s on s.id = e.step where s.run_id between $1 and $2
		and e.state = '$3'" | tr '|' ' '
}

# ---- setup -------------------------------------------------------------------------
setup() {
	say "building (VARIANT=$BENCH_VARIANT)"
	make -s -C "$REPO" VARIANT="$BENCH_VARIANT" all engine-bench-tools >/dev/null
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	bench_cluster_start || die "cluster did not start"
	# A copy of the binaries: others may rebuild build/release meanwhile.
	bench_snapshot smoke.so -- engine-submit engine-poll
	bench_config "$POLL"
	daemon_start
	# roles are the superuser's to make (the daemon's role has no CREATEROLE)
	runuser -u postgres -- env PGUSER=postgres PGHOST="$PGHOST" PGPORT="$PGPORT" psql -X -q -t -A -d postgres -c "do \$\$ begin if not exists (select 1 from pg_roles where rolname = '$BUSER')
	     then create role $BUSER login in role roofline_users; end if; end \$\$" >/dev/null
	if ((BENCH_SMOKE)); then
		say "smoke: skipped the perf probes and profiles"
	elif perf stat -e task-clock true >/dev/null 2>&1 &&
	    perf probe -q -x "$SNAP_SBIN/rooflined" -a 'rlb:tick=engine_tick' >/dev/null 2>&1; then
		perf probe -q -d 'rlb:*' >/dev/null 2>&1
		PROBES=1
	fi
	report "# engine benchmark, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- daemon common sql || echo '+local changes')"
	report "# machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -r); $(sinfo -V); PostgreSQL $(sql 'show server_version')"
	report "# settings:$( ((BENCH_SMOKE)) && echo ' SMOKE (tiny sizes, no perf),') parts $PARTS, repeats $REPEATS, runs $RUNS, tracked $TRACKED, poll_interval $POLL, window ${WINDOW}s, history $HISTORY; perf probes $( ((PROBES)) && echo yes || echo no); load at start $(load)"
}

# ---- S: Slurm's own submit rate ----------------------------------------------------------
slurm_rates() {
	local r line rates=() held=() sb=() t0 t1
	report ""
	report "## S. Slurm's own submit rate ($RUNS jobs, user $BUSER, partition $PART)"
	for ((r = 1; r <= REPEATS; r++)); do
		wait_for 600 no_user_jobs || die "jobs of $BUSER did not drain"
		line=$("$SNAP_BENCH/engine-submit" "$BUSER" "$PART" "$RUNS" "sb$r")
		echo "slurm_submit running r$r: $line" >>"$OUT/slurm-submit.txt"
		rates+=("$(sed -E 's/.*\(([0-9.]+) jobs\/s\).*/\1/' <<<"$line")")
		wait_for 600 no_user_jobs || die "jobs of $BUSER did not drain"
		t0=$(now)
		as_user bash -c "cd /tmp && for ((i = 0; i < $RUNS; i++)); do
			sbatch -Q -p $PART -J sbatch$r.\$i -o /dev/null -t 5 --wrap true >/dev/null || exit 1; done"
		t1=$(now)
		sb+=("$(div "$RUNS" "$(sub "$t1" "$t0")" %.1f)")
		echo "sbatch loop r$r: $RUNS in $(sub "$t1" "$t0") s" >>"$OUT/slurm-submit.txt"
		wait_for 600 no_user_jobs || die "jobs of $BUSER did not drain"
		part_state DOWN
		line=$("$SNAP_BENCH/engine-submit" "$BUSER" "$PART" "$RUNS" "held$r")
		echo "slurm_submit held r$r: $line" >>"$OUT/slurm-submit.txt"
		held+=("$(sed -E 's/.*\(([0-9.]+) jobs\/s\).*/\1/' <<<"$line")")
		scancel -u "$BUSER"
		part_state UP
	done
	report "slurm_submit() back to back, jobs running:   ${rates[*]} jobs/s -> median $(printf '%s\n' "${rates[@]}" | median)"
	report "sbatch --wrap true loop, jobs running:       ${sb[*]} jobs/s -> median $(printf '%s\n' "${sb[@]}" | median)"
	report "slurm_submit() back to back, jobs held:      ${held[*]} jobs/s -> median $(printf '%s\n' "${held[@]}" | median)"
	wait_for 600 no_user_jobs || die "jobs of $BUSER did not drain"
}

# ---- probes: where a submission's wall time goes -----------------------------------------
probes_add() {
	local rl=$SNAP_SBIN/rooflined slurm pq f
	perf probe -q -d 'rlb:*' >/dev/null 2>&1 || true
	slurm=$(ldd "$rl" | awk '/libslurm/ { print $3 }')
	pq=$(ldd "$rl" | awk '/libpq/ { print $3 }')
	for f in engine_tick runs_start_queued runs_handle_cancels launch_begin launch_end launch_poll \
		ingest_attempt engine_steps_query runs_finish_done; do
		perf probe -q -x "$rl" -a "rlb:$f=$f" -a "rlb:$f=$f%return" ||
			say "warning: no probe on $f"
	done
	perf probe -q -x "$slurm" -a "rlb:slurm_submit_batch_job=slurm_submit_batch_job" \
		-a "rlb:slurm_submit_batch_job=slurm_submit_batch_job%return" \
		-a "rlb:slurm_load_jobs=slurm_load_jobs" -a "rlb:slurm_load_jobs=slurm_load_jobs%return"
	perf probe -q -x "$pq" -a "rlb:PQexecParams=PQexecParams" -a "rlb:PQexecParams=PQexecParams%return" \
		-a "rlb:PQexec=PQexec" -a "rlb:PQexec=PQexec%return"
}

# probes_summary FILE: per engine function, calls and mean wall ms, and the
# wall of the calls nested in it (fsync, libpq, libslurm).
probes_summary() {
	perf script -i "$1" -F event,time 2>/dev/null | awk '
	function fname(ev) { sub(/^(rlb|syscalls):/, "", ev); sub(/:$/, "", ev); return ev }
	{
		t = $1 + 0; ev = fname($2)
		ret = ev ~ /__return$|^sys_exit_/
		sub(/__return$/, "", ev); sub(/^sys_(enter|exit)_/, "", ev)
		top = ev ~ /^(engine_tick|runs_start_queued|runs_handle_cancels|launch_begin|launch_end|launch_poll|runs_finish_done)$/
		if (!ret) { start[ev] = t; if (top && ev != "engine_tick") cur = ev; next }
		if (!(ev in start)) next
		d = (t - start[ev]) * 1000; delete start[ev]
		n[ev]++; w[ev] += d
		if (!top && cur != "") { nn[cur, ev]++; nw[cur, ev] += d }
		if (top && ev != "engine_tick") cur = ""
	}
	END {
		printf "%-24s %8s %10s %10s\n", "function", "calls", "mean ms", "total s"
		for (f in n) printf "%-24s %8d %10.3f %10.2f\n", f, n[f], w[f] / n[f], w[f] / 1000 | "sort"
		close("sort")
		printf "inside (per call of the outer function):\n"
		for (k in nn) { split(k, p, SUBSEP); printf "  %-20s %-24s %8.2f calls %9.3f ms\n", p[1], p[2], nn[k] / n[p[1]], nw[k] / n[p[1]] | "sort" }
		close("sort")
	}'
}

# ---- A: N one-step runs end to end -----------------------------------------------------
# batch TAG: queue $RUNS runs, wait for them all, write "TAG key=value ..." to stdout
batch() {
	local tag=$1 ids lo hi c0 c1 t0 t1 p q s n_ok lat span
	c0=$(cpu_s "$DPID")
	t0=$(now)
	ids=$(queue_runs "$RUNS")
	read -r lo hi <<<"$ids"
	wait_for 1800 runs_ended "$lo" "$hi" || die "runs $lo..$hi did not end in 30 min"
	t1=$(now)
	c1=$(cpu_s "$DPID")
	n_ok=$(sql "select count(*) from runs where id between $lo and $hi and state = 'succeeded'")
	read -r -a p <<<"$(event_span "$lo" "$hi" pending)"
	read -r -a q <<<"$(event_span "$lo" "$hi" submitting)"
	read -r -a s <<<"$(event_span "$lo" "$hi" succeeded)"
	# The engine records a tick's submissions in one statement (all
	# 'submitting', then all 'pending'), so the rate is taken from the first
	# 'submitting' to the last 'pending'.
	span=$(sub "${p[2]}" "${q[1]}")
	# ingest latency: 'succeeded' event minus the exit record's mtime
	find "$SPOOL" -path '*/run-*/one/attempt-1/exit.tsv' -printf '%h %T@\n' |
		sed -E 's|.*/run-([0-9]+)/one/attempt-1 |\1 |' >"$OUT/exit-mtimes.$tag"
	sql "select s.run_id, extract(epoch from e.at) from step_events e join steps s
	     on s.id = e.step where s.run_id between $lo and $hi and e.state = 'succeeded'" |
		tr '|' ' ' | awk 'NR == FNR { m[$1] = $2; next } ($1 in m) { printf "%.1f\n", ($2 - m[$1]) * 1000 }' \
			"$OUT/exit-mtimes.$tag" - >"$OUT/latency-ms.$tag"
	lat="$(median <"$OUT/latency-ms.$tag") $(pct 90 <"$OUT/latency-ms.$tag") $(sort -g "$OUT/latency-ms.$tag" | tail -1)"
	echo "$tag runs=$lo..$hi ok=$n_ok wall=$(sub "$t1" "$t0") cpu=$(sub "$c1" "$c0")" \
		"cpu_ms_per_run=$(per_ms "$(sub "$c1" "$c0")" "$RUNS")" \
		"pending_n=${p[0]} submit_span=$span submit_rate=$(div "${p[0]}" "$span" %.1f)" \
		"queue_to_first_pending=$(sub "${p[1]}" "$t0")" \
		"succeeded_n=${s[0]} succeeded_span=${s[3]} ingest_rate=$(div "$((s[0] - 1))" "${s[3]}" %.1f)" \
		"latency_ms_p50_p90_max=${lat// /\/} hwm_kb=$(status_kb "$DPID" VmHWM)" \
		"slurm_jobs=$(slurm_job_count) load=$(load | tr ' ' /)"
}

# field KEY LINES...: the values of KEY= in the lines
field() { local k=$1; shift; printf '%s\n' "$@" | sed -nE "s/.* $k=([^ ]*).*/\1/p"; }
# words: the lines on stdin on one line
words() { tr '\n' ' ' | sed 's/ $//'; }
# med_of KEY LINES...: "v1 v2 v3 -> median m"
med_of() { local k=$1 v; shift; v=$(field "$k" "$@"); echo "$(words <<<"$v") -> median $(median <<<"$v")"; }

part_a() {
	local r lines=() line
	report ""
	report "## A. $RUNS queued one-step runs end to end (poll_interval $POLL)"
	for ((r = 1; r <= REPEATS; r++)); do
		wait_for 600 no_user_jobs || die "jobs of $BUSER did not drain"
		line=$(batch "a$r")
		echo "$line" >>"$OUT/part-a.txt"
		lines+=("$line")
	done
	report "runs succeeded:                         $(field ok "${lines[@]}" | tr '\n' ' ')of $RUNS each"
	report "jobs submitted/s (first 'submitting' to last 'pending'): $(med_of submit_rate "${lines[@]}")"
	report "  queued -> first 'pending' (s):        $(med_of queue_to_first_pending "${lines[@]}")"
	report "results ingested/s (first..last):       $(med_of ingest_rate "${lines[@]}")"
	report "ingest latency p50/p90/max ms:          $(field latency_ms_p50_p90_max "${lines[@]}" | tr '\n' ' ')"
	report "wall, queue to last run ended (s):      $(med_of wall "${lines[@]}")"
	report "daemon CPU per batch (s):               $(med_of cpu "${lines[@]}")"
	report "daemon CPU per run (ms):                $(med_of cpu_ms_per_run "${lines[@]}")"
	report "daemon peak RSS (VmHWM kB) after A:     $(status_kb "$DPID" VmHWM) (jobs in slurmctld after each batch: $(field slurm_jobs "${lines[@]}" | words))"
	if ((PROBES)); then
		wait_for 600 no_user_jobs || die "jobs of $BUSER did not drain"
		probes_add
		perf record -q -o "$OUT/probes-a.data" -p "$DPID" -e 'rlb:*' \
			-e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync >/dev/null 2>&1 &
		local prec=$!
		sleep 1
		line=$(batch a-probed)
		kill -INT "$prec"
		wait "$prec" || true
		perf probe -q -d 'rlb:*' >/dev/null 2>&1
		echo "$line" >>"$OUT/part-a.txt"
		probes_summary "$OUT/probes-a.data" >"$OUT/probes-a.txt"
		report "one more batch with uprobes (not in the medians): $(field submit_rate "$line") jobs/s; wall per call:"
		sed 's/^/    /' "$OUT/probes-a.txt" | tee -a "$OUT/summary.txt"
	fi
}

# ---- I: ingest capacity ----------------------------------------------------------------------
part_i() {
	local r ids lo hi c0 c1 s lines=() line
	report ""
	report "## I. ingest capacity: $RUNS finished jobs waiting when the daemon starts"
	for ((r = 1; r <= REPEATS; r++)); do
		wait_for 600 no_user_jobs || die "jobs of $BUSER did not drain"
		part_state DOWN
		ids=$(queue_runs "$RUNS")
		read -r lo hi <<<"$ids"
		wait_for 1800 steps_in "$lo" "$hi" "'pending'" || die "runs $lo..$hi not all pending"
		daemon_stop
		part_state UP
		wait_for 900 no_user_jobs || die "jobs of $BUSER did not run"
		daemon_start
		wait_for 900 runs_ended "$lo" "$hi" || die "runs $lo..$hi not ingested"
		# the whole process: its start-up included (measured below)
		c1=$(cpu_s "$DPID")
		read -r -a s <<<"$(event_span "$lo" "$hi" succeeded)"
		line="i$r runs=$lo..$hi ok=$(sql "select count(*) from runs where id between $lo and $hi and state = 'succeeded'") succeeded_n=${s[0]} span=${s[3]} ingest_rate=$(div "$((s[0] - 1))" "${s[3]}" %.1f) cpu_since_start=$c1 load=$(load | tr ' ' /)"
		echo "$line" >>"$OUT/part-i.txt"
		lines+=("$line")
	done
	# the same start with nothing to ingest: start-up and a first tick
	daemon_stop
	daemon_start
	sleep "$(awk -v p="$(poll_s)" 'BEGIN { print p + 1 }')"
	c0=$(cpu_s "$DPID")
	c1=$(field cpu_since_start "${lines[@]}" | median)
	report "results ingested/s (first..last):       $(med_of ingest_rate "${lines[@]}")"
	report "daemon CPU from exec to all ingested (s): $(med_of cpu_since_start "${lines[@]}")"
	report "  a start with nothing to do, 2 ticks (s): $c0"
	report "  CPU per result ingested, median less start-up (ms): $(per_ms "$(sub "$c1" "$c0")" "$RUNS")"
}

# ---- B: M jobs tracked -------------------------------------------------------------------------
churn_start() {
	local job
	job=$(squeue -h -u "$BUSER" -t PD -o %A | awk 'NR == 1')
	(while :; do
		scontrol update JobId="$job" Comment="bench$RANDOM" >/dev/null 2>&1
		sleep 0.5
	done) &
	CHURN_PID=$!
}
churn_stop() { kill "$CHURN_PID" 2>/dev/null; wait "$CHURN_PID" 2>/dev/null || true; CHURN_PID=; }

# window TAG: one steady-state window; prints "TAG key=value ..."
# The daemon's CPU is read from /proc/PID/stat (utime + stime) before and
# after; ticks are its sleeps, poll() on its two wake-up descriptors for
# poll_interval (daemon/rooflined.c's wait_for_work), counted by perf (or,
# without perf, estimated from the wall time); with uprobes, the wall time of
# each engine_tick() and of the calls inside it is recorded too.
window() {
	local tag=$1 pg ctld pc0 pc1 cc0 cc1 dc0 dc1 ticks='' t0 t1 prec='' tick_ms=''
	pg=$(sql "select pid from pg_stat_activity where application_name = 'rooflined' limit 1")
	ctld=$(awk '{ print $1 }' "$VAR/slurm/run/slurmctld.pid")
	if ((PROBES)); then
		perf record -q -o "$OUT/probes.$tag.data" -p "$DPID" -e 'rlb:*' >/dev/null 2>&1 &
		prec=$!
		sleep 1
	fi
	pc0=$(cpu_s "$pg") cc0=$(cpu_s "$ctld") dc0=$(cpu_s "$DPID") t0=$(now)
	if perf stat -x, -o "$OUT/perf-stat.$tag" -e syscalls:sys_enter_poll --filter "nfds == 2 && timeout_msecs == $(poll_ms)" \
		-p "$DPID" -- sleep "$WINDOW" 2>/dev/null; then
		ticks=$(awk -F, '/sys_enter_poll/ { print $1 }' "$OUT/perf-stat.$tag")
	else
		sleep "$WINDOW"
	fi
	pc1=$(cpu_s "$pg") cc1=$(cpu_s "$ctld") dc1=$(cpu_s "$DPID") t1=$(now)
	if [[ -n $prec ]]; then
		kill -INT "$prec"
		wait "$prec" || true
		probes_summary "$OUT/probes.$tag.data" >"$OUT/probes.$tag.txt"
		rm -f "$OUT/probes.$tag.data"
		tick_ms=$(awk '$1 == "engine_tick" { print $3 }' "$OUT/probes.$tag.txt")
	fi
	local wall cpu
	wall=$(sub "$t1" "$t0")
	cpu=$(sub "$dc1" "$dc0")
	# without perf: ticks from the wall time (a tick lasts poll_interval + its own work)
	[[ -n $ticks ]] || ticks=$(awk -v w="$wall" -v p="$(poll_s)" 'BEGIN { printf "%d", w / p }')
	echo "$tag wall=$wall ticks=$ticks cpu_ms=$(per_ms "$cpu" 1) cpu_ms_per_tick=$(per_ms "$cpu" "$ticks")" \
		"tick_wall_ms=${tick_ms:-?}" \
		"pg_ms_per_tick=$(div "$(sub "$pc1" "$pc0")" "$ticks" %.4f | awk '{ printf "%.1f", $1 * 1000 }')" \
		"slurmctld_ms_per_tick=$(div "$(sub "$cc1" "$cc0")" "$ticks" %.4f | awk '{ printf "%.1f", $1 * 1000 }')" \
		"rss_kb=$(status_kb "$DPID" VmRSS) hwm_kb=$(status_kb "$DPID" VmHWM) load=$(load | tr ' ' /)"
}
poll_ms() { awk -v s="$(poll_s)" 'BEGIN { printf "%d", s * 1000 + 0.5 }'; }
poll_s() { awk -v p="$POLL" 'BEGIN { if (p ~ /ms$/) print p / 1000; else if (p ~ /m$/) print p * 60; else print p + 0 }'; }

# poll_alone TAG: REPEATS processes of engine-poll: a full load, then 3 more
poll_alone() {
	local tag=$1 r f=$OUT/engine-poll.$1
	for ((r = 1; r <= REPEATS; r++)); do
		"$SNAP_BENCH/engine-poll" 4 "$POLL_GAP_MS" | sed "s/^/$tag r$r /"
	done >"$f"
	# "TAG rN before: rss B kB" then
	# "TAG rN call I: wall W ms, cpu C ms, matched M, rss R kB, hwm H kB"
	report "  slurm_poll() alone, first call (full load): wall $(awk '$4 == "1:" { print $6 }' "$f" | words) ms" \
		"-> median $(awk '$4 == "1:" { print $6 }' "$f" | median), cpu median $(awk '$4 == "1:" { print $9 }' "$f" | median) ms;" \
		"jobs matched $(awk '$4 == "1:" { print $12 + 0; exit }' "$f")"
	report "  slurm_poll() alone, later calls:           wall median $(awk '$3 == "call" && $4 != "1:" { print $6 }' "$f" | median) ms," \
		"cpu median $(awk '$3 == "call" && $4 != "1:" { print $9 }' "$f" | median) ms"
	report "  its RSS: before $(awk '$3 == "before:" { print $5 }' "$f" | median) kB, after the first call" \
		"$(awk '$4 == "1:" { print $14 }' "$f" | median) kB, VmHWM after the last $(awk '$4 == "4:" { print $17 }' "$f" | median) kB (medians)"
}

# profile TAG: 20 s of the daemon's CPU samples, summarised (a subshell:
# a summary that comes out short must not stop the benchmark).
profile() (
	set +e
	local tag=$1
	perf record -q -e cpu-clock -F 1999 --call-graph dwarf -o "$OUT/perf.$tag.data" \
		-p "$DPID" -- sleep 20 >/dev/null 2>&1 || return 0
	{
		echo "### by library (self)"
		perf report -i "$OUT/perf.$tag.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep '%' | head -8
		echo "### by function (with callees)"
		perf report -i "$OUT/perf.$tag.data" --children --sort dso,symbol --stdio -g none 2>/dev/null |
			grep '%' | grep -v '\[k\]' | head -40
	} >"$OUT/profile.$tag.txt"
	rm -f "$OUT/perf.$tag.data"
)

explain_all() {
	local c="s.id, s.run_id, s.step_id, s.node, s.plugin, s.on_daemon, s.state, s.attempt, s.retries, coalesce(s.timeout_s, 0), coalesce(s.slurm_job_id, 0), coalesce(s.daemon_pid, 0), r.owner, r.facility, coalesce(r.spool_dir, ''), s.options"
	local active="'waiting', 'retry_wait', 'submitting', 'pending', 'running'"
	# The queries of one engine_tick(), copied from daemon/*.c (commit in the summary).
	local -a names=(runs_start_queued handle_cancels:queued handle_cancels:steps
		handle_cancels:runs poll_slurm poll_daemon_children repair_submitting ready
		runs_finish_done schedule_fire_due)
	local -a qs=(
		"select id, yaml, facility, owner from runs where state = 'queued' and not cancel_requested order by id limit 200"
		"update runs set state = 'cancelled', ended_at = now(), error = 'cancelled before it started' where state = 'queued' and cancel_requested"
		"select $c from steps s join runs r on r.id = s.run_id where r.state = 'running' and r.cancel_requested and s.state in ($active)"
		"select id from runs where state = 'running' and cancel_requested"
		"select $c from steps s join runs r on r.id = s.run_id where s.state in ('pending', 'running') and not s.on_daemon and s.slurm_job_id is not null"
		"select $c from steps s join runs r on r.id = s.run_id where s.state = 'running' and s.on_daemon"
		"select $c from steps s join runs r on r.id = s.run_id where s.state = 'submitting'"
		"select $c from steps s join runs r on r.id = s.run_id where r.state = 'running' and not r.cancel_requested and ((s.state = 'waiting' and not exists (select 1 from steps n where n.id = any(s.needs) and n.state <> 'succeeded')) or (s.state = 'retry_wait' and s.next_try_at <= now())) order by s.id limit 500"
		"update runs r set ended_at = now(), state = case when r.cancel_requested then 'cancelled' when exists (select 1 from steps s where s.run_id = r.id and s.state in ('failed', 'skipped', 'cancelled')) then 'failed' else 'succeeded' end, error = (select string_agg(s.step_id || case when s.node = '' then '' else '@' || s.node end || ': ' || s.error, '; ' order by s.id) from steps s where s.run_id = r.id and s.state = 'failed') where r.state = 'running' and not exists (select 1 from steps s where s.run_id = r.id and s.state in ($active)) returning r.id, r.state, coalesce(r.error, '')"
		"select id, name, yaml, schedule from pipelines where active and schedule is not null and next_fire_at <= now() order by id")
	local i plan
	for i in "${!qs[@]}"; do
		plan=$(psql -X -q -t -A -c "begin" -c "explain (analyze, buffers) ${qs[$i]}" -c "rollback")
		printf '=== %s\n%s\n\n' "${names[$i]}" "$plan" >>"$OUT/explain.$1.txt"
		printf '  %-24s planning %8s ms  execution %8s ms\n' "${names[$i]}" \
			"$(sed -nE 's/^Planning Time: ([0-9.]+).*/\1/p' <<<"$plan")" \
			"$(sed -nE 's/^Execution Time: ([0-9.]+).*/\1/p' <<<"$plan")"
	done
}

add_history() {
	# Finished runs with one finished step and three events each, as years of
	# nightly runs would leave; written by the daemon's role.
	sql "with r as (insert into runs (pipeline_name, owner, yaml, state, submitted_at,
	       started_at, ended_at, spool_dir) select 'history', '$BUSER', 'name: history',
	       'succeeded', now() - g * interval '1 minute', now() - g * interval '1 minute',
	       now() - g * interval '1 minute', '/nonexistent' from generate_series(1, $HISTORY) g
	       returning id), s as (insert into steps (run_id, step_id, plugin, on_daemon,
	       state, attempt, started_at, ended_at) select id, 'one', 'smoke', false,
	       'succeeded', 1, now(), now() from r returning id)
	     insert into step_events (step, state, attempt) select id, st, 1 from s,
	       unnest(array['submitting', 'pending', 'succeeded']) st" >/dev/null
	sql "analyze runs, steps, step_events" >/dev/null
}

part_b() {
	local ids lo hi r lines=() line p q
	report ""
	report "## B. $TRACKED jobs tracked (held: partition $PART down), poll_interval $POLL"
	wait_for 600 no_user_jobs || die "jobs of $BUSER did not drain"
	part_state DOWN
	ids=$(queue_runs "$TRACKED")
	read -r lo hi <<<"$ids"
	wait_for 3600 steps_in "$lo" "$hi" "'pending'" || die "runs $lo..$hi not all pending in an hour"
	read -r -a p <<<"$(event_span "$lo" "$hi" pending)"
	read -r -a q <<<"$(event_span "$lo" "$hi" submitting)"
	report "jobs submitted/s while held (first 'submitting' to last 'pending' of $TRACKED): $(div "${p[0]}" "$(sub "${p[2]}" "${q[1]}")" %.1f)"
	# Slurm keeps finished jobs for MinJobAge: wait until only ours are left.
	# (not in a smoke run: MinJobAge is 300 s)
	((BENCH_SMOKE)) || WAIT_STEP=10 wait_for 400 slurm_jobs_at_most "$TRACKED" ||
		say "warning: Slurm still holds $(slurm_job_count) jobs"
	report "jobs in slurmctld: $(slurm_job_count); daemon RSS now $(status_kb "$DPID" VmRSS) kB, VmHWM $(status_kb "$DPID" VmHWM) kB"
	((PROBES)) && probes_add
	sleep "$SETTLE"
	lines=()
	for ((r = 1; r <= REPEATS; r++)); do
		line=$(window "quiet$r")
		echo "$line" >>"$OUT/part-b.txt"
		lines+=("$line")
	done
	report "quiet (job table unchanged, Slurm answers 'no change'):"
	report "  ticks per ${WINDOW}s window:       $(med_of ticks "${lines[@]}")"
	report "  daemon CPU per tick (ms):        $(med_of cpu_ms_per_tick "${lines[@]}")"
	report "  engine_tick() wall (ms):         $(med_of tick_wall_ms "${lines[@]}")"
	report "  PostgreSQL backend CPU per tick: $(med_of pg_ms_per_tick "${lines[@]}")"
	report "  slurmctld CPU per tick (ms):     $(med_of slurmctld_ms_per_tick "${lines[@]}")"
	report "  daemon RSS / VmHWM (kB):         $(field rss_kb "${lines[@]}" | tail -1) / $(field hwm_kb "${lines[@]}" | tail -1)"
	if ((PROBES)); then
		report "  wall per call in the last window ($OUT/probes.quiet$REPEATS.txt):"
		sed 's/^/    /' "$OUT/probes.quiet$REPEATS.txt" | tee -a "$OUT/summary.txt"
	fi
	poll_alone quiet
	((PROBES)) && profile quiet
	churn_start
	sleep "$((SETTLE < 3 ? SETTLE : 3))"
	lines=()
	for ((r = 1; r <= REPEATS; r++)); do
		line=$(window "churn$r")
		echo "$line" >>"$OUT/part-b.txt"
		lines+=("$line")
	done
	report "churn (one job updated every 0.5 s: every poll loads every job):"
	report "  ticks per ${WINDOW}s window:       $(med_of ticks "${lines[@]}")"
	report "  daemon CPU per tick (ms):        $(med_of cpu_ms_per_tick "${lines[@]}")"
	report "  engine_tick() wall (ms):         $(med_of tick_wall_ms "${lines[@]}")"
	report "  PostgreSQL backend CPU per tick: $(med_of pg_ms_per_tick "${lines[@]}")"
	report "  slurmctld CPU per tick (ms):     $(med_of slurmctld_ms_per_tick "${lines[@]}")"
	report "  daemon RSS / VmHWM (kB):         $(field rss_kb "${lines[@]}" | tail -1) / $(field hwm_kb "${lines[@]}" | tail -1)"
	if ((PROBES)); then
		report "  wall per call in the last window ($OUT/probes.churn$REPEATS.txt):"
		sed 's/^/    /' "$OUT/probes.churn$REPEATS.txt" | tee -a "$OUT/summary.txt"
	fi
	poll_alone churn
	((PROBES)) && profile churn
	churn_stop
	report "EXPLAIN ANALYZE of one tick's queries, $TRACKED steps pending ($OUT/explain.tracked.txt):"
	explain_all tracked | tee -a "$OUT/summary.txt"
	if ((HISTORY > 0)); then
		add_history
		sleep "$((SETTLE < 3 ? SETTLE : 3))"
		line=$(window history)
		echo "$line" >>"$OUT/part-b.txt"
		report "with $HISTORY finished runs of history added (quiet, one window):"
		report "  $line"
		if ((PROBES)); then
			report "  wall per call ($OUT/probes.history.txt):"
			sed 's/^/    /' "$OUT/probes.history.txt" | tee -a "$OUT/summary.txt"
		fi
		report "EXPLAIN ANALYZE with that history ($OUT/explain.history.txt):"
		explain_all history | tee -a "$OUT/summary.txt"
	fi
	((PROBES)) && perf probe -q -d 'rlb:*' >/dev/null 2>&1
	return 0
}

setup
for ((k = 0; k < ${#PARTS}; k++)); do
	case ${PARTS:k:1} in
	S) slurm_rates ;;
	A) part_a ;;
	I) part_i ;;
	B) part_b ;;
	*) die "unknown part '${PARTS:k:1}' (S, A, I, B)" ;;
	esac
done
report ""
report "# load at end $(load); raw results in $OUT"
