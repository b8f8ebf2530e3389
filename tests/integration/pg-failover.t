#!/bin/bash
# PostgreSQL failover (issue 26 item 2): the daemon and the CLI on a libpq
# multi-host connection string (host=S,S port=PRIMARY,REPLICA
# target_session_attrs=read-write); a streaming replica (scripts/cluster
# pg-replica start); the primary killed (-9) and the replica promoted while
# runs are in flight: the daemon reconnects to the new primary, the runs
# finish, each attempt's records are there once, and the CLI follows.  At
# the end the primary's port takes over again (pg-failback) for the tests
# that come after.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
"$ROOT/scripts/cluster" pg-replica start >"$TEST_TMP/replica.out" 2>&1 ||
	bail_out "cannot start a replica: $(cat "$TEST_TMP/replica.out")"
failback() {
	daemon_stop
	"$ROOT/scripts/cluster" pg-failback >"$TEST_TMP/failback.out" 2>&1 ||
		{ "$ROOT/scripts/cluster" pg-replica stop; "$ROOT/scripts/cluster" restart-pg; } >/dev/null 2>&1
}
REPLICA_PORT=$(sed -n 's/^pgreplica=//p' "$ROOFLINE_VAR/ports")
PRIMARY_PORT=$PGPORT
SOCK=$PGHOST
daemon_setup
on_exit failback
sed -i "s|^database: .*|database: \"host=$SOCK,$SOCK port=$PRIMARY_PORT,$REPLICA_PORT dbname=rooflined target_session_attrs=read-write\"|" "$DAEMON_CONF"
# the CLI and psql: the same two servers, through libpq's environment
export PGHOST="$SOCK,$SOCK" PGPORT="$PRIMARY_PORT,$REPLICA_PORT" PGTARGETSESSIONATTRS=read-write
daemon_start
is "$(sql "select pg_is_in_recovery()")" f "the daemon and psql reach the primary through the two-host string"

printf 'name: pgf\nslurm: { time: "00:02:00" }\nsteps:\n%s\n%s\n%s\n' \
	'  - { id: a, plugin: smoke, with: { sleep: 3, records: 2 } }' \
	'  - { id: b, plugin: smoke, needs: [a], with: { records: 1 } }' \
	'  - { id: c, plugin: smoke, needs: [b], on: daemon }' >"$TEST_TMP/pgf.yaml"
chmod 0644 "$TEST_TMP/pgf.yaml"
runs=()
for i in 1 2 3; do runs+=("$(submit_as alice "$TEST_TMP/pgf.yaml")"); done
like "${runs[*]}" '^[0-9]+ [0-9]+ [0-9]+$' "three runs queued"
wait_for "[[ \$(sql \"select count(*) from steps where run_id = ${runs[0]} and state = 'running'\") -ge 1 ]]" 30
sleep 0.5 # the replica has replayed the running state

before=$(grep -c 'reconnected to PostgreSQL' "$DAEMON_LOG")
ok "the primary is killed (-9)" "$ROOT/scripts/cluster" pg-kill
ok "the replica is promoted" "$ROOT/scripts/cluster" pg-replica promote
t0=$(date +%s.%N)
end=$((SECONDS + 30))
until (($(grep -c 'reconnected to PostgreSQL' "$DAEMON_LOG") > before)) || ((SECONDS > end)); do sleep 0.05; done
reconnect_s=$(echo "$(date +%s.%N) - $t0" | bc)
note "the daemon reconnected $reconnect_s s after the promotion"
ok "the daemon reconnected to the new primary within 10 s ($reconnect_s s)" test "$(echo "$reconnect_s < 10" | bc)" = 1
is "$(sql "select pg_is_in_recovery()::text || ' ' || current_setting('port')")" "false $REPLICA_PORT" \
	"psql follows: the promoted replica takes writes"
ok "the daemon still leads: rooflined_daemon_pid() is its session on the new primary" \
	wait_for "[[ -n \$(sql 'select rooflined_daemon_pid()') ]]" 10
run4=$(submit_as alice "$TEST_TMP/pgf.yaml")
like "$run4" '^[0-9]+$' "roofline submit works after the failover ($run4)"
runs+=("$run4")
for r in "${runs[@]}"; do wait_run "$r" 90; done
ids=$(IFS=,; echo "${runs[*]}")
is "$(sql "select string_agg(distinct state, ',') from runs where id in ($ids)")" succeeded \
	"the runs in flight, and one submitted after, succeeded" || diag "$(tail -30 "$DAEMON_LOG")"
is "$(sql "select count(*) from step_records where run_id in ($ids)")" $((4 * 4)) \
	"each attempt's records are there once (2 + 1 + 1 a run)"
like "$(as alice "$BIN/roofline" status "${runs[0]}")" "a +succeeded +1 " "roofline status (CLI) answers from the new primary"
done_testing
