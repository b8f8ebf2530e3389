#!/bin/bash
# slurmctld restarts mid-run (issue 26 item 3): slurmctld stopped while
# runs are in flight and while the daemon submits new ones, then started
# again from its StateSaveLocation.  Nothing is lost: the jobs in flight are
# followed by their ids, the submissions slurmctld did not answer stay
# 'submitting' and are adopted or made once it answers (no attempt counted
# as failed), and every run succeeds with its records once.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
restart_ctld() { "$ROOT/scripts/cluster" ctld-start >/dev/null 2>&1; }
on_exit restart_ctld
daemon_start

printf 'name: ctld\nslurm: { time: "00:02:00" }\nsteps:\n%s\n%s\n%s\n' \
	'  - { id: a, plugin: smoke, with: { sleep: 3, records: 2 } }' \
	'  - { id: b, plugin: smoke, needs: [a], with: { records: 1 } }' \
	'  - { id: c, plugin: smoke, needs: [b], on: daemon }' >"$TEST_TMP/ctld.yaml"
chmod 0644 "$TEST_TMP/ctld.yaml"
runs=()
for i in 1 2; do runs+=("$(submit_as alice "$TEST_TMP/ctld.yaml")"); done
wait_for "[[ \$(sql \"select count(*) from steps where run_id in (${runs[0]}, ${runs[1]}) and step_id = 'a' and state = 'running'\") -eq 2 ]]" 30
job_a=$(sql "select slurm_job_id from steps where run_id = ${runs[0]} and step_id = 'a'")
ok "slurmctld is stopped while two jobs run" "$ROOT/scripts/cluster" ctld-stop
# queued while slurmctld is down: the daemon tries to submit their first steps
for i in 3 4; do runs+=("$(submit_as alice "$TEST_TMP/ctld.yaml")"); done
like "${runs[*]}" '^[0-9]+ [0-9]+ [0-9]+ [0-9]+$' "runs are still queued (roofline submit warns)"
# (a poll while slurmctld is down takes libslurm's connection retries, about
# 20 s here, before the tick goes on to the submissions)
ok "the daemon left the unanswered submissions 'submitting'" \
	wait_for "grep -q 'left submitting, to be looked for by its job name once slurmctld answers' '$DAEMON_LOG'" 60
sleep 1 # several polls and passes without slurmctld
ok "slurmctld starts again from its saved state" "$ROOT/scripts/cluster" ctld-start
for r in "${runs[@]}"; do wait_run "$r" 120; done
ids=$(IFS=,; echo "${runs[*]}")
is "$(sql "select string_agg(distinct state, ',') from runs where id in ($ids)")" succeeded \
	"the four runs succeeded" || diag "$(sql "select run_id, step_id, attempt, state, error from steps where run_id in ($ids) and state <> 'succeeded'")"
is "$(sql "select count(*) from steps where run_id in ($ids) and attempt <> 1")" 0 \
	"no attempt was counted as failed (attempt 1 everywhere)"
is "$(sql "select slurm_job_id from steps where run_id = ${runs[0]} and step_id = 'a'")" "$job_a" \
	"a job in flight was followed by its id across the restart"
is "$(sql "select count(*) from step_records where run_id in ($ids)")" $((4 * 4)) \
	"each attempt's records ingested once (2 + 1 + 1 a run)"
ours="^rl\\.($(sql "select string_agg(id::text, '|') from steps where run_id in ($ids)"))\\."
is "$(squeue -h -t all -o %j | grep -E "$ours" | sort | uniq -d)" "" "no job submitted twice"
done_testing
