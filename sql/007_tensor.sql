-- 007_tensor.sql - tensor-core work that a metric set did not count.
--
-- The ncu plugin's default set collects only some tensor datapaths (each one
-- costs Nsight Compute replay passes; docs/collect.md).  When a kernel ran
-- tensor instructions while some datapath of its GPU was not collected, the
-- hierarchical plugin writes the uncounted datapaths on each of its points
-- (`tensor_uncounted`, e.g. 'fp16,tf32,fp8,int8'), and a kernel with no
-- counted FLOPs at all still gets one point (precision 'tensor', level
-- 'none', verdict 'incomplete').  NULL: everything was counted.
-- (Kernel records carry `tensor_not_collected` and `gpu_uuid` in
-- kernel_profiles.metrics.)

alter table points add column tensor_uncounted text;

create or replace function step_records_points() returns trigger
language plpgsql as $$
begin
	insert into points (run_id, step, attempt, seq, node, kernel,
		invocation, invocations, precision, level, flops, bytes, ai,
		time_s, gflops, roof_gflops, pct_of_roof, bound_level,
		bound_ceiling, pct_of_bound, verdict, alpha,
		partial_fma_gflops, is_primary, byte_definition, gpu_name,
		gpu_uuid, tensor_uncounted)
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
		new.fields ->> 'gpu_uuid',
		nullif(new.fields ->> 'tensor_uncounted', ''));
	return new;
end
$$;

-- roofline_points, with the flag as its last column.
create or replace view roofline_points with (security_invoker = true) as
select p.run_id, r.pipeline_name, r.owner, p.node, p.gpu_name, p.gpu_uuid,
       coalesce(r.ended_at, max(p.at)) as run_at, p.kernel, p.precision,
       max(p.ai) filter (where p.level = 'l1') as ai_l1,
       max(p.ai) filter (where p.level = 'l2') as ai_l2,
       max(p.ai) filter (where p.level = 'dram') as ai_dram,
       max(p.gflops) as gflops, max(p.time_s) as time_s,
       max(p.invocations) as invocations,
       max(p.bound_level) as bound, max(p.bound_ceiling) as bound_ceiling,
       max(p.verdict) as verdict, max(p.pct_of_bound) as pct_of_roof,
       max(p.alpha) as alpha,
       max(p.tensor_uncounted) as tensor_uncounted
from points p join runs r on r.id = p.run_id
where p.invocation = 'all' and p.is_primary
group by p.run_id, r.pipeline_name, r.owner, r.ended_at, p.node, p.gpu_name,
         p.gpu_uuid, p.kernel, p.precision;
