#!/bin/bash
# History that lasts (issue 15, item 4): a database at migration 009 holding
# rows is moved by the daemon to the partitioned layout of 010_partitions without losing
# or changing a row; the daemon makes partitions ahead; the retention rolls
# old months up into the monthly aggregates, then drops or detaches them;
# ingest goes on through the partitioned tables.
#
# Runs on a database of its own (rl_history_<pid>), so that it starts at 009
# whatever the other tests did.  Every row is synthetic (made here by SQL).
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup

# -- the settings: months or forever, drop or detach -----------------------
printf 'retain_points: 3 weeks\nretain_ceilings: 0\nretention: archive\npartitions_ahead: 0\nretain_step_records: forever\n' \
	>"$TEST_TMP/bad.yaml"
out=$("$BIN/rooflined" --check-config -c "$TEST_TMP/bad.yaml" 2>&1)
is "$?" 1 "--check-config refuses bad history settings"
is "$(grep -o "^[^ ]*bad.yaml:[0-9]*:[0-9]*: bad value for '[a-z_]*'" <<<"$out" | sed 's/.*bad.yaml://')" \
	"1:16: bad value for 'retain_points'
2:18: bad value for 'retain_ceilings'
3:12: bad value for 'retention'
4:19: bad value for 'partitions_ahead'" "each bad value named with its line and column (forever is fine)"
printf 'retain_points: 3 years\nretain_ceilings: forever\nretain_kernel_profiles: 13 months\nretain_step_records: 6\nretention: detach\npartitions_ahead: 12\n' \
	>"$TEST_TMP/good.yaml"
ok "and accepts good ones" "$BIN/rooflined" --check-config -c "$TEST_TMP/good.yaml"

DB=rl_history_$$
pgadmin() {
	runuser -u postgres -- env PGUSER=postgres PGDATABASE=postgres \
		PGHOST="$PGHOST" PGPORT="$PGPORT" psql -X -q -v ON_ERROR_STOP=1 "$@"
}
hsql() { PGDATABASE=$DB sql "$1"; }
pgadmin -c "create database $DB owner rooflined" >/dev/null || bail_out "cannot create $DB"
on_exit "pgadmin -c 'drop database if exists $DB with (force)' >/dev/null"

for f in "$ROOT"/sql/00[1-9]_*.sql; do
	PGDATABASE=$DB psql -X -q -v ON_ERROR_STOP=1 -f "$f" >/dev/null || bail_out "$f failed"
done
# (the table as daemon/migrate.c makes it)
PGDATABASE=$DB psql -X -q -v ON_ERROR_STOP=1 -c "create table schema_migrations (
	version integer primary key, name text not null,
	applied_at timestamptz not null default now())" -c \
	"insert into schema_migrations (version, name) select substr(f, 1, 3)::int, f
	 from unnest(string_to_array('$(cd "$ROOT/sql" && ls 00[1-9]_*.sql | paste -sd,)', ',')) f" \
	>/dev/null || bail_out "cannot record the migrations"
is "$(hsql "select max(version) from schema_migrations")" 9 "the database is at migration 009"

# -- synthetic history at 009: a run on the 5th of each of the last 6 months
# and one now (k = 0 .. 6 months back), facility runs and bob's own; each run
# has a ceilings, a profile and a roofline step on two nodes, whose records
# the 003/005 triggers route into ceilings, kernel_profiles and points.  The
# typed rows then get their run's time, as if ingested then.
PGDATABASE=$DB psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL' || bail_out "cannot fill the 009 database"
insert into runs (pipeline_name, owner, facility, yaml, state, trigger, submitted_at, ended_at)
select case when b then 'mine' else 'nightly' end, case when b then 'bob' else 'rlfacility' end,
       not b, '', 'succeeded', case when b then 'submit' else 'schedule' end, t, t + interval '1 hour'
from generate_series(0, 6) k, (values (false), (true)) v(b),
     lateral (select case when k = 0 then now() - interval '2 hours'
              else date_trunc('month', now() at time zone 'UTC') at time zone 'UTC'
                   - k * interval '1 month' + interval '4 days 2 hours' end as t) x;
insert into steps (run_id, step_id, node, plugin, on_daemon, state, started_at, ended_at)
select r.id, s, n, 'smoke', false, 'succeeded', r.submitted_at, r.ended_at
from runs r, unnest(array['ceilings', 'profile', 'roofline']) s, unnest(array['n1', 'n2']) n;
insert into step_records (step, attempt, seq, run_id, kind, node, fields)
select s.id, 1, g, s.run_id, 'ceiling', s.node, jsonb_build_object(
	'gpu_index', '0', 'gpu_uuid', 'GPU-' || s.node, 'gpu_name', 'NVIDIA H100 (synthetic)',
	'method', 'empirical', 'name', (array['fp64_fma', 'hbm_triad'])[g % 2 + 1],
	'kind', (array['compute', 'bandwidth'])[g % 2 + 1],
	'value', (1e12 * (1 + (s.id * 7 + g * 13) % 17))::text, 'unit', 'x/s',
	'synthetic', 'synthetic history.t row')
from steps s, generate_series(1, 6) g where s.step_id = 'ceilings';
insert into step_records (step, attempt, seq, run_id, kind, node, fields)
select s.id, 1, g, s.run_id, 'kernel', s.node, jsonb_build_object(
	'kernel', 'kernel_' || g % 2, 'invocation', g::text, 'gpu_name', 'NVIDIA H100 (synthetic)',
	'dram__bytes.sum', (g * 1000 + s.id)::text)
from steps s, generate_series(1, 4) g where s.step_id = 'profile';
insert into step_records (step, attempt, seq, run_id, kind, node, fields)
select s.id, 1, g, s.run_id, 'point', s.node, jsonb_build_object(
	'kernel', 'kernel_' || g % 2, 'invocation', 'all', 'precision', 'fp64',
	'level', (array['l1', 'l2', 'dram'])[g % 3 + 1], 'ai', (g * 0.5)::text,
	'gflops', (100 + (s.id * 3 + g) % 23)::text, 'primary', '1',
	'gpu_uuid', 'GPU-' || s.node, 'gpu_name', 'NVIDIA H100 (synthetic)',
	'verdict', 'bandwidth-bound')
from steps s, generate_series(1, 6) g where s.step_id = 'roofline';
insert into step_records (step, attempt, seq, run_id, kind, node, fields)
select s.id, 1, 100, s.run_id, 'note', s.node, '{"text": "synthetic"}'
from steps s;
update points p set at = s.ended_at from steps s where s.id = p.step;
update ceilings c set measured_at = s.ended_at from steps s where s.id = c.step;
update kernel_profiles k set collected_at = s.ended_at from steps s where s.id = k.step;
SQL

# Content of each table as one checksum, in the columns 009 has.
# Columns that 019_p2p.sql added to ceilings (null for every row it found):
# the rows are compared in the columns they had.
p2p_columns="'{peer_index,peer_uuid,link,mode}'::text[]"
checksums() {
	hsql "select (select count(*) || ':' || md5(string_agg(t::text, '|' order by step, attempt, seq))
	              from (select step, attempt, seq, run_id, kind, node, fields from step_records) t)
	      || ' ' || (select count(*) || ':' || md5(string_agg(t::text, '|' order by id)) from points t)
	      || ' ' || (select count(*) || ':' || md5(string_agg(t::text, '|' order by id)) from kernel_profiles t)
	      || ' ' || (select count(*) || ':' || md5(string_agg((to_jsonb(t) - $p2p_columns)::text, '|' order by id)) from ceilings t)"
}
# What else must survive as it was: the views' columns (015_history_time
# re-defines roofline_points and kernel_trend and adds a last column, `at`),
# options and owner, triggers, policies, grants, column types and
# collations, the id sequences' positions.
schema_facts() {
	hsql "select string_agg(x, E'\n' order by x) from (
	  select 'view ' || c.relname || ': ' || c.relowner::regrole || ' ' || array_to_string(c.reloptions, ',') || ' '
	         || string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' order by a.attnum)
	   from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attnum > 0
	   where c.relkind = 'v' and c.relname in ('roofline_points', 'kernel_trend', 'ceilings_history', 'fleet_ceilings')
	     and not (c.relname in ('roofline_points', 'kernel_trend') and a.attname = 'at')
	   group by c.oid, c.relname
	  union all select 'trigger ' || tgrelid::regclass || ' ' || tgname || ' ' || tgfoid::regproc || ' ' || tgtype
	   from pg_trigger where not tgisinternal and tgrelid::regclass::text in ('step_records', 'points', 'kernel_profiles', 'ceilings')
	  union all select 'policy ' || tablename || ' ' || policyname || ' ' || cmd || ' ' || array_to_string(roles, ',') || ' ' || qual
	   from pg_policies where tablename in ('step_records', 'points', 'kernel_profiles', 'ceilings')
	  union all select 'rls ' || relname || ' ' || relrowsecurity from pg_class
	   where relname in ('step_records', 'points', 'kernel_profiles', 'ceilings')
	  union all select 'grant ' || table_name || ' ' || grantee || ' ' || privilege_type
	   from information_schema.role_table_grants where grantee = 'roofline_users'
	   and table_name in ('step_records', 'points', 'kernel_profiles', 'ceilings', 'roofline_points', 'kernel_trend', 'ceilings_history', 'fleet_ceilings')
	  union all select 'column ' || attrelid::regclass || '.' || attname || ' ' || format_type(atttypid, atttypmod)
	          || ' ' || attnotnull || ' ' || coalesce(collname, '') || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
	   from pg_attribute a left join pg_collation co on co.oid = a.attcollation and a.attcollation <> 100
	   left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
	   where attrelid::regclass::text in ('step_records', 'points', 'kernel_profiles', 'ceilings')
	     and attnum > 0 and not attisdropped and not (attrelid = 'step_records'::regclass and attname = 'at')
	  union all select 'check ' || conrelid::regclass || ' ' || pg_get_constraintdef(oid) from pg_constraint
	   where contype = 'c' and conrelid::regclass::text in ('step_records', 'points', 'kernel_profiles', 'ceilings')
	  union all select 'fk ' || conrelid::regclass || ' ' || pg_get_constraintdef(oid) from pg_constraint
	   where contype = 'f' and conrelid::regclass::text in ('step_records', 'points', 'kernel_profiles', 'ceilings')
	  union all select 'sequence ' || sequencename || ' ' || last_value from pg_sequences
	   where sequencename in ('points_id_seq', 'kernel_profiles_id_seq', 'ceilings_id_seq')) f"
}
# The views' rows, in the columns 009 gave them.
view_rows() {
	hsql "select (select count(*) || ':' || md5(string_agg(t::text, '|' order by t::text))
	              from (select run_id, pipeline_name, owner, node, gpu_name, gpu_uuid, run_at, kernel,
	                           precision, ai_l1, ai_l2, ai_dram, gflops, time_s, invocations, bound,
	                           bound_ceiling, verdict, pct_of_roof, alpha, tensor_uncounted, step
	                    from roofline_points) t)
	      || ' ' || (select count(*) || ':' || md5(string_agg(t::text, '|' order by t::text))
	              from (select kernel, run_at, node, gpu_name, gflops, ai_l1, ai_l2, ai_dram,
	                           pct_of_roof, verdict, run_id, pipeline_name from kernel_trend) t)
	      || ' ' || (select count(*) || ':' || md5(string_agg(t::text, '|' order by t::text)) from ceilings_history t)
	      || ' ' || (select count(*) || ':' || md5(string_agg(j, '|' order by j))
	              from (select (to_jsonb(t) - 'mode')::text j from fleet_ceilings t) t)"
}
# The medians the aggregates must hold, computed here from the raw rows.
expected_medians() {
	hsql "select string_agg(m || ' ' || node || ' ' || name || ' ' || med, ',' order by m, node, name) from (
	  select to_char(date_trunc('month', measured_at at time zone 'UTC'), 'YYYY-MM') m, node, name,
	         percentile_cont(0.5) within group (order by value) med
	  from ceilings c join runs r on r.id = c.run_id where r.facility
	  group by 1, 2, 3) x where m <= to_char(now() at time zone 'UTC' - interval '4 months', 'YYYY-MM')"
}
expected_gflops() {
	hsql "select string_agg(m || ' ' || kernel || ' ' || node || ' ' || level || ' ' || med, ',' order by m, kernel, node, level) from (
	  select to_char(date_trunc('month', at at time zone 'UTC'), 'YYYY-MM') m, kernel, node, level,
	         percentile_cont(0.5) within group (order by gflops) med
	  from points p join runs r on r.id = p.run_id where r.facility
	  group by 1, 2, 3, 4) x where m <= to_char(now() at time zone 'UTC' - interval '4 months', 'YYYY-MM')"
}
month_of() { hsql "select to_char(date_trunc('month', now() at time zone 'UTC') - interval '$1 months', 'YYYY_MM')"; }

before=$(checksums)
facts_before=$(schema_facts)
views_before=$(view_rows)
medians=$(expected_medians)
gflops=$(expected_gflops)
counts_by_month=$(hsql "select string_agg(m || '=' || n, ',' order by m) from (
	select to_char(date_trunc('month', measured_at at time zone 'UTC'), 'YYYY_MM') m, count(*) n
	from ceilings group by 1) x")
# 14 runs, 28 steps of each kind: 168 ceilings, 112 kernel launches, 168
# points; step_records: those 448 records and 84 notes.  24 ceilings, 24
# points and 76 records per month.
like "$before" '^532:[0-9a-f]{32} 168:[0-9a-f]{32} 112:[0-9a-f]{32} 168:[0-9a-f]{32}$' \
	"the 009 database holds the synthetic rows (step_records 532, points 168, kernel_profiles 112, ceilings 168)"

# -- the daemon migrates it (010_partitions and later) and makes partitions ahead ---------------
HCONF=$TEST_TMP/history.yaml
sed "s/^database: .*/database: \"dbname=$DB\"/" "$DAEMON_CONF" >"$HCONF"
cat >>"$HCONF" <<'CONF'
partitions_ahead: 5
CONF
DAEMON_CONF=$HCONF
daemon_start
is "$(hsql "select count(*) from schema_migrations where name = '010_partitions.sql'")" 1 "the daemon applied 010_partitions.sql"
is "$(checksums)" "$before" "every row of the four tables is there, unchanged (counts and content checksums)"
is "$(schema_facts)" "$facts_before" \
	"views, triggers, policies, RLS, grants, columns, checks, foreign keys and sequences as they were"
is "$(view_rows)" "$views_before" \
	"the views show the same rows in the columns they had (roofline_points, kernel_trend: 015's too)"
is "$(hsql "select count(*) > 0 and count(*) = count(*) filter (where k.at = x.p_at) from kernel_trend k
	cross join lateral (select max(p.at) p_at from points p where p.run_id = k.run_id and p.kernel = k.kernel
	                    and p.node = k.node and p.invocation = 'all') x")" t \
	"kernel_trend.at is the time its points were stored"
# kernel_points (017) against the points grouped as 015's view grouped them,
# with their run's owner and facility flag: the rows only one side has, each
# way.
grouped_diff() {
	hsql "with g as (select p.run_id, p.step, r.owner::text, r.facility, p.node, p.gpu_name,
	         p.gpu_uuid, p.kernel, p.precision, p.at,
	         max(p.ai) filter (where p.level = 'l1'), max(p.ai) filter (where p.level = 'l2'),
	         max(p.ai) filter (where p.level = 'dram'), max(p.gflops), max(p.time_s),
	         max(p.invocations), max(p.bound_level), max(p.bound_ceiling), max(p.verdict),
	         max(p.pct_of_bound), max(p.alpha), max(p.tensor_uncounted)
	       from points p join runs r on r.id = p.run_id where p.invocation = 'all' and p.is_primary
	       group by p.run_id, p.step, r.owner, r.facility, p.node, p.gpu_name, p.gpu_uuid,
	                p.kernel, p.precision, p.at)
	      select (select count(*) from (select * from g except all select * from kernel_points) x)
	             || ' ' || (select count(*) from (select * from kernel_points except all select * from g) y)
	             || ' of ' || (select count(*) from kernel_points)"
}
is "$(grouped_diff)" "0 0 of 56" \
	"the migration grouped every point into kernel_points (56 rows: 28 roofline steps x 2 kernels)"
# roofline history over months: the newest rows are looked for in the last
# 92 days first, and in the whole history when those hold fewer than asked.
# Rows as "time,run", sorted (runs of one month share their time).
hist() { PGDATABASE=$DB "$BIN/roofline" history --csv "$@" | tail -n +2 | cut -d, -f1,10; }
newest() {
	hsql "select string_agg(r, ' ' order by r collate \"C\") from (
	      select to_char(run_at, 'YYYY-MM-DD HH24:MI') || ',' || run_id r from kernel_trend
	      where kernel = 'kernel_0' order by at desc limit $1) x"
}
is "$(hist kernel_0 | LC_ALL=C sort | paste -sd' ')" "$(newest 1000)" \
	"roofline history: every run of kernel_0, back 6 months (the last 92 days hold fewer than 1000)"
is "$(hist kernel_0 | cut -d, -f1 | paste -sd' ')" "$(hist kernel_0 | cut -d, -f1 | LC_ALL=C sort | paste -sd' ')" \
	"oldest first"
# (4 rows a month: 2 runs x 2 nodes, one time each month)
is "$(hist --limit 4 kernel_0 | LC_ALL=C sort | paste -sd' ')" "$(newest 4)" \
	"--limit 4: this month's 4, the newest (the last 92 days hold them)"
is "$(hist --limit 20 kernel_0 | LC_ALL=C sort | paste -sd' ')" "$(newest 20)" \
	"--limit 20: the newest 20, back 4 months (past the 92 days)"
is "$(hsql "select count(*) from step_records r join steps s on s.id = r.step where r.at <> s.ended_at")" 0 \
	"step_records.at of the old rows is their step's ended_at"
is "$(hsql "select count(*) from pg_partitioned_table where partrelid::regclass::text in ('step_records', 'points', 'kernel_profiles', 'ceilings')")" 4 \
	"the four tables are partitioned"
is "$(hsql "select string_agg(distinct tableoid::regclass::text, ',' order by tableoid::regclass::text) from ceilings")" \
	"$(for k in 6 5 4 3 2 1 0; do printf 'ceilings_%s,' "$(month_of $k)"; done | sed 's/,$//')" \
	"each ceiling row is in the partition of its month"

ahead=$(hsql "select count(*) from history_tables t, generate_series(0, 5) i
	where to_regclass(t.name || '_' || to_char(date_trunc('month', now() at time zone 'UTC') + i * interval '1 month', 'YYYY_MM')) in
	      (select inhrelid from pg_inherits where inhparent = to_regclass(t.name))")
is "$ahead" 30 "after start: this month and 5 ahead exist for each of the 5 tables (kernel_points: 017)"
m5=$(hsql "select to_char(date_trunc('month', now() at time zone 'UTC') + interval '5 months', 'YYYY_MM')")
like "$(cat "$DAEMON_LOG")" "history: created partition points_$m5" \
	"the daemon made the 5th month ahead (the migration made 3) and said so"
daemon_stop
n_parts=$(hsql "select count(*) from history_partitions_attached")
daemon_start
is "$(hsql "select count(*) from history_partitions_attached")" "$n_parts" "a second start makes nothing twice"
is "$(grep -c "history: created partition" "$DAEMON_LOG")" 10 \
	"and logs no new partition (the 10 lines are the first start's: months 4 and 5 ahead of 5 tables)"

# -- ingest goes on: a new record of each kind reaches its typed table -----
hsql "insert into step_records (step, attempt, seq, run_id, kind, node, fields)
      select s.id, 2, 1, s.run_id, 'point', s.node, '{\"kernel\": \"k_new\", \"invocation\": \"all\",
        \"precision\": \"fp64\", \"level\": \"dram\", \"gflops\": \"5\", \"primary\": \"1\"}'
      from steps s where s.step_id = 'roofline' order by s.id desc limit 1" >/dev/null
is "$(hsql "select count(*) || ' ' || (tableoid::regclass::text = 'points_' || to_char(now() at time zone 'UTC', 'YYYY_MM')) from points where kernel = 'k_new' group by tableoid")" \
	"1 true" "a point ingested now lands in this month's partition, through the 005 trigger"
# A kernel's points ingested in one transaction (one `at`), a statement per
# level, on two GPUs, one without a UUID: merged per GPU into kernel_points
# as the view grouped them.
merge_sql= i=0
for level in l1 l2 dram; do
	merge_sql+="insert into step_records (step, attempt, seq, run_id, kind, node, fields)
	      select s.id, 2, 10 + $((i++)) * 2 + g, s.run_id, 'point', s.node, jsonb_build_object('kernel', 'k_merge',
	        'invocation', 'all', 'precision', 'fp32', 'level', '$level', 'ai', (g + length('$level'))::text,
	        'gflops', (g * 10 + length('$level'))::text, 'primary', '1', 'verdict', '$level',
	        'gpu_uuid', case when g = 1 then 'GPU-m' end)
	      from steps s, generate_series(1, 2) g
	      where s.step_id = 'roofline' and s.id = (select max(id) from steps);"
done
hsql "$merge_sql" >/dev/null
is "$(hsql "select string_agg(concat_ws(' ', coalesce(gpu_uuid, '-'), ai_l1, ai_l2, ai_dram, gflops, verdict), ',' order by gpu_uuid)
            from roofline_points where kernel = 'k_merge'")" "GPU-m 3 3 5 14 l2,- 4 4 6 24 l2" \
	"roofline_points has one row per GPU, its AI per level and the max of each column"
is "$(grouped_diff)" "0 0 of 59" "kernel_points holds every ingested group (56 + k_new + k_merge's 2)"
like "$(hsql "insert into step_records (step, attempt, seq, run_id, kind, node, fields)
      select s.id, 3, 1, s.run_id, 'note', s.node, '{}' from steps s, generate_series(1, 2)
      where s.step_id = 'roofline' and s.id = (select max(id) from steps)")" \
	"duplicate key value violates unique constraint" \
	"a record twice in one ingest transaction (one partition key) is refused by the key"

# -- retention: 3 months for points and ceilings (drop), then detach -------
daemon_stop
cat >>"$HCONF" <<'CONF'
retain_points: 3 months
retain_ceilings: 3
retention: drop
CONF
daemon_start
for k in 4 5 6; do
	like "$(cat "$DAEMON_LOG")" "history: dropped partition ceilings_$(month_of $k) \(month [0-9-]+, 24 rows" \
		"retention dropped ceilings_$(month_of $k) (24 rows) and said so"
	like "$(cat "$DAEMON_LOG")" "history: dropped partition points_$(month_of $k) " "and points_$(month_of $k)"
	like "$(cat "$DAEMON_LOG")" "history: dropped partition kernel_points_$(month_of $k) \(month [0-9-]+, 8 rows; kernel_points keeps 3 months; its aggregates stay in points_monthly\)" \
		"and kernel_points_$(month_of $k), with the retention of points"
done
unlike "$(cat "$DAEMON_LOG")" "dropped partition (ceilings|points)_$(month_of 3)" \
	"the month 3 months back is kept (not all of it is older than 3 months)"
is "$(hsql "select count(*) from ceilings where measured_at < date_trunc('month', now() at time zone 'UTC') at time zone 'UTC' - interval '3 months'")" 0 \
	"no ceiling older than the kept months is left"
is "$(hsql "select count(*) from ceilings")" $((168 - 3 * 24)) "the 4 younger months' ceilings are all there"
is "$(grouped_diff)" "0 0 of $((59 - 3 * 8))" "kernel_points keeps the groups of the points kept, no others"
is "$(hsql "select count(*) from kernel_profiles")" 112 "kernel_profiles (no retention set) keeps everything"
is "$(hsql "select string_agg(to_char(month, 'YYYY-MM') || ' ' || node || ' ' || name || ' ' || median, ',' order by month, node, name)
            from ceilings_monthly where facility and month <= (now() at time zone 'UTC' - interval '4 months')::date")" \
	"$medians" "ceilings_monthly keeps each GPU's median per month of the dropped months, as computed from the raw rows before"
is "$(hsql "select string_agg(replace(partition, 'ceilings_', '') || '=' || rows, ',' order by partition) from history_partitions where tbl = 'ceilings'")" \
	"$(tr , '\n' <<<"$counts_by_month" | grep -v "^$(month_of 0)=" | paste -sd,)" \
	"history_partitions counted each rolled-up month's rows (every month that ended)"
is "$(hsql "select string_agg(to_char(month, 'YYYY-MM') || ' ' || kernel || ' ' || node || ' ' || level || ' ' || gflops_median, ',' order by month, kernel, node, level)
            from points_monthly where facility and month <= (now() at time zone 'UTC' - interval '4 months')::date")" \
	"$gflops" "points_monthly keeps each kernel's median GFLOP/s per GPU and level of the dropped months"
like "$(hsql "select sum(samples) from points_monthly where month <= (now() at time zone 'UTC' - interval '4 months')::date")" \
	"^72$" "every dropped point is counted once in points_monthly (3 months x 24)"

# Users see their own aggregates and the facility's, not another user's.
is "$(as alice psql -X -q -t -A -d "$DB" -c "select count(*) from points_monthly where owner = 'bob'")" 0 \
	"alice does not see bob's monthly aggregates"
like "$(as bob psql -X -q -t -A -d "$DB" -c "select count(*) from points_monthly where owner = 'bob'")" "^[1-9][0-9]*$" \
	"bob sees his"
like "$(as alice psql -X -q -t -A -d "$DB" -c "select count(*) from points_monthly where facility")" "^[1-9][0-9]*$" \
	"alice sees the facility's"
like "$(as alice psql -X -q -t -A -d "$DB" -c "select 1 from points_$(month_of 1)" 2>&1)" "permission denied" \
	"users cannot read a partition directly (around row-level security)"
# And the views of 015 (security_invoker): the same through roofline_points
# and kernel_trend, with a window on `at` (partitions pruned) or not.
is "$(as alice psql -X -q -t -A -d "$DB" -c "select count(*) from roofline_points where owner = 'bob'")" 0 \
	"alice does not see bob's rows in roofline_points"
is "$(as alice psql -X -q -t -A -d "$DB" -c "select count(*) from kernel_trend where pipeline_name = 'mine' and at > now() - interval '40 days'")" 0 \
	"nor in kernel_trend, with a window on at"
is "$(as bob psql -X -q -t -A -d "$DB" -c "select count(*) from kernel_trend where pipeline_name = 'mine' and at > now() - interval '40 days'")" \
	"$(hsql "select count(*) from kernel_trend where pipeline_name = 'mine' and at > now() - interval '40 days'")" \
	"bob sees his rows of the window, as many as the owner counts"

# A rolled-up month takes no new row: its aggregates stay exact.
like "$(hsql "insert into points (run_id, step, attempt, seq, node, kernel, invocation, precision, level, at)
      select run_id, step, 9, 1, node, 'late', 'all', 'fp64', 'dram', at from points
      where tableoid = 'points_$(month_of 2)'::regclass limit 1")" \
	"violates check constraint \"points_$(month_of 2)_sealed\"" "a row for a rolled-up month is refused"

# Another pass drops nothing more and counts nothing twice.
agg=$(hsql "select (select count(*) from ceilings_monthly) || ' ' || (select sum(samples) from points_monthly)")
daemon_stop
daemon_start
is "$(grep -c "history: dropped partition" "$DAEMON_LOG")" 9 "a restart drops nothing more"
is "$(hsql "select (select count(*) from ceilings_monthly) || ' ' || (select sum(samples) from points_monthly)")" "$agg" \
	"nor rolls anything up twice"

# Detach: SIGHUP with step_records kept 3 months, detached.
sed -i 's/^retention: drop/retention: detach/' "$HCONF"
echo "retain_step_records: 3 months" >>"$HCONF"
kill -HUP "$DAEMON_PID"
ok "the reload applies the new retention" wait_for "grep -q 'history: detached partition step_records_$(month_of 6)' '$DAEMON_LOG'" 20
for k in 4 5 6; do
	is "$(hsql "select (select count(*) from pg_inherits where inhrelid = 'step_records_$(month_of $k)'::regclass)
	            || ' ' || (select count(*) from step_records_$(month_of $k))")" "0 76" \
		"step_records_$(month_of $k) is detached, kept as a plain table with its 76 rows"
done
is "$(hsql "select sum(records) from step_records_monthly where month <= (now() at time zone 'UTC' - interval '4 months')::date")" 228 \
	"step_records_monthly counted the detached months' records"
is "$(hsql "select count(*) from history_partitions where removal = 'detached'")" 3 "history_partitions says so"

daemon_stop
done_testing
