#!/bin/bash
# Kernel regressions on the roofline (issue 11, item 2) from replayed
# recordings: the kernel_abc profiles and H100 ceilings replayed with
# declared changes (ncu-import and ert `perturb`, labelled synthetic).
# kernel_C with more DRAM bytes per FLOP is "moved left", kernel_A with a
# longer time at the same AI "dropped", and a run on a GPU whose FP64 roof
# was capped (with kernel_A slowed as much) "roof changed"; `roofline
# regressions` exits 1 on them and 0 on an unchanged rerun, and the
# pipeline's regressions step records the findings.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

for f in tests/fixtures/ert/h100-quick.tsv tests/fixtures/ncu/kernel_abc.raw.csv; do
	cp "$ROOT/$f" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/$(basename "$f")"
done
PIPE=$ROOT/pipelines/kernel-abc-replay.yaml
# The variants are one pipeline, named for this test alone: a run of
# kernel-abc-replay by another test in the same cluster would be its baseline.
variant() { # variant NAME KERNEL_RULES CEILING_RULES: a pipeline file
	local out=$TEST_TMP/$1.yaml
	sed -E "s|^name: kernel-abc-replay$|name: regressions-replay|;
		s|with: \{ file: inputs/kernel_abc.raw.csv \}|with: { file: inputs/kernel_abc.raw.csv, perturb: [$2] }|;
		s|with: \{ replay: inputs/h100-quick.tsv, replay_as: recorded \}|with: { replay: inputs/h100-quick.tsv, replay_as: recorded, perturb: [$3] }|" \
		"$PIPE" >"$out"
	chmod 0644 "$out"
	echo "$out"
}
submit() { # submit FILE NIGHT: the run id, after it ended
	local out
	out=$(as alice "$BIN/roofline" submit --wait --night "$2" \
		--attach "$TEST_TMP/h100-quick.tsv" --attach "$TEST_TMP/kernel_abc.raw.csv" "$1" 2>&1)
	head -1 <<<"$out"
}
regress() { as alice "$BIN/roofline" regressions "$@"; }
class_of() { # class_of JSON KERNEL LEVEL: the class of KERNEL's fp64 point at LEVEL
	jq -r --arg k "$2" --arg l "$3" '.points[] | select((.kernel | startswith($k)) and .level == $l and .precision == "fp64") | .class' <<<"$1"
}

PLAIN=$(variant plain "" "")
MOVED=$(variant moved '"kernel_C* dram__bytes.* +60%", "kernel_A* gpu__time_duration.* +30%"' "")
ROOF=$(variant roof '"kernel_A* gpu__time_duration.* +40%"' '"*/* fp64_fma sm_clock=1410"')
is "$(grep -c 'perturb: \[' "$MOVED") $(grep -c 'perturb: \["' "$ROOF")" "2 2" "the variants carry their perturbations"
is "$(cat "$PLAIN" "$MOVED" "$ROOF" | grep -c '^name: regressions-replay$')" 3 "the variants carry this test's pipeline name"

r1=$(submit "$PLAIN" 2026-10-01)
is "$(run_state "$r1")" succeeded "run 1 (plain): succeeded"
is "$(sql "select fields ->> 'baseline_run' from step_records where run_id = $r1 and kind = 'regression_summary'")" "" \
	"its regressions step had no baseline"
r2=$(submit "$PLAIN" 2026-10-02)
is "$(run_state "$r2")" succeeded "run 2 (plain rerun): succeeded"
out=$(regress "$r2")
is "$?" 0 "roofline regressions exits 0 on an unchanged rerun"
like "$out" "against run $r1" "the baseline is the previous run"
is "$(tail -1 <<<"$out")" "0 points regressed" "nothing regressed"
ok "every point unchanged" test "$(grep -cE ' (dropped|moved left|roof changed|faster) ' <<<"$out")" -eq 0

r3=$(submit "$MOVED" 2026-10-03)
is "$(run_state "$r3")" succeeded "run 3 (kernel_C more DRAM bytes, kernel_A slower): succeeded"
json=$(regress "$r3" --json)
is "$?" 1 "roofline regressions exits 1"
is "$(jq -r .baseline <<<"$json")" "$r2" "against run 2 (JSON)"
is "$(class_of "$json" kernel_C dram)" "moved left" "kernel_C: moved left at DRAM"
is "$(class_of "$json" kernel_A dram)" "dropped" "kernel_A: dropped (same AI, lower FLOP/s)"
like "$(jq -r '.points[] | select(.kernel | startswith("kernel_A")) | select(.level == "dram" and .precision == "fp64") | "\(.gflops_change_pct) \(.ai_change_pct)"' <<<"$json")" \
	'^-2[23]\.[0-9]+ -?0(\.0+)?$' "kernel_A: FLOP/s down by 1 - 1/1.3 (23 %), AI unchanged"
is "$(class_of "$json" kernel_B dram)" "unchanged" "kernel_B: unchanged"
table=$(regress "$r3")
like "$table" 'kernel_C.* +fp64 +dram +moved left' "the table says the same"
is "$(sql "select string_agg(distinct split_part(kernel, '(', 1) || ' ' || class, ',') from findings where scope = 'kernel' and last_run = $r3")" \
	"kernel_A dropped,kernel_C moved left" "the pipeline's regressions step recorded the findings"
like "$(sql "select cause from findings where scope = 'kernel' and class = 'moved left'")" 'more bytes per FLOP at .*dram' \
	"the moved-left finding names the level"

# The step's history set is three queries (the baseline's points, the
# run's, their noise), which the daemon reads at once through its session
# pool (db_sessions, 4 by default; daemon/step_inputs.c): the file it
# wrote is the one reading them one after another on one session writes
# (bench/findings-bench links the daemon's step_inputs.c), byte for byte.
hist=$(ls -d "$SPOOL/run-$r3"/regressions/attempt-*/history/records.tsv | tail -1)
for s in 1 4; do
	mkdir "$TEST_TMP/history-$s"
	"$BUILD/bench/findings-bench" -P regressions -r "$r3" -d "$TEST_TMP/history-$s" \
		-j "$BIN/roofline-job" -p "$BUILD/plugins" -n 1 -s "$s" >/dev/null 2>"$TEST_TMP/history-$s.err" ||
		diag "$(cat "$TEST_TMP/history-$s.err")"
done
is "$(grep -c '^baseline_point' "$hist") $(grep -c '^run_point' "$hist") $(grep -c '^kernel_noise' "$hist")" \
	"$(sql "select count(*) from rl_run_points($r2)") $(sql "select count(*) from rl_run_points($r3)") $(sql "select count(*) from rl_kernel_noise($r3, 10)")" \
	"run 3's regressions step read the three queries' rows"
ok "its history file is what one session writes, byte for byte" \
	cmp "$hist" "$TEST_TMP/history-1/attempt-1/history/records.tsv"
ok "and so is four sessions' (the daemon's default)" \
	cmp "$hist" "$TEST_TMP/history-4/attempt-1/history/records.tsv" ||
	diag "$(diff "$hist" "$TEST_TMP/history-4/attempt-1/history/records.tsv" | head -5)"

r4=$(submit "$ROOF" 2026-10-04)
is "$(run_state "$r4")" succeeded "run 4 (FP64 roof capped at 1410 MHz, kernel_A slower): succeeded"
json=$(regress "$r4" --baseline "$r2" --json)
is "$?" 1 "roofline regressions --baseline run 2 exits 1"
is "$(class_of "$json" kernel_A dram)" "roof changed" "kernel_A: roof changed (the hardware's)"
like "$(jq -r '.points[] | select((.kernel | startswith("kernel_A")) and .level == "dram" and .precision == "fp64") | .roof_change_pct' <<<"$json")" \
	'^-28\.[0-9]+' "its roof fell 1 - 1410/1980 (28.8 %)"
regress "$r4" --baseline 999999 >/dev/null 2>&1
is "$?" 2 "an unknown baseline: exit 2"
as bob "$BIN/roofline" regressions "$r3" >/dev/null 2>&1
is "$?" 2 "bob cannot compare alice's runs"


# rl_run_points (sql/027) joins the run's ceilings once; 011 looked each
# point's roof up by a subquery.  Both, on every run with points here.
old_points="select distinct on (p.run_id, p.kernel, p.level, p.precision)
	       p.run_id, p.kernel, p.level, p.precision, p.ai, p.gflops, p.time_s, p.bound_ceiling,
	       (select c.value from ceilings c
	        where c.run_id = p.run_id and c.method = 'empirical'
	          and c.name = p.bound_ceiling
	          and (c.gpu_uuid = p.gpu_uuid or p.gpu_uuid is null)
	        order by c.id desc limit 1),
	       p.gpu_name, p.gpu_uuid
	from points p
	where p.invocation = 'all' and p.ai is not null and p.gflops is not null
	order by p.run_id, p.kernel, p.level, p.precision, p.id desc"
new_points="select r.id, x.* from runs r, rl_run_points(r.id) x"
n=$(sql "select count(*) from ($new_points) n")
ok "rl_run_points: $n points of every run" test "$n" -gt 0
is "$(rows_differ "$new_points" "$old_points")" \
	"0 0" "rl_run_points answers as 011's per-point lookup, roofs included"
n=$(sql "select count(roof) from ($new_points) n")
ok "and $n of them have a roof" test "$n" -gt 0

# rl_kernel_noise (sql/028) takes the median and the deviation from
# rooflined_stats' aggregate in one pass; 011 took them from two passes of
# percentile_cont, joined.  011's query, on every run here, lookback 10.
old_noise=$(noise_011_sql 10)
new_noise="select r.id, x.* from runs r, rl_kernel_noise(r.id, 10) x"
n=$(sql "select count(*) from ($new_noise) n")
ok "rl_kernel_noise: $n kernel histories over every run" test "$n" -gt 0
is "$(rows_differ "$new_noise" "$old_noise")" \
	"0 0" "rl_kernel_noise answers as 011's two percentile_cont passes, to the bit"
# (the replays repeat their figures, so most spreads are 0: the bits of
# nonzero ones are robust-stats.t's, on random groups)
n=$(sql "select count(*) from ($new_noise) n where n > 1")
ok "and $n of them span several earlier runs" test "$n" -gt 0
done_testing
