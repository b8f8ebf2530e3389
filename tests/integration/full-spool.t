#!/bin/bash
# A full spool (issue 26 item 4): the spool on a small file system (a 16 MiB
# tmpfs mounted by the test) that is full before runs start (one with an
# attached file to write), and that fills up while a job runs.  A clear
# error names the path (and the run and step that wait); nothing of a
# failed attempt is ingested; no attempt is counted against the step; when
# space returns the runs go on and succeed, with each attempt's records once.
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
# a run with an attached file: its files go into the spool when it starts
echo "attached" >"$TEST_TMP/note.txt"
chmod 0644 "$TEST_TMP/note.txt"
run1b=$(as alice "$BIN/roofline" submit --attach "$TEST_TMP/note.txt" "$TEST_TMP/full.yaml" 2>/dev/null)
ok "queued runs wait for space, and the log names the path" \
	wait_for "grep -qE 'error: the file system of $MNT/spool is full \([0-9]+ KiB free\): queued runs wait for space before they start' '$DAEMON_LOG'" 20
sleep 2
is "$(sql "select string_agg(state, ',') from runs where id in ($run1, $run1b)")" "queued,queued" \
	"while full they stay queued (neither fails, nothing is half-made)"
unfill
ok "when space returns the runs go on" wait_run "$run1" 60
is "$(run_state "$run1")" succeeded "run $run1 succeeded" || diag "$(tail -20 "$DAEMON_LOG")"
wait_run "$run1b" 60
is "$(run_state "$run1b")" succeeded "run $run1b (with its file) succeeded"

# ---- fills up while a job runs --------------------------------------------------------
run2=$(submit_as alice "$TEST_TMP/full.yaml")
wait_for "[[ \$(sql \"select state from steps where run_id = $run2 and step_id = 'a'\") == running ]]" 30
fill
ok "the attempt that failed for lack of space is given back, naming the step's attempt and the path" \
	wait_for "[[ \$(sql \"select error from steps where run_id = $run2 and step_id = 'a'\") == 'attempt 1 failed while the file system of '*' is full ('* ]]" 40
is "$(sql "select count(*) from step_records where run_id = $run2")" 0 "nothing of it was ingested"
ok "its retry waits for space: the log names the path, the run and the step" \
	wait_for "grep -qE 'error: the file system of $MNT/spool is full \([0-9]+ KiB free\): run=$run2 step=a and 0 more step\(s\) wait for space' '$DAEMON_LOG'" 20
sleep 2
unfill
ok "when space returns the step runs again" wait_run "$run2" 60
is "$(run_state "$run2")" succeeded "run $run2 succeeded" || diag "$(tail -20 "$DAEMON_LOG")"
is "$(sql "select count(*) from step_records where run_id in ($run1, $run1b, $run2)")" $((3 * 2001)) \
	"each run's records once (2000 + 1), none of the failed attempt"
is "$(sql "select attempt || '/' || retries from steps where run_id = $run2 and step_id = 'a'")" "2/1" \
	"the attempt lost to the full disk was given back (2 attempts, 1 retry added)"
done_testing
