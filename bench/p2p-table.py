#!/usr/bin/env python3
"""bench/p2p-table.py - the tables of docs/ceilings.md ("Peer to peer") and
docs/fleet.md ("Concurrent and sequential") from bench/multi-gpu.sh's files.

    bench/p2p-table.py DIR          (DIR holds p2p.tsv, concurrent.tsv,
                                     sequential.tsv; logs.tar.gz optional)

Prints Markdown to stdout:
  - the p2p matrix: per figure, the median and best (max of the trials) over
    the pairs, min/max across pairs, and the share of the link's datasheet
    figure: NV<n> on Hopper 25 GB/s per link per direction (NV18: 450 GB/s
    per direction, 900 both ways), PCIe labels (PIX PXB PHB NODE SYS) Gen5
    x16, 64 GB/s per direction; bidirectional figures against twice that;
  - every pair's figures (GB/s, median);
  - concurrent against sequential, per ceiling: the median over the GPUs of
    each mode and the largest per-GPU difference (%), for the quick runs and,
    when logs.tar.gz holds them, the runs without --quick;
  - the power and SM clock nvidia-smi sampled (logs.tar.gz's
    smi-samples.csv), per GPU: max power, min SM clock.
Exit status 0, 1 when a file is missing or unreadable, 2 usage.
"""
import io
import statistics
import sys
import tarfile


def records(text, typ):
    out = []
    for line in text.splitlines():
        f = line.split("\t")
        if f[0] != typ:
            continue
        out.append(dict(kv.split("=", 1) for kv in f[1:] if "=" in kv))
    return out


def datasheet(label):
    """bytes/s per direction of a topo label; 0 when unknown (topo.h)."""
    if label.startswith("NV") and label[2:].isdigit() and label[2] != "0":
        return int(label[2:]) * 25e9
    return 64e9 if label in ("PIX", "PXB", "PHB", "NODE", "SYS") else 0


def gbs(x):
    return f"{x / 1e9:.1f}"


def p2p_tables(text):
    ceil = records(text, "ceiling")
    attr = records(text, "attr")
    names = []
    for c in ceil:
        if c["name"] not in names:
            names.append(c["name"])
    print(f"GPUs: {len(attr)} x {attr[0]['name'] if attr else '?'}; "
          f"links: {', '.join(sorted({c.get('topo', '') or '?' for c in ceil}))}\n")
    print("| figure | pairs | median GB/s (min-max over pairs) | best GB/s "
          "| datasheet GB/s | % of datasheet (median) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in names:
        cs = [c for c in ceil if c["name"] == n]
        med = [float(c["median"]) for c in cs]
        best = max(float(c["max"]) for c in cs)
        ds = datasheet(cs[0].get("topo", "")) * int(cs[0].get("directions", 1))
        m = statistics.median(med)
        pct = f"{100 * m / ds:.1f}" if ds else "?"
        print(f"| {n} | {len(cs)} | {gbs(m)} ({gbs(min(med))}-{gbs(max(med))}) "
              f"| {gbs(best)} | {gbs(ds) if ds else '?'} | {pct} |")
    print()
    pairs = []
    for c in ceil:
        p = (c["gpu"], c["peer"])
        if p not in pairs:
            pairs.append(p)
    print("| gpu -> peer | link | " + " | ".join(names) + " |")
    print("| --- | --- |" + " --- |" * len(names))
    for g, p in pairs:
        row = {c["name"]: c for c in ceil if (c["gpu"], c["peer"]) == (g, p)}
        link = next(iter(row.values())).get("topo", "")
        cells = [gbs(float(row[n]["median"])) if n in row else "" for n in names]
        print(f"| {g} -> {p} | {link} | " + " | ".join(cells) + " |")
    print()


def mode_table(conc, seq, title):
    c = {(r["gpu"], r["name"]): float(r["median"]) for r in records(conc, "ceiling")}
    s = {(r["gpu"], r["name"]): float(r["median"]) for r in records(seq, "ceiling")}
    names = []
    for (_, n) in s:
        if n not in names:
            names.append(n)
    units = {r["name"]: r["unit"] for r in records(seq, "ceiling")}
    gpus = sorted({g for (g, _) in s})
    print(f"{title}\n")
    print("| ceiling | unit | sequential (median of GPUs) | concurrent | "
          "concurrent / sequential | largest per-GPU difference |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in names:
        sv = [s[(g, n)] for g in gpus if (g, n) in s]
        cv = [c[(g, n)] for g in gpus if (g, n) in c]
        if not sv or not cv:
            continue
        diffs = [100 * (c[(g, n)] / s[(g, n)] - 1) for g in gpus
                 if (g, n) in s and (g, n) in c]
        worst = max(diffs, key=abs)
        sm, cm = statistics.median(sv), statistics.median(cv)
        scale = 1e12 if units[n] != "B/s" else 1e9
        u = {"FLOP/s": "TFLOP/s", "OP/s": "TOP/s", "B/s": "GB/s"}[units[n]]
        print(f"| {n} | {u} | {sm / scale:.1f} | {cm / scale:.1f} | "
              f"{cm / sm:.3f} | {worst:+.1f} % |")
    print()


def smi_table(csv):
    rows = {}
    for line in csv.splitlines()[1:]:
        f = [x.strip() for x in line.split(",")]
        if len(f) < 5 or not f[1].isdigit():
            continue
        try:
            p, clk, t = float(f[2].split()[0]), float(f[3].split()[0]), float(f[4])
        except ValueError:
            continue
        r = rows.setdefault(f[1], [0, 1e9, 0, 0])
        r[0], r[1], r[2], r[3] = max(r[0], p), min(r[1], clk), max(r[2], t), r[3] + 1
    print("| GPU | samples | max power W | min SM clock MHz | max temperature C |")
    print("| --- | --- | --- | --- | --- |")
    for g in sorted(rows):
        r = rows[g]
        print(f"| {g} | {r[3]} | {r[0]:.0f} | {r[1]:.0f} | {r[2]:.0f} |")
    print()


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: bench/p2p-table.py DIR", file=sys.stderr)
        return 2
    d = sys.argv[1]
    try:
        p2p = open(f"{d}/p2p.tsv").read()
        conc = open(f"{d}/concurrent.tsv").read()
        seq = open(f"{d}/sequential.tsv").read()
    except OSError as e:
        print(f"p2p-table.py: {e}", file=sys.stderr)
        return 1
    print("### Peer to peer\n")
    p2p_tables(p2p)
    mode_table(conc, seq, "### Concurrent and sequential: ert-bench --quick")
    try:
        with tarfile.open(f"{d}/logs.tar.gz") as t:
            def rd(n):
                return t.extractfile(n).read().decode()
            try:
                mode_table(rd("logs/concurrent-full.tsv"),
                           rd("logs/sequential-full.tsv"),
                           "### Concurrent and sequential: ert-bench (default trials)")
            except KeyError:
                pass
            print("### nvidia-smi samples over the whole script (every 200 ms)\n")
            smi_table(rd("logs/smi-samples.csv"))
    except (OSError, tarfile.TarError, KeyError) as e:
        print(f"p2p-table.py: {d}/logs.tar.gz: {e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
