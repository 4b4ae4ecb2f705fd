#!/usr/bin/env python3
"""Summarize scripts/gpu-ab's runs.txt: one row per `tc bench decode` cell, one column per knob set.

runs.txt holds each run's output under a header "=== round R: SET". Rows read:
  step rows      " q4_0 |     8 | f16-q8 |    1.943 |  4118.1 | ... | kernels or public API: ..."
                 -> ms a step (public API rows keyed by their description up to the first comma)
  per-shape rows " q4_0 |     8 | f16-q8 |   shape 12288x4096: 14.33 us a launch, ... ; in the step
                 13.90 us | ..." -> us a launch, and us in the step where printed
A cell is "min-max" over the rounds (one value where the rounds agree to the digits shown), "?" where
a set never printed that row. `--selftest` checks the parsing and the table on a synthetic file.
"""
import re
import sys

HEADER = re.compile(r"^=== round (\d+): (.*)$")
STEP = re.compile(r"^\s*(q\w+) \|\s+(\d+) \|\s+(\S+) \|\s+([\d.]+) \|[^|]*\|[^|]*\|[^|]*\| (.*)$")
SHAPE = re.compile(r"^\s*(q\w+) \|\s+(\d+) \|\s+(\S+) \|\s+shape (\d+x\d+): ([\d.]+) us a launch")
IN_STEP = re.compile(r"in the step (-?[\d.]+) us")


def parse(lines):
    """{set: {key: [values]}} and the keys in first-seen order."""
    data, order, cur = {}, [], None
    for line in lines:
        m = HEADER.match(line)
        if m:
            cur = data.setdefault(m.group(2).strip() or "-", {})
            continue
        if cur is None:
            continue
        found = []
        m = SHAPE.match(line)
        if m:
            fmt, batch, x, shape, us = m.groups()
            found.append(((fmt, int(batch), x, "shape " + shape + " us"), float(us)))
            s = IN_STEP.search(line)
            if s:
                found.append(((fmt, int(batch), x, "shape " + shape + " in step us"), float(s.group(1))))
        else:
            m = STEP.match(line)
            if m:
                fmt, batch, x, ms, tail = m.groups()
                what = tail.split(",")[0].strip() if tail.startswith("public API") else "step ms"
                found.append(((fmt, int(batch), x, what), float(ms)))
        for key, v in found:
            if key not in order:
                order.append(key)
            cur.setdefault(key, []).append(v)
    return data, order


def cell(vals, digits):
    if not vals:
        return "?"
    lo, hi = f"{min(vals):.{digits}f}", f"{max(vals):.{digits}f}"
    return lo if lo == hi else f"{lo}-{hi}"


def table(data, order):
    sets = list(data)
    rows = [["format", "batch", "x", "what"] + sets]
    for key in order:
        digits = 3 if key[3].endswith("ms") or key[3].startswith("public") else 2
        rows.append([key[0], str(key[1]), key[2], key[3]] + [cell(data[s].get(key, []), digits) for s in sets])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(" | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


SAMPLE = """=== round 1: -
  q4_0 |     8 | f16-q8 |    1.943 |   4118.1 |    1913 |  45.2% | cuda_mma_b32_f16_wgmma(K=11008)
  q4_0 |     1 | f16-q8 |    1.104 |    905.5 |    3365 |  79.4% | public API: tc_gemv_quantized_async x129, one CUDA graph, X
  q4_0 |     8 | f16-q8 |   shape 12288x4096: 14.33 us a launch, 1976 GB/s, streaming at the copy rate 6.75 us (+7.58); in the step 13.90 us | cuda_mma_bulk_f16_hmma
(exit 0)
=== round 1: TC_QUANT_F16_XTMA=0
  q4_0 |     8 | f16-q8 |    1.962 |   4077.0 |    1894 |  44.8% | cuda_mma_b32_f16_wgmma(K=11008)
  q4_0 |     8 | f16-q8 |   shape 12288x4096: 15.37 us a launch, 1843 GB/s, streaming at the copy rate 6.74 us (+8.63) | cuda_mma_bulk_f16_hmma
=== round 2: -
  q4_0 |     8 | f16-q8 |    1.936 |   4133.0 |    1920 |  45.6% | cuda_mma_b32_f16_wgmma(K=11008)
  q4_0 |     1 | f16-q8 |    1.104 |    905.5 |    3365 |  79.4% | public API: tc_gemv_quantized_async x129, one CUDA graph, X
  q4_0 |     8 | f16-q8 |   shape 12288x4096: 14.36 us a launch, 1972 GB/s, streaming at the copy rate 6.75 us (+7.61); in the step 13.80 us | cuda_mma_bulk_f16_hmma
=== round 2: TC_QUANT_F16_XTMA=0
  q4_0 |     8 | f16-q8 |    1.959 |   4084.0 |    1897 |  44.9% | cuda_mma_b32_f16_wgmma(K=11008)
"""


def selftest():
    data, order = parse(SAMPLE.splitlines())
    assert list(data) == ["-", "TC_QUANT_F16_XTMA=0"], list(data)
    step = ("q4_0", 8, "f16-q8", "step ms")
    assert data["-"][step] == [1.943, 1.936] and data["TC_QUANT_F16_XTMA=0"][step] == [1.962, 1.959]
    api = ("q4_0", 1, "f16-q8", "public API: tc_gemv_quantized_async x129")
    assert data["-"][api] == [1.104, 1.104] and api not in data["TC_QUANT_F16_XTMA=0"]
    shape = ("q4_0", 8, "f16-q8", "shape 12288x4096 us")
    in_step = ("q4_0", 8, "f16-q8", "shape 12288x4096 in step us")
    assert data["-"][shape] == [14.33, 14.36] and data["-"][in_step] == [13.90, 13.80]
    assert data["TC_QUANT_F16_XTMA=0"][shape] == [15.37] and in_step not in data["TC_QUANT_F16_XTMA=0"]
    assert order == [step, api, shape, in_step], order
    text = table(data, order)
    rows = [[c.strip() for c in line.split("|")] for line in text.splitlines()]
    assert rows[0] == ["format", "batch", "x", "what", "-", "TC_QUANT_F16_XTMA=0"], rows[0]
    assert rows[1][4:] == ["1.936-1.943", "1.959-1.962"], rows[1]
    assert rows[2][4:] == ["1.104", "?"], rows[2]
    assert rows[3][4:] == ["14.33-14.36", "15.37"], rows[3]
    assert rows[4][4:] == ["13.80-13.90", "?"], rows[4]
    print("ab_table selftest: ok")


def main(argv):
    if argv[1:] == ["--selftest"]:
        selftest()
        return 0
    if len(argv) != 2:
        print("usage: ab_table.py RUNS.txt | --selftest", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8", errors="replace") as f:
        data, order = parse(f.read().splitlines())
    if not order:
        print("ab_table: no `tc bench decode` rows in " + argv[1])
        return 1
    print(table(data, order))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
