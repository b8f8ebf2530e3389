#!/bin/bash
# The foundation's path, without the engine: a batch job submitted through
# libslurm from C as an ordinary user, waited for, and its end state and exit
# code written to PostgreSQL through libpq with parameters.
. "$(dirname "$0")/../lib.sh"
need_cluster
plan 6

"$ROOT/scripts/cluster" add-user alice >/dev/null
work=$TEST_TMP/probe
mkdir -p "$work" && chown alice "$work"
out=$("$BUILD/tests/slurm_pg_probe" alice 3 "$work" 2>&1)
is "$?" 0 "probe submitted, waited for and stored its job"
like "$out" '^job [0-9]+ FAILED 3$' "Slurm reported FAILED with exit code 3"
job=$(awk '{print $2}' <<<"$out")
row=$(psql -X -t -A -c "select state || ',' || exit_code from probe_jobs where job_id = $job")
is "$row" "FAILED,3" "the row in PostgreSQL holds the state and the exit code"
is "$(cat "$work/uid.txt")" "$(id -u alice)" "the job ran as alice, not root"

out=$("$BUILD/tests/slurm_pg_probe" alice 0 "$work" 2>&1)
like "$out" '^job [0-9]+ COMPLETED 0$' "a job exiting 0 is COMPLETED"
job=$(awk '{print $2}' <<<"$out")
is "$(psql -X -t -A -c "select state from probe_jobs where job_id = $job")" COMPLETED \
	"and stored as such"
