#!/bin/bash
# tests/gpu/user-app.sh - tests/gpu/stack.sh's user phase, on the running
# local cluster (its environment: SLURM_CONF, PG*, ROOFLINE_VAR): an
# ordinary user's pipeline on a third-party application built here from
# its public source.  Builds BabelStream's CUDA version from STACK_APP_SRC
# (tests/gpu/build-babelstream.sh; STACK_NVML_INCLUDE for a toolkit without
# nvml.h), then scripts/demo submits tests/gpu/babelstream.yaml as its
# ordinary user with `roofline submit --wait`, the program and
# tests/gpu/run-attached.sh attached; then prints the profile's FLOPs and
# bytes per array element of each kernel (from its kernel records), and
# the kernel names of the chart's key and of the report.  Exit status:
# the build's, else scripts/demo's.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${STACK_APP_SRC:?the source of BabelStream}" "${ROOFLINE_VAR:?}"
work=$ROOFLINE_VAR/app
n=33554432
mkdir -p "$work"
chmod 0755 "$work"
echo "===== build: tests/gpu/build-babelstream.sh $STACK_APP_SRC $work/babelstream-cuda"
cat "$STACK_APP_SRC/REVISION" 2>/dev/null
NVML_INCLUDE=${STACK_NVML_INCLUDE:-} timeout 300 "$REPO/tests/gpu/build-babelstream.sh" \
	"$STACK_APP_SRC" "$work/babelstream-cuda" 2>&1 || exit 1
cp "$REPO/tests/gpu/run-attached.sh" "$work/"
echo "===== scripts/demo tests/gpu/babelstream.yaml babelstream-cuda run-attached.sh"
"$REPO/scripts/demo" "$REPO/tests/gpu/babelstream.yaml" "$work/babelstream-cuda" "$work/run-attached.sh"
rc=$?
run=$(psql -X -t -A -c "select max(id) from runs where pipeline_name = 'babelstream'")
[[ -n $run ]] || exit "$rc"
echo "===== the profile's kernels per element (N = $n, double), run $run"
psql -X -A -F $'\t' -P footer=off -c "select k.fields->>'kernel' as kernel, count(*) as launches,
	round((sum(2 * (k.fields->>'sm__sass_thread_inst_executed_op_dfma_pred_on.sum')::float8
		+ (k.fields->>'sm__sass_thread_inst_executed_op_dadd_pred_on.sum')::float8
		+ (k.fields->>'sm__sass_thread_inst_executed_op_dmul_pred_on.sum')::float8) / (count(*) * $n))::numeric, 4) as flop_per_elem,
	round((sum((k.fields->>'dram__bytes.sum')::float8) / (count(*) * $n))::numeric, 3) as dram_b_per_elem,
	round((sum((k.fields->>'lts__t_bytes.sum')::float8) / (count(*) * $n))::numeric, 3) as l2_b_per_elem,
	round((sum((k.fields->>'l1tex__t_bytes.sum')::float8) / (count(*) * $n))::numeric, 3) as l1_b_per_elem,
	round((avg((k.fields->>'gpu__time_duration.sum')::float8) / 1e3)::numeric, 1) as us_each,
	max(k.fields->>'gpu_name') as gpu
	from step_records k join steps s on s.id = k.step
	where s.run_id = $run and k.kind = 'kernel' group by 1 order by min(k.seq)"
echo "===== the chart's key (roofline.svg) and the report's kernels (report.html)"
dir=$ROOFLINE_VAR/demo/spool/run-$run
grep -ohE '(for_each_kernel|dot_kernel)[^<]*' "$dir"/chart/attempt-*/roofline.svg 2>/dev/null | sort | uniq -c
grep -ohE '(for_each_kernel|dot_kernel)[^<"]*' "$dir"/report/attempt-*/report.html 2>/dev/null | sort | uniq -c
exit "$rc"
