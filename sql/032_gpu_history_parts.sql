-- 032_gpu_history_parts.sql - a run's GPU histories in parts, read at once
-- through several sessions (issue 27: the fleet step over 8,000 GPUs in
-- under 3 s).
--
-- rl_gpu_history (028) is one query: at 8,000 GPUs x 18 ceilings x 90
-- nights about 2 s of one server process, the larger part of the fleet
-- step (docs/benchmarks.md).  The daemon reads a step's history queries
-- through its session pool (db_sessions, daemon/step_inputs.c), one
-- session a query; this form gives it one query per part of the run's
-- GPUs.  Part `part` of `parts` (1-based) holds the GPUs of the run's
-- ntile(parts) in gpu_uuid order, so that the parts read one after
-- another are the whole answer in the whole answer's order (gpu_uuid,
-- name): the same rows, the same bytes in the step's history file
-- (tests/integration/findings.t compares them).  rl_gpu_history(run,
-- nights) becomes the one part of one, so that the query is written once
-- (028's body, the run's GPUs now taken through the ntile).

create function rl_gpu_history(run_id bigint, nights integer, part integer,
			       parts integer)
returns table (gpu_uuid text, name text, n bigint, median double precision,
	       sd double precision, last_value double precision,
	       last_driver text, last_night date)
language sql stable
set search_path = pg_catalog, public, pg_temp
as $$
	with me as materialized (
		select r.pipeline_name, r.night, r.owner, r.facility
		from runs r where r.id = rl_gpu_history.run_id
	), gpus as materialized (
		select t.gpu_uuid
		from (select u.gpu_uuid, ntile(rl_gpu_history.parts)
				over (order by u.gpu_uuid) as k
		      from (select distinct c.gpu_uuid from ceilings c
			    where c.run_id = rl_gpu_history.run_id
			      and c.method = 'empirical') u) t
		where t.k = rl_gpu_history.part
	), h as materialized (
		select s.gpu_uuid, s.name, (w.hi - w.lo)::bigint as n,
		       rl_median_mad(s.vals[w.lo + 1:w.hi]) as mm,
		       s.vals[w.hi] as last_value, s.drivers[w.hi] as last_driver,
		       s.nights[w.hi] as last_night
		from me, ceiling_series s,
		lateral (
			select width_bucket(me.night - 1, s.nights) as hi,
			       width_bucket(me.night - rl_gpu_history.nights - 1,
					    s.nights) as lo
		) w
		where s.pipeline_name = me.pipeline_name and s.owner = me.owner
		  and s.facility = me.facility
		  and s.gpu_uuid in (select g.gpu_uuid from gpus g) and w.hi > w.lo
	)
	select h.gpu_uuid, h.name, h.n, h.mm[1], 1.4826 * h.mm[2], h.last_value,
	       h.last_driver, h.last_night
	from h
	order by 1, 2
$$;

-- as 011 granted the whole (020 kept it)
grant execute on function rl_gpu_history(bigint, integer, integer, integer)
	to roofline_users;

create or replace function rl_gpu_history(run_id bigint, nights integer)
returns table (gpu_uuid text, name text, n bigint, median double precision,
	       sd double precision, last_value double precision,
	       last_driver text, last_night date)
language sql stable
set search_path = pg_catalog, public, pg_temp
as $$
	select * from rl_gpu_history(rl_gpu_history.run_id,
				     rl_gpu_history.nights, 1, 1)
$$;
