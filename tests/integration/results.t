#!/bin/bash
# Ceilings and kernel profiles reach their PostgreSQL tables through the real
# Slurm job path: recorded H100 outputs are attached to a run, the spec, ert
# and ncu-import plugins run as Slurm jobs, and the rows are checked against
# the recordings, read here independently of the plugins' parsers.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

F=$ROOT/tests/fixtures
for f in "$F/ert/h100-quick.tsv" "$F/ncu/kernel_abc.raw.csv"; do
	cp "$f" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/$(basename "$f")"
done
cp "$ROOT/pipelines/kernel-abc-replay.yaml" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/kernel-abc-replay.yaml"
out=$(as alice "$BIN/roofline" submit --wait --attach "$TEST_TMP/h100-quick.tsv" --attach "$TEST_TMP/kernel_abc.raw.csv" \
	"$TEST_TMP/kernel-abc-replay.yaml" 2>&1)
is "$?" 0 "the replay pipeline succeeded"
run=$(head -1 <<<"$out")
is "$(sql "select count(*) from steps where run_id = $run and slurm_job_id is not null and state = 'succeeded'")" 3 \
	"spec, ert and ncu-import ran as Slurm jobs"

# -- ceilings: the fp64_fma median of the recording, read with awk
want=$(awk -F'\t' '$1 == "ceiling" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = substr($i, length(kv[1]) + 2) } if (v["name"] == "fp64_fma") print v["median"] }' "$F/ert/h100-quick.tsv")
got=$(sql "select value from ceilings where run_id = $run and method = 'empirical' and name = 'fp64_fma'")
ok "empirical fp64_fma stored as recorded ($want)" awk -v a="$got" -v b="$want" 'BEGIN { exit !(b > 0 && (a - b) / b < 1e-12 && (b - a) / b < 1e-12) }'
n_rec=$(grep -c '^ceiling' "$F/ert/h100-quick.tsv")
like "$(sql "select count(*) from ceilings where run_id = $run and method = 'empirical'")" "^[0-9]+$" "empirical ceilings stored"
ok "at least the $n_rec recorded figures are stored" test "$(sql "select count(*) from ceilings where run_id = $run and method = 'empirical'")" -ge "$n_rec"
is "$(sql "select count(*) from ceilings where run_id = $run and method = 'theoretical' and name = 'fp64_fma' and value = 132 * 128 * 1980e6")" 1 \
	"theoretical fp64_fma = 132 SMs x 128 FLOP/clk x 1980 MHz"
is "$(sql "select distinct gpu_uuid from ceilings where run_id = $run")" \
	"$(awk -F'\t' '$1 == "attr" { for (i = 2; i <= NF; i++) if ($i ~ /^uuid=/) print substr($i, 6) }' "$F/ert/h100-quick.tsv")" \
	"ceilings carry the GPU's UUID"
is "$(sql "select count(*) from ceilings where run_id = $run and synthetic is distinct from 'replay of ' || gpu_uuid || ' (h100-quick.tsv gpu 0)'")" 0 \
	"each labelled a replay of the recorded GPU (replay_as: recorded)"
# spec and ert are two Slurm jobs, maybe on two nodes: each row names one.
nodes_re="^($(sinfo -h -N -o %N | paste -sd'|'))\$"
is "$(sql "select count(*) from ceilings where run_id = $run and node ~ '$nodes_re'")" \
	"$(sql "select count(*) from ceilings where run_id = $run")" "and the node that measured it, a node of the cluster"

# The sweep: one record per series (ca, cg), and docs/ceilings.md's query
# gives back every recorded point of it, in the recording's numbers.
is "$(sql "select string_agg(fields ->> 'series' || ':' || (fields ->> 'points'), ' ' order by seq) from step_records where run_id = $run and kind = 'sweep'")" \
	"$(awk -F'\t' '$1 == "sweep" { for (i = 2; i <= NF; i++) if ($i ~ /^series=/) n[substr($i, 8)]++ } END { printf "ca:%d cg:%d", n["ca"], n["cg"] }' "$F/ert/h100-quick.tsv")" \
	"one sweep record per series, holding each of its points"
query=$(awk '/<!-- results.t: sweep-query -->/ { f = 1; next } f && /^```sql/ { q = 1; next } q && /^```/ { exit } q' "$ROOT/docs/ceilings.md")
like "$query" "unnest\(string_to_array" "docs/ceilings.md has the sweep query"
is "$(sql "${query//= 42/= $run}" | awk -F'|' '{ printf "%s %.17g %.17g\n", $2, $3, $4 }' | sort)" \
	"$(awk -F'\t' '$1 == "sweep" { for (i = 2; i <= NF; i++) { p = index($i, "="); v[substr($i, 1, p - 1)] = substr($i, p + 1) }
		printf "%s %.17g %.17g\n", v["series"], v["ws_bytes"], v["value"] }' "$F/ert/h100-quick.tsv" | sort)" \
	"docs/ceilings.md's query: every recorded sweep point (series, size, rate)"

# -- kernel profiles: the recording's rows, read with perl
csv_value() { # csv_value KERNEL_PREFIX METRIC
	perl -ne 'BEGIN { ($k, $m) = splice(@ARGV, 0, 2) } next if /^==/;
		chomp; my @c = map { s/^"|"$//gr } split /,(?=(?:[^"]*"[^"]*")*[^"]*$)/;
		if (!@h) { @h = @c; next }
		my %r; @r{@h} = @c; print $r{$m} =~ s/,//gr, "\n" if index($r{"Kernel Name"}, $k) == 0' "$1" "$2" "$F/ncu/kernel_abc.raw.csv"
}
is "$(sql "select count(*) from kernel_profiles where run_id = $run")" 3 "three kernel launches stored"
like "$(csv_value "kernel_C(" dram__bytes.sum)" '^[0-9]+$' "the recording is read here (kernel_C's DRAM bytes)"
for k in kernel_A kernel_B kernel_C; do
	for m in gpu__time_duration.sum dram__bytes.sum sm__sass_thread_inst_executed_op_dadd_pred_on.sum; do
		is "$(sql "select metrics->>'$m' from kernel_profiles where run_id = $run and kernel like '$k(%'")" \
			"$(csv_value "$k(" "$m")" "$k $m as ncu wrote it"
	done
done

# -- the analysis step (rooflined's own child, as alice) and the views
is "$(sql "select string_agg(step_id || ':' || state, ',' order by id) from steps where run_id = $run and on_daemon")" \
	"roofline:succeeded,chart:succeeded,regressions:succeeded,report:succeeded" \
	"the analysis, chart, regressions and report steps ran on the daemon side"
is "$(sql "select verdict from roofline_points where run_id = $run and kernel like 'kernel_A(%'")" compute-bound \
	"kernel_A is compute-bound (seed: near the FP64 add peak)"
is "$(sql "select verdict from roofline_points where run_id = $run and kernel like 'kernel_B(%'")" latency-bound \
	"kernel_B is latency-bound (seed: occupancy throttled)"
is "$(sql "select verdict || '@' || bound from roofline_points where run_id = $run and kernel like 'kernel_C(%'")" \
	"bandwidth-bound@dram" "kernel_C is bound by DRAM bandwidth (seed: memory-bound)"
# kernel_A's L1 AI from the recording: 2 x dfma + dadd + dmul over l1tex__t_bytes
ai=$(perl -e 'printf "%.6f", (2 * $ARGV[0] + $ARGV[1] + $ARGV[2]) / $ARGV[3]' \
	"$(csv_value "kernel_A(" sm__sass_thread_inst_executed_op_dfma_pred_on.sum)" \
	"$(csv_value "kernel_A(" sm__sass_thread_inst_executed_op_dadd_pred_on.sum)" \
	"$(csv_value "kernel_A(" sm__sass_thread_inst_executed_op_dmul_pred_on.sum)" \
	"$(csv_value "kernel_A(" l1tex__t_bytes.sum)")
is "$(sql "select to_char(ai_l1, 'FM999990.000000') from roofline_points where run_id = $run and kernel like 'kernel_A(%'")" \
	"$ai" "kernel_A's AI at L1 is its FP64 FLOPs over L1 bytes ($ai)"
out=$(as alice "$BIN/roofline" show "$run")
like "$out" "kernel_C  .*bandwidth-bound" "roofline show prints the roofline table (kernel_C: its short name, the whole one over 40 bytes)"
like "$(as alice "$BIN/roofline" show --csv "$run" | head -1)" "^kernel,precision,ai_l1,ai_l2,ai_dram,gflops" "and CSV"
# --json: one document, parsed by Python, compared with what psql reads
jm=$ROOT/tests/tools/json_match
as alice "$BIN/roofline" show --json --all "$run" >"$TEST_TMP/show.json"
is "$?" 0 "roofline show --json --all exits 0"
ok "show --json: the run as the database has it" "$jm" "$TEST_TMP/show.json" \
	"$(sql "select id, pipeline_name, owner, state, spool_dir, error from runs where id = $run")" \
	run id pipeline owner state spool_dir error
ok "show --json: the kernels as roofline_points has them (the columns of --csv)" "$jm" "$TEST_TMP/show.json" \
	"$(sql "select kernel, precision, ai_l1, ai_l2, ai_dram, gflops, bound, round(pct_of_roof::numeric, 1),
		verdict, node, gpu_name, tensor_uncounted, step from roofline_points where run_id = $run
		order by step, kernel, node")" \
	kernels kernel precision ai_l1 ai_l2 ai_dram gflops bound pct_of_roof verdict node gpu tensor_uncounted step
ok "show --json: numbers are JSON numbers, the run id too" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
assert num(d["run"]["id"]) and len(d["kernels"]) == 3
assert all(num(k[f]) for k in d["kernels"] for f in ("ai_l1", "ai_dram", "gflops", "pct_of_roof"))' "$TEST_TMP/show.json"
is "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(len(v) for v in d["records"].values()), len(d["records"]))' "$TEST_TMP/show.json")" \
	"$(sql "select count(*) || ' ' || count(distinct kind) from step_records where run_id = $run")" \
	"show --json --all: every record, under its kind"
as alice "$BIN/roofline" show --json --csv "$run" >/dev/null 2>&1
is "$?" 2 "show --json with --csv is a usage error (exit 2)"
as bob "$BIN/roofline" show --json "$run" >"$TEST_TMP/bob.json" 2>/dev/null
is "$?:$(wc -c <"$TEST_TMP/bob.json")" "1:0" "bob gets exit 1 and no document for alice's run"
like "$(as alice "$BIN/roofline" show --help)" "--json" "show --help mentions --json"
chart=$(sql "select fields->>'file' from step_records r join steps s on s.id = r.step where s.run_id = $run and r.kind = 'chart' and fields->>'format' = 'png' limit 1")
dir=$(sql "select spool_dir from runs where id = $run")/chart/attempt-1
ok "the PNG chart exists ($dir/$chart)" test -s "$dir/$chart"
is "$(head -c 4 "$dir/$chart" | od -An -c | tr -d ' ')" "211PNG" "and is a PNG"

# -- tensor cores (tests/fixtures/tensor): the recorded default-set captures
# of a cuBLAS BF16 GEMM, an FP16 GEMM (a datapath that set leaves out) and a
# bf16 wmma + FFMA kernel, with ERT on the GEMMs' H100
T=$F/tensor
for f in ert-raw.tsv gemm-bf16.ncu.csv gemm-fp16.ncu.csv mixed-bf16.ncu.csv; do
	cp "$T/$f" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/$f"
done
cp "$ROOT/pipelines/tensor-gemm-replay.yaml" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/tensor-gemm-replay.yaml"
out=$(as alice "$BIN/roofline" submit --wait --attach "$TEST_TMP/ert-raw.tsv" \
	--attach "$TEST_TMP/gemm-bf16.ncu.csv" --attach "$TEST_TMP/gemm-fp16.ncu.csv" \
	--attach "$TEST_TMP/mixed-bf16.ncu.csv" "$TEST_TMP/tensor-gemm-replay.yaml" 2>&1)
is "$?" 0 "the tensor replay pipeline succeeded"
trun=$(head -1 <<<"$out")
# 2 m n k from the program's own line, next to the recording
mnk=$(perl -ne 'printf "%.0f\n", 2 * $1 * $2 * $3 if /m=(\d+) n=(\d+) k=(\d+)/' "$T/gemm-bf16.program.txt")
like "$mnk" '^[0-9]+$' "the GEMM's size is read here ($mnk FLOPs)"
got=$(sql "select flops from points where run_id = $trun and kernel like 'nvjet_sm90_tss%' and precision = 'tc_bf16' and level = 'dram' and invocation = 'all'")
ok "the BF16 GEMM's tensor FLOPs are 2 m n k within 1 % ($got)" \
	awk -v a="$got" -v b="$mnk" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.01 * b) }'
is "$(sql "select precision || ':' || bound_ceiling || ':' || tensor_uncounted from roofline_points where run_id = $trun and kernel like 'nvjet_sm90_tss%'")" \
	"tc_bf16:tc_bf16:fp16,tf32,fp8,int8" "its primary point is the BF16 tensor one, flagged for the datapaths not collected"
is "$(sql "select precision || ':' || verdict || ':' || tensor_uncounted from roofline_points where run_id = $trun and kernel like 'nvjet_sm90_hss%'")" \
	"tensor:incomplete:fp16,tf32,fp8,int8" "the FP16 GEMM, counted by no default datapath, is there and incomplete"
is "$(sql "select string_agg(precision || '@' || bound_ceiling, ',' order by precision) from points where run_id = $trun and kernel like '%tensor_mixed%' and level = 'dram' and invocation = 'all' and precision <> 'all'")" \
	"fp32@fp32_fma,tc_bf16@tc_bf16" "the mixed kernel's CUDA-core and tensor points stand apart, each under its own roof"
out=$(as alice "$BIN/roofline" show "$trun")
like "$out" "nvjet_sm90_hss.*incomplete INCOMPLETE: tensor fp16,tf32,fp8,int8" "roofline show marks the point incomplete"
like "$out" "INCOMPLETE: 3 kernels ran tensor-core instructions" "and says why"
like "$(as alice "$BIN/roofline" show --csv "$trun" | head -1)" ",tensor_uncounted,step$" "the CSV has the column (and the step last)"

# -- the CLI's chart and history, from the database, as alice
mkdir -p "$TEST_TMP/plot" && chown alice "$TEST_TMP/plot"
ok "roofline plot draws the run from the database" \
	as alice sh -c "cd '$TEST_TMP/plot' && '$BIN/roofline' plot --format png $run"
is "$(head -c 4 "$TEST_TMP/plot/roofline-plot-$run/roofline.png" | od -An -c | tr -d ' ')" "211PNG" \
	"roofline-plot-$run/roofline.png is a PNG"
hist=$(as alice "$BIN/roofline" history kernel_C 2>&1)
like "$hist" "bandwidth-bound +$run" "roofline history kernel_C lists this run"
# (other tests' facility runs in this cluster are everyone's to see)
unlike "$(as bob "$BIN/roofline" history kernel_C 2>&1)" "bandwidth-bound +$run( |\$)" \
	"bob sees no history of alice's kernels (not her run $run)"
as alice "$BIN/roofline" history --json kernel_C >"$TEST_TMP/history.json"
is "$?" 0 "roofline history --json exits 0"
ok "history --json: kernel_C's rows as kernel_trend has them" "$jm" "$TEST_TMP/history.json" \
	"$(sql "select to_char(run_at, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), node, gpu_name, gflops, ai_l1,
		ai_l2, ai_dram, round(pct_of_roof::numeric, 1), verdict, run_id, kernel from kernel_trend
		where kernel like 'kernel\\_C(%' and run_id in (select id from runs where owner = 'alice' or facility)
		order by run_at")" \
	history run_at node gpu gflops ai_l1 ai_l2 ai_dram pct_of_roof verdict run kernel
as alice "$BIN/roofline" history --json --csv kernel_C >/dev/null 2>&1
is "$?" 2 "history --json with --csv is a usage error (exit 2)"
like "$(as alice "$BIN/roofline" history --help)" "--json" "history --help mentions --json"

# -- every command's --json parses with jq, and says what its table says
for cmd in "list" "status $run" "show $run" "history kernel_C" "plugins" "findings"; do
	# shellcheck disable=SC2086 # the command and its argument
	as alice "$BIN/roofline" $cmd --json >"$TEST_TMP/cmd.json" 2>/dev/null
	ok "roofline $cmd --json parses with jq" jq -e . "$TEST_TMP/cmd.json"
done
is "$(as alice "$BIN/roofline" list --json | jq -r --argjson r "$run" '.runs[] | select(.id == $r) | "\(.id) \(.pipeline) \(.owner) \(.state)"')" \
	"$(as alice "$BIN/roofline" list | awk -v r="$run" '$1 == r { print $1, $2, $3, $4 }')" \
	"list: the JSON's run is the table's (id, pipeline, owner, state)"
is "$(as alice "$BIN/roofline" history --json kernel_C | jq -r '.history[-1].gflops | . * 10 | round / 10')" \
	"$(sql "select round(gflops::numeric, 1)::float8 from kernel_trend where kernel like 'kernel\\_C(%' order by run_at desc limit 1")" \
	"history: the latest GFLOP/s as the table rounds it"

# -- a truncated export: the step fails, nothing is stored as a profile
head -c 3000 "$F/ncu/kernel_abc.raw.csv" >"$TEST_TMP/cut.csv"
chmod 0644 "$TEST_TMP/cut.csv"
printf 'name: cut\nslurm: { partition: gpu }\nsteps:\n  - { id: profile, plugin: ncu-import, with: { file: inputs/cut.csv } }\n' >"$TEST_TMP/cut.yaml"
chmod 0644 "$TEST_TMP/cut.yaml"
run=$(as alice "$BIN/roofline" submit --attach "$TEST_TMP/cut.csv" "$TEST_TMP/cut.yaml")
wait_run "$run" 60
is "$(run_state "$run")" failed "a truncated export fails the run"
like "$(sql "select error from steps where run_id = $run")" "cut.csv" "the error names the file"
is "$(sql "select count(*) from kernel_profiles where run_id = $run")" 0 "no profile stored"

done_testing
