#!/bin/bash
# Fan-out over the multi-node local cluster (issues 9 and 10): unused nodes
# are recorded with Slurm's word, a fan-in step runs over the instances that
# succeeded and lists the others, a node that dies is named and its step's
# retry goes elsewhere, and a retry pinned to a dead node gives up at its
# pending limit.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

mapfile -t NODES < <(scontrol show hostnames "$(sinfo -h -p gpu -o '%N' | head -1)")
((${#NODES[@]} >= 4)) || bail_out "fanout.t needs a cluster of 4 nodes or more, not ${#NODES[@]}"
resume_all() { # every drained or down node back (one at a time: a list with an idle node is refused)
	local n
	for n in $(sinfo -h -p gpu -t drain,down -o '%N' | xargs -r scontrol show hostnames); do
		scontrol update nodename="$n" state=resume >/dev/null 2>&1 || true
	done
}
on_exit resume_all

yaml() { # yaml NAME BODY
	printf '%s\n' "$2" >"$TEST_TMP/$1.yaml"
	chmod 0644 "$TEST_TMP/$1.yaml"
}
steps_of() { sql "select string_agg(step_id || case when node = '' then '' else '@' || node end || ':' || state, ',' order by step_id, node) from steps where run_id = $1"; }

# ---- a drained node is a fact; one failing node does not cost the others ------
drained=${NODES[3]} failing=${NODES[2]}
scontrol update nodename="$drained" state=drain reason="fanout test drain"
yaml fan "name: fan
slurm: { partition: gpu, gres: \"gpu:1\", nodes: each }
steps:
  - { id: probe, plugin: smoke, with: { fail_node: $failing } }
  - { id: summary, plugin: smoke, on: daemon, needs: [probe] }"
run=$(submit_as alice "$TEST_TMP/fan.yaml")
wait_run "$run" 90
is "$(sql "select count(*) filter (where used) || ' used, ' || string_agg(case when not used then node || ' ' || slurm_state || ' (' || reason || ')' end, ',') from run_nodes where run_id = $run")" \
	"$((${#NODES[@]} - 1)) used, $drained DRAINED (fanout test drain)" \
	"the run records every node: the drained one with Slurm's state and reason"
like "$(as alice "$BIN/roofline" status "$run")" "node $drained not used: DRAINED \(fanout test drain\)" \
	"roofline status shows the unused node"
as alice "$BIN/roofline" status --json "$run" >"$TEST_TMP/status.json"
ok "and status --json, under unused_nodes, as run_nodes has it" \
	"$ROOT/tests/tools/json_match" "$TEST_TMP/status.json" \
	"$(sql "select node, slurm_state, reason from run_nodes where run_id = $run and not used order by node")" \
	unused_nodes node slurm_state reason
is "$(sql "select state from steps where run_id = $run and step_id = 'summary'")" succeeded \
	"the fan-in step ran although $failing failed"
is "$(sql "select fields->>'input_records' from step_records r join steps s on s.id = r.step where s.run_id = $run and s.step_id = 'summary' and r.kind = 'smoke'")" \
	"$((${#NODES[@]} - 2))" "over the $((${#NODES[@]} - 2)) instances that succeeded"
is "$(sql "select string_agg(fields->>'step', ',' order by fields->>'step') from step_records r join steps s on s.id = r.step where s.run_id = $run and r.kind = 'missing_input'")" \
	"probe@$failing,probe@$drained" "and its output lists the failed and the skipped instance"
like "$(sql "select string_agg(fields->>'why', '|' order by fields->>'step') from step_records r join steps s on s.id = r.step where s.run_id = $run and r.kind = 'missing_input'")" \
	"failed: failing as asked on $failing.*node not used: DRAINED \(fanout test drain\)" \
	"each with why"
is "$(run_state "$run")" failed "the run still says it failed"
like "$(sql "select error from runs where id = $run")" "^probe@$failing: failing as asked" \
	"naming the failed node"
resume_all
wait_for "[[ \$(sinfo -h -n $drained -o '%T') == idle ]]" 30

yaml strict "name: strict
slurm: { partition: gpu, gres: \"gpu:1\", nodes: each }
steps:
  - { id: probe, plugin: smoke, with: { fail_node: $failing } }
  - { id: summary, plugin: smoke, on: daemon, needs: [probe], min_success: 100% }
  - { id: after, plugin: smoke, on: daemon, needs: [summary] }"
run=$(submit_as alice "$TEST_TMP/strict.yaml")
wait_run "$run" 90
is "$(sql "select error from steps where run_id = $run and step_id = 'summary'")" \
	"at most $((${#NODES[@]} - 1)) of ${#NODES[@]} instances of probe can succeed (${#NODES[@]} needed)" \
	"min_success: 100% skips the fan-in once one instance failed, saying how many can succeed"
is "$(sql "select state from steps where run_id = $run and step_id = 'after'")" skipped \
	"and what needs it"

# ---- gpu:all: each node's job gets all of that node's GPUs -------------------
yaml all 'name: all
slurm: { partition: gpu, gres: "gpu:all", nodes: each }
steps:
  - { id: probe, plugin: smoke }'
run=$(submit_as alice "$TEST_TMP/all.yaml")
wait_run "$run" 90
is "$(run_state "$run")" succeeded "a gres: gpu:all fan-out ran on every node"
want=""
for n in "${NODES[@]}"; do
	want+="${want:+,}$n=gpu:$(scontrol show node "$n" | sed -n 's/.*Gres=gpu:\([^ (]*\).*/\1/p' | awk -F: '{ print $NF }')"
done
is "$(sql "select string_agg(node || '=' || substring(options from 'gres=([^\t\n]*)'), ',' order by node) from steps where run_id = $run")" \
	"$want" "each instance asked for its node's own GPU count (Slurm's node record)"

# ---- a node that dies: named; a retry runs elsewhere, or, pinned to it, gives
#      up at its pending limit (one crash serves both runs) ---------------------
yaml pinned 'name: pinned
slurm: { partition: gpu, gres: "gpu:1", nodes: each }
steps:
  - { id: long, plugin: smoke, retries: 1, pending_limit: 8s, with: { sleep: 30 } }'
yaml floating 'name: floating
slurm: { partition: gpu, gres: "gpu:1" }
steps:
  - { id: long, plugin: smoke, retries: 1, with: { sleep: 12 } }'
prun=$(submit_as alice "$TEST_TMP/pinned.yaml")
wait_for "[[ \$(sql \"select count(*) from steps where run_id = $prun and state = 'running'\") == ${#NODES[@]} ]]" 60
run=$(submit_as alice "$TEST_TMP/floating.yaml")
wait_for "[[ \$(sql \"select state from steps where run_id = $run\") == running ]]" 60
dead=$(sql "select exec_node from steps where run_id = $run")
"$ROOT/scripts/cluster" node-kill "$dead" >/dev/null
on_exit "'$ROOT/scripts/cluster' node-start '$dead' >/dev/null 2>&1 || true"
wait_run "$run" 120
is "$(run_state "$run")" succeeded "a step whose node died (node-kill $dead) succeeded on its retry"
is "$(sql "select attempt from steps where run_id = $run")" 2 "in attempt 2"
other=$(sql "select exec_node from steps where run_id = $run")
ok "the retry ran on $other, not on the dead $dead" test "$other" != "$dead"
like "$(sql "select string_agg(detail, '|' order by e.id) from step_events e join steps s on s.id = e.step where s.run_id = $run and e.state = 'retry_wait'")" \
	"Slurm job [0-9]+ ended NODE_FAIL on $dead without an exit record: node $dead is DOWN.*\(Not responding\)" \
	"attempt 1's error names the node, its state and Slurm's reason"
is "$(sql "select avoid_nodes from steps where run_id = $run")" "$dead" "the dead node is avoided"

wait_run "$prun" 150
is "$(sql "select state || ' ' || attempt from steps where run_id = $prun and node = '$dead'")" "failed 2" \
	"the instance pinned to the dead $dead failed after its retry"
like "$(sql "select error from steps where run_id = $prun and node = '$dead'")" \
	"pending for [0-9]+ s, over the pending limit of 8 s \(Slurm: .*\): node $dead is DOWN" \
	"at its pending limit, with Slurm's reason and the node's state"
is "$(sql "select count(*) from steps where run_id = $prun and state = 'succeeded'")" "$((${#NODES[@]} - 1))" \
	"the other nodes' instances succeeded"
"$ROOT/scripts/cluster" node-start "$dead" >/dev/null

# ---- submit_threads: the submissions in flight at once, 1 to 16 -----------------
config_range_refused submit_threads

wait_for "resume_all; [[ -z \$(sinfo -h -p gpu -t down,drain,fail -o '%N') ]]" 90 ||
	diag "$(sinfo -p gpu)"
passes() { grep -c "${#NODES[@]} Slurm job requests of a pass, $1 in flight at once" "$DAEMON_LOG"; }
before_one=$(passes 1) before_four=$(passes 4)
yaml each "name: each
slurm: { partition: gpu, gres: \"gpu:1\", nodes: each }
steps:
  - { id: probe, plugin: smoke }"
run=$(submit_as alice "$TEST_TMP/each.yaml")
wait_run "$run" 90
is "$(run_state "$run")" succeeded "a fan-out over ${#NODES[@]} nodes with the default submit_threads"
ok "its pass had 4 submissions in flight at once" test "$(passes 4)" -gt "$before_four"
reloads=$(grep -c 'configuration and pipelines reloaded' "$DAEMON_LOG")
echo "submit_threads: 1" >>"$DAEMON_CONF"
kill -HUP "$DAEMON_PID"
wait_for "[[ \$(grep -c 'configuration and pipelines reloaded' '$DAEMON_LOG') -gt $reloads ]]" 20 ||
	diag "$(tail -5 "$DAEMON_LOG")"
run=$(submit_as alice "$TEST_TMP/each.yaml")
wait_run "$run" 90
is "$(run_state "$run")" succeeded "after a reload with submit_threads: 1, the same fan-out succeeds"
is "$(sql "select count(*) from steps where run_id = $run and state = 'succeeded' and exec_node = node")" \
	"${#NODES[@]}" "every instance on its node"
ok "its pass had 1 submission in flight at once" test "$(passes 1)" -gt "$before_one"

done_testing
