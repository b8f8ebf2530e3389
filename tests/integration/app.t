#!/bin/bash
# A developer's own application (issue 24), on the local cluster with Debian's
# Open MPI and a replayed ncu (tests/apps/ncu-replay: no GPU here, so the
# plugin's command line is what is asserted, and a recorded H100 table
# stands in for ncu's output):
#   1. a program in alice's own directory (absolute path, its input deck in
#      its workdir, a shared library of its own) runs through the ncu
#      plugin's launcher path (srun), as alice, with the step's env and a
#      module of a stand-in module system loaded;
#   2. a 4-rank srun job over 2 nodes (tests/apps/mpi_ranks.c) is one MPI
#      world, every rank profiled, each kernel record tagged with its rank
#      and its node;
#   3. a bad workdir is refused at validation (a path leaving the run
#      directory) and at start (a directory that is not there), a module
#      that does not load and a node without a module system fail at start,
#      each error naming the path or the module.
. "$(dirname "$0")/../lib.sh"
need_cluster
command -v mpicc >/dev/null || bail_out "no mpicc: scripts/deps installs openmpi-bin and libopenmpi-dev"
. "$ROOT/tests/daemon_lib.sh"
daemon_setup

A=$ROOT/tests/apps
HOME_A=$(getent passwd alice | cut -d: -f6)
APP=$HOME_A/app24-$$
on_exit "rm -rf '$APP'"
as alice mkdir -p "$APP/bin" "$APP/lib" "$APP/run" "$APP/modules"
as alice cp -r "$A/standin-modules/." "$APP/modules/"
as alice cp "$A/ncu-replay" "$ROOT/tests/fixtures/ncu/kernel_abc.raw.csv" \
	"$ROOT/tests/fixtures/ncu/ncu-metrics.recorded.tsv" "$APP/"
as alice cc -shared -fPIC -o "$APP/lib/libuserapp.so" "$A/libuserapp.c" ||
	bail_out "cannot build libuserapp.so"
as alice cc -o "$APP/bin/userapp" "$A/userapp.c" -L"$APP/lib" -luserapp \
	-Wl,-rpath,'$ORIGIN/../lib' || bail_out "cannot build userapp"
as alice mpicc -o "$APP/bin/mpi_ranks" "$A/mpi_ranks.c" || bail_out "cannot build mpi_ranks"
as alice sh -c "echo 'deck 7' > '$APP/run/deck.in'"
daemon_start

common() { # the ncu options every pipeline here shares
	cat <<YAML
      ncu: $APP/ncu-replay
      arch: "90"
      metrics_table: $APP/ncu-metrics.recorded.tsv
YAML
}
cat >"$TEST_TMP/own.yaml" <<YAML
name: app24-own
steps:
  - id: profile
    plugin: ncu
    workdir: ~/app24-$$/run
    env: { APP_GREETING: hello, MODULESHOME: $APP/modules, NCU_REPLAY_CSV: $APP/kernel_abc.raw.csv }
    modules: [standin/1.0]
    tasks: 2
    with:
      command: [$APP/bin/userapp, deck.in]
$(common)
YAML
cat >"$TEST_TMP/mpi.yaml" <<YAML
name: app24-mpi
steps:
  - id: profile
    plugin: ncu
    env: { NCU_REPLAY_CSV: $APP/kernel_abc.raw.csv }
    tasks: 4
    tasks_per_node: 2
    gpus_per_task: 1
    with:
      command: [$APP/bin/mpi_ranks]
      ranks: [all]
$(common)
YAML
bad() { # bad NAME KEYS...: a pipeline whose step has KEYS (yaml lines)
	local name=$1
	shift
	{
		printf 'name: app24-%s\nsteps:\n  - id: profile\n    plugin: ncu\n' "$name"
		printf '    %s\n' "$@"
		printf '    with:\n      command: [%s/bin/userapp, deck.in]\n' "$APP"
		common
	} >"$TEST_TMP/$name.yaml"
}
bad nodir "workdir: $APP/nowhere" "env: { NCU_REPLAY_CSV: $APP/kernel_abc.raw.csv }"
bad nomod "env: { MODULESHOME: $APP/modules }" "modules: [nosuch/2.0]"
bad nomodsys "env: { MODULESHOME: $APP/none }" "modules: [standin/1.0]"
bad escape "workdir: ../../etc"
chmod 0644 "$TEST_TMP"/*.yaml

# 3a: at validation, with the position
out=$(as alice "$BIN/roofline" validate "$TEST_TMP/escape.yaml" 2>&1)
like "$out" "escape.yaml:5:14: 'workdir' in step 'profile': path '../../etc' leaves the run directory" \
	"a workdir leaving the run directory is refused at validation, at its line and column"

# every run at once (the cluster runs them side by side)
declare -A run
for p in own mpi nodir nomod nomodsys; do
	run[$p]=$(submit_as alice "$TEST_TMP/$p.yaml")
	[[ -n ${run[$p]} ]] || diag "submit $p: $(tail -3 "$TEST_TMP/submit.err")"
done
for p in own mpi nodir nomod nomodsys; do
	wait_run "${run[$p]}" 60 || diag "run $p (${run[$p]}) did not end: $(run_state "${run[$p]}")"
done
dir() { sql "select spool_dir from runs where id = $1"; }

# 1: the user's own program
r=${run[own]}
is "$(run_state "$r")" succeeded "alice's own program, profiled through srun (run $r), succeeded" ||
	diag "$(sql "select error from steps where run_id = $r")"
out_dir=$(dir "$r")/profile/attempt-1
log=$(cat "$out_dir/program.rank-0.log" 2>/dev/null)
like "$log" "uid=$(id -u alice)" "it ran as alice"
like "$log" "cwd=$APP/run" "in its workdir (~/... resolved on the node)"
like "$log" "deck=deck 7" "it read the input deck beside it"
like "$log" "answer=42" "its own shared library was loaded (RUNPATH)"
like "$log" "APP_GREETING=hello" "env reached the program"
like "$log" "STANDIN_HOME=$APP/modules/standin-1.0" "the module's variable reached the program"
like "$log" "LOADEDMODULES=standin/1.0" "the module is loaded"
args=$(cat "$out_dir/ncu.rank-0.csv.args" 2>/dev/null)
is "$(tail -3 <<<"$args" | tr '\n' ' ')" "-- $APP/bin/userapp deck.in " \
	"ncu's command line ends with -- PROGRAM ARGS (absolute path as written)"
like "$args" "--log-file
$out_dir/ncu.rank-0.csv" "ncu writes rank 0's table to ncu.rank-0.csv"
like "$args" "--metrics
" "ncu is asked for the metric set"
is "$(sql "select count(*) from step_records where run_id = $r and kind = 'kernel' and fields->>'rank' = '0'")" \
	"$(sql "select count(*) from step_records where run_id = $r and kind = 'kernel'")" \
	"every kernel record is rank 0's"
like "$(cat "$out_dir/program.rank-1.log" 2>/dev/null)" "deck=deck 7" \
	"rank 1 ran the program too (tasks: 2, one CPU each: the job asked for them)"
ok "rank 1 was not profiled (ranks: [0] by default)" test ! -e "$out_dir/ncu.rank-1.csv"
like "$(cat "$out_dir/job.out")" "running 2 ranks with [^ ]*/srun in $APP/run, ncu on the named rank" \
	"the plugin's launcher path: srun, in the workdir"
like "$(sql "select fields->>'modules' || ' ' || (fields->>'workdir') from step_records where run_id = $r and kind = 'collect_summary'")" \
	"standin/1.0 $APP/run" "the summary records the modules loaded and the workdir"
like "$(sql "select options from steps where run_id = $r")" "module	name=standin/1.0" \
	"the step's modules are recorded with the run (steps.options)"

# 2: four ranks over two nodes
r=${run[mpi]}
out_dir=$(dir "$r")/profile/attempt-1
is "$(run_state "$r")" succeeded "4 ranks over 2 nodes (run $r) succeeded" ||
	diag "$(sql "select error from steps where run_id = $r")
$(tail -n 20 "$out_dir/launcher.log" "$out_dir/job.out" "$out_dir"/program.rank-*.log 2>&1)"
for k in 0 1 2 3; do
	like "$(cat "$out_dir/program.rank-$k.log" 2>/dev/null)" "rank $k of 4 sum 6 gpus [0-9,]* node " \
		"rank $k was one of one MPI world of 4 (pmix under srun)"
done
gpus_of() { sed -n 's/.* gpus \([^ ]*\) node.*/\1/p' "$out_dir/program.rank-$1.log" 2>/dev/null; }
g0=$(gpus_of 0) g1=$(gpus_of 1)
ok "gpus_per_task: 1: ranks 0 and 1 of one node have a GPU each, not the same ($g0, $g1)" \
	test -n "$g0" -a "$g0" != none -a "$g0" != "$g1"
per_rank=$(sql "select fields->>'rank', fields->>'node', count(*) from step_records where run_id = $r
	and kind = 'kernel' group by 1, 2 order by 1" | tr '\n' ' ')
note "kernel records per rank: $per_rank"
is "$(sql "select count(distinct fields->>'rank') from step_records where run_id = $r and kind = 'kernel'")" 4 \
	"kernel records of 4 ranks"
is "$(sql "select count(distinct fields->>'node') from step_records where run_id = $r and kind = 'kernel'")" 2 \
	"from 2 nodes"
is "$(sql "select count(*) from (select fields->>'node' from step_records where run_id = $r and kind = 'kernel'
	and fields->>'rank' in ('0','1') group by 1) x")" 1 "ranks 0 and 1 share a node (tasks_per_node: 2)"
for k in 0 1 2 3; do
	node=$(sql "select distinct fields->>'node' from step_records where run_id = $r and kind = 'kernel' and fields->>'rank' = '$k'")
	like "$(cat "$out_dir/program.rank-$k.log" 2>/dev/null)" "node $node\$" "rank $k's records name its node ($node)"
done

# 3b: at start, each naming what failed
err() { sql "select error from steps where run_id = $1"; }
is "$(run_state "${run[nodir]}")" failed "a workdir that is not there fails the run"
like "$(err "${run[nodir]}")" "workdir '$APP/nowhere' on node [a-z0-9-]*: No such file or directory" \
	"its error names the path and the node"
is "$(run_state "${run[nomod]}")" failed "a module that does not load fails the run"
like "$(err "${run[nomod]}")" "module 'nosuch/2.0' did not load" "its error names the module"
is "$(run_state "${run[nomodsys]}")" failed "modules on a node without a module system fail the run"
like "$(err "${run[nomodsys]}")" "no module system [(]Lmod or Environment Modules[)]" "its error says so"
done_testing
