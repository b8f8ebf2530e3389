-- 014_ceiling_series.sql - each GPU's nightly figures of each ceiling, kept
-- at ingest, so that the fleet analysis reads 18 short arrays per GPU
-- instead of 90 nights of rows (docs/findings.md, docs/findings-bench.md).
--
-- rl_gpu_history (011, 013) recomputed every GPU's history from `ceilings`
-- each night: at 1,000 GPUs x 90 nights that is 1.6 million index entries,
-- a distinct-on per night and two sorts per (GPU, ceiling), 2.3 s of
-- PostgreSQL's CPU.  Here one row per (pipeline, owner, facility flag, GPU,
-- ceiling) holds the series of its nights as four parallel arrays in night
-- order, one element per night: the figure of the latest run of that night
-- (the highest run id; of one run, the figure ingested last), as
-- rl_gpu_history chose it.  A statement-level trigger on `ceilings` merges
-- every insert into it, so the series is as complete as the table the
-- moment a step's attempt is ingested, in the same transaction.  Only
-- empirical figures are kept.
--
-- A series keeps the nights within a year (366 days) of its newest night;
-- the fleet plugin's `nights` window is at most 366 (plugins/fleet.c).  It is
-- not shortened by the ceilings' retention (010): the history of a GPU
-- outlives its rows, as the monthly aggregates do.

create table ceiling_series (
	pipeline_name  text not null,
	owner          name not null,
	facility       boolean not null,
	gpu_uuid       text not null,
	name           text not null,
	nights         date[] not null,    -- ascending, distinct
	run_ids        bigint[] not null,  -- the run each figure is from
	vals           double precision[] not null,
	drivers        text[] not null,
	primary key (gpu_uuid, pipeline_name, owner, facility, name)
);

-- A series (the first four arrays) merged with added elements (the last
-- four, in the order they were ingested): one element per night, the
-- highest run id's (on a tie, the one ingested last), the nights within
-- 366 days of the newest.  Parallel arrays in, parallel arrays out.
create function rl_series_merge(
	s_nights date[], s_run_ids bigint[], s_vals double precision[], s_drivers text[],
	a_nights date[], a_run_ids bigint[], a_vals double precision[], a_drivers text[])
returns table (nights date[], run_ids bigint[], vals double precision[], drivers text[])
language sql immutable as $$
	with e as (
		select distinct on (x.night) x.night, x.run_id, x.val, x.driver
		from unnest(s_nights || a_nights, s_run_ids || a_run_ids,
		            s_vals || a_vals, s_drivers || a_drivers)
		     with ordinality as x(night, run_id, val, driver, i)
		order by x.night, x.run_id desc, x.i desc
	), k as (
		select * from e where e.night >= (select max(e2.night) from e e2) - 366
	)
	select coalesce(array_agg(k.night order by k.night), '{}'),
	       coalesce(array_agg(k.run_id order by k.night), '{}'),
	       coalesce(array_agg(k.val order by k.night), '{}'),
	       coalesce(array_agg(k.driver order by k.night), '{}')
	from k
$$;

-- Every statement's new empirical figures, merged into their series.  The
-- rows of one statement are grouped per series, so a bulk insert merges
-- each series once.
create function ceilings_series_merge() returns trigger
language plpgsql as $$
begin
	insert into ceiling_series as s (pipeline_name, owner, facility,
		gpu_uuid, name, nights, run_ids, vals, drivers)
	select a.pipeline_name, a.owner, a.facility, a.gpu_uuid, a.name, m.*
	from (
		select r.pipeline_name, r.owner, r.facility, n.gpu_uuid, n.name,
		       array_agg(r.night order by n.id) as nights,
		       array_agg(n.run_id order by n.id) as run_ids,
		       array_agg(n.value order by n.id) as vals,
		       array_agg(n.driver order by n.id) as drivers
		from new_ceilings n join runs r on r.id = n.run_id
		where n.method = 'empirical' and n.gpu_uuid is not null
		  and n.name is not null and n.value is not null
		group by r.pipeline_name, r.owner, r.facility, n.gpu_uuid, n.name
	) a, rl_series_merge('{}', '{}', '{}', '{}',
			     a.nights, a.run_ids, a.vals, a.drivers) m
	on conflict (gpu_uuid, pipeline_name, owner, facility, name) do update
	set (nights, run_ids, vals, drivers) = (
		select * from rl_series_merge(s.nights, s.run_ids, s.vals, s.drivers,
			excluded.nights, excluded.run_ids, excluded.vals, excluded.drivers));
	return null;
end
$$;

create trigger ceilings_series_merge after insert on ceilings
	referencing new table as new_ceilings
	for each statement execute function ceilings_series_merge();

-- The series of the figures already stored.
insert into ceiling_series (pipeline_name, owner, facility, gpu_uuid, name,
	nights, run_ids, vals, drivers)
select a.pipeline_name, a.owner, a.facility, a.gpu_uuid, a.name, m.*
from (
	select r.pipeline_name, r.owner, r.facility, c.gpu_uuid, c.name,
	       array_agg(r.night order by c.id) as nights,
	       array_agg(c.run_id order by c.id) as run_ids,
	       array_agg(c.value order by c.id) as vals,
	       array_agg(c.driver order by c.id) as drivers
	from ceilings c join runs r on r.id = c.run_id
	where c.method = 'empirical' and c.gpu_uuid is not null
	  and c.name is not null and c.value is not null
	group by r.pipeline_name, r.owner, r.facility, c.gpu_uuid, c.name
) a, rl_series_merge('{}', '{}', '{}', '{}', a.nights, a.run_ids, a.vals,
		     a.drivers) m;
analyze ceiling_series;

alter table ceiling_series enable row level security;
grant select on ceiling_series to roofline_users;
create policy ceiling_series_visible on ceiling_series for select
	to roofline_users using (owner = current_user or facility);

-- A GPU's own history (the contract of 011): for each GPU and ceiling of
-- run `run_id`, its figures in the `nights` nights before the run's night,
-- in runs of the same pipeline, owner and facility flag, one per night:
-- how many, their median, their robust standard deviation (1.4826 x the
-- median absolute deviation), the latest figure, its driver and night.
-- Now read from ceiling_series: the window is a slice of each series,
-- found by two binary searches in its nights (width_bucket: how many
-- nights are <= a date), and the median and the MAD are two sorts of at
-- most `nights` values, in memory.
create or replace function rl_gpu_history(run_id bigint, nights integer)
returns table (gpu_uuid text, name text, n bigint, median double precision,
	       sd double precision, last_value double precision,
	       last_driver text, last_night date)
language sql stable as $$
	with me as materialized (
		select r.pipeline_name, r.night, r.owner, r.facility
		from runs r where r.id = rl_gpu_history.run_id
	), gpus as materialized (
		select distinct c.gpu_uuid from ceilings c
		where c.run_id = rl_gpu_history.run_id and c.method = 'empirical'
	)
	select s.gpu_uuid, s.name, (w.hi - w.lo)::bigint, m.median,
	       1.4826 * d.mad, s.vals[w.hi], s.drivers[w.hi], s.nights[w.hi]
	from me, ceiling_series s,
	lateral (
		select width_bucket(me.night - 1, s.nights) as hi,
		       width_bucket(me.night - rl_gpu_history.nights - 1, s.nights) as lo
	) w,
	lateral (
		select percentile_cont(0.5) within group (order by v) as median
		from unnest(s.vals[w.lo + 1:w.hi]) v
	) m,
	lateral (
		select percentile_cont(0.5) within group (order by abs(v - m.median)) as mad
		from unnest(s.vals[w.lo + 1:w.hi]) v
	) d
	where s.pipeline_name = me.pipeline_name and s.owner = me.owner
	  and s.facility = me.facility
	  and s.gpu_uuid in (select g.gpu_uuid from gpus g) and w.hi > w.lo
	order by 1, 2
$$;
