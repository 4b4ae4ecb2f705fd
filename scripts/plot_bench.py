#!/usr/bin/env python3
"""Charts of `tc bench gemm --json` output: TFLOP/s against size, ours beside the peer.

Usage: scripts/plot_bench.py BENCH.json OUTDIR

Writes into OUTDIR (PNG, 150 dpi):
  gemm_sweep.png   one panel per dtype: tc (autotuned dispatch), tc's own kernels and the peer
                   (cuBLASLt on CUDA, OpenBLAS on the CPU) against the square size;
  gemm_shapes.png  odd shapes, NT/TN and batched cases as grouped bars (CUDA runs);
  gemm_decode.png  decode shapes: GB/s of weight reads against M, one panel per weight shape.
A chart is skipped when the JSON has no cells for it. Needs matplotlib.
"""
import json
import os
import sys
from collections import defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_bench.py: matplotlib is not installed (pip install matplotlib)")

COLORS = {"tc": "#1f77b4", "own": "#2ca02c", "peer": "#d62728"}


def load(path):
    with open(path) as f:
        doc = json.load(f)
    cells = []
    for c in doc.get("cells", []):
        if "error" in c:
            continue
        if "table" not in c:  # the CPU bench's cells: tflops, optional peer ratio
            tf = c.get("tflops")
            ratio = c.get("ratio")
            c = dict(c, table="sweep", tc=tf, own=None,
                     peer=(tf / ratio if tf and ratio else None),
                     label="{} {}^3".format(c["dtype"], c["M"]))
        cells.append(c)
    return doc, cells


def title(doc, what):
    peer = "cuBLASLt" if "cublaslt" in str(doc.get("peer", "")) else "peer"
    return "{} on {} (tc {}, vs {}){}".format(
        what, doc.get("device", "?"), doc.get("version", "?"), peer,
        ", " + doc["date"] if "date" in doc else "")


def plot_sweep(doc, cells, out):
    by_dtype = defaultdict(list)
    for c in cells:
        if c["table"] == "sweep":
            by_dtype[c["dtype"]].append(c)
    if not by_dtype:
        return None
    n = len(by_dtype)
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 4 * rows), squeeze=False)
    for ax, (dtype, cs) in zip(axes.flat, sorted(by_dtype.items())):
        cs.sort(key=lambda c: c["M"])
        x = [c["M"] for c in cs]
        for key, name in (("tc", "tc (autotuned)"), ("own", "tc own kernels"),
                          ("peer", "cuBLASLt" if "cublaslt" in str(doc.get("peer")) else "peer")):
            ys = [c.get(key) for c in cs]
            if any(y for y in ys):
                ax.plot(x, [y if y else float("nan") for y in ys], marker="o", label=name,
                        color=COLORS[key], linestyle="--" if key == "own" else "-")
        ax.set_xscale("log", base=2)
        ax.set_xticks(x)
        ax.set_xticklabels([str(v) for v in x])
        ax.set_xlabel("M = N = K")
        ax.set_ylabel("TOP/s" if dtype == "i8" else "TFLOP/s")
        ax.set_title(dtype)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(title(doc, "GEMM sweep"))
    fig.tight_layout()
    path = os.path.join(out, "gemm_sweep.png")
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def plot_shapes(doc, cells, out):
    cs = [c for c in cells if c["table"] == "shapes"]
    if not cs:
        return None
    fig, ax = plt.subplots(figsize=(max(8, 1.4 * len(cs)), 4.5))
    width = 0.27
    for i, (key, name) in enumerate((("tc", "tc (autotuned)"), ("own", "tc own kernels"),
                                     ("peer", "cuBLASLt"))):
        xs = [j + (i - 1) * width for j in range(len(cs))]
        ys = [c.get(key) or 0 for c in cs]
        ax.bar(xs, ys, width, label=name, color=COLORS[key])
    for j, c in enumerate(cs):
        if c.get("ratio"):
            top = max(c.get("tc") or 0, c.get("own") or 0, c.get("peer") or 0)
            ax.text(j, top * 1.02, "x{:.2f}".format(c["ratio"]), ha="center", fontsize=8)
    ax.set_xticks(range(len(cs)))
    ax.set_xticklabels([c["label"] for c in cs], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("TFLOP/s")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title(doc, "GEMM shapes (x = cuBLASLt time / tc time)"), fontsize=10)
    fig.tight_layout()
    path = os.path.join(out, "gemm_shapes.png")
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def plot_decode(doc, cells, out):
    by_w = defaultdict(list)
    for c in cells:
        if c["table"] == "decode":
            by_w["W {}x{}".format(c["N"], c["K"])].append(c)
    if not by_w:
        return None
    fig, axes = plt.subplots(1, len(by_w), figsize=(5 * len(by_w), 4), squeeze=False)
    for ax, (w, cs) in zip(axes.flat, by_w.items()):
        cs.sort(key=lambda c: c["M"])
        x = [c["M"] for c in cs]
        for key, name in (("tc", "tc (autotuned)"), ("own", "tc own kernels"),
                          ("peer", "cuBLASLt")):
            ys = [c.get(key) for c in cs]
            if any(y for y in ys):
                ax.plot(x, [y if y else float("nan") for y in ys], marker="o", label=name,
                        color=COLORS[key], markersize=3,
                        linestyle="--" if key == "own" else "-")
        ax.set_xlabel("M (tokens)")
        ax.set_ylabel("GB/s of weights")
        ax.set_title("f16 " + w)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title(doc, "decode GEMM"))
    fig.tight_layout()
    path = os.path.join(out, "gemm_decode.png")
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    doc, cells = load(sys.argv[1])
    os.makedirs(sys.argv[2], exist_ok=True)
    made = [p for p in (plot_sweep(doc, cells, sys.argv[2]), plot_shapes(doc, cells, sys.argv[2]),
                        plot_decode(doc, cells, sys.argv[2])) if p]
    for p in made:
        print("wrote", p)
    if not made:
        sys.exit("plot_bench.py: no cells to plot in " + sys.argv[1])


if __name__ == "__main__":
    main()
