#!/usr/bin/env python3
"""Cross-check tc against the ggml project's Python package `gguf` (gguf-py).

Usage: gguf_py_crosscheck.py XCHECK_BINARY WORKDIR PYDEPS_DIR
Installs `gguf` into PYDEPS_DIR with pip when it is not importable; exits 77 (CTest skip) with
the reason when that is impossible. Checks:
  * our Q4_0 / Q8_0 bytes equal gguf.quants.quantize's;
  * our Q4_K / Q6_K dequantization equals gguf.quants.dequantize's, bit for bit;
  * a file written by GGUFWriter is read by tc (metadata, shapes, types, tensor bytes);
  * a file written by tc is read by GGUFReader (same checks).
"""
import os
import subprocess
import sys

SKIP = 77


def import_gguf(pydeps):
    sys.path.insert(0, pydeps)
    try:
        import gguf  # noqa: F401
        import numpy  # noqa: F401
        return
    except ImportError:
        pass
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "--target", pydeps, "gguf"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except Exception as e:  # no pip, no network, timeout
        print(f"SKIP: cannot run pip to install gguf: {e}")
        sys.exit(SKIP)
    if r.returncode != 0:
        print("SKIP: pip could not install gguf:\n" + r.stderr[-2000:])
        sys.exit(SKIP)
    import importlib
    importlib.invalidate_caches()


def run(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(map(str, args))}: {r.stderr}")
    return r.stdout


def main():
    xcheck, work, pydeps = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    import_gguf(pydeps)
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as QT
    print("gguf-py", getattr(gguf, "__version__", "?"), "from", os.path.dirname(gguf.__file__))

    rng = np.random.default_rng(5)
    rows, cols = 13, 1024
    x = (rng.standard_normal((rows, cols)) * rng.uniform(0.01, 10, (rows, 1))).astype(np.float32)
    x[3, :32] = 0  # an all-zero block
    xf = os.path.join(work, "x.f32")
    x.tofile(xf)
    failures = []

    # 1. Quantized bytes.
    for name, qt in (("q4_0", QT.Q4_0), ("q8_0", QT.Q8_0)):
        out = os.path.join(work, f"ours.{name}")
        run(xcheck, "quantize", name, rows, cols, xf, out)
        ours = np.fromfile(out, dtype=np.uint8).reshape(rows, -1)
        theirs = gguf.quants.quantize(x, qt)
        diff = int(np.count_nonzero(ours != theirs))
        print(f"{name}: {ours.size} bytes, {diff} differ from gguf.quants.quantize")
        if diff:
            failures.append(f"{name} bytes differ in {diff} places")

    # 2. Dequantization: Q4_K of our quantizer, Q6_K of random bytes with a sane scale.
    q4k_path = os.path.join(work, "ours.q4_k")
    run(xcheck, "quantize", "q4_k", rows, cols, xf, q4k_path)
    q6k = rng.integers(0, 256, (rows, cols // 256, 210), dtype=np.uint8)
    q6k[..., 208:210] = np.frombuffer(np.float16(0.01).tobytes(), dtype=np.uint8)
    q6k_path = os.path.join(work, "rand.q6_k")
    q6k.reshape(rows, -1).tofile(q6k_path)
    for name, qt, path in (("q4_k", QT.Q4_K, q4k_path), ("q6_k", QT.Q6_K, q6k_path)):
        out = os.path.join(work, f"deq.{name}")
        run(xcheck, "dequantize", name, rows, cols, path, out)
        ours = np.fromfile(out, dtype=np.float32).reshape(rows, cols)
        theirs = gguf.quants.dequantize(np.fromfile(path, dtype=np.uint8).reshape(rows, -1), qt)
        diff = int(np.count_nonzero(ours.view(np.uint32) != theirs.astype(np.float32).view(np.uint32)))
        print(f"{name}: {ours.size} values, {diff} differ bitwise from gguf.quants.dequantize")
        if diff:
            failures.append(f"{name} dequant differs in {diff} values")
    # Sanity: the Q4_K round trip is close to the input (our quantizer is real, not zeros).
    deq = np.fromfile(os.path.join(work, "deq.q4_k"), dtype=np.float32).reshape(rows, cols)
    rel = np.linalg.norm(deq - x) / np.linalg.norm(x)
    print(f"q4_k round trip rms_scaled {rel:.3g}")
    if not 0.01 < rel < 0.12:
        failures.append(f"q4_k round trip error {rel}")

    # 3. GGUFWriter -> tc reader.
    py_path = os.path.join(work, "py.gguf")
    wr = gguf.GGUFWriter(py_path, "xcheck")
    wr.add_uint32("xcheck.u32", 7)
    wr.add_int64("xcheck.i64", -5)
    wr.add_float32("xcheck.f32", 1.5)
    wr.add_string("xcheck.str", "hello")
    wr.add_array("xcheck.arr", [1, 2, 3])
    tensors = {"t.q4_0": (gguf.quants.quantize(x, QT.Q4_0), QT.Q4_0),
               "t.q8_0": (gguf.quants.quantize(x, QT.Q8_0), QT.Q8_0)}
    for n, (data, qt) in tensors.items():
        wr.add_tensor(n, data, raw_dtype=qt)
    wr.add_tensor("t.f32", x)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()
    lines = run(xcheck, "read", py_path).splitlines()
    kv = {l.split()[1]: l.split(None, 3)[3] for l in lines if l.startswith("kv ")}
    tens = {l.split()[1]: l.split()[2:] for l in lines if l.startswith("tensor ")}
    want_kv = {"general.architecture": "xcheck", "xcheck.u32": "7", "xcheck.i64": "-5",
               "xcheck.f32": "1.5", "xcheck.str": "hello"}
    for k, v in want_kv.items():
        if kv.get(k) != v:
            failures.append(f"tc read {k} = {kv.get(k)!r} from GGUFWriter's file, want {v!r}")
    if "xcheck.arr" not in kv or kv["xcheck.arr"].split() != ["5", "3"]:
        failures.append(f"tc read xcheck.arr as {kv.get('xcheck.arr')!r}, want INT32 x 3")
    reader = gguf.GGUFReader(py_path)
    for t in reader.tensors:
        got = tens.get(t.name)
        want = [str(int(t.tensor_type)), str(len(t.shape))] + [str(int(s)) for s in t.shape]
        want += [str(int(t.n_bytes))]
        if got is None or got[:-1] != want:
            failures.append(f"tensor {t.name}: tc says {got}, gguf-py says {want}")
    print(f"tc read GGUFWriter's file: {len(kv)} metadata entries, {len(tens)} tensors")

    # 4. tc writer -> GGUFReader.
    tc_path = os.path.join(work, "tc.gguf")
    run(xcheck, "write", tc_path, rows, cols, xf)
    reader = gguf.GGUFReader(tc_path)
    f = reader.get_field("xcheck.i32")
    if f is None or int(f.parts[f.data[0]][0]) != -12345:
        failures.append("GGUFReader: xcheck.i32 missing or wrong")
    f = reader.get_field("general.architecture")
    if f is None or bytes(f.parts[f.data[0]]).decode() != "tcxcheck":
        failures.append("GGUFReader: general.architecture missing or wrong")
    by_name = {t.name: t for t in reader.tensors}
    for name, qt in (("w.q4_0", QT.Q4_0), ("w.q8_0", QT.Q8_0), ("w.q4_k", QT.Q4_K)):
        t = by_name.get(name)
        if t is None or t.tensor_type != qt or [int(s) for s in t.shape] != [cols, rows]:
            failures.append(f"GGUFReader: tensor {name} missing or wrong type/shape")
            continue
        ours = np.fromfile(os.path.join(work, f"ours.{name[2:]}"), dtype=np.uint8)
        if not np.array_equal(np.asarray(t.data).reshape(-1), ours):
            failures.append(f"GGUFReader: tensor {name} bytes differ from tc's")
        deq = gguf.quants.dequantize(np.asarray(t.data), qt)
        rel = np.linalg.norm(deq.reshape(rows, cols) - x) / np.linalg.norm(x)
        if rel > 0.12:
            failures.append(f"GGUFReader: {name} dequantizes to error {rel}")
    t = by_name.get("w.f32")
    if t is None or not np.array_equal(np.asarray(t.data).reshape(rows, cols), x):
        failures.append("GGUFReader: w.f32 differs")
    print(f"GGUFReader read tc's file: {len(reader.fields)} fields, {len(reader.tensors)} tensors")

    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
