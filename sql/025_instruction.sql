-- 025_instruction.sql - the Instruction Roofline (plugins/instruction.c,
-- docs/instruction-roofline.md): its `ipoint`, `iroof` and `iwall`
-- records as views over step_records.  The records stay where every record
-- is (partitioned by month, kept and retired with them); the views type
-- their fields.  They run with the caller's privileges (security_invoker),
-- so step_records' row-level security applies: a user sees the points of
-- their own runs and the facility's.

-- ert-bench's warp-instruction ceiling (inst_warp, `precisions: [inst]`)
-- is a ceiling of a third kind: warp instructions per second.
alter table ceilings drop constraint ceilings_kind_check,
	add constraint ceilings_kind_check
	check (kind in ('compute', 'bandwidth', 'instruction'));

-- One row per kernel, GPU and level of a run: warp instructions per
-- transaction (intensity) against warp GIPS, under its roof.  level:
-- l1_global l1_shared l2 dram (every warp instruction over the level's
-- transactions), global shared (the load/store instructions of a space:
-- the memory walls).  integer_only: integer instructions and no FLOP.
create view instruction_points with (security_invoker = true) as
select s.run_id, r.pipeline_name, r.owner, s.step, s.attempt, s.seq, s.at,
       coalesce(nullif(s.fields ->> 'node', ''), s.node) as node,
       s.fields ->> 'kernel' as kernel, s.fields ->> 'level' as level,
       rl_num(s.fields, 'invocations')::integer as invocations,
       rl_num(s.fields, 'warp_inst') as warp_inst,
       rl_num(s.fields, 'transactions') as transactions,
       rl_num(s.fields, 'intensity') as intensity,
       rl_num(s.fields, 'time_s') as time_s,
       rl_num(s.fields, 'gips') as gips,
       rl_num(s.fields, 'roof_gips') as roof_gips,
       rl_num(s.fields, 'pct_of_roof') as pct_of_roof,
       rl_num(s.fields, 'peak_gips') as peak_gips,
       s.fields ->> 'peak_method' as peak_method,
       s.fields ->> 'bound' as bound,
       coalesce(s.fields ->> 'integer_only', '0') = '1' as integer_only,
       s.fields ->> 'gpu_name' as gpu_name, s.fields ->> 'gpu_uuid' as gpu_uuid,
       s.fields ->> 'ceilings_gpu' as ceilings_gpu
from step_records s join runs r on r.id = s.run_id
where s.kind = 'ipoint';

-- The roofs each run drew: the peaks (warp GIPS; theoretical from the
-- device's SMs x schedulers x clock, empirical from ert's inst_warp) and
-- each level's bandwidth in giga-transactions per second.
create view instruction_roofs with (security_invoker = true) as
select s.run_id, r.pipeline_name, s.step, s.at,
       s.fields ->> 'gpu_name' as gpu_name, s.fields ->> 'gpu_uuid' as gpu_uuid,
       s.fields ->> 'name' as name, s.fields ->> 'kind' as kind,
       s.fields ->> 'level' as level, rl_num(s.fields, 'value') as value,
       s.fields ->> 'unit' as unit, s.fields ->> 'method' as method
from step_records s join runs r on r.id = s.run_id
where s.kind = 'iroof';

-- The memory walls (theoretical): global (stride 0, unit stride,
-- uncoalesced) and shared (no conflict to 32-way), as intensities.
create view instruction_walls with (security_invoker = true) as
select s.run_id, s.step, s.fields ->> 'gpu_name' as gpu_name,
       s.fields ->> 'space' as space, s.fields ->> 'label' as label,
       rl_num(s.fields, 'intensity') as intensity, s.fields ->> 'method' as method
from step_records s
where s.kind = 'iwall';

grant select on instruction_points, instruction_roofs, instruction_walls to roofline_users;
