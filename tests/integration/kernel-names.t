#!/bin/bash
# Distinct kernels told apart (issue 22 item 7): kernels of templated code
# share their first 40 characters and their one-name short form, so
# `roofline show`'s table, the chart's key (kernels.txt and the SVG) and the
# report's key showed the same name for all of them.  A SYNTHETIC recording:
# tests/fixtures/ncu/kernel_abc.raw.csv (measured on an H100) with its three
# kernels renamed the way nvcc names BabelStream-style for_each_kernel
# instances of extended __device__ lambdas (copy, mul, triad), replayed
# through pipelines/kernel-abc-replay.yaml on the local cluster; each of the
# three places must show three different names, each naming its operation.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

F=$ROOT/tests/fixtures
name() { # name OP: the synthetic kernel name of operation OP
	printf 'void for_each_kernel<__nv_dl_wrapper_t<__nv_dl_tag<void (CUDAStream<double>::*)(), &CUDAStream<double>::%s, 1u>, double *, double *, double *>>(long, T1)' "$1"
}
sed -e "s/kernel_A(double \*, long, double)/$(name copy | sed 's/[&*]/\\&/g')/" \
    -e "s/kernel_B(double \*, long, double)/$(name mul | sed 's/[&*]/\\&/g')/" \
    -e "s/kernel_C(double \*, const double \*, long, double)/$(name triad | sed 's/[&*]/\\&/g')/" \
	"$F/ncu/kernel_abc.raw.csv" >"$TEST_TMP/kernel_abc.raw.csv"
is "$(grep -c 'for_each_kernel<__nv_dl_wrapper_t' "$TEST_TMP/kernel_abc.raw.csv")" 3 \
	"the synthetic recording: kernel_A, B, C renamed (three kernel rows)"
cp "$F/ert/h100-quick.tsv" "$ROOT/pipelines/kernel-abc-replay.yaml" "$TEST_TMP/"
# A pipeline name of its own: a run named kernel-abc-replay would be the
# baseline of another test's next run of that pipeline (regressions.t).
sed -i 's/^name: kernel-abc-replay$/name: kernel-names-replay/' "$TEST_TMP/kernel-abc-replay.yaml"
grep -q '^name: kernel-names-replay$' "$TEST_TMP/kernel-abc-replay.yaml" || bail_out "cannot rename the pipeline"
chmod 0644 "$TEST_TMP/h100-quick.tsv" "$TEST_TMP/kernel-abc-replay.yaml" "$TEST_TMP/kernel_abc.raw.csv"

out=$(as alice "$BIN/roofline" submit --wait --attach "$TEST_TMP/h100-quick.tsv" \
	--attach "$TEST_TMP/kernel_abc.raw.csv" "$TEST_TMP/kernel-abc-replay.yaml" 2>&1)
run=$(head -1 <<<"$out")
is "$(run_state "$run")" succeeded "kernel-abc-replay on the renamed kernels (run $run) succeeded"
is "$(sql "select count(distinct kernel) from roofline_points where run_id = $run")" 3 \
	"the analysis has three kernels"

# three names, different, each naming its operation: distinct NAMES...
three() { # three WHAT NAMES: NAMES one a line
	local names=$2
	is "$(sort -u <<<"$names" | wc -l)" 3 "$1: three different names"
	for op in copy mul triad; do
		is "$(grep -c "\b$op\b" <<<"$names")" 1 "$1: one names $op"
	done
	note "$1: $(tr '\n' '|' <<<"$names")"
}

# roofline show: the kernel column (40 bytes) of the rows under the header
as alice "$BIN/roofline" show "$run" >"$TEST_TMP/show.out"
three "roofline show" "$(sed -n '/^KERNEL /,$p' "$TEST_TMP/show.out" | sed -n '2,4p' |
	cut -c1-40 | sed 's/ *$//')"

# the chart's key: kernels.txt's short names, and the SVG's key titles
dir=$(sql "select spool_dir from runs where id = $run")
three "the chart's kernels.txt" "$(grep -v '^#' "$dir/chart/attempt-1/kernels.txt" | cut -f3)"
three "the chart's SVG key" "$(grep -o '>[0-9]  for_each_kernel[^<]*<' "$dir/chart/attempt-1/roofline.svg" |
	sed 's/^>[0-9]  //; s/<$//' | sort -u)"

# the report: its chart key (an <ol class="key">, a name per kernel)
three "the report's key" "$(sed -n '/<ol class="key"/,/<\/ol>/p' "$dir/report/attempt-1/report.html" |
	grep -o '<span class="name">[^<]*</span>' | sed 's/<[^>]*>//g')"
done_testing
