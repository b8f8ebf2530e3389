# bench/lib.sh - what the engine benchmarks share: a snapshot of the release
# binaries and a daemon configuration.  Source it after setting REPO, VAR and
# BUSER; it sets SNAP, CONF, DLOG and SPOOL under $VAR.
# shellcheck shell=bash

SNAP=$VAR/snap
CONF=$VAR/rooflined.yaml
DLOG=$VAR/rooflined.log
SPOOL=$VAR/spool
BENCH_TICK=$(getconf CLK_TCK)

# cpu_s PID: user + system CPU seconds of PID so far.
cpu_s() { awk -v t="$BENCH_TICK" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / t }' "/proc/$1/stat"; }

# bench_snapshot PLUGIN... [-- BENCH_PROGRAM...]: copy rooflined, roofline,
# roofline-job, the migrations, the named plugins (*.so names) and bench
# programs into $SNAP, so that a rebuild of build/release meanwhile (other
# work on the machine) changes nothing under the benchmark.
bench_snapshot() {
	local plugins=() programs=() in_programs=0 p
	for p in "$@"; do
		if [[ $p == -- ]]; then in_programs=1; continue; fi
		if ((in_programs)); then programs+=("$p"); else plugins+=("$p"); fi
	done
	rm -rf "$SNAP"
	mkdir -p "$SNAP/bin" "$SNAP/plugins" "$SNAP/share/rooflined/sql" "$SPOOL"
	cp "$REPO"/sql/*.sql "$SNAP/share/rooflined/sql/"
	cp "$REPO"/build/release/bin/{rooflined,roofline,roofline-job} "$SNAP/bin/"
	for p in "${programs[@]}"; do cp "$REPO/build/release/bench/$p" "$SNAP/bin/"; done
	for p in "${plugins[@]}"; do cp "$REPO/build/release/plugins/$p" "$SNAP/plugins/"; done
	chmod -R a+rX "$SNAP"
	chmod 0755 "$SPOOL"
}

# bench_config POLL [LOG_LEVEL]: the daemon's configuration for a benchmark,
# running the facility's and $BUSER's steps from the snapshot.
bench_config() {
	cat >"$CONF" <<CONF
database: ""
spool_dir: $SPOOL
plugin_dir: $SNAP/plugins
pipeline_dir: ""
job_program: $SNAP/bin/roofline-job
facility_user: $BUSER
pidfile: $VAR/rooflined.pid
poll_interval: $1
retry_backoff: 1s
log_level: ${2:-info}
log: stderr
CONF
}

# bench_cluster_release: stop the benchmark's cluster and remove $VAR, or,
# with KEEP=1, leave it running and say so.
bench_cluster_release() {
	if [[ ${KEEP:-0} == 1 ]]; then
		printf '%s: KEEP=1: cluster left running in %s\n' "$PROG" "$VAR" >&2
	elif [[ -d $VAR ]]; then
		"$REPO/scripts/cluster" stop >/dev/null 2>&1 || true
		rm -rf "$VAR"
	fi
}
