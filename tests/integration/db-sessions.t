#!/bin/bash
# The attempts one poll finds ended are stored through several PostgreSQL
# sessions at once (issue 27: a night's node jobs end together;
# daemon/session_pool.h): each attempt exactly once, in a transaction of its
# own, whichever session took it; an attempt whose records are refused
# fails with the reason, as on the engine's own session; `db_sessions`
# (1 to 16) sets how many, and a reload closes the pool.
#
# The daemon is stopped (SIGSTOP) while a fan-out's node jobs end, so that
# its next poll finds them all ended at once, as a night's flood does.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
echo "poll_interval: 1s" >>"$DAEMON_CONF"
daemon_start
on_exit 'kill -CONT "$DAEMON_PID" 2>/dev/null'

mapfile -t NODES < <(scontrol show hostnames "$(sinfo -h -p gpu -o '%N' | head -1)")
N=${#NODES[@]}
((N >= 4)) || bail_out "db-sessions.t needs a cluster of 4 nodes or more, not $N"
K=$((N < 4 ? N : 4)) # the default db_sessions, at most one per attempt

yaml() { # yaml NAME RECORDS
	printf 'name: %s\nslurm: { partition: gpu, gres: "gpu:1", nodes: each }\nsteps:\n  - { id: probe, plugin: smoke, with: { sleep: 2, records: %s } }\n' \
		"$1" "$2" >"$TEST_TMP/$1.yaml"
	chmod 0644 "$TEST_TMP/$1.yaml"
}
# The daemon's sessions: its own, the lock's and the pool's.
sessions() { sql "select count(*) from pg_stat_activity where application_name like 'rooflined pid $DAEMON_PID on %'"; }
# stored_lines N: the daemon's lines for a poll that stored N attempts.
stored_lines() { grep -c "stored the records of $1 ended attempts through" "$DAEMON_LOG"; }

# ended_together FILE: the run's node jobs all end while the daemon is
# stopped; prints the run id once the daemon has gone on and the run ended.
ended_together() {
	local run
	run=$(submit_as alice "$1")
	wait_for "[[ \$(sql \"select count(*) from steps where run_id = $run and state = 'running'\") == $N ]]" 60 ||
		diag "not all running: $(sql "select string_agg(node || ':' || state, ' ') from steps where run_id = $run")"
	kill -STOP "$DAEMON_PID"
	wait_for "[[ -z \$(squeue -h -u alice -o %i) ]]" 60 || diag "still queued: $(squeue -u alice)"
	kill -CONT "$DAEMON_PID"
	wait_run "$run" 60
	echo "$run"
}

# ---- one poll's ended attempts, stored through the pool ----------------------
yaml each 3
before=$(stored_lines "$N")
is "$(sessions)" 2 "before any ingest the daemon has its own session and the lock's"
run=$(ended_together "$TEST_TMP/each.yaml")
is "$(run_state "$run")" succeeded "a fan-out whose $N node jobs ended together succeeds"
ok "one poll stored the $N attempts" test "$(stored_lines "$N")" -gt "$before"
like "$(grep "stored the records of $N ended attempts" "$DAEMON_LOG" | tail -1)" \
	"through $K sessions in [0-9]+ ms" "through $K sessions (db_sessions' default, 4, at most one per attempt)"
is "$(sessions)" "$((2 + K))" "the pool's $K sessions are open beside the daemon's two, kept for the next poll"
is "$(sql "select count(*) || ' records, ' || count(distinct r.step) || ' steps' from step_records r join steps s on s.id = r.step where s.run_id = $run")" \
	"$((3 * N)) records, $N steps" "each attempt's 3 records stored once"
is "$(sql "select count(*) from step_events e join steps s on s.id = e.step where s.run_id = $run and e.state = 'succeeded'")" \
	"$N" "and each step marked succeeded once"
is "$(sql "select count(*) from steps where run_id = $run and exec_node = node and started_at is not null")" \
	"$N" "with its node and start time from its exit record"

# ---- records refused in a session of the pool: the attempt fails, named ------
echo "ingest_max_records: 2" >>"$DAEMON_CONF"
reloads=$(grep -c 'configuration and pipelines reloaded' "$DAEMON_LOG")
kill -HUP "$DAEMON_PID"
wait_for "[[ \$(grep -c 'configuration and pipelines reloaded' '$DAEMON_LOG') -gt $reloads ]]" 20 ||
	diag "$(tail -5 "$DAEMON_LOG")"
is "$(sessions)" 2 "a reload closes the pool's sessions"
before=$(stored_lines "$N")
run=$(ended_together "$TEST_TMP/each.yaml")
is "$(run_state "$run")" failed "3 records against ingest_max_records: 2: the run fails"
ok "those attempts too were stored (and refused) by one poll" test "$(stored_lines "$N")" -gt "$before"
is "$(sql "select count(*) from steps where run_id = $run and state = 'failed' and error like '%records.tsv%ingest_max_records%'")" \
	"$N" "every instance failed, naming its records.tsv and the key"
is "$(sql "select count(*) from step_records r join steps s on s.id = r.step where s.run_id = $run")" \
	0 "and none of their records is stored"

# ---- db_sessions: 1 to 16 ------------------------------------------------
config_range_refused db_sessions
sed -i '/^ingest_max_records:/d' "$DAEMON_CONF"
echo "db_sessions: 1" >>"$DAEMON_CONF"
reloads=$(grep -c 'configuration and pipelines reloaded' "$DAEMON_LOG")
kill -HUP "$DAEMON_PID"
wait_for "[[ \$(grep -c 'configuration and pipelines reloaded' '$DAEMON_LOG') -gt $reloads ]]" 20 ||
	diag "$(tail -5 "$DAEMON_LOG")"
run=$(ended_together "$TEST_TMP/each.yaml")
is "$(run_state "$run")" succeeded "with db_sessions: 1 the same fan-out succeeds"
like "$(grep "stored the records of $N ended attempts" "$DAEMON_LOG" | tail -1)" \
	"through 1 session in" "its attempts stored one after another, on the daemon's own session"
is "$(sessions)" 2 "and no session of the pool is opened"
is "$(sql "select count(*) from step_records r join steps s on s.id = r.step where s.run_id = $run")" \
	"$((3 * N))" "each attempt's records stored once"

done_testing
