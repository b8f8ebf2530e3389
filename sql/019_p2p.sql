-- 019_p2p.sql - ceilings of nodes of several GPUs (issue 29): the peer of a
-- peer-to-peer figure, the link between the two, and the mode the figure
-- was measured in (docs/ceilings.md "Peer to peer", docs/fleet.md
-- "Concurrent and sequential").  Forward only.
--
--   peer_index, peer_uuid  the other GPU of a p2p_* figure (ert-bench
--                          --p2p); null for every other ceiling
--   link                   the pair's label in `nvidia-smi topo -m` (NV18,
--                          SYS...); null when not captured
--   mode                   'concurrent' (every GPU of the node measured at
--                          once) or 'sequential' (one after the other), as
--                          ert-bench --mode said; null when not given, which
--                          is the sequential nightly step
--
-- Filled from the record's fields by a trigger of their own, as 008 fills
-- `synthetic`, so that the routing trigger of step_records need not know
-- the columns.

alter table ceilings add column peer_index integer,
	add column peer_uuid text,
	add column link text,
	add column mode text;

create function ceilings_p2p() returns trigger
language plpgsql as $$
declare
	f jsonb;
begin
	select r.fields into f
	from step_records r
	where r.step = new.step and r.attempt = new.attempt and r.seq = new.seq;
	if f is not null then
		new.peer_index := coalesce(new.peer_index,
					   rl_num(f, 'peer_index')::integer);
		new.peer_uuid := coalesce(new.peer_uuid, f ->> 'peer_uuid');
		new.link := coalesce(new.link, f ->> 'link');
		new.mode := coalesce(new.mode, f ->> 'mode');
	end if;
	return new;
end
$$;

create trigger ceilings_p2p before insert on ceilings
	for each row execute function ceilings_p2p();

-- A GPU's nightly series (014) holds one figure a night per ceiling name:
-- the sequential measurement of the GPU itself.  Figures of a peer pair or
-- of a concurrent run are left out (they are compared tonight, by mode,
-- not against the GPU's own past).
create or replace function ceilings_series_merge() returns trigger
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

-- fleet_ceilings (008, 010): one row per GPU per run and mode; the p2p
-- figures are not a GPU's own headline ceilings.
create or replace view fleet_ceilings with (security_invoker = true) as
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
       string_agg(distinct substring(c.synthetic from '; perturbed: (.*)$'), '; ') as perturbed,
       coalesce(c.mode, 'sequential') as mode
from ceilings c join runs r on r.id = c.run_id
where c.peer_index is null
group by c.run_id, r.pipeline_name, c.node, c.gpu_index, c.gpu_uuid,
	 coalesce(c.mode, 'sequential');
