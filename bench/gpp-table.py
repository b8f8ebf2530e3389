#!/usr/bin/env python3
"""bench/gpp-table.py - the tables of docs/gpp.md from the hierarchical
plugin's records of the recorded GPP runs.

Usage: bench/gpp-table.py DIR
  DIR holds h-<step>/records.tsv, the hierarchical plugin's output for the
  steps nw, nw-nofma, stride, v1..v8 (pipelines/gpp-replay.yaml and
  gpp-versions-replay.yaml make them; bench/gpp-replay.sh makes them with
  roofline-job alone).  Prints markdown tables: fp64 points, one row per kernel.
"""
import sys


def points(path):
    """kernel -> level -> fields of the fp64 aggregate points."""
    out = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if f[0] != "point":
            continue
        kv = dict(x.split("=", 1) for x in f[1:] if "=" in x)
        if kv.get("precision") != "fp64" or kv.get("invocation") != "all":
            continue
        out.setdefault(kv["kernel"], {})[kv["level"]] = kv
    return out


def short(k):
    return k.replace("void ", "").replace("(gpp_args)", "")


def table(title, pts, extra_cols=()):
    print(f"\n### {title}\n")
    print("| kernel | time µs | GFLOP/s | AI L1 | AI L2 | AI DRAM | L1 GB | L2 GB | DRAM GB | α | partial-FMA GFLOP/s | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k, lv in pts.items():
        d = lv["dram"]
        print("| %s | %.1f | %.0f | %.3g | %.3g | %.3g | %.2f | %.2f | %.3f | %.3f | %.0f | %s%s |" % (
            short(k), float(d["time_s"]) * 1e6, float(d["gflops"]),
            float(lv["l1"]["ai"]), float(lv["l2"]["ai"]), float(d["ai"]),
            float(lv["l1"]["bytes"]) / 1e9, float(lv["l2"]["bytes"]) / 1e9, float(d["bytes"]) / 1e9,
            float(d["alpha"]), float(d["partial_fma_gflops"]), d["verdict"],
            "" if d["verdict"] == "compute-bound" else "@" + d["bound_level"]))


def main():
    base = sys.argv[1]
    for step, title in (("nw", "nw sweep, FMA contraction on (gpp --exp nw)"),
                        ("nw-nofma", "nw sweep, --fmad=false (gpp_nofma --exp nw)"),
                        ("stride", "ig stride at nw = 6 (gpp --exp stride)")):
        table(title, points(f"{base}/h-{step}/records.tsv"))
    allv = {}
    for v in range(1, 9):
        allv.update(points(f"{base}/h-v{v}/records.tsv"))
    table("SC20 versions at nw = 3 (gpp --exp versions --only K)", allv)
    t1 = float(next(iter(allv.values()))["dram"]["time_s"])
    print("\n| version | speedup (ncu duration) |\n|---|---|")
    for k, lv in allv.items():
        print("| %s | %.2fx |" % (short(k), t1 / float(lv["dram"]["time_s"])))


main()
