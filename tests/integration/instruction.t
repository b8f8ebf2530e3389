#!/bin/bash
# The Instruction Roofline (issue 28) through the local cluster: the H100
# recordings of bench/instr-h100.sh (tests/fixtures/instr: ert-bench's
# output with its warp-instruction ceiling, and ncu exports with the
# instruction rows of the memory-wall kernels, the transposes, GPP's stride
# and kernel_abc) replayed by pipelines/instruction-replay.yaml as Slurm
# jobs, the instruction plugin on the daemon, its records in PostgreSQL.
# The expectations are the model's, not the output's: the theoretical peak
# from the recorded device attributes (132 SMs x 4 schedulers x 1.98 GHz),
# the walls of a warp's access pattern (1/4 at unit stride, 1/32 beyond
# stride 8; 1/W for a W-way bank conflict), a measured ceiling under the
# theoretical one.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

F=$ROOT/tests/fixtures/instr
files=(ert-raw.tsv walls-instr.ncu.csv gpp-stride-instr.ncu.csv abc-instr.ncu.csv)
attach=()
for f in "${files[@]}"; do
	cp "$F/$f" "$TEST_TMP/"
	chmod 0644 "$TEST_TMP/$f"
	attach+=(--attach "$TEST_TMP/$f")
done
cp "$ROOT/pipelines/instruction-replay.yaml" "$TEST_TMP/"
chmod 0644 "$TEST_TMP/instruction-replay.yaml"

out=$(as alice "$BIN/roofline" submit --wait "${attach[@]}" "$TEST_TMP/instruction-replay.yaml" 2>&1)
run=$(head -1 <<<"$out")
is "$(run_state "$run")" succeeded "instruction-replay (run $run) succeeded" ||
	diag "$out" "$(sql "select s.step_id, s.state, e.detail from steps s left join step_events e
		on e.step = s.id where s.run_id = $run order by e.id")"

q() { sql "select $1 from instruction_points where run_id = $run and $2"; }
is "$(q 'count(distinct kernel)' true)" 22 \
	"22 kernels: 13 wall kernels, 2 transposes, 4 GPP strides, kernel_A/B/C"
is "$(q 'count(*)' "kernel like '%walls_global<1>%' and level = 'global' and intensity = 0.25")" 1 \
	"unit stride: exactly 1 global LD/ST instruction per 4 sectors"
for s in 8 16 32; do
	is "$(q 'count(*)' "kernel like '%walls_global<$s>(%' and level = 'global'
		and abs(intensity * 32 - 1) < 0.03")" 1 "stride $s: on the uncoalesced wall (1/32, within 3 %)"
done
for w in 1 2 4 8 16 32; do
	is "$(q 'count(*)' "kernel like '%walls_shared<$w>(%' and level = 'shared'
		and abs(intensity * $w - 1) < 0.07")" 1 "shared $w-way: on the 1/$w wall (within 7 %)"
done
is "$(sql "select (select intensity from instruction_points where run_id = $run and level = 'shared'
		and kernel like 'transpose_padded%') > 15 * (select intensity from instruction_points
		where run_id = $run and level = 'shared' and kernel like 'transpose_naive%')")" t \
	"padding the tile moves the transpose off the 32-way wall (shared intensity x15 and more)"
is "$(q 'count(distinct kernel)' "integer_only and kernel like 'transpose%'")" 2 \
	"the transposes (no FLOP) have their place: integer_only"
is "$(q 'count(*)' "integer_only and kernel like '%gpp_v1%'")" 0 "GPP is not integer-only"
is "$(q 'count(distinct level)' "kernel like '%gpp_v1<6, 1>%'")" 6 \
	"GPP stride 1: a point at each level (L1 global, L1 shared, L2, DRAM) and both walls"
is "$(sql "select count(*) from instruction_points where run_id = $run and kernel like '%gpp_v1<6, 2>%'
		and level = 'global' and intensity < 0.6 * (select intensity from instruction_points
		where run_id = $run and kernel like '%gpp_v1<6, 1>%' and level = 'global')")" 1 \
	"GPP stride 2 moves left along the global walls (fewer instructions per sector)"

r() { sql "select round(value::numeric, 2) from instruction_roofs where run_id = $run and name = '$1'"; }
is "$(r peak_theoretical)" 1045.44 "theoretical peak: 132 SMs x 4 schedulers x 1.98 GHz"
m=$(sql "select value from instruction_roofs where run_id = $run and name = 'inst_warp'")
ok "the measured warp-instruction ceiling ($m GIPS) within 90-100 % of the theoretical" \
	awk -v m="$m" 'BEGIN { exit !(m > 0.9 * 1045.44 && m <= 1045.44) }'
is "$(sql "select count(*) from instruction_walls where run_id = $run")" 9 \
	"the walls: 3 global, 6 shared"
dir=$(sql "select spool_dir from runs where id = $run")
ok "the chart was drawn" grep -q '<svg' "$dir/instruction/attempt-1/instruction.svg"
html=$dir/report/attempt-1/report.html
ok "the report has its Instruction Roofline section" grep -q '<section id="instruction">' "$html"
is "$(sed -n '/<section id="instruction">/,/<\/section>/p' "$html" | grep -c '<tr><td>')" \
	"$(sql "select count(*) from instruction_points where run_id = $run")" \
	"the report's section: a row per point stored"

# A user's daemon-side step runs the facility's gnuplot, not one of hers:
# the instruction step's option gnuplot is a program option like the
# gnuplot plugin's (daemon/step_policy.c).
mkdir -p "$TEST_TMP/alice-home"
chown alice: "$TEST_TMP/alice-home"
evil=$TEST_TMP/alice-home/gnuplot
printf '#!/bin/sh\ntouch %s/pwned\n' "$TEST_TMP/alice-home" >"$evil"
chown alice: "$evil"
chmod 0755 "$evil"
sed -e 's/^name: .*/name: instruction-ownprog/' \
	-e "s|^    timeout: \"5m\"$|    timeout: \"5m\"\n    with: { gnuplot: $evil }|" \
	"$ROOT/pipelines/instruction-replay.yaml" | awk '/^  - id: report/ { exit } { print }' \
	>"$TEST_TMP/ownprog.yaml"
chmod 0644 "$TEST_TMP/ownprog.yaml"
ok "the pipeline names her gnuplot" grep -q "gnuplot: $evil" "$TEST_TMP/ownprog.yaml"
run=$(as alice "$BIN/roofline" submit "${attach[@]}" "$TEST_TMP/ownprog.yaml" 2>>"$TEST_TMP/submit.err")
wait_run "$run" 60
is "$(run_state "$run")" failed "an instruction step that names its own gnuplot fails"
like "$(sql "select error from runs where id = $run")" \
	"option 'gnuplot' of step 'instruction' names a program.*gnuplot_program" \
	"before it starts, naming the option and the configuration key"
ok "her program did not run" test ! -e "$TEST_TMP/alice-home/pwned"
done_testing
