#!/bin/bash
# bench/ncu-bad-fixtures.sh - (re)generate the bad-CSV corpus in
# tests/fixtures/ncu/bad/ from the real H100 capture
# tests/fixtures/ncu/kernel_abc.raw.csv, by mechanical edits only (each file's
# recipe is below and in tests/fixtures/ncu/README.md).  The corpus also holds
# two real ncu outputs captured on the H100 (no-kernels.log,
# unknown-metric.raw.csv) that this script leaves alone.
#
# Usage: bench/ncu-bad-fixtures.sh
# Smoke (BENCH_SMOKE=1, docs/benchmarks.md): the files are written to
# $BENCH_SMOKE_DIR/bad (else a new temporary directory), never over the
# committed ones, and compared with them: exit 1 if one differs.
set -euo pipefail
cd "$(dirname "$0")/../tests/fixtures/ncu"
OUT=bad
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then
	OUT=${BENCH_SMOKE_DIR:-$(mktemp -d /tmp/ncu-bad-fixtures-smoke.XXXXXX)}/bad
	mkdir -p "$OUT"
fi
python3 - "$OUT" <<'PY'
import csv, gzip, io, sys

OUT = sys.argv[1]

src = open("kernel_abc.raw.csv", newline="").read()
lines = src.split("\n")
hdr = next(i for i, l in enumerate(lines) if l.startswith('"ID",'))
cols = next(csv.reader([lines[hdr]]))
rows = {next(csv.reader([l]))[4].split("(")[0]: i for i, l in enumerate(lines)
        if i > hdr + 1 and l.startswith('"')}

def quote(fields):
    return ",".join('"' + f.replace('"', '""') + '"' for f in fields)

def edit_row(kernel, fn):
    out = list(lines)
    i = rows[kernel]
    out[i] = quote(fn(next(csv.reader([out[i]]))))
    return "\n".join(out)

def write(name, text):
    open(OUT + "/" + name, "w", newline="").write(text)

# cut in the middle of the last row: an unterminated quoted field
write("truncated.csv", src[: len(src) - len(lines[rows["kernel_C"]]) // 2 - 1])
# kernel_B's row loses its CC field: 364 fields under a 365-field header
write("wrong-columns.csv", edit_row("kernel_B", lambda f: f[:10] + f[11:]))
# every metric of kernel_B n/a: a launch ncu could not profile
write("unprofiled-na.csv", edit_row("kernel_B", lambda f: f[:11] + ["n/a"] * (len(f) - 11)))
# every metric of kernel_B empty: a row without metric values
write("unprofiled-empty.csv", edit_row("kernel_B", lambda f: f[:11] + [""] * (len(f) - 11)))
# kernel_B's dram__bytes.sum n/a only: parses, the value is missing
d = cols.index("dram__bytes.sum")
write("na-dram.csv", edit_row("kernel_B", lambda f: f[:d] + ["n/a"] + f[d + 1:]))
# an ==ERROR== line of ncu after the table
write("error-line.csv", src.rstrip("\n") + '\n==ERROR== An error was reported by the driver\n')
# text after a closing quote
write("bad-quote.csv", src.replace('"kernel_A(double *, long, double)"',
                                   '"kernel_A(double *, long, double)"x', 1))
# a thousands separator of another locale: "4.608.000" bytes is no number
write("locale-number.csv", edit_row("kernel_A", lambda f: f[:d] + ["4.608.000"] + f[d + 1:]))
# binary garbage: the gzip of the real file (mtime 0, so reproducible)
write_b = open(OUT + "/garbage.bin", "wb")
write_b.write(gzip.compress(src.encode(), mtime=0)[:600])
write_b.close()
PY
ls -l "$OUT"
if [[ $OUT != bad ]]; then
	n=0
	for f in "$OUT"/*; do
		cmp "$f" "bad/${f##*/}" || { echo "ncu-bad-fixtures: smoke: ${f##*/} differs from tests/fixtures/ncu/bad/" >&2; exit 1; }
		n=$((n + 1))
	done
	echo "ncu-bad-fixtures: smoke: $n files written to $OUT, identical to tests/fixtures/ncu/bad/"
fi
