#!/bin/bash
# The pipeline engine end to end on the real local cluster: rooflined,
# slurmctld/slurmd, PostgreSQL, roofline-job and the smoke plugin.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

pipeline() { # pipeline NAME BODY: write $TEST_TMP/NAME.yaml
	printf 'name: %s\nslurm: { partition: gpu, gres: "gpu:1", time: "00:02:00" }\nsteps:\n%s\n' \
		"$1" "$2" >"$TEST_TMP/$1.yaml"
	chmod 0644 "$TEST_TMP/$1.yaml"
}

# -- a Slurm time-out takes a minute (Slurm's limits are in minutes), so it
#    is started first and checked last.
#    It asks for no GPU, so the other runs' jobs are not held behind it.
printf 'name: timeout\nslurm: { partition: gpu }\nsteps:\n%s\n' \
	'  - { id: slow, plugin: smoke, timeout: "1", with: { sleep: 600 } }' >"$TEST_TMP/timeout.yaml"
chmod 0644 "$TEST_TMP/timeout.yaml"
timeout_run=$(submit_as alice "$TEST_TMP/timeout.yaml")
like "$timeout_run" '^[0-9]+$' "time-out run queued ($timeout_run)"

# -- three steps: two Slurm jobs and a daemon step, as alice
out=$(as alice "$BIN/roofline" submit --wait "$ROOT/pipelines/smoke.yaml" 2>&1)
rc=$?
is "$rc" 0 "smoke pipeline succeeded (submit --wait exit 0)"
run=$(head -1 <<<"$out")
like "$out" "hello  pending \(attempt 1\): Slurm job [0-9]+.*summary  succeeded" \
	"--wait prints a line per state change"
is "$(sql "select string_agg(step_id || ':' || state, ',' order by id) from steps where run_id = $run")" \
	"hello:succeeded,again:succeeded,summary:succeeded" "three steps succeeded"
is "$(sql "select count(*) from step_records where run_id = $run and kind = 'smoke'")" 5 \
	"5 records ingested (3 + 1 + 1)"
is "$(sql "select fields->>'input_records' from step_records r join steps s on s.id = r.step where s.run_id = $run and s.step_id = 'summary'")" \
	4 "the daemon step read its inputs (3 + 1 records)"
alice_uid=$(id -u alice)
is "$(sql "select string_agg(distinct fields->>'uid', ',') from step_records where run_id = $run")" \
	"$alice_uid" "every step ran with alice's uid ($alice_uid), Slurm and daemon steps alike"
is "$(sql "select count(*) from steps where run_id = $run and slurm_job_id is not null")" 2 \
	"two Slurm jobs"
like "$(as alice "$BIN/roofline" status "$run")" "hello +succeeded +1 +[0-9]+ " "status shows the Slurm job id"
# --json: one document, parsed by Python, compared with what psql reads
iso() { echo "to_char($1, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"; }
as alice "$BIN/roofline" status --json "$run" >"$TEST_TMP/status.json"
is "$?" 0 "roofline status --json exits 0"
ok "status --json: the run as the database has it" "$ROOT/tests/tools/json_match" "$TEST_TMP/status.json" \
	"$(sql "select id, pipeline_name, owner, state, spool_dir, error from runs where id = $run")" \
	run id pipeline owner state spool_dir error
ok "status --json: its steps, job ids and daemon flags as numbers and booleans" \
	"$ROOT/tests/tools/json_match" "$TEST_TMP/status.json" \
	"$(sql "select step_id, node, state, attempt, slurm_job_id, on_daemon, exec_node, $(iso started_at),
		$(iso ended_at), error, slurm_reason from steps where run_id = $run order by id")" \
	steps step node state attempt slurm_job_id on_daemon exec_node started_at ended_at error slurm_reason
ok "status --json: no unused nodes" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["unused_nodes"] == [] and d["steps"][0]["slurm_job_id"] > 0
assert d["steps"][-1]["on_daemon"] is True and d["steps"][-1]["slurm_job_id"] is None' "$TEST_TMP/status.json"
like "$(as alice "$BIN/roofline" status --help)" "--json" "status --help mentions --json"

# -- a failing step: run failed, dependents skipped, error stored
pipeline failing '  - { id: broken, plugin: smoke, with: { fail: true } }
  - { id: after, plugin: smoke, needs: [broken] }
  - { id: last, plugin: smoke, needs: [after], on: daemon }'
run=$(submit_as alice "$TEST_TMP/failing.yaml")
wait_run "$run" 60
is "$(run_state "$run")" failed "a failing step fails the run"
is "$(sql "select string_agg(step_id || ':' || state, ',' order by id) from steps where run_id = $run")" \
	"broken:failed,after:skipped,last:skipped" "its dependents are skipped"
like "$(sql "select error from steps where run_id = $run and step_id = 'broken'")" \
	"failing as asked" "the plugin's error is stored"
like "$(sql "select error from runs where id = $run")" "^broken: failing as asked" \
	"the run's error names the step"

# -- a retry that then succeeds
pipeline retry '  - { id: flaky, plugin: smoke, retries: 2, with: { fail_attempts: 1 } }'
run=$(submit_as alice "$TEST_TMP/retry.yaml")
wait_run "$run" 60
is "$(run_state "$run")" succeeded "a step that fails once succeeds on its retry"
is "$(sql "select attempt from steps where run_id = $run")" 2 "on attempt 2"
# (a job can start and end between two polls, so 'running' may be absent)
is "$(sql "select string_agg(e.state, ',' order by e.id) from step_events e join steps s on s.id = e.step where s.run_id = $run and e.state <> 'running'")" \
	"submitting,pending,retry_wait,submitting,pending,succeeded" \
	"every state change is recorded"

# -- cancel
pipeline cancel '  - { id: sleeper, plugin: smoke, with: { sleep: 300 } }
  - { id: never, plugin: smoke, needs: [sleeper] }'
run=$(submit_as alice "$TEST_TMP/cancel.yaml")
ok "the sleeper runs" wait_for "[[ \$(sql \"select state from steps where run_id = $run and step_id = 'sleeper'\") == running ]]" 60
job=$(sql "select slurm_job_id from steps where run_id = $run and step_id = 'sleeper'")
ok "roofline cancel" as alice "$BIN/roofline" cancel "$run"
wait_run "$run" 30
is "$(run_state "$run")" cancelled "the run is cancelled"
is "$(sql "select string_agg(step_id || ':' || state, ',' order by id) from steps where run_id = $run")" \
	"sleeper:cancelled,never:cancelled" "its steps are cancelled"
ok "its Slurm job is gone" wait_for "! squeue -h -j $job -t PD,R,CG 2>/dev/null | grep -q ." 30

# -- kill -9 of rooflined in the middle of a run, then a restart
pipeline crash '  - { id: first, plugin: smoke, with: { sleep: 4, records: 2 } }
  - { id: second, plugin: smoke, needs: [first], with: { records: 2 } }
  - { id: third, plugin: smoke, needs: [second], on: daemon, with: { sleep: 2 } }'
run=$(submit_as alice "$TEST_TMP/crash.yaml")
ok "first step running" wait_for "[[ \$(sql \"select state from steps where run_id = $run and step_id = 'first'\") == running ]]" 60
daemon_kill9
sleep 5 # the first job ends while no daemon watches
daemon_start
wait_run "$run" 60
is "$(run_state "$run")" succeeded "the run completes after kill -9 and a restart"
is "$(sql "select string_agg(attempt::text, ',' order by id) from steps where run_id = $run")" \
	"1,1,1" "no step was submitted twice"
is "$(sql "select count(*) from step_events e join steps s on s.id = e.step where s.run_id = $run and e.state = 'pending'")" \
	2 "two Slurm submissions in all"
is "$(sql "select count(*) from step_records where run_id = $run")" 5 "no record ingested twice (2 + 2 + 1)"

# -- PostgreSQL restarts while a run is in flight
pipeline pgrestart '  - { id: a, plugin: smoke, with: { sleep: 3 } }
  - { id: b, plugin: smoke, needs: [a] }'
run=$(submit_as alice "$TEST_TMP/pgrestart.yaml")
ok "step a running" wait_for "[[ \$(sql \"select state from steps where run_id = $run and step_id = 'a'\") == running ]]" 60
ok "PostgreSQL restarted" "$ROOT/scripts/cluster" restart-pg
wait_run "$run" 60
is "$(run_state "$run")" succeeded "the run completes across a PostgreSQL restart"
is "$(sql "select count(*) from step_records where run_id = $run")" 2 "nothing lost, nothing doubled"
like "$(cat "$DAEMON_LOG")" "reconnected to PostgreSQL" "the daemon reconnected"

# -- the time-out started at the beginning
wait_run "$timeout_run" 150
is "$(run_state "$timeout_run")" failed "the step that outlived its time limit failed the run"
like "$(sql "select error from steps where run_id = $timeout_run")" "^timed out after 60 s" "its error says it timed out after its 60 s"

done_testing
