#!/bin/bash
# The server extension rooflined_stats (pgext/, sql/028_robust_stats.sql):
# the daemon's migrations create it as the database's owner (it is trusted,
# no superuser), its functions give the bits percentile_cont(0.5) gives on
# 3,000 random arrays and groups (ties, negatives, NaN, nulls, 1 to 400
# values), nothing on an empty or all-null input, and a role in the users' group
# can call them (the aggregate's parts take `internal`, which no SQL can
# make: pgext/rooflined_stats.c checks anyway).  A server without the
# extension's files stops the daemon at migration 028, naming the package,
# and leaves the database at 027.  rl_gpu_history's and rl_kernel_noise's
# answers are compared with the SQL they replaced in findings.t and
# regressions.t.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start
daemon_stop

is "$(sql "select extname || ' ' || extowner::regrole || ' ' || extversion from pg_extension where extname = 'rooflined_stats'")" \
	"rooflined_stats rooflined 1" "the migrations created the extension as the daemon's role (trusted: no superuser)"
is "$(sql "select string_agg(distinct p.proowner::regrole::text, ',') from pg_proc p join pg_depend d on d.objid = p.oid
	join pg_extension e on e.oid = d.refobjid where e.extname = 'rooflined_stats'")" postgres \
	"its functions belong to the bootstrap superuser, not to the daemon's role"

# Random arrays: 1-400 values drawn from 60 levels (ties), a tenth of them
# negative, some NaN, some null (a few arrays have nothing else).  The
# reference is percentile_cont over the same values, the deviation from its
# median; null where there is no value.
arrays="with seed as materialized (select setseed(0.27)), a as materialized (
	select i, array(select case when random() < 0.02 then null
				    when random() < 0.01 then 'NaN'::float8
				    else (floor(random() * 60) - 6) * 0.37 end
			from generate_series(1, 1 + (i * 7919) % 400) j where i > 0) v
	from seed, generate_series(1, 3000) i),
	ref as (select a.i, case when m.median is not null then array[m.median, d.mad] end mm from a,
		lateral (select percentile_cont(0.5) within group (order by x) median from unnest(a.v) x) m,
		lateral (select percentile_cont(0.5) within group (order by abs(x - m.median)) mad from unnest(a.v) x) d)"
is "$(sql "$arrays select count(*) || ' ' || count(*) filter (where r.mm is distinct from rl_median_mad(a.v))
	from a join ref r using (i)")" "3000 0" \
	"rl_median_mad: the same bits as percentile_cont's median and deviation on 3,000 random arrays"
is "$(sql "$arrays, g as (select a.i, rl_median_mad_agg(x) mm from a, unnest(a.v) x group by a.i)
	select count(*) || ' ' || count(*) filter (where r.mm is distinct from g.mm)
	from g join ref r using (i)")" "3000 0" \
	"rl_median_mad_agg: the same over the arrays' values as groups"
is "$(sql "select coalesce(rl_median_mad('{}'::float8[])::text, 'null') || ' '
	|| coalesce(rl_median_mad('{null,null}'::float8[])::text, 'null') || ' '
	|| coalesce((select rl_median_mad_agg(x) from unnest('{null}'::float8[]) x)::text, 'null') || ' '
	|| rl_median_mad('{{1,2},{3,10}}'::float8[])::text")" "null null null {2.5,1}" \
	"no values: null; a two-dimensional array: all of its elements"
is "$(as alice psql -X -q -t -A -c "select rl_median_mad('{5,1,3}')::text")" "{3,2}" \
	"a user's role may call it"

# ---- a server without the extension: the daemon stops at 028 and says why ----
# The cluster's PostgreSQL finds extensions in its own tree (scripts/cluster,
# make_pg_root): the control file hidden there, a database of its own.
ext=$ROOFLINE_VAR/pg/root/usr/share/postgresql/15/extension/rooflined_stats.control
mv "$ext" "$ext.hidden" || bail_out "cannot hide $ext"
on_exit "mv '$ext.hidden' '$ext'"
pg_admin "create database rl_noext owner rooflined" >/dev/null
on_exit "pg_admin 'drop database if exists rl_noext' >/dev/null"
PGDATABASE=rl_noext timeout 60 "$BIN/rooflined" --foreground --config "$DAEMON_CONF" >"$TEST_TMP/noext.log" 2>&1
rc=$?
ok "without the extension's files the daemon stops (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
like "$(cat "$TEST_TMP/noext.log")" "028_robust_stats.sql.*no extension rooflined_stats" \
	"and names the migration and the missing extension"
like "$(cat "$TEST_TMP/noext.log")" "postgresql-15-rooflined" "and the package to install"
is "$(PGDATABASE=rl_noext sql "select max(version) from schema_migrations")" 27 \
	"the database stays at migration 027: nothing of 028 is left"
done_testing
