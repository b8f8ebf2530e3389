-- 023_fleet_tonight.sql - the fleet tonight at facility scale (issue 27):
-- one row per GPU and ceiling of the latest fleet judgement, for the site's
-- tonight page (daemon/site_tonight.c) and `roofline fleet` (cli/cmd_fleet.c).
-- docs/fleet.md, "Tonight at 8,000 GPUs".

-- The Slurm partition a `nodes: each` run spread over ('' = Slurm's
-- default partition), written with each node (daemon/runs.c).
alter table run_nodes add column partition text not null default '';

-- The fleet step's verdict on every (GPU, ceiling) of one run: its own
-- `fleet_gpu` records (value, the model's median, % of it, flagged, the
-- threshold it was judged with) beside its `finding` records (class,
-- severity, cause), the node's partition from run_nodes.  The run: `run`
-- when given, else the newest run (of `pipeline`, when given) whose `fleet`
-- step succeeded.  Security invoker: row-level security shows a user the
-- facility's runs and their own.  Rows come in (flagged first, % of median
-- ascending, node, GPU, ceiling) order.
create function rl_fleet_tonight(p_pipeline text default null, p_run bigint default null)
returns table (run_id bigint, pipeline text, night date, node text,
	       partition text, gpu_index integer, gpu_uuid text, gpu_name text,
	       ceiling text, mode text, value double precision,
	       fleet_median double precision, pct double precision,
	       threshold_pct double precision, flagged boolean, class text,
	       severity text, cause text, synthetic text)
language sql stable security invoker
set search_path = pg_catalog, public
as $$
	with st as (
		select s.id, s.attempt, r.id as run_id, r.pipeline_name, r.night
		from steps s join runs r on r.id = s.run_id
		where s.plugin = 'fleet' and s.state = 'succeeded'
		  and (p_run is null or r.id = p_run)
		  and (p_pipeline is null or r.pipeline_name = p_pipeline)
		order by r.id desc, s.id desc limit 1
	), rec as (
		select x.kind, x.fields as f, st.run_id, st.pipeline_name, st.night
		from st join step_records x on x.step = st.id and x.attempt = st.attempt
		 and x.run_id = st.run_id
		where x.kind in ('fleet_gpu', 'finding')
	), g as (
		select * from rec where kind = 'fleet_gpu'
	), fi as (
		select f ->> 'gpu_uuid' as uuid, f ->> 'measure' as measure,
		       coalesce(f ->> 'mode', '') as mode, f
		from rec where kind = 'finding' and f ->> 'scope' = 'gpu'
	)
	select g.run_id, g.pipeline_name, g.night, g.f ->> 'node',
	       coalesce(rn.partition, ''), nullif(g.f ->> 'gpu_index', '')::integer,
	       g.f ->> 'gpu_uuid', g.f ->> 'gpu_name', g.f ->> 'ceiling',
	       coalesce(g.f ->> 'mode', ''),
	       (g.f ->> 'value')::double precision,
	       (g.f ->> 'fleet_median')::double precision,
	       (g.f ->> 'pct_of_median')::double precision,
	       nullif(coalesce(g.f ->> 'threshold_pct', fi.f ->> 'threshold_pct'), '')::double precision,
	       g.f ->> 'flagged' = '1', fi.f ->> 'class', fi.f ->> 'severity',
	       nullif(fi.f ->> 'cause', ''),
	       nullif(coalesce(g.f ->> 'synthetic', fi.f ->> 'synthetic'), '')
	from g
	left join fi on fi.uuid = g.f ->> 'gpu_uuid' and fi.measure = g.f ->> 'ceiling'
	 and fi.mode = coalesce(g.f ->> 'mode', '')
	 and coalesce(g.f ->> 'peer_index', '') = ''
	left join run_nodes rn on rn.run_id = g.run_id and rn.node = g.f ->> 'node'
	where coalesce(g.f ->> 'peer_index', '') = ''
	order by g.f ->> 'flagged' = '1' desc, (g.f ->> 'pct_of_median')::double precision,
		 g.f ->> 'node', nullif(g.f ->> 'gpu_index', '')::integer, g.f ->> 'ceiling'
$$;
grant execute on function rl_fleet_tonight(text, bigint) to roofline_users;
