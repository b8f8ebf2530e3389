#!/bin/bash
# bench/soak.sh at its smoke size (BENCH_SMOKE=1: a dozen runs, one each of
# kill -9 of the active daemon, a full spool and a hanging notify hook) on
# this test's cluster: it exits 0 (no violation of its invariants), every
# run was queued and ended, and the faults were injected.
. "$(dirname "$0")/../lib.sh"
need_cluster
export BENCH_SMOKE=1 BENCH_VARIANT=$VARIANT BENCH_SMOKE_DIR=$TEST_TMP/soak
mkdir -p "$BENCH_SMOKE_DIR"
out=$("$ROOT/bench/soak.sh" 2>&1)
rc=$?
is "$rc" 0 "bench/soak.sh BENCH_SMOKE=1 exits 0" || diag "$out"
like "$out" "faults: daemon-kill=1 spool-full=1 notify-hang=1" "the three faults were injected"
like "$out" "runs: succeeded=12 \\(of 12 queued" "the twelve runs succeeded"
like "$out" "takeover \\(standby after kill -9\\): median [0-9.]+ s, max [0-9.]+ s \\(n=1\\)" "the takeover time is measured"
like "$out" "violations: 0" "no violation"
note "$out"
done_testing
