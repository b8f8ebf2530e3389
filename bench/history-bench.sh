#!/bin/bash
# bench/history-bench.sh - the history tables over years: the history
# queries' times, the retention's, and the migration to partitions.
#
# Usage: bench/history-bench.sh [migrate|partitioned|all|generate]   (default all)
#   environment: MIGRATE_ROWS=10000000  GPUS=500  NIGHTS=1096  KERNELS=4
#                KEEP_MONTHS=24  REPEATS=7  KEEP=0
#
# Starts a private cluster in var/bench-history (only its PostgreSQL is
# used), and in a database per phase:
#
# migrate      applies sql/001-009 (the unpartitioned layout), fills points
#              with MIGRATE_ROWS synthetic aggregate points (2,000 nightly
#              runs on 50 nodes, 1,667 kernels, 3 levels: issue 6's data),
#              times Q1 and Q2 (below), then applies sql/010_partitions.sql
#              as the daemon does (one transaction), timed, checks that the
#              row count and a checksum of points are unchanged, and times Q1
#              and Q2 again on the partitioned table.
# partitioned  applies sql/ up to 013 (010's views and retention), makes
#              monthly partitions back NIGHTS nights, fills NIGHTS nights of
#              synthetic nightly history for GPUS GPUs (4 a node): per GPU and
#              night 4 empirical ceilings, KERNELS kernel launches
#              (kernel_profiles) and KERNELS x 3 levels of roofline points,
#              one step_records row per step; vacuums; times the history
#              queries as docs/sql.md had them on 010's views (those that read
#              a kernel's or a ceiling's whole history once, after a warm-up
#              run: they take seconds here); applies sql/015_history_time.sql
#              (timed) and times docs/sql.md's examples as they are now (read
#              from the file), as the owner and as a member of roofline_users
#              (row-level security), and checks that Q1's rows are the same
#              in both forms; applies 016 and times them again; applies
#              sql/017_kernel_points.sql and sql/018_history_due.sql (timed)
#              and times them again (same rows), `roofline history`'s query
#              (read from cli/cmd_history.c) and the command itself, and
#              one night's ingest with and without 017's trigger; rolls up
#              the months both retentions will drop
#              (timed; the daemon does this for each month once it ended),
#              then applies a retention of KEEP_MONTHS months, then one of
#              KEEP_MONTHS - 12 months, to the five tables with
#              rl_history_retire(), the function the daemon's retention job
#              calls, timed, with the server process's CPU time and what it
#              waited on (with NIGHTS=1096 and KEEP_MONTHS=24: the oldest
#              year, then the next).
#
# generate     only the partitioned phase's data (schema up to 014, the
#              synthetic history, vacuumed), and stops there with KEEP=1: for
#              queries and retentions by hand on the same data (eval
#              "$(ROOFLINE_VAR=var/bench-history scripts/cluster env)";
#              PGDATABASE=hb_part; apply sql/015... with psql -1 -f), or for
#              REUSE=1 KEEP=1 bench/history-bench.sh partitioned, which then
#              takes them as they are instead of generating its own (once:
#              it applies 015 and 016, and drops two years).
# KEEP=1 leaves the cluster running and its databases in place at the end
# (stop it with ROOFLINE_VAR=var/bench-history scripts/cluster stop, then
# rm -rf var/bench-history).
#
# Query times: the median of REPEATS `EXPLAIN (ANALYZE, TIMING OFF)` runs in
# one session after a warm-up run, execution and planning time apart, and the
# server process's CPU time per run.  All data is synthetic, made here
# by generate_series.  Stops the cluster and removes its directory.
# ROOFLINE_VAR names another directory than var/bench-history; a cluster
# already running there is used and left running (bench/lib.sh), its
# databases hb_migrate and hb_part replaced.
#
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): every phase at MIGRATE_ROWS=3000
# GPUS=4 NIGHTS=100 KERNELS=2 KEEP_MONTHS=13 REPEATS=1 (the second retention
# drops all but the newest month), in seconds, with BENCH_VARIANT's roofline;
# it prints the same lines (the migrate phase's queries find no rows: its
# kernel_42 needs 252,000 rows).
set -euo pipefail
cd "$(dirname "$0")/.."
PROG=history-bench
REPO=$PWD
phase=${1:-all}
[[ $phase =~ ^(migrate|partitioned|all|generate)$ ]] || { echo "usage: $0 [migrate|partitioned|all|generate]" >&2; exit 2; }
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then
	: "${MIGRATE_ROWS:=3000}" "${GPUS:=4}" "${NIGHTS:=100}" "${KERNELS:=2}" "${KEEP_MONTHS:=13}" "${REPEATS:=1}"
fi
migrate_rows=${MIGRATE_ROWS:-10000000} gpus=${GPUS:-500} nights=${NIGHTS:-1096}
kernels=${KERNELS:-4} keep_months=${KEEP_MONTHS:-24} repeats=${REPEATS:-7}
keep=${KEEP:-0}
[[ $phase != generate ]] || keep=1
export ROOFLINE_VAR=${ROOFLINE_VAR:-$PWD/var/bench-history}
VAR=$ROOFLINE_VAR
# shellcheck source=bench/lib.sh
. bench/lib.sh
if [[ $keep == 1 ]]; then
	trap 'echo "kept: ROOFLINE_VAR=$ROOFLINE_VAR; eval \"\$(ROOFLINE_VAR=$ROOFLINE_VAR scripts/cluster env)\""' EXIT
else
	trap bench_cluster_release EXIT
fi
bench_cluster_start >/dev/null || { echo "$PROG: the cluster did not start" >&2; exit 1; }
q() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$@"; }
pgadmin() {
	runuser -u postgres -- env PGUSER=postgres PGDATABASE=postgres \
		PGHOST="$PGHOST" PGPORT="$PGPORT" psql -X -q -v ON_ERROR_STOP=1 "$@"
}
new_db() {
	pgadmin -c "drop database if exists $1" -c "create database $1 owner rooflined" >/dev/null
	export PGDATABASE=$1
}
drop_db() { [[ $keep == 1 ]] || pgadmin -c "drop database if exists $1 with (force)" >/dev/null; }
now_s() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now_s)" 'BEGIN { printf "%.2f", b - a }'; }

# median "execution planning" times (ms) of EXPLAIN ANALYZE over $repeats
# runs in one session, after one run that warms the caches (data and the
# session's catalog cache), and the CPU time the server process used for
# them (utime + stime of /proc/PID/stat, per run: the wall times are those of
# a machine shared with other work, the CPU time less so).  With $as_user
# set, the session is that PostgreSQL role's (a member of roofline_users:
# row-level security applies), else the owner's (rooflined, no row-level
# security).
time_query() {
	local out
	out=$({ echo 'select pg_backend_pid() as pid \gset'
		echo '\setenv PID :pid'
		[[ -z ${as_user:-} ]] || echo "set role $as_user;"
		echo "explain (analyze, timing off) $1;"
		echo '\! awk "{ print \"cpu0 \" \$14 + \$15 }" /proc/$PID/stat'
		for ((i = 1; i <= repeats; i++)); do echo "explain (analyze, timing off) $1;"; done
		echo '\! awk "{ print \"cpu1 \" \$14 + \$15 }" /proc/$PID/stat'; } | qs)
	printf 'execution %s ms, planning %s ms, server cpu %s ms' \
		"$(sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' <<<"$out" | tail -n +2 | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }')" \
		"$(sed -n 's/^Planning Time: \([0-9.]*\) ms$/\1/p' <<<"$out" | tail -n +2 | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }')" \
		"$(awk -v n="$repeats" -v hz="$(getconf CLK_TCK)" '$1 == "cpu0" { a = $2 } $1 == "cpu1" { b = $2 } END { printf "%.1f", (b - a) * 1000 / hz / n }' <<<"$out")"
}
# qs: q, or as superuser (to `set role` to $as_user) when $as_user is set
qs() { if [[ -n ${as_user:-} ]]; then pgadmin -t -A -d "$PGDATABASE"; else q; fi; }
report() {
	printf '  %-4s %6s rows  %s\n' "$1" \
		"$({ [[ -z ${as_user:-} ]] || echo "set role $as_user;"; echo "$2;"; } | qs | grep -vc '^SET$')" "$(time_query "$2")"
}
# one run after the warm-up: for the queries that read a kernel's whole history
report_once() { local repeats=1; report "$@"; }
# the md5 of a query's rows, to show that two forms return the same
rows_md5() { q -c "select count(*) || ' rows, md5 ' || md5(string_agg(x::text, '|' order by x::text)) from ($1) x"; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg); $(git rev-parse --short HEAD)"

Q2_FOR() { # `roofline history K`'s query (cli/cmd_history.c)
	echo "select * from (select run_at, node, gflops, ai_l1, ai_l2, ai_dram, pct_of_roof, verdict, run_id from kernel_trend where (kernel = '$1' or (kernel >= '$1' || '(' and kernel < '$1' || ')') or (kernel >= '$1' || '<' and kernel < '$1' || '=')) order by run_at desc limit 1000) x order by run_at"
}
Q1_FOR() { # docs/sql.md: a kernel's GFLOP/s over the last 30 nights on H100 nodes
	echo "select run_at::date as night, node, gflops from kernel_trend where kernel = '$1' and gpu_name like '%H100%' and run_at > now() - interval '30 days' order by run_at"
}

# docs/sql.md's second example as 015 had it, and the newest nightly run's
# points without (015) and with (016) the window on `at` that prunes
Q3_015="select p.pipeline_name, p.kernel, p.node, p.verdict, p.bound, round(p.pct_of_roof::numeric, 1) as pct_of_roof from roofline_points p where p.run_id = any (array(select max(id) from runs where state = 'succeeded' group by pipeline_name)) and p.pct_of_roof < 10 order by p.pct_of_roof"
Q3S_015="select p.pipeline_name, p.kernel, p.node, p.verdict, p.bound, round(p.pct_of_roof::numeric, 1) as pct_of_roof from roofline_points p where p.run_id = (select id from runs where state = 'succeeded' and pipeline_name = 'nightly' order by ended_at desc limit 1) and p.pct_of_roof < 10 order by p.pct_of_roof"
Q3S_016="with newest as (select id, submitted_at from runs where state = 'succeeded' and pipeline_name = 'nightly' order by ended_at desc limit 1) select p.pipeline_name, p.kernel, p.node, p.verdict, p.bound, round(p.pct_of_roof::numeric, 1) as pct_of_roof from roofline_points p where p.run_id = (select id from newest) and p.at between (select submitted_at from newest) and 'infinity' and p.pct_of_roof < 10 order by p.pct_of_roof"

# DOCS_Q N [KERNEL]: the Nth ```sql example of docs/sql.md, its kernel
# name replaced by KERNEL
DOCS_Q() {
	awk -v n="$1" '/^```sql$/ { k++; next } /^```$/ { if (k == n) exit } k == n' docs/sql.md |
		sed "s/kernel_A(double \*, long, double)/${2:-kernel_A(double *, long, double)}/" | tr '\n' ' ' | sed 's/; *$//'
}
# retire KEEP_MONTHS one|each: the five tables' retention to KEEP_MONTHS
# months (drop): "one": 010's rl_history_retire(tbl, months, detach), the
# five tables in one statement, one transaction; "each": as the daemon does
# since 018, each table's due partitions listed once (rl_history_due), then
# rl_history_remove for each, one transaction a partition (a DO block that
# commits after each).
# Its wall time, the server process's CPU time (utime + stime: the kernel's
# work of freeing the dropped files included), and what it waited on
# (pg_stat_activity sampled about every 5 ms by a second session, inside the
# server: "cpu" when it waited on nothing, which includes the truncate() and
# unlink() of the files: PostgreSQL reports no wait event for those).  It
# starts once no autovacuum worker is busy (at most 5 minutes): a drop waits
# for the lock of a partition autovacuum is analyzing until deadlock_timeout
# (1 s) has the worker cancelled, which right after the data were generated
# happens and in a database whose dropped months are long vacuumed does not.
retire() {
	local out poll stmt samples=$WORK/retire-samples.txt
	for ((i = 0; i < 300; i++)); do
		[[ $(q -c "select count(*) from pg_stat_activity where backend_type = 'autovacuum worker'") == 0 ]] && break
		sleep 1
	done
	if [[ $2 == one ]]; then
		stmt="select count(*) || ' partitions, ' || sum(rows) || ' rows' from (
	select * from rl_history_retire('step_records', $1, false)
	union all select * from rl_history_retire('points', $1, false)
	union all select * from rl_history_retire('kernel_points', $1, false)
	union all select * from rl_history_retire('kernel_profiles', $1, false)
	union all select * from rl_history_retire('ceilings', $1, false)) x;"
	else
		stmt="do \$\$
declare t text; p record; n bigint; parts int := 0; total bigint := 0;
begin
	foreach t in array array['step_records', 'points', 'kernel_points', 'kernel_profiles', 'ceilings'] loop
		for p in select * from rl_history_due(t, $1) loop
			select rows into n from rl_history_remove(t, p.partition, false);
			commit;
			parts := parts + 1;
			total := total + n;
		end loop;
	end loop;
	raise notice '% partitions, % rows', parts, total;
end \$\$;"
	fi
	q >"$samples" 2>&1 <<'SQL' &
do $$
declare
	w text; seen boolean := false; t0 timestamptz := clock_timestamp();
	counts jsonb := '{}';
begin
	loop
		perform pg_stat_clear_snapshot();
		-- null: not running the retention (yet, or any more); a DO block that
		-- commits shows 'active' throughout
		select case when state = 'active' and query not like 'select pg_backend_pid()%'
		            then coalesce(wait_event_type || ':' || wait_event, 'cpu') end into w
		from pg_stat_activity where application_name = 'hb_retire';
		if w is null then
			exit when seen or clock_timestamp() - t0 > interval '600 s';
		else
			seen := true;
			counts := jsonb_set(counts, array[w], to_jsonb(coalesce((counts->>w)::int, 0) + 1));
		end if;
		perform pg_sleep(0.005);
	end loop;
	raise notice 'samples %', counts;
end $$;
SQL
	poll=$!
	sleep 0.5
	out=$(PGAPPNAME=hb_retire q 2>&1 <<SQL
select pg_backend_pid() as pid \\gset
\\setenv PID :pid
\\! awk '{ print "cpu0", \$14 + \$15 }' /proc/\$PID/stat
\\timing on
$stmt
\\timing off
\\! awk '{ print "cpu1", \$14 + \$15 }' /proc/\$PID/stat
SQL
)
	wait "$poll" || true
	echo "retention to $1 months (drop; $([[ $2 == one ]] && echo "one statement, one transaction, five tables" || echo "one transaction a partition, as the daemon since 018")): $(grep -o '[0-9]* partitions, [0-9]* rows' <<<"$out") in $(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out") ms (server cpu $(awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu0" { a = $2 } $1 == "cpu1" { b = $2 } END { printf "%.0f", (b - a) * 1000 / hz }' <<<"$out") ms; $(grep -o 'samples .*' "$samples"))"
}

# ---- migrate ------------------------------------------------------------------
migrate_phase() {
	local start before after
	echo "== migrate: an unpartitioned database (001-009) of $migrate_rows synthetic points, then 010_partitions"
	new_db hb_migrate
	for f in sql/00[1-9]_*.sql; do q -f "$f" >/dev/null; done
	start=$(now_s)
	q <<SQL
set synchronous_commit = off;
insert into runs (pipeline_name, owner, facility, yaml, state, trigger, ended_at)
select 'nightly', 'rooflined', true, '', 'succeeded', 'schedule',
       date_trunc('day', now()) - (i / 50) * interval '1 day' + interval '2 hours'
from generate_series(0, 1999) i;
insert into steps (run_id, step_id, node, plugin, on_daemon, state, ended_at)
select id, 'roofline', 'node' || lpad((id % 50)::text, 2, '0'), 'hierarchical', true, 'succeeded', ended_at
from runs;
insert into points (run_id, step, attempt, seq, node, kernel, invocation,
                    invocations, precision, level, ai, gflops, pct_of_roof,
                    bound_level, verdict, is_primary, gpu_name, at)
select s.run_id, s.id, 1, g, s.node,
       'kernel_' || ((g / 3 / 2000) % 1667) || '(double *, long)', 'all', 1,
       'fp64', (array['l1', 'l2', 'dram'])[g % 3 + 1],
       1 + (g % 997) / 10.0, 100 + (g % 7919), 50, 'dram', 'bandwidth-bound',
       true, case when s.node < 'node40' then 'NVIDIA H100 80GB HBM3'
                  else 'NVIDIA A100-SXM4-80GB' end, r.ended_at
from generate_series(0, $migrate_rows - 1) g
join steps s on s.run_id = (g / 3) % 2000 + (select min(id) from runs)
join runs r on r.id = s.run_id;
analyze runs, steps, points;
SQL
	echo "generated $(q -c 'select count(*) from points') points in $(since "$start") s; table $(q -c "select pg_size_pretty(pg_total_relation_size('points'))")"
	echo "unpartitioned (009):"
	report Q1 "$(Q1_FOR 'kernel_42(double *, long)')"
	report Q2 "$(Q2_FOR kernel_42)"
	before=$(q -c "select count(*) || ' ' || sum(hashtext(t::text)::numeric) from points t")
	start=$(now_s)
	q -1 -f sql/010_partitions.sql >/dev/null
	echo "migration 010_partitions (one transaction, as the daemon applies it): $(since "$start") s"
	after=$(q -c "select count(*) || ' ' || sum(hashtext(t::text)::numeric) from points t")
	echo "points before: $before; after: $after ($([[ $before == "$after" ]] && echo same || echo DIFFERENT))"
	echo "partitions of points: $(q -c "select count(*) from history_partitions_attached where tbl = 'points'")"
	echo "partitioned (010_partitions):"
	report Q1 "$(Q1_FOR 'kernel_42(double *, long)')"
	report Q2 "$(Q2_FOR kernel_42)"
	unset PGDATABASE
	drop_db hb_migrate
}

# ---- partitioned ----------------------------------------------------------------
generate_history() {
	local nodes=$((gpus / 4)) start
	echo "== partitioned: $nights nights of synthetic nightly history for $gpus GPUs ($nodes nodes x 4), $kernels kernels"
	new_db hb_part
	# the schema as it was before 015_history_time (which the benchmark applies
	# after timing the queries on 010's views)
	for f in sql/[0-9]*.sql; do
		# shellcheck disable=SC2071 # file names, compared as strings
		[[ ${f#sql/} < 015 ]] || continue
		q -1 -f "$f" >/dev/null
	done
	q -c "select count(rl_partition_create(t.name, m::date)) from history_tables t,
	      generate_series(rl_month(now() - interval '$nights days')::timestamp, rl_month(now())::timestamp, interval '1 month') m" >/dev/null
	start=$(now_s)
	q <<SQL
set synchronous_commit = off;
-- one facility run a night, at 02:00, ended an hour later
insert into runs (pipeline_name, owner, facility, yaml, state, trigger, submitted_at, started_at, ended_at)
select 'nightly', 'rooflined', true, '', 'succeeded', 'schedule', t, t, t + interval '1 hour'
from generate_series($nights - 1, 0, -1) d,
     lateral (select date_trunc('day', now()) - d * interval '1 day' + interval '2 hours'
              - case when date_trunc('day', now()) + interval '3 hours' > now() then interval '1 day'
                else interval '0' end as t) x;
insert into steps (run_id, step_id, node, plugin, on_daemon, state, started_at, ended_at)
select r.id, s, 'gpu' || lpad(n::text, 3, '0'), p, s = 'roofline', 'succeeded', r.started_at, r.ended_at
from runs r, generate_series(1, $nodes) n,
     (values ('ceilings', 'ert'), ('profile', 'ncu'), ('roofline', 'hierarchical')) v(s, p);
insert into step_records (step, attempt, seq, run_id, kind, node, fields, at)
select s.id, 1, 0, s.run_id, 'note', s.node, '{"synthetic": "bench/history-bench.sh"}', s.ended_at
from steps s;
insert into ceilings (run_id, step, attempt, seq, node, gpu_index, gpu_uuid, gpu_name,
                      method, name, kind, value, unit, synthetic, measured_at)
select s.run_id, s.id, 1, gi * 4 + c, s.node, gi, 'GPU-' || s.node || '-' || gi,
       case when s.node <= 'gpu100' then 'NVIDIA H100 80GB HBM3' else 'NVIDIA A100-SXM4-80GB' end,
       'empirical', (array['fp64_fma', 'hbm_triad', 'l2', 'l1'])[c + 1],
       case when c = 0 then 'compute' else 'bandwidth' end,
       (array[60e12, 3.0e12, 9e12, 25e12])[c + 1] * (1 + (hashint4((s.id * 16 + gi * 4 + c)::int) % 100) / 5000.0)
         * case when c = 1 and gi = 0 and s.node <= 'gpu003' and s.ended_at > now() - interval '1 day'
                then 0.9 else 1 end,
       case when c = 0 then 'FLOP/s' else 'B/s' end, 'synthetic (bench/history-bench.sh)', s.ended_at
from steps s, generate_series(0, 3) gi, generate_series(0, 3) c
where s.step_id = 'ceilings';
insert into kernel_profiles (run_id, step, attempt, seq, node, kernel, invocation, gpu_name,
                             source, metrics, collected_at)
select s.run_id, s.id, 1, gi * $kernels + k, s.node, 'kernel_' || k || '(double *, long)', gi,
       case when s.node <= 'gpu100' then 'NVIDIA H100 80GB HBM3' else 'NVIDIA A100-SXM4-80GB' end,
       'synthetic', jsonb_build_object('gpu__time_duration.sum', 1000 + k, 'dram__bytes.sum', 1e9 * (k + 1),
                                       'gpu_uuid', 'GPU-' || s.node || '-' || gi), s.ended_at
from steps s, generate_series(0, 3) gi, generate_series(0, $kernels - 1) k
where s.step_id = 'profile';
insert into points (run_id, step, attempt, seq, node, kernel, invocation, invocations,
                    precision, level, ai, gflops, pct_of_roof, bound_level, pct_of_bound,
                    verdict, is_primary, gpu_name, gpu_uuid, at)
select s.run_id, s.id, 1, (gi * $kernels + k) * 3 + l, s.node, 'kernel_' || k || '(double *, long)',
       'all', 1, 'fp64', (array['l1', 'l2', 'dram'])[l + 1], 0.5 * (k + 1) * (l + 1),
       1000 * (k + 1) * (1 + (hashint4((s.id * 64 + gi * 16 + k)::int) % 100) / 2000.0),
       5 + (k * 23 + gi * 7) % 90, 'dram', 5 + (k * 23 + gi * 7) % 90, 'bandwidth-bound', true,
       case when s.node <= 'gpu100' then 'NVIDIA H100 80GB HBM3' else 'NVIDIA A100-SXM4-80GB' end,
       'GPU-' || s.node || '-' || gi, s.ended_at
from steps s, generate_series(0, 3) gi, generate_series(0, $kernels - 1) k, generate_series(0, 2) l
where s.step_id = 'roofline';
analyze runs, steps, step_records, points, ceilings, kernel_profiles;
SQL
	# as autovacuum leaves the partitions of past months (hint bits and
	# visibility map set): the state the history queries read them in
	pgadmin -d hb_part -c "vacuum (analyze) runs, steps, step_records, points, ceilings, kernel_profiles" >/dev/null
	echo "generated and vacuumed in $(since "$start") s: $(q -c "select (select count(*) from runs) || ' runs, ' || (select count(*) from steps) || ' steps, ' || (select count(*) from points) || ' points, ' || (select count(*) from ceilings) || ' ceilings, ' || (select count(*) from kernel_profiles) || ' kernel_profiles, ' || (select count(*) from step_records) || ' step_records'")"
	echo "on disk: $(q -c "select string_agg(t || ' ' || pg_size_pretty(s), ', ') from (select t, sum(pg_total_relation_size(a.rel)) s from (select tbl as t, rel from history_partitions_attached) a group by t order by t) x"); $(q -c "select count(*) from history_partitions_attached") partitions"
	pgadmin -c "drop role if exists hb_analyst" -c "create role hb_analyst nologin in role roofline_users" >/dev/null
}

# CLI_Q KERNEL [NODE] [SINCE]: `roofline history`'s query (cli/cmd_history.c:
# HISTORY_QUERY with the table's columns), its parameters written in:
# KERNEL, NODE (default none), the newest 1,000, stored since SINCE (default:
# all of the history).
CLI_Q() {
	python3 - "$@" <<'PY'
import re, sys
src = open('cli/cmd_history.c').read()
def strings(t): return ''.join(eval(x) for x in re.findall(r'"(?:[^"\\]|\\.)*"', t))
body = re.search(r'#define HISTORY_QUERY\(columns\) \\\n(.*?)\n\n', src, re.S).group(1)
cols = re.search(r'#define TEXT_COLUMNS \\\n(.*?)\n\n', src, re.S).group(1)
sql = strings(body.replace('" columns \\', '" \\')).replace('select  from', 'select ' + strings(cols) + ' from')
arg = lambda i: sys.argv[i] if len(sys.argv) > i and sys.argv[i] else None
lit = lambda v: 'null' if v is None else "'" + v.replace("'", "''") + "'"
for k, v in (('$1', arg(1)), ('$2', arg(2)), ('$3', '1000'), ('$4', arg(3))):
	sql = sql.replace(k, lit(v))
print(sql)
PY
}

# report_pair NAME QUERY: QUERY as the owner and as hb_analyst (row-level
# security) alternately in one session, $repeats times each after a warm-up:
# the median execution time of each.  The machine's speed drifts between
# sessions (the same query, 11 ms in one, 17 ms in the next); within one
# session the two forms meet the same machine.
report_pair() {
	local out
	out=$({ echo "explain (analyze, timing off) $2;"
		for ((i = 1; i <= repeats; i++)); do
			echo "set role hb_analyst; explain (analyze, timing off) $2; reset role;"
			echo "set role rooflined; explain (analyze, timing off) $2; reset role;"
		done; } | pgadmin -t -A -d "$PGDATABASE" | sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' | tail -n +2)
	printf '  %-4s as the owner %s ms, as a user %s ms (one session, alternated, median of %d each)\n' "$1" \
		"$(awk 'NR % 2 == 0' <<<"$out" | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }')" \
		"$(awk 'NR % 2 == 1' <<<"$out" | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }')" "$repeats"
}

# median_ms N CMD...: the median wall time of N runs of CMD, in ms
median_ms() {
	local n=$1 t0; shift
	for ((i = 0; i < n; i++)); do
		t0=$(now_s); "$@" >/dev/null 2>&1 || true
		awk -v a="$t0" -v b="$(now_s)" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'
	done | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# One facility night's points (GPUS / 4 nodes x 4 GPUs x 4 kernels x 3
# levels: 6,000 at GPUS=500) ingested through step_records as the daemon's COPY does (a row a
# point, each routed by 005's trigger), in one transaction, rolled back:
# psql's time for the insert.
INGEST_NIGHT="begin;
insert into runs (pipeline_name, owner, facility, yaml, state, trigger, submitted_at)
values ('ingest-bench', 'rlfacility', true, '', 'running', 'schedule', now());
insert into steps (run_id, step_id, node, plugin, on_daemon, state, started_at)
select currval('runs_id_seq'), 'roofline', 'gpu' || lpad(n::text, 3, '0'), 'hierarchical', true, 'running', now()
from generate_series(0, $((gpus / 4 - 1))) n;
\\timing on
insert into step_records (step, attempt, seq, run_id, kind, node, fields)
select s.id, 1, g * 16 + k * 3 + l, s.run_id, 'point', s.node, jsonb_build_object(
	'kernel', 'kernel_' || k || '(double *, long)', 'invocation', 'all', 'precision', 'fp64',
	'level', (array['l1', 'l2', 'dram'])[l + 1], 'ai', (l + 1)::text, 'gflops', (100 + g)::text,
	'primary', '1', 'gpu_uuid', 'GPU-' || s.node || '-' || g, 'gpu_name', 'NVIDIA H100 80GB HBM3')
from steps s, generate_series(0, 3) g, generate_series(0, 3) k, generate_series(0, 2) l
where s.run_id = currval('runs_id_seq');
\\timing off
rollback;"

# 017_kernel_points on the data as 016 left them: the migration, the
# history queries again (same rows), `roofline history` (its query and the
# command), and what the trigger adds to an ingest.
kernel_points_phase() {
	local k1=$1 start q1old q3old q3sold q2old q2new since
	q1old=$(rows_md5 "$(DOCS_Q 1 "$k1")") q3old=$(rows_md5 "$(DOCS_Q 2)") q3sold=$(rows_md5 "$Q3S_016")
	# `roofline history kernel_1` as 016's CLI chose its rows (the newest
	# 1,000 by run_at): run, node and GFLOP/s of each, to compare
	q2old=$(q -c "select md5(string_agg(run_id || ' ' || node || ' ' || to_char(gflops, 'FM9999990.0'), ',' order by run_id, node, gflops)) from ($(Q2_FOR kernel_1)) x")
	start=$(now_s)
	q -1 -f sql/017_kernel_points.sql >/dev/null
	q -1 -f sql/018_history_due.sql >/dev/null
	echo "migrations 017_kernel_points and 018_history_due (a transaction each, as the daemon applies them): $(since "$start") s; kernel_points $(q -c "select count(*) from kernel_points") rows, heap $(q -c "select pg_size_pretty(sum(pg_relation_size(rel))) from history_partitions_attached where tbl = 'kernel_points'"), indexes $(q -c "select pg_size_pretty(sum(pg_indexes_size(rel))) from history_partitions_attached where tbl = 'kernel_points'"); points now: heap $(q -c "select pg_size_pretty(sum(pg_relation_size(rel))) from history_partitions_attached where tbl = 'points'"), indexes $(q -c "select pg_size_pretty(sum(pg_indexes_size(rel))) from history_partitions_attached where tbl = 'points'")"
	# as autovacuum leaves a table it filled (as the other tables were left)
	pgadmin -d "$PGDATABASE" -c "vacuum (analyze) kernel_points" >/dev/null
	echo "history queries as docs/sql.md has them, on 017 (the views read kernel_points):"
	report Q1 "$(DOCS_Q 1 "$k1")"
	as_user=hb_analyst report Q1u "$(DOCS_Q 1 "$k1")"
	report_pair Q1 "$(DOCS_Q 1 "$k1")"
	report Q1n "select run_at::date as night, node, gflops from kernel_trend where kernel = '$k1' and node = 'gpu042' and at > now() - interval '30 days' order by run_at"
	report Q3 "$(DOCS_Q 2)"
	as_user=hb_analyst report Q3u "$(DOCS_Q 2)"
	report Q3s "$Q3S_016"
	as_user=hb_analyst report Q3su "$Q3S_016"
	report Q4 "$(DOCS_Q 3)"
	as_user=hb_analyst report Q4u "$(DOCS_Q 3)"
	echo "  rows: Q1 $([[ $(rows_md5 "$(DOCS_Q 1 "$k1")") == "$q1old" ]] && echo same || echo DIFFERENT), Q3 $([[ $(rows_md5 "$(DOCS_Q 2)") == "$q3old" ]] && echo same || echo DIFFERENT), Q3s $([[ $(rows_md5 "$Q3S_016") == "$q3sold" ]] && echo same || echo DIFFERENT) as on 016"

	since=$(date -u -d '92 days ago' '+%Y-%m-%d %H:%M:%S+00')
	echo "roofline history (cli/cmd_history.c's query; the newest 1,000 of kernel_1, first in the last 92 days):"
	report Q2w "$(CLI_Q kernel_1 '' "$since")"
	as_user=hb_analyst report Q2wu "$(CLI_Q kernel_1 '' "$since")"
	report Q2a "$(CLI_Q kernel_1)"
	report Q2nw "$(CLI_Q kernel_1 gpu042 "$since")"
	report Q2na "$(CLI_Q kernel_1 gpu042)"
	local roofline=build/$BENCH_VARIANT/bin/roofline
	make -s VARIANT="$BENCH_VARIANT" "$roofline"
	q2new=$("$roofline" history --csv kernel_1 | awk -F, 'NR > 1 { print $10 " " $2 " " $4 }' | LC_ALL=C sort | paste -sd, | tr -d '\n' | md5sum | cut -d' ' -f1)
	q2old=$(q -c "select md5(string_agg(r, ',' order by r collate \"C\")) from (select run_id || ' ' || node || ' ' || to_char(gflops, 'FM9999990.0') r from ($(Q2_FOR kernel_1)) x) y")
	echo "  rows: roofline history kernel_1's 1,000 (run, node, GFLOP/s) $([[ $q2new == "$q2old" ]] && echo "the same as 016's CLI chose" || echo "DIFFERENT from 016's CLI")"
	echo "  the command, wall time (median of $repeats; a new connection each, a new server process with empty caches):"
	echo "    roofline history kernel_1: $(median_ms "$repeats" "$roofline" history kernel_1) ms; --node gpu042: $(median_ms "$repeats" "$roofline" history --node gpu042 kernel_1) ms; a kernel nobody profiled: $(median_ms "$repeats" "$roofline" history no_such_kernel) ms; psql -c 'select 1' (a connection alone): $(median_ms "$repeats" psql -X -q -c 'select 1') ms"

	local times n=5
	((!BENCH_SMOKE)) || n=1
	echo "ingest of one night's $((gpus / 4 * 48)) points through step_records (alternated, median of $n each, rolled back):"
	times=$(for ((i = 0; i < n; i++)); do
		echo "with $(q <<<"$INGEST_NIGHT" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')"
		q -c "alter table points disable trigger points_kernel_points" >/dev/null
		echo "without $(q <<<"$INGEST_NIGHT" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')"
		q -c "alter table points enable trigger points_kernel_points" >/dev/null
	done)
	echo "  with 017's trigger $(awk '$1 == "with" { print $2 }' <<<"$times" | sort -n | sed -n "$(((n + 1) / 2))p") ms, without it $(awk '$1 == "without" { print $2 }' <<<"$times" | sort -n | sed -n "$(((n + 1) / 2))p") ms"
}

partitioned_phase() {
	local start
	if [[ ${REUSE:-0} == 1 ]]; then
		export PGDATABASE=hb_part
		echo "== partitioned: reusing the data of a kept 'generate' in hb_part: $(q -c "select (select count(*) from runs) || ' runs, ' || (select count(*) from points) || ' points, ' || (select count(*) from ceilings) || ' ceilings'")"
		pgadmin -c "drop role if exists hb_analyst" -c "create role hb_analyst nologin in role roofline_users" >/dev/null
	else
		generate_history
	fi
	local run k1="kernel_1(double *, long)" q1old q1new q1run
	run=$(q -c "select id from runs order by ended_at desc offset 7 limit 1")
	echo "history queries as docs/sql.md had them, on the views of 010 ($(q -c "select count(*) from history_partitions_attached where tbl = 'points'") partitions of points):"
	report_once Q1 "$(Q1_FOR "$k1")"
	report Q1n "select run_at::date as night, node, gflops from kernel_trend where kernel = '$k1' and node = 'gpu042' and run_at > now() - interval '30 days' order by run_at"
	report_once Q2 "$(Q2_FOR kernel_1)"
	report_once Q3 "select p.pipeline_name, p.kernel, p.node, p.verdict, p.bound, round(p.pct_of_roof::numeric, 1) as pct_of_roof from roofline_points p where p.run_id in (select max(id) from runs where state = 'succeeded' group by pipeline_name) and p.pct_of_roof < 10 order by p.pct_of_roof"
	report Q3s "select p.pipeline_name, p.kernel, p.node, p.verdict, p.bound, round(p.pct_of_roof::numeric, 1) as pct_of_roof from roofline_points p where p.run_id = (select id from runs where state = 'succeeded' and pipeline_name = 'nightly' order by ended_at desc limit 1) and p.pct_of_roof < 10 order by p.pct_of_roof"
	report_once Q4 "with latest as (select distinct on (node, gpu_uuid) node, gpu_uuid, value, measured_at from ceilings_history where name = 'hbm_triad' and method = 'empirical' order by node, gpu_uuid, measured_at desc), baseline as (select l.node, l.gpu_uuid, percentile_cont(0.5) within group (order by h.value) as median from latest l join ceilings_history h using (node, gpu_uuid) where h.name = 'hbm_triad' and h.method = 'empirical' and h.measured_at < l.measured_at and h.measured_at > l.measured_at - interval '30 days' group by l.node, l.gpu_uuid) select l.node, l.gpu_uuid, l.value / 1e12 as tb_s, b.median / 1e12 as median_tb_s, round((100 * (1 - l.value / b.median))::numeric, 1) as fell_pct from latest l join baseline b using (node, gpu_uuid) where l.value < 0.95 * b.median order by fell_pct desc"
	report Q4d "with latest as (select distinct on (node, gpu_uuid) node, gpu_uuid, value, measured_at from ceilings_history where name = 'hbm_triad' and method = 'empirical' and measured_at > now() - interval '2 days' order by node, gpu_uuid, measured_at desc), baseline as (select l.node, l.gpu_uuid, percentile_cont(0.5) within group (order by h.value) as median from latest l join ceilings_history h using (node, gpu_uuid) where h.name = 'hbm_triad' and h.method = 'empirical' and h.measured_at < l.measured_at and h.measured_at > l.measured_at - interval '30 days' and h.measured_at > now() - interval '32 days' group by l.node, l.gpu_uuid) select l.node, l.gpu_uuid, l.value / 1e12 as tb_s, b.median / 1e12 as median_tb_s, round((100 * (1 - l.value / b.median))::numeric, 1) as fell_pct from latest l join baseline b using (node, gpu_uuid) where l.value < 0.95 * b.median order by fell_pct desc"
	report Q6 "select kernel, invocation, jsonb_pretty(metrics) from kernel_profiles where run_id = $run and kernel like 'kernel_2%'"
	q1old=$(rows_md5 "$(Q1_FOR "$k1")")

	start=$(now_s)
	q -1 -f sql/015_history_time.sql >/dev/null
	echo "migration 015_history_time (one transaction, as the daemon applies it): $(since "$start") s"
	echo "history queries as docs/sql.md had them with 015 (Q3: its second example then), on the views of 015:"
	report Q1 "$(DOCS_Q 1 "$k1")"
	as_user=hb_analyst report Q1u "$(DOCS_Q 1 "$k1")"
	report Q1n "select run_at::date as night, node, gflops from kernel_trend where kernel = '$k1' and node = 'gpu042' and at > now() - interval '30 days' order by run_at"
	report_once Q1r "$(Q1_FOR "$k1")"
	q1new=$(rows_md5 "$(DOCS_Q 1 "$k1")") q1run=$(rows_md5 "$(Q1_FOR "$k1")")
	echo "  Q1 rows: 010's views, run_at: $q1old; 015's, at: $q1new; 015's, run_at: $q1run ($([[ $q1old == "$q1new" && $q1old == "$q1run" ]] && echo same || echo DIFFERENT))"
	report_once Q2 "$(Q2_FOR kernel_1)"
	report Q3 "$Q3_015"
	as_user=hb_analyst report Q3u "$Q3_015"
	report Q3s "$Q3S_015"
	report Q4 "$(DOCS_Q 3)"
	as_user=hb_analyst report Q4u "$(DOCS_Q 3)"
	report Q6 "select kernel, invocation, jsonb_pretty(metrics) from kernel_profiles where run_id = $run and kernel like 'kernel_2%'"
	q3old=$(rows_md5 "$Q3_015") q3sold=$(rows_md5 "$Q3S_015")

	start=$(now_s)
	q -1 -f sql/016_history_plans.sql >/dev/null
	echo "migration 016_history_plans (one transaction, as the daemon applies it): $(since "$start") s; ceilings_fleet_idx $(q -c "select pg_size_pretty(sum(pg_relation_size(i.indexrelid))) from pg_inherits h join pg_index i on i.indexrelid = h.inhrelid where h.inhparent = 'ceilings_fleet_idx'::regclass"), beside ceilings' heap $(q -c "select pg_size_pretty(sum(pg_relation_size(rel))) from history_partitions_attached where tbl = 'ceilings'") and its other indexes $(q -c "select pg_size_pretty(sum(pg_indexes_size(rel)) - (select sum(pg_relation_size(i.indexrelid)) from pg_inherits h join pg_index i on i.indexrelid = h.inhrelid where h.inhparent = 'ceilings_fleet_idx'::regclass)) from history_partitions_attached where tbl = 'ceilings'")"
	echo "history queries as docs/sql.md has them now (DOCS1-3: its first three examples, verbatim but for the kernel's name), on 016:"
	report Q1 "$(DOCS_Q 1 "$k1")"
	as_user=hb_analyst report Q1u "$(DOCS_Q 1 "$k1")"
	report Q3 "$(DOCS_Q 2)"
	as_user=hb_analyst report Q3u "$(DOCS_Q 2)"
	report Q3s "$Q3S_016"
	as_user=hb_analyst report Q3su "$Q3S_016"
	report Q3c "select p.pipeline_name, p.kernel, p.node, p.verdict, p.bound, round(p.pct_of_roof::numeric, 1) as pct_of_roof from roofline_points p where p.run_id = $(q -c "select id from runs where state = 'succeeded' and pipeline_name = 'nightly' order by ended_at desc limit 1") and p.pct_of_roof < 10 order by p.pct_of_roof"
	report Q4 "$(DOCS_Q 3)"
	as_user=hb_analyst report Q4u "$(DOCS_Q 3)"
	q3new=$(rows_md5 "$(DOCS_Q 2)") q3snew=$(rows_md5 "$Q3S_016")
	echo "  Q3 rows: 015's form: $q3old; 016's: $q3new ($([[ $q3old == "$q3new" ]] && echo same || echo DIFFERENT)); Q3s: $q3sold; $q3snew ($([[ $q3sold == "$q3snew" ]] && echo same || echo DIFFERENT))"

	kernel_points_phase "$k1"

	echo "rollup of the months the two retentions will drop (the daily job rolls each month up once it ended):"
	for t in step_records points kernel_points kernel_profiles ceilings; do
		q <<SQL | sed -n 's/^Time: \([0-9.]*\) ms.*/  '"$t"': \1 ms/p'
\\timing on
select count(*), sum(rl_history_rollup(tbl, rel, rl_month(lower_bound)))
from history_partitions_attached where tbl = '$t' and upper_bound <= now() - interval '$((keep_months - 12)) months';
SQL
	done
	retire "$keep_months" one
	retire "$((keep_months - 12))" each
	echo "left: $(q -c "select count(*) from history_partitions_attached") partitions; oldest point $(q -c "select min(at)::date from points"); monthly aggregates: $(q -c "select count(*) from points_monthly") points_monthly rows, $(q -c "select count(*) from ceilings_monthly") ceilings_monthly rows"
	echo "after the retentions:"
	report Q1 "$(DOCS_Q 1 "$k1")"
	report Q3 "$(DOCS_Q 2)"
	report Q4 "$(DOCS_Q 3)"
	unset PGDATABASE
	drop_db hb_part
	pgadmin -c "drop role hb_analyst" >/dev/null
}

if [[ $phase == generate ]]; then
	generate_history
	exit 0
fi
[[ $phase == partitioned ]] || migrate_phase
[[ $phase == migrate ]] || partitioned_phase
