#!/bin/bash
# What of the daemon's environment reaches its jobs (daemon/launch.c
# job_environment: otherwise a clean one): FONTCONFIG_FILE, which
# scripts/deps --unpack prints for its prefix's fonts, reaches the gnuplot a
# daemon-side chart step runs (issue 22 item 8: without it the GPU node's
# PNG charts had no text).  The facility's gnuplot_program here is a
# wrapper that writes its environment down and runs the real gnuplot.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
need_cluster
command -v gnuplot >/dev/null || skip_all "needs gnuplot"
. "$ROOT/tests/daemon_lib.sh"
daemon_setup

ENVS=$TEST_TMP/envs # the wrapper runs as alice
mkdir -p "$ENVS" && chmod 1777 "$ENVS"
GP=$TEST_TMP/gnuplot-env
printf '#!/bin/sh\nenv >%s/gnuplot.env\nexec %s "$@"\n' "$ENVS" "$(command -v gnuplot)" >"$GP"
chmod 0755 "$GP"
echo "gnuplot_program: $GP" >>"$DAEMON_CONF"
FONTS=/opt/rooflined-stack/etc/fonts/rooflined-stack.conf # only its name counts
FONTCONFIG_FILE=$FONTS daemon_start

F=$ROOT/tests/fixtures
for f in "$F/ert/h100-quick.tsv" "$F/ncu/kernel_abc.raw.csv"; do
	cp "$f" "$TEST_TMP/" && chmod 0644 "$TEST_TMP/$(basename "$f")"
done
sed -n '/^name:/,$p' "$ROOT/pipelines/kernel-abc-replay.yaml" | sed 's/^name: .*/name: jobenv/' |
	awk '/^  - id: (regressions|report)/ { skip = 1; next } /^  - id:/ { skip = 0 } !skip' \
		>"$TEST_TMP/jobenv.yaml"
chmod 0644 "$TEST_TMP/jobenv.yaml"
run=$(as alice "$BIN/roofline" submit --attach "$TEST_TMP/h100-quick.tsv" \
	--attach "$TEST_TMP/kernel_abc.raw.csv" "$TEST_TMP/jobenv.yaml" 2>"$TEST_TMP/submit.err")
wait_run "$run" 90
is "$(run_state "$run")" succeeded "kernel-abc-replay's chart step ran (run $run)"
ok "the facility's gnuplot ran" test -s "$ENVS/gnuplot.env"
like "$(cat "$ENVS/gnuplot.env" 2>/dev/null)" "(^|
)FONTCONFIG_FILE=$FONTS(
|\$)" "gnuplot got the daemon's FONTCONFIG_FILE"
like "$(cat "$ENVS/gnuplot.env" 2>/dev/null)" "(^|
)PATH=/usr/local/bin:/usr/bin:/bin(
|\$)" "and the jobs' clean PATH, not the daemon's"
done_testing
