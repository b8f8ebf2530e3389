#!/usr/bin/env python3
"""bench/ceilings-table.py - the tables of docs/ceilings.md from one run of
bench/ceilings-gpu.sh.

    bench/ceilings-table.py DIR PREFIX     e.g. tests/fixtures/ert/issue13 h100

Reads DIR/PREFIX-{quick,full,peer}.tsv and DIR/PREFIX-spec-records.tsv (if
there: the % columns) and
prints three Markdown tables: every ceiling (quick and full: value, % of the
theoretical value, spread over trials), the comparison with the peer kernels
of the same run (bench/stream-peer.cu), and the sweep's L2 series.  Numbers
are read, never typed: this is how the doc's tables were made.
"""
import statistics
import sys


def fields(line):
    parts = line.rstrip("\n").split("\t")
    return parts[0], dict(p.split("=", 1) for p in parts[1:] if "=" in p)


def lines(path, kind):
    with open(path) as f:
        for line in f:
            if line.startswith(kind + "\t"):
                yield fields(line)[1]


def ceilings(path):
    return {c["name"]: c for c in lines(path, "ceiling")}


def scale(unit):
    return 1e12


def main():
    d, p = sys.argv[1], sys.argv[2]
    quick = ceilings(f"{d}/{p}-quick.tsv")
    full = ceilings(f"{d}/{p}-full.tsv")
    try:
        spec = {c["name"]: float(c["value"])
                for c in lines(f"{d}/{p}-spec-records.tsv", "ceiling")}
    except FileNotFoundError:  # runs kept without the plugins' records
        spec = {}
    print("| ceiling | quick | % | spread | full | % | spread | theoretical "
          "| winning geometry (full) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, f in full.items():
        q = quick.get(name)
        th = spec.get(name)
        cells = [name]
        for c in (q, f):
            if c is None:
                cells += ["-", "-", "-"]
                continue
            v = float(c["median"])
            cells.append("%.4g" % (v / 1e12))
            cells.append("%.1f" % (v / th * 100) if th else "-")
            cells.append("%.2f" % float(c["spread_pct"]))
        cells.append("%.4g" % (th / 1e12) if th else "-")
        geo = f["geometry"]
        if name == "l2":
            geo += " ws=%.2f MiB" % (float(f["ws_bytes"]) / 1048576)
        cells.append(geo)
        print("| " + " | ".join(cells) + " |")
    for mode, doc in (("quick", f"{d}/{p}-quick.tsv"),
                      ("full", f"{d}/{p}-full.tsv")):
        for g in lines(doc, "gpu_done"):
            print(f"\n{mode}: GPU time {float(g['gpu_time_s']):.2f} s, "
                  f"wall {float(g['wall_s']):.2f} s")

    # the peers, before (first block) and after (second) ert-bench
    peers = [[], []]
    with open(f"{d}/{p}-peer.tsv") as fh:
        k = -1
        for line in fh:
            if line.startswith("# stream-peer"):
                k += 1
            elif line.startswith("peer\t"):
                peers[k].append(fields(line)[1])
    print("\n| peer (stream-peer) | best before | median before | best after "
          "| median after | spread before/after % |")
    print("|---|---|---|---|---|---|")
    for a, b in zip(*peers):
        print("| %s | %.4g | %.4g | %.4g | %.4g | %s / %s |" % (
            a["name"], float(a["best_Bps"]) / 1e12,
            float(a["median_Bps"]) / 1e12, float(b["best_Bps"]) / 1e12,
            float(b["median_Bps"]) / 1e12, a["spread_pct"], b["spread_pct"]))
    l2s = [float(x["median_Bps"]) for x in peers[0] + peers[1]
           if x["name"].startswith("l2_")]
    print("\npeer L2 medians, both blocks: median %.4g, max %.4g TB/s" % (
        statistics.median(l2s) / 1e12, max(l2s) / 1e12))
    by = {x["name"]: x for x in peers[0]}
    by2 = {x["name"]: x for x in peers[1]}
    print("\n| ert figure | mode | ert median | peer | peer best (before/after)"
          " | ratio to the better best | ratio to the better median |")
    print("|---|---|---|---|---|---|---|")
    for fig, peer in (("hbm_triad", "triad"), ("hbm_read", "dot"),
                      ("hbm_read", "read"), ("hbm_write", "write")):
        for mode, src in (("quick", quick), ("full", full)):
            v = float(src[fig]["median"])
            bb = max(float(by[peer]["best_Bps"]), float(by2[peer]["best_Bps"]))
            bm = max(float(by[peer]["median_Bps"]),
                     float(by2[peer]["median_Bps"]))
            print("| %s | %s | %.4g | %s | %.4g / %.4g | %.4f | %.4f |" % (
                fig, mode, v / 1e12, peer, float(by[peer]["best_Bps"]) / 1e12,
                float(by2[peer]["best_Bps"]) / 1e12, v / bb, v / bm))

    print("\n| ws MiB | cg quick TB/s | geometry | cg full TB/s | geometry |")
    print("|---|---|---|---|---|")
    sq = list(lines(f"{d}/{p}-quick.tsv", "sweep"))
    sf = list(lines(f"{d}/{p}-full.tsv", "sweep"))
    for a, b in zip([x for x in sq if x["series"] == "cg"],
                    [x for x in sf if x["series"] == "cg"]):
        ws = float(a["ws_bytes"]) / 1048576
        if ws < 0.9 or ws > 100:
            continue
        print("| %.2f | %.3f | %s | %.3f | %s |" % (
            ws, float(a["value"]) / 1e12, a["geometry"],
            float(b["value"]) / 1e12, b["geometry"]))


if __name__ == "__main__":
    main()
