#!/bin/bash
# The local cluster on a machine with GPUs (scripts/cluster's real-GPU
# branch), without one: ROOFLINE_GPU_DEVICES names stand-in character
# devices nvidia0 and nvidia1 (/dev/null's numbers) as the machine's GPUs.
# Two nodes of one GPU each take one apiece (gres.conf names them), and a
# job on rl-node2 gets CUDA_VISIBLE_DEVICES=1, the machine's number of its
# GPU: Slurm says 0 (node-local), which on one shared machine is the other
# node's GPU (seen on a 2-GPU machine: both nodes' ert ran on GPU 0).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

[[ $EUID == 0 ]] || skip_all "needs root (starts munged, slurmd, postgres, network namespaces)"

VAR2=$TEST_TMP/var
export ROOFLINE_VAR=$VAR2 ROOFLINE_NODES=2 ROOFLINE_GPUS_PER_NODE=1
DEVS=$TEST_TMP/dev
mkdir -p "$DEVS"
for n in 0 1; do
	mknod -m 0666 "$DEVS/nvidia$n" c 1 3 || bail_out "cannot make stand-in devices in $DEVS"
done
export ROOFLINE_GPU_DEVICES="$DEVS/nvidia0 $DEVS/nvidia1"
CLUSTER=$ROOT/scripts/cluster
on_exit "'$CLUSTER' stop >/dev/null 2>&1"
JOBS=$TEST_TMP/jobs
mkdir -p "$JOBS" && chmod 1777 "$JOBS"

ok "start a 2-node cluster whose GPUs are $DEVS/nvidia0 and nvidia1" "$CLUSTER" start
eval "$("$CLUSTER" env)"
is "$(grep -v '^#' "$VAR2/slurm/gres.conf")" "NodeName=rl-node1 Name=gpu File=$DEVS/nvidia0
NodeName=rl-node2 Name=gpu File=$DEVS/nvidia1" "gres.conf: one GPU a node, the machine's, in turn"
like "$(grep '^TaskProlog=' "$VAR2/slurm/slurm.conf")" "^TaskProlog=$VAR2/slurm/task-prolog\$" \
	"slurm.conf names the TaskProlog"

declare -A ids
# shellcheck disable=SC2317 # called through wait_for
job_done() { [[ -s $2 ]] && [[ $(squeue -h -j "$1" 2>/dev/null) == "" ]]; }
for node in rl-node1 rl-node2; do
	# shellcheck disable=SC2016 # expanded by the job
	id=$(sbatch --parsable -w "$node" --gres=gpu:1 -o "$JOBS/$node.out" -D "$JOBS" \
		--wrap 'echo "gpus=$CUDA_VISIBLE_DEVICES slurm=$SLURM_JOB_GPUS"' 2>&1)
	like "$id" '^[0-9]+$' "sbatch -w $node --gres=gpu:1 accepted"
	ok "... the job on $node ends" wait_for "job_done $id $JOBS/$node.out" 30
	ids[$node]=$id
done
is "$(cat "$JOBS/rl-node1.out")" "gpus=0 slurm=0" "rl-node1's job: CUDA_VISIBLE_DEVICES=0 (nvidia0)"
is "$(cat "$JOBS/rl-node2.out")" "gpus=1 slurm=0" \
	"rl-node2's job: CUDA_VISIBLE_DEVICES=1 (nvidia1), where Slurm said 0"
like "$(cat "$VAR2/slurm/log/gpu-jobs.log")" \
	"job ${ids[rl-node2]} node rl-node2 SLURM_JOB_GPUS=0 CUDA_VISIBLE_DEVICES=0 -> 1" \
	"gpu-jobs.log: rl-node2's job mapped 0 -> 1"

ok "stop" "$CLUSTER" stop
done_testing
