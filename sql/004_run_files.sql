-- 004_run_files.sql - files a user attaches to a run (`roofline submit
-- --attach FILE`), e.g. an existing Nsight Compute export to import.  They
-- travel with the run, in the same transaction as its row, and the daemon
-- writes them into the run directory (inputs/NAME, owned by the run's user)
-- before any step starts, so steps name them with paths that stay inside
-- the run directory.
create table run_files (
	run_id   bigint not null references runs (id) on delete cascade,
	name     text not null check (name ~ '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$'),
	content  bytea not null check (length(content) <= 64 * 1024 * 1024),
	primary key (run_id, name)
);

alter table run_files enable row level security;
grant select, insert on run_files to roofline_users;
create policy run_files_visible on run_files for select to roofline_users
	using (exists (select 1 from runs r where r.id = run_id));
create policy run_files_attach on run_files for insert to roofline_users
	with check (exists (select 1 from runs r where r.id = run_id
	            and r.owner = current_user and r.state = 'queued'));
