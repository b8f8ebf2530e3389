#!/bin/bash
# Benchmarks must not rot: every script of bench/ run whole at its smoke size
# (BENCH_SMOKE=1, docs/benchmarks.md) with this test's build (BENCH_VARIANT),
# one test per script: it exits 0 AND prints the lines and writes the files
# it exists for, with contents that follow from the smoke sizes or from the
# recordings the GPU scripts replay.  The scripts that need a cluster use
# this test's (bench/lib.sh: a running cluster is used, not stopped); the
# ones that need a GPU run what needs none and say what they skipped.  Their
# outputs go under $TEST_TMP; the committed results and docs stay as they
# are (checked last).  The daemon benchmarks (one after the other: one
# daemon per database), the PostgreSQL-only ones (databases of their own),
# the compilers and the rest run side by side: mostly they wait.  The tree
# is built before (run-integration, make check), so the scripts' own make
# calls find nothing to do.  The helpers they drive (bench/*.c: the Makefile's
# TEST_DEPS; bench/*.py, bench/findings-bench.sql) run inside them;
# bench/*.cu are compiled (no GPU here), and every script must pass bash -n
# and the shell linter.
. "$(dirname "$0")/../lib.sh"
need_cluster

export BENCH_SMOKE=1 BENCH_VARIANT=$VARIANT BENCH_USER=rlbench
# Leaks of libslurm's and libpq's process-lifetime state are not ours.
export LSAN_OPTIONS=${LSAN_OPTIONS:-detect_leaks=0}
cd "$ROOT" || bail_out "no $ROOT"
T0=$SECONDS
committed() { git -C "$ROOT" status --porcelain -- docs tests/fixtures etc sql | md5sum; }
BEFORE=$(committed)

# run_smoke NAME CMD...: run CMD (a bench script) with
# BENCH_SMOKE_DIR=$TEST_TMP/NAME, its output in $TEST_TMP/NAME.out, "exit
# status, seconds" in $TEST_TMP/NAME.rc.
run_smoke() {
	local name=$1 t0=$SECONDS
	shift
	mkdir -p "$TEST_TMP/$name"
	BENCH_SMOKE_DIR=$TEST_TMP/$name "$@" >"$TEST_TMP/$name.out" 2>&1
	echo "$? $((SECONDS - t0))" >"$TEST_TMP/$name.rc"
}
# result NAME: RC, D (its directory) and O (its output) of a smoke that ended.
result() {
	local secs='?'
	D=$TEST_TMP/$1
	O=$TEST_TMP/$1.out
	read -r RC secs <"$TEST_TMP/$1.rc" 2>/dev/null || RC=255
	note "$1: exit $RC in $secs s"
}
smoke() { run_smoke "$@"; result "$1"; }

# expect NAME CHECK...: one test, passed when the last smoke exited 0 and
# every CHECK holds.  A CHECK is a regular expression (grep -E) a line of the
# output matches, FILE::REGEX (FILE under D) or N@FILE::REGEX (exactly N
# lines of FILE match), or !CMD (a shell command that must succeed).
expect() {
	local name=$1 c f re n bad=()
	shift
	((RC == 0)) || bad+=("exit status $RC, not 0")
	for c in "$@"; do
		if [[ $c == '!'* ]]; then
			eval "${c#!}" >/dev/null 2>&1 || bad+=("failed: ${c#!}")
		elif [[ $c == *::* ]]; then
			f=${c%%::*} re=${c#*::} n=
			if [[ $f == *@* ]]; then n=${f%%@*} f=${f#*@}; fi
			if [[ ! -s $D/$f ]]; then
				bad+=("no file $f")
			elif [[ -n $n ]]; then
				[[ $(grep -cE -- "$re" "$D/$f") == "$n" ]] ||
					bad+=("$f: $(grep -cE -- "$re" "$D/$f") lines match '$re', not $n")
			else
				grep -qE -- "$re" "$D/$f" || bad+=("$f: no line matches '$re'")
			fi
		else
			grep -qE -- "$c" "$O" || bad+=("no output line matches '$c'")
		fi
	done
	if ((${#bad[@]} == 0)); then
		pass "$name"
		return 0
	fi
	fail "$name"
	printf '  %s\n' "${bad[@]}" | while IFS= read -r l; do diag "$l"; done
	diag "$(tail -15 "$O")"
	return 1
}

# ---- in the background: on this test's cluster; the compilers --------------------------
{
	run_smoke chain-bench bench/chain-bench.sh
	run_smoke fanout-bench bench/fanout-bench.sh
	run_smoke engine-bench bench/engine-bench.sh
	run_smoke engine-ab bench/engine-ab.sh
	run_smoke night-scale bench/night-scale.sh
} &
DAEMON_GROUP=$!
{
	run_smoke history-bench bench/history-bench.sh
	run_smoke findings-bench bench/findings-bench.sh
} &
PG_GROUP=$!
NVCC=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
{
	if command -v shellcheck >/dev/null; then
		shellcheck -x -S warning bench/*.sh >"$TEST_TMP/shellcheck.out" 2>&1
		echo $? >"$TEST_TMP/shellcheck.rc"
	fi
	if [[ -n $NVCC ]]; then
		for f in bench/*.cu; do
			"$NVCC" -O3 -std=c++17 -arch=sm_90 -c -o "$TEST_TMP/cu.o" "$f" || break
		done >"$TEST_TMP/nvcc.out" 2>&1
		echo $? >"$TEST_TMP/nvcc.rc"
	fi
} &
TOOLS_GROUP=$!
on_exit "kill $DAEMON_GROUP $PG_GROUP $TOOLS_GROUP 2>/dev/null"

# ---- no cluster, no GPU -----------------------------------------------------------
if git rev-parse -q --verify HEAD >/dev/null; then
	smoke ab-build bench/ab-build.sh HEAD "$TEST_TMP/ab-build/tree" build/release/bin/rooflined
	expect "ab-build.sh: HEAD exported, make -n instead of the build, its commit printed" \
		"^$(git rev-parse --short HEAD)\$" \
		'ab-build: smoke: skipped the build of 1 target\(s\) \([1-9][0-9]* commands, make -n\)' \
		"tree/.ab-commit::^$(git rev-parse HEAD)\$" 'tree/Makefile::^all:'
else
	skip "not a git checkout: ab-build.sh exports a commit"
fi

smoke analysis-bench bench/analysis-bench.sh
expect "analysis-bench.sh: 2,000 rows parsed and analysed, 200 with invocations" \
	'^parse\+analyse +rows=2000 out=[1-9][0-9]* wall best=[0-9.]+ s' \
	'^analyse \(pre-parsed\) +rows=2000 out=[1-9]' \
	'^analyse, invocations: true +rows=200 out=[1-9][0-9]* '

smoke analysis-e2e bench/analysis-e2e.sh
expect "analysis-e2e.sh: base and new agree on every check and on the timed run" \
	'^check: [1-9][0-9]* runs, base working-tree\(smoke\) and new [0-9a-f]+\+?: records.tsv and logs identical$' \
	'^new / base: wall ' 'records.tsv identical in all 1 rounds \([1-9][0-9]* records\)' \
	'out-new/records.tsv::^point	' 'input/rows::^5000$'

smoke ncu-parse-bench bench/ncu-parse-bench.sh
expect "ncu-parse-bench.sh: 200 launches parsed" \
	'^200 launches, [0-9.]+ MB raw-page CSV .*: parse [0-9.]+ s .*best of 1$'

if command -v gnuplot >/dev/null; then
	smoke render-bench bench/render-bench.sh
	expect "render-bench.sh: each of the six charts rendered once" \
		'^kernel_abc +min +[0-9]+ ms +median +[0-9]+ ms +max +[0-9]+ ms +\(1 runs\)$' \
		'^kernel_abc png +min' '^50 kernels +min' '^compare +min' '^history +min' '^gnuplot alone +min'
else
	skip "gnuplot not installed: render-bench.sh"
fi

smoke report-bench bench/report-bench.sh
expect "report-bench.sh: the 500-kernel input made and both reports timed" \
	'500-kernel input: [1-9][0-9]* point records, kernels=500, page [1-9][0-9]* bytes' \
	'^kernel_abc +wall min +[0-9]+ +median' '^500 kernels +wall min +[0-9]+ +median'

smoke gpp-replay bench/gpp-replay.sh
# docs/benchmarks.md: GPP v1 -> v8 "2.70x under ncu at 40 igp"; v8's
# records: one kernel at three levels
expect "gpp-replay.sh: the recorded GPP runs analysed, docs/gpp.md's tables printed" \
	'^### SC20 versions at nw = 3' '^\| gpp_v8<3> \| 2\.70x \|$' \
	'3@h-v8/records.tsv::^point	kernel=void gpp_v8<3>\(gpp_args\)	' 'h-nw/exit.tsv::status=ok'

mtime() { stat -c %Y tests/fixtures/ncu/bad/*.csv | sort | md5sum; }
m0=$(mtime)
smoke ncu-bad-fixtures bench/ncu-bad-fixtures.sh
expect "ncu-bad-fixtures.sh: the corpus made again in scratch, identical, the committed one untouched" \
	'smoke: 9 files written to .*/ncu-bad-fixtures/bad, identical to tests/fixtures/ncu/bad/$' \
	'bad/truncated.csv::^"ID",' "![[ '$(mtime)' == '$m0' ]]"

# ---- the GPU scripts: what needs no GPU ------------------------------------------
smoke ceilings-gpu sh bench/ceilings-gpu.sh
expect "ceilings-gpu.sh: ert-bench's build resolved, plugins on the recorded run, tables, skips said" \
	'make -n build/[a-z]+/bin/ert-bench: [1-9][0-9]* commands' \
	'spec and ert plugins on tests/fixtures/ert/h100-quick.tsv: 18 ert ceilings' \
	'^name=fp64_fma	median=' 'smoke: skipped nvidia-smi, the nvcc build of stream-peer' \
	'tables.md::^\| fp64_fma \| [0-9.]+ \|' '18@ert/records.tsv::^ceiling	' 'spec/exit.tsv::status=ok'

smoke multi-gpu bench/multi-gpu.sh
expect "multi-gpu.sh: the recorded 4-GPU node replayed (p2p and concurrent), tables, skips said" \
	'ert plugin on tests/fixtures/p2p/p2p.tsv: 54 ceilings' \
	'ert plugin on tests/fixtures/p2p/concurrent.tsv: 72 ceilings' \
	'smoke: skipped nvidia-smi and every ert-bench run' \
	'54@p2p/records.tsv::^ceiling	.*	peer_index=[0-3]	peer_uuid=GPU-' \
	'72@concurrent/records.tsv::	mode=concurrent' \
	'tables.md::^\| p2p_memcpy_bidir \| 6 \| [0-9.]+ '

smoke collect-h100 bench/collect-h100.sh
expect "collect-h100.sh: cc 9.0 metric sets, GPU runs skipped, ncu_import on the recorded exports" \
	'^cc=90$' '^default=gpu__time_duration.sum,' '== abc-ours: skipped \(smoke: needs the GPU\)' \
	'== plugin-import: rc=0' '== plugin-import-default: rc=0' \
	'summary.tsv::^plugin-import	[0-9.]+	0	' '21@summary.tsv::	-	skipped	' \
	'3@plugin-import/records.tsv::^kernel	' '3@plugin-import-default/records.tsv::^kernel	'

smoke gpp-h100 bench/gpp-h100.sh
expect "gpp-h100.sh: build resolved (make -n), GPU steps skipped, recorded ncu steps through hierarchical and gpp-table.py" \
	'== build: rc=0' '== ncu-v8: skipped \(smoke: needs the GPU\)' \
	'smoke: bench/gpp-table.py on tests/fixtures/gpp: 32 kernel rows' \
	'summary.tsv::^plain-full-nw	-	skipped	' 'tables.md::^\| gpp_v8<3> \| 2\.70x \|$'

smoke ncu-passes bench/ncu-passes.sh
cp "$O" "$D/survey.tsv"
RC_SURVEY=$RC
smoke ncu-passes-select bench/ncu-passes.sh --select etc/ncu-metrics.tsv "$TEST_TMP/ncu-passes-select/tsv"
((RC == 0)) && RC=$RC_SURVEY
expect "ncu-passes.sh: survey and --select replay the H100's recorded pass counts line for line" \
	'^chosen: nersc-bytes-only\+fp64\+pipe \(3 passes\)$' \
	"!diff $TEST_TMP/ncu-passes/survey.tsv tests/fixtures/ncu/ncu-passes.survey.tsv" \
	"!diff <(grep -v '^gpu__' $O) tests/fixtures/ncu/ncu-passes.select.txt" \
	'tsv::^90	sm__ops_path_tensor_src_fp64.sum	.*	default	'

smoke tensor-h100 bench/tensor-h100.sh
expect "tensor-h100.sh: recorded passes, the committed table chosen again, recorded jobs summarised" \
	'^tensor_inst_hfma2 costs a pass \(4 -> 5\): extra$' '^gemm-bf16	-	skipped$' \
	"!diff <(cut -f1-3 $D/passes.tsv) <(cut -f1-3 tests/fixtures/tensor/passes.tsv)" \
	"!diff $D/ncu-metrics.tsv etc/ncu-metrics.tsv" 'gemm-int8/records.tsv::^kernel	'

smoke instr-h100 bench/instr-h100.sh
expect "instr-h100.sh: every job skipped, the recorded records summarised (2 n^3 per GEMM with the adaptive default)" \
	'^gemm-fp16-adaptive	-	skipped	' '^walls-adaptive	-	skipped	' \
	'gemm-fp8-adaptive/records.tsv::sm__ops_path_tensor_src_fp8\.sum=137438953472' \
	'gemm-fp16-default/records.tsv::tensor_not_collected=fp16,tf32,fp8,int8' \
	'1@ert/records.tsv::name=inst_warp	'

smoke tensor-explore bench/tensor-explore.sh
expect "tensor-explore.sh: recorded chips listed, recorded passes replayed, the rest skipped" \
	'^chip ga100: smoke: query skipped$' 'sass.txt::^smoke: skipped' \
	"!diff <(cut -f1-3 $D/passes.tsv) <(cut -f1-3 tests/fixtures/tensor/explore/passes.tsv)" \
	"!! grep -q '^none	' $D/passes.tsv"

# ---- on this test's cluster ---------------------------------------------------------
wait "$DAEMON_GROUP" "$PG_GROUP"
result chain-bench
expect "chain-bench.sh: a 3-step chain and 2 smoke runs succeeded" \
	'C chain of 3 daemon steps, poll_interval 1s: succeeded in [0-9.]+ s \([0-9.]+ ms per step\)' \
	'S 2 smoke runs queued at once \(4 Slurm jobs, 2 daemon steps\) on [1-9] node\(s\): 2 succeeded in '

result fanout-bench
expect "fanout-bench.sh: 2 runs fanned out over every node, each job on its node, in 2 rounds" \
	'^S  slurm_submit\(\) alone, [1-9][0-9]* node-pinned jobs' \
	'^== round 2 of 2: D, then S$' '^R  round 2: daemon [0-9.]+ jobs/s, slurm_submit\(\) alone [0-9.]+ jobs/s: ratio [0-9.]+ x$' \
	'^M  median of 2 round\(s\): daemon [0-9.]+ jobs/s' 'rounds.tsv::^2	[0-9.]+	[0-9.]+	[0-9.]+$' \
	'^D  2 runs queued at once: runs succeeded 2; [1-9][0-9]* node-pinned Slurm jobs; steps after succeeded 2,' \
	'pinned to \(steps.exec_node <> steps.node\): 0$' 'summary.txt::^   queued -> last run ended' \
	'run-states.txt::^succeeded\|2$'

result engine-bench
expect "engine-bench.sh: S, A, I, B at 3 runs, 3 tracked jobs, 5 runs of history" \
	'^slurm_submit\(\) back to back, jobs held: +[0-9.]+ jobs/s' \
	'^runs succeeded: +3 of 3 each' '^results ingested/s \(first..last\): +[0-9.]+' \
	'^## B\. 3 jobs tracked' '^with 5 finished runs of history added' \
	'^  ticks per 1s window: +[1-9][0-9]* -> median' \
	'summary.txt::^# settings: SMOKE' 'part-a.txt::^a1 runs=[0-9]+\.\.[0-9]+ ok=3 ' \
	'explain.history.txt::^=== ready$' 'engine-poll.quiet::call 4:'

result engine-ab
expect "engine-ab.sh: A, B, H for both builds (the working tree twice)" \
	'^base +jobs/s: [0-9.]+' '^new +jobs/s: [0-9.]+' '^  round 1 \(Slurm [0-9.]+ jobs/s\): base' \
	'^b v=new tracked=3 ' 'part-h.txt::^h5 v=new runs=[0-9]+\.\.[0-9]+ ok=2 ' \
	'!! psql -X -At -d postgres -c "select datname from pg_database" | grep -q "^rl_"'

result night-scale
expect "night-scale.sh: both polls beside 40 foreign jobs, the fan-out, the growth table" \
	'^  before 40 foreign +matched +8 ' '^  after  40 foreign +matched +8 ' \
	'sdiag: REQUEST_JOB_INFO \( 2003\) count:[1-9]' 'sdiag: REQUEST_JOB_INFO_SINGLE \( 2021\) count:16 ' \
	'^  fan-out rate: daemon [0-9.]+ jobs/s against slurm_submit\(\).s [0-9.]+ jobs/s: [0-9.]+ x \(median of 2 round' \
	'2@grow.tsv::^(gpus|nights)[[:space:]]8[[:space:]][35]([[:space:]][0-9.]+){4}$' \
	'!! squeue -h -u rlother -o %i | grep -q .' \
	'!bench/night-scale-plot.sh "$D/summary.txt" "$TEST_TMP/night-scale-poll.png" && test -s "$TEST_TMP/night-scale-poll.png"'

result findings-bench
expect "findings-bench.sh: fleet and regressions steps succeeded on 4 GPUs x 4 nights, ingest timed, and side by side with 0.2.0's records (2 attempts: 344 lines against 88)" \
	'sizes: 2 nodes x 2 = 4 GPUs x 4 nights; 3 kernels x 3 runs; repeats 1' \
	'^  fleet.after +history +[0-9.]+ ms' '^  fleet.after.1session +history +[0-9.]+ ms' 'records [1-9][0-9]*, exit 0, history [1-9][0-9]* bytes written at a peak RSS of [1-9][0-9]* kB; 4 GPUs' \
	'^  regressions.after +history' '^  regressions.after.1session +history' \
	'ingest of one night as the daemon does it \(2 attempts, [0-9]+ records, 72 ceilings; COPY per attempt, 4 sessions\): [0-9.]+ ms = [0-9]+ ceilings/s .*; ceilings stored 144 of 144$' \
	'^    side by side, alternated: through one session [0-9.]+ ms \[[0-9]+\]; 4 sessions / one: [0-9.]+$' \
	'^  ingest A/B round 1: A \(0\.2\.0.s records and indexes, 344 lines\) [1-9][0-9]* ms, B \(this tree.s, 88 lines\) [1-9][0-9]* ms$' \
	'^  ingest A/B round 2: ' \
	'^  ingest of one night side by side, one transaction each, rolled back \(median of 2 alternated rounds\): A [0-9.]+ ms, B [0-9.]+ ms, B/A [0-9.]+$' \
	'!! psql -X -At -d postgres -c "select datname from pg_database" | grep -q "^findings_bench"'

result history-bench
# Q1: one kernel over 30 nights on every GPU (GPUS=4): 120 rows
expect "history-bench.sh: migrate and partitioned phases at 3,000 points and 100 nights x 4 GPUs" \
	'^points before: 3000 [-0-9]+; after: 3000 [-0-9]+ \(same\)$' \
	"rows: roofline history kernel_1's 1,000 \(run, node, GFLOP/s\) the same as 016's CLI chose" \
	'^retention to 1 months .*: [1-9][0-9]* partitions, [1-9][0-9]* rows in ' \
	'^  Q1 +120 rows' \
	'!! psql -X -At -d postgres -c "select datname from pg_database" | grep -q "^hb_"'

# ---- every script parses; the helpers compile -------------------------------------------
out=$(for f in bench/*.sh; do
	if [[ $(head -1 "$f") == '#!/bin/sh' ]]; then sh -n "$f"; else bash -n "$f"; fi || echo "$f"
done 2>&1)
is "$out" "" "bench/*.sh: bash -n (sh -n for /bin/sh scripts)"
wait "$TOOLS_GROUP"
if [[ -e $TEST_TMP/shellcheck.rc ]]; then
	is "$(cat "$TEST_TMP/shellcheck.rc")" 0 "bench/*.sh: shellcheck -x -S warning" ||
		diag "$(head -30 "$TEST_TMP/shellcheck.out")"
else
	skip "shellcheck not installed"
fi
# parsed, not byte-compiled: py_compile would write __pycache__ into the tree
ok "bench/*.py parse" python3 -c 'import ast, sys
for f in sys.argv[1:]:
    ast.parse(open(f).read(), f)' bench/*.py
if [[ -n $NVCC ]]; then
	is "$(cat "$TEST_TMP/nvcc.rc")" 0 "bench/*.cu compile (nvcc, sm_90; no GPU to run them)" ||
		diag "$(tail -20 "$TEST_TMP/nvcc.out")"
else
	skip "no nvcc: bench/*.cu not compiled"
fi
ok "bench/*.c helpers built (the Makefile's TEST_DEPS)" test -x "$BUILD/bench/engine-submit" \
	-a -x "$BUILD/bench/engine-poll" -a -x "$BUILD/bench/findings-bench" \
	-a -x "$BUILD/bench/analysis-bench" -a -x "$BUILD/bench/ncu-parse-bench"

is "$(committed)" "$BEFORE" "docs, fixtures, etc/ and sql/ as they were (no smoke wrote over them)"
note "all smokes: $((SECONDS - T0)) s"
done_testing
