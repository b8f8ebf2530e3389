#!/bin/bash
# tests/gpu/run-attached.sh PROGRAM [ARG...] - run a program attached to
# the run (`roofline submit --attach`), as a user's pipeline can today: the
# daemon writes attachments into <run>/inputs/ without execute permission,
# so the ncu step runs `bash inputs/run-attached.sh inputs/PROGRAM ...`,
# which copies PROGRAM into a private temporary directory, makes it
# executable and runs it there (ncu follows it: --target-processes all, its
# default).  Itself attached with the program (tests/gpu/babelstream.yaml).
set -euo pipefail
prog=${1:?usage: run-attached.sh PROGRAM [ARG...]}
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
install -m 0700 "$prog" "$dir/"
"$dir/$(basename "$prog")" "$@"
