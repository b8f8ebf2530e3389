#!/bin/bash
# bench/fanout-bench.sh - the fan-out benchmark (issue 10): `nodes: each`
# over the 4-node local cluster with many runs queued at once.  A benchmark,
# not a test: it prints what it measured and checks nothing.
#
#   S  Slurm's own rate for the same jobs through the same API: RUNS x nodes
#      node-pinned jobs (job i on node i mod 4) submitted back to back through
#      daemon/slurm.c's slurm_submit() (bench/engine-submit)
#   D  RUNS runs queued in one statement, each a pipeline of one Slurm step
#      fanned out to every node (`nodes: each`, smoke plugin) and one daemon
#      step after it (smoke, on: daemon, needs the fanned-out step):
#        - the daemon's submission rate: jobs from the first 'submitting'
#          event to the last job's 'pending' event (the one that recorded
#          its submission, not a later change of its pending reason; every
#          job pinned to its node), and its ratio to S
#        - from the last job's end (the newest exit.tsv of the Slurm steps) to
#          the last daemon step's end (its 'succeeded' event; and its own
#          exit.tsv), and from the queueing to the last run's end
#        - the daemon's CPU seconds over the batch, the load average
#
# The jobs are held while they are submitted (HOLD=1, the default): the
# benchmark's partition is set DOWN (slurmctld accepts jobs and starts none)
# before S's first or D's first submission and UP again after the last, so
# that both rates are of the submission alone.  On a production cluster the
# jobs run on other hosts than slurmctld; here the nodes are namespaces on
# the same cores, and jobs started during the window take the CPU slurmctld
# answers with: D's jobs (roofline-job, and the runs' fan-in steps forked by
# the daemon once their node jobs end) are heavier than S's (`true`), so the
# ratio measured with jobs running follows the jobs' weight and the load
# more than the daemon (docs/benchmarks.md, "Tenth pass").  HOLD=0 measures
# with the jobs starting as they are submitted, as before 2026-11-28.
#
# With -r ROUNDS, S and D alternate ROUNDS times (S D, D S, S D, ...: each
# goes first as often), the daemon staying up: the machine's load moves
# more between two minutes than the code does (docs/fleet.md), so each
# round's ratio compares an S and a D measured next to each other, and the
# median of the rounds' ratios is the figure.
#
# Runs are queued by inserting RUNS rows into `runs` in one statement as the
# benchmark user's own PostgreSQL role (the insert `roofline submit` makes),
# so that they are queued at once rather than at the CLI's pace.
#
# Usage: bench/fanout-bench.sh [-n RUNS] [-r ROUNDS] [-p POLL] [-o DIR]
#   -n  runs queued at once (default 250: 1,000 jobs on 4 nodes)
#   -r  rounds of S and D (default 1)
#   -p  the daemon's poll_interval (default 2s, rooflined's default)
#   -o  where raw results go (default /tmp/fanout-bench.DATE)
# Environment: ROOFLINE_VAR (default <repo>/var/fanout-bench: the private
# cluster of ROOFLINE_NODES=4 nodes, removed at the end unless KEEP=1; one
# already running there is used, bench/lib.sh).  Needs root.  BENCH_VARIANT
# names another build than release.  SUBMIT_THREADS sets the daemon's
# submit_threads (default: the daemon's, 4).  HOLD=0: the jobs run while
# they are submitted (above).
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): defaults -n 2 -r 2 -p 1s, -o
# $BENCH_SMOKE_DIR (else a new temporary directory).
set -euo pipefail

PROG=fanout-bench
S_RATE=0 D_RATE=0
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=250 POLL=2s ROUNDS=1 HOLD=${HOLD:-1}
[[ $HOLD == [01] ]] || { echo "$PROG: error: HOLD is 1 or 0, not '$HOLD'" >&2; exit 2; }
JOBS_WHILE=$( ((HOLD)) && echo "jobs held while submitted" || echo "jobs running")
OUT=/tmp/fanout-bench.$(date +%Y%m%d-%H%M%S)
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then
	RUNS=2 POLL=1s ROUNDS=2
	OUT=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/fanout-bench-smoke.XXXXXX)}
fi
while getopts n:r:p:o:h opt; do
	case $opt in
	n) RUNS=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	p) POLL=$OPTARG ;;
	o) OUT=$OPTARG ;;
	h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) exit 2 ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "$PROG: error: -r takes a number of rounds, not '$ROUNDS'" >&2; exit 2; }

export ROOFLINE_VAR=${ROOFLINE_VAR:-$REPO/var/fanout-bench}
export ROOFLINE_NODES=${ROOFLINE_NODES:-4}
VAR=$ROOFLINE_VAR
PART=fan
# An oversubscribed partition over the same nodes and no batch delay, so that
# the jobs start as fast as this machine can run them (the measure is the
# submission and the fan-in, not the jobs).
# (slurmctld keeps an ended job MinJobAge, 300 s: every round's jobs count)
export ROOFLINE_SLURM_EXTRA="MaxJobCount=$((RUNS * ROOFLINE_NODES * 4 * ROUNDS + 1000))
SchedulerParameters=batch_sched_delay=0
PartitionName=$PART Nodes=ALL OverSubscribe=FORCE:32 MaxTime=INFINITE State=UP"
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
DPID=

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
report() { printf '%s\n' "$*" | tee -a "$OUT/summary.txt"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", a - b }'; }
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.1f}" 'BEGIN { printf f "\n", b ? a / b : 0 }'; }

((EUID == 0)) || die "must run as root (it starts a private Slurm and PostgreSQL)"
[[ $VAR != "$REPO/var" ]] || die "ROOFLINE_VAR must not be the default cluster's $REPO/var"
mkdir -p "$OUT"

sql() { psql -X -q -t -A -v ON_ERROR_STOP=1 -c "$1"; }
as_user() {
	runuser -u "$BUSER" -- env -u PGUSER PATH="$PATH" SLURM_CONF="$SLURM_CONF" \
		PGHOST="$PGHOST" PGPORT="$PGPORT" PGDATABASE="$PGDATABASE" "$@"
}
wait_for() { # wait_for SECONDS CMD...
	local secs=$1 t0=$SECONDS
	shift
	until "$@"; do
		((SECONDS - t0 < secs)) || return 1
		sleep 0.5
	done
}
no_user_jobs() { [[ $(squeue -h -u "$BUSER" -t PD,R,CG,CF 2>/dev/null | wc -l) == 0 ]]; }
# hold_jobs DOWN|UP: with HOLD=1, the partition stops or resumes starting jobs
# (DOWN: slurmctld still accepts them, they wait with reason PartitionDown)
hold_jobs() {
	((HOLD)) || return 0
	scontrol update PartitionName="$PART" State="$1" || die "cannot set partition $PART $1"
}

cleanup() {
	local rc=$?
	set +e
	[[ -n ${SLURM_CONF:-} && -r ${SLURM_CONF:-} ]] && scancel -u "$BUSER" 2>/dev/null
	# a cluster this run did not start (ROOFLINE_VAR's) gets its partition back
	((HOLD)) && [[ -n ${SLURM_CONF:-} && -r ${SLURM_CONF:-} ]] &&
		scontrol update PartitionName="$PART" State=UP 2>/dev/null
	if [[ -n $DPID ]]; then
		kill -TERM "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
	fi
	[[ -f $DLOG ]] && cp "$DLOG" "$OUT/rooflined.log"
	bench_cluster_release
	say "raw results in $OUT"
	exit "$rc"
}

setup() {
	local b=build/$BENCH_VARIANT
	say "building (VARIANT=$BENCH_VARIANT)"
	make -s -C "$REPO" VARIANT="$BENCH_VARIANT" $b/bin/rooflined $b/bin/roofline $b/bin/roofline-job \
		$b/plugins/smoke.so engine-bench-tools >/dev/null
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	bench_cluster_start || die "cluster did not start"
	mapfile -t NODES < <(scontrol show hostnames "$(sinfo -h -p "$PART" -o '%N' | head -1)")
	# A copy of the binaries: others may rebuild build/release meanwhile.
	bench_snapshot smoke.so -- engine-submit
	bench_config "$POLL"
	[[ -z ${SUBMIT_THREADS:-} ]] || echo "submit_threads: $SUBMIT_THREADS" >>"$CONF"
	"$SNAP_SBIN/rooflined" --foreground --config "$CONF" >>"$DLOG" 2>&1 &
	DPID=$!
	wait_for 60 grep -qs "started (pid $DPID" "$DLOG" || die "rooflined did not start: $(tail -5 "$DLOG")"
	# roles are the superuser's to make (the daemon's role has no CREATEROLE)
	runuser -u postgres -- env PGUSER=postgres PGHOST="$PGHOST" PGPORT="$PGPORT" psql -X -q -t -A -d postgres -c "do \$\$ begin if not exists (select 1 from pg_roles where rolname = '$BUSER')
	     then create role $BUSER login in role roofline_users; end if; end \$\$" >/dev/null
	report "# fan-out benchmark, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- daemon common sql bench || echo '+local changes')"
	report "# machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(uname -r); $(sinfo -V); PostgreSQL $(sql 'show server_version')"
	report "# cluster: ${#NODES[@]} nodes (${NODES[*]}), partition $PART; runs $RUNS ($((RUNS * ${#NODES[@]})) jobs); poll_interval $POLL; submit_threads ${SUBMIT_THREADS:-4 (default)}; $JOBS_WHILE (HOLD=$HOLD); load at start $(load)"
}

# ---- S: Slurm's own rate, the same node-pinned jobs, the same call -------------------
slurm_rate() {
	local n=$((RUNS * ${#NODES[@]})) line
	hold_jobs DOWN
	line=$("$SNAP_BENCH/engine-submit" "$BUSER" "$PART" "$n" fb "$(IFS=,; echo "${NODES[*]}")")
	hold_jobs UP
	S_RATE=$(sed -n 's/.*(\([0-9.]*\) jobs\/s).*/\1/p' <<<"$line")
	echo "$line" >>"$OUT/engine-submit.txt"
	report "S  slurm_submit() alone, $n node-pinned jobs, $JOBS_WHILE: $line (load $(load))"
	wait_for 1800 no_user_jobs || die "Slurm's jobs did not finish in 30 min"
}

# ---- D: the daemon -------------------------------------------------------------------
PIPELINE="name: fanbench
slurm: { partition: $PART, time: \"00:05:00\", nodes: each }
steps:
  - { id: one, plugin: smoke, with: { records: 1 } }
  - { id: after, plugin: smoke, on: daemon, needs: [one] }
"
daemon_rate() {
	local lo hi t_queue c0 c1 l0 n_jobs sub_span last_job after_ok after_exit t_end
	l0=$(load)
	c0=$(cpu_s "$DPID")
	hold_jobs DOWN
	t_queue=$(date +%s.%N)
	read -r lo hi < <(echo "with i as (insert into runs (pipeline_name, yaml) select 'fanbench', :'yaml'
	      from generate_series(1, $RUNS) returning id) select min(id), max(id) from i;" |
		as_user psql -X -q -t -A -F' ' -v ON_ERROR_STOP=1 -v yaml="$PIPELINE" -f -)
	if ((HOLD)); then
		wait_for 3600 all_submitted "$lo" "$hi" || die "the jobs of runs $lo..$hi were not all submitted in an hour"
		hold_jobs UP
	fi
	wait_for 3600 runs_ended "$lo" "$hi" || die "runs $lo..$hi did not end in an hour"
	c1=$(cpu_s "$DPID")
	n_jobs=$(sql "select count(*) from steps where run_id between $lo and $hi and slurm_job_id is not null")
	# first 'submitting' .. last 'pending' of the Slurm steps: the 'pending'
	# event that recorded each attempt's submission (its first; a later one
	# of the same attempt is a change of Slurm's reason, "Slurm: Priority",
	# which the poll records under the same state), and for comparison with
	# the figures before 2026-11-27 the last 'pending' event of any kind
	sub_span=$(sql "with p as (select e.step, e.attempt, min(e.at) as at, max(e.at) as last_at from step_events e
		join steps s on s.id = e.step where s.run_id between $lo and $hi and not s.on_daemon and e.state = 'pending'
		group by 1, 2), f as (select min(e.at) as at from step_events e join steps s on s.id = e.step
		where s.run_id between $lo and $hi and not s.on_daemon and e.state = 'submitting')
		select extract(epoch from (select max(at) from p) - f.at), extract(epoch from (select min(at) from p)),
		extract(epoch from (select max(last_at) from p) - f.at) from f" | tr '|' ' ')
	last_job=$(find "$SPOOL" -path "*/one@*/attempt-*/exit.tsv" -printf '%T@\n' | sort -g | tail -1)
	after_ok=$(sql "select extract(epoch from max(e.at)) from step_events e join steps s on s.id = e.step
		where s.run_id between $lo and $hi and s.step_id = 'after' and e.state = 'succeeded'")
	after_exit=$(find "$SPOOL" -path "*/after/attempt-*/exit.tsv" -printf '%T@\n' | sort -g | tail -1)
	t_end=$(sql "select extract(epoch from max(e.at)) from step_events e join steps s on s.id = e.step where s.run_id between $lo and $hi")
	sql "select state, count(*) from runs where id between $lo and $hi group by 1" >"$OUT/run-states.txt"
	sql "select step_id, state, count(*) from steps where run_id between $lo and $hi group by 1, 2 order by 1, 2" >"$OUT/step-states.txt"
	read -r span first_pending span_any <<<"$sub_span"
	starts=$(sql "select extract(epoch from min(started_at)), extract(epoch from max(started_at)) from runs where id between $lo and $hi" | tr '|' ' ')
	read -r first_start last_start <<<"$starts"
	first_sub=$(sql "select extract(epoch from min(e.at)) from step_events e join steps s on s.id = e.step
		where s.run_id between $lo and $hi and e.state = 'submitting'")
	report "D  $RUNS runs queued at once: runs $(paste -sd' ' "$OUT/run-states.txt" | tr '|' ' '); $n_jobs node-pinned Slurm jobs; steps $(paste -sd',' "$OUT/step-states.txt" | tr '|' ' ')"
	report "   attempts marked 'submitting' more than once: $(sql "select count(*) from (select e.step, e.attempt from step_events e join steps s on s.id = e.step
		where s.run_id between $lo and $hi and e.state = 'submitting' group by 1, 2 having count(*) > 1) d"); steps with more than one attempt: $(sql "select count(*) from steps where run_id between $lo and $hi and attempt > 1")"
	report "   jobs not on the node they were pinned to (steps.exec_node <> steps.node): $(sql "select count(*) from steps where run_id between $lo and $hi and slurm_job_id is not null and exec_node is distinct from node")"
	report "   daemon submission: $n_jobs jobs in $(printf '%.3f' "$span") s (first 'submitting' to last 'pending') = $(div "$n_jobs" "$span") jobs/s; queued -> first 'pending' $(sub "$first_pending" "$t_queue") s"
	D_RATE=$(div "$n_jobs" "$span" %.4f)
	report "   (to the last 'pending' event of any kind, a reason change of a pending job included, the measure before 2026-11-27: $(printf '%.3f' "$span_any") s = $(div "$n_jobs" "$span_any") jobs/s)"
	report "   where the time before the first job goes: queued -> first run started $(sub "$first_start" "$t_queue") s, runs started (expanded over the nodes) in $(sub "$last_start" "$first_start") s = $(div "$RUNS" "$(sub "$last_start" "$first_start")") runs/s; queued -> first 'submitting' $(sub "$first_sub" "$t_queue") s"
	report "   last job's end (newest exit.tsv of a Slurm step) -> last daemon step's 'succeeded': $(sub "$after_ok" "$last_job") s (-> its own exit.tsv: $(sub "$after_exit" "$last_job") s)"
	report "   queued -> last run ended: $(sub "$t_end" "$t_queue") s; daemon CPU $(sub "$c1" "$c0") s, peak RSS $(awk '$1 == "VmHWM:" { printf "%.1f MiB", $2 / 1024 }' "/proc/$DPID/status") (RSS now $(awk '$1 == "VmRSS:" { printf "%.1f MiB", $2 / 1024 }' "/proc/$DPID/status")); load before $l0, after $(load)"
}
all_submitted() { # every node job of runs $1..$2 has its Slurm job id
	[[ $(sql "select count(*) from steps where run_id between $1 and $2 and not on_daemon
		and slurm_job_id is not null") == $((($2 - $1 + 1) * ${#NODES[@]})) ]]
}
runs_ended() {
	[[ $(sql "select count(*) from runs where id between $1 and $2 and
		state in ('succeeded', 'failed', 'cancelled')") == $(($2 - $1 + 1)) ]]
}

# ---- both, as slurmctld saw them: its SubmitTime of every job (1 s resolution) -------
# The jobs are still known (MinJobAge 300 s).  Gaps of 2 s or more split the
# submissions into bursts (the daemon starts at most a batch of runs per tick).
slurm_view() {
	squeue -h -t all -o '%j %V' >"$OUT/squeue-submit.txt"
	report "V  Slurm jobs of the daemon (rl.*) sharing a name, i.e. submitted twice: $(awk 'index($1, "rl.") == 1 { n[$1]++ } END { d = 0; for (k in n) if (n[k] > 1) d++; print d }' "$OUT/squeue-submit.txt")"
	# slurmctld's SubmitTime spans of S and D: of one round only
	((ROUNDS == 1)) || return 0
	local pfx what
	for pfx in fb rl; do
		what=$([[ $pfx == fb ]] && echo "slurm_submit() alone" || echo "rooflined")
		awk -v p="$pfx." -v w="$what" 'index($1, p) == 1 {
			cmd = "date -d " $2 " +%s"; cmd | getline t; close(cmd); print t }' "$OUT/squeue-submit.txt" |
			sort -n | awk -v w="$what" '
			NR == 1 { first = $1; b0 = $1; bn = 0 }
			NR > 1 && $1 - prev >= 2 { bursts = bursts sprintf(" %d jobs in %d s;", bn, prev - b0 + 1); b0 = $1; bn = 0 }
			{ prev = $1; bn++; n++ }
			END { if (n) { bursts = bursts sprintf(" %d jobs in %d s;", bn, prev - b0 + 1)
				printf "V  %s, slurmctld SubmitTime: %d jobs from first to last submission in %d s (%.1f jobs/s, 1 s resolution); bursts:%s\n", w, n, prev - first + 1, n / (prev - first + 1), bursts } }'
	done | tee -a "$OUT/summary.txt"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

setup
: >"$OUT/rounds.tsv"
for ((round = 1; round <= ROUNDS; round++)); do
	((ROUNDS == 1)) || report "== round $round of $ROUNDS: $( ((round % 2)) && echo "S, then D" || echo "D, then S")"
	if ((round % 2)); then
		slurm_rate
		daemon_rate
	else
		daemon_rate
		slurm_rate
	fi
	ratio=$(div "$D_RATE" "$S_RATE" %.2f)
	printf '%s\t%s\t%s\t%s\n' "$round" "$S_RATE" "$D_RATE" "$ratio" >>"$OUT/rounds.tsv"
	report "R  round $round: daemon $(printf '%.1f' "$D_RATE") jobs/s, slurm_submit() alone $S_RATE jobs/s: ratio $ratio x"
done
# the figure (night-scale.sh reads this line), one round or several
report "M  median of $ROUNDS round(s): daemon $(cut -f3 "$OUT/rounds.tsv" | median | xargs printf '%.1f') jobs/s, slurm_submit() alone $(cut -f2 "$OUT/rounds.tsv" | median | xargs printf '%.1f') jobs/s; ratio $(cut -f4 "$OUT/rounds.tsv" | median | xargs printf '%.2f') x (rounds: $(cut -f4 "$OUT/rounds.tsv" | paste -sd' '))"
slurm_view
report "# load at end $(load)"
