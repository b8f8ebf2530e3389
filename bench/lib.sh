# bench/lib.sh - what the cluster benchmarks share: the smoke convention, a
# snapshot of the built programs in the installed layout, the cluster they
# run on and a daemon configuration.  Source it after setting PROG, REPO and
# VAR (the cluster's directory, exported as ROOFLINE_VAR) and, for those that
# run steps, BUSER; it sets the names below.
# shellcheck shell=bash disable=SC2034 # its names are for the scripts that source it
#
# Smoke mode (every bench/*.sh, docs/benchmarks.md): BENCH_SMOKE=1 runs the
# whole script at a tiny size in seconds and writes its outputs under a
# scratch directory; tests/integration/bench-smoke.t runs each so.
#   BENCH_SMOKE    1: smoke mode (default 0)
#   BENCH_VARIANT  the build the benchmark runs (default release; the smoke
#                  test passes its own, san)
#   BENCH_USER     the user whose runs are measured (default rlbench)
#
# The cluster: if the one in $VAR is already running (a test's, a
# developer's), the benchmark runs on it, makes its partition if it has one
# (ROOFLINE_SLURM_EXTRA's PartitionName line) and removes only what it made:
# its files (under $WORK, a directory of its own inside $VAR) and that
# partition.  Otherwise it starts the cluster and, at the end, stops it and
# removes $VAR (KEEP=1 leaves it running).
#
#   WORK    the benchmark's files: $VAR, or $VAR/$PROG.PID on a running cluster
#   SNAP    $WORK/snap: the snapshot, laid out as `make install PREFIX=$SNAP`
#           lays out the programs (mk/install.mk), so that they find their
#           plugins, migrations and tables as installed ones do
#           (common/paths.c): SNAP_BIN (roofline), SNAP_SBIN (rooflined,
#           roofline-job), SNAP_PLUGINS, SNAP_SQL, SNAP_ETC, and SNAP_BENCH
#           (the benchmark's own programs, not installed: lib/rooflined/bench)
#   CONF DLOG SPOOL   the daemon's configuration, log and spool directory

BENCH_SMOKE=${BENCH_SMOKE:-0}
BENCH_VARIANT=${BENCH_VARIANT:-release}
BENCH_BUILD=$REPO/build/$BENCH_VARIANT
# the cluster's PostgreSQL loads this build's server extension (scripts/cluster)
export ROOFLINE_PGEXT=${ROOFLINE_PGEXT:-$BENCH_BUILD/pgext}
BUSER=${BENCH_USER:-${BUSER:-rlbench}}

if "$REPO/scripts/cluster" status >/dev/null 2>&1; then
	BENCH_REUSE=1
	WORK=$VAR/$PROG.$$
else
	BENCH_REUSE=0
	WORK=$VAR
fi
BENCH_PARTITION= # the partition this benchmark made on a running cluster
BENCH_DB=        # the database bench_database made

SNAP=$WORK/snap
SNAP_BIN=$SNAP/bin
SNAP_SBIN=$SNAP/sbin
SNAP_PLUGINS=$SNAP/lib/rooflined/plugins
SNAP_BENCH=$SNAP/lib/rooflined/bench
SNAP_SQL=$SNAP/share/rooflined/sql
SNAP_ETC=$SNAP/share/rooflined/etc
CONF=$WORK/rooflined.yaml
DLOG=$WORK/rooflined.log
SPOOL=$WORK/spool
BENCH_TICK=$(getconf CLK_TCK)

# cpu_s PID: user + system CPU seconds of PID so far.
cpu_s() { awk -v t="$BENCH_TICK" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / t }' "/proc/$1/stat"; }

# bench_snapshot PLUGIN... [-- BENCH_PROGRAM...]: copy rooflined, roofline,
# roofline-job, the migrations, the tables of etc/, the named plugins (*.so
# names) and bench programs of $BENCH_BUILD into $SNAP, so that a rebuild
# meanwhile (other work on the machine) changes nothing under the benchmark.
bench_snapshot() {
	local plugins=() programs=() in_programs=0 p
	# from $SNAP now: a caller may name another one (SNAP=... bench_snapshot)
	local bin=$SNAP/bin sbin=$SNAP/sbin plug=$SNAP/lib/rooflined/plugins
	local bench=$SNAP/lib/rooflined/bench sql=$SNAP/share/rooflined/sql etc=$SNAP/share/rooflined/etc
	local build=$REPO/build/$BENCH_VARIANT
	for p in "$@"; do
		if [[ $p == -- ]]; then in_programs=1; continue; fi
		if ((in_programs)); then programs+=("$p"); else plugins+=("$p"); fi
	done
	rm -rf "$SNAP"
	mkdir -p "$bin" "$sbin" "$plug" "$bench" "$sql" "$etc" "$SPOOL"
	cp "$REPO"/sql/*.sql "$sql/"
	cp "$REPO"/etc/*.tsv "$etc/"
	cp "$build/bin/roofline" "$bin/"
	cp "$build"/bin/{rooflined,roofline-job} "$sbin/"
	for p in "${programs[@]}"; do cp "$build/bench/$p" "$bench/"; done
	for p in "${plugins[@]}"; do cp "$build/plugins/$p" "$plug/"; done
	chmod -R a+rX "$SNAP"
	chmod 0755 "$WORK" "$SPOOL"
}

# bench_config POLL [LOG_LEVEL]: the daemon's configuration ($CONF) for a
# benchmark, running the facility's and $BUSER's steps from the snapshot
# ($SNAP).
bench_config() {
	cat >"$CONF" <<CONF
database: ""
spool_dir: $SPOOL
plugin_dir: $SNAP/lib/rooflined/plugins
pipeline_dir: ""
job_program: $SNAP/sbin/roofline-job
facility_user: $BUSER
pidfile: $WORK/rooflined.pid
poll_interval: $1
retry_backoff: 1s
log_level: ${2:-info}
log: stderr
CONF
}

# bench_cluster_start [START_OPTION...]: start the cluster in $VAR (its log
# in $WORK/cluster-start.log), or take the running one and make
# ROOFLINE_SLURM_EXTRA's partition on it; then its environment (SLURM_CONF,
# PG*) is exported and $BUSER added.  False, with the log's end on stderr,
# when it does not start.
bench_cluster_start() {
	local part
	mkdir -p "$WORK"
	if ((BENCH_REUSE)); then
		eval "$("$REPO/scripts/cluster" env)"
		part=$(sed -n 's/^PartitionName=\([^ ]*\) .*/\1/p' <<<"${ROOFLINE_SLURM_EXTRA:-}")
		if [[ -n $part ]] && ! scontrol -o show partition "$part" >/dev/null 2>&1; then
			# shellcheck disable=SC2046 # the line's words are scontrol's
			scontrol create $(grep '^PartitionName=' <<<"$ROOFLINE_SLURM_EXTRA") ||
				return 1
			BENCH_PARTITION=$part
		fi
	else
		: >"$WORK/cluster-start.log"
		# the cluster's PostgreSQL loads the variant's server extension:
		# built here, as the scripts build the programs they run (a
		# fresh clone has none for release)
		if [[ $ROOFLINE_PGEXT == "$BENCH_BUILD/pgext" ]]; then
			make -s -C "$REPO" -j2 VARIANT="$BENCH_VARIANT" pgext >>"$WORK/cluster-start.log" 2>&1 ||
				{ tail -5 "$WORK/cluster-start.log" >&2; return 1; }
		fi
		"$REPO/scripts/cluster" start "$@" >>"$WORK/cluster-start.log" 2>&1 ||
			{ tail -5 "$WORK/cluster-start.log" >&2; return 1; }
		eval "$("$REPO/scripts/cluster" env)"
	fi
	"$REPO/scripts/cluster" add-user "$BUSER" >/dev/null
}

# bench_database NAME: a new, empty database NAME (owner rooflined) on the
# cluster, exported as PGDATABASE, dropped by bench_cluster_release: what
# the benchmark writes with psql stays out of the cluster's own database.
bench_database() {
	runuser -u postgres -- env PGUSER=postgres PGDATABASE=postgres PGHOST="$PGHOST" \
		PGPORT="$PGPORT" psql -X -q -v ON_ERROR_STOP=1 -c "set client_min_messages = warning" \
		-c "drop database if exists $1" \
		-c "create database $1 owner rooflined" >/dev/null || return 1
	BENCH_DB=$1
	export PGDATABASE=$1
}

# bench_cluster_release: on a cluster it started, stop it and remove $VAR
# (with KEEP=1, leave it running and say so); on a running one it took,
# remove its partition, its database and $WORK only (KEEP=1: not $WORK).
bench_cluster_release() {
	if ((BENCH_REUSE)); then
		[[ -z $BENCH_PARTITION ]] || scontrol delete PartitionName="$BENCH_PARTITION" || true
		[[ -z $BENCH_DB ]] || runuser -u postgres -- env PGUSER=postgres PGDATABASE=postgres \
			PGHOST="$PGHOST" PGPORT="$PGPORT" psql -X -q \
			-c "drop database if exists $BENCH_DB with (force)" >/dev/null || true
		if [[ ${KEEP:-0} == 1 ]]; then
			printf '%s: KEEP=1: its files left in %s\n' "$PROG" "$WORK" >&2
		else
			rm -rf "$WORK"
		fi
	elif [[ ${KEEP:-0} == 1 ]]; then
		printf '%s: KEEP=1: cluster left running in %s\n' "$PROG" "$VAR" >&2
	elif [[ -d $VAR ]]; then
		"$REPO/scripts/cluster" stop >/dev/null 2>&1 || true
		rm -rf "$VAR"
	fi
}
