#!/usr/bin/env python3
"""Summarize a bulk-GEMV launch trace (TC_QUANT_BULK_TRACE=path, src/cuda/gemv_quant_bulk_trace.cuh).

The trace holds, per traced launch (slot) and CTA, 8 global-timer words (ns): 0 CTA start, 1 after
the grid dependency wait, 2 X quantized, 3 the first stage landed (warp 0), 4 the last warp done,
5 the last copy issued, 6 SM id | tiles << 32, 7 the last stage landed. `path.txt` lists the
launches ("N K grid format" per line). For a run of consecutive launches (by default the graph
replay of `tc bench decode --batches 1 --formats F`: slots 129..257) this prints, per shape, the
medians over its launches of:

  crit      previous launch's last CTA end -> this launch's last CTA end (what a step pays)
  wait      previous end -> median return of the grid dependency wait
  xq        median time to quantize X after the wait
  x_to_end  median X quantized -> last CTA end
  land_end  median last stage landed -> CTA end (dots after the data is in)
  start     this launch's first CTA start relative to the previous end (negative: PDL overlap)

`--phases` prints, per shape, every phase's median (over CTAs, then launches) from the previous
launch's end, labelled by the row's kind. Rows of format >= 10 are the batched wgmma kernel's
(b32::Params::trace in src/cuda/quant_mma_b32_kernel.cuh): in the table above their "xq" is
the wait -> the first stage and "land_end" the MMA loop's end -> the CTA's end (its epilogue
and K-split reduction).

`--xt FILE...` instead summarizes the timeline lines that the batched X-in-registers kernel
prints under TC_QUANT_F16_ABLATE=3 (src/cuda/quant_mma_xreg.cu: "XT count cta entry
grid-wait X-loaded first-stage end", ns) in each file (e.g. the output of `tc bench decode
--per-shape` under that knob): the grid wait -> X loaded (min / median / max) and X -> the first
stage (median).

Times in microseconds. `--selftest` checks the arithmetic on a synthetic trace.
"""
import argparse
import statistics
import struct
import sys
import tempfile
from pathlib import Path

WORDS, CTAS, SLOTS = 8, 256, 1024  # kTraceWords, kTraceCtas, kTraceSlots


def read_trace(path):
    data = Path(path).read_bytes()
    if len(data) != WORDS * CTAS * SLOTS * 8:
        raise SystemExit(f"{path}: {len(data)} bytes, expected {WORDS * CTAS * SLOTS * 8}")
    text = Path(str(path) + ".txt").read_text()
    launches = [tuple(int(v) for v in line.split()) for line in text.splitlines() if line.strip()]
    return data, launches


def word(data, slot, cta, w):
    return struct.unpack_from("<Q", data, ((slot * CTAS + cta) * WORDS + w) * 8)[0]


def traced(data, launches, first, count):
    """The traced launches of slots first .. first + count - 1 in order: (n, k, format, cols,
    end, prev_end), cols[w][cta] the words, end the last CTA's end, prev_end the previous traced
    launch's (None for the first)."""
    prev_end = None
    for slot in range(first, min(first + count, len(launches))):
        n, k, grid, fmt = launches[slot]
        cols = [[word(data, slot, c, w) for c in range(grid)] for w in range(8)]
        if any(t == 0 for t in cols[0]):
            print(f"slot {slot}: a CTA wrote no start (not traced)", file=sys.stderr)
            continue
        end = max(cols[4])
        yield n, k, fmt, cols, end, prev_end
        prev_end = end


def summarize(data, launches, first, count):
    rows = {}
    for n, k, _fmt, cols, end, prev_end in traced(data, launches, first, count):
        med = statistics.median
        r = {
            "crit": end - prev_end if prev_end else None,
            "wait": med(cols[1]) - prev_end if prev_end else None,
            "xq": med([b - a for a, b in zip(cols[1], cols[2])]),
            "x_to_end": end - med(cols[2]),
            "land_end": med([b - a for a, b in zip(cols[7], cols[4])]),
            "start": min(cols[0]) - prev_end if prev_end else None,
        }
        rows.setdefault((n, k), []).append(r)
    out = {}
    for shape, rs in rows.items():
        out[shape] = {key: (statistics.median([r[key] for r in rs if r[key] is not None]) / 1000
                            if any(r[key] is not None for r in rs) else float("nan"))
                      for key in rs[0]}
        out[shape]["n"] = len(rs)
    return out


# Per-CTA words as phases, by the row's format: the bulk GEMV's (< 10) and the batched wgmma
# kernel's (>= 10, b32::Params::trace); word 6 is an id, not a time.
PHASES = {
    False: [(0, "start"), (1, "wait"), (2, "x_done"), (3, "first"), (5, "last_copy"),
            (7, "last_land"), (4, "end")],
    True: [(0, "start"), (1, "wait"), (2, "first"), (5, "last_copy"), (7, "mma_end"),
           (3, "cl_sync"), (4, "end")],
}


def phases(data, launches, first, count):
    """Per shape: the median over its launches of each phase's median over CTAs, in us from the
    previous launch's last CTA end (the first launch of the range is skipped: it has none)."""
    rows = {}
    for n, k, fmt, cols, _end, prev_end in traced(data, launches, first, count):
        if prev_end is None:
            continue
        r = {}
        for w, name in PHASES[fmt >= 10]:
            vals = [t for t in cols[w] if t != 0]  # word 3 is unwritten without a cluster split
            if vals:
                r[name] = (statistics.median(vals) - prev_end) / 1000
        rows.setdefault((n, k, fmt >= 10), []).append(r)
    out = {}
    for key, rs in rows.items():
        names = [nm for _, nm in PHASES[key[2]] if all(nm in r for r in rs)]
        out[key] = {nm: statistics.median([r[nm] for r in rs]) for nm in names}
        out[key]["n"] = len(rs)
    return out


def print_phases(out):
    for (n, k, b32), v in out.items():
        names = [nm for _, nm in PHASES[b32] if nm in v]
        print(f"{f'{n}x{k}':>12} {'b32' if b32 else 'gemv':>4} n={v['n']:<3} " +
              " ".join(f"{nm} {v[nm]:.2f}" for nm in names))


def xt_summary(lines):
    """The XT lines' grid wait -> X loaded (min, median, max) and X -> first stage (median)."""
    rows = [[int(v) for v in line.split()[1:]] for line in lines if line.startswith("XT ")]
    if not rows:
        return None
    wait_x = sorted((r[4] - r[3]) / 1e3 for r in rows)
    x_first = sorted((r[5] - r[4]) / 1e3 for r in rows)
    return {"n": len(rows), "min": wait_x[0], "med": statistics.median(wait_x),
            "max": wait_x[-1], "first": statistics.median(x_first)}


def print_table(out):
    keys = ["crit", "wait", "xq", "x_to_end", "land_end", "start"]
    print(f"{'shape':>12} {'n':>3} " + " ".join(f"{k:>9}" for k in keys))
    for (n, k), v in out.items():
        print(f"{f'{n}x{k}':>12} {v['n']:>3} " + " ".join(f"{v[key]:9.2f}" for key in keys))


def selftest():
    # Two launches on 2 CTAs (other shapes): launch 1 ends at 10000 ns, launch 2's CTAs start at
    # 9000 / 9500, wait returns at 10500 / 10700, X at 12000 / 12400, the last stage lands at
    # 15000 / 15500, the CTAs end at 16000 / 17000.
    buf = bytearray(WORDS * CTAS * SLOTS * 8)

    def put(slot, cta, vals):
        for w, v in enumerate(vals):
            struct.pack_into("<Q", buf, ((slot * CTAS + cta) * WORDS + w) * 8, v)

    put(0, 0, [1000, 1500, 3000, 3500, 9000, 2000, 0, 8000])
    put(0, 1, [1000, 1500, 3000, 3500, 10000, 2000, 1, 8000])
    put(1, 0, [9000, 10500, 12000, 12500, 16000, 9100, 0, 15000])
    put(1, 1, [9500, 10700, 12400, 12900, 17000, 9600, 1, 15500])

    def run(fn, fmt):  # fn on the trace, the second launch of format fmt
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "t.bin"
            p.write_bytes(bytes(buf))
            Path(str(p) + ".txt").write_text(f"4096 11008 2 0\n4096 4096 2 {fmt}\n")
            return fn(*read_trace(p), 0, 2)

    def check(what, v, want):
        for key, w in want.items():
            if abs(v[key] - w) > 1e-9:
                raise SystemExit(f"selftest ({what}): {key} = {v[key]}, expected {w}")

    check("table", run(summarize, 0)[(4096, 4096)],
          {"n": 1, "crit": 7.0, "wait": 0.6, "xq": 1.6, "x_to_end": 4.8, "land_end": 1.25,
           "start": -1.0})
    check("phases, b32", run(phases, 10)[(4096, 4096, True)],
          {"n": 1, "start": -0.75, "wait": 0.6, "first": 2.2, "last_copy": -0.65,
           "mma_end": 5.25, "cl_sync": 2.7, "end": 6.5})
    check("phases, gemv", run(phases, 0)[(4096, 4096, False)],
          {"x_done": 2.2, "first": 2.7, "last_land": 5.25})
    xt = xt_summary(["noise", "XT 5000 3 100 2000 5000 5200 9000",
                     "XT 5001 4 100 2000 4000 4100 9000", "XT 5002 5 100 3000 6000 6300 9000"])
    check("xt", xt, {"n": 3, "min": 2.0, "med": 3.0, "max": 3.0, "first": 0.2})
    print("trace_sum selftest passed")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", nargs="?", help="the TC_QUANT_BULK_TRACE file (path.txt beside it)")
    ap.add_argument("--first", type=int, default=129, help="first slot (default 129: the graph's)")
    ap.add_argument("--count", type=int, default=129, help="launches (default 129: one 7B step)")
    ap.add_argument("--phases", action="store_true",
                    help="per shape, each phase's median in us from the previous launch's end "
                    "(batched-decode rows: --first 128 --count 128 at batch 8 / 32)")
    ap.add_argument("--xt", nargs="+", metavar="FILE",
                    help="summarize the XT timeline lines of TC_QUANT_F16_ABLATE=3 output files")
    ap.add_argument("--selftest", action="store_true", help="check the arithmetic and exit")
    a = ap.parse_args()
    if a.selftest:
        selftest()
        return
    if a.xt:
        for f in a.xt:
            v = xt_summary(Path(f).read_text(errors="replace").splitlines())
            print(f"{f}: no XT lines" if v is None else
                  f"{f}: {v['n']} CTAs, grid wait -> X loaded min {v['min']:.2f} median "
                  f"{v['med']:.2f} max {v['max']:.2f} us; X -> first stage median {v['first']:.2f}")
        return
    if not a.trace:
        ap.error("a trace file is needed (or --selftest)")
    if a.phases:
        print_phases(phases(*read_trace(a.trace), a.first, a.count))
        return
    print_table(summarize(*read_trace(a.trace), a.first, a.count))


if __name__ == "__main__":
    main()
