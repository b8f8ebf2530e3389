#!/bin/bash
# bench/chain-bench.sh - how fast dependents start (issue 9, item 5).  A
# benchmark, not a test: it prints what it measured and checks nothing.
#
#   C  one run of an N-step chain of trivial daemon steps (smoke, on: daemon,
#      each step needing the one before), for each poll interval given: wall
#      time from submission to the run's end (the database's own clocks),
#      seconds per step, and the daemon's CPU time.  A chain that waits for
#      the poll between two steps takes N x the interval; one woken by
#      SIGCHLD does not depend on it.
#   S  R runs of pipelines/smoke.yaml (two Slurm jobs and a daemon step each)
#      queued at once (one insert of R rows as the bench user, the insert
#      `roofline submit` makes): wall time from the first submission to the
#      last run's end, and the daemon's CPU time.
#
# Usage: bench/chain-bench.sh [-n STEPS] [-R RUNS] [-p "2s 10s"] [-x CS]
#   -n  steps in the chain (default 1000, the most a pipeline may have)
#   -R  smoke runs queued at once (default 100)
#   -p  poll intervals to run C with (default "2s 10s")
#   -x  parts to run (default CS)
# Environment: ROOFLINE_VAR (default <repo>/var/chain-bench: the private
# cluster, stopped and removed at the end unless KEEP=1; one already running
# there is used and left running, bench/lib.sh), ROOFLINE_NODES (the
# cluster's node count, as scripts/cluster).  Needs root; builds the release
# variant (BENCH_VARIANT).
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): defaults -n 3 -R 2 -p 1s, in
# seconds; it prints the same lines.
set -euo pipefail

PROG=chain-bench
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STEPS=1000 RUNS=100 POLLS="2s 10s" PARTS=CS
[[ ${BENCH_SMOKE:-0} != 1 ]] || STEPS=3 RUNS=2 POLLS=1s
while getopts n:R:p:x:h opt; do
	case $opt in
	n) STEPS=$OPTARG ;;
	R) RUNS=$OPTARG ;;
	p) POLLS=$OPTARG ;;
	x) PARTS=$OPTARG ;;
	h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) exit 2 ;;
	esac
done

say() { printf '%s: %s\n' "$PROG" "$*"; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
((EUID == 0)) || die "needs root"

export ROOFLINE_VAR=${ROOFLINE_VAR:-$REPO/var/chain-bench}
VAR=$ROOFLINE_VAR
DPID=
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
sql() { psql -X -q -t -A -v ON_ERROR_STOP=1 -c "$1"; }

# (the daemon's wait says 143: not this script's status, and set -e must not
# stop the release on it)
cleanup() {
	local rc=$?
	if [[ -n $DPID ]]; then
		kill -TERM "$DPID" 2>/dev/null || true
		wait "$DPID" 2>/dev/null || true
	fi
	bench_cluster_release
	exit "$rc"
}
trap cleanup EXIT

make -C "$REPO" -s VARIANT="$BENCH_VARIANT" all >/dev/null
bench_cluster_start || die "the cluster did not start"
bench_snapshot smoke.so

daemon_start() { # daemon_start POLL
	bench_config "$1" warning
	"$SNAP_SBIN/rooflined" --foreground --config "$CONF" >>"$DLOG" 2>&1 &
	DPID=$!
	for _ in $(seq 300); do
		[[ $(sql 'select rooflined_daemon_pid() is not null' 2>/dev/null) == t ]] && break
		kill -0 "$DPID" 2>/dev/null || die "rooflined exited: $(tail -5 "$DLOG")"
		sleep 0.1
	done
	# roles are the superuser's to make (the daemon's role has no CREATEROLE)
	runuser -u postgres -- env PGUSER=postgres PGHOST="$PGHOST" PGPORT="$PGPORT" psql -X -q -t -A -d postgres -c "do \$\$ begin if not exists (select 1 from pg_roles where rolname = '$BUSER') then create role $BUSER login in role roofline_users; end if; end \$\$" >/dev/null
}

daemon_stop() {
	kill -TERM "$DPID" && wait "$DPID" 2>/dev/null || true
	DPID=
}

as_user() { runuser -u "$BUSER" -- env -u PGUSER PATH="$PATH" SLURM_CONF="$SLURM_CONF" PGHOST="$PGHOST" PGPORT="$PGPORT" PGDATABASE="$PGDATABASE" "$@"; }

# wait_runs FIRST LAST: until every run from FIRST to LAST has ended.
wait_runs() {
	while [[ $(sql "select count(*) from runs where id between $1 and $2 and state in ('queued', 'running')") != 0 ]]; do
		sleep 1
	done
}

chain_yaml() {
	printf 'name: chain\nsteps:\n  - { id: s1, plugin: smoke, on: daemon }\n'
	for ((i = 2; i <= STEPS; i++)); do
		printf '  - { id: s%d, plugin: smoke, on: daemon, needs: [s%d] }\n' "$i" "$((i - 1))"
	done
}

say "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$REPO" rev-parse --short HEAD)"
if [[ $PARTS == *C* ]]; then
	chain_yaml >"$WORK/chain.yaml"
	chmod 0644 "$WORK/chain.yaml"
	for poll in $POLLS; do
		daemon_start "$poll"
		c0=$(cpu_s "$DPID")
		run=$(as_user "$SNAP_BIN/roofline" submit "$WORK/chain.yaml")
		wait_runs "$run" "$run"
		c1=$(cpu_s "$DPID")
		read -r state wall < <(sql "select state, extract(epoch from ended_at - submitted_at) from runs where id = $run" | tr '|' ' ')
		say "C chain of $STEPS daemon steps, poll_interval $poll: $state in $(printf '%.1f' "$wall") s ($(awk -v w="$wall" -v n="$STEPS" 'BEGIN { printf "%.1f", 1000 * w / n }') ms per step), daemon CPU $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }') s"
		daemon_stop
	done
fi
if [[ $PARTS == *S* ]]; then
	daemon_start 2s
	yaml=$(cat "$REPO/pipelines/smoke.yaml")
	c0=$(cpu_s "$DPID")
	first=$(echo "insert into runs (pipeline_name, yaml) select 'smoke', :'yaml' from generate_series(1, $RUNS) returning id;" |
		as_user psql -X -q -t -A -v ON_ERROR_STOP=1 -v yaml="$yaml" | head -1)
	last=$((first + RUNS - 1))
	wait_runs "$first" "$last"
	c1=$(cpu_s "$DPID")
	read -r ok wall p50 pmax < <(sql "select count(*) filter (where state = 'succeeded'), extract(epoch from max(ended_at) - min(submitted_at)), round(percentile_cont(0.5) within group (order by extract(epoch from ended_at - submitted_at))::numeric, 1), round(max(extract(epoch from ended_at - submitted_at)), 1) from runs where id between $first and $last" | tr '|' ' ')
	say "S $RUNS smoke runs queued at once ($((RUNS * 2)) Slurm jobs, $RUNS daemon steps) on $(sinfo -h -o '%D' | head -1) node(s): $ok succeeded in $(printf '%.1f' "$wall") s (each run's wall time, submission to end: median $p50 s, longest $pmax s), daemon CPU $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }') s"
	daemon_stop
fi
