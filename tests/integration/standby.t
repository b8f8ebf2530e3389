#!/bin/bash
# A standby rooflined (issue 26 item 1): a second daemon on the same
# database waits, `roofline status` names the active one, and the standby
# takes over within 10 s of the active one's death (kill -9) or the loss of
# its database session (its lock session terminated); the runs in flight
# finish with nothing started twice: one 'submitting' per attempt, attempt 1
# everywhere, each Slurm job name (rl.<step>.<attempt>) once in Slurm.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start
A=$DAEMON_PID

LOG_B=$TEST_TMP/standby.log
sed "s|^pidfile: .*|pidfile: $TEST_TMP/standby.pid|" "$DAEMON_CONF" >"$TEST_TMP/standby.yaml"
start_b() {
	"$BIN/rooflined" --foreground --config "$TEST_TMP/standby.yaml" >>"$LOG_B" 2>&1 &
	B=$!
}
stop_b() { [[ -n ${B:-} ]] && kill -TERM "$B" 2>/dev/null; wait "$B" 2>/dev/null; B=; }
on_exit stop_b
now() { date +%s.%N; }
# takeover_since T0 OLD_BACKEND: seconds from T0 until another backend holds the lock
takeover_since() {
	local t0=$1 old=$2 cur end=$((SECONDS + 20))
	while ((SECONDS < end)); do
		cur=$(sql "select coalesce(rooflined_daemon_pid(), 0)")
		if [[ $cur =~ ^[0-9]+$ && $cur != 0 && $cur != "$old" ]]; then
			echo "$(now) - $t0" | bc
			return 0
		fi
		sleep 0.05
	done
	echo 99
}
printf 'name: sb\nslurm: { time: "00:02:00" }\nsteps:\n%s\n%s\n%s\n' \
	'  - { id: a, plugin: smoke, with: { sleep: 3, records: 2 } }' \
	'  - { id: b, plugin: smoke, needs: [a], with: { records: 1 } }' \
	'  - { id: c, plugin: smoke, needs: [b], on: daemon, with: { sleep: 1 } }' >"$TEST_TMP/sb.yaml"
chmod 0644 "$TEST_TMP/sb.yaml"

# ---- a second daemon waits and says so ----------------------------------------
start_b
ok "the second rooflined waits as a standby, naming the active one" \
	wait_for "grep -q 'standby: the active rooflined is rooflined pid $A on ' '$LOG_B'" 15
ok "it is still running" kill -0 "$B"
out=$(as alice "$BIN/roofline" status 2>&1)
like "$out" "^active:  rooflined pid $A on .*
standby: rooflined standby pid $B on " "roofline status names the active one and the standby"

# ---- kill -9 of the active one mid-run -----------------------------------------
runs=()
for i in 1 2 3; do runs+=("$(submit_as alice "$TEST_TMP/sb.yaml")"); done
wait_for "[[ \$(sql \"select count(*) from steps where run_id = ${runs[0]} and state in ('pending', 'running')\") -ge 1 ]]" 20
old=$(sql "select rooflined_daemon_pid()")
t0=$(now)
daemon_kill9
kill9_s=$(takeover_since "$t0" "$old")
note "takeover after kill -9: $kill9_s s"
ok "the standby took over within 10 s of kill -9 ($kill9_s s)" test "$(echo "$kill9_s < 10" | bc)" = 1
ok "it says so" wait_for "grep -q 'taking over as the active rooflined (the last one was rooflined pid $A on ' '$LOG_B'" 10
# the killed one comes back: now it is the standby
daemon_start_standby() {
	"$BIN/rooflined" --foreground --config "$DAEMON_CONF" >>"$DAEMON_LOG" 2>&1 &
	DAEMON_PID=$!
}
daemon_start_standby
ok "the restarted daemon waits as the standby" \
	wait_for "grep -q 'standby: the active rooflined is rooflined pid $B on ' '$DAEMON_LOG'" 15

# ---- the active one's database session is cut ------------------------------------
for i in 4 5; do runs+=("$(submit_as alice "$TEST_TMP/sb.yaml")"); done
wait_for "[[ \$(sql \"select count(*) from steps where run_id = ${runs[3]} and state in ('pending', 'running')\") -ge 1 ]]" 20
old=$(sql "select rooflined_daemon_pid()")
t0=$(now)
pg_admin "select pg_terminate_backend(pid) from pg_stat_activity where application_name = (select application_name from pg_stat_activity where pid = $old)" >/dev/null
cut_s=$(takeover_since "$t0" "$old")
note "takeover after the session was cut: $cut_s s"
ok "a daemon leads again within 10 s of the lock session's loss ($cut_s s)" test "$(echo "$cut_s < 10" | bc)" = 1
holder=$(sql "select application_name from pg_stat_activity where pid = rooflined_daemon_pid()")
if [[ $holder == "rooflined pid $DAEMON_PID on "* ]]; then
	ok "the one cut off goes back to standby" \
		wait_for "grep -q 'another rooflined leads this database now: going back to standby' '$LOG_B'" 15
else
	pass "the one cut off took its lock again first ($holder); the other stays standby"
fi

for r in "${runs[@]}"; do wait_run "$r" 90; done
ids=$(IFS=,; echo "${runs[*]}")
is "$(sql "select string_agg(distinct state, ',') from runs where id in ($ids)")" succeeded \
	"the five runs succeeded across both takeovers"
is "$(sql "select count(*) from steps where run_id in ($ids) and attempt <> 1")" 0 \
	"every step ran once (attempt 1)"
is "$(sql "select count(*) from (select e.step, e.attempt from step_events e join steps s on s.id = e.step
	where s.run_id in ($ids) and e.state = 'submitting' group by 1, 2 having count(*) > 1) d")" 0 \
	"no attempt was marked submitting twice"
is "$(sql "select count(*) from step_records where run_id in ($ids)")" $((5 * 4)) \
	"each attempt's records ingested once (2 + 1 + 1 a run)"
# the Slurm jobs of these runs' steps, as slurmctld still has them (MinJobAge)
ours="^rl\.($(sql "select string_agg(id::text, '|') from steps where run_id in ($ids)"))\."
names=$(squeue -h -t all -o %j | grep -E "$ours")
is "$(sort <<<"$names" | uniq -d)" "" "no Slurm job name (rl.<step>.<attempt>) submitted twice"
is "$(grep -c . <<<"$names")" "$(sql "select count(*) from steps where run_id in ($ids) and not on_daemon")" \
	"one Slurm job per Slurm step"
done_testing
