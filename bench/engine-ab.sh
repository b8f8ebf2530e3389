#!/bin/bash
# bench/engine-ab.sh - issue 13's daemon targets, two builds side by side in
# one run on one private cluster: a base commit (-b, default the merge base
# with main) and the working tree.  A benchmark, not a test: it prints what it
# measured and checks nothing.
#
#   A  submission, R rounds, the order of the three rotating each round,
#      with the partition down (jobs held: what is measured is how fast jobs
#      get into Slurm, not how fast this one overloaded node runs them):
#      Slurm's own rate (bench/engine-submit: N jobs back to back through
#      daemon/slurm.c's slurm_submit()) and, for each build, N queued
#      one-step runs until every step is 'pending' (jobs submitted per
#      second, first 'submitting' to last 'pending' event of each step); the
#      ratio of each build's rate to Slurm's rate of the same round.
#   B  memory at M tracked jobs, each build in turn: the partition down, M
#      runs queued, all M steps 'pending', then 20 s with one job's comment
#      changed every 0.5 s (every poll loads all M jobs); the daemon's VmHWM
#      and VmRSS.
#   H  memory as history grows: H finished runs of history (runs, steps,
#      step_events, as bench/engine-bench.sh adds them) in each build's
#      database, then per build a fresh daemon runs 50 one-step runs end to
#      end: its VmHWM, and the largest peak RSS of the roofline-job processes
#      of that batch (each job runs roofline-job under /usr/bin/time).
#
# Each build has its own snapshot, database (rl_base, rl_new), spool
# directory and daemon, started only for its own measurement: the builds
# share Slurm and PostgreSQL but never run at once.  MinJobAge=30 (Slurm
# forgets finished jobs after 30 s, not 300 s) so that one build's finished
# jobs have left slurmctld before the other's measurement starts.
#
# Usage: bench/engine-ab.sh [-b BASE] [-r ROUNDS] [-n RUNS] [-m TRACKED]
#                           [-H "1000 10000 100000"] [-x PARTS] [-o DIR]
#   -b  base commit (default: merge-base of HEAD and main)
#   -r  rounds of part A (default 3)
#   -n  runs per batch in A and jobs of Slurm's own rate (default 1000)
#   -m  jobs tracked in B (default 10000)
#   -H  history sizes for H, in increasing order (default "1000 10000 100000")
#   -x  parts to run (default AB H: "ABH")
#   -o  raw results (default /tmp/engine-ab.DATE)
# Needs root.  Environment: ROOFLINE_VAR (default <repo>/var/bench-ab, removed
# at the end unless KEEP=1; a cluster already running there is used and left
# running, bench/lib.sh).
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): "base" is the working tree's
# build too (BENCH_VARIANT, no second build: -b is ignored), defaults -r 1
# -n 3 -m 3 -H 5, poll_interval 300ms (not 2s), 2 runs per batch in H, 1 s
# of churn in B, no wait for Slurm to forget finished jobs, -o
# $BENCH_SMOKE_DIR (else a new temporary directory).
set -euo pipefail

PROG=engine-ab
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE_REV='' ROUNDS=3 RUNS=1000 TRACKED=10000 HIST="1000 10000 100000" PARTS=ABH
OUT=/tmp/engine-ab.$(date +%Y%m%d-%H%M%S)
H_RUNS=50 CHURN_S=20 POLL=2s
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then
	ROUNDS=1 RUNS=3 TRACKED=3 HIST=5 H_RUNS=2 CHURN_S=1 POLL=300ms
	OUT=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/engine-ab-smoke.XXXXXX)}
fi
while getopts b:r:n:m:H:x:o:h opt; do
	case $opt in
	b) BASE_REV=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	n) RUNS=$OPTARG ;;
	m) TRACKED=$OPTARG ;;
	H) HIST=$OPTARG ;;
	x) PARTS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) exit 2 ;;
	esac
done
[[ -n $BASE_REV || ${BENCH_SMOKE:-0} == 1 ]] || BASE_REV=$(git -C "$REPO" merge-base HEAD main)

export ROOFLINE_VAR=${ROOFLINE_VAR:-$REPO/var/bench-ab}
VAR=$ROOFLINE_VAR
PART=bench
ROOFLINE_SLURM_EXTRA="MaxJobCount=$((TRACKED * 3 + RUNS * 20))
MinJobAge=30
SchedulerParameters=batch_sched_delay=0
PartitionName=$PART Nodes=ALL OverSubscribe=FORCE:32 MaxTime=INFINITE State=UP"
export ROOFLINE_SLURM_EXTRA
export ROOFLINE_NODES=${ROOFLINE_NODES:-1}
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
VARIANTS=(base new)
DPID=
CHURN_PID=

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
report() { printf '%s\n' "$*" | tee -a "$OUT/summary.txt"; }

((EUID == 0)) || die "must run as root (it starts a private Slurm and PostgreSQL)"
[[ $VAR != "$REPO/var" ]] || die "ROOFLINE_VAR must not be the default cluster's $REPO/var"
mkdir -p "$OUT"
: >"$OUT/summary.txt"

# ---- helpers (as bench/engine-bench.sh) ----------------------------------------
# sql V TEXT: run TEXT in build V's database
sql() { PGDATABASE=rl_$1 psql -X -q -t -A -v ON_ERROR_STOP=1 -c "$2"; }
as_user() {
	runuser -u "$BUSER" -- env -u PGUSER PATH="$PATH" SLURM_CONF="$SLURM_CONF" \
		PGHOST="$PGHOST" PGPORT="$PGPORT" PGDATABASE="$PGDATABASE" "$@"
}
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", a - b }'; }
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN { printf f "\n", b ? a / b : 0 }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
wait_for() {
	local secs=$1 t0=$SECONDS
	shift
	until "$@"; do
		((SECONDS - t0 < secs)) || return 1
		sleep "${WAIT_STEP:-0.5}"
	done
}
no_user_jobs() { [[ $(squeue -h -u "$BUSER" -t PD,R,CG,CF 2>/dev/null | wc -l) == 0 ]]; }
slurm_job_count() { squeue -h -t all 2>/dev/null | wc -l; }
slurm_jobs_at_most() { (($(slurm_job_count) <= $1)); }
# part_state UP|DOWN (retried: slurmctld may time out while it purges
# thousands of cancelled jobs)
part_state() {
	local i
	for ((i = 0; i < 10; i++)); do
		scontrol update PartitionName="$PART" State="$1" && return 0
		sleep 3
	done
	return 1
}
field() { local k=$1; shift; printf '%s\n' "$@" | sed -nE "s/.* $k=([^ ]*).*/\1/p"; }
words() { tr '\n' ' ' | sed 's/ $//'; }
med_of() { local k=$1 v; shift; v=$(field "$k" "$@"); echo "$(words <<<"$v") -> median $(median <<<"$v")"; }

# Slurm keeps finished jobs MinJobAge (30 s): wait until they are gone, so
# that every measurement starts from the same job table.
settle() {
	wait_for 1800 no_user_jobs || die "jobs of $BUSER did not drain"
	((BENCH_SMOKE)) && return 0
	WAIT_STEP=2 wait_for 300 slurm_jobs_at_most 0 || say "warning: Slurm still holds $(slurm_job_count) jobs"
}

daemon_start() { # daemon_start V
	local t0=$SECONDS log=$WORK/$1.log
	"$WORK/snap-$1/sbin/rooflined" --foreground --config "$WORK/$1.yaml" >>"$log" 2>&1 &
	DPID=$!
	echo "$DPID" >"$WORK/daemon.pid"
	until grep -qs "started (pid $DPID" "$log"; do
		((SECONDS - t0 < 60)) || die "rooflined ($1) did not start: $(tail -5 "$log")"
		kill -0 "$DPID" 2>/dev/null || die "rooflined ($1) exited: $(tail -5 "$log")"
		sleep 0.2
	done
}
daemon_stop() {
	[[ -n $DPID ]] || return 0
	kill -TERM "$DPID" 2>/dev/null || true
	wait "$DPID" 2>/dev/null || true
	rm -f "$WORK/daemon.pid"
	DPID=
}

cleanup() {
	local rc=$?
	set +e
	[[ -n $CHURN_PID ]] && kill "$CHURN_PID" 2>/dev/null
	if [[ -n ${SLURM_CONF:-} ]] && [[ -r $SLURM_CONF ]]; then
		scancel -u "$BUSER" 2>/dev/null
	fi
	daemon_stop
	# a daemon started inside $(...) (part A, H) is not in this shell's DPID
	if [[ -s $WORK/daemon.pid ]]; then
		DPID=$(cat "$WORK/daemon.pid")
		kill -0 "$DPID" 2>/dev/null && daemon_stop
	fi
	if ((BENCH_REUSE)) && [[ -n ${PGHOST:-} ]]; then
		for v in "${VARIANTS[@]}"; do
			runuser -u postgres -- env -u PGUSER -u PGDATABASE PGHOST="$PGHOST" PGPORT="$PGPORT" \
				psql -X -q -d postgres -c "drop database if exists rl_$v with (force)" >/dev/null
		done
	fi
	bench_cluster_release
	say "raw results in $OUT"
	exit "$rc"
}

PIPELINE="name: bench
slurm: { partition: $PART, time: \"00:05:00\" }
steps:
  - { id: one, plugin: smoke, with: { records: 1 } }
"
queue_runs() { # queue_runs V N: prints "lo hi"
	echo "with i as (insert into runs (pipeline_name, yaml) select 'bench', :'yaml'
	      from generate_series(1, $2) returning id) select min(id), max(id) from i;" |
		PGDATABASE=rl_$1 as_user psql -X -q -t -A -F' ' -v ON_ERROR_STOP=1 -v yaml="$PIPELINE" -f -
}
runs_ended() {
	[[ $(sql "$1" "select count(*) from runs where id between $2 and $3 and
		state in ('succeeded', 'failed', 'cancelled')") == $(($3 - $2 + 1)) ]]
}
steps_pending() {
	[[ $(sql "$1" "select count(*) from steps where run_id between $2 and $3 and
		state = 'pending'") == $(($3 - $2 + 1)) ]]
}
# event_span V LO HI STATE: "count first last seconds" of the steps of runs
# LO..HI that reached STATE, each counted at its first STATE event (a
# pending step's later events, such as Slurm's reason, are not submissions)
event_span() {
	sql "$1" "select count(*), extract(epoch from min(t)), extract(epoch from max(t)),
		extract(epoch from max(t) - min(t)) from (select min(e.at) as t
		from step_events e join steps s on s.id = e.step where s.run_id
		between $2 and $3 and e.state = '$4' group by e.step) f" | tr '|' ' '
}

# ---- setup -----------------------------------------------------------------------
setup() {
	local v
	local base_src=$VAR-src
	if ((BENCH_SMOKE)); then
		say "smoke: building the working tree (VARIANT=$BENCH_VARIANT), the base too: skipped the build of another commit"
		make -s -C "$REPO" -j2 VARIANT="$BENCH_VARIANT" all engine-bench-tools >/dev/null
		BASE_SHORT="working-tree(smoke)"
		base_src=$REPO
	else
		say "building the working tree and $BASE_REV (VARIANT=release)"
		make -s -C "$REPO" -j2 VARIANT=release all engine-bench-tools >/dev/null
		BASE_SHORT=$("$REPO/bench/ab-build.sh" "$BASE_REV" "$VAR-src" \
			build/release/bin/rooflined build/release/bin/roofline \
			build/release/bin/roofline-job build/release/plugins/smoke.so engine-bench-tools)
	fi
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	bench_cluster_start || die "cluster did not start"
	for v in "${VARIANTS[@]}"; do
		local src=$REPO
		[[ $v == base ]] && src=$base_src
		REPO=$src SNAP=$WORK/snap-$v SPOOL=$WORK/spool-$v bench_snapshot smoke.so -- engine-submit
		# roofline-job under /usr/bin/time: its peak RSS into the attempt dir
		mv "$WORK/snap-$v/sbin/roofline-job" "$WORK/snap-$v/sbin/roofline-job.real"
		printf '#!/bin/sh\nexec /usr/bin/time -f %%M -o "$1/maxrss.kb" %s "$@"\n' \
			"$WORK/snap-$v/sbin/roofline-job.real" >"$WORK/snap-$v/sbin/roofline-job"
		chmod 0755 "$WORK/snap-$v/sbin/roofline-job"
		SNAP=$WORK/snap-$v SPOOL=$WORK/spool-$v CONF=$WORK/$v.yaml bench_config "$POLL"
		sed -i "s|^database: .*|database: \"dbname=rl_$v\"|; s|^pidfile: .*|pidfile: $WORK/$v.pid|" "$WORK/$v.yaml"
		runuser -u postgres -- env -u PGUSER -u PGDATABASE PGHOST="$PGHOST" PGPORT="$PGPORT" \
			psql -X -q -d postgres -c "set client_min_messages = warning" \
			-c "drop database if exists rl_$v with (force)" -c "create database rl_$v owner rooflined" >/dev/null
	done
	for v in "${VARIANTS[@]}"; do
		daemon_start "$v"
		daemon_stop
	done
	# roles are the superuser's to make (the daemon's role has no CREATEROLE)
	runuser -u postgres -- env PGUSER=postgres PGHOST="$PGHOST" PGPORT="$PGPORT" psql -X -q -t -A -d postgres -c "do \$\$ begin if not exists (select 1 from pg_roles where rolname = '$BUSER')
	     then create role $BUSER login in role roofline_users; end if; end \$\$" >/dev/null
	report "# engine A/B, $(date -u +%Y-%m-%dT%H:%MZ): base $BASE_SHORT, new $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- daemon common sql plugins jobs || echo '+local changes')"
	report "# machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -r); $(sinfo -V); PostgreSQL $(psql -X -t -A -c 'show server_version')"
	report "# settings:$( ((BENCH_SMOKE)) && echo ' SMOKE (tiny sizes, base = the working tree),') parts $PARTS, rounds $ROUNDS, runs $RUNS, tracked $TRACKED, history '$HIST', poll_interval $POLL; load at start $(load)"
}

# ---- A: submission -------------------------------------------------------------------
# held V N TAG: with the partition down, N runs through build V until all
# their steps are 'pending' (their jobs held by Slurm); then the daemon is
# stopped, the jobs cancelled and the runs closed in the database (so that
# the next start of that build has nothing left to do).  Prints "TAG ...".
held() {
	local v=$1 n=$2 tag=$3 ids lo hi c0 c1 p q span hwm
	part_state DOWN
	daemon_start "$v"
	c0=$(cpu_s "$DPID")
	ids=$(queue_runs "$v" "$n")
	read -r lo hi <<<"$ids"
	wait_for 3600 steps_pending "$v" "$lo" "$hi" || die "runs $lo..$hi ($v) not all pending in an hour"
	c1=$(cpu_s "$DPID")
	hwm=$(status_kb "$DPID" VmHWM)
	daemon_stop
	read -r -a p <<<"$(event_span "$v" "$lo" "$hi" pending)"
	read -r -a q <<<"$(event_span "$v" "$lo" "$hi" submitting)"
	span=$(sub "${p[2]}" "${q[1]}")
	scancel -u "$BUSER"
	sql "$v" "update steps set state = 'cancelled', ended_at = now() where run_id between $lo and $hi;
		update runs set state = 'cancelled', ended_at = now() where id between $lo and $hi" >/dev/null
	part_state UP
	echo "$tag v=$v runs=$lo..$hi cpu=$(sub "$c1" "$c0") pending_n=${p[0]} submit_span=$span" \
		"submit_rate=$(div "${p[0]}" "$span" %.1f) hwm_kb=$hwm load=$(load | tr ' ' /)"
}

# batch V N TAG: N runs through build V; prints "TAG key=value ..."
batch() {
	local v=$1 n=$2 tag=$3 ids lo hi c0 c1 t0 t1 p q span hwm
	daemon_start "$v"
	c0=$(cpu_s "$DPID")
	t0=$(date +%s.%N)
	ids=$(queue_runs "$v" "$n")
	read -r lo hi <<<"$ids"
	wait_for 1800 runs_ended "$v" "$lo" "$hi" || die "runs $lo..$hi ($v) did not end in 30 min"
	t1=$(date +%s.%N)
	c1=$(cpu_s "$DPID")
	hwm=$(status_kb "$DPID" VmHWM)
	daemon_stop
	read -r -a p <<<"$(event_span "$v" "$lo" "$hi" pending)"
	read -r -a q <<<"$(event_span "$v" "$lo" "$hi" submitting)"
	span=$(sub "${p[2]}" "${q[1]}")
	echo "$tag v=$v runs=$lo..$hi ok=$(sql "$v" "select count(*) from runs where id between $lo and $hi and state = 'succeeded'")" \
		"wall=$(sub "$t1" "$t0") cpu=$(sub "$c1" "$c0") pending_n=${p[0]} submit_span=$span" \
		"submit_rate=$(div "${p[0]}" "$span" %.1f) hwm_kb=$hwm" \
		"job_maxrss_kb=$(find "$WORK/spool-$v" -path "*/run-*/one/attempt-1/maxrss.kb" -newermt "@${t0%.*}" \
			-exec cat {} + 2>/dev/null | sort -g | tail -1)" \
		"load=$(load | tr ' ' /)"
}

slurm_rate() { # slurm_rate TAG: held, as held()
	local line
	part_state DOWN
	line=$("$WORK/snap-new/lib/rooflined/bench/engine-submit" "$BUSER" "$PART" "$RUNS" "$1")
	scancel -u "$BUSER"
	part_state UP
	echo "$1 v=slurm submit_rate=$(sed -E 's/.*\(([0-9.]+) jobs\/s\).*/\1/' <<<"$line") load=$(load | tr ' ' /) ($line)"
}

part_a() {
	local r k order line lines=() s rate
	report ""
	report "## A. submission, held (partition down): $RUNS jobs, Slurm alone and through each build, $ROUNDS rounds"
	for ((r = 1; r <= ROUNDS; r++)); do
		# rotate the order: slurm base new, base new slurm, new slurm base
		order=(slurm base new slurm base new)
		order=("${order[@]:$(((r - 1) % 3)):3}")
		for k in "${order[@]}"; do
			settle
			if [[ $k == slurm ]]; then
				line=$(slurm_rate "a$r")
			else
				line=$(held "$k" "$RUNS" "a$r")
			fi
			echo "$line" >>"$OUT/part-a.txt"
			say "$line"
			lines+=("$line")
		done
	done
	for k in slurm base new; do
		local sel=()
		for line in "${lines[@]}"; do if [[ $line == *" v=$k "* ]]; then sel+=("$line"); fi; done
		report "$(printf '%-6s' "$k") jobs/s: $(med_of submit_rate "${sel[@]}")"
		[[ $k == slurm ]] || report "       daemon CPU per batch (s): $(med_of cpu "${sel[@]}"); VmHWM kB: $(field hwm_kb "${sel[@]}" | words)"
	done
	report "ratio to Slurm's rate of the same round:"
	for ((r = 1; r <= ROUNDS; r++)); do
		s=$(printf '%s\n' "${lines[@]}" | awk -v t="a$r" '$1 == t && / v=slurm /' | sed -nE 's/.* submit_rate=([^ ]*).*/\1/p')
		rate=""
		for k in base new; do
			rate+="$k $(div "$(printf '%s\n' "${lines[@]}" | awk -v t="a$r" -v k="v=$k" '$1 == t && $2 == k' |
				sed -nE 's/.* submit_rate=([^ ]*).*/\1/p')" "$s" %.3f)  "
		done
		report "  round $r (Slurm $s jobs/s): $rate"
	done
}

# ---- B: memory at M tracked jobs -------------------------------------------------------
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

part_b() {
	local v ids lo hi p q line
	report ""
	report "## B. $TRACKED jobs tracked (partition down), each build in turn"
	for v in "${VARIANTS[@]}"; do
		settle
		part_state DOWN
		daemon_start "$v"
		ids=$(queue_runs "$v" "$TRACKED")
		read -r lo hi <<<"$ids"
		wait_for 3600 steps_pending "$v" "$lo" "$hi" || die "runs $lo..$hi ($v) not all pending in an hour"
		read -r -a p <<<"$(event_span "$v" "$lo" "$hi" pending)"
		read -r -a q <<<"$(event_span "$v" "$lo" "$hi" submitting)"
		local hwm_filled
		hwm_filled=$(status_kb "$DPID" VmHWM)
		churn_start
		sleep "$CHURN_S"
		churn_stop
		line="b v=$v tracked=$TRACKED slurm_jobs=$(slurm_job_count) submit_rate_held=$(div "${p[0]}" "$(sub "${p[2]}" "${q[1]}")" %.1f)"
		line+=" hwm_when_all_pending_kb=$hwm_filled hwm_kb=$(status_kb "$DPID" VmHWM) rss_kb=$(status_kb "$DPID" VmRSS) load=$(load | tr ' ' /)"
		daemon_stop
		echo "$line" >>"$OUT/part-b.txt"
		report "$line"
		scancel -u "$BUSER"
		part_state UP
	done
}

# ---- H: memory as history grows -------------------------------------------------------------
add_history() { # add_history V COUNT
	sql "$1" "with r as (insert into runs (pipeline_name, owner, yaml, state, submitted_at,
	       started_at, ended_at, spool_dir) select 'history', '$BUSER', 'name: history',
	       'succeeded', now() - g * interval '1 minute', now() - g * interval '1 minute',
	       now() - g * interval '1 minute', '/nonexistent' from generate_series(1, $2) g
	       returning id), s as (insert into steps (run_id, step_id, plugin, on_daemon,
	       state, attempt, started_at, ended_at) select id, 'one', 'smoke', false,
	       'succeeded', 1, now(), now() from r returning id)
	     insert into step_events (step, state, attempt) select id, st, 1 from s,
	       unnest(array['submitting', 'pending', 'succeeded']) st" >/dev/null
	sql "$1" "analyze runs, steps, step_events" >/dev/null
}

part_h() {
	local h v line="" have n=$H_RUNS
	report ""
	report "## H. memory with history: per build, a fresh daemon runs $n one-step runs"
	for h in $HIST; do
		for v in "${VARIANTS[@]}"; do
			have=$(sql "$v" "select count(*) from runs")
			if ((h > have)); then add_history "$v" $((h - have)); fi
		done
		for v in "${VARIANTS[@]}"; do
			settle
			line=$(batch "$v" "$n" "h$h")
			line+=" runs_in_db=$(sql "$v" "select count(*) from runs")"
			echo "$line" >>"$OUT/part-h.txt"
			report "$line"
		done
	done
}

setup
for ((k = 0; k < ${#PARTS}; k++)); do
	case ${PARTS:k:1} in
	A) part_a ;;
	B) part_b ;;
	H) part_h ;;
	*) die "unknown part '${PARTS:k:1}' (A, B, H)" ;;
	esac
done
report ""
report "# load at end $(load); raw results in $OUT"
