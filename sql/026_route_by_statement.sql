-- 026_route_by_statement.sql - a step's records are routed into `ceilings`
-- and `kernel_profiles` once per statement, not once per row (issue 27: a
-- night of 144,000 ceilings ingested in seconds).
--
-- Until now step_records_route (003) fired for each record the daemon's
-- COPY stored (daemon/ingest.c) and inserted that one row into `ceilings`.
-- Each of those inserts was a statement of its own, so the series trigger
-- of `ceilings` (014, 019: a statement-level merge into ceiling_series) ran
-- once per ceiling, and the two BEFORE triggers of `ceilings`
-- (ceilings_synthetic, 008; ceilings_p2p, 019) each looked the record up
-- again in `step_records`, whose primary key leads with the step but whose
-- partitions (by `at`) all had to be searched.  1.1 ms a ceiling on the
-- development machine (docs/benchmarks.md).
--
-- Now one statement-level trigger reads the COPY's rows from its
-- transition table and inserts all of its ceilings in one statement, in
-- the order they were copied (step, attempt, seq), with every column the
-- three triggers filled, `synthetic`, `peer_index`, `peer_uuid`, `link` and
-- `mode` included.  The series merge then runs once per attempt.  The two
-- BEFORE triggers are dropped: a row inserted into `ceilings` by anything
-- else than a step's records never had a record to read them from.
--
-- Every function here pins its search_path, as 020 made all of them do.
--
-- What a record becomes is unchanged (003, 008, 019): the same columns from
-- the same fields, the same rl_num() conversions, the same order of ids.
-- A record of another kind is left to its own trigger (points 005/007,
-- findings 011/020): those are row-level and unchanged.

create or replace function step_records_route() returns trigger
language plpgsql
set search_path = pg_catalog, public, pg_temp
as $$
begin
	insert into ceilings (run_id, step, attempt, seq, node, gpu_index,
		gpu_uuid, gpu_name, driver, cuda, cc, sm_clock_mhz,
		mem_clock_mhz, method, name, kind, value, unit, trials, min,
		median, max, spread_pct, geometry, ws_min_bytes, ws_max_bytes,
		synthetic, peer_index, peer_uuid, link, mode)
	select n.run_id, n.step, n.attempt, n.seq, n.node,
		rl_num(n.fields, 'gpu_index')::integer,
		n.fields ->> 'gpu_uuid', n.fields ->> 'gpu_name',
		n.fields ->> 'driver', n.fields ->> 'cuda',
		n.fields ->> 'cc', rl_num(n.fields, 'sm_clock_mhz'),
		rl_num(n.fields, 'mem_clock_mhz'), n.fields ->> 'method',
		n.fields ->> 'name', n.fields ->> 'kind',
		rl_num(n.fields, 'value'), n.fields ->> 'unit',
		rl_num(n.fields, 'trials')::integer, rl_num(n.fields, 'min'),
		rl_num(n.fields, 'median'), rl_num(n.fields, 'max'),
		rl_num(n.fields, 'spread_pct'), n.fields ->> 'geometry',
		rl_num(n.fields, 'ws_min_bytes')::bigint,
		rl_num(n.fields, 'ws_max_bytes')::bigint,
		n.fields ->> 'synthetic',
		rl_num(n.fields, 'peer_index')::integer,
		n.fields ->> 'peer_uuid', n.fields ->> 'link', n.fields ->> 'mode'
	from new_records n
	where n.kind = 'ceiling'
	order by n.step, n.attempt, n.seq;

	insert into kernel_profiles (run_id, step, attempt, seq, node, kernel,
		invocation, gpu_name, cc, source, metrics, missing)
	select n.run_id, n.step, n.attempt, n.seq, n.node,
		n.fields ->> 'kernel',
		rl_num(n.fields, 'invocation')::integer,
		n.fields ->> 'gpu_name', n.fields ->> 'cc',
		n.fields ->> 'source', n.fields,
		nullif(n.fields ->> 'missing', '')
	from new_records n
	where n.kind = 'kernel'
	order by n.step, n.attempt, n.seq;
	return null;
end
$$;

drop trigger step_records_route on step_records;
create trigger step_records_route after insert on step_records
	referencing new table as new_records
	for each statement execute function step_records_route();

drop trigger ceilings_synthetic on ceilings;
drop function ceilings_synthetic();
drop trigger ceilings_p2p on ceilings;
drop function ceilings_p2p();

-- ---- the series merge appends ------------------------------------------------
-- rl_series_merge (014) sorts a series and its new elements together: right
-- for any order, and 0.1-0.3 ms a series, 72 of them an attempt.  A night's
-- ingest brings each series one figure of a night after all of its own:
-- that is an append, less the nights older than 366 days before it.  The
-- sorting merge keeps its body under a new name; rl_series_merge takes the
-- append's shortcut and hands every other case (a second figure of one
-- night, a night before the newest, more than one figure at once) to it.
-- The trigger of 019 calls rl_series_merge by name and is unchanged.
alter function rl_series_merge(date[], bigint[], double precision[], text[],
	date[], bigint[], double precision[], text[]) rename to rl_series_merge_sorted;

create function rl_series_merge(
	s_nights date[], s_run_ids bigint[], s_vals double precision[], s_drivers text[],
	a_nights date[], a_run_ids bigint[], a_vals double precision[], a_drivers text[])
returns table (nights date[], run_ids bigint[], vals double precision[], drivers text[])
language plpgsql immutable
set search_path = pg_catalog, public, pg_temp
as $$
declare
	n      integer := cardinality(s_nights);
	k      integer := 1;
	cutoff date;
begin
	if cardinality(a_nights) = 1 and (n = 0 or a_nights[1] > s_nights[n]) then
		cutoff := a_nights[1] - 366;
		while k <= n and s_nights[k] < cutoff loop
			k := k + 1;
		end loop;
		return query select s_nights[k:n] || a_nights,
				    s_run_ids[k:n] || a_run_ids,
				    s_vals[k:n] || a_vals,
				    s_drivers[k:n] || a_drivers;
		return;
	end if;
	return query select * from rl_series_merge_sorted(s_nights, s_run_ids,
		s_vals, s_drivers, a_nights, a_run_ids, a_vals, a_drivers);
end
$$;
