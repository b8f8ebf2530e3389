#!/bin/bash
# Hardening (issue 9) on the real local cluster: private run files, the
# daemon's own time-outs, what Slurm says of a step that cannot run, one
# daemon per database, wake-ups instead of polls, and the newcomer's traps.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

yaml() { # yaml NAME BODY: write $TEST_TMP/NAME.yaml, readable by the users
	printf '%s\n' "$2" >"$TEST_TMP/$1.yaml"
	chmod 0644 "$TEST_TMP/$1.yaml"
}

# ---- 1. a run's files are its owner's alone -----------------------------------
secret=$TEST_TMP/alice-secret.txt
echo "alice's program input" >"$secret"
chown alice: "$secret"
chmod 0600 "$secret"
yaml private 'name: private
slurm: { partition: gpu }
steps:
  - { id: job, plugin: smoke, with: { file: inputs/alice-secret.txt } }
  - { id: local, plugin: smoke, needs: [job], on: daemon }'
out=$(as alice "$BIN/roofline" submit --wait --attach "$secret" "$TEST_TMP/private.yaml" 2>&1)
is "$?" 0 "alice's run with an attached 0600 file succeeded"
run=$(head -1 <<<"$out")
rundir=$SPOOL/run-$run
is "$(sql "select fields->>'file_size' from step_records r join steps s on s.id = r.step where s.run_id = $run and s.step_id = 'job'")" \
	"$(stat -c %s "$secret")" "her Slurm job read the attached file"

files=0 dirs=0 readable=()
while IFS= read -r -d '' p; do
	if [[ -d $p ]]; then
		dirs=$((dirs + 1))
		as bob ls "$p" >/dev/null 2>&1 && readable+=("$p (listed)")
	else
		files=$((files + 1))
		as bob cat "$p" >/dev/null 2>&1 && readable+=("$p")
	fi
done < <(find "$SPOOL" -print0)
ok "the spool holds alice's files ($files files, $dirs directories)" test $((files >= 8 && dirs >= 6)) -eq 1
is "${#readable[@]}" 0 "bob can read or list none of them"
for p in "${readable[@]}"; do diag "bob reads $p"; done
like "$(as alice cat "$rundir/inputs/alice-secret.txt" 2>&1)" "alice's program input" \
	"alice reads her own attached file"
is "$(stat -c '%a %U' "$rundir/inputs/alice-secret.txt")" "600 alice" "the staged file is 0600 and hers"
is "$(stat -c '%a %U' "$rundir/inputs")" "700 alice" "inputs/ is 0700 and hers"
is "$(stat -c '%a %U' "$rundir")" "711 root" "the run directory cannot be listed (0711, root)"
is "$(stat -c '%a' "$SPOOL")" "711" "nor can the spool (0711)"
bad_modes=$(find "$rundir" -mindepth 2 -user alice -perm /077 -printf '%m %p\n')
is "$bad_modes" "" "nothing of alice's under the run has group or other bits"

# ---- 2. a step that ignores its signals is killed -----------------------------
yaml stubborn 'name: stubborn
steps:
  - { id: local, plugin: smoke, on: daemon, timeout: 3s, with: { stubborn: true, sleep: 120 } }'
t0=$(date +%s)
run=$(submit_as alice "$TEST_TMP/stubborn.yaml")
wait_run "$run" 60
elapsed=$(($(date +%s) - t0))
is "$(run_state "$run")" failed "a daemon step that ignores SIGALRM and SIGTERM fails its run"
is "$(sql "select error from steps where run_id = $run")" "timed out after 3 s (killed)" \
	"its error: timed out after 3 s (killed)"
ok "ended in ${elapsed} s, not after its 120 s sleep" test "$elapsed" -lt 60
like "$(cat "$DAEMON_LOG")" "step=local: still running [0-9]+ s after its 3 s timeout: killed its process group" \
	"the kill is logged"
ok "no process of the step is left" bash -c "! pgrep -u alice -f 'roofline-job .*/run-$run/'"

yaml stubborn-slurm 'name: stubborn-slurm
slurm: { partition: gpu }
steps:
  - { id: job, plugin: smoke, timeout: 4s, with: { stubborn: true, sleep: 120 } }'
run=$(submit_as alice "$TEST_TMP/stubborn-slurm.yaml")
wait_run "$run" 60
is "$(run_state "$run")" failed "a Slurm step that ignores SIGTERM fails its run before Slurm's 1-minute limit"
is "$(sql "select error from steps where run_id = $run")" "timed out after 4 s (killed)" \
	"its error: timed out after 4 s (killed)"
job=$(sql "select substring(e.detail from 'Slurm job ([0-9]+)') from step_events e join steps s on s.id = e.step where s.run_id = $run and e.state = 'pending' order by e.id limit 1")
wait_for "! squeue -h -j $job 2>/dev/null | grep -q ." 30
is "$(squeue -h -j "$job" 2>/dev/null)" "" "its Slurm job $job is gone"

# ---- 3. a job ended by a signal says which (the node cases: fanout.t) ---------
yaml aborts 'name: aborts
slurm: { partition: gpu }
steps:
  - { id: job, plugin: smoke, with: { crash: true } }'
run=$(submit_as alice "$TEST_TMP/aborts.yaml")
wait_run "$run" 60
like "$(sql "select error from steps where run_id = $run")" \
	"^Slurm job [0-9]+ ended FAILED on [a-z0-9-]+, killed by signal $(kill -l ABRT 2>/dev/null || echo 6) \(SIGABRT\) without an exit record" \
	"a job that died of SIGABRT names the signal and its node"

# ---- 3. a step that cannot run is told why, and gives up at its limit ---------
# every node of the partition drained: the job can only wait
nodes=$(sinfo -h -p gpu -o "%N" | head -1)
scontrol update nodename="$nodes" state=drain reason="hardening test drain"
on_exit "scontrol update nodename='$nodes' state=resume >/dev/null 2>&1 || true"
yaml floating 'name: floating
slurm: { partition: gpu }
steps:
  - { id: job, plugin: smoke, pending_limit: 6s }'
run=$(submit_as alice "$TEST_TMP/floating.yaml")
wait_for "[[ -n \$(sql \"select slurm_reason from steps where run_id = $run\") ]]" 30
like "$(as alice "$BIN/roofline" status "$run")" "job +pending .*Slurm: " \
	"roofline status shows what Slurm says of the pending job"
wait_run "$run" 60
is "$(run_state "$run")" failed "a job pending past its pending_limit fails the run"
like "$(sql "select error from steps where run_id = $run")" \
	"^Slurm job [0-9]+ pending for [0-9]+ s, over the pending limit of 6 s \(Slurm: [A-Za-z]+" \
	"its error gives the limit and Slurm's reason"
like "$(sql "select string_agg(detail, '|') from step_events e join steps s on s.id = e.step where s.run_id = $run")" \
	"Slurm: " "the reason was an event too (submit --wait shows it)"
scontrol update nodename="$nodes" state=resume

# ---- 4. one daemon per database ------------------------------------------------
grep -v '^pidfile:' "$DAEMON_CONF" >"$TEST_TMP/second.yaml"
out=$("$BIN/rooflined" --foreground --no-standby --config "$TEST_TMP/second.yaml" 2>&1)
rc=$?
is "$rc" 1 "a second rooflined on the same database exits 1"
like "$out" "another rooflined already runs on this database \(rooflined pid $DAEMON_PID on " \
	"and names the daemon that holds it"
ok "the first daemon runs on" kill -0 "$DAEMON_PID" || diag "$(tail -30 "$DAEMON_LOG")"

# ---- 5. dependents start at once: a 1-hour poll interval does not hold them ---
daemon_stop
sed -i 's/^poll_interval: .*/poll_interval: 1h/' "$DAEMON_CONF"
daemon_start
yaml chain 'name: chain
steps:
  - { id: a, plugin: smoke, on: daemon }
  - { id: b, plugin: smoke, on: daemon, needs: [a] }
  - { id: c, plugin: smoke, on: daemon, needs: [b] }
  - { id: d, plugin: smoke, on: daemon, needs: [c] }'
run=$(submit_as alice "$TEST_TMP/chain.yaml")
wait_run "$run" 60
is "$(run_state "$run")" succeeded \
	"a 4-step daemon chain ran with a 1-hour poll interval (new runs and ended children wake the daemon)" ||
	diag "$(tail -30 "$DAEMON_LOG")"
daemon_stop
sed -i 's/^poll_interval: .*/poll_interval: 300ms/' "$DAEMON_CONF"

# ---- 7. submit --wait without a daemon says so ---------------------------------
yaml lonely 'name: lonely
steps:
  - { id: a, plugin: smoke, on: daemon }'
out=$(timeout 8 runuser -u alice -- env -u PGUSER PATH="$PATH" PGHOST="$PGHOST" PGPORT="$PGPORT" \
	PGDATABASE="$PGDATABASE" LSAN_OPTIONS="$LSAN_OPTIONS" "$BIN/roofline" submit --wait "$TEST_TMP/lonely.yaml" 2>&1)
like "$out" "no rooflined is running for this database: run [0-9]+ stays queued" \
	"submit --wait says within seconds that no daemon runs"
lonely=$(head -1 <<<"$out")
as alice "$BIN/roofline" cancel "$lonely" >/dev/null
daemon_start
wait_run "$lonely" 30
is "$(run_state "$lonely")" cancelled "the lonely run is cancelled once a daemon comes"

done_testing
