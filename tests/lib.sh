# tests/lib.sh - a tiny TAP library for the bash integration tests.
# shellcheck shell=bash
#
#   . "$(dirname "$0")/../lib.sh"
#   plan 3                       # or done_testing at the end
#   ok "cluster answers" scontrol ping
#   is "$(cat out)" "hello" "job wrote its output"
#   like "$(roofline list)" '^kernel-abc ' "list shows the pipeline"
#   skip "no GPU here" 2
#   done_testing
#
# ok runs a command; its output is shown (as diagnostics) only when it fails.
# Also: diag, note, fail, pass, skip_all, bail_out, need_cluster, wait_for,
# on_exit, and the variables ROOT (the repository), BUILD (build/$VARIANT,
# absolute), BIN ($BUILD/bin) and TEST_TMP (a private scratch dir, removed at
# exit unless KEEP_TMP=1).

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VARIANT=${VARIANT:-debug}
BUILD=$ROOT/build/$VARIANT
BIN=$BUILD/bin
export ROOT VARIANT BUILD BIN

TAP_RUN=0
TAP_FAILED=0
TAP_PLANNED=
TAP_EXIT_HOOKS=()

TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rooflined-test.XXXXXX")
chmod 0755 "$TEST_TMP"

# on_exit CMD: run CMD (a string, eval'd) when the test exits, last added first.
on_exit() { TAP_EXIT_HOOKS=("$1" "${TAP_EXIT_HOOKS[@]}"); }

tap_exit() {
	local rc=$? hook
	for hook in "${TAP_EXIT_HOOKS[@]}"; do
		eval "$hook" || true
	done
	if [[ ${KEEP_TMP:-0} == 1 ]]; then
		diag "kept $TEST_TMP"
	else
		rm -rf "$TEST_TMP"
	fi
	if [[ -n $TAP_PLANNED && $TAP_PLANNED != "$TAP_RUN" && $rc == 0 ]]; then
		diag "planned $TAP_PLANNED tests but ran $TAP_RUN"
		rc=255
	fi
	exit "$rc"
}
trap tap_exit EXIT
trap 'exit 130' INT TERM

# diag MSG...: a diagnostic on stderr (prove always shows these).
diag() {
	local line
	while IFS= read -r line; do
		printf '# %s\n' "$line" >&2
	done <<<"$*"
}

# note MSG...: a comment on stdout (shown by prove -v).
note() {
	local line
	while IFS= read -r line; do
		printf '# %s\n' "$line"
	done <<<"$*"
}

plan() {
	TAP_PLANNED=$1
	printf '1..%s\n' "$1"
}

skip_all() {
	printf '1..0 # SKIP %s\n' "$*"
	TAP_PLANNED=0
	exit 0
}

bail_out() {
	printf 'Bail out! %s\n' "$*"
	exit 255
}

pass() {
	TAP_RUN=$((TAP_RUN + 1))
	printf 'ok %d - %s\n' "$TAP_RUN" "$1"
}

fail() {
	TAP_RUN=$((TAP_RUN + 1))
	TAP_FAILED=$((TAP_FAILED + 1))
	printf 'not ok %d - %s\n' "$TAP_RUN" "$1"
	local i=1
	# Report the test file's line, not this library's.
	while [[ ${BASH_SOURCE[i]:-} == "${BASH_SOURCE[0]}" ]]; do
		i=$((i + 1))
	done
	diag "  Failed test '$1'"
	diag "  at ${BASH_SOURCE[i]:-$0} line ${BASH_LINENO[i - 1]:-?}."
}

# ok NAME CMD [ARG...]: passes when CMD exits 0.
ok() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if ((rc == 0)); then
		pass "$name"
		return 0
	fi
	fail "$name"
	diag "  command: $* (exit $rc)"
	[[ -n $out ]] && diag "$out"
	return 1
}

# is GOT EXPECTED NAME
is() {
	if [[ $1 == "$2" ]]; then
		pass "$3"
		return 0
	fi
	fail "$3"
	diag "         got: '$1'"
	diag "    expected: '$2'"
	return 1
}

# like GOT REGEX NAME  (bash extended regex)
like() {
	if [[ $1 =~ $2 ]]; then
		pass "$3"
		return 0
	fi
	fail "$3"
	diag "                  '$1'"
	diag "    doesn't match '$2'"
	return 1
}

# unlike GOT REGEX NAME
unlike() {
	if ! [[ $1 =~ $2 ]]; then
		pass "$3"
		return 0
	fi
	fail "$3"
	diag "                  '$1'"
	diag "          matches '$2'"
	return 1
}

# skip REASON [COUNT]: record COUNT (default 1) skipped tests.
skip() {
	local i n=${2:-1}
	for ((i = 0; i < n; i++)); do
		TAP_RUN=$((TAP_RUN + 1))
		printf 'ok %d # skip %s\n' "$TAP_RUN" "$1"
	done
}

# done_testing: print the plan if none was given; exit status = failures.
done_testing() {
	if [[ -z $TAP_PLANNED ]]; then
		TAP_PLANNED=$TAP_RUN
		printf '1..%d\n' "$TAP_RUN"
	fi
	exit $((TAP_FAILED > 254 ? 254 : TAP_FAILED))
}

# wait_for CMD TIMEOUT: eval CMD every 0.2 s until it succeeds; false after
# TIMEOUT seconds.
wait_for() {
	local cmd=$1 timeout=${2:-30} end
	end=$((SECONDS + timeout))
	while ((SECONDS < end)); do
		eval "$cmd" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	eval "$cmd" >/dev/null 2>&1
}

# need_cluster: point SLURM_CONF, PGHOST, PGPORT, PGDATABASE, ROOFLINE_VAR at
# the running local cluster, or bail out saying how to start it.
need_cluster() {
	local env
	if ! "$ROOT/scripts/cluster" status >/dev/null 2>&1; then
		bail_out "the local cluster is not running (ROOFLINE_VAR=${ROOFLINE_VAR:-$ROOT/var}): run 'scripts/cluster start' or 'scripts/run-integration'"
	fi
	env=$("$ROOT/scripts/cluster" env) || bail_out "'scripts/cluster env' failed"
	eval "$env"
}
