#!/bin/bash
# The local cluster's life: a second private cluster (its own ROOFLINE_VAR)
# starts, starts again harmlessly, runs a GPU job, serves PostgreSQL over its
# socket, survives kill -9 of every daemon, and stops leaving nothing behind.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

[[ $EUID == 0 ]] || skip_all "needs root (starts munged, slurmd, postgres)"

# The cluster run-integration started (if any) keeps running beside ours.
MAIN_VAR=${ROOFLINE_VAR:-$ROOT/var}
VAR2=$TEST_TMP/var
export ROOFLINE_VAR=$VAR2
CLUSTER=$ROOT/scripts/cluster
on_exit "'$CLUSTER' stop >/dev/null 2>&1"

# Our cluster's live processes: daemons by command line, PostgreSQL's
# children by their working directory (zombies have neither).
cluster_procs() {
	local d
	{
		pgrep -f "$VAR2/"
		for d in /proc/[0-9]*; do
			[[ $(readlink "$d/cwd" 2>/dev/null) == "$VAR2"/* ]] && echo "${d#/proc/}"
		done
	} | sort -un
}

# job_done ID OUT: Slurm has forgotten or completed the job, and OUT exists.
# shellcheck disable=SC2317 # called through wait_for's eval
job_done() {
	local st
	st=$(scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*')
	[[ -z $st || $st == JobState=COMPLETED ]] && [[ -s $2 ]]
}

run_job() {
	local name=$1 out=$TEST_TMP/$1.out id
	# shellcheck disable=SC2016 # expanded by the job
	id=$(sbatch --parsable --gres=gpu:1 -J "$name" -o "$out" -D "$TEST_TMP" \
		--wrap 'hostname; echo "gpus=$CUDA_VISIBLE_DEVICES"' 2>&1)
	like "$id" '^[0-9]+$' "$name: sbatch --gres=gpu:1 accepted" || return
	if wait_for "job_done $id $out" 30; then
		pass "$name: job $id completed"
	else
		fail "$name: job $id completed"
		diag "$(scontrol show job "$id" 2>&1)"
	fi
	is "$(head -n 1 "$out" 2>/dev/null)" "$(hostname)" "$name: job output has the hostname"
	like "$(cat "$out" 2>/dev/null)" 'gpus=[0-9]' "$name: job got a GPU"
}

psql_root() {
	psql -X -At -h "$PGHOST" -p "$PGPORT" -U rooflined -d rooflined -c "$1" 2>&1
}

# --- first start ---
ok "start a fresh cluster in $VAR2" "$CLUSTER" start
out=$("$CLUSTER" start 2>&1)
is "$?" 0 "a second start succeeds"
is "$(grep -c 'already running' <<<"$out")" 4 "... and says every piece is already running"
ok "status: all running" "$CLUSTER" status
eval "$("$CLUSTER" env)"
is "$SLURM_CONF" "$VAR2/slurm/slurm.conf" "env points SLURM_CONF at the private slurm.conf"
is "$ROOFLINE_VAR" "$VAR2" "env exports ROOFLINE_VAR"
if [[ -r $MAIN_VAR/ports ]]; then
	unlike "$(cat "$VAR2/ports")" "$(paste -sd'|' "$MAIN_VAR/ports")" "ports differ from the main cluster's"
else
	skip "no main cluster in $MAIN_VAR to compare ports with"
fi
is "$(stat -c '%U %a' "$VAR2/munge/munge.key")" "munge 400" "munge key is 0400, owned by munge"

# --- Slurm and PostgreSQL work ---
is "$(sinfo -h -o '%P %T' | head -n 1)" "gpu* idle" "partition gpu is the default, node idle"
run_job first
is "$(psql_root 'select current_user')" rooflined "psql as root over the socket is role rooflined"
is "$(psql_root 'select pg_catalog.pg_get_userbyid(datdba) from pg_database where datname = current_database()')" \
	rooflined "database rooflined is owned by rooflined"
ok "another OS user reaches the PostgreSQL socket" \
	runuser -u nobody -- pg_isready -q -h "$PGHOST" -p "$PGPORT"
ok "another OS user can use Slurm (munge socket, slurm.conf)" \
	runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" sinfo -h

# --- kill -9 everything, start again ---
mapfile -t pids < <(cluster_procs)
kill -9 "${pids[@]}" 2>/dev/null
# shellcheck disable=SC2016 # eval'd by wait_for
wait_for '[[ -z $(cluster_procs) ]]' 10
"$CLUSTER" status >/dev/null 2>&1
is "$?" 3 "after kill -9 of ${#pids[@]} processes: status exits 3"
ok "start after kill -9 (stale pid files, sockets, postmaster.pid)" "$CLUSTER" start
ok "status: all running again" "$CLUSTER" status
run_job second
is "$(psql_root 'select 1')" 1 "psql works after the restart"
ok "restart-pg" "$CLUSTER" restart-pg
is "$(psql_root 'select 2')" 2 "psql works after restart-pg"

# --- stop ---
ok "stop" "$CLUSTER" stop
"$CLUSTER" status >/dev/null 2>&1
is "$?" 3 "status after stop exits 3"
left=$(cluster_procs | while read -r p; do ps -o pid=,args= -p "$p"; done)
is "$left" "" "no process of the cluster remains"
ok "stop on a stopped cluster succeeds" "$CLUSTER" stop

done_testing
