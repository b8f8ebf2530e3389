-- 010_findings.sql - what got worse, where, by how much, probably why
-- (docs/findings.md).
--
-- The `fleet` and `regressions` plugins emit `finding` records; a trigger
-- folds them into table findings, one row per (scope, subject, measure,
-- pipeline) while it is not resolved, with one finding_nights row per night
-- it was seen.  Ingesting the same night again (a re-run of the analysis, a
-- replayed run, a restarted daemon) adds nothing: (finding, night) is a key.
-- A finding seen again the next night is the same finding, its count one
-- higher.  The daemon tells people of each new finding once
-- (daemon/notify.c, columns notify_*).

-- The night a run stands for: the day it was submitted (UTC), or the night a
-- replay declares (`roofline submit --night DATE`).  Findings are per night.
alter table runs add column night date not null
	default (now() at time zone 'UTC')::date;
grant insert (night) on runs to roofline_users;
create index runs_pipeline_night_idx on runs (pipeline_name, night);

-- Facility staff: may change the state of any finding they can see.
do $$
begin
	if not exists (select 1 from pg_roles where rolname = 'roofline_staff') then
		create role roofline_staff nologin;
	end if;
end
$$;

create table findings (
	id             bigserial primary key,
	scope          text not null check (scope in ('gpu', 'kernel')),
	subject        text not null,  -- the GPU's UUID, or the kernel's name
	measure        text not null,  -- a ceiling's name, or a kernel's precision
	pipeline_name  text not null,
	class          text not null,  -- fleet outlier, own history, dropped,
	                               -- moved left, roof changed
	severity       text not null check (severity in ('warning', 'critical')),
	state          text not null default 'new'
	               check (state in ('new', 'acknowledged', 'resolved')),
	state_by       name,
	state_at       timestamptz,
	owner          name not null,  -- the owner of the run that found it
	facility       boolean not null,
	node           text,
	gpu_uuid       text,
	gpu_name       text,
	kernel         text,
	first_run      bigint not null,
	last_run       bigint not null,
	first_night    date not null,
	last_night     date not null,
	nights         integer not null default 1,
	value          double precision,  -- tonight's (latest night's)
	reference      double precision,  -- what it was judged against
	drop_pct       double precision,  -- 100 (reference - value) / reference
	threshold_pct  double precision,  -- the drop that flags it
	noise_pct      double precision,  -- the noise the threshold came from
	cause          text,              -- the likely cause, where records show one
	detail         jsonb not null default '{}',
	created_at     timestamptz not null default now(),
	notify_state   text not null default 'pending'
	               check (notify_state in ('pending', 'sending', 'sent',
	                                       'failed', 'interrupted', 'logged')),
	notify_tries   integer not null default 0,
	notify_next_at timestamptz,
	notify_error   text
);
create unique index findings_open_idx on findings (scope, subject, measure, pipeline_name)
	where state <> 'resolved';
create index findings_night_idx on findings (last_night);
create index findings_notify_idx on findings (id) where notify_state in ('pending', 'sending');

create table finding_nights (
	finding_id  bigint not null references findings (id) on delete cascade,
	night       date not null,
	run_id      bigint not null,
	step        bigint not null,
	value       double precision,
	reference   double precision,
	drop_pct    double precision,
	primary key (finding_id, night)
);

-- Fold one `finding` record into findings/finding_nights (idempotent).
create function step_records_findings() returns trigger
language plpgsql as $$
declare
	f      jsonb := new.fields;
	r      runs%rowtype;
	fid    bigint;
	nnight date;
begin
	select * into r from runs where id = new.run_id;
	nnight := coalesce(nullif(f ->> 'night', '')::date, r.night);
	select id into fid from findings
	where scope = f ->> 'scope' and subject = f ->> 'subject'
	  and measure = f ->> 'measure' and pipeline_name = r.pipeline_name
	  and state <> 'resolved'
	for update;
	if fid is null then
		insert into findings (scope, subject, measure, pipeline_name,
			class, severity, owner, facility, node, gpu_uuid, gpu_name,
			kernel, first_run, last_run, first_night, last_night,
			value, reference, drop_pct, threshold_pct, noise_pct,
			cause, detail)
		values (f ->> 'scope', f ->> 'subject', f ->> 'measure',
			r.pipeline_name, f ->> 'class', f ->> 'severity', r.owner,
			r.facility, nullif(f ->> 'node', ''),
			nullif(f ->> 'gpu_uuid', ''), nullif(f ->> 'gpu_name', ''),
			nullif(f ->> 'kernel', ''), new.run_id, new.run_id,
			nnight, nnight, rl_num(f, 'value'), rl_num(f, 'reference'),
			rl_num(f, 'drop_pct'), rl_num(f, 'threshold_pct'),
			rl_num(f, 'noise_pct'), nullif(f ->> 'cause', ''), f)
		returning id into fid;
	end if;
	insert into finding_nights (finding_id, night, run_id, step, value,
		reference, drop_pct)
	values (fid, nnight, new.run_id, new.step, rl_num(f, 'value'),
		rl_num(f, 'reference'), rl_num(f, 'drop_pct'))
	on conflict do nothing;
	if found then
		-- a night seen for the first time: the finding's latest figures
		update findings set
			nights = (select count(*) from finding_nights where finding_id = fid),
			last_run = case when nnight >= last_night then new.run_id else last_run end,
			last_night = greatest(last_night, nnight),
			first_night = least(first_night, nnight),
			value = case when nnight >= last_night then rl_num(f, 'value') else value end,
			reference = case when nnight >= last_night then rl_num(f, 'reference') else reference end,
			drop_pct = case when nnight >= last_night then rl_num(f, 'drop_pct') else drop_pct end,
			severity = case when nnight >= last_night then f ->> 'severity' else severity end,
			cause = case when nnight >= last_night then coalesce(nullif(f ->> 'cause', ''), cause) else cause end
		where id = fid;
	end if;
	return new;
end
$$;

create trigger step_records_findings after insert on step_records
	for each row when (new.kind = 'finding')
	execute function step_records_findings();

-- Who changed a finding's state, and when: always the session's own role.
create function findings_state_changed() returns trigger
language plpgsql as $$
begin
	if new.state is distinct from old.state then
		new.state_by := session_user;
		new.state_at := now();
	end if;
	return new;
end
$$;

create trigger findings_state_changed before update on findings
	for each row execute function findings_state_changed();

-- Users see findings about their own runs and the facility's; they may
-- acknowledge or resolve those of their own runs, staff any they see.
alter table findings enable row level security;
alter table finding_nights enable row level security;
grant select on findings, finding_nights to roofline_users;
grant update (state) on findings to roofline_users;
create policy findings_visible on findings for select to roofline_users
	using (owner = current_user or facility);
create policy findings_change on findings for update to roofline_users
	using (owner = current_user or pg_has_role(current_user, 'roofline_staff', 'member'))
	with check (state in ('acknowledged', 'resolved', 'new'));
create policy finding_nights_visible on finding_nights for select to roofline_users
	using (exists (select 1 from findings f where f.id = finding_id));

-- The two kinds, as analysts ask for them.
create view fleet_outliers with (security_invoker = true) as
select f.id, f.state, f.severity, f.pipeline_name, f.node, f.gpu_uuid,
       f.gpu_name, f.measure as ceiling, f.class, f.value, f.reference,
       f.drop_pct, f.threshold_pct, f.noise_pct, f.cause, f.nights,
       f.first_night, f.last_night, f.last_run
from findings f where f.scope = 'gpu';

create view kernel_regressions with (security_invoker = true) as
select f.id, f.state, f.severity, f.pipeline_name, f.kernel,
       f.measure as "precision", f.detail ->> 'levels' as levels, f.class, f.value,
       f.reference, f.drop_pct, f.threshold_pct, f.noise_pct, f.cause,
       f.gpu_name, f.nights, f.first_night, f.last_night, f.last_run,
       (f.detail ->> 'baseline_run')::bigint as baseline_run
from findings f where f.scope = 'kernel';

grant select on fleet_outliers, kernel_regressions to roofline_users;

-- ---- inputs of the analyses, shared by the daemon and `roofline` -----------

-- A GPU's own history: for each GPU and ceiling of run `run_id`, its
-- empirical figures in the `nights` nights before this run's night, in runs
-- of the same pipeline (one figure per night: the latest run's): how many,
-- their median and their robust standard deviation (1.4826 x the median
-- absolute deviation: a dip it was flagged for does not widen it), the
-- latest figure and driver.
create function rl_gpu_history(run_id bigint, nights integer)
returns table (gpu_uuid text, name text, n bigint, median double precision,
	       sd double precision, last_value double precision,
	       last_driver text, last_night date)
language sql stable as $$
	with me as (
		select r.pipeline_name, r.night, r.owner, r.facility
		from runs r where r.id = run_id
	), gpus as (
		select distinct c.gpu_uuid from ceilings c
		where c.run_id = rl_gpu_history.run_id and c.method = 'empirical'
	), earlier as (
		select distinct on (c.gpu_uuid, c.name, r.night)
		       c.gpu_uuid, c.name, c.value, c.driver, r.night
		from ceilings c
		join runs r on r.id = c.run_id, me
		where c.gpu_uuid in (select g.gpu_uuid from gpus g)
		  and c.method = 'empirical'
		  and r.pipeline_name = me.pipeline_name
		  and r.owner = me.owner and r.facility = me.facility
		  and r.night < me.night
		  and r.night >= me.night - nights
		order by c.gpu_uuid, c.name, r.night, r.id desc
	), mid as (
		select e.gpu_uuid, e.name,
		       percentile_cont(0.5) within group (order by e.value) as median
		from earlier e group by e.gpu_uuid, e.name
	)
	select e.gpu_uuid, e.name, count(*), m.median,
	       1.4826 * percentile_cont(0.5) within group (order by abs(e.value - m.median)),
	       (array_agg(e.value order by e.night desc))[1],
	       (array_agg(e.driver order by e.night desc))[1],
	       max(e.night)
	from earlier e join mid m on m.gpu_uuid = e.gpu_uuid and m.name = e.name
	group by e.gpu_uuid, e.name, m.median
$$;

-- The run a kernel regression is judged against by default: the latest
-- earlier successful run of the same pipeline, owner and facility flag
-- (so a user's history never reaches another's) with points on the same GPU
-- model.  Null when there is none.
create function rl_baseline_run(run_id bigint) returns bigint
language sql stable as $$
	select b.id from runs b, runs me
	where me.id = run_id and b.pipeline_name = me.pipeline_name
	  and b.owner = me.owner and b.facility = me.facility
	  and b.id < me.id and b.state = 'succeeded'
	  and exists (select 1 from points pb where pb.run_id = b.id
	              and pb.invocation = 'all'
	              and pb.gpu_name in (select pm.gpu_name from points pm
	                                  where pm.run_id = me.id))
	order by b.night desc, b.id desc limit 1
$$;

-- A run's aggregate points (one per kernel, level and precision) with the
-- empirical ceiling of the roof that bounds each.
create function rl_run_points(run_id bigint)
returns table (kernel text, level text, "precision" text, ai double precision,
	       gflops double precision, time_s double precision,
	       bound_ceiling text, roof double precision, gpu_name text,
	       gpu_uuid text)
language sql stable as $$
	select distinct on (p.kernel, p.level, p.precision)
	       p.kernel, p.level, p.precision, p.ai, p.gflops, p.time_s,
	       p.bound_ceiling,
	       (select c.value from ceilings c
	        where c.run_id = p.run_id and c.method = 'empirical'
	          and c.name = p.bound_ceiling
	          and (c.gpu_uuid = p.gpu_uuid or p.gpu_uuid is null)
	        order by c.id desc limit 1),
	       p.gpu_name, p.gpu_uuid
	from points p
	where p.run_id = rl_run_points.run_id and p.invocation = 'all'
	  and p.ai is not null and p.gflops is not null
	order by p.kernel, p.level, p.precision, p.id desc
$$;

-- A kernel's own history: for each kernel, level and precision of run
-- `run_id`, the robust relative spread (1.4826 x median absolute deviation
-- / median: a regression in the window does not widen it) of its AI and
-- GFLOP/s over the `lookback` latest earlier successful runs of the same
-- pipeline, owner and facility flag.
create function rl_kernel_noise(run_id bigint, lookback integer)
returns table (kernel text, level text, "precision" text, n bigint,
	       ai_cv double precision, gflops_cv double precision)
language sql stable as $$
	with me as (
		select r.pipeline_name, r.id, r.owner, r.facility
		from runs r where r.id = run_id
	), earlier as (
		select b.id from runs b, me
		where b.pipeline_name = me.pipeline_name and b.id < me.id
		  and b.owner = me.owner and b.facility = me.facility
		  and b.state = 'succeeded'
		order by b.id desc limit lookback
	), pts as (
		select p.kernel, p.level, p.precision, p.ai, p.gflops
		from points p
		where p.run_id in (select e.id from earlier e) and p.invocation = 'all'
		  and (p.kernel, p.level, p.precision) in
		      (select q.kernel, q.level, q.precision from points q
		       where q.run_id = rl_kernel_noise.run_id)
	), mid as (
		select t.kernel, t.level, t.precision,
		       percentile_cont(0.5) within group (order by t.ai) as ai,
		       percentile_cont(0.5) within group (order by t.gflops) as gflops
		from pts t group by t.kernel, t.level, t.precision
	)
	select t.kernel, t.level, t.precision, count(*),
	       coalesce(1.4826 * percentile_cont(0.5) within group (order by abs(t.ai - m.ai))
	                / nullif(m.ai, 0), 0),
	       coalesce(1.4826 * percentile_cont(0.5) within group (order by abs(t.gflops - m.gflops))
	                / nullif(m.gflops, 0), 0)
	from pts t join mid m on m.kernel = t.kernel and m.level = t.level
	                     and m.precision = t.precision
	group by t.kernel, t.level, t.precision, m.ai, m.gflops
$$;

grant execute on function rl_gpu_history(bigint, integer), rl_baseline_run(bigint),
	rl_run_points(bigint), rl_kernel_noise(bigint, integer) to roofline_users;
