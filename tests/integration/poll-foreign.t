#!/bin/bash
# Issue 27: the daemon's Slurm polling must not grow with jobs that are not
# its own.  The same run (ten Slurm steps that sleep 4 s, followed by the
# daemon every 300 ms) twice: on a quiet cluster, then beside FOREIGN pending
# jobs of another user (in a DOWN partition of their own, so that they stay
# queued and take no node).  What the daemon received from slurmctld
# meanwhile (its recv calls on slurmctld's port, seen by strace -yy) must not
# grow by more than a small bound.  A poll that loads the whole job table
# (the daemon before issue 27: slurm_load_jobs each poll after the table
# changed) receives every foreign job's record again and again: megabytes.
# sdiag's counts of the job-reading RPC types are shown for each phase.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
daemon_setup
daemon_start

FOREIGN=${FOREIGN:-1000}
BOUND_KB=2048 # what FOREIGN jobs may add (the old poll: 17.8 MB with 2,000)
PART=foreign$$
SUBMIT=$BUILD/bench/engine-submit
[[ -x $SUBMIT ]] || bail_out "no $SUBMIT (the Makefile's TEST_DEPS build it)"

# ten Slurm jobs of alice at once: the daemon asks for her jobs in one RPC
# (more than slurm.c's POLL_PER_ID_MAX of one user); the steps' files, by
# their ids, are covered by every other test's single jobs
{
	printf 'name: pollcost\nslurm: { partition: gpu, time: "00:02:00" }\nsteps:\n'
	for i in 0 1 2 3 4 5 6 7 8 9; do
		printf '  - { id: wait%s, plugin: smoke, with: { sleep: 4 } }\n' "$i"
	done
} >"$TEST_TMP/pollcost.yaml"
chmod 0644 "$TEST_TMP/pollcost.yaml"

command -v strace >/dev/null || skip_all "no strace (it counts what the daemon receives)"
CTLD_PORT=$(scontrol show config | awk '$1 == "SlurmctldPort" { print $3 }')
[[ $CTLD_PORT =~ ^[0-9]+$ ]] || bail_out "no SlurmctldPort in scontrol show config"

# from_ctld FILE: bytes the traced process received on slurmctld's port
from_ctld() {
	awk -v port=":$CTLD_PORT]" 'index($0, port) && / = [0-9]+$/ { n += $NF }
		END { print n + 0 }' "$1"
}
# the sdiag lines of the RPC types that read jobs, in one line
job_rpcs() {
	sdiag 2>/dev/null | awk '/^Remote Procedure Call statistics by message type/ { on = 1; next }
		/^Remote Procedure Call statistics by user/ { on = 0 }
		on && /REQUEST_JOB_(INFO|USER_INFO)/ { c = $0; sub(/.*count:/, "", c); sub(/ .*/, "", c)
			printf "%s%s %s", sep, $1, c; sep = ", " }'
}

# one_run TAG: the run, and what the daemon received from slurmctld
# meanwhile (kB) in READ_KB
one_run() {
	local run trace=$TEST_TMP/strace.$((++N_RUNS)) spid
	sdiag --reset >/dev/null 2>&1
	strace -f -qq -yy -e trace=read,recvfrom,recvmsg -e signal=none \
		-o "$trace" -p "$DAEMON_PID" &
	spid=$!
	wait_for "[[ -s '$trace' ]] || grep -q TracerPid:.[1-9] /proc/$DAEMON_PID/status" 10
	run=$(submit_as alice "$TEST_TMP/pollcost.yaml")
	wait_run "$run" 60
	kill "$spid"
	wait "$spid" 2>/dev/null
	is "$(run_state "$run")" succeeded "$1: the run succeeded"
	READ_KB=$(($(from_ctld "$trace") / 1024))
	diag "$1: the daemon received $READ_KB kB from slurmctld; sdiag: $(job_rpcs)"
}
N_RUNS=0

one_run "no foreign jobs"
quiet_kb=$READ_KB

scontrol create partitionname="$PART" nodes=ALL state=DOWN >/dev/null ||
	bail_out "cannot create partition $PART"
on_exit "scontrol delete partitionname='$PART' >/dev/null 2>&1"
on_exit "scancel -p '$PART' >/dev/null 2>&1"
t0=$SECONDS
out=$("$SUBMIT" bob "$PART" "$FOREIGN" "other" 2>&1)
is "$?" 0 "$FOREIGN foreign jobs queued ($((SECONDS - t0)) s: $out)"
is "$(squeue -h -p "$PART" -t PD -o %i | wc -l)" "$FOREIGN" "all of them pending"

one_run "$FOREIGN foreign jobs"
busy_kb=$READ_KB
ok "the foreign jobs added under $BOUND_KB kB to what the daemon received ($quiet_kb -> $busy_kb kB)" \
	test $((busy_kb - quiet_kb)) -lt "$BOUND_KB"

done_testing
