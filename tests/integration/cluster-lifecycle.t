#!/bin/bash
# The local cluster's life: a second private cluster (its own ROOFLINE_VAR)
# starts 4 nodes, each a slurmd with its own hostname in its own network
# namespace and 2 GPUs, starts again harmlessly, runs a GPU job on each node
# (as root and as an ordinary user), serves PostgreSQL over its socket to a
# user that add-user made, loses a node to node-kill and gets it back, keeps
# a drain, survives kill -9 of every process, stops leaving no process,
# namespace or interface behind, and runs with --nodes 1 too.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

[[ $EUID == 0 ]] || skip_all "needs root (starts munged, slurmd, postgres, network namespaces)"

# The cluster run-integration started (if any) keeps running beside ours.
MAIN_VAR=${ROOFLINE_VAR:-$ROOT/var}
VAR2=$TEST_TMP/var
export ROOFLINE_VAR=$VAR2
unset ROOFLINE_NODES
CLUSTER=$ROOT/scripts/cluster
on_exit "'$CLUSTER' stop >/dev/null 2>&1"
NODES=(rl-node1 rl-node2 rl-node3 rl-node4)
# Job output, written by root's and a user's jobs.
JOBS=$TEST_TMP/jobs
mkdir -p "$JOBS" && chmod 1777 "$JOBS"

# The subnet octet our cluster picked (its namespaces are rooflined-$NET-*).
net() { sed -n 's/^net=//p' "$VAR2/topology" 2>/dev/null; }

# Our cluster's live processes: daemons by command line, PostgreSQL's
# children by their working directory (zombies have neither), and all that
# runs in our nodes' network namespaces.
cluster_procs() {
	local ns
	{
		pgrep -f "$VAR2/"
		find /proc/[0-9]*/cwd -maxdepth 0 -lname "$VAR2/*" 2>/dev/null | cut -d/ -f3
		for ns in $(our_netns); do
			ip netns pids "$ns"
		done
	} | sort -un
}

our_netns() { ip netns list | awk -v pre="rooflined-$(net)-" 'index($1, pre) == 1 { print $1 }' | sort; }
our_links() { ip -o link show 2>/dev/null | awk -F': ' -v n="$(net)" '$2 ~ "^(rlbr" n "|rl" n "n[0-9]+)(@|$)" { print $2 }'; }

# job_done ID OUT: Slurm has forgotten or completed the job, and OUT exists.
# shellcheck disable=SC2317 # called through wait_for's eval
job_done() {
	local st
	st=$(scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*')
	[[ -z $st || $st == JobState=COMPLETED ]] && [[ -s $2 ]]
}

# run_jobs TAG USER NODE...: one job per node, pinned to it with 2 GPUs, run
# as USER; each must report the node's name as its hostname, both GPUs and
# USER.
run_jobs() {
	local tag=$1 user=$2 node out id ids=() line
	shift 2
	for node in "$@"; do
		out=$JOBS/$tag-$node.out
		# shellcheck disable=SC2016 # expanded by the job
		id=$(runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -w "$node" \
			--gres=gpu:2 -J "$tag" -o "$out" -D "$JOBS" \
			--wrap 'echo "$(hostname) gpus=$CUDA_VISIBLE_DEVICES user=$(id -un)"' 2>&1)
		like "$id" '^[0-9]+$' "$tag: sbatch -w $node --gres=gpu:2 as $user accepted" || id=none
		ids+=("$id")
	done
	for node in "$@"; do
		id=${ids[0]}
		ids=("${ids[@]:1}")
		out=$JOBS/$tag-$node.out
		if wait_for "job_done $id $out" 30; then
			line=$(head -n 1 "$out")
		else
			line="job $id did not complete: $(scontrol show job "$id" 2>&1 | grep -o 'JobState=[A-Z_]*')"
		fi
		is "$line" "$node gpus=0,1 user=$user" "$tag: the job on $node reports hostname $node, GPUs 0 and 1, user $user"
	done
}

psql_root() {
	psql -X -At -h "$PGHOST" -p "$PGPORT" -U rooflined -d rooflined -c "$1" 2>&1
}

# node_state NODE: Slurm's state of NODE as sinfo prints it (%T).
node_state() { sinfo -h -N -n "$1" -o %T 2>/dev/null; }
# slurm_state NODE: the node's State as scontrol prints it (DOWN+NOT_RESPONDING).
slurm_state() { scontrol -o show node "$1" 2>/dev/null | grep -o 'State=[^ ]*' | cut -d= -f2; }

# --- first start ---
t0=$(date +%s%N)
ok "start a fresh 4-node cluster in $VAR2" "$CLUSTER" start
note "start took $((($(date +%s%N) - t0) / 1000000)) ms"
out=$("$CLUSTER" start 2>&1)
is "$?" 0 "a second start succeeds"
is "$(grep -c 'already running' <<<"$out")" 7 "... says munged, slurmctld, 4 slurmd and postgres are already running"
is "$(grep -c 'starting' <<<"$out")" 0 "... and starts nothing"
ok "status: all running" "$CLUSTER" status
is "$("$CLUSTER" status | grep -c '^slurmd rl-node[1-4]: *running')" 4 "status has a running line per node"
eval "$("$CLUSTER" env)"
is "$SLURM_CONF" "$VAR2/slurm/slurm.conf" "env points SLURM_CONF at the private slurm.conf"
is "$ROOFLINE_VAR" "$VAR2" "env exports ROOFLINE_VAR"
if [[ -r $MAIN_VAR/ports ]]; then
	unlike "$(cat "$VAR2/ports")" "$(paste -sd'|' "$MAIN_VAR/ports")" "ports differ from the main cluster's"
	isnt_net=$(sed -n 's/^net=//p' "$MAIN_VAR/topology" 2>/dev/null)
	like "$(net)" "^[0-9]+$" "our cluster has a subnet"
	unlike "$(net)" "^${isnt_net:-none}$" "... not the main cluster's (10.213.${isnt_net:-?}.0/24)"
else
	skip "no main cluster in $MAIN_VAR to compare ports and subnets with" 3
fi
is "$(stat -c '%U %a' "$VAR2/munge/munge.key")" "munge 400" "munge key is 0400, owned by munge"

# --- 4 nodes, each in its own namespace, 2 GPUs each ---
is "$(sinfo -h -N -o '%N %P %T %G' | sort | paste -sd,)" \
	"rl-node1 gpu* idle gpu:2,rl-node2 gpu* idle gpu:2,rl-node3 gpu* idle gpu:2,rl-node4 gpu* idle gpu:2" \
	"sinfo: 4 idle nodes in the default partition gpu, each with gres gpu:2"
is "$(our_netns | paste -sd,)" \
	"rooflined-$(net)-rl-node1,rooflined-$(net)-rl-node2,rooflined-$(net)-rl-node3,rooflined-$(net)-rl-node4" \
	"one network namespace per node"
declare -A seen=()
self_ns=$(readlink /proc/self/ns/net)
for node in "${NODES[@]}"; do
	pid=$(cat "$VAR2/slurm/run/slurmd-$node.pid" 2>/dev/null)
	seen[$(readlink "/proc/${pid:-0}/ns/net" 2>/dev/null || echo none)]=1
done
is "${#seen[@]}" 4 "the 4 slurmd run in 4 different network namespaces"
is "${seen[$self_ns]:-}" "" "... none of them ours"
is "$("$CLUSTER" node-exec rl-node3 hostname 2>&1)" rl-node3 "node-exec runs in the node's UTS namespace"
is "$("$CLUSTER" node-exec rl-node3 ip -4 -o addr show dev eth0 2>&1 | awk '{ print $4 }')" \
	"10.213.$(net).13/24" "... and network namespace (rl-node3 is 10.213.$(net).13)"
is "$(ip -4 route show match "10.213.$(net).13" | grep -v '^default' | awk '{ print $1, $3 }')" \
	"10.213.$(net).0/24 rlbr$(net)" "the subnet is reached through our bridge alone"
run_jobs first root "${NODES[@]}"

# --- a node crashes: node-kill (Slurm notices below, after SlurmdTimeout) ---
id=$(sbatch --parsable -w rl-node3 -o /dev/null --wrap 'sleep 300' 2>&1)
ok "a long job runs on rl-node3" wait_for "[[ \$(squeue -h -j '$id' -o %T) == RUNNING ]]" 30
# shellcheck disable=SC2016 # eval'd by wait_for
ok "... with its processes in rl-node3's namespace" \
	wait_for '[[ $(ip netns pids rooflined-$(net)-rl-node3 | xargs -r ps -o args= -p) == *"sleep 300"* ]]' 10
out=$("$CLUSTER" node-kill rl-node3 2>&1)
is "$?" 0 "node-kill rl-node3"
like "$out" "killed [0-9]+ process" "... says what it killed"
is "$(ip netns pids "rooflined-$(net)-rl-node3")" "" "nothing runs in rl-node3's namespace any more"
"$CLUSTER" status >/dev/null 2>&1
is "$?" 3 "status exits 3 with one node killed"
like "$("$CLUSTER" status 2>&1)" "slurmd rl-node3: *stopped" "... and names the node"
like "$(node_state rl-node1)" "^(idle|mixed)$" "rl-node1 is untouched"

# --- users: add-user makes the OS user and the PostgreSQL role ---
ok "add-user rltestu" "$CLUSTER" add-user rltestu
on_exit "userdel -r rltestu >/dev/null 2>&1"
is "$(id -un rltestu 2>&1)" rltestu "the OS user exists"
is "$(runuser -u rltestu -- env -u PGUSER psql -X -At -h "$PGHOST" -p "$PGPORT" -d rooflined \
	-c "select current_user || ',' || pg_has_role('roofline_users', 'member')" 2>&1)" \
	"rltestu,true" "its role connects by peer authentication and is a roofline user"
out=$("$CLUSTER" add-user rltestu 2>&1)
is "$?" 0 "add-user again succeeds"
like "$out" "user rltestu: exists" "... and says the user exists"
like "$out" "role rltestu: exists" "... and the role too"
"$CLUSTER" add-user root >/dev/null 2>&1
is "$?" 1 "add-user root is refused"
run_jobs user rltestu rl-node2 rl-node4

is "$(psql_root 'select current_user')" rooflined "psql as root over the socket is role rooflined"
is "$(psql_root 'select pg_catalog.pg_get_userbyid(datdba) from pg_database where datname = current_database()')" \
	rooflined "database rooflined is owned by rooflined"
ok "another OS user reaches the PostgreSQL socket" \
	runuser -u nobody -- pg_isready -q -h "$PGHOST" -p "$PGPORT"
ok "another OS user can use Slurm (munge socket, slurm.conf)" \
	runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" sinfo -h

# Slurm notices the crash by itself (the tests above ran meanwhile).
# sinfo's %T says 'mixed*' while the killed job's CPUs are still held, so
# ask scontrol for the node's state.
# shellcheck disable=SC2016 # eval'd by wait_for
if wait_for '[[ $(slurm_state rl-node3) == DOWN* ]]' 60; then
	pass "Slurm marks rl-node3 DOWN (SlurmdTimeout)"
else
	fail "Slurm marks rl-node3 DOWN (SlurmdTimeout)"
	diag "state: $(slurm_state rl-node3)"
fi
is "$(slurm_state rl-node3)" DOWN+NOT_RESPONDING "... and not responding"
is "$(sinfo -h -N -n rl-node3 -o %E)" "Not responding" "... which is the reason sinfo gives"
like "$(squeue -h -j "$id" -o %T)" "^(PENDING|REQUEUED|COMPLETING)" "the job it ran is requeued, not running"
scancel "$id" 2>/dev/null
ok "node-start rl-node3" "$CLUSTER" node-start rl-node3
is "$(node_state rl-node3)" idle "rl-node3 is back and idle"
run_jobs back root rl-node3

# --- drain and down through Slurm ---
scontrol update nodename=rl-node2 state=drain reason="lifecycle test" 2>&1
is "$(sinfo -h -N -n rl-node2 -o '%T %E')" "drained lifecycle test" "rl-node2 drained, with its reason"
"$CLUSTER" start >/dev/null 2>&1
is "$(node_state rl-node2)" drained "a start leaves the drain of a running node alone"
scontrol update nodename=rl-node2 state=resume 2>&1
# Slurm pings a resumed node before it counts as responding again.
# shellcheck disable=SC2016 # eval'd by wait_for
wait_for '[[ $(node_state rl-node2) == idle ]]' 20
is "$(node_state rl-node2)" idle "resume makes it idle again"

# --- kill -9 everything, start again ---
mapfile -t pids < <(cluster_procs)
kill -9 "${pids[@]}" 2>/dev/null
# shellcheck disable=SC2016 # eval'd by wait_for
wait_for '[[ -z $(cluster_procs) ]]' 10 ||
	diag "still there after kill -9: $(cluster_procs | xargs -r ps -o pid=,stat=,args= -p)"
"$CLUSTER" status >/dev/null 2>&1
is "$?" 3 "after kill -9 of ${#pids[@]} processes: status exits 3"
ok "start after kill -9 (stale pid files, sockets, postmaster.pid, namespaces left)" "$CLUSTER" start
ok "status: all running again" "$CLUSTER" status
run_jobs second root "${NODES[@]}"
is "$(psql_root 'select 1')" 1 "psql works after the restart"
ok "restart-pg" "$CLUSTER" restart-pg
is "$(psql_root 'select 2')" 2 "psql works after restart-pg"

# --- stop ---
net_was=$(net)
ok "stop" "$CLUSTER" stop
"$CLUSTER" status >/dev/null 2>&1
is "$?" 3 "status after stop exits 3"
left=$(cluster_procs | while read -r p; do ps -o pid=,args= -p "$p"; done)
is "$left" "" "no process of the cluster remains"
is "$(ip netns list | grep -c "^rooflined-$net_was-")" 0 "no network namespace of the cluster remains"
is "$(our_links | paste -sd,)" "" "no bridge or veth of the cluster remains"
ok "stop on a stopped cluster succeeds" "$CLUSTER" stop

# --- one node ---
ok "start --nodes 1" "$CLUSTER" start --nodes 1
is "$(sinfo -h -N -o '%N %T %G' | paste -sd,)" "rl-node1 idle gpu:2" "one idle node with gres gpu:2"
is "$(our_netns | wc -l)" 1 "one network namespace"
run_jobs one root rl-node1
"$CLUSTER" start --nodes 2 >/dev/null 2>&1
is "$?" 1 "start --nodes 2 on a running 1-node cluster is refused"
ok "stop the 1-node cluster" "$CLUSTER" stop
is "$(cluster_procs)" "" "no process remains"
is "$(ip netns list | grep -c "^rooflined-$(net)-"; our_links)" 0 "no namespace or interface remains"

done_testing
