#!/bin/bash
# Bash completion for roofline (cli/roofline.bash-completion), driven the way
# bash drives it (COMP_WORDS, COMP_CWORD, the completion function) with
# Debian's bash-completion loaded, as a user: commands, options, the user's
# own run ids from the database (not another user's), pipeline files.
. "$(dirname "$0")/../lib.sh"
need_cluster
. "$ROOT/tests/daemon_lib.sh"
BASH_COMPLETION=/usr/share/bash-completion/bash_completion
[[ -r $BASH_COMPLETION ]] || bail_out "no $BASH_COMPLETION: run scripts/deps"
daemon_setup
daemon_start

# A smoke run that stays queued for a while: a long sleep in a Slurm step.
cat >"$TEST_TMP/slow.yaml" <<'YAML'
name: completion-slow
slurm: { partition: gpu, time: "00:02:00" }
steps:
  - { id: nap, plugin: smoke, with: { sleep: 20 } }
YAML
run_a1=$(submit_as alice "$TEST_TMP/slow.yaml")
run_a2=$(submit_as alice "$TEST_TMP/slow.yaml")
run_b=$(submit_as bob "$TEST_TMP/slow.yaml")
ok "alice and bob queued runs ($run_a1 $run_a2, $run_b)" test -n "$run_a1" -a -n "$run_a2" -a -n "$run_b"
on_exit "for r in $run_a1 $run_a2; do as alice '$BIN/roofline' cancel \$r >/dev/null 2>&1; done; as bob '$BIN/roofline' cancel $run_b >/dev/null 2>&1"

# A directory with pipeline files and others.
files=$TEST_TMP/files
mkdir -p "$files/sub"
touch "$files/a.yaml" "$files/b.yml" "$files/c.txt"
chmod -R a+rX "$files"

# complete LINE: the candidates bash would offer for LINE (cursor at its
# end), sorted, one a line, computed in a shell of alice's.
complete_line() {
	as alice bash -c '
		. "$1"; . "$2"
		cd "$3" || exit 1
		read -ra COMP_WORDS <<<"$4"
		[[ $4 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$4 COMP_POINT=${#4}
		_roofline roofline "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort' \
		complete "$BASH_COMPLETION" "$ROOT/cli/roofline.bash-completion" "$files" "$1"
}
R=$BIN/roofline

# The commands: cli/roofline.c's table, plus the two global options.
COMMANDS=$(sed -n 's/^\t{ "\([a-z]*\)", cmd_.*/\1/p' "$ROOT/cli/roofline.c")
ok "cli/roofline.c's table read ($(wc -w <<<"$COMMANDS") commands)" test "$(wc -w <<<"$COMMANDS")" -ge 9
is "$(complete_line "$R ")" "$(printf '%s\n' $COMMANDS --help --version | sort)" \
	"roofline <TAB>: the commands"
is "$(complete_line "$R st")" "status" "roofline st<TAB>: status"
is "$(complete_line "$R validate --c")" "--cluster" "roofline validate --c<TAB>: --cluster"
is "$(complete_line "$R plot --format ")" "$(printf 'png\nsvg')" "roofline plot --format <TAB>: png, svg"

# Run ids: the runs alice sees, as the database has them (hers and the
# facility's, the latest 200, as `roofline list` shows them), and not bob's.
alice_runs=$(sql "select id from runs where owner = 'alice' or facility order by id desc limit 200" | sort)
is "$(complete_line "$R status ")" "$alice_runs" "roofline status <TAB>: alice's runs from the database"
unlike "$(complete_line "$R cancel ")" "^$run_b\$" "bob's run is not offered to alice"
is "$(complete_line "$R plot --baseline ")" "$alice_runs" "roofline plot --baseline <TAB>: runs too"

# Pipeline files: *.yaml, *.yml and directories, not other files.
is "$(complete_line "$R submit ")" "$(printf 'a.yaml\nb.yml\nsub')" "roofline submit <TAB>: pipeline files and directories"
is "$(complete_line "$R validate a")" "a.yaml" "roofline validate a<TAB>: a.yaml"

done_testing
