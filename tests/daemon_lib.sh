# tests/daemon_lib.sh - helpers for integration tests that drive rooflined.
# shellcheck shell=bash
#
# Source after tests/lib.sh and need_cluster.  Gives:
#   daemon_setup        test users alice, bob, rlfacility (OS users and
#                       PostgreSQL roles), a config in $TEST_TMP, DAEMON_LOG
#   daemon_start / daemon_stop / daemon_kill9
#   as USER CMD...      run CMD as USER with the cluster's environment
#   sql "SELECT ..."    one value (psql as root -> role rooflined)
#   pg_admin "SQL"      the same as the database superuser (postgres): roles
#                       are made by it, not by the daemon's role
#   run_state RUN, wait_run RUN TIMEOUT, submit_as USER FILE
#   config_range_refused KEY (a setting of 1 to 16)

SPOOL=${ROOFLINE_VAR}/spool-$$
FACILITY_DIR=$TEST_TMP/facility
DAEMON_LOG=$TEST_TMP/rooflined.log
DAEMON_CONF=$TEST_TMP/rooflined.yaml
DAEMON_PIDFILE=$TEST_TMP/rooflined.pid
# Leaks of libslurm's and libpq's process-lifetime state are not ours.
export LSAN_OPTIONS=${LSAN_OPTIONS:-detect_leaks=0}

sql() {
	psql -X -q -t -A -v ON_ERROR_STOP=1 -c "$1" 2>&1
}

# rows_differ A B: "rows of A not in B, rows of B not in A" (two queries)
rows_differ() {
	echo "$(sql "select count(*) from (($1) except all ($2)) d") $(sql "select count(*) from (($2) except all ($1)) d")"
}

# noise_011_sql LOOKBACK: rl_kernel_noise's answer for every run as
# sql/011 computed it (two passes of percentile_cont, joined): "run id,
# kernel, level, precision, n, ai_cv, gflops_cv" rows, the reference the
# C aggregate (sql/028) and the kernel series (sql/030) are held to.
noise_011_sql() {
	echo "select r.id, x.* from runs r, lateral (
	with me as (select r.pipeline_name, r.id, r.owner, r.facility),
	earlier as (select b.id from runs b, me where b.pipeline_name = me.pipeline_name and b.id < me.id
		and b.owner = me.owner and b.facility = me.facility and b.state = 'succeeded'
		order by b.id desc limit $1),
	pts as (select p.kernel, p.level, p.precision, p.ai, p.gflops from points p
		where p.run_id in (select e.id from earlier e) and p.invocation = 'all'
		  and (p.kernel, p.level, p.precision) in
		      (select q.kernel, q.level, q.precision from points q where q.run_id = r.id)),
	mid as (select t.kernel, t.level, t.precision,
		       percentile_cont(0.5) within group (order by t.ai) as ai,
		       percentile_cont(0.5) within group (order by t.gflops) as gflops
		from pts t group by t.kernel, t.level, t.precision)
	select t.kernel, t.level, t.precision, count(*),
	       coalesce(1.4826 * percentile_cont(0.5) within group (order by abs(t.ai - m.ai)) / nullif(m.ai, 0), 0),
	       coalesce(1.4826 * percentile_cont(0.5) within group (order by abs(t.gflops - m.gflops)) / nullif(m.gflops, 0), 0)
	from pts t join mid m on m.kernel = t.kernel and m.level = t.level and m.precision = t.precision
	group by t.kernel, t.level, t.precision, m.ai, m.gflops) x"
}

pg_admin() {
	runuser -u postgres -- env PGUSER=postgres PGDATABASE="$PGDATABASE" \
		PGHOST="$PGHOST" PGPORT="$PGPORT" psql -X -q -t -A -v ON_ERROR_STOP=1 -c "$1" 2>&1
}

as() {
	local user=$1
	shift
	runuser -u "$user" -- env -u PGUSER PATH="$PATH" SLURM_CONF="$SLURM_CONF" \
		PGHOST="$PGHOST" PGPORT="$PGPORT" PGDATABASE="$PGDATABASE" \
		LSAN_OPTIONS="$LSAN_OPTIONS" "$@"
}

daemon_setup() {
	local u
	for u in alice bob rlfacility; do
		"$ROOT/scripts/cluster" add-user "$u" >/dev/null || bail_out "cannot add user $u"
	done
	mkdir -p "$SPOOL" "$FACILITY_DIR"
	chmod 0755 "$SPOOL" "$TEST_TMP"
	cat >"$DAEMON_CONF" <<CONF
database: ""
spool_dir: $SPOOL
plugin_dir: $BUILD/plugins
pipeline_dir: $FACILITY_DIR
job_program: $BIN/roofline-job
facility_user: rlfacility
pidfile: $DAEMON_PIDFILE
poll_interval: 300ms
retry_backoff: 1s
kill_grace: 2s
log_level: info
log: stderr
CONF
	on_exit daemon_stop
	on_exit "rm -rf '$SPOOL'"
}

# The users' roles (scripts/cluster add-user made them; a test database of
# its own may lack them), made by the superuser.
daemon_roles() {
	local u
	for u in alice bob; do
		pg_admin "do \$\$ begin if not exists (select 1 from pg_roles where rolname = '$u') then create role $u login in role roofline_users; end if; end \$\$" >/dev/null
	done
}

daemon_start() {
	"$BIN/rooflined" --foreground --config "$DAEMON_CONF" >>"$DAEMON_LOG" 2>&1 &
	DAEMON_PID=$!
	wait_for "grep -q 'started (pid $DAEMON_PID' '$DAEMON_LOG'" 30 ||
		{ diag "$(tail -20 "$DAEMON_LOG")"; bail_out "rooflined did not start"; }
	daemon_roles
}

daemon_stop() {
	[[ -n ${DAEMON_PID:-} ]] || return 0
	kill -TERM "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

daemon_kill9() {
	kill -KILL "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

# config_range_refused KEY: rooflined --check-config refuses KEY (a count
# of 1 to 16) at 0, 17 and "four", naming the file, line, column (the
# value's: after "KEY: ") and the range, and takes 16.
config_range_refused() {
	local key=$1 v f out
	for v in 0 17 four; do
		f=$TEST_TMP/$key-$v.yaml
		printf 'poll_interval: 1s\n%s: %s\n' "$key" "$v" >"$f"
		out=$("$BIN/rooflined" --check-config -c "$f" 2>&1)
		is "$?" 1 "--check-config refuses $key: $v"
		like "$out" "$key-$v.yaml:2:$((${#key} + 3)): bad value for '$key' \(.*1 to 16\)" \
			"naming the file, line, column and the range"
	done
	printf '%s: 16\n' "$key" >"$TEST_TMP/$key-16.yaml"
	ok "and takes $key: 16" "$BIN/rooflined" --check-config -c "$TEST_TMP/$key-16.yaml"
}

run_state() {
	sql "select state from runs where id = $1"
}

# wait_run RUN TIMEOUT: until the run has ended (succeeded/failed/cancelled).
wait_run() {
	wait_for "[[ \$(run_state $1) =~ ^(succeeded|failed|cancelled)\$ ]]" "${2:-60}"
}

# site_settled TEST: the daemon rebuilds the site in a child of its own
# (rooflined --rebuild-site, daemon/site_child.h) after runs end.  Waits
# until TEST (a shell condition: the page expected) holds and no rebuild of
# this daemon runs any more.
site_settled() {
	wait_for "$1" "${2:-60}" &&
		wait_for "! pgrep -f -- '--rebuild-site -f -c $DAEMON_CONF' >/dev/null" "${2:-60}"
}

# submit_as USER FILE: prints the run id (empty on failure).
submit_as() {
	as "$1" "$BIN/roofline" submit "$2" 2>>"$TEST_TMP/submit.err"
}
