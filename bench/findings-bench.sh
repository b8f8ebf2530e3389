#!/bin/bash
# bench/findings-bench.sh - the two findings analyses at a facility's scale,
# in the daemon (issue 11): the fleet step over 1,000 GPUs with 90 nights of
# history, and the regressions step of a 500-kernel run against 30 earlier
# runs.  A benchmark, not a test: it prints what it measured and checks
# nothing but that each step succeeded.  Results: docs/findings-bench.md.
#
# Usage: bench/findings-bench.sh [-n REPEATS] [-o DIR] [-b COMMIT]
#   -n REPEATS  repeats of each step (5); the median is reported
#   -o DIR      raw results: per-repeat lines, EXPLAIN plans, the summary
#               (default /tmp/findings-bench.DATE)
#   -b COMMIT   also time COMMIT's plugins with COMMIT's sql/ functions,
#               side by side on the same data ("before"); the database
#               gets COMMIT's migrations first, then this tree's; the
#               night's ingest is timed in both states too (not with
#               SITE=1: the before nights would be in tonight's series)
#   (env) NODES=500 GPN=2 (GPUs per node) NIGHTS=90 KERNELS=500 KRUNS=31
#   set the sizes;
#   REGRESSIONS=0 leaves the regressions step out, EXPLAIN=0 the plans;
#   REUSE_DB=1 measures on the database a run with KEEP=1 left (no new
#   data; the later nights an earlier run's ingest stage added are removed
#   first);
#   WINDOW=90 the fleet step's `nights` (its own history window; the
#   plugin's default is 14); SITE=1 also times the facility site's rebuild
#   (bench/site-bench.c: daemon/site.c's site_rebuild on this database);
#   DB_SESSIONS=4 the daemon's db_sessions (its default): the sessions the
#   night's ingest is stored through and the fleet and regressions steps'
#   history queries read through, each side by side with one session;
#   INGEST_AB=ROUNDS also times the night's ingest side by side with the
#   records and indexes of 0.2.0 (one sweep record per size; the indexes
#   sql/031 and 036 dropped), alternated, rolled back (the stage's comment says how)
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): defaults -n 1, NODES=2 NIGHTS=3
# KERNELS=3 KRUNS=3 WINDOW=3 INGEST_AB=2, -o $BENCH_SMOKE_DIR (else a new temporary
# directory).  BENCH_VARIANT names another build than release.
#
# It builds VARIANT=release, copies what it runs into the cluster directory
# (var/bench-findings, own PostgreSQL 15 and a one-node Slurm it does not
# use; ROOFLINE_VAR names another, and one already running there is used,
# bench/lib.sh), applies sql/*.sql with psql to a database of its own, and generates the history in
# PostgreSQL (bench/findings-bench.sql: recorded figures x declared noise,
# labelled synthetic, a few declared perturbations).  Each step is run by
# bench/findings-bench.c, which links daemon/step_inputs.c: (a) the history
# queries and the attempt's history/records.tsv, exactly as the daemon
# prepares a daemon-side step, then (b) roofline-job on the attempt
# directory.  Stops the cluster and removes its directory (KEEP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PROG=findings-bench
repeats=5 out=/tmp/findings-bench.$(date -u +%Y%m%dT%H%M%S) before=
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then
	repeats=1 out=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/findings-bench-smoke.XXXXXX)}
	: "${NODES:=2}" "${NIGHTS:=3}" "${KERNELS:=3}" "${KRUNS:=3}" "${WINDOW:=3}" "${INGEST_AB:=2}"
fi
while getopts n:o:b: opt; do
	case $opt in
	n) repeats=$OPTARG ;;
	o) out=$OPTARG ;;
	b) before=$OPTARG ;;
	*) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
DB_SESSIONS=${DB_SESSIONS:-4}
NODES=${NODES:-500} GPN=${GPN:-2} NIGHTS=${NIGHTS:-90} KERNELS=${KERNELS:-500} KRUNS=${KRUNS:-31}
WINDOW=${WINDOW:-90}
mkdir -p "$out"
SUMMARY=$out/summary.txt
say() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }

export ROOFLINE_VAR=${ROOFLINE_VAR:-$REPO/var/bench-findings}
VAR=$ROOFLINE_VAR
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
trap bench_cluster_release EXIT

PLUGINS=(fleet.so regressions.so ert.so hierarchical.so)
B=build/$BENCH_VARIANT
make -s -j2 VARIANT="$BENCH_VARIANT" $B/bin/{rooflined,roofline,roofline-job} \
	"${PLUGINS[@]/#/$B/plugins/}" $B/bench/findings-bench $B/bench/site-bench
rm -rf "$SNAP" "$WORK/work"
mkdir -p "$WORK"
bench_snapshot "${PLUGINS[@]}" -- findings-bench site-bench
W=$WORK/work
mkdir -p "$W"

# COMMIT's plugins and migrations, built in a worktree of their own.
if [[ -n $before ]]; then
	bt=$WORK/before-tree
	git worktree remove --force "$bt" 2>/dev/null || rm -rf "$bt"
	git worktree add --detach "$bt" "$before" >/dev/null 2>&1
	make -s -C "$bt" -j2 VARIANT=release build/release/plugins/fleet.so \
		build/release/plugins/regressions.so
	mkdir -p "$SNAP/before/plugins" "$SNAP/before/sql"
	cp "$bt"/build/release/plugins/{fleet,regressions}.so "$SNAP/before/plugins/"
	cp "$bt"/sql/*.sql "$SNAP/before/sql/"
	before=$(git -C "$bt" rev-parse --short HEAD)
	git worktree remove --force "$bt"
fi

bench_cluster_start --nodes 1 || { echo "$PROG: the cluster did not start" >&2; exit 1; }
q() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
# The indexes of `ceilings` an INGEST_AB stage makes for 0.2.0's side.
AB_INDEXES="ab_history_idx, ab_gpu_history_idx, ab_fleet_idx"
if [[ ${REUSE_DB:-0} == 1 ]]; then
	export PGDATABASE=findings_bench # the kept one: not dropped at the end
else
	bench_database findings_bench || { echo "$PROG: cannot create the database" >&2; exit 1; }
	if [[ -n $before ]]; then
		for f in "$SNAP"/before/sql/*.sql; do q -f "$f" >/dev/null; done
		for f in "$SNAP_SQL"/*.sql; do
			[[ -e $SNAP/before/sql/$(basename "$f") ]] || NEW_SQL+=("$f")
		done
	else
		for f in "$SNAP_SQL"/*.sql; do q -f "$f" >/dev/null; done
	fi
fi
# The history tables are partitioned by month (sql/010_partitions.sql): the
# months the synthetic history covers get their partitions, as the daemon
# would have made them night after night.
if [[ ${REUSE_DB:-0} != 1 ]] && q -c "select 1 from pg_proc where proname = 'rl_partition_create'" | grep -q 1; then
	q -c "select count(rl_partition_create(t.name, m::date)) from history_tables t,
	      generate_series(rl_month(now() - interval '$((NIGHTS + 40)) days')::timestamp,
	                      rl_month(now() + interval '1 month')::timestamp, interval '1 month') m" >/dev/null
fi

say "# findings benchmark, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs' || echo '+changes')"
say "# machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/^Mem/ { print $2 }') GiB; $(q -c 'select version()' | cut -d' ' -f1-2); work_mem $(q -c 'show work_mem'), shared_buffers $(q -c 'show shared_buffers'); load $(cut -d' ' -f1-3 /proc/loadavg)"
say "# sizes: $NODES nodes x $GPN = $((NODES * GPN)) GPUs x $((NIGHTS + 1)) nights; $KERNELS kernels x $KRUNS runs; repeats $repeats"

# ---- the recordings the synthetic data is made of ----------------------------
# ert's replay of the recorded H100 (one GPU): 18 ceilings and the sweep.
CUDA_VISIBLE_DEVICES=0 "$SNAP_SBIN/roofline-job" --plugin-dir "$SNAP_PLUGINS" \
	--run ert --out "$W/ert" replay="$REPO/tests/fixtures/ert/h100-quick.tsv" \
	quick=true 2>>"$out/setup.log"
# the hierarchical plugin's points of the kernel_abc and gsrb captures
mkdir -p "$W/k/ert" "$W/k/abc" "$W/k/gsrb"
cp tests/fixtures/ert/h100-ert-records.tsv "$W/k/ert/records.tsv"
cp tests/fixtures/analysis/kernel_abc.records.tsv "$W/k/abc/records.tsv"
cp tests/fixtures/analysis/gsrb.records.tsv "$W/k/gsrb/records.tsv"
ROOFLINE_ETC=$REPO/etc "$SNAP_SBIN/roofline-job" --plugin-dir "$SNAP_PLUGINS" \
	--run hierarchical --out "$W/k/points" --input ceilings="$W/k/ert" \
	--input abc="$W/k/abc" --input gsrb="$W/k/gsrb" same_node=false 2>>"$out/setup.log"

# tsv KIND KEY...: the records of KIND in stdin as TSV of those keys (\N: none)
tsv() {
	awk -F'\t' -v kind="$1" -v keys="${*:2}" '
		BEGIN { n = split(keys, k, " ") }
		$1 == kind { delete f
			for (i = 2; i <= NF; i++) { p = index($i, "="); f[substr($i, 1, p - 1)] = substr($i, p + 1) }
			line = ""
			for (i = 1; i <= n; i++) line = line (i > 1 ? "\t" : "") ((k[i] in f) ? f[k[i]] : "\\N")
			print line }'
}
{
	cat <<'SQL'
create temp table tmpl_ceiling (seq serial, gpu_name text, driver text,
	cuda text, cc text, sm_clock_mhz float8, mem_clock_mhz float8, name text,
	kind text, value float8, unit text, trials int, min float8, max float8,
	spread_pct float8, geometry text);
create temp table tmpl_point (seq serial, kernel text collate "C", precision text,
	level text, invocations int, flops float8, bytes float8, ai float8,
	time_s float8, gflops float8, roof_gflops float8, pct_of_roof float8,
	bound_level text, bound_ceiling text, pct_of_bound float8, verdict text,
	is_primary boolean, gpu_name text);
copy tmpl_ceiling (gpu_name, driver, cuda, cc, sm_clock_mhz, mem_clock_mhz,
	name, kind, value, unit, trials, min, max, spread_pct, geometry) from stdin;
SQL
	tsv ceiling gpu_name driver cuda cc sm_clock_mhz mem_clock_mhz name kind \
		value unit trials min max spread_pct geometry <"$W/ert/records.tsv"
	printf '\\.\n'
	cat <<'SQL'
copy tmpl_point (kernel, precision, level, invocations, flops, bytes, ai,
	time_s, gflops, roof_gflops, pct_of_roof, bound_level, bound_ceiling,
	pct_of_bound, verdict, is_primary, gpu_name) from stdin;
SQL
	tsv point kernel precision level invocations flops bytes ai time_s gflops \
		roof_gflops pct_of_roof bound_level bound_ceiling pct_of_bound \
		verdict primary gpu_name <"$W/k/points/records.tsv"
	printf '\\.\n'
	cat bench/findings-bench.sql
} >"$out/data.sql"
t0=$(date +%s.%N)
[[ ${REUSE_DB:-0} == 1 ]] ||
q -v tonight="$(date -u +%F)" -v nodes="$NODES" -v gpn="$GPN" -v nights="$NIGHTS" \
	-v kernels="$KERNELS" -v kruns="$KRUNS" -v kowner="$BUSER" -f "$out/data.sql" >/dev/null
FRUN=$(q -c "select min(id) from runs where pipeline_name = 'fleet-bench' and state = 'running'")
KRUN=$(q -c "select min(id) from runs where pipeline_name = 'kernels-bench' and state = 'running'")
# A kept database holds the later nights an earlier run's ingest stage
# added: they go (their runs, and their elements at the end of each
# series), so that tonight is the fleet run's night again, as the site's
# history pages need.
if [[ ${REUSE_DB:-0} == 1 ]]; then
	# the indexes an INGEST_AB stage makes for 0.2.0's side, if one was
	# interrupted before dropping them again (sql/031 and 036 have them
	# gone; an earlier version of this script named two of them so)
	q -c "drop index if exists ceilings_history_idx, ceilings_name_idx, $AB_INDEXES" >/dev/null
	later=$(q -c "select count(*) from runs where pipeline_name = 'fleet-bench' and id > $FRUN")
	if ((later > 0)); then
		q -c "update ceiling_series s set nights = s.nights[1:x.k], run_ids = s.run_ids[1:x.k],
			vals = s.vals[1:x.k], drivers = s.drivers[1:x.k]
		      from (select gpu_uuid, pipeline_name, owner, facility, name,
			    (select coalesce(max(i), 0) from generate_subscripts(run_ids, 1) i
			     where run_ids[i] <= $FRUN) as k
			    from ceiling_series where pipeline_name = 'fleet-bench'
			      and run_ids[cardinality(run_ids)] > $FRUN) x
		      where s.gpu_uuid = x.gpu_uuid and s.pipeline_name = x.pipeline_name
			and s.owner = x.owner and s.facility = x.facility and s.name = x.name" >/dev/null
		q -c "delete from runs where pipeline_name = 'fleet-bench' and id > $FRUN" >/dev/null
		# and the rows they took with them vacuumed now: a facility's nights
		# are never deleted row by row (retention drops whole months), and
		# left to autovacuum they were vacuumed in the middle of a timed stage
		# (a month's partition of ceilings: minutes of one of the two CPUs)
		q -c "vacuum analyze ceiling_series, ceilings, step_records, steps, runs" >/dev/null
		say "kept database: the $later later nights an earlier ingest stage added are removed"
	fi
fi
say "generated in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s: $(q -c "select count(*) from ceilings") ceilings ($(q -c "select pg_size_pretty(pg_total_relation_size('ceilings'))")), $(q -c "select count(*) from points") points, $(q -c "select count(*) from runs") runs; fleet run $FRUN, kernel run $KRUN"

# ingest_sql RUN STEPS < LIST: the SQL that ingests, as daemon/ingest.c
# does, each attempt of LIST ("STEP_ID@NODE<TAB>DIR" lines, or "STEP_ID<TAB>DIR"
# for a daemon step) into run RUN; STEPS maps a node ('' for a daemon step)
# to its step's id ("NODE<TAB>ID" lines).  Per attempt one transaction: the
# step's row locked, one COPY into step_records of the rows copy_record()
# makes (every field a JSON string, seq from 0), the step marked succeeded.
ingest_sql() {
	awk -F'\t' -v run="$1" -v steps="$2" '
		function jstr(v) { gsub(/\\/, "\\\\", v); gsub(/"/, "\\\"", v); return "\"" v "\"" }
		function cesc(v) { gsub(/\\/, "\\\\", v); return v }
		BEGIN { while ((getline l < steps) > 0) { split(l, a, "\t"); id[a[1]] = a[2] } }
		{ node = index($1, "@") ? substr($1, index($1, "@") + 1) : ""
		  step = id[node]; file = $2 "/records.tsv"; seq = 0
		  printf "begin;\nselect 1 from steps where id = %s and attempt = 1 for update;\n", step
		  print "copy step_records (step, attempt, seq, run_id, kind, node, fields) from stdin;"
		  while ((getline l < file) > 0) {
			n = split(l, f, "\t"); j = "{"
			for (i = 2; i <= n; i++) { p = index(f[i], "=")
				j = j (i > 2 ? "," : "") jstr(substr(f[i], 1, p - 1)) ":" jstr(substr(f[i], p + 1)) }
			printf "%s\t1\t%d\t%s\t%s\t%s\t%s}\n", step, seq++, run, cesc(f[1]), cesc(node), cesc(j)
		  }
		  close(file)
		  printf "\\.\nupdate steps set state = '"'"'succeeded'"'"' where id = %s;\ncommit;\n", step
		}'
}
# ---- tonight's inputs of the fleet step: one ert attempt per node ------------
# As `nodes: each` leaves them: <run>/ert@NODE/attempt-1/records.tsv, the
# replay's records with tonight's figures of the node's GPUs.
FDIR=$W/spool/run-$FRUN
mkdir -p "$FDIR"
q -c "copy (select node, gpu_index, gpu_uuid, name, value, min, median, max,
	sm_clock_mhz, synthetic from ceilings where run_id = $FRUN
	order by node, gpu_index, seq) to stdout" |
awk -F'\t' -v OFS='\t' -v dir="$FDIR" -v list="$W/fleet-inputs.tsv" '
	function set(line, key, v,   n, i, a, s) {
		n = split(line, a, "\t"); s = a[1]
		for (i = 2; i <= n; i++) {
			if (index(a[i], key "=") == 1) a[i] = key "=" v
			s = s "\t" a[i]
		}
		return s
	}
	function sweep(g, uuid,   i, l) {
		for (i = 1; i <= nsweep; i++) {
			l = set(sweeps[i], "gpu_index", g)
			print set(l, "gpu_uuid", uuid) > file
		}
	}
	FNR == NR { if ($1 == "ceiling") { split($0, a, "\t"); for (i in a) if (a[i] ~ /^name=/) tmpl[substr(a[i], 6)] = $0 }
		    else if ($1 == "sweep") sweeps[++nsweep] = $0
		    next }
	{ if ($1 != node) {
		if (file) close(file)
		node = $1; d = dir "/ert@" node "/attempt-1"
		system("mkdir -p \"" d "\""); file = d "/records.tsv"
		print "ert@" node "\t" d > list
	  }
	  if ($2 != lastg || $1 != lastnode) { sweep($2, $3); lastg = $2; lastnode = $1 }
	  l = tmpl[$4]
	  l = set(l, "gpu_index", $2); l = set(l, "gpu_uuid", $3)
	  l = set(l, "value", $5); l = set(l, "min", $6); l = set(l, "median", $7)
	  l = set(l, "max", $8); l = set(l, "sm_clock_mhz", $9)
	  l = set(l, "synthetic", $10 " (node " node ")")
	  print l > file }' "$W/ert/records.tsv" -
n_ceil=$(cat "$FDIR"/ert@*/attempt-1/records.tsv | grep -c '^ceiling')
n_rec=$(cat "$FDIR"/ert@*/attempt-1/records.tsv | wc -l)
say "fleet inputs: $(wc -l <"$W/fleet-inputs.tsv") ert@NODE attempts, $n_ceil ceiling records, $n_rec records in all"

# ---- EXPLAIN (ANALYZE, BUFFERS) of the history queries -------------------------
# The statements daemon/step_inputs.c sends, with the steps' options.
HQ=(
	"gpu_history|select * from rl_gpu_history($FRUN, 90)"
	"run_points (run)|select * from rl_run_points($KRUN)"
	"run_points (baseline)|select * from rl_run_points(rl_baseline_run($KRUN))"
	"baseline_run|select rl_baseline_run($KRUN)"
	"kernel_noise|select * from rl_kernel_noise($KRUN, 30)"
)
explain_all() { # explain_all LABEL: plans to $out/explain.LABEL.txt
	local f=$out/explain.$1.txt h
	: >"$f"
	# the functions are SQL functions: auto_explain shows the plans inside
	for h in "${HQ[@]}"; do
		{ printf '## %s: %s\n' "${h%%|*}" "${h#*|}"
		  runuser -u postgres -- env PGUSER=postgres psql -X -q -t -A -v ON_ERROR_STOP=1 -c "load 'auto_explain';
			set auto_explain.log_min_duration = 0;
			set auto_explain.log_analyze = on; set auto_explain.log_buffers = on;
			set auto_explain.log_nested_statements = on;
			set auto_explain.log_level = notice; set role rooflined;
			explain (analyze, buffers) ${h#*|}" 2>&1 | sed 's/^psql:[^:]*: //'
		  echo; } >>"$f"
	done
	# plans.LABEL.txt: the same less auto_explain's copy of each top-level plan
	python3 - "$f" "$out/plans.$1.txt" <<'PY'
import sys
lines, out, i = open(sys.argv[1]).read().split('\n'), [], 0
while i < len(lines):
    if lines[i].startswith('NOTICE:') and lines[i + 1:i + 2] and \
            lines[i + 1].startswith("Query Text: load 'auto_explain'"):
        k = i + 1
        while 'explain (analyze, buffers)' not in lines[k]:
            k += 1
        j = k + 2
        while j < len(lines) and lines[j] != lines[k + 1]:
            j += 1
        i = j
        continue
    out.append(lines[i])
    i += 1
open(sys.argv[2], 'w').write('\n'.join(out).rstrip() + '\n')
PY
	grep -E '^## |^Execution Time' "$f" | paste - - | sed 's/^## /  /; s/:  *select.*Execution Time: / /' | tee -a "$SUMMARY"
}

# ---- the steps ---------------------------------------------------------------------
median() { sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", NR ? a[int((NR + 1) / 2)] : -1 }'; }
field() { sed -n "s/.* $1 \([0-9.]*\) ms.*/\1/p"; } # field NAME < lines
run_step() { # run_step LABEL PLUGIN_DIR PLUGIN RUN [ARGS...]
	local label=$1 pdir=$2 plugin=$3 run=$4 d=$W/$1
	shift 4
	rm -rf "$d" && mkdir -p "$d"
	"$SNAP_BENCH/findings-bench" -P "$plugin" -r "$run" -d "$d" \
		-j "$SNAP_SBIN/roofline-job" -p "$pdir" -n "$repeats" -s "$DB_SESSIONS" "$@" \
		>"$out/$label.txt" 2>>"$out/$label.err"
	say "$(printf '  %-22s history %7s ms (cpu %6s, pg cpu %7s)  job %7s ms (cpu %6s)  total %7s ms  [%s]' "$label" \
		"$(field history <"$out/$label.txt" | median)" \
		"$(sed -n 's/.*history [0-9.]* ms (cpu \([0-9.]*\) ms.*/\1/p' "$out/$label.txt" | median)" \
		"$(sed -n 's/.*pg cpu \([0-9.]*\) ms.*/\1/p' "$out/$label.txt" | median)" \
		"$(field job <"$out/$label.txt" | median)" \
		"$(sed -n 's/.*job [0-9.]* ms (cpu \([0-9.]*\) ms.*/\1/p' "$out/$label.txt" | median)" \
		"$(field total <"$out/$label.txt" | median)" \
		"$(field total <"$out/$label.txt" | tr '\n' ' ' | sed 's/ $//')")"
	say "$(printf '  %-22s %s' "" "$(tail -1 "$out/$label.txt" | sed 's/^repeat [0-9]*: .*ms, \(records .*\)/\1/'), history $(sed -n 's/.*ms, \([0-9]*\) bytes[,)].*/\1/p' "$out/$label.txt" | tail -1) bytes written at a peak RSS of $(sed -n 's/.*peak RSS \([0-9]*\) kB.*/\1/p' "$out/$label.txt" | sort -n | tail -1) kB; $(grep -o '[0-9]* GPUs of .*flagged\|against run .*gone' "$out/$label.err" | head -1)")"
}
flagged() { # flagged DIR: the step's findings, "subject measure class" each
	tsv finding subject measure class <"$1/attempt-1/records.tsv" |
		awk -F'\t' '{ printf "%s%s %s %s", (NR > 1 ? "; " : ""), $1, $2, $3 }'
}
# Each step's history queries are read through the daemon's db_sessions
# (sql/032's parts for the fleet, the regressions' three queries), then,
# side by side, on one session (LABEL.1session: the same binary with -s 1,
# the -s given last winning).
steps_all() { # steps_all LABEL PLUGIN_DIR
	run_step "fleet.$1" "$2" fleet "$FRUN" -I "$W/fleet-inputs.tsv" -o nights="$WINDOW"
	say "  findings: fleet: $(flagged "$W/fleet.$1")"
	((DB_SESSIONS == 1)) ||
		run_step "fleet.$1.1session" "$2" fleet "$FRUN" -I "$W/fleet-inputs.tsv" -o nights="$WINDOW" -s 1
	[[ ${REGRESSIONS:-1} == 1 ]] || return 0
	run_step "regressions.$1" "$2" regressions "$KRUN" -o lookback=30
	say "  findings: regressions: $(flagged "$W/regressions.$1")"
	((DB_SESSIONS == 1)) ||
		run_step "regressions.$1.1session" "$2" regressions "$KRUN" -o lookback=30 -s 1
}

# ---- a night's ingest, as the daemon does it (daemon/ingest.c) ---------------
# Tonight's fleet inputs (every ert@NODE attempt's records.tsv, sweeps and
# all) ingested again as the run of a later night: per attempt one
# transaction, the step's row locked, one COPY into step_records of the
# rows copy_record() makes (every field a JSON string), the step marked
# succeeded; the routing (sql/026) and the series merge (sql/014, 019) fire
# as they do in the daemon.  A night's node jobs end together, and the
# daemon stores the attempts one poll found ended through `db_sessions`
# sessions at once (4 by default, DB_SESSIONS here): the attempts are
# dealt to that many psql sessions, run at once.  REPEATS nights, each a
# new run, alternated with as many stored through one session (the
# daemon's with `db_sessions: 1`); the medians of both.  Before each
# night, a VACUUM of ceiling_series, whose every row the last night
# rewrote: a day between two nights, autovacuum has done it (its default
# threshold is a fifth of the rows dead); without it each night found the
# dead rows of all the nights the stage had stored before it.
# night_run NIGHT_OFFSET STEPS: a new run of the fleet run's pipeline, its
# night NIGHT_OFFSET after the fleet run's, with an ert step per node as
# the fleet run has, running; its id on stdout, its steps ("NODE<TAB>ID")
# into the file STEPS.
night_run() {
	local nr
	nr=$(q -c "insert into runs (pipeline_name, owner, facility, yaml, trigger, state, night, submitted_at)
		   select pipeline_name, owner, facility, '', 'schedule', 'succeeded', night + $1, now()
		   from runs where id = $FRUN returning id" | head -1)
	q -c "insert into steps (run_id, step_id, node, plugin, on_daemon, state, attempt)
	      select $nr, 'ert', node, 'ert', false, 'running', 1 from steps where run_id = $FRUN and step_id = 'ert'" >/dev/null
	q -c "copy (select node, id from steps where run_id = $nr) to stdout" >"$2"
	echo "$nr"
}
# The nights the kept history has after the fleet run's.
nights_after() { q -c "select max(night) - (select night from runs where id = $FRUN) from runs where pipeline_name = 'fleet-bench'"; }
ingest_night() { # ingest_night NIGHT_OFFSET SESSIONS: ms on stdout
	local nr k=$2 f
	q -c "vacuum ceiling_series" >/dev/null
	nr=$(night_run "$1" "$W/ingest-steps.tsv")
	rm -f "$W"/ingest.*.sql
	# attempt i (its transaction) to session i mod k
	ingest_sql "$nr" "$W/ingest-steps.tsv" <"$W/fleet-inputs.tsv" |
		awk -v k="$k" -v w="$W" '/^begin;$/ { t++ } { print > (w "/ingest." (t % k) ".sql") }'
	local t0 t1
	t0=$(date +%s%N)
	for f in "$W"/ingest.*.sql; do q -f "$f" >/dev/null & done
	wait
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
# ingest_all [LABEL]: REPEATS nights, each after the last one stored
ingest_all() {
	local ms=() one=() before_runs night0 i med med1 got
	before_runs=$(q -c "select coalesce(max(id), 0) from runs")
	night0=$(nights_after)
	for ((i = 1; i <= repeats; i++)); do
		if ((i % 2)); then # alternated, each first in turn
			ms+=("$(ingest_night $((night0 + 2 * i - 1)) "$DB_SESSIONS")")
			one+=("$(ingest_night $((night0 + 2 * i)) 1)")
		else
			one+=("$(ingest_night $((night0 + 2 * i - 1)) 1)")
			ms+=("$(ingest_night $((night0 + 2 * i)) "$DB_SESSIONS")")
		fi
	done
	med=$(printf '%s\n' "${ms[@]}" | median)
	med1=$(printf '%s\n' "${one[@]}" | median)
	got=$(q -c "select count(*) from ceilings c where c.run_id > $before_runs")
	say "$(printf '  %singest of one night as the daemon does it (%s attempts, %s records, %s ceilings; COPY per attempt, %s sessions): %s ms = %.0f ceilings/s  [%s]; ceilings stored %s of %s' \
		"${1:+$1: }" "$(wc -l <"$W/fleet-inputs.tsv")" "$n_rec" "$n_ceil" "$DB_SESSIONS" "$med" \
		"$(awk -v n="$n_ceil" -v m="$med" 'BEGIN { print (m > 0 ? n * 1000 / m : 0) }')" \
		"${ms[*]}" "$got" "$((2 * n_ceil * repeats))")"
	say "$(printf '  %s  side by side, alternated: through one session %s ms [%s]; %s sessions / one: %.2f' \
		"${1:+$1: }" "$med1" "${one[*]}" "$DB_SESSIONS" \
		"$(awk -v a="$med" -v b="$med1" 'BEGIN { print (b > 0 ? a / b : 0) }')")"
}
say ""
say "median of $repeats (ms; all repeats in brackets); a step's wall = history (a) + job (b)"
if [[ -n $before ]]; then
	say "## before: $before's plugins and sql/ functions"
	steps_all before "$SNAP/before/plugins"
	explain_all before
	# the ingest in the before state too: its nights go into the series
	# first, so the site (SITE=1, measured on tonight's series) is left out
	if [[ ${SITE:-0} != 1 ]]; then
		ingest_all before
	fi
	q -c "create table bench_before_gpu as select * from rl_gpu_history($FRUN, 90);
	      create table bench_before_noise as select * from rl_kernel_noise($KRUN, 30);
	      create table bench_before_points as select * from rl_run_points($KRUN);
	      create table bench_before_base as select rl_baseline_run($KRUN) as b"
	for f in "${NEW_SQL[@]}"; do q -f "$f" >/dev/null; done
	q -c 'vacuum analyze runs, steps, ceilings, points'
fi
say "## after: this tree ($(git rev-parse --short HEAD))"
steps_all after "$SNAP_PLUGINS"
[[ ${EXPLAIN:-1} == 0 ]] || explain_all after
# Tonight's fleet step, as the daemon would have ingested it (the records
# of the `fleet` daemon step of the fleet run: its verdict per GPU and
# ceiling, the findings): what the site's tonight page and the GPUs'
# history pages are built from.  Once; a database kept (REUSE_DB=1) has it.
if [[ ${SITE:-0} == 1 && $(q -c "select count(*) from steps where run_id = $FRUN and plugin = 'fleet'") == 0 ]]; then
	fid=$(q -c "insert into steps (run_id, step_id, node, plugin, on_daemon, state, attempt)
		    values ($FRUN, 'fleet', '', 'fleet', true, 'running', 1) returning id" | head -1)
	printf '\t%s\n' "$fid" >"$W/fleet-step.tsv"
	printf 'fleet\t%s\n' "$W/fleet.after/attempt-1" |
		ingest_sql "$FRUN" "$W/fleet-step.tsv" >"$W/fleet-step.sql"
	t0=$(date +%s%N)
	q -f "$W/fleet-step.sql" >/dev/null
	say "  fleet step's records ingested (one COPY of $(wc -l <"$W/fleet.after/attempt-1/records.tsv") records): $((($(date +%s%N) - t0) / 1000000)) ms"
fi
# SITE=1: the facility site rebuilt as the daemon does after a run ends
# (bench/site-bench.c: daemon/site.c on this database), REPEATS times
if [[ ${SITE:-0} == 1 ]]; then
	"$SNAP_BENCH/site-bench" "$W/site" "$repeats" "$BUSER" >"$out/site.txt" 2>>"$out/site.err" ||
		say "  site: FAILED ($(tail -1 "$out/site.err"))"
	say "$(printf '  site rebuilt: wall %s ms (cpu %s), %s' \
		"$(sed -n 's/.* wall \([0-9.]*\) ms.*/\1/p' "$out/site.txt" | median)" \
		"$(sed -n 's/.* cpu \([0-9.]*\) ms.*/\1/p' "$out/site.txt" | median)" \
		"$(tail -1 "$out/site.txt" | sed 's/^repeat [0-9]*: .* ms, //')")"
fi
if [[ -n $before ]]; then
	differ() { # differ TABLE QUERY: rows of either not in the other
		q -c "select (select count(*) from (select * from $1 except all $2) x) +
			     (select count(*) from ($2 except all select * from $1) y)"
	}
	say "same answers before and after: rows that differ: gpu_history $(differ bench_before_gpu "select * from rl_gpu_history($FRUN, 90)"), kernel_noise $(differ bench_before_noise "select * from rl_kernel_noise($KRUN, 30)"), run_points $(differ bench_before_points "select * from rl_run_points($KRUN)"), baseline_run $(differ bench_before_base "select rl_baseline_run($KRUN)")"
	for p in fleet regressions; do
		say "  $p: records.tsv before and after: $(cmp -s "$W/$p.before/attempt-1/records.tsv" "$W/$p.after/attempt-1/records.tsv" && echo identical || echo DIFFER); history (sorted): $(cmp -s <(sort "$W/$p.before/attempt-1/history/records.tsv") <(sort "$W/$p.after/attempt-1/history/records.tsv") && echo identical || echo DIFFER)"
	done
fi
ingest_all "${before:+after}"

# ---- INGEST_AB=ROUNDS: the night's ingest as 0.2.0 stored it, side by side ---
# 0.2.0's ert emitted one `sweep` record per working-set size (this tree's,
# one per series: docs/ceilings.md) and `ceilings` had three more indexes
# (sql/031 dropped two, 036 two more for one new: AB_INDEXES).  Tonight's
# inputs are split back into one sweep record per size, with the fields in
# the order 0.2.0 emitted them; the three indexes are made for the
# comparison (and dropped again after it).  Both forms of the night
# go into one new run, each in one transaction rolled back, so that each
# appends the same night to the same series: A (0.2.0's records, every
# index) and B (this tree's records, the three indexes dropped inside the
# transaction), alternated (A B, B A, ...), a VACUUM of the three tables
# after each.  The run made for it is removed at the end.
ab_unpack() { # 0.2.0's sweep records from this tree's, stdin to stdout
	awk -F'\t' -v OFS='\t' 'BEGIN { nk = split("level_guess ws_bytes value unit min max trials", keys, " ") }
	$1 == "sweep" {
		delete f
		for (i = 2; i <= NF; i++) { p = index($i, "="); f[substr($i, 1, p - 1)] = substr($i, p + 1) }
		for (k = 1; k <= nk; k++)
			if (keys[k] != "unit") { m = split(f[keys[k]], t, ","); for (j = 1; j <= m; j++) L[keys[k], j] = t[j] }
		for (j = 1; j <= f["points"] + 0; j++) {
			s = "sweep\tgpu_index=" f["gpu_index"] "\tgpu_uuid=" f["gpu_uuid"] "\tseries=" f["series"]
			for (k = 1; k <= nk; k++) s = s "\t" keys[k] "=" (keys[k] == "unit" ? f["unit"] : L[keys[k], j])
			if ("synthetic" in f) s = s "\tsynthetic=" f["synthetic"]
			print s
		}
		next }
	{ print }'
}
ab_once() { # ab_once SQL PRELUDE: the ingest's ms, rolled back
	{ echo "begin;"; echo "$2"; echo "select 'T0', extract(epoch from clock_timestamp());"
	  cat "$1"; echo "select 'T1', extract(epoch from clock_timestamp());"; echo "rollback;"; } |
		q -f - | awk -F'|' '$1 == "T0" { a = $2 } $1 == "T1" { b = $2 } END { printf "%.0f\n", (b - a) * 1000 }'
	q -c "vacuum ceiling_series, ceilings, step_records" >/dev/null
}
if [[ ${INGEST_AB:-0} -gt 0 ]]; then
	AB=$W/ab
	rm -rf "$AB"
	mkdir -p "$AB"
	while IFS=$'\t' read -r name dir; do
		mkdir -p "$AB/$name"
		ab_unpack <"$dir/records.tsv" >"$AB/$name/records.tsv"
		printf '%s\t%s\n' "$name" "$AB/$name" >>"$AB/inputs.tsv"
	done <"$W/fleet-inputs.tsv"
	nr=$(night_run $(($(nights_after) + 1)) "$AB/steps.tsv")
	ingest_sql "$nr" "$AB/steps.tsv" <"$AB/inputs.tsv" | grep -v '^begin;$\|^commit;$' >"$AB/a.sql"
	ingest_sql "$nr" "$AB/steps.tsv" <"$W/fleet-inputs.tsv" | grep -v '^begin;$\|^commit;$' >"$AB/b.sql"
	# 0.2.0's indexes of `ceilings` that this tree's have not: its
	# (name, measured_at) is sql/036's ceilings_name_time_idx
	q -c "drop index if exists $AB_INDEXES;
	      create index ab_history_idx on ceilings (node, gpu_uuid, name, measured_at);
	      create index ab_gpu_history_idx on ceilings (gpu_uuid, name, run_id)
		include (value, driver) where method = 'empirical';
	      create index ab_fleet_idx on ceilings (name, node, gpu_uuid, measured_at)
		include (value, method, run_id)" >/dev/null
	ab_a=() ab_b=() na=$(grep -c . "$AB/a.sql") nb=$(grep -c . "$AB/b.sql")
	for ((i = 1; i <= INGEST_AB; i++)); do
		if ((i % 2)); then
			ab_a+=("$(ab_once "$AB/a.sql" "")")
			ab_b+=("$(ab_once "$AB/b.sql" "drop index $AB_INDEXES;")")
		else
			ab_b+=("$(ab_once "$AB/b.sql" "drop index $AB_INDEXES;")")
			ab_a+=("$(ab_once "$AB/a.sql" "")")
		fi
		say "  ingest A/B round $i: A (0.2.0's records and indexes, $na lines) ${ab_a[-1]} ms, B (this tree's, $nb lines) ${ab_b[-1]} ms"
	done
	q -c "drop index $AB_INDEXES; delete from runs where id = $nr" >/dev/null
	ma=$(printf '%s\n' "${ab_a[@]}" | median) mb=$(printf '%s\n' "${ab_b[@]}" | median)
	say "$(printf '  ingest of one night side by side, one transaction each, rolled back (median of %s alternated rounds): A %s ms, B %s ms, B/A %.2f' \
		"$INGEST_AB" "$ma" "$mb" "$(awk -v a="$ma" -v b="$mb" 'BEGIN { print (a > 0 ? b / a : 0) }')")"
fi
say "# load at end $(cut -d' ' -f1-3 /proc/loadavg); raw results in $out"
