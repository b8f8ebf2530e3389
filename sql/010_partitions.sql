-- 010_partitions.sql - history that lasts: the four large history tables
-- partitioned by month, monthly aggregates that outlive the raw rows, and
-- the functions the daemon's retention job (daemon/partitions.c) calls.
--
-- Partition keys (one month per partition, bounds at 00:00 UTC on the 1st):
--   step_records     at            (new: when the attempt was ingested)
--   points           at
--   kernel_profiles  collected_at
--   ceilings         measured_at
-- Each is now() of the ingest transaction, so every row of one step attempt
-- lands in the same month in all four tables.  For the step_records rows
-- that existed before this migration (they had no time), `at` is their
-- step's ended_at (which the ingest transaction set), else the run's
-- submission time.
--
-- A primary key or unique constraint of a partitioned table must contain the
-- partition key: (step, attempt, seq) becomes (step, attempt, seq, <key>).
-- An attempt is still ingested once: daemon/ingest.c claims the step row
-- (FOR UPDATE, state pending or running) and moves it to succeeded in the
-- ingest transaction itself, and all rows of that transaction share one
-- key, so a duplicate within it still violates the key.
--
-- The migration runs in one transaction (daemon/migrate.c): the old tables
-- are renamed, the new partitioned ones made LIKE them (same columns, in
-- the same order, types, collations, defaults, checks), every row copied,
-- the old tables dropped, then keys, indexes, foreign keys, triggers,
-- row-level security, grants and the views re-created as 001-009 left
-- them.  A failure anywhere leaves the database as it was.

-- Something outside 001-009 that depends on these tables (a foreign key
-- into them, a view) makes the drop below fail, and with it the migration:
-- nothing is dropped by cascade.

-- ---- 1. set the old tables aside ------------------------------------------
drop view kernel_trend;
drop view roofline_points;
drop view ceilings_history;
drop view fleet_ceilings;

alter table step_records rename to step_records_old;
alter table points rename to points_old;
alter table kernel_profiles rename to kernel_profiles_old;
alter table ceilings rename to ceilings_old;
-- the id sequences live on, owned by the new tables
alter sequence points_id_seq owned by none;
alter sequence kernel_profiles_id_seq owned by none;
alter sequence ceilings_id_seq owned by none;

create table step_records (like step_records_old including defaults including constraints,
	at timestamptz not null default now()) partition by range (at);
create table points (like points_old including defaults including constraints)
	partition by range (at);
create table kernel_profiles (like kernel_profiles_old including defaults including constraints)
	partition by range (collected_at);
create table ceilings (like ceilings_old including defaults including constraints)
	partition by range (measured_at);
alter sequence points_id_seq owned by points.id;
alter sequence kernel_profiles_id_seq owned by kernel_profiles.id;
alter sequence ceilings_id_seq owned by ceilings.id;

-- ---- 2. what the retention job needs --------------------------------------

-- The partitioned history tables and their partition keys.  A later
-- migration that partitions another table adds its row here, and a rollup
-- function (below) for it.
create table history_tables (
	name         text primary key,
	time_column  text not null,
	rollup       regproc not null  -- (partition regclass, month date): aggregates
);

-- One row per partition that was rolled up (its monthly aggregates stored,
-- then sealed against new rows) and, later, dropped or detached.  `rows`:
-- how many rows it held when rolled up.
create table history_partitions (
	tbl           text not null references history_tables (name),
	partition     text primary key,
	month         date not null,
	rows          bigint not null,
	rolled_up_at  timestamptz not null default now(),
	removed_at    timestamptz,
	removal       text check (removal in ('dropped', 'detached')),
	unique (tbl, month)
);

-- The month a time falls in, and that month's bounds (UTC).
create function rl_month(t timestamptz) returns date
language sql immutable as $$ select date_trunc('month', t at time zone 'UTC')::date $$;
create function rl_month_start(m date) returns timestamptz
language sql immutable as $$ select m::timestamp at time zone 'UTC' $$;

-- The attached partitions of the history tables, with their bounds.
create view history_partitions_attached as
select t.name as tbl, c.relname::text as partition, c.oid::regclass as rel,
       b[1]::timestamptz as lower_bound, b[2]::timestamptz as upper_bound
from history_tables t
join pg_inherits i on i.inhparent = to_regclass(t.name)
join pg_class c on c.oid = i.inhrelid
cross join lateral regexp_match(pg_get_expr(c.relpartbound, c.oid),
	$re$FROM \('([^']+)'\) TO \('([^']+)'\)$re$) b;

-- Create tbl's partition for month m (tbl_YYYY_MM) unless it exists.
-- Returns its name when created, null when it was there; an error when a
-- table of that name exists but is not a partition of tbl (a detached one).
create function rl_partition_create(tbl text, m date) returns text
language plpgsql as $$
declare
	part text := tbl || '_' || to_char(m, 'YYYY_MM');
	rel regclass := to_regclass(quote_ident(part));
begin
	if rel is not null then
		if not exists (select 1 from pg_inherits
		               where inhrelid = rel and inhparent = to_regclass(tbl)) then
			raise exception 'table % exists but is not a partition of %', part, tbl;
		end if;
		return null;
	end if;
	execute format('create table %I partition of %I for values from (%L) to (%L)',
		part, tbl, rl_month_start(m), rl_month_start((m + interval '1 month')::date));
	return part;
end
$$;

-- The partitions of this month and the `months` after it, for every
-- history table.  Returns the names of those it created.
create function rl_partitions_ahead(months integer) returns setof text
language plpgsql as $$
declare
	t record;
	m date;
	made text;
begin
	perform set_config('lock_timeout', '5s', true);
	for t in select name from history_tables order by name loop
		for i in 0 .. months loop
			m := (rl_month(now()) + i * interval '1 month')::date;
			made := rl_partition_create(t.name, m);
			if made is not null then
				return next made;
			end if;
		end loop;
	end loop;
end
$$;

-- Roll up one partition: with writers locked out, store its monthly
-- aggregates (the table's rollup function), count its rows, seal it (a
-- NOT VALID check that no new row passes; the planner ignores unvalidated
-- checks, so queries still read it) and record it in history_partitions.
-- Its rows are then counted once: a partition is rolled up at most once
-- (history_partitions' key) and takes no row afterwards.
create function rl_history_rollup(tbl text, rel regclass, m date) returns bigint
language plpgsql as $$
declare
	n bigint;
	fn regproc := (select rollup from history_tables where name = tbl);
begin
	execute format('lock table %s in share mode', rel);
	execute format('select count(*) from %s', rel) into n;
	execute format('select %s($1, $2)', fn) using rel, m;
	execute format('alter table %s add constraint %I check (false) not valid',
		rel, (select relname from pg_class where oid = rel) || '_sealed');
	insert into history_partitions (tbl, partition, month, rows)
	values (tbl, (select relname from pg_class where oid = rel), m, n);
	return n;
end
$$;

-- Roll up tbl's partitions whose month ended more than a day ago (the
-- retention job, for tables with a retention).  Returns what it rolled up.
create function rl_history_rollup_due(tbl text)
returns table (partition text, month date, rows bigint)
language plpgsql as $$
declare
	p record;
begin
	perform set_config('lock_timeout', '5s', true);
	for p in select a.partition, a.rel, a.lower_bound from history_partitions_attached a
	         where a.tbl = rl_history_rollup_due.tbl
	           and a.upper_bound <= now() - interval '1 day'
	           and not exists (select 1 from history_partitions h
	                           where h.partition = a.partition)
	         order by a.lower_bound loop
		partition := p.partition;
		month := rl_month(p.lower_bound);
		rows := rl_history_rollup(tbl, p.rel, month);
		return next;
	end loop;
end
$$;

-- Drop (or, with detach, detach and keep as a plain table of the same name)
-- tbl's partitions whose whole month is older than keep_months months,
-- rolling up first any that was not.  One transaction: the aggregates and
-- the removal go together.  Returns one row per partition removed.
create function rl_history_retire(tbl text, keep_months integer, detach boolean)
returns table (partition text, month date, rows bigint, action text)
language plpgsql as $$
declare
	p record;
begin
	perform set_config('lock_timeout', '5s', true);
	for p in select a.partition, a.rel, a.lower_bound from history_partitions_attached a
	         where a.tbl = rl_history_retire.tbl
	           and a.upper_bound <= now() - keep_months * interval '1 month'
	         order by a.lower_bound loop
		partition := p.partition;
		month := rl_month(p.lower_bound);
		rows := (select h.rows from history_partitions h where h.partition = p.partition);
		if rows is null then
			rows := rl_history_rollup(tbl, p.rel, month);
		end if;
		if detach then
			execute format('alter table %I detach partition %s', tbl, p.rel);
			action := 'detached';
		else
			execute format('drop table %s', p.rel);
			action := 'dropped';
		end if;
		update history_partitions h set removed_at = now(), removal = action
		where h.partition = p.partition;
		return next;
	end loop;
end
$$;

-- ---- 3. the monthly aggregates ---------------------------------------------
-- One row per month and owner (runs.owner, facility) and subject.  Users see
-- their own rows and the facility's, as with the tables they come from.

-- A GPU's ceilings per month: median, min, max over the nights.
create table ceilings_monthly (
	month      date not null,
	owner      name not null,
	facility   boolean not null,
	node       text not null,
	gpu_uuid   text not null,          -- '' where the ceiling had none
	gpu_name   text,
	name       text not null,
	method     text not null,
	kind       text not null,
	unit       text not null,
	runs       integer not null,
	samples    bigint not null,
	median     double precision,
	min        double precision,
	max        double precision,
	synthetic  boolean not null,       -- any of them synthetic (008)
	primary key (month, owner, facility, node, gpu_uuid, name, method)
);

create function rl_rollup_ceilings(part regclass, m date) returns void
language plpgsql as $$
begin
	execute format($q$
	insert into ceilings_monthly
	select $1, r.owner, r.facility, c.node, coalesce(c.gpu_uuid, ''),
	       max(c.gpu_name), c.name, c.method, max(c.kind), max(c.unit),
	       count(distinct c.run_id), count(*),
	       percentile_cont(0.5) within group (order by c.value),
	       min(c.value), max(c.value), bool_or(c.synthetic is not null)
	from %s c join runs r on r.id = c.run_id
	group by r.owner, r.facility, c.node, coalesce(c.gpu_uuid, ''), c.name, c.method
	$q$, part) using m;
end
$$;

-- A kernel's aggregate points (those of roofline_points: invocation 'all',
-- primary precision) per GPU, precision and level per month.
create table points_monthly (
	month               date not null,
	owner               name not null,
	facility            boolean not null,
	kernel              text collate "C" not null,
	node                text not null,
	gpu_uuid            text not null,  -- '' where the point had none
	gpu_name            text,
	precision           text not null,
	level               text not null,
	runs                integer not null,
	samples             bigint not null,
	gflops_median       double precision,
	gflops_min          double precision,
	gflops_max          double precision,
	ai_median           double precision,
	pct_of_roof_median  double precision,
	primary key (month, owner, facility, kernel, node, gpu_uuid, precision, level)
);

create function rl_rollup_points(part regclass, m date) returns void
language plpgsql as $$
begin
	execute format($q$
	insert into points_monthly
	select $1, r.owner, r.facility, p.kernel, p.node, coalesce(p.gpu_uuid, ''),
	       max(p.gpu_name), p.precision, p.level, count(distinct p.run_id), count(*),
	       percentile_cont(0.5) within group (order by p.gflops),
	       min(p.gflops), max(p.gflops),
	       percentile_cont(0.5) within group (order by p.ai),
	       percentile_cont(0.5) within group (order by p.pct_of_roof)
	from %s p join runs r on r.id = p.run_id
	where p.invocation = 'all' and p.is_primary
	group by r.owner, r.facility, p.kernel, p.node, coalesce(p.gpu_uuid, ''),
	         p.precision, p.level
	$q$, part) using m;
end
$$;

-- How many launches of each kernel were profiled per node per month.
create table kernel_profiles_monthly (
	month     date not null,
	owner     name not null,
	facility  boolean not null,
	kernel    text not null,
	node      text not null,
	gpu_name  text not null,            -- '' where the profile had none
	runs      integer not null,
	launches  bigint not null,
	primary key (month, owner, facility, kernel, node, gpu_name)
);

create function rl_rollup_kernel_profiles(part regclass, m date) returns void
language plpgsql as $$
begin
	execute format($q$
	insert into kernel_profiles_monthly
	select $1, r.owner, r.facility, k.kernel, k.node, coalesce(k.gpu_name, ''),
	       count(distinct k.run_id), count(*)
	from %s k join runs r on r.id = k.run_id
	group by r.owner, r.facility, k.kernel, k.node, coalesce(k.gpu_name, '')
	$q$, part) using m;
end
$$;

-- How many records of each kind the steps emitted per month.
create table step_records_monthly (
	month     date not null,
	owner     name not null,
	facility  boolean not null,
	kind      text not null,
	runs      integer not null,
	records   bigint not null,
	primary key (month, owner, facility, kind)
);

create function rl_rollup_step_records(part regclass, m date) returns void
language plpgsql as $$
begin
	execute format($q$
	insert into step_records_monthly
	select $1, r.owner, r.facility, s.kind, count(distinct s.run_id), count(*)
	from %s s join runs r on r.id = s.run_id
	group by r.owner, r.facility, s.kind
	$q$, part) using m;
end
$$;

insert into history_tables (name, time_column, rollup) values
	('step_records', 'at', 'rl_rollup_step_records'),
	('points', 'at', 'rl_rollup_points'),
	('kernel_profiles', 'collected_at', 'rl_rollup_kernel_profiles'),
	('ceilings', 'measured_at', 'rl_rollup_ceilings');

-- Partition management is the daemon's (the owner's) alone.
revoke execute on function rl_partition_create(text, date), rl_partitions_ahead(integer),
	rl_history_rollup(text, regclass, date), rl_history_rollup_due(text),
	rl_history_retire(text, integer, boolean), rl_rollup_ceilings(regclass, date),
	rl_rollup_points(regclass, date), rl_rollup_kernel_profiles(regclass, date),
	rl_rollup_step_records(regclass, date) from public;

-- ---- 4. partitions for the rows there are, and three months ahead --------
-- (the daemon keeps `partitions_ahead` months from then on)
do $$
declare
	lo timestamptz;
	hi timestamptz;
begin
	select min(v), max(v) into lo, hi from (
		select min(at) as v from points_old union all select max(at) from points_old
		union all select min(collected_at) from kernel_profiles_old
		union all select max(collected_at) from kernel_profiles_old
		union all select min(measured_at) from ceilings_old
		union all select max(measured_at) from ceilings_old
		union all select min(s.ended_at) from steps s
		union all select max(s.ended_at) from steps s
		union all select min(submitted_at) from runs
		union all select now()) x;
	perform rl_partition_create(t.name, m::date)
	from history_tables t,
	     generate_series(rl_month(lo)::timestamp,
	                     (rl_month(greatest(hi, now())) + interval '3 months')::timestamp,
	                     interval '1 month') m;
end
$$;

-- ---- 5. every row, into the new tables (no triggers on them yet) --------
insert into step_records
select o.*, coalesce(s.ended_at, r.submitted_at)
from step_records_old o join steps s on s.id = o.step join runs r on r.id = s.run_id;
insert into points select * from points_old;
insert into kernel_profiles select * from kernel_profiles_old;
insert into ceilings select * from ceilings_old;

-- Not a row lost: the counts must match (the join above cannot drop one
-- while the foreign keys hold, but the migration proves it).
do $$
begin
	if (select count(*) from step_records) <> (select count(*) from step_records_old)
	   or (select count(*) from points) <> (select count(*) from points_old)
	   or (select count(*) from kernel_profiles) <> (select count(*) from kernel_profiles_old)
	   or (select count(*) from ceilings) <> (select count(*) from ceilings_old) then
		raise exception '011: row counts differ after the copy';
	end if;
end
$$;

drop table step_records_old, points_old, kernel_profiles_old, ceilings_old;

-- ---- 6. keys, indexes, foreign keys, triggers (as 001-009 had them) ------
alter table step_records add primary key (step, attempt, seq, at),
	add foreign key (step) references steps (id) on delete cascade;
create index step_records_run_kind_idx on step_records (run_id, kind);

alter table ceilings add primary key (id, measured_at),
	add unique (step, attempt, seq, measured_at),
	add foreign key (step) references steps (id) on delete cascade;
create index ceilings_history_idx on ceilings (node, gpu_uuid, name, measured_at);
create index ceilings_name_idx on ceilings (name, measured_at);

alter table kernel_profiles add primary key (id, collected_at),
	add unique (step, attempt, seq, collected_at),
	add foreign key (step) references steps (id) on delete cascade;
create index kernel_profiles_kernel_idx on kernel_profiles (kernel, collected_at);
create index kernel_profiles_run_idx on kernel_profiles (run_id);

alter table points add primary key (id, at),
	add unique (step, attempt, seq, at),
	add foreign key (step) references steps (id) on delete cascade;
create index points_kernel_idx on points (kernel, at) where invocation = 'all';
create index points_run_idx on points (run_id);
create index points_node_idx on points (node, gpu_uuid, at) where invocation = 'all';

create trigger step_records_route after insert on step_records
	for each row execute function step_records_route();
create trigger step_records_points after insert on step_records
	for each row when (new.kind = 'point')
	execute function step_records_points();
create trigger ceilings_synthetic before insert on ceilings
	for each row execute function ceilings_synthetic();

-- ---- 7. row-level security and grants (002, 003, 005) --------------------
alter table step_records enable row level security;
alter table points enable row level security;
alter table kernel_profiles enable row level security;
alter table ceilings enable row level security;
grant select on step_records, points, kernel_profiles, ceilings to roofline_users;
create policy step_records_visible on step_records for select to roofline_users
	using (exists (select 1 from runs r where r.id = run_id));
create policy points_visible on points for select to roofline_users
	using (exists (select 1 from runs r where r.id = run_id));
create policy kernel_profiles_visible on kernel_profiles for select
	to roofline_users using (exists (select 1 from runs r where r.id = run_id));
create policy ceilings_visible on ceilings for select to roofline_users
	using (exists (select 1 from runs r where r.id = run_id));

alter table ceilings_monthly enable row level security;
alter table points_monthly enable row level security;
alter table kernel_profiles_monthly enable row level security;
alter table step_records_monthly enable row level security;
grant select on ceilings_monthly, points_monthly, kernel_profiles_monthly,
	step_records_monthly to roofline_users;
create policy ceilings_monthly_visible on ceilings_monthly for select
	to roofline_users using (owner = current_user or facility);
create policy points_monthly_visible on points_monthly for select
	to roofline_users using (owner = current_user or facility);
create policy kernel_profiles_monthly_visible on kernel_profiles_monthly
	for select to roofline_users using (owner = current_user or facility);
create policy step_records_monthly_visible on step_records_monthly
	for select to roofline_users using (owner = current_user or facility);

-- ---- 8. the views, as 005, 008 and 009 left them -------------------------
create view roofline_points with (security_invoker = true) as
select p.run_id, r.pipeline_name, r.owner, p.node, p.gpu_name, p.gpu_uuid,
       coalesce(r.ended_at, max(p.at)) as run_at, p.kernel, p.precision,
       max(p.ai) filter (where p.level = 'l1') as ai_l1,
       max(p.ai) filter (where p.level = 'l2') as ai_l2,
       max(p.ai) filter (where p.level = 'dram') as ai_dram,
       max(p.gflops) as gflops, max(p.time_s) as time_s,
       max(p.invocations) as invocations,
       max(p.bound_level) as bound, max(p.bound_ceiling) as bound_ceiling,
       max(p.verdict) as verdict, max(p.pct_of_bound) as pct_of_roof,
       max(p.alpha) as alpha,
       max(p.tensor_uncounted) as tensor_uncounted,
       s.step_id as step
from points p join runs r on r.id = p.run_id join steps s on s.id = p.step
where p.invocation = 'all' and p.is_primary
group by p.run_id, r.pipeline_name, r.owner, r.ended_at, p.node, p.gpu_name,
         p.gpu_uuid, p.kernel, p.precision, p.step, s.step_id;

create view ceilings_history with (security_invoker = true) as
select c.measured_at, c.node, c.gpu_uuid, c.gpu_name, c.gpu_index, c.name,
       c.kind, c.method, c.value, c.unit, c.spread_pct, c.sm_clock_mhz,
       c.mem_clock_mhz, c.driver, c.cuda, c.run_id, r.pipeline_name
from ceilings c join runs r on r.id = c.run_id;

create view kernel_trend with (security_invoker = true) as
select kernel, run_at, node, gpu_name, gflops, ai_l1, ai_l2, ai_dram,
       pct_of_roof, verdict, run_id, pipeline_name
from roofline_points;

create view fleet_ceilings with (security_invoker = true) as
select c.run_id, r.pipeline_name, min(c.measured_at) as measured_at, c.node,
       c.gpu_index, c.gpu_uuid, max(c.gpu_name) as gpu_name,
       max(c.driver) as driver, max(c.cuda) as cuda,
       max(c.value) filter (where c.method = 'empirical' and c.name = 'fp64_fma') as fp64_fma,
       max(c.value) filter (where c.method = 'theoretical' and c.name = 'fp64_fma') as fp64_fma_spec,
       max(c.sm_clock_mhz) filter (where c.method = 'empirical' and c.name = 'fp64_fma') as fp64_sm_clock_mhz,
       max(c.value) filter (where c.method = 'empirical' and c.name = 'fp32_fma') as fp32_fma,
       max(c.value) filter (where c.method = 'empirical' and c.name = 'tc_fp16') as tc_fp16,
       max(c.value) filter (where c.method = 'empirical' and c.name = 'hbm_triad') as hbm_triad,
       max(c.value) filter (where c.method = 'theoretical' and c.name = 'hbm_triad') as hbm_spec,
       max(c.value) filter (where c.method = 'empirical' and c.name = 'l2') as l2,
       max(c.value) filter (where c.method = 'empirical' and c.name = 'l1') as l1,
       count(*) filter (where c.method = 'empirical') as empirical_rows,
       bool_or(c.synthetic is not null) as synthetic,
       string_agg(distinct substring(c.synthetic from '; perturbed: (.*)$'), '; ') as perturbed
from ceilings c join runs r on r.id = c.run_id
group by c.run_id, r.pipeline_name, c.node, c.gpu_index, c.gpu_uuid;

grant select on roofline_points, ceilings_history, kernel_trend, fleet_ceilings
	to roofline_users;

-- The planner's statistics of the new parents (autovacuum analyzes the
-- partitions, never a partitioned parent).
analyze step_records, points, kernel_profiles, ceilings;
