-- 029_ingest_statement_costs.sql - what each ingested attempt cost
-- PostgreSQL beyond storing its records (issue 27: a night of 144,000
-- ceilings in seconds; docs/benchmarks.md has the figures).
--
-- Measured on a database of 1,000 GPUs x 91 nights, the 18,000 ceilings
-- (84,000 records with the sweeps) of one night in one statement, with
-- auto_explain (bench figures are in the docs):
--
-- 1. The series merge rewrote each series' row, and the row (four arrays
--    of up to a year of nights, 1.7 kB at 91) is over PostgreSQL's 2 kB
--    threshold before compression: every update compressed the run ids and
--    the drivers again with pglz.  An UPDATE appending one night to 18,000
--    series took 4.0 s with pglz, 0.8-1.1 s with lz4.  The four arrays are
--    compressed with lz4 from now on (rows already stored keep pglz until
--    their next night rewrites them).  A server built without lz4 keeps
--    pglz, and says so.
-- 2. rl_series_merge (026) was plpgsql, called twice per series (the row
--    to insert, then the update on conflict).  It is now SQL with a
--    standard body, which the planner inlines: the append of a night after
--    the series' last is an expression, and the sorting merge of 014
--    (rl_series_merge_sorted) runs only for the other cases.  Same
--    contract, same answers (findings.t compares it with the sorting merge
--    on 15 cases).
-- 3. rl_num (003) was an SQL function, but 020's pinned search_path kept
--    the planner from inlining it: ten function calls per ceiling, and as
--    many per point.  A standard body needs no search_path (its names are
--    bound when it is created) and is inlined.  1.0 s of the 2.1 s the
--    routing of those 18,000 ceilings took.
-- 4. The merge trigger joined the statement's ceilings with `runs` as the
--    planner guessed (one row from a transition table): a scan of `runs`
--    per ceiling.  It now reads the statement's runs once.

do $$
begin
	alter table ceiling_series
		alter column nights set compression lz4,
		alter column run_ids set compression lz4,
		alter column vals set compression lz4,
		alter column drivers set compression lz4;
exception when feature_not_supported then
	raise notice 'this PostgreSQL has no lz4: ceiling_series keeps pglz, '
		'and a night''s ingest is slower (docs/benchmarks.md)';
end
$$;

create or replace function rl_num(fields jsonb, key text) returns double precision
language sql immutable
return nullif(fields ->> key, '')::double precision;

-- The contract of 014 and 026: a series (the first four arrays) merged with
-- added elements (the last four, in ingest order), one element per night,
-- the highest run id's (on a tie, the one ingested last), the nights within
-- 366 days of the newest.  One night after the series' last is appended,
-- less the nights more than 366 days before it (a binary search:
-- width_bucket counts the nights <= a date); anything else is the sorting
-- merge's.  Exactly one of the two branches runs (a null in a
-- comparison, which the ingest never makes, takes the sorting merge).
create or replace function rl_series_merge(
	s_nights date[], s_run_ids bigint[], s_vals double precision[], s_drivers text[],
	a_nights date[], a_run_ids bigint[], a_vals double precision[], a_drivers text[])
returns table (nights date[], run_ids bigint[], vals double precision[], drivers text[])
language sql immutable
begin atomic
	select s_nights[width_bucket(a_nights[1] - 367, s_nights) + 1:] || a_nights,
	       s_run_ids[width_bucket(a_nights[1] - 367, s_nights) + 1:] || a_run_ids,
	       s_vals[width_bucket(a_nights[1] - 367, s_nights) + 1:] || a_vals,
	       s_drivers[width_bucket(a_nights[1] - 367, s_nights) + 1:] || a_drivers
	where (cardinality(a_nights) = 1
	       and (cardinality(s_nights) = 0
		    or a_nights[1] > s_nights[cardinality(s_nights)])) is true
	union all
	select * from rl_series_merge_sorted(s_nights, s_run_ids, s_vals, s_drivers,
		a_nights, a_run_ids, a_vals, a_drivers)
	where (cardinality(a_nights) = 1
	       and (cardinality(s_nights) = 0
		    or a_nights[1] > s_nights[cardinality(s_nights)])) is not true;
end;

-- 019's trigger, the statement's runs read once.
create or replace function ceilings_series_merge() returns trigger
language plpgsql
set search_path = pg_catalog, public, pg_temp
as $$
begin
	with r as materialized (
		select r.id, r.pipeline_name, r.owner, r.facility, r.night
		from runs r
		where r.id in (select distinct n.run_id from new_ceilings n)
	)
	insert into ceiling_series as s (pipeline_name, owner, facility,
		gpu_uuid, name, nights, run_ids, vals, drivers)
	select a.pipeline_name, a.owner, a.facility, a.gpu_uuid, a.name, m.*
	from (
		select r.pipeline_name, r.owner, r.facility, n.gpu_uuid, n.name,
		       array_agg(r.night order by n.id) as nights,
		       array_agg(n.run_id order by n.id) as run_ids,
		       array_agg(n.value order by n.id) as vals,
		       array_agg(n.driver order by n.id) as drivers
		from new_ceilings n join r on r.id = n.run_id
		where n.method = 'empirical' and n.gpu_uuid is not null
		  and n.name is not null and n.value is not null
		  and n.peer_index is null
		  and coalesce(n.mode, 'sequential') = 'sequential'
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
