-- 005_roofline.sql - roofline points (from the hierarchical plugin's `point`
-- records) as a typed table, and the views analysts query.
--
-- The views run with the caller's privileges (security_invoker), so row-level
-- security applies through them: a user sees the points of their own runs and
-- the facility's.

create table points (
	id                  bigserial primary key,
	run_id              bigint not null,
	step                bigint not null references steps (id) on delete cascade,
	attempt             integer not null,
	seq                 integer not null,
	node                text not null,
	kernel              text collate "C" not null, -- byte order: prefix ranges use the index
	invocation          text not null,         -- ncu launch id, or 'all'
	invocations         integer,
	precision           text not null,
	level               text not null,
	flops               double precision,
	bytes               double precision,
	ai                  double precision,
	time_s              double precision,
	gflops              double precision,
	roof_gflops         double precision,
	pct_of_roof         double precision,
	bound_level         text,
	bound_ceiling       text,
	pct_of_bound        double precision,
	verdict             text,
	alpha               double precision,
	partial_fma_gflops  double precision,
	is_primary          boolean not null default false,
	byte_definition     text,
	gpu_name            text,
	gpu_uuid            text,
	at                  timestamptz not null default now(),
	unique (step, attempt, seq)
);
-- History of one kernel's aggregate points; a run's points.
create index points_kernel_idx on points (kernel, at) where invocation = 'all';
create index points_run_idx on points (run_id);
create index points_node_idx on points (node, gpu_uuid, at) where invocation = 'all';

create function step_records_points() returns trigger
language plpgsql as $$
begin
	insert into points (run_id, step, attempt, seq, node, kernel,
		invocation, invocations, precision, level, flops, bytes, ai,
		time_s, gflops, roof_gflops, pct_of_roof, bound_level,
		bound_ceiling, pct_of_bound, verdict, alpha,
		partial_fma_gflops, is_primary, byte_definition, gpu_name,
		gpu_uuid)
	values (new.run_id, new.step, new.attempt, new.seq,
		coalesce(nullif(new.fields ->> 'node', ''), new.node),
		new.fields ->> 'kernel', new.fields ->> 'invocation',
		rl_num(new.fields, 'invocations')::integer,
		new.fields ->> 'precision', new.fields ->> 'level',
		rl_num(new.fields, 'flops'), rl_num(new.fields, 'bytes'),
		rl_num(new.fields, 'ai'), rl_num(new.fields, 'time_s'),
		rl_num(new.fields, 'gflops'), rl_num(new.fields, 'roof_gflops'),
		rl_num(new.fields, 'pct_of_roof'), new.fields ->> 'bound_level',
		new.fields ->> 'bound_ceiling', rl_num(new.fields, 'pct_of_bound'),
		new.fields ->> 'verdict', rl_num(new.fields, 'alpha'),
		rl_num(new.fields, 'partial_fma_gflops'),
		coalesce(new.fields ->> 'primary', '0') = '1',
		new.fields ->> 'byte_definition', new.fields ->> 'gpu_name',
		new.fields ->> 'gpu_uuid');
	return new;
end
$$;

create trigger step_records_points after insert on step_records
	for each row when (new.kind = 'point')
	execute function step_records_points();

alter table points enable row level security;
grant select on points to roofline_users;
create policy points_visible on points for select to roofline_users
	using (exists (select 1 from runs r where r.id = run_id));

-- One row per kernel per run (and GPU): its main precision's aggregate point,
-- with the arithmetic intensity at each level side by side.
create view roofline_points with (security_invoker = true) as
select p.run_id, r.pipeline_name, r.owner, p.node, p.gpu_name, p.gpu_uuid,
       coalesce(r.ended_at, max(p.at)) as run_at, p.kernel, p.precision,
       max(p.ai) filter (where p.level = 'l1') as ai_l1,
       max(p.ai) filter (where p.level = 'l2') as ai_l2,
       max(p.ai) filter (where p.level = 'dram') as ai_dram,
       max(p.gflops) as gflops, max(p.time_s) as time_s,
       max(p.invocations) as invocations,
       max(p.bound_level) as bound, max(p.bound_ceiling) as bound_ceiling,
       max(p.verdict) as verdict, max(p.pct_of_bound) as pct_of_roof,
       max(p.alpha) as alpha
from points p join runs r on r.id = p.run_id
where p.invocation = 'all' and p.is_primary
group by p.run_id, r.pipeline_name, r.owner, r.ended_at, p.node, p.gpu_name,
         p.gpu_uuid, p.kernel, p.precision;

-- The ceilings of every GPU of every node over time.
create view ceilings_history with (security_invoker = true) as
select c.measured_at, c.node, c.gpu_uuid, c.gpu_name, c.gpu_index, c.name,
       c.kind, c.method, c.value, c.unit, c.spread_pct, c.sm_clock_mhz,
       c.mem_clock_mhz, c.driver, c.cuda, c.run_id, r.pipeline_name
from ceilings c join runs r on r.id = c.run_id;

-- One kernel's performance over the nights: GFLOP/s and AI per run.
create view kernel_trend with (security_invoker = true) as
select kernel, run_at, node, gpu_name, gflops, ai_l1, ai_l2, ai_dram,
       pct_of_roof, verdict, run_id, pipeline_name
from roofline_points;

grant select on roofline_points, ceilings_history, kernel_trend to roofline_users;
