#!/bin/bash
# bench/soak.sh - runs under a random schedule of faults, then the
# invariants checked from the database, Slurm and the spool (issue 26).
#
# Two rooflined (an active one and its standby) on a libpq multi-host string
# over a PostgreSQL primary and its synchronous streaming replica, the spool
# on a tmpfs of its own, a notify hook; SOAK_RUNS runs (smoke pipelines with
# retries, and kernel-abc replays of recorded captures) queued by several
# users at random moments while faults are injected at random: kill -9 of
# the active daemon (the standby takes over; the killed one comes back as
# the standby), the PostgreSQL primary killed and the replica promoted (then
# failed back and a new replica made), a PostgreSQL restart, a node killed
# and started again, a slurmctld restart, the spool full for a while, a
# notify hook that hangs.  When every run has ended (or SOAK_DEADLINE s
# have passed) it checks:
#   - every run is terminal (succeeded, failed, cancelled);
#   - each attempt's records are ingested exactly once: for every succeeded
#     step, the database holds the records of its last attempt only, as many
#     as that attempt's records.tsv has lines;
#   - no attempt was marked submitting twice, no Slurm job name
#     (rl.<step>.<attempt>) appears twice in Slurm, no job of ours is left
#     pending or running;
#   - no finding twice (the open-findings index), no notification delivered
#     twice (the hook's log);
#   - no file or directory in the spool is readable by another user (group or
#     other read permission on anything of a run).
# It prints the faults injected by kind, the runs by state, the violations
# and the takeover times (standby daemon, PostgreSQL failover: median and
# maximum), and exits 1 when there was a violation.
#
#   BENCH_SMOKE=1   a short version (about a dozen runs, three faults) for
#                   make check (tests/integration/soak-smoke.t)
#   SOAK_RUNS       runs to queue (default 220; smoke 12)
#   SOAK_SEED       the random schedule's seed (default: the time)
#   SOAK_DEADLINE   seconds after which no fault is injected and the wait
#                   for the runs ends (default 1500; smoke 50)
#   BENCH_VARIANT   the build to run (default debug)
#   BENCH_SMOKE_DIR where its files go (default var/soak.PID)
#
# It needs root and a running local cluster (scripts/cluster start); it puts
# back what it changed: PostgreSQL on its port (pg-failback), slurmctld and
# the nodes running, the tmpfs unmounted.
set -uo pipefail

PROG=soak
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SMOKE=${BENCH_SMOKE:-0}
if ((SMOKE)); then
	RUNS=${SOAK_RUNS:-12}
	DEADLINE=${SOAK_DEADLINE:-50}
	KINDS=(daemon-kill spool-full notify-hang)
else
	RUNS=${SOAK_RUNS:-220}
	DEADLINE=${SOAK_DEADLINE:-1500}
	KINDS=(daemon-kill pg-failover pg-restart node-kill ctld-restart spool-full notify-hang)
fi
SEED=${SOAK_SEED:-$(date +%s)}
RANDOM=$SEED
VARIANT=${BENCH_VARIANT:-debug}
BIN=$REPO/build/$VARIANT/bin
CLUSTER=$REPO/scripts/cluster
WORK=${BENCH_SMOKE_DIR:-$REPO/var/soak.$$}
export LSAN_OPTIONS=${LSAN_OPTIONS:-detect_leaks=0}

say() { printf '%s: %s\n' "$PROG" "$*"; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 2; }
((EUID == 0)) || die "needs root (it drives the local cluster)"
[[ -x $BIN/rooflined ]] || die "no $BIN/rooflined: make VARIANT=$VARIANT"
"$CLUSTER" status >/dev/null 2>&1 || die "no running cluster: scripts/cluster start"
eval "$("$CLUSTER" env)"
mkdir -p "$WORK"
chmod 0755 "$WORK"
T_START=$SECONDS

# ---- the stage ---------------------------------------------------------------------
SOCK=$PGHOST
PRIMARY_PORT=$PGPORT
USERS=(alice bob carol)
for u in "${USERS[@]}" rlfacility; do
	"$CLUSTER" add-user "$u" >/dev/null || die "cannot add user $u"
done
"$CLUSTER" pg-replica start --sync >"$WORK/cluster.log" 2>&1 || die "no replica: $(tail -3 "$WORK/cluster.log")"
REPLICA_PORT=$(sed -n 's/^pgreplica=//p' "$ROOFLINE_VAR/ports")
export PGHOST="$SOCK,$SOCK" PGPORT="$PRIMARY_PORT,$REPLICA_PORT" PGTARGETSESSIONATTRS=read-write
CONNINFO="host=$SOCK,$SOCK port=$PRIMARY_PORT,$REPLICA_PORT dbname=rooflined target_session_attrs=read-write"
MNT=$WORK/spoolfs
mkdir -p "$MNT"
mount -t tmpfs -o size=256m,mode=0711 rooflined-soak-spool "$MNT" || die "cannot mount a tmpfs on $MNT"
SPOOL=$MNT/spool
HOOKDIR=$WORK/hook
mkdir -p "$HOOKDIR" "$WORK/facility"
chmod 1777 "$HOOKDIR"
cat >"$WORK/hook.sh" <<EOF
#!/bin/sh
# the soak's notify hook: says it started, hangs while $HOOKDIR/hang exists
echo "start \$ROOFLINE_FINDING_ID" >>$HOOKDIR/log
cat >/dev/null
if [ -e $HOOKDIR/hang ]; then sleep 600; fi
echo "done \$ROOFLINE_FINDING_ID" >>$HOOKDIR/log
EOF
chmod 0755 "$WORK/hook.sh"
for d in a b; do
	cat >"$WORK/rooflined-$d.yaml" <<EOF
database: "$CONNINFO"
spool_dir: $SPOOL
plugin_dir: $REPO/build/$VARIANT/plugins
pipeline_dir: $WORK/facility
job_program: $BIN/roofline-job
facility_user: rlfacility
pidfile: $WORK/rooflined-$d.pid
poll_interval: 500ms
retry_backoff: 1s
kill_grace: 2s
notify_command: $WORK/hook.sh
notify_timeout: 2s
notify_tries: 2
notify_backoff: 1s
log_level: info
log: stderr
EOF
done
# Each daemon under a supervisor that starts it again a second after it
# ended, as systemd's Restart= does for the packaged unit; its pid is in its
# pid file.
declare -A SUPER=()
start_daemon() { # start_daemon a|b
	(
		while [[ ! -e $WORK/stop ]]; do
			"$BIN/rooflined" --foreground --config "$WORK/rooflined-$1.yaml" >>"$WORK/rooflined-$1.log" 2>&1
			sleep 1
		done
	) &
	SUPER[$1]=$!
}
dpid() { cat "$WORK/rooflined-$1.pid" 2>/dev/null; }
psql_q() { psql -X -q -t -A -d rooflined -c "$1" 2>/dev/null; }
# the active daemon's name (a or b), "" when none leads
active() {
	local app
	app=$(psql_q "select application_name from pg_stat_activity where pid = rooflined_daemon_pid()")
	[[ $app =~ pid\ ([0-9]+)\  ]] || return 0
	[[ ${BASH_REMATCH[1]} == "$(dpid a)" ]] && echo a
	[[ ${BASH_REMATCH[1]} == "$(dpid b)" ]] && echo b
	return 0
}
leader_backend() { psql_q "select coalesce(rooflined_daemon_pid(), 0)"; }
start_daemon a
for ((i = 0; i < 300; i++)); do [[ $(active) == a ]] && break; sleep 0.1; done
[[ $(active) == a ]] || die "the first daemon does not lead: $(tail -5 "$WORK/rooflined-a.log")"
start_daemon b
for ((i = 0; i < 100; i++)); do grep -q 'standby: the active' "$WORK/rooflined-b.log" && break; sleep 0.1; done
for u in "${USERS[@]}"; do
	psql_q "do \$\$ begin if not exists (select 1 from pg_roles where rolname = '$u') then create role $u login in role roofline_users; end if; end \$\$" >/dev/null
done

# ---- the workload ----------------------------------------------------------------
# smoke-like runs with retries (a node's death takes their job), and replays
printf 'name: soak-smoke\nslurm: { time: "00:03:00" }\nsteps:\n%s\n%s\n%s\n' \
	'  - { id: a, plugin: smoke, retries: 3, with: { sleep: 1, records: 20 } }' \
	'  - { id: b, plugin: smoke, retries: 3, needs: [a], with: { records: 5 } }' \
	'  - { id: c, plugin: smoke, retries: 3, needs: [a, b], on: daemon }' >"$WORK/soak-smoke.yaml"
sed -e 's/^name: kernel-abc-replay/name: soak-replay/' -e 's/^\(    plugin: [a-z-]*\)$/\1\n    retries: 3/' \
	"$REPO/pipelines/kernel-abc-replay.yaml" >"$WORK/soak-replay.yaml"
chmod 0644 "$WORK"/*.yaml
submit() { # submit USER: one run, its id on stdout
	local u=$1
	if ((RANDOM % 8 == 0)); then
		runuser -u "$u" -- env -u PGUSER PATH="$PATH" SLURM_CONF="$SLURM_CONF" PGHOST="$PGHOST" PGPORT="$PGPORT" \
			PGDATABASE=rooflined PGTARGETSESSIONATTRS=read-write LSAN_OPTIONS="$LSAN_OPTIONS" \
			"$BIN/roofline" submit --attach "$REPO/tests/fixtures/ert/h100-quick.tsv" \
			--attach "$REPO/tests/fixtures/ncu/kernel_abc.raw.csv" "$WORK/soak-replay.yaml" 2>>"$WORK/submit.err"
	else
		runuser -u "$u" -- env -u PGUSER PATH="$PATH" SLURM_CONF="$SLURM_CONF" PGHOST="$PGHOST" PGPORT="$PGPORT" \
			PGDATABASE=rooflined PGTARGETSESSIONATTRS=read-write LSAN_OPTIONS="$LSAN_OPTIONS" \
			"$BIN/roofline" submit "$WORK/soak-smoke.yaml" 2>>"$WORK/submit.err"
	fi
}
# the submitter: RUNS runs at random moments (a few a second), in the background
(
	RANDOM=$((SEED + 1))
	for ((n = 0; n < RUNS; n++)); do
		u=${USERS[RANDOM % ${#USERS[@]}]}
		for ((try = 0; try < 20; try++)); do # a submission that meets a PostgreSQL outage (a failover and its failback take up to half a minute)
			id=$(submit "$u") && [[ $id =~ ^[0-9]+$ ]] && break
			sleep 2
		done
		echo "${id:-none} $u" >>"$WORK/runs"
		if ((SMOKE)); then sleep "0.$((RANDOM % 10))"; else sleep "$((RANDOM % 3)).$((RANDOM % 10))"; fi
		((SECONDS - T_START < DEADLINE)) || break
	done
	echo end >>"$WORK/runs"
) &
SUBMITTER=$!

# ---- the faults ------------------------------------------------------------------
declare -A FAULTS=()
TAKEOVER=() # seconds: the standby leads after kill -9 of the active one
PGFAIL=()   # seconds: the daemon leads on the promoted replica after pg-kill
elapsed_since() { echo "$(date +%s.%N) - $1" | bc; }
# wait_leader OLD_BACKEND: seconds until a backend other than OLD holds the lock
wait_leader() {
	local t0=$1 old=$2 cur
	for ((i = 0; i < 600; i++)); do
		cur=$(leader_backend)
		if [[ $cur =~ ^[0-9]+$ && $cur != 0 && $cur != "$old" ]]; then
			elapsed_since "$t0"
			return 0
		fi
		sleep 0.05
	done
	echo 30
}
fault_daemon_kill() {
	local who old t0
	who=$(active)
	[[ -n $who ]] || return 1
	old=$(leader_backend)
	t0=$(date +%s.%N)
	kill -KILL "$(dpid "$who")" # its supervisor starts it again, as the standby
	TAKEOVER+=("$(wait_leader "$t0" "$old")")
}
fault_pg_failover() {
	local t0 old
	old=$(leader_backend)
	"$CLUSTER" pg-kill >>"$WORK/cluster.log" 2>&1 || return 1
	t0=$(date +%s.%N)
	"$CLUSTER" pg-replica promote >>"$WORK/cluster.log" 2>&1 || return 1
	PGFAIL+=("$(wait_leader "$t0" "$old")")
	sleep 2
	# back to the usual port, and a new replica
	"$CLUSTER" pg-failback >>"$WORK/cluster.log" 2>&1 || return 1
	"$CLUSTER" pg-replica start --sync >>"$WORK/cluster.log" 2>&1
}
fault_pg_restart() { "$CLUSTER" restart-pg >>"$WORK/cluster.log" 2>&1; }
fault_node_kill() {
	local node=rl-node$((1 + RANDOM % 4))
	"$CLUSTER" node-kill "$node" >>"$WORK/cluster.log" 2>&1 || return 1
	sleep $((2 + RANDOM % 4))
	"$CLUSTER" node-start "$node" >>"$WORK/cluster.log" 2>&1
}
fault_ctld_restart() {
	"$CLUSTER" ctld-stop >>"$WORK/cluster.log" 2>&1 || return 1
	sleep $((1 + RANDOM % 3))
	"$CLUSTER" ctld-start >>"$WORK/cluster.log" 2>&1
}
fault_spool_full() {
	dd if=/dev/zero of="$MNT/fill" bs=1M >/dev/null 2>&1
	sleep $((2 + RANDOM % 4))
	rm -f "$MNT/fill"
}
# a finding of a run that exists, whose hook hangs until the daemon kills it
fault_notify_hang() {
	local run
	run=$(psql_q "select max(id) from runs")
	[[ $run =~ ^[0-9]+$ ]] || return 1
	touch "$HOOKDIR/hang"
	psql_q "insert into findings (scope, subject, measure, pipeline_name, class, severity, owner,
		facility, first_run, last_run, first_night, last_night)
		values ('kernel', 'soak-$run-$RANDOM', 'fp64', 'soak-smoke', 'own history', 'warning',
		'alice', false, $run, $run, current_date, current_date)" >/dev/null || return 1
	sleep 5
	rm -f "$HOOKDIR/hang"
}
while ((SECONDS - T_START < DEADLINE)); do
	sleep $((2 + RANDOM % (SMOKE ? 3 : 8)))
	((SECONDS - T_START < DEADLINE)) || break
	kind=${KINDS[RANDOM % ${#KINDS[@]}]}
	if ((SMOKE)); then # each of the three once
		kind=${KINDS[${#FAULTS[@]} % ${#KINDS[@]}]}
		((${#FAULTS[@]} < ${#KINDS[@]})) || break
	fi
	say "$((SECONDS - T_START)) s: $kind"
	if "fault_${kind//-/_}"; then
		FAULTS[$kind]=$((${FAULTS[$kind]:-0} + 1))
	else
		say "  $kind could not be injected"
	fi
	grep -q '^end$' "$WORK/runs" 2>/dev/null && (($(psql_q "select count(*) from runs where state in ('queued', 'running')") == 0)) && break
done
wait "$SUBMITTER"
# ---- the end: every run ends (or the deadline passes) -----------------------------------
rm -f "$HOOKDIR/hang" "$MNT/fill"
"$CLUSTER" ctld-start >/dev/null 2>&1
for n in 1 2 3 4; do "$CLUSTER" node-start "rl-node$n" >/dev/null 2>&1; done
mapfile -t IDS < <(awk '$1 ~ /^[0-9]+$/ { print $1 }' "$WORK/runs")
IDLIST=$(IFS=,; echo "${IDS[*]:-0}")
end=$((SECONDS + (SMOKE ? 60 : 600)))
while ((SECONDS < end)); do
	left=$(psql_q "select count(*) from runs where id in ($IDLIST) and state in ('queued', 'running')")
	[[ $left == 0 ]] && break
	sleep 1
done
# notifications still due
sleep 3
touch "$WORK/stop"
for d in a b; do kill -TERM "$(dpid "$d")" 2>/dev/null; done
wait "${SUPER[a]}" "${SUPER[b]}" 2>/dev/null

# ---- the invariants -----------------------------------------------------------------
VIOL=0
violation() { VIOL=$((VIOL + 1)); say "VIOLATION: $*"; }
n=$(psql_q "select count(*) from runs where id in ($IDLIST) and state not in ('succeeded', 'failed', 'cancelled')")
((n == 0)) || violation "$n run(s) not terminal"
((${#IDS[@]} == RUNS)) || violation "only ${#IDS[@]} of $RUNS runs were queued ($(grep -c none "$WORK/runs") submissions failed)"
# records exactly once: the database's per step and attempt, against the files
psql_q "select s.id, s.attempt, r.spool_dir || '/' || s.step_id || case when s.node = '' then '' else '@' || s.node end
	|| '/attempt-' || s.attempt, (select count(*) from step_records x where x.step = s.id and x.attempt = s.attempt),
	(select count(*) from step_records x where x.step = s.id and x.attempt <> s.attempt)
	from steps s join runs r on r.id = s.run_id where s.run_id in ($IDLIST) and s.state = 'succeeded'" |
	while IFS='|' read -r step attempt dir got other; do
		want=$(wc -l <"$dir/records.tsv" 2>/dev/null || echo missing)
		[[ $got == "$want" && $other == 0 ]] ||
			echo "step $step attempt $attempt: $got records in the database ($other of other attempts), $want in $dir/records.tsv"
	done >"$WORK/records.bad"
[[ -s $WORK/records.bad ]] && violation "records not ingested exactly once: $(wc -l <"$WORK/records.bad") step(s), e.g. $(head -1 "$WORK/records.bad")"
n=$(psql_q "select count(*) from (select e.step, e.attempt from step_events e join steps s on s.id = e.step
	where s.run_id in ($IDLIST) and e.state = 'submitting' group by 1, 2 having count(*) > 1) d")
((n == 0)) || violation "$n attempt(s) marked submitting twice"
ours="^rl\\.($(psql_q "select string_agg(s.id::text, '|') from steps s where s.run_id in ($IDLIST)"))\\."
dup=$(squeue -h -t all -o %j 2>/dev/null | grep -E "$ours" | sort | uniq -d | head -3)
[[ -z $dup ]] || violation "Slurm job name(s) submitted twice: $dup"
left=$(squeue -h -t pending,running -o %j 2>/dev/null | grep -cE "$ours")
((left == 0)) || violation "$left Slurm job(s) of ours left"
n=$(psql_q "select count(*) from (select 1 from findings where state <> 'resolved' group by scope, subject, measure, pipeline_name having count(*) > 1) d")
((n == 0)) || violation "$n finding(s) twice"
dupn=$(awk '$1 == "done" { print $2 }' "$HOOKDIR/log" 2>/dev/null | sort | uniq -d | head -3)
[[ -z $dupn ]] || violation "notification(s) delivered twice: $dupn"
readable=$(find "$SPOOL" -mindepth 1 \( -perm -004 -o -perm -040 \) 2>/dev/null | head -3)
[[ -z $readable ]] || violation "readable by another user: $readable"

# ---- the figures --------------------------------------------------------------------
stats() { # stats VALUES...: "median M s, max X s (n=N)"
	(($#)) || { echo "none"; return; }
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "median %.2f s, max %.2f s (n=%d)\n", m, v[NR], NR }'
}
echo "soak: seed $SEED, $RUNS runs asked, $((SECONDS - T_START)) s"
printf 'faults:'
for k in "${KINDS[@]}"; do printf ' %s=%s' "$k" "${FAULTS[$k]:-0}"; done
echo
echo "runs: $(psql_q "select string_agg(state || '=' || n, ' ' order by state) from (select state, count(*) n from runs where id in ($IDLIST) group by 1) d") (of ${#IDS[@]} queued; $(psql_q "select count(*) from runs where id in ($IDLIST) and pipeline_name = 'soak-replay'") replays; users ${USERS[*]})"
echo "attempts: $(psql_q "select count(*) from steps where run_id in ($IDLIST)") steps, $(psql_q "select coalesce(sum(attempt), 0) from steps where run_id in ($IDLIST)") attempts, $(psql_q "select count(*) from step_records where run_id in ($IDLIST)") records"
echo "notifications: $(cat "$HOOKDIR/log" 2>/dev/null | grep -c '^start') hook runs, $(cat "$HOOKDIR/log" 2>/dev/null | grep -c '^done') delivered"
echo "takeover (standby after kill -9): $(stats "${TAKEOVER[@]}")"
echo "takeover (PostgreSQL: daemon leads on the promoted replica): $(stats "${PGFAIL[@]}")"
echo "violations: $VIOL"

# ---- put back what it changed ---------------------------------------------------------
"$CLUSTER" pg-replica stop >/dev/null 2>&1
umount -l "$MNT" 2>/dev/null
[[ -n ${BENCH_SMOKE_DIR:-} ]] || say "files in $WORK"
((VIOL == 0))
