#!/bin/bash
# A full spool (issue 26 item 4): the spool on a small file system (a 16 MiB
# tmpfs mounted by the test) that is full before a run's steps start, and
# that fills up while a job runs.  A clear error names the step and the
# path; nothing of a failed attempt is ingested; no attempt is counted
# against the step; when space returns the runs go on and succeed, with
# each attempt's records once.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
MNT=$TEST_TMP/spoolfs
mkdir -p "$MNT"
mount -t tmpfs -o size=16m,mode=0711 rooflined-test-spool "$MNT" || skip_all "cannot mount a tmpfs here"
on_exit "umount -l '$MNT'"
sed -i "s|^spool_dir: .*|spool_dir: $MNT/spool|" "$DAEMON_CONF"
daemon_start
fill() { dd if=/dev/zero of="$MNT/fill" bs=64k >/dev/null 2>&1; true; }
unfill() { rm -f "$MNT/fill"; }

printf 'name: full\nslurm: { time: "00:02:00" }\nsteps:\n%s\n%s\n' \
	'  - { id: a, plugin: smoke, with: { sleep: 3, records: 2000 } }' \
	'  - { id: c, plugin: smoke, needs: [a], on: daemon }' >"$TEST_TMP/full.yaml"
chmod 0644 "$TEST_TMP/full.yaml"

# ---- full before the steps start --------------------------------------------------
fill
ok "the spool's file system is full" test "$(df --output=avail "$MNT" | tail -1)" -lt 64
run1=$(submit_as alice "$TEST_TMP/full.yaml")
like "$run1" '^[0-9]+$' "a run is queued ($run1)"
ok "the log names the path, the run and the step that wait for space" \
	wait_for "grep -qE 'error: the file system of $MNT/spool is full \\([0-9]+ KiB free\\): run=$run1 step=a and 0 more step\\(s\\) wait for space' '$DAEMON_LOG'" 20
sleep 2
is "$(sql "select r.state || ' ' || s.state || ' ' || s.attempt from runs r join steps s on s.run_id = r.id where r.id = $run1 and s.step_id = 'a'")" \
	"running waiting 0" "while full the step waits (no attempt made or counted)"
unfill
ok "when space returns the run goes on and succeeds" wait_run "$run1" 60
is "$(run_state "$run1")" succeeded "run $run1 succeeded" || diag "$(tail -20 "$DAEMON_LOG")"

# ---- fills up while a job runs --------------------------------------------------------
run2=$(submit_as alice "$TEST_TMP/full.yaml")
wait_for "[[ \$(sql \"select state from steps where run_id = $run2 and step_id = 'a'\") == running ]]" 30
fill
ok "the attempt that failed for lack of space is given back, naming the step's attempt and the path" \
	wait_for "[[ \$(sql \"select error from steps where run_id = $run2 and step_id = 'a'\") == 'attempt 1 failed while the file system of '*' is full ('* ]]" 40
is "$(sql "select count(*) from step_records where run_id = $run2")" 0 "nothing of it was ingested"
sleep 2
unfill
ok "when space returns the step runs again" wait_run "$run2" 60
is "$(run_state "$run2")" succeeded "run $run2 succeeded" || diag "$(tail -20 "$DAEMON_LOG")"
is "$(sql "select count(*) from step_records where run_id in ($run1, $run2)")" $((2 * 2001)) \
	"each run's records once (2000 + 1), none of the failed attempt"
is "$(sql "select attempt || '/' || retries from steps where run_id = $run2 and step_id = 'a'")" "2/1" \
	"the attempt lost to the full disk was given back (2 attempts, 1 retry added)"
done_testing
