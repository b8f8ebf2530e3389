#!/bin/bash
# Who may do what: identities come from PostgreSQL peer authentication, jobs
# run as their owner, users see and cancel only their own runs, facility
# pipelines belong to the facility and their schedules fire.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup

# A facility pipeline with a nightly schedule, in the pipeline directory.
cat >"$FACILITY_DIR/nightly-smoke.yaml" <<'YAML'
name: nightly-smoke
schedule: "30 1 * * *"
slurm: { partition: gpu, gres: "gpu:1", time: "00:02:00", nodes: each }
steps:
  - { id: probe, plugin: smoke, with: { message: "nightly" } }
  - { id: summary, plugin: smoke, needs: [probe], on: daemon }
YAML
daemon_start

is "$(sql "select schedule from pipelines where name = 'nightly-smoke'")" "30 1 * * *" \
	"the facility pipeline is loaded with its schedule"
like "$(sql "select next_fire_at > now() from pipelines where name = 'nightly-smoke'")" t \
	"its next slot is in the future"

# -- a schedule missed while the daemon was down fires once at start
daemon_stop
sql "update pipelines set next_fire_at = now() - interval '3 years' where name = 'nightly-smoke'" >/dev/null
daemon_start
ok "the missed schedule fired" wait_for "[[ \$(sql \"select count(*) from runs where pipeline_name = 'nightly-smoke'\") -ge 1 ]]" 30
sleep 2
is "$(sql "select count(*) from runs where pipeline_name = 'nightly-smoke'")" 1 \
	"once, not once per missed slot"
frun=$(sql "select id from runs where pipeline_name = 'nightly-smoke'")
is "$(sql "select trigger || ',' || facility || ',' || owner from runs where id = $frun")" \
	"schedule,true,rlfacility" "it is a facility run"
wait_run "$frun" 60
is "$(run_state "$frun")" succeeded "the facility run succeeded"
probes=$(sinfo -h -N -p gpu -o %N | sort -V | sed 's/^/probe@/' | paste -sd,)
like "$probes" '^probe@rl-node1,probe@rl-node2(,|$)' "the partition has several nodes (the local cluster's)"
is "$(sql "select string_agg(step_id || '@' || node, ',' order by id) from steps where run_id = $frun")" \
	"$probes,summary@" "nodes: each gave one probe job per node of the partition"
is "$(sql "select distinct fields->>'uid' from step_records where run_id = $frun")" \
	"$(id -u rlfacility)" "facility jobs run as the facility user, not root"
like "$(sql "select next_fire_at > now() from pipelines where name = 'nightly-smoke'")" t \
	"the next slot moved to the future"

# -- alice's run, and what bob can do about it
cat >"$TEST_TMP/mine.yaml" <<'YAML'
name: mine
slurm: { partition: gpu, gres: "gpu:1", time: "00:02:00" }
steps:
  - { id: work, plugin: smoke, with: { sleep: 300 } }
YAML
chmod 0644 "$TEST_TMP/mine.yaml"
arun=$(submit_as alice "$TEST_TMP/mine.yaml")
like "$arun" '^[0-9]+$' "alice queued run $arun"
ok "alice's job runs" wait_for "[[ \$(sql \"select state from steps where run_id = $arun\") == running ]]" 60
job=$(sql "select slurm_job_id from steps where run_id = $arun")
is "$(squeue -h -j "$job" -o %U)" "$(id -u alice)" "alice's Slurm job runs with alice's uid"
is "$(sql "select owner from runs where id = $arun")" alice "the database recorded alice as the owner"

unlike "$(as bob "$BIN/roofline" list)" "^$arun " "bob does not see alice's run in his list"
like "$(as alice "$BIN/roofline" list)" "(^|
)$arun +mine +alice" "alice does"
# --json: one document, parsed by Python, compared with what alice's own
# psql session reads (row-level security decides for both)
list_sql="select id, pipeline_name, owner, state, to_char(submitted_at, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
	to_char(ended_at, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') from runs order by id desc limit 200"
for u in alice bob; do
	as "$u" "$BIN/roofline" list --json >"$TEST_TMP/list-$u.json"
	ok "list --json as $u: the runs $u's psql session reads" "$ROOT/tests/tools/json_match" \
		"$TEST_TMP/list-$u.json" "$(as "$u" psql -X -q -t -A -c "$list_sql")" \
		runs id pipeline owner state submitted_at ended_at
done
ok "alice's list --json holds run $arun, bob's not" python3 -c 'import json, sys
a = [r["id"] for r in json.load(open(sys.argv[1]))["runs"]]
b = [r["id"] for r in json.load(open(sys.argv[2]))["runs"]]
assert int(sys.argv[3]) in a and int(sys.argv[3]) not in b' \
	"$TEST_TMP/list-alice.json" "$TEST_TMP/list-bob.json" "$arun"
like "$(as alice "$BIN/roofline" list --help)" "--json" "list --help mentions --json"
as bob "$BIN/roofline" status "$arun" >/dev/null 2>&1
is "$?" 1 "bob cannot see its status"
as bob "$BIN/roofline" cancel "$arun" >/dev/null 2>&1
is "$?" 1 "bob cannot cancel it"
is "$(run_state "$arun")" running "it is still running"
out=$(as bob psql -X -q -t -A -c "insert into runs (pipeline_name, yaml, owner) values ('x', 'x', 'alice')" 2>&1)
like "$out" "permission denied" "bob cannot queue a run in alice's name"
out=$(as bob psql -X -q -t -A -c "update runs set cancel_requested = true where id = $arun returning id" 2>&1)
is "$out" "" "bob's direct UPDATE touches nothing"
out=$(as bob psql -X -q -t -A -c "update runs set state = 'succeeded' where id = $arun" 2>&1)
like "$out" "permission denied" "bob cannot change a run's state"
like "$(as bob "$BIN/roofline" list)" "nightly-smoke" "everyone sees the facility's runs"
as bob "$BIN/roofline" cancel "$frun" >/dev/null 2>&1
is "$?" 1 "but cannot cancel them"

ok "alice cancels her own run" as alice "$BIN/roofline" cancel "$arun"
wait_run "$arun" 30
is "$(run_state "$arun")" cancelled "alice's run is cancelled"

# -- root, and the daemon's own database role (the owner of the table runs),
#    are refused by submit itself, at once, and queue nothing
before=$(sql "select count(*) from runs")
SECONDS=0
out=$(env -u ROOFLINE_DB "$BIN/roofline" submit "$TEST_TMP/mine.yaml" 2>&1)
is "$?" 1 "root's submit exits 1"
is "$out" "roofline submit: refusing to queue a run as root (a run runs as the user who submits it: submit as yourself)" \
	"and says why"
daemon_role=$(sql "select current_user")
is "$daemon_role" "$(sql "select tableowner from pg_tables where tablename = 'runs'")" \
	"root's role is the daemon's: the owner of the table runs"
# an OS user of that name (add-user refuses it: it is no roofline user)
if ! getent passwd "$daemon_role" >/dev/null; then
	useradd --no-create-home --shell /bin/sh "$daemon_role" || bail_out "cannot add OS user $daemon_role"
	# gone again at the end: the package tests want no such account
	on_exit "userdel '$daemon_role'"
fi
out=$(as "$daemon_role" "$BIN/roofline" submit "$TEST_TMP/mine.yaml" 2>&1)
is "$?" 1 "a submit through the daemon's role (OS user $daemon_role, not root) exits 1"
is "$out" "roofline submit: refusing to queue a run as '$daemon_role', the daemon's own database role (it owns the table runs; submit as yourself)" \
	"and says why"
ok "both at once (${SECONDS}s)" test "$SECONDS" -lt 10
is "$(sql "select count(*) from runs")" "$before" "neither queued a run"

# -- the invalid corpus: every file refused by submit with its position, and
#    nothing queued (the daemon's plugin directory, so plugin checks apply)
before=$(sql "select count(*) from runs")
refused=0 total=0
for f in "$ROOT"/tests/pipelines/invalid/*.yaml; do
	total=$((total + 1))
	cp "$f" "$TEST_TMP/corpus.yaml" && chmod 0644 "$TEST_TMP/corpus.yaml"
	pos=$(sed -n '1s/^# expect: \([0-9]*:[0-9]*\):.*/\1/p' "$f")
	out=$(as alice "$BIN/roofline" submit --plugin-dir "$BUILD/plugins" "$TEST_TMP/corpus.yaml" 2>&1)
	rc=$?
	if ((rc == 1)) && [[ $out == *"corpus.yaml:$pos:"* ]]; then
		refused=$((refused + 1))
	else
		diag "$(basename "$f"): exit $rc: $out"
	fi
done
is "$refused" "$total" "all $total invalid pipelines refused by submit with their file:line:col"
is "$(sql "select count(*) from runs")" "$before" "and none of them queued a run"

# -- what Slurm would refuse (tests/pipelines/invalid-on-cluster/): valid
#    pipelines that submit refuses at the key's position, queueing nothing;
#    validate --cluster refuses them too, validate alone does not.  A
#    partition with a MaxTime for the time cases:
node=$(sinfo -h -p gpu -o %n | head -1)
scontrol create PartitionName=rltest-short Nodes="$node" MaxTime=00:10:00 State=UP ||
	bail_out "cannot create partition rltest-short"
on_exit "scontrol delete PartitionName=rltest-short"
before=$(sql "select count(*) from runs")
for f in "$ROOT"/tests/pipelines/invalid-on-cluster/*.yaml; do
	name=$(basename "$f" .yaml)
	[[ $(head -1 "$f") =~ ^\#\ expect:\ ([0-9]+:[0-9]+):\ (.+)$ ]] ||
		{ fail "$name: first line is '# expect: LINE:COL: words'"; continue; }
	pos=${BASH_REMATCH[1]} words=${BASH_REMATCH[2]}
	cp "$f" "$TEST_TMP/$name.yaml" && chmod 0644 "$TEST_TMP/$name.yaml"
	out=$(as alice "$BIN/roofline" submit "$TEST_TMP/$name.yaml" 2>&1)
	rc=$?
	if ((rc == 1)) && [[ $out == "$TEST_TMP/$name.yaml:$pos: $words"* && $out != *$'\n'* ]]; then
		pass "submit refuses $name: $pos: $words"
	else
		fail "submit refuses $name: $pos: $words"
		diag "exit $rc: $out"
	fi
	out=$(as alice "$BIN/roofline" validate --cluster "$TEST_TMP/$name.yaml" 2>&1)
	rc=$?
	((rc == 1)) && [[ $out == "$TEST_TMP/$name.yaml:$pos: $words"* ]]
	ok "validate --cluster refuses $name" test $? = 0 || diag "exit $rc: $out"
	out=$(as alice "$BIN/roofline" validate "$TEST_TMP/$name.yaml" 2>&1)
	is "$out" "$TEST_TMP/$name.yaml: ok" "validate alone passes $name"
done
is "$(sql "select count(*) from runs")" "$before" "none of them queued a run"

# -- a cluster that cannot be reached: one warning line, and the run is queued
cat >"$TEST_TMP/quick.yaml" <<'YAML'
name: quick
slurm: { partition: gpu, time: "00:02:00" }
steps:
  - { id: a, plugin: smoke }
YAML
chmod 0644 "$TEST_TMP/quick.yaml"
out=$(as alice env SLURM_CONF=/nonexistent/slurm.conf "$BIN/roofline" submit "$TEST_TMP/quick.yaml" 2>"$TEST_TMP/warn")
is "$?" 0 "without a readable slurm.conf, submit still queues"
like "$out" '^[0-9]+$' "and prints the run id"
is "$(cat "$TEST_TMP/warn")" "roofline submit: warning: partition, gres and time not checked against the Slurm cluster: cannot read /nonexistent/slurm.conf: No such file or directory" \
	"after one warning line"
is "$(sql "select count(*) from runs")" "$((before + 1))" "one run queued"
as alice env SLURM_CONF=/nonexistent/slurm.conf "$BIN/roofline" validate --cluster "$TEST_TMP/quick.yaml" >/dev/null 2>&1
is "$?" 1 "validate --cluster without a cluster fails"

# -- an invalid pipeline submits nothing
before=$(sql "select count(*) from runs")
printf 'name: bad\nsteps:\n  - { id: a, plugin: smoke, with: { mesage: x } }\n' >"$TEST_TMP/bad.yaml"
chmod 0644 "$TEST_TMP/bad.yaml"
out=$(as alice "$BIN/roofline" submit "$TEST_TMP/bad.yaml" 2>&1)
is "$?" 1 "submitting an invalid pipeline fails"
like "$out" "bad.yaml:3:[0-9]+: .*'mesage'" "with file:line:col"
is "$(sql "select count(*) from runs")" "$before" "and queues nothing"

done_testing
