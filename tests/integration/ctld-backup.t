#!/bin/bash
# A backup slurmctld (issue 26 item 3): slurm.conf names two SlurmctldHosts
# sharing StateSaveLocation (scripts/cluster ctld-backup start); the primary
# stops while runs are in flight and new ones are queued; the backup takes
# control and the daemon follows it: every run succeeds, attempt 1
# everywhere, records once.  Then the primary comes back and the backup is
# removed again.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
ok "a backup slurmctld starts (rl-ctld2)" "$ROOT/scripts/cluster" ctld-backup start
undo() { "$ROOT/scripts/cluster" ctld-start >/dev/null 2>&1; "$ROOT/scripts/cluster" ctld-backup stop >/dev/null 2>&1; }
on_exit undo
like "$(scontrol ping)" "backup\) at rl-ctld2 is UP" "scontrol ping names the backup"
daemon_setup
daemon_start # after: its libslurm reads the slurm.conf with both controllers

printf 'name: bk\nslurm: { time: "00:02:00" }\nsteps:\n%s\n%s\n%s\n' \
	'  - { id: a, plugin: smoke, with: { sleep: 3, records: 2 } }' \
	'  - { id: b, plugin: smoke, needs: [a], with: { records: 1 } }' \
	'  - { id: c, plugin: smoke, needs: [b], on: daemon }' >"$TEST_TMP/bk.yaml"
chmod 0644 "$TEST_TMP/bk.yaml"
runs=()
for i in 1 2; do runs+=("$(submit_as alice "$TEST_TMP/bk.yaml")"); done
wait_for "[[ \$(sql \"select count(*) from steps where run_id = ${runs[0]} and step_id = 'a' and state = 'running'\") -eq 1 ]]" 30
ok "the primary slurmctld stops" "$ROOT/scripts/cluster" ctld-stop
for i in 3 4; do runs+=("$(submit_as alice "$TEST_TMP/bk.yaml")"); done
ok "the backup takes control" wait_for "scontrol ping | grep -q 'at rl-ctld2 is UP' && squeue -h >/dev/null 2>&1" 30
for r in "${runs[@]}"; do wait_run "$r" 120; done
ids=$(IFS=,; echo "${runs[*]}")
is "$(sql "select string_agg(distinct state, ',') from runs where id in ($ids)")" succeeded \
	"the four runs succeeded under the backup" || diag "$(sql "select run_id, step_id, state, error from steps where run_id in ($ids) and state <> 'succeeded'")"
like "$(scontrol ping)" "primary\) at .* is DOWN" "while the primary is down"
is "$(sql "select count(*) from steps where run_id in ($ids) and attempt <> 1")" 0 "attempt 1 everywhere"
is "$(sql "select count(*) from step_records where run_id in ($ids)")" $((4 * 4)) "records once (2 + 1 + 1 a run)"
done_testing
