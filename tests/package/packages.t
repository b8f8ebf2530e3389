#!/bin/bash
# The Debian packages on this machine: install build/deb/*.deb (made by
# `make deb` from a clean tree; ROOFLINE_DEBS names the directory), start
# the installed daemon with the packaged configuration, unit and paths
# against the local cluster (as a systemd service where systemd runs, else
# the unit's ExecStart line as the unit's user), run the smoke pipeline
# through it with the installed `roofline`, then purge the packages and
# compare the file lists of /etc, /var/lib, /var/spool, /usr and /run before
# and after.  Where nvcc is found (as the Makefile and debian/rules look:
# PATH, /usr/local/cuda/bin), `make deb` builds roofline-gpu too (the CUDA
# programs): then it is expected, installed, its programs checked against
# docs/install.md's table and run, and purged with the rest.  Needs root
# and the cluster (scripts/run-integration).
. "$(dirname "$0")/../lib.sh"

PKGS=(rooflined roofline roofline-job rooflined-dev postgresql-15-rooflined)
NVCC=$(command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
[[ -n $NVCC ]] && PKGS+=(roofline-gpu)
DEBS=${ROOFLINE_DEBS:-}
[[ -n $DEBS ]] || skip_all "ROOFLINE_DEBS is not set: run 'make package-check'"
((EUID == 0)) || skip_all "installing packages needs root"
need_cluster
# One package test at a time on this machine (install-doc.t takes it too).
exec {lock}>/run/lock/rooflined-packages.lock
flock -w 900 "$lock" || bail_out "another package test holds /run/lock/rooflined-packages.lock"
shopt -s nullglob
debs=("$DEBS"/*.deb)
shopt -u nullglob
((${#debs[@]} == ${#PKGS[@]})) || bail_out "expected ${#PKGS[@]} .deb files in $DEBS (${PKGS[*]}$([[ -n $NVCC ]] && echo ": nvcc is $NVCC")), found ${#debs[@]}"
# "install ok installed", "deinstall ok config-files", ...; "" when unknown
pkg_state() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null; }
pkg_present() { [[ $(pkg_state "$1") == *" installed" || $(pkg_state "$1") == *config-files ]]; }
for p in "${PKGS[@]}"; do
	if pkg_present "$p"; then
		bail_out "package $p is already on this machine ($(pkg_state "$p")): not touching it"
	fi
done

# Every path under the places a package may write, one a line.
snapshot() {
	find /etc /var/lib /var/spool /usr /run -xdev \
		-path /run/user -prune -o -path /run/netns -prune -o -print 2>/dev/null | sort
}
snapshot >"$TEST_TMP/before"
user_existed=0
getent passwd rooflined >/dev/null && user_existed=1

apt_get() {
	DEBIAN_FRONTEND=noninteractive apt-get -y -q --no-install-recommends \
		-o DPkg::Lock::Timeout=300 "$@"
}
purge() {
	apt_get purge "${PKGS[@]}" >"$TEST_TMP/purge.log" 2>&1
}
on_exit purge

# ---- install -----------------------------------------------------------------
ok "the ${#PKGS[@]} packages install (apt-get install ./*.deb)" apt_get install "${debs[@]}"
for p in "${PKGS[@]}"; do
	is "$(pkg_state "$p")" "install ok installed" "$p is installed"
done
is "$(stat -c '%a %U' /var/spool/rooflined 2>&1)" "711 root" "the spool is root's, 0711"
is "$(stat -c '%a %U' /var/lib/rooflined 2>&1)" "750 rooflined" "/var/lib/rooflined is the rooflined user's, 0750"
ok "the configuration is a conffile" grep -qx ' /etc/rooflined/rooflined.yaml [0-9a-f]*' \
	<(dpkg-query -W -f='${Conffiles}\n' rooflined)
for m in roofline.1 rooflined.8 roofline-job.8 rooflined.yaml.5 rooflined-pipeline.5 rooflined-plugin.7; do
	ok "man finds ${m%.*}(${m##*.})" test "$(man -w "${m##*.}" "${m%.*}" 2>&1)" = "/usr/share/man/man${m##*.}/$m.gz"
done
ok "bash completion for roofline is installed" test -s /usr/share/bash-completion/completions/roofline
ok "the header is installed" test -s /usr/include/rooflined/plugin.h
ok "the server extension is where Debian's PostgreSQL 15 looks for it" \
	test -s /usr/lib/postgresql/15/lib/rooflined_stats.so -a -s /usr/share/postgresql/15/extension/rooflined_stats.control \
	-a -s /usr/share/postgresql/15/extension/rooflined_stats--1.sql
# A plugin from outside the tree, as rooflined-plugin(7)'s synopsis writes
# one: built against the installed header alone (no -I), it loads.
mkdir -p "$TEST_TMP/oot"
cat >"$TEST_TMP/oot/oot_example.c" <<'PLUGIN'
#include <rooflined/plugin.h>

static enum rl_result run(struct rl_ctx *ctx, const void *config, void *state)
{
	(void)config;
	(void)state;
	rl_info(ctx, "out of the tree");
	return RL_OK;
}

RL_PLUGIN_DEFINE = {
	RL_PLUGIN_HEADER,
	.name = "oot_example",
	.version = "1.0",
	.stage = RL_STAGE_UTILITY,
	.summary = "a plugin built against the installed header",
	.run = run,
};
PLUGIN
ok "an out-of-tree plugin builds against the installed <rooflined/plugin.h>" \
	cc -Wall -Werror -shared -fPIC -fvisibility=hidden -o "$TEST_TMP/oot/oot_example.so" \
	"$TEST_TMP/oot/oot_example.c"
out=$(/usr/bin/roofline plugins --plugin-dir "$TEST_TMP/oot" 2>&1)
is "$?" 0 "the installed roofline loads it (roofline plugins --plugin-dir)" || diag "$out"
like "$out" 'oot_example' "and lists it"
mkdir -p "$TEST_TMP/oot-old"
sed 's|<rooflined/plugin.h>|<rooflined/rooflined_plugin.h>|' "$TEST_TMP/oot/oot_example.c" \
	>"$TEST_TMP/oot-old/oot_example.c"
ok "one that includes the header's former name <rooflined/rooflined_plugin.h> builds too" \
	cc -Wall -Werror -shared -fPIC -fvisibility=hidden -o "$TEST_TMP/oot-old/oot_example.so" \
	"$TEST_TMP/oot-old/oot_example.c"
ok "and loads" /usr/bin/roofline plugins --plugin-dir "$TEST_TMP/oot-old"

# Compute nodes: libc, libm (and CUDA) only.
needed=$(for f in /usr/sbin/roofline-job $(dpkg -L roofline-job | grep '\.so$'); do
	objdump -p "$f" | awk '/NEEDED/ { print $2 }'; done | sort -u)
note "roofline-job package NEEDED: $(tr '\n' ' ' <<<"$needed")"
unlike "$needed" 'libpq|libyaml|libslurm|libjson' "roofline-job and its plugins need no libpq, libyaml, libslurm or json-c"
# libc and libm (plugins/README.md), and CUDA's where a plugin needs it
is "$(grep -vxE 'lib(c|m)\.so\.6|lib(cuda|cudart|cupti|nvidia-ml)\.so.*' <<<"$needed")" "" \
	"they need nothing but libc, libm (and CUDA)"
ok "libc among them" grep -qx 'libc\.so\.6' <<<"$needed"

# GPU nodes: roofline-gpu, the CUDA programs where the plugins look for
# them (PREFIX/lib/rooflined, common/paths.h), as docs/install.md lists them.
if [[ -n $NVCC ]]; then
	progs=$(dpkg -L roofline-gpu | sed -n 's|^/usr/lib/rooflined/\([^/]*\)$|\1|p' | sort)
	want=$({ echo ert-bench; echo gpp_nofma; for f in "$ROOT"/kernels/*.cu; do basename "$f" .cu; done; } | sort)
	is "$progs" "$want" "roofline-gpu holds ert-bench and every reference kernel in /usr/lib/rooflined"
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	doc=$(grep -E '^\| `roofline-gpu` \|' "$ROOT/docs/install.md" | grep -o 'rooflined/{[a-z_,-]*}' |
		sed 's|rooflined/{||; s|}||' | tr ',' '\n' | sort)
	is "$doc" "$want" "docs/install.md's table lists roofline-gpu's programs"
	is "$(for p in $progs; do [[ -x /usr/lib/rooflined/$p ]] || echo "$p"; done)" "" "each of them is executable"
	like "$(dpkg-query -W -f='${Depends}' roofline-gpu)" "roofline-job \\(= $(dpkg-query -W -f='${Version}' roofline-job)\\)" \
		"roofline-gpu depends on roofline-job of its version"
	gneeded=$(for p in $progs; do objdump -p "/usr/lib/rooflined/$p" | awk '/NEEDED/ { print $2 }'; done | sort -u)
	note "roofline-gpu NEEDED: $(tr '\n' ' ' <<<"$gneeded")"
	is "$(grep -vxE 'lib(c|m|dl|rt|pthread)\.so\.[0-9]+|ld-linux-x86-64\.so\.2|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libcublas(Lt)?\.so\.[0-9]+' <<<"$gneeded")" "" \
		"its programs need the C and C++ runtimes and cuBLAS only (the CUDA runtime is linked in)"
	# The installed ert-bench runs: measures where a GPU is, and says
	# there is none (exit 3) elsewhere.
	out=$(timeout 300 /usr/lib/rooflined/ert-bench --quick --only fp64 2>&1)
	rc=$?
	if nvidia-smi -L >/dev/null 2>&1; then
		is "$rc" 0 "the installed ert-bench measures this machine's GPU"
	else
		is "$rc" 3 "the installed ert-bench runs and exits 3 (no GPU here)"
		like "$out" 'no CUDA device' "and says there is no CUDA device"
	fi
else
	note "no nvcc here: roofline-gpu is not built (profile pkg.rooflined.nogpu) and not tested"
fi

# ---- the installed daemon ----------------------------------------------------
unit=/lib/systemd/system/rooflined.service
exec_line=$(sed -n 's/^ExecStart=//p' "$unit")
unit_user=$(sed -n 's/^User=//p' "$unit")
is "$exec_line" "/usr/sbin/rooflined --foreground --config /etc/rooflined/rooflined.yaml" \
	"the unit starts the installed daemon with the packaged configuration"
ok "the packaged configuration is valid" /usr/sbin/rooflined --check-config --config /etc/rooflined/rooflined.yaml

# The cluster's Slurm and PostgreSQL socket come from the environment, as a
# facility's would from the unit's environment; the database name and role
# are the packaged configuration's (dbname=rooflined user=rooflined).
DAEMON_LOG=$TEST_TMP/rooflined.log
daemon_env=(SLURM_CONF="$SLURM_CONF" PGHOST="$PGHOST" PGPORT="$PGPORT")
if [[ -d /run/systemd/system ]]; then
	note "systemd runs: starting rooflined.service with a runtime drop-in for the cluster"
	mkdir -p /run/systemd/system/rooflined.service.d
	printf '[Service]\nEnvironment=%s\n' "${daemon_env[*]}" \
		>/run/systemd/system/rooflined.service.d/cluster.conf
	on_exit "rm -rf /run/systemd/system/rooflined.service.d; systemctl daemon-reload"
	systemctl daemon-reload
	on_exit "systemctl stop rooflined.service"
	ok "systemctl start rooflined" systemctl start rooflined.service
	daemon_logs() { journalctl -u rooflined.service --no-pager -n 200 -o cat; }
	daemon_stop() { systemctl stop rooflined.service; }
else
	note "no systemd here: the unit's ExecStart line as ${unit_user:-root} (the unit names no User=)"
	read -ra argv <<<"$exec_line"
	runuser -u "${unit_user:-root}" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		"${daemon_env[@]}" "${argv[@]}" >"$DAEMON_LOG" 2>&1 &
	DPID=$!
	on_exit "kill -TERM $DPID 2>/dev/null; wait $DPID 2>/dev/null"
	daemon_logs() { cat "$DAEMON_LOG"; }
	# SIGTERM to the daemon itself (runuser's child), as systemd's
	# KillMode=process does; its exit status comes back through runuser.
	daemon_stop() {
		local pid
		pid=$(pgrep -P "$DPID" -x rooflined) || return 1
		kill -TERM "$pid" && wait "$DPID"
	}
fi
if ! wait_for "daemon_logs | grep -q 'started (pid'" 60; then
	diag "$(daemon_logs | tail -20)"
	bail_out "the installed rooflined did not start"
fi
like "$(daemon_logs)" 'started \(pid [0-9]+, spool /var/spool/rooflined, plugins /usr/lib/rooflined/plugins\)' \
	"it runs with the packaged spool and plugin directory"
sql() { psql -X -q -t -A -v ON_ERROR_STOP=1 -c "$1" 2>&1; }
installed_names=$(cd /usr/share/rooflined/sql && ls -- *.sql)
is "$(sql "select name from schema_migrations order by version")" "$installed_names" \
	"it applied the installed migrations (/usr/share/rooflined/sql)"

# ---- the smoke pipeline, submitted with the installed CLI as a user --------
"$ROOT/scripts/cluster" add-user rlpkg >/dev/null || bail_out "cannot add user rlpkg"
as_user() {
	runuser -u rlpkg -- env -i PATH=/usr/bin:/bin SLURM_CONF="$SLURM_CONF" \
		PGHOST="$PGHOST" PGPORT="$PGPORT" PGDATABASE="$PGDATABASE" "$@"
}
out=$(cd / && as_user timeout 300 /usr/bin/roofline submit --wait \
	/usr/share/rooflined/pipelines/smoke.yaml 2>&1)
rc=$?
is "$rc" 0 "roofline submit --wait smoke.yaml succeeds through the installed daemon" ||
	{ diag "$out"; diag "$(daemon_logs | tail -20)"; }
run=$(sql "select max(id) from runs where owner = 'rlpkg'")
is "$(sql "select state from runs where id = ${run:-0}")" succeeded "run $run succeeded"
is "$(sql "select string_agg(step_id || '=' || state, ' ' order by step_id) from steps where run_id = ${run:-0}")" \
	"again=succeeded hello=succeeded summary=succeeded" "its two Slurm steps and its daemon step succeeded"
is "$(stat -c '%a %U' "/var/spool/rooflined/run-$run" 2>&1)" "711 root" "its run directory is in the packaged spool, root's, 0711"
is "$(stat -c '%a %U' "/var/spool/rooflined/run-$run/hello/attempt-1" 2>&1)" "700 rlpkg" \
	"a Slurm step's attempt is the user's, 0700"
like "$(as_user /usr/bin/roofline status "$run" 2>&1)" 'summary +succeeded' "roofline status shows the daemon step"

daemon_stop
is "$?" 0 "the daemon stops on SIGTERM with exit status 0"
like "$(daemon_logs)" 'stopping; running jobs are left to the next start' "and says so"
ok "and removes its pid file" test ! -e /run/rooflined.pid

# ---- purge leaves nothing behind -------------------------------------------
ok "the ${#PKGS[@]} packages purge" purge
for p in "${PKGS[@]}"; do
	is "$(pkg_present "$p" && pkg_state "$p" || echo gone)" gone "$p is purged"
done
if ((!user_existed)) && getent passwd rooflined >/dev/null; then
	# Debian leaves a package's system user behind on purge; the test
	# removes the one the postinst made, to leave the machine as it was.
	note "removing the system user rooflined that the postinst created"
	deluser --system --quiet rooflined >/dev/null 2>&1 || true
fi
snapshot >"$TEST_TMP/after"
diff "$TEST_TMP/before" "$TEST_TMP/after" >"$TEST_TMP/diff"
ours=$(grep -E '^[<>] ' "$TEST_TMP/diff" | grep -i 'roofline' || true)
is "$ours" "" "no file of ours is left in /etc, /var/lib, /var/spool, /usr or /run, and none is missing"
others=$(grep -cE '^[<>] ' "$TEST_TMP/diff" || true)
((others == 0)) || note "$others other paths changed meanwhile (other work on this machine): $(grep -E '^[<>] ' "$TEST_TMP/diff" | head -5 | tr '\n' ' ')"

done_testing
