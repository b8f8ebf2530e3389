#!/bin/bash
# What a user's files can make the root daemon do (issue 21, finding 4), on
# the real local cluster.  A step attempt's directory is its user's, so
# between the job's end and the daemon's ingest the user can leave anything
# there: a sparse 4 GiB records.tsv without a newline (the daemon used to
# double its buffer until the allocation aborted, again at every start), a
# line longer than any record, too many records, a 2 GiB exit.tsv, an
# exit.tsv whose error is not UTF-8 (its state update failed, and was tried
# again, at every tick), an exit.tsv with a start time PostgreSQL cannot
# store, a record that is not UTF-8.  Each attempt must fail (or pass) with
# an error that names the file and the limit, and the daemon must live on
# and run the next run.
#
# Deterministic: the daemon is frozen (SIGSTOP) while the jobs run, the
# user replaces the files once every job has written its exit record, and
# the daemon is thawed (SIGCONT) to ingest them.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup

# ---- the limits are configuration keys --------------------------------------
printf 'ingest_max_bytes: 256MiB\ningest_max_line: 1 MiB\ningest_max_records: 1000000\n' \
	>"$TEST_TMP/limits-good.yaml"
ok "--check-config takes the three limits" \
	"$BIN/rooflined" --check-config -c "$TEST_TMP/limits-good.yaml"
printf 'ingest_max_bytes: 2TiB\ningest_max_line: 65MiB\ningest_max_records: 0\n' \
	>"$TEST_TMP/limits-bad.yaml"
out=$("$BIN/rooflined" --check-config -c "$TEST_TMP/limits-bad.yaml" 2>&1)
is "$?" 1 "and refuses them out of range"
is "$(grep -c "bad value for 'ingest_max_" <<<"$out")" 3 "each one named" || diag "$out"

daemon_start
on_exit 'kill -CONT "${DAEMON_PID:-0}" 2>/dev/null || true'

# The record limit is lowered on the running daemon, by a reload: 1001
# records are then too many (the default, 10^6, would be slow to reach).
echo "ingest_max_records: 1000" >>"$DAEMON_CONF"
kill -HUP "$DAEMON_PID"
wait_for "grep -q 'configuration and pipelines reloaded' '$DAEMON_LOG'" 20 ||
	diag "$(tail -5 "$DAEMON_LOG")"

STEPS=(big longline many hugeexit badexit badrecord badtime)
{
	echo "name: tampered"
	echo "slurm: { partition: gpu }"
	echo "steps:"
	for s in "${STEPS[@]}"; do
		echo "  - { id: $s, plugin: smoke, with: { sleep: 5, records: 2 } }"
	done
} >"$TEST_TMP/tampered.yaml"
chmod 0644 "$TEST_TMP/tampered.yaml"

run=$(submit_as alice "$TEST_TMP/tampered.yaml")
ok "alice queued run $run" test -n "$run"
wait_for "[[ \$(sql \"select count(*) from steps where run_id = $run and slurm_job_id is not null and state in ('pending', 'running')\") == ${#STEPS[@]} ]]" 60 ||
	diag "$(sql "select step_id, state, error from steps where run_id = $run")"
kill -STOP "$DAEMON_PID"
dir() { echo "$SPOOL/run-$run/$1/attempt-1"; }
for s in "${STEPS[@]}"; do
	wait_for "test -e '$(dir "$s")/exit.tsv'" 90 || diag "no exit.tsv from step $s"
done
is "$(sql "select count(*) from steps where run_id = $run and state in ('pending', 'running')")" \
	"${#STEPS[@]}" "every job has ended while the daemon is frozen: nothing is ingested yet"

# put STEP FILE: the user replaces STEP's FILE with standard input (written
# beside it, then renamed over it: a regular file of hers, one link).
put() {
	as alice bash -c 'cat >"$1.new" && mv -f "$1.new" "$1"' _ "$(dir "$1")/$2"
}
# sparse STEP FILE SIZE: the user makes FILE a sparse file of SIZE (NUL
# bytes: not one newline).
sparse() {
	as alice bash -c 'truncate -s "$2" "$1.new" && mv -f "$1.new" "$1"' _ "$(dir "$1")/$2" "$3"
}
exit_line() { # exit_line STATUS STARTED ERROR: an exit record
	printf 'exit\tstatus=%s\tnode=rl-node1\tstarted=%s\tended=%s\trecords=0\terror=%s\n' \
		"$1" "$2" "$(date +%s)" "$3"
}

sparse big records.tsv 4G
head -c $((2 << 20)) /dev/zero | tr '\0' x | put longline records.tsv
for i in $(seq 1001); do printf 'smoke\tseq=%d\n' "$i"; done | put many records.tsv
sparse hugeexit exit.tsv 2G
exit_line fail "$(date +%s)" $'broken \xff\xfe tail' | put badexit exit.tsv
printf 'smoke\tmessage=fine\nsmoke\tmessage=caf\xe9\n' | put badrecord records.tsv
exit_line ok 99999999999999 "" | put badtime exit.tsv
is "$(stat -c '%U %s' "$(dir big)/records.tsv")" "alice 4294967296" \
	"big's records.tsv is alice's 4 GiB file"
is "$(du -k "$(dir big)/records.tsv" | cut -f1)" 0 "and it is sparse (no disk)"

t0=$(date +%s)
kill -CONT "$DAEMON_PID"
wait_run "$run" 120
took=$(($(date +%s) - t0))
ok "the daemon lives on after ingesting them (pid $DAEMON_PID)" kill -0 "$DAEMON_PID" ||
	diag "$(tail -30 "$DAEMON_LOG")"
is "$(run_state "$run")" failed "the run failed (in $took s)"

state() { sql "select state from steps where run_id = $run and step_id = '$1'"; }
error() { sql "select error from steps where run_id = $run and step_id = '$1'"; }
stored() { sql "select count(*) from step_records r join steps s on s.id = r.step where s.run_id = $run and s.step_id = '$1'"; }

is "$(state big)" failed "a 4 GiB records.tsv fails its step"
is "$(error big)" "$(dir big)/records.tsv: 4294967296 bytes, over the limit of 268435456 bytes (ingest_max_bytes)" \
	"naming the file, its size and the limit"

is "$(state longline)" failed "a 2 MiB line fails its step"
is "$(error longline)" "$(dir longline)/records.tsv:1: line longer than 1048576 bytes (ingest_max_line)" \
	"naming the file, the line and the limit"

is "$(state many)" failed "1001 records fail a step limited to 1000"
is "$(error many)" "$(dir many)/records.tsv: more than 1000 records (ingest_max_records)" \
	"naming the file and the limit"
is "$(stored many)" 0 "and none of its records is kept"

is "$(state hugeexit)" failed "a 2 GiB exit.tsv fails its step"
is "$(error hugeexit)" "$(dir hugeexit)/exit.tsv: 2147483648 bytes, over the limit of 1048577 bytes (ingest_max_line: exit.tsv is one line)" \
	"naming the file, its size and the limit"

is "$(state badexit)" failed "an exit record whose error is not UTF-8 fails its step once"
is "$(error badexit)" 'broken \xff\xfe tail' "its error stored with the bad bytes escaped"

is "$(state badrecord)" failed "a record that is not UTF-8 fails its step"
is "$(error badrecord)" "$(dir badrecord)/records.tsv:2: field 'message' is not valid UTF-8" \
	"naming the file, the line and the field"
is "$(stored badrecord)" 0 "and none of its records is kept"

is "$(state badtime)" succeeded "an exit record with a start time past year 9999 is ingested"
is "$(stored badtime)" 2 "its records are kept"
is "$(sql "select coalesce(started_at < now(), true) from steps where run_id = $run and step_id = 'badtime'")" t \
	"and the user's start time is not"

is "$(grep -c 'cannot record step' "$DAEMON_LOG")" 0 "no state update failed on the way" ||
	diag "$(grep 'cannot record step' "$DAEMON_LOG" | head -3)"

# ---- and the next run runs ----------------------------------------------------
printf 'name: after\nsteps:\n  - { id: local, plugin: smoke, on: daemon }\n' >"$TEST_TMP/after.yaml"
chmod 0644 "$TEST_TMP/after.yaml"
next=$(submit_as bob "$TEST_TMP/after.yaml")
wait_run "$next" 60
is "$(run_state "$next")" succeeded "bob's next run succeeds on the same daemon"
ok "the daemon still runs" kill -0 "$DAEMON_PID"

done_testing
