#!/bin/bash
# docs/install.md, executed: its "Setting up a facility" code blocks run as
# written and in order (tests/tools/doc-blocks extracts them) on this machine
# as service, login and compute node: Debian's own PostgreSQL cluster (15
# main, which the doc starts), the .debs `make deb` built (ROOFLINE_DEBS),
# the local Slurm cluster standing in for the facility's (its SLURM_CONF is
# the one variable the root blocks get beyond a root shell's; the user's
# blocks get none).  Between the user's run and the removal, the run is
# checked in the database and the doc's package table against dpkg; after
# the removal, nothing may be left: packages, paths under /etc, /var/lib,
# /var/spool, /usr and /run, the system user, the database and its roles,
# the lines of pg_hba.conf and pg_ident.conf.  Whatever happens, the machine
# is put back as it was (Debian's cluster stopped again if it was down).
# Needs root and the cluster (scripts/run-integration); shares the machine's
# package state with packages.t, so both take /run/lock/rooflined-packages.lock.
. "$(dirname "$0")/../lib.sh"

DOC=$ROOT/docs/install.md
PKGS=(rooflined roofline roofline-job rooflined-dev postgresql-15-rooflined)
PG_CLUSTER=(15 main)
PG_CONF=/etc/postgresql/15/main
DOC_USER=jdoe # the doc's example user
DEBS=${ROOFLINE_DEBS:-}
[[ -n $DEBS ]] || skip_all "ROOFLINE_DEBS is not set: run 'make package-check'"
((EUID == 0)) || skip_all "installing packages needs root"
need_cluster
command -v pg_ctlcluster >/dev/null || bail_out "no pg_ctlcluster (postgresql-common): run scripts/deps"
[[ -f $PG_CONF/pg_hba.conf ]] || bail_out "no Debian PostgreSQL cluster ${PG_CLUSTER[*]} ($PG_CONF): run scripts/deps"

# One package test at a time on this machine (packages.t takes it too).
exec {lock}>/run/lock/rooflined-packages.lock
flock -w 900 "$lock" || bail_out "another package test holds /run/lock/rooflined-packages.lock"

pkg_state() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null; }
pkg_present() { [[ $(pkg_state "$1") == *" installed" || $(pkg_state "$1") == *config-files ]]; }
for p in "${PKGS[@]}"; do
	pkg_present "$p" && bail_out "package $p is already on this machine ($(pkg_state "$p")): not touching it"
done
for u in rooflined "$DOC_USER"; do
	getent passwd "$u" >/dev/null && bail_out "an account '$u' exists already: not touching it"
done
getent group rooflined >/dev/null && bail_out "a group 'rooflined' exists already: not touching it"

pg_running() { pg_ctlcluster "${PG_CLUSTER[@]}" status >/dev/null 2>&1; }
pg_was_running=0
pg_running && pg_was_running=1
note "Debian's PostgreSQL ${PG_CLUSTER[*]} is $( ((pg_was_running)) && echo running || echo down) before the test"
# As PostgreSQL's superuser on Debian's socket, nothing from the cluster's
# environment (PGHOST, PGPORT, PGDATABASE point at the local cluster's).
dpsql() {
	(cd / && runuser -u postgres -- env -i PATH=/usr/bin:/bin \
		psql -X -q -t -A -v ON_ERROR_STOP=1 "$@" 2>&1)
}
ours_in_pg() {
	dpsql -d postgres -c "select 'database ' || datname from pg_database where datname = 'rooflined'
		union all select 'role ' || rolname from pg_roles
		where rolname in ('rooflined', '$DOC_USER') or rolname like 'roofline\_%'"
}
if ((pg_was_running)); then
	left=$(ours_in_pg)
	[[ -z $left ]] || bail_out "Debian's PostgreSQL has rooflined's objects already ($left): not touching them"
fi

# ---- the state to come back to ---------------------------------------------
snapshot() {
	find /etc /var/lib /var/spool /usr /run -xdev \
		-path /run/user -prune -o -path /run/netns -prune -o -print 2>/dev/null | sort
}
snapshot >"$TEST_TMP/before"
# Our directories that were not there: put_back removes what a failing
# package or doc leaves in them (after the checks have seen it).
ours_absent=()
for d in /etc/rooflined /var/lib/rooflined /var/spool/rooflined /run/rooflined.pid; do
	[[ -e $d ]] || ours_absent+=("$d")
done
cp -p "$PG_CONF/pg_hba.conf" "$TEST_TMP/pg_hba.conf"
cp -p "$PG_CONF/pg_ident.conf" "$TEST_TMP/pg_ident.conf"

# Whatever the doc did or did not do, the machine goes back as it was.
# shellcheck disable=SC2317 # runs from on_exit
put_back() {
	if [[ -s /run/rooflined.pid ]]; then
		start-stop-daemon --stop --quiet --pidfile /run/rooflined.pid --retry 30 || true
	fi
	local p present=()
	for p in "${PKGS[@]}"; do
		pkg_present "$p" && present+=("$p")
	done
	if ((${#present[@]})); then
		DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=300 \
			purge "${present[@]}" >>"$TEST_TMP/put-back.log" 2>&1 || true
	fi
	((${#ours_absent[@]} == 0)) || rm -rf -- "${ours_absent[@]}"
	getent passwd rooflined >/dev/null && deluser --system --quiet rooflined >/dev/null 2>&1
	getent group rooflined >/dev/null && delgroup --system --quiet rooflined >/dev/null 2>&1
	getent passwd "$DOC_USER" >/dev/null && userdel -r "$DOC_USER" >/dev/null 2>&1
	if pg_running; then
		dpsql -d postgres -c 'drop database if exists rooflined' >/dev/null
		dpsql -d postgres -c "drop role if exists $DOC_USER" -c 'drop role if exists roofline_users' \
			-c 'drop role if exists roofline_staff' -c 'drop role if exists rooflined' >/dev/null
	fi
	cmp -s "$TEST_TMP/pg_hba.conf" "$PG_CONF/pg_hba.conf" || cp -p "$TEST_TMP/pg_hba.conf" "$PG_CONF/"
	cmp -s "$TEST_TMP/pg_ident.conf" "$PG_CONF/pg_ident.conf" || cp -p "$TEST_TMP/pg_ident.conf" "$PG_CONF/"
	if ((pg_was_running)); then
		pg_ctlcluster "${PG_CLUSTER[@]}" reload >/dev/null 2>&1
	elif pg_running; then
		pg_ctlcluster "${PG_CLUSTER[@]}" stop >/dev/null 2>&1
	fi
	true
}
on_exit put_back

# The facility's account of the doc's user (its directory, here useradd).
useradd -m -s /bin/bash "$DOC_USER" || bail_out "cannot add the user $DOC_USER"

# ---- the blocks --------------------------------------------------------------
ok "the code blocks of docs/install.md extract" "$ROOT/tests/tools/doc-blocks" "$DOC" "$TEST_TMP/blocks"
shopt -s nullglob
blocks=("$TEST_TMP"/blocks/*.sh)
shopt -u nullglob
n_root=$(printf '%s\n' "${blocks[@]}" | grep -c '\.root[.]' || true)
n_user=$(printf '%s\n' "${blocks[@]}" | grep -c '\.user[.]' || true)
note "${#blocks[@]} runnable blocks: $n_root as root, $n_user as $DOC_USER"
ok "the doc has blocks for root (>= 8) and for a user (>= 1)" test "$n_root" -ge 8 -a "$n_user" -ge 1

cat >"$TEST_TMP/apt.conf" <<'EOF'
DPkg::Lock::Timeout "300";
EOF
chmod 0644 "$TEST_TMP/apt.conf"
# A root shell's environment, and where the facility's slurm.conf is.
as_root() {
	(cd "$DEBS" && env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root USER=root LOGNAME=root SHELL=/bin/bash LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive APT_CONFIG="$TEST_TMP/apt.conf" \
		SLURM_CONF="$SLURM_CONF" "$@")
}
# A user's login environment: nothing set up for rooflined.
as_user() {
	runuser -u "$DOC_USER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="/home/$DOC_USER" USER="$DOC_USER" LOGNAME="$DOC_USER" SHELL=/bin/bash \
		LANG=C.UTF-8 bash -c 'cd && "$@"' bash "$@"
}
where_ok() { # systemd, no-systemd or "": does the block apply here?
	case $1 in
	systemd) [[ -d /run/systemd/system ]] ;;
	no-systemd) [[ ! -d /run/systemd/system ]] ;;
	*) true ;;
	esac
}

# Checks while everything is installed: right after the user's blocks.
checks_installed() {
	local run
	run=$(dpsql -d rooflined -c "select max(id) from runs where owner = '$DOC_USER'")
	is "$(dpsql -d rooflined -c "select state from runs where id = ${run:-0}")" succeeded \
		"$DOC_USER's run ${run:-?} succeeded, in Debian's database"
	is "$(dpsql -d rooflined -c "select string_agg(step_id || '=' || state, ' ' order by step_id) from steps where run_id = ${run:-0}")" \
		"again=succeeded hello=succeeded summary=succeeded" "its two Slurm steps and its daemon step succeeded"
	ok "roofline list, as the user, shows it" grep -qE "^${run:-x} +smoke +$DOC_USER +succeeded " "$TEST_TMP/last.log"
	# The client configuration is what found the service: without it the
	# same command, in the same environment, does not.
	out=$(as_user env ROOFLINE_CONF= roofline list 2>&1)
	like "$out" "database \"$DOC_USER\" does not exist" \
		"without the client configuration the user's roofline does not find the database"
	# The smoke pipeline runs on any Slurm cluster, as the doc says: it
	# asks for no partition (the default one) and no GPU.
	is "$(grep -E '^[[:space:]]*(partition|gres):' /usr/share/rooflined/pipelines/smoke.yaml)" "" \
		"the installed smoke.yaml asks for no partition and no gres"
	ok "the facility pipeline the doc copied is in /etc/rooflined/pipelines" \
		test -f /etc/rooflined/pipelines/nightly-ceilings.yaml
	# The doc's package table against what the packages hold.
	local pkg want have
	for pkg in rooflined roofline-job; do
		want=$(grep -E "^\| \`$pkg\` \|" "$DOC" | grep -o 'plugins/{[a-z_,]*}\.so' |
			sed 's/plugins\/{//; s/}\.so//' | tr ',' '\n' | sort)
		have=$(dpkg -L "$pkg" | sed -n 's|^/usr/lib/rooflined/plugins/\(.*\)\.so$|\1|p' | sort)
		ok "the doc's table lists $pkg's plugins" test -n "$want"
		is "$want" "$have" "install.md's $pkg plugins are the package's"
	done
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	ok "the doc's table names the roofline package's client configuration" \
		grep -qE '^\| `roofline` \|.*`/etc/rooflined/roofline\.conf`' "$DOC"
	ok "roofline ships it as a conffile" grep -qx ' /etc/rooflined/roofline.conf [0-9a-f]*' \
		<(dpkg-query -W -f='${Conffiles}\n' roofline)
}

failed_at=
first=1
for b in "${blocks[@]}"; do
	name=$(basename "$b" .sh)
	who=$(cut -d. -f2 <<<"$name")
	where=$(cut -s -d. -f3 <<<"$name")
	src=$(head -1 "$b" | sed 's/^# //; s|^'"$ROOT"'/||')
	what=$(sed -n '2{s/[[:space:]]*$//;p}' "$b")
	if ! where_ok "$where"; then
		skip "$src ($where only): $what" 1
		continue
	fi
	if [[ -n $failed_at ]]; then
		skip "$src: not run, the block at $failed_at failed" 1
		continue
	fi
	t0=$SECONDS
	if [[ $who == user ]]; then
		as_user timeout 300 bash -e -o pipefail -x "$b" >"$TEST_TMP/last.log" 2>&1
	else
		as_root timeout 300 bash -e -o pipefail -x "$b" >"$TEST_TMP/last.log" 2>&1
	fi
	rc=$?
	if ((rc == 0)); then
		pass "$src ($who${where:+, $where}, $((SECONDS - t0)) s): $what"
	else
		fail "$src ($who${where:+, $where}): $what"
		diag "exit $rc; its output:"
		diag "$(tail -30 "$TEST_TMP/last.log")"
		failed_at=$src
	fi
	if ((first)); then
		first=0
		ok "after the doc's first block Debian's PostgreSQL answers" pg_running
		left=$(pg_running && ours_in_pg)
		[[ -z $left ]] || bail_out "Debian's PostgreSQL had rooflined's objects already ($left): not touching them"
	fi
	if [[ $who == user && -z $failed_at ]]; then
		checks_installed
	fi
done
[[ -z $failed_at ]] || bail_out "docs/install.md failed at $failed_at"

# ---- nothing is left -----------------------------------------------------------
for p in "${PKGS[@]}"; do
	is "$(pkg_present "$p" && pkg_state "$p" || echo gone)" gone "$p is purged"
done
ok "no account rooflined is left" bash -c '! getent passwd rooflined'
ok "no group rooflined is left" bash -c '! getent group rooflined'
ok "the daemon is stopped (no pid file)" test ! -e /run/rooflined.pid
is "$(ours_in_pg)" "" "Debian's PostgreSQL has no database rooflined, no role rooflined, roofline_* or $DOC_USER"
ok "pg_hba.conf is as it was" cmp "$TEST_TMP/pg_hba.conf" "$PG_CONF/pg_hba.conf"
ok "pg_ident.conf is as it was" cmp "$TEST_TMP/pg_ident.conf" "$PG_CONF/pg_ident.conf"
userdel -r "$DOC_USER" >/dev/null 2>&1 || true
snapshot >"$TEST_TMP/after"
diff "$TEST_TMP/before" "$TEST_TMP/after" >"$TEST_TMP/diff"
ours=$(grep -E '^[<>] ' "$TEST_TMP/diff" | grep -iE 'roofline|jdoe' || true)
is "$ours" "" "no file of ours is left in /etc, /var/lib, /var/spool, /usr or /run, and none is missing"
others=$(grep -cE '^[<>] ' "$TEST_TMP/diff" || true)
((others == 0)) || note "$others other paths changed meanwhile (other work on this machine, Debian's PostgreSQL): $(grep -E '^[<>] ' "$TEST_TMP/diff" | head -5 | tr '\n' ' ')"

done_testing
