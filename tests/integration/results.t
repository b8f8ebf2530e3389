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
# The replayed ceilings and the imported profile on one node, so that the
# analysis finds the kernels' GPU (the cluster has several nodes).
node1=$(sinfo -h -N -p gpu -o '%N' | sort | head -1)
sed -E "s|^(slurm: \{ .*) \}\$|\1, nodes: [$node1] }|" "$ROOT/pipelines/kernel-abc-replay.yaml" >"$TEST_TMP/kernel-abc-replay.yaml"
chmod 0644 "$TEST_TMP/kernel-abc-replay.yaml"
like "$(grep '^slurm:' "$TEST_TMP/kernel-abc-replay.yaml")" "nodes: \[$node1\] \}\$" "the pipeline pinned to $node1"
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
rec_uuid=$(awk -F'\t' '$1 == "attr" { for (i = 2; i <= NF; i++) if ($i ~ /^uuid=/) print substr($i, 6) }' "$F/ert/h100-quick.tsv")
like "$rec_uuid" '^GPU-' "the recording's UUID read ($rec_uuid)"
is "$(sql "select count(*) || ' ' || count(*) filter (where gpu_uuid = 'GPU-replay-' || node || '-' || gpu_index || '-of-$rec_uuid' and synthetic like 'replay of $rec_uuid %') from ceilings where run_id = $run")" \
	"$(sql "select count(*) from ceilings where run_id = $run") $(sql "select count(*) from ceilings where run_id = $run")" \
	"ceilings carry the replayed GPU's UUID (naming the recorded one) and say they are a replay"
is "$(sql "select count(distinct node) from ceilings where run_id = $run")" 1 "and the node"

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
	"roofline:succeeded,chart:succeeded" "the analysis and chart steps ran on the daemon side"
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
like "$out" "kernel_C\(double \*, const double \*, .*bandwidth-bound" "roofline show prints the roofline table"
like "$(as alice "$BIN/roofline" show --csv "$run" | head -1)" "^kernel,precision,ai_l1,ai_l2,ai_dram,gflops" "and CSV"
chart=$(sql "select fields->>'file' from step_records r join steps s on s.id = r.step where s.run_id = $run and r.kind = 'chart' and fields->>'format' = 'png' limit 1")
dir=$(sql "select spool_dir from runs where id = $run")/chart/attempt-1
ok "the PNG chart exists ($dir/$chart)" test -s "$dir/$chart"
is "$(head -c 4 "$dir/$chart" | od -An -c | tr -d ' ')" "211PNG" "and is a PNG"

# -- the CLI's chart and history, from the database, as alice
mkdir -p "$TEST_TMP/plot" && chown alice "$TEST_TMP/plot"
ok "roofline plot draws the run from the database" \
	as alice sh -c "cd '$TEST_TMP/plot' && '$BIN/roofline' plot --format png $run"
is "$(head -c 4 "$TEST_TMP/plot/roofline-plot-$run/roofline.png" | od -An -c | tr -d ' ')" "211PNG" \
	"roofline-plot-$run/roofline.png is a PNG"
hist=$(as alice "$BIN/roofline" history kernel_C 2>&1)
like "$hist" "bandwidth-bound +$run" "roofline history kernel_C lists this run"
as bob "$BIN/roofline" history kernel_C >/dev/null 2>&1
is "$?" 1 "bob sees no history of alice's kernels"

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
