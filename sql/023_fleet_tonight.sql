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
set search_path = pg_catalog, public, pg_temp
-- the CTEs' row counts are unknown to the planner (it guesses one): a
-- nested loop over 144,000 figures x the findings would take minutes
set enable_nestloop = off
as $$
	with st as materialized (
		select s.id, s.attempt, r.id as run_id, r.pipeline_name, r.night
		from steps s join runs r on r.id = s.run_id
		where s.plugin = 'fleet' and s.state = 'succeeded'
		  and (p_run is null or r.id = p_run)
		  and (p_pipeline is null or r.pipeline_name = p_pipeline)
		order by r.id desc, s.id desc limit 1
	), rec as materialized (
		-- (run_id, kind): step_records_run_kind_idx
		select x.kind, x.fields as f
		from step_records x
		where x.run_id = (select st.run_id from st)
		  and x.kind in ('fleet_gpu', 'finding')
		  and x.step = (select st.id from st)
		  and x.attempt = (select st.attempt from st)
	), g as materialized (
		select f ->> 'node' as node, nullif(f ->> 'gpu_index', '')::integer as gpu_index,
		       f ->> 'gpu_uuid' as uuid, f ->> 'gpu_name' as model,
		       f ->> 'ceiling' as ceiling, coalesce(f ->> 'mode', '') as mode,
		       (f ->> 'value')::double precision as value,
		       (f ->> 'fleet_median')::double precision as median,
		       (f ->> 'pct_of_median')::double precision as pct,
		       nullif(f ->> 'threshold_pct', '')::double precision as thr,
		       f ->> 'flagged' = '1' as flagged,
		       nullif(f ->> 'synthetic', '') as synthetic
		from rec where kind = 'fleet_gpu' and coalesce(f ->> 'peer_index', '') = ''
	), fi as materialized (
		select f ->> 'gpu_uuid' as uuid, f ->> 'measure' as measure,
		       coalesce(f ->> 'mode', '') as mode, f ->> 'class' as class,
		       f ->> 'severity' as severity, nullif(f ->> 'cause', '') as cause,
		       nullif(f ->> 'threshold_pct', '')::double precision as thr,
		       nullif(f ->> 'synthetic', '') as synthetic
		from rec where kind = 'finding' and f ->> 'scope' = 'gpu'
		  and coalesce(f ->> 'peer_index', '') = ''
	)
	select st.run_id, st.pipeline_name, st.night, g.node,
	       coalesce(rn.partition, ''), g.gpu_index, g.uuid, g.model, g.ceiling,
	       g.mode, g.value, g.median, g.pct, coalesce(g.thr, fi.thr), g.flagged,
	       fi.class, fi.severity, fi.cause, coalesce(g.synthetic, fi.synthetic)
	from st cross join g
	left join fi on fi.uuid = g.uuid and fi.measure = g.ceiling and fi.mode = g.mode
	left join run_nodes rn on rn.run_id = st.run_id and rn.node = g.node
	order by g.flagged desc, g.pct, g.node, g.gpu_index, g.ceiling
$$;
grant execute on function rl_fleet_tonight(text, bigint) to roofline_users;
