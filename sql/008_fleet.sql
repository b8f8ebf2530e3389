-- 008_fleet.sql - the fleet's ceilings: synthetic figures labelled, and one
-- row per GPU per run (docs/fleet.md).

-- What a replayed GPU's figure is (plugins/ert/replay.h): null for a real
-- measurement; "replay of UUID (FILE gpu I)" for a recorded figure replayed
-- on a stand-in GPU; "...; perturbed: RULE[; RULE]" naming, as the test
-- declared them, the perturbations that changed that figure.  Filled from
-- the record's `synthetic` field by a trigger of its own, so that the
-- routing trigger of step_records (003, and whoever replaces it) need not
-- know the column.
alter table ceilings add column synthetic text;

create function ceilings_synthetic() returns trigger
language plpgsql as $$
begin
	if new.synthetic is null then
		select r.fields ->> 'synthetic' into new.synthetic
		from step_records r
		where r.step = new.step and r.attempt = new.attempt
		  and r.seq = new.seq;
	end if;
	return new;
end
$$;

create trigger ceilings_synthetic before insert on ceilings
	for each row execute function ceilings_synthetic();

-- One row per GPU per run: the measured headline ceilings beside the
-- theoretical ones, the clocks the FP64 figure ran at, and whether any of
-- the GPU's figures are synthetic (and which perturbations changed them).
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

grant select on fleet_ceilings to roofline_users;
