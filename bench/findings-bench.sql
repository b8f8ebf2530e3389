-- bench/findings-bench.sql - the synthetic history of bench/findings-bench.sh
-- (docs/findings-bench.md).  Every figure is labelled synthetic: it is a
-- real recording (tables tmpl_ceiling and tmpl_point, loaded by the script
-- from ert's replay of tests/fixtures/ert/h100-quick.tsv and from the
-- hierarchical plugin's points of the kernel_abc and gsrb captures) times
-- noise drawn here, with a few declared perturbations.
--
-- psql variables: tonight (a date), nodes, gpn (GPUs per node), nights
-- (earlier nights), kowner (the user whose runs the kernels' are), kernels, kruns (runs of the kernel pipeline, the last one judged).
--
-- Noise: a ceiling's relative standard deviation is its recorded trial
-- range over d2(9) = 2.970 (common/judge.h); each GPU gets a fixed offset
-- and each night a draw, both of that size.  A kernel's GFLOP/s gets 1 %
-- per run, its AI 0.2 % (declared, not measured: the captures are one run).
\set ON_ERROR_STOP 1
set synchronous_commit = off;
select setseed(0.42);

create function pg_temp.normal() returns double precision
language sql volatile as
$$ select sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) $$;

-- ---- the fleet: nodes x gpn GPUs, nights + 1 runs of pipeline fleet-bench ----
insert into runs (pipeline_name, owner, facility, yaml, trigger, state, night,
		  submitted_at, started_at, ended_at)
select 'fleet-bench', 'rooflined', true, '', 'schedule',
       case when n = :nights then 'running' else 'succeeded' end,
       :'tonight'::date - (:nights - n),
       (:'tonight'::date - (:nights - n)) + interval '1 hour',
       (:'tonight'::date - (:nights - n)) + interval '1 hour',
       case when n = :nights then null
            else (:'tonight'::date - (:nights - n)) + interval '3 hours' end
from generate_series(0, :nights) n order by n;

insert into steps (run_id, step_id, node, plugin, on_daemon, state, attempt)
select r.id, 'ert', 'rl-b' || lpad(k::text, greatest(3, length(k::text)), '0'), 'ert', false, 'succeeded', 1
from runs r, generate_series(1, :nodes) k
where r.pipeline_name = 'fleet-bench';

create temp table gpu as
select k, g, 'rl-b' || lpad(k::text, greatest(3, length(k::text)), '0') as node,
       'GPU-bench-' || lpad(k::text, greatest(3, length(k::text)), '0') || '-' || g as uuid
from generate_series(1, :nodes) k, generate_series(0, :gpn - 1) g;

create temp table gpu_offset as
select u.uuid, t.name,
       pg_temp.normal() * t.spread_pct / 100 / 2.970 as o
from gpu u, tmpl_ceiling t;

-- The declared perturbations: (node, gpu, ceiling, factor, SM clock, from
-- how many nights before tonight on).
create temp table perturb (node text, g int, name text, factor double precision,
			   sm_clock double precision, since int);
insert into perturb values
	('rl-b017', 1, 'hbm_triad', 0.88, null, :nights), -- every night
	('rl-b123', 0, 'fp64_fma', 1410.0 / 1980, 1410, 0), -- tonight: clock cap
	('rl-b400', 1, 'tc_fp16', 0.90, null, 0);          -- tonight

insert into ceilings (run_id, step, attempt, seq, node, gpu_index, gpu_uuid,
		      gpu_name, driver, cuda, cc, sm_clock_mhz, mem_clock_mhz,
		      method, name, kind, value, unit, trials, min, median, max,
		      spread_pct, geometry, measured_at, synthetic)
select r.id, s.id, 1, u.g * 100 + t.seq, u.node, u.g, u.uuid, t.gpu_name,
       t.driver, t.cuda, t.cc, coalesce(p.sm_clock, t.sm_clock_mhz),
       t.mem_clock_mhz, 'empirical', t.name, t.kind, v.value, t.unit, t.trials,
       v.value * t.min / t.value, v.value, v.value * t.max / t.value,
       t.spread_pct, t.geometry, r.night + interval '2 hours',
       'findings-bench: replay of h100-quick.tsv x noise' ||
       case when p.node is not null then '; perturbed' else '' end
from runs r
join steps s on s.run_id = r.id and s.step_id = 'ert'
join gpu u on u.node = s.node
cross join tmpl_ceiling t
join gpu_offset o on o.uuid = u.uuid and o.name = t.name
left join perturb p on p.node = u.node and p.g = u.g and p.name = t.name
	and r.night >= :'tonight'::date - p.since
cross join lateral (select t.value * coalesce(p.factor, 1) *
	(1 + o.o + pg_temp.normal() * t.spread_pct / 100 / 2.970) as value) v
where r.pipeline_name = 'fleet-bench'
-- in the order the daemon would have ingested them: night by night
order by r.id, u.node, u.g, t.seq;

-- ---- the kernels: kruns runs of pipeline kernels-bench on one GPU -----------
insert into runs (pipeline_name, owner, facility, yaml, trigger, state, night,
		  submitted_at, started_at, ended_at)
select 'kernels-bench', :'kowner', false, '', 'schedule', 'running',
       :'tonight'::date - (:kruns - n),
       (:'tonight'::date - (:kruns - n)) + interval '4 hours',
       (:'tonight'::date - (:kruns - n)) + interval '4 hours',
       case when n = :kruns then null
            else (:'tonight'::date - (:kruns - n)) + interval '5 hours' end
from generate_series(1, :kruns) n order by n;

insert into steps (run_id, step_id, node, plugin, on_daemon, state, attempt)
select r.id, x.step_id, x.node, x.plugin, x.on_daemon, 'succeeded', 1
from runs r, (values ('ert', 'rl-k01', 'ert', false),
		     ('roofline', '', 'hierarchical', true)) x (step_id, node, plugin, on_daemon)
where r.pipeline_name = 'kernels-bench';

insert into ceilings (run_id, step, attempt, seq, node, gpu_index, gpu_uuid,
		      gpu_name, driver, cuda, cc, sm_clock_mhz, mem_clock_mhz,
		      method, name, kind, value, unit, trials, min, median, max,
		      spread_pct, geometry, measured_at, synthetic)
select r.id, s.id, 1, t.seq, 'rl-k01', 0, 'GPU-bench-k01-0', t.gpu_name,
       t.driver, t.cuda, t.cc, t.sm_clock_mhz, t.mem_clock_mhz, 'empirical',
       t.name, t.kind, v.value, t.unit, t.trials, v.value * t.min / t.value,
       v.value, v.value * t.max / t.value, t.spread_pct, t.geometry,
       r.night + interval '4 hours',
       'findings-bench: replay of h100-quick.tsv x noise'
from runs r
join steps s on s.run_id = r.id and s.step_id = 'ert'
cross join tmpl_ceiling t
cross join lateral (select t.value *
	(1 + pg_temp.normal() * t.spread_pct / 100 / 2.970) as value) v
where r.pipeline_name = 'kernels-bench'
order by r.id, t.seq;

-- Kernel j is a copy of the recorded kernel j mod (recorded kernels), named
-- after it with _j: kernel_A_6(double *, long, double).
create temp table tk as
select kernel, row_number() over (order by kernel) - 1 as t
from (select distinct kernel from tmpl_point) x;

create temp table kern as
select j, tk.kernel as tkernel,
       regexp_replace(tk.kernel, '^([A-Za-z0-9_]+)', '\1_' || j) as kernel
from generate_series(0, :kernels - 1) j
join tk on tk.t = j % (select count(*) from tk);

-- Run factors per (run, kernel): GFLOP/s 1 %, AI 0.2 %; declared
-- perturbations in the last run: kernel 2's AI -30 % (moved left), kernel
-- 6's GFLOP/s -20 % (dropped).
create temp table kfactor as
select r.id as run_id, k.j,
       (1 + 0.01 * pg_temp.normal()) *
       case when r.night = :'tonight'::date and k.j = 6 then 0.8 else 1 end as gf,
       (1 + 0.002 * pg_temp.normal()) *
       case when r.night = :'tonight'::date and k.j = 2 then 0.7 else 1 end as ai
from runs r, kern k where r.pipeline_name = 'kernels-bench';

insert into points (run_id, step, attempt, seq, node, kernel, invocation,
		    invocations, precision, level, flops, bytes, ai, time_s,
		    gflops, roof_gflops, pct_of_roof, bound_level, bound_ceiling,
		    pct_of_bound, verdict, is_primary, gpu_name, gpu_uuid, at)
select r.id, s.id, 1, row_number() over (partition by r.id order by k.j, t.seq),
       'rl-k01', k.kernel, 'all', t.invocations, t.precision, t.level,
       t.flops, t.bytes / f.ai, t.ai * f.ai, t.time_s / f.gf, t.gflops * f.gf,
       t.roof_gflops, t.pct_of_roof * f.gf, t.bound_level, t.bound_ceiling,
       t.pct_of_bound * f.gf, t.verdict, t.is_primary, t.gpu_name,
       'GPU-bench-k01-0', r.night + interval '4 hours'
from runs r
join steps s on s.run_id = r.id and s.step_id = 'roofline'
cross join kern k
join tmpl_point t on t.kernel = k.tkernel
join kfactor f on f.run_id = r.id and f.j = k.j
where r.pipeline_name = 'kernels-bench'
order by r.id, k.j, t.seq;

-- The earlier runs end, oldest first, as the daemon ends them: after
-- their points (a run's kernels join their series when it succeeds,
-- sql/030_kernel_series.sql), each end followed by the vacuum that
-- autovacuum makes between two nights (every end rewrites every series
-- row).  The last run is tonight's, still running.
select x.sql from (
	select r.id, 1 as k, format('update runs set state = %L where id = %s',
				    'succeeded', r.id) as sql
	from runs r where r.pipeline_name = 'kernels-bench' and r.night < :'tonight'::date
	union all
	select r.id, 2, 'vacuum kernel_series'
	from runs r where r.pipeline_name = 'kernels-bench' and r.night < :'tonight'::date
	  and to_regclass('kernel_series') is not null) x
order by x.id, x.k \gexec

-- a database in use has had autovacuum over these (visibility map, statistics;
-- each run's end rewrote every kernel's series row, sql/030)
vacuum analyze runs, steps, ceilings, points, ceiling_series;
select to_regclass('kernel_series') is not null as has_kernel_series \gset
\if :has_kernel_series
vacuum analyze kernel_series;
\endif
