-- 014_ceiling_series.sql - each GPU's nightly figures of each ceiling, kept
-- at ingest, so that the fleet analysis reads 18 short arrays per GPU
-- instead of 90 nights of rows (docs/findings.md, docs/findings-bench.md).
--
-- rl_gpu_history (011, 013) recomputed every GPU's history from `ceilings`
-- each night: at 1,000 GPUs x 90 nights that is 1.6 million index entries,
-- a distinct-on per night and two sorts per (GPU, ceiling), 2.3 s of
-- PostgreSQL's CPU.  Here one row per (pipeline, owner, facility flag, GPU,
-- ceiling) holds the series of its nights, in night order, one element per
-- night: the figure of the latest run of that night (the highest run id; of
-- one run, the figure ingested last), as rl_gpu_history chose it.  A
-- statement-level trigger on `ceilings` merges every insert into it, so the
-- series is as complete as the table the moment a step's attempt is
-- ingested, in the same transaction.  Only empirical figures are kept.
--
-- A series keeps the nights within a year (366 days) of its newest night;
-- the fleet plugin's `nights` window is at most 366 (plugins/fleet.c).  It is
-- not shortened by the ceilings' retention (010): the history of a GPU
-- outlives its rows, as the monthly aggregates do.

create type ceiling_night as (
	night   date,
	run_id  bigint,
	value   double precision,
	driver  text
);

create table ceiling_series (
	pipeline_name  text not null,
	owner          name not null,
	facility       boolean not null,
	gpu_uuid       text not null,
	name           text not null,
	series         ceiling_night[] not null,  -- in night order, nights distinct
	primary key (gpu_uuid, pipeline_name, owner, facility, name)
);

-- SERIES merged with ADDED: one element per night, the highest run id's
-- (on a tie, the later element: ADDED's last), nights within 366 days of
-- the newest.  Either may hold several elements of a night, in any order.
create function rl_series_merge(series ceiling_night[], added ceiling_night[])
returns ceiling_night[]
language sql immutable as $$
	with e as (
		select distinct on (x.night) x.night, x.run_id, x.value, x.driver
		from unnest(series || added) with ordinality as x(night, run_id, value, driver, i)
		order by x.night, x.run_id desc, x.i desc
	)
	select coalesce(array_agg(row(e.night, e.run_id, e.value, e.driver)::ceiling_night
	                          order by e.night), '{}')
	from e where e.night >= (select max(e2.night) from e e2) - 366
$$;

-- Every statement's new empirical figures, merged into their series.  The
-- rows of one statement are grouped per series, so a bulk insert merges
-- each series once.
create function ceilings_series_merge() returns trigger
language plpgsql as $$
begin
	insert into ceiling_series as s (pipeline_name, owner, facility,
		gpu_uuid, name, series)
	select r.pipeline_name, r.owner, r.facility, n.gpu_uuid, n.name,
	       rl_series_merge('{}', array_agg(row(r.night, n.run_id, n.value,
	                       n.driver)::ceiling_night order by n.id))
	from new_ceilings n join runs r on r.id = n.run_id
	where n.method = 'empirical' and n.gpu_uuid is not null
	  and n.name is not null and n.value is not null
	group by r.pipeline_name, r.owner, r.facility, n.gpu_uuid, n.name
	on conflict (gpu_uuid, pipeline_name, owner, facility, name) do update
	set series = rl_series_merge(s.series, excluded.series);
	return null;
end
$$;

create trigger ceilings_series_merge after insert on ceilings
	referencing new table as new_ceilings
	for each statement execute function ceilings_series_merge();

-- The series of the figures already stored.
insert into ceiling_series (pipeline_name, owner, facility, gpu_uuid, name,
	series)
select r.pipeline_name, r.owner, r.facility, c.gpu_uuid, c.name,
       rl_series_merge('{}', array_agg(row(r.night, c.run_id, c.value,
                       c.driver)::ceiling_night order by c.id))
from ceilings c join runs r on r.id = c.run_id
where c.method = 'empirical' and c.gpu_uuid is not null
  and c.name is not null and c.value is not null
group by r.pipeline_name, r.owner, r.facility, c.gpu_uuid, c.name;

alter table ceiling_series enable row level security;
grant select on ceiling_series to roofline_users;
create policy ceiling_series_visible on ceiling_series for select
	to roofline_users using (owner = current_user or facility);

-- A GPU's own history (the contract of 011): for each GPU and ceiling of
-- run `run_id`, its figures in the `nights` nights before the run's night,
-- in runs of the same pipeline, owner and facility flag, one per night:
-- how many, their median, their robust standard deviation (1.4826 x the
-- median absolute deviation), the latest figure, its driver and night.
-- Now read from ceiling_series: for each of the run's GPUs' series, its
-- elements in the window unnested twice, once for the median and the
-- latest figure and once for the MAD around that median (two sorts of at
-- most `nights` values, in memory; no join to re-execute).
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
	select s.gpu_uuid, s.name, a.n, a.median, 1.4826 * d.mad,
	       a.last_value[2], a.last_driver[2], a.last_night
	from me, gpus g
	join ceiling_series s on s.gpu_uuid = g.gpu_uuid,
	lateral (
		select count(*) as n,
		       percentile_cont(0.5) within group (order by x.value) as median,
		       max(array[x.night - date '2000-01-01', x.value]) as last_value,
		       max(array[to_char(x.night, 'YYYYMMDD'), x.driver]) as last_driver,
		       max(x.night) as last_night
		from unnest(s.series) x
		where x.night < me.night and x.night >= me.night - nights
	) a,
	lateral (
		select percentile_cont(0.5) within group (order by abs(x.value - a.median)) as mad
		from unnest(s.series) x
		where x.night < me.night and x.night >= me.night - nights
	) d
	where s.pipeline_name = me.pipeline_name and s.owner = me.owner
	  and s.facility = me.facility and a.n > 0
	order by 1, 2
$$;
