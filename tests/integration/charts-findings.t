#!/bin/bash
# The findings' charts (issue 11, item 5) on the multi-node cluster, drawn
# by the real gnuplot from what the real pipelines stored:
#  - the fleet tonight: pipelines/nightly-ceilings-replay.yaml itself (its
#    chart step, mode fleet) over CHART_NIGHTS replayed nights (default 3)
#    with an HBM triad 12 % low on one GPU: the PNG and the SVG exist, and
#    the SVG names the flagged GPU and no other;
#  - `roofline plot --gpu` for that GPU: a panel per ceiling, its nights,
#    the flagged ones marked; refused for bob (row-level security);
#  - `roofline plot --trajectory` for GPP's gpp_v1<6, 1> over three runs of
#    tests/pipelines/trajectory-replay.yaml, each a different recorded H100
#    capture (stride, nw-nofma, nw): the last step's class is the one
#    `roofline regressions` gives for the same two runs.
# CHART_KEEP=DIR copies the images and the records they were drawn from
# there (docs/img/ and tests/fixtures/render/*-findings.records.tsv are
# made that way).
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start
NIGHTS=${CHART_NIGHTS:-3}

mapfile -t NODES < <(scontrol show hostnames "$(sinfo -h -p gpu -o '%N' | head -1)")
((${#NODES[@]} >= 3)) || bail_out "charts-findings.t needs a cluster of 3 nodes or more"

REC=$ROOT/tests/fixtures/ert/h100-quick.tsv
cp "$REC" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/h100-quick.tsv"
REC_UUID=$(awk -F'\t' '$1 == "attr" { for (i = 2; i <= NF; i++) if ($i ~ /^uuid=/) { print substr($i, 6); exit } }' "$REC")
SICK_NODE=${NODES[1]}
SICK="$SICK_NODE/1"
SICK_UUID="GPU-replay-$SICK_NODE-1-of-$REC_UUID"

OUT=$TEST_TMP/out # alice's plots go here
mkdir -p "$OUT" && chmod 1777 "$OUT"
png_ok() { [[ -s $1 && $(head -c 8 "$1" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]; }
keep() { [[ -n ${CHART_KEEP:-} ]] && mkdir -p "$CHART_KEEP" && cp "$1" "$CHART_KEEP/$2"; return 0; } # keep FILE NAME

# ---- the fleet tonight: the nightly pipeline's chart step ---------------------------
YAML=$TEST_TMP/nightly.yaml
sed -E "s|^( +)replay: inputs/h100-quick.tsv\$|&\n\1perturb: [\"$SICK hbm_triad -12%\"]|" \
	"$ROOT/pipelines/nightly-ceilings-replay.yaml" >"$YAML"
chmod 0644 "$YAML"
is "$(grep -c '^ *perturb: ' "$YAML")" 1 "the perturbation goes to ert"
for ((n = 1; n <= NIGHTS; n++)); do
	out=$(as alice "$BIN/roofline" submit --wait --night "2026-11-0$n" \
		--attach "$TEST_TMP/h100-quick.tsv" "$YAML" 2>&1)
	run=$(head -1 <<<"$out")
	[[ $(run_state "$run") == succeeded ]] ||
		{ diag "$out"; diag "$(tail -30 "$DAEMON_LOG")"; bail_out "night $n (run $run) did not succeed"; }
done
ok "$NIGHTS nights of the nightly replay ran, the last run $run" true
CHART=$(ls -d "$SPOOL/run-$run/chart/attempt-"* | tail -1)
ok "fleet.png is a PNG" png_ok "$CHART/fleet.png"
ok "fleet.svg is an SVG" grep -q '</svg>' "$CHART/fleet.svg"
unlike "$(cat "$CHART/job.out")" 'gnuplot said|warning' "the chart step ran without a warning"
like "$(grep -o "$SICK [0-9.]*%" "$CHART/fleet.svg" | sort -u)" "^$SICK 8[78]\\.[0-9]%\$" \
	"the SVG names the flagged GPU, with its % of the median"
is "$(grep -c '[0-9]%<' "$CHART/fleet.svg")" 1 "and names no other GPU as flagged"
ok "a panel per ceiling: HBM and FP64 FMA among them" \
	grep -q '>FP64 FMA<' "$CHART/fleet.svg"
is "$(sql "select string_agg(fields ->> 'kind' || '.' || (fields ->> 'format') || ' ' || (fields ->> 'series') || ' panels ' || (fields ->> 'kernels') || ' GPUs', ',' order by seq) from step_records r join steps s on s.id = r.step where r.run_id = $run and s.step_id = 'chart' and r.kind = 'chart'")" \
	"fleet.png 18 panels $((2 * ${#NODES[@]})) GPUs,fleet.svg 18 panels $((2 * ${#NODES[@]})) GPUs" \
	"the chart records: a panel per ceiling, every GPU"
is "$(sql "select count(*) from findings where scope = 'gpu' and gpu_uuid = '$SICK_UUID' and measure = 'hbm_triad' and pipeline_name = 'nightly-ceilings-replay'")" 1 \
	"the fleet step flagged that GPU (the chart draws its records)"
keep "$CHART/fleet.png" fleet.png && keep "$CHART/fleet.svg" fleet.svg
keep "$(ls -d "$SPOOL/run-$run/fleet/attempt-"* | tail -1)/records.tsv" fleet.records.tsv

# ---- a GPU over the nights, with its fleet's band -------------------------------------
D=$OUT/plot-gpu
# (other tests may replay the same stand-in GPU in other pipelines)
out=$(as alice "$BIN/roofline" plot --gpu "$SICK_UUID" --pipeline nightly-ceilings-replay --out "$D" 2>"$OUT/gpu.err")
is "$out" "$D" "roofline plot --gpu prints its directory"
unlike "$(cat "$OUT/gpu.err")" 'warning|error' "and no warning (gnuplot said nothing)"
ok "gpu_history.png is a PNG" png_ok "$D/gpu_history.png"
ok "gpu_history.svg names the GPU" grep -q "$SICK_UUID" "$D/gpu_history.svg"
is "$(grep -c '^gpu_night' "$D/data/records.tsv")" "$((18 * NIGHTS))" \
	"a gpu_night record per ceiling and night"
is "$(grep '^gpu_night' "$D/data/records.tsv" | grep 'ceiling=hbm_triad' | grep -c 'flagged=1')" "$NIGHTS" \
	"HBM flagged every night"
is "$(grep '^gpu_night' "$D/data/records.tsv" | grep -c 'flagged=1')" "$NIGHTS" "and nothing else"
is "$(grep '^gpu_night' "$D/data/records.tsv" | grep 'ceiling=hbm_triad' | head -1 | tr '\t' '\n' | grep -c '^fleet_n=\(.*\)')" 1 \
	"each night carries its fleet's count"
is "$(grep '^gpu_night' "$D/data/records.tsv" | grep 'ceiling=hbm_triad' | head -1 | tr '\t' '\n' | sed -n 's/^fleet_n=//p')" \
	"$((2 * ${#NODES[@]}))" "the band is every GPU of the model"
ok "the legend names the band" grep -q 'fleet min-max' "$D/gpu_history.svg"
keep "$D/gpu_history.png" gpu_history.png && keep "$D/gpu_history.svg" gpu_history.svg
keep "$D/data/records.tsv" gpu_history.records.tsv
out=$(as bob "$BIN/roofline" plot --gpu "$SICK_UUID" --out "$OUT/plot-bob" 2>&1)
is "$?" 1 "bob cannot plot alice's GPU history"
like "$out" "nothing of yours or the facility's" "and is told why"

# ---- a kernel's trajectory --------------------------------------------------------------
KERNEL='void gpp_v1<6, 1>(gpp_args)'
TRUNS=()
for cap in stride nw-nofma nw; do
	cp "$ROOT/tests/fixtures/gpp/$cap.raw.csv" "$TEST_TMP/profile.raw.csv"
	chmod 0644 "$TEST_TMP/profile.raw.csv"
	out=$(as alice "$BIN/roofline" submit --wait --attach "$TEST_TMP/h100-quick.tsv" \
		--attach "$TEST_TMP/profile.raw.csv" "$ROOT/tests/pipelines/trajectory-replay.yaml" 2>&1)
	r=$(head -1 <<<"$out")
	[[ $(run_state "$r") == succeeded ]] || { diag "$out"; bail_out "trajectory run ($cap) did not succeed"; }
	TRUNS+=("$r")
done
ok "three trajectory runs: ${TRUNS[*]}" true
D=$OUT/plot-traj
out=$(as alice "$BIN/roofline" plot --trajectory "$KERNEL" --pipeline trajectory-replay --out "$D" 2>"$OUT/traj.err")
is "$out" "$D" "roofline plot --trajectory prints its directory"
unlike "$(cat "$OUT/traj.err")" 'warning|error' "and no warning (gnuplot said nothing)"
ok "trajectory.png is a PNG" png_ok "$D/trajectory.png"
for r in "${TRUNS[@]}"; do
	ok "the SVG names run $r" grep -q ">run $r<" "$D/trajectory.svg"
done
# the same rule as roofline regressions: its worst class for the kernel at fp64
want=$(as alice "$BIN/roofline" regressions "${TRUNS[2]}" --baseline "${TRUNS[1]}" --json |
	jq -r --arg k "$KERNEL" '[.points[] | select(.kernel == $k and .precision == "fp64") | .class] |
		if any(. == "moved left") then "moved left" elif any(. == "roof changed") then "roof changed"
		elif any(. == "dropped") then "dropped" elif any(. == "faster") then "faster" else "unchanged" end')
is "$(sed -n 's/.*\tclass=\([^\t]*\).*/\1/p' "$D/data/records.tsv")" "$want" \
	"the last step's class is what roofline regressions says ($want)"
ok "the SVG labels the last step: $want, run ${TRUNS[1]} -> run ${TRUNS[2]}" \
	grep -qF "gpp_v1&lt;...>: $want (run ${TRUNS[1]} -> run ${TRUNS[2]}: GFLOP/s" "$D/trajectory.svg"
is "$(grep -c '^point' "$D/data/records.tsv")" 9 "a point per run and level"
keep "$D/trajectory.png" trajectory.png && keep "$D/trajectory.svg" trajectory.svg
keep "$D/data/records.tsv" trajectory.records.tsv
out=$(as bob "$BIN/roofline" plot --trajectory "$KERNEL" --out "$OUT/traj-bob" 2>&1)
is "$?" 1 "bob sees none of alice's points"
as alice "$BIN/roofline" plot --trajectory "$KERNEL" --runs 0 >/dev/null 2>&1
is "$?" 2 "--runs 0 is a usage error"

done_testing
