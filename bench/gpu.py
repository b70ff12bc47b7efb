"""GPU check and benchmark: the GPU tests, then NumPy vs CuPy eager vs cupy.fuse vs jax.jit vs %%fuse -b cupy.

    bench/gpu.sh                 # the GPU tests, then the benchmark (within 8 minutes on one GPU)
    bench/gpu.sh --no-tests      # the benchmark only
    bench/gpu.sh --quick         # small sizes: a smoke test of the script itself

Needs an NVIDIA GPU and CuPy (no network); without a device it says so and exits 0.
Programs: those of bench/cpu.py (Black-Scholes, row softmax, 5-point stencil, n-body, 20-step loop,
read from that file's source, so both benchmarks time the same cells) plus a large
``sin(x)**2 + cos(x)**2`` (1.5e8 float64). Every result is checked against NumPy.

Columns (milliseconds, best of ``--repeat``, the device synchronized): NumPy on the host; CuPy
eager (the cell with ``np`` = ``cupy``, inputs already on the device); ``cupy.fuse`` where the
program can be written as one fused function; ``jax.jit`` (float64; the NumPy inputs copied to the device on each call) when
JAX with a GPU is importable; ``%%fuse -b cupy`` as a notebook runs it (NumPy arrays in, NumPy
arrays out: the transfers included) and resident (``--keep``: CuPy arrays in and out, no transfers).
Then each fused kernel's achieved bandwidth (bytes read + written / CUDA-event time) against the
device's measured copy bandwidth: transfers usually cost more than the kernels, and that is the point.
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

os.environ.setdefault("JUPYTER_FUSE_PLAIN", "off")  # (it times replays: one NumPy beats would run as plain NumPy)
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUDGET_S = 8 * 60  # the whole script, tests included
OUTPUTS = {"black_scholes": ("call", "put"), "softmax": ("p",), "stencil": ("out",), "nbody": ("ax", "ay"),
           "loop": ("x", "w"), "sincos": ("y",)}
SINCOS = "y = np.sin(x) ** 2 + np.cos(x) ** 2\n"


def cpu_programs() -> dict[str, str]:
    """The cells of bench/cpu.py, read from its source (importing it would need numba and numexpr)."""
    tree = ast.parse((ROOT / "bench" / "cpu.py").read_text())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found[node.targets[0].id] = node.value.value
    names = {"black_scholes": "BLACK_SCHOLES", "softmax": "SOFTMAX", "stencil": "STENCIL", "nbody": "NBODY",
             "loop": "LOOP"}
    return {k: found[v] for k, v in names.items()} | {"sincos": SINCOS}


def data(quick: bool) -> dict[str, dict[str, Any]]:
    rng = np.random.default_rng(0)
    if quick:
        n_bs, rc, n_st, n_nb, n_loop, n_sc = 100_000, (256, 128), 256, 256, 100_000, 1_000_000
    else:
        n_bs, rc, n_st, n_nb, n_loop, n_sc = 10_000_000, (4096, 4096), 4096, 4096, 10_000_000, 150_000_000
    return {
        "black_scholes": dict(S=rng.uniform(50, 150, n_bs), K=rng.uniform(50, 150, n_bs), r=0.03, v=0.25, T=1.5),
        "softmax": dict(X=rng.normal(size=rc)),
        "stencil": dict(u=rng.random((n_st, n_st))),
        "nbody": dict(px=rng.random(n_nb), py=rng.random(n_nb), m=rng.random(n_nb)),
        "loop": dict(x0=rng.normal(size=n_loop), w0=rng.normal(size=n_loop)),
        "sincos": dict(x=rng.uniform(-10, 10, n_sc)),
    }


# -- cupy.fuse versions, where the program is one fused elementwise function ----------------------

def fuse_versions(cp: Any) -> dict[str, Callable[..., dict]]:
    @cp.fuse()
    def _bs(S, K, r, v, T):  # bench/cpu.py's BLACK_SCHOLES, term for term
        sq = v * cp.sqrt(T)
        d1 = (cp.log(S / K) + (r + 0.5 * v * v) * T) / sq
        d2 = d1 - sq
        k1 = 1.0 / (1.0 + 0.2316419 * cp.abs(d1))
        k2 = 1.0 / (1.0 + 0.2316419 * cp.abs(d2))
        p1 = 0.3989422804 * cp.exp(-0.5 * d1 * d1) * (k1 * (0.31938153 + k1 * (-0.356563782 + k1 * (
            1.781477937 + k1 * (-1.821255978 + k1 * 1.330274429)))))
        p2 = 0.3989422804 * cp.exp(-0.5 * d2 * d2) * (k2 * (0.31938153 + k2 * (-0.356563782 + k2 * (
            1.781477937 + k2 * (-1.821255978 + k2 * 1.330274429)))))
        n1 = cp.where(d1 > 0, 1.0 - p1, p1)
        n2 = cp.where(d2 > 0, 1.0 - p2, p2)
        disc = K * cp.exp(-r * T)
        call = S * n1 - disc * n2
        return call, call - S + disc

    @cp.fuse()
    def _stencil(c, n, s, w, e):
        return c + 0.1 * (n + s + w + e - 4.0 * c)

    @cp.fuse()
    def _step(x, w):
        w = w - 0.01 * (x * x * x - x)
        return x + 0.01 * w, w

    @cp.fuse()
    def _sincos(x):
        return cp.sin(x) ** 2 + cp.cos(x) ** 2

    def bs(S, K, r, v, T):
        call, put = _bs(S, K, np.float64(r), np.float64(v), np.float64(T))
        return {"call": call, "put": put}

    def stencil(u):
        return {"out": _stencil(u[1:-1, 1:-1], u[:-2, 1:-1], u[2:, 1:-1], u[1:-1, :-2], u[1:-1, 2:])}

    def loop(x0, w0):
        x, w = x0.copy(), w0.copy()
        for _ in range(20):  # one fused kernel per step (cupy.fuse cannot carry a Python loop)
            x, w = _step(x, w)
        return {"x": x, "w": w}

    return {"black_scholes": bs, "stencil": stencil, "loop": loop, "sincos": lambda x: {"y": _sincos(x)}}


def jax_version(src: str, outputs: tuple[str, ...]) -> Callable[..., dict] | None:
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        if not any(d.platform == "gpu" for d in jax.devices()):
            return None
    except Exception:  # noqa: BLE001 - no JAX, or no JAX GPU: the column says so
        return None

    def cell(**kw):
        ns = dict(kw, np=jnp)
        exec(src, ns)  # tracing runs the cell's Python once: the whole cell becomes one XLA program
        return tuple(ns[o] for o in outputs)

    fn = jax.jit(cell)

    def run(**kw):
        out = fn(**{k: (jnp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()})
        return dict(zip(outputs, out))

    return run


# -- timing ---------------------------------------------------------------------------------------

def timed(fn: Callable[[], Any], repeat: int, sync: Callable[[], None]) -> tuple[float, Any]:
    out = fn()  # warm-up: compiles, allocator pools
    sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3, out


def check(name: str, ref: dict, got: dict, label: str) -> bool:
    """Compare with NumPy; a mismatch is printed and marks the column, and the benchmark goes on."""
    try:
        for k in OUTPUTS[name]:
            v = got[k]
            v = v.get() if hasattr(v, "get") and not isinstance(v, np.ndarray) else np.asarray(v)
            np.testing.assert_allclose(v, ref[k], rtol=1e-8, atol=1e-9 * float(np.abs(ref[k]).max()),
                                       err_msg=f"{name}/{label}/{k}")
    except AssertionError as e:
        print(f"MISMATCH {name}/{label}: {str(e)[:600]}", flush=True)
        return False
    return True


def copy_bandwidth(cp: Any) -> float:
    """Device-to-device copy bandwidth in GB/s (read + write), the ceiling of a memory-bound kernel."""
    a = cp.empty(1 << 28, np.uint8)  # 256 MiB
    b = cp.empty_like(a)
    cp.copyto(b, a)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    best = float("inf")
    for _ in range(10):
        start.record()
        cp.copyto(b, a)
        end.record()
        end.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, end) / 1e3)
    return 2 * a.nbytes / best / 1e9


def run_tests(deadline: float) -> int:
    left = max(30, int(deadline - time.time() - 240))  # leave the benchmark its share
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu",
           str(ROOT / "tests" / "backends" / "test_cuda_gpu.py")]
    print(f"$ {' '.join(cmd)}  (timeout {left} s)", flush=True)
    try:
        return subprocess.run(cmd, cwd=ROOT, timeout=left).returncode
    except subprocess.TimeoutExpired:
        print("GPU tests: timed out", flush=True)
        return 124


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-tests", action="store_true")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    t_start = time.time()
    deadline = t_start + BUDGET_S
    from jupyter_fuse.backends import cuda_available

    if not cuda_available():
        print("bench/gpu.py: no usable CUDA device (or no CuPy): skipping the GPU tests and the benchmark. "
              "Without a GPU, `%%fuse -b cupy --dry-run` still compiles every kernel and `--emulate` runs "
              "them on the CPU (tests/backends/test_cuda.py).")
        return 0
    import cupy as cp

    import jupyter_fuse as jf

    tests_rc = None if args.no_tests else run_tests(deadline)
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    bw = copy_bandwidth(cp)
    sync = dev.synchronize
    fused_fns = fuse_versions(cp)
    programs = cpu_programs()
    rows, kernel_rows = [], []
    for name, inputs in data(args.quick).items():
        if args.only and name not in args.only:
            continue
        if time.time() > deadline - 45:
            print(f"{name}: skipped (time budget)", flush=True)
            continue
        try:
            bad: list[str] = []
            src, outs = programs[name], OUTPUTS[name]
            big = name == "sincos" and not args.quick
            rep = 1 if big else args.repeat
            ns0 = {"np": np, **inputs}
            t0 = time.perf_counter()
            ref = dict(ns0)
            exec(src, ref)
            t_np = (time.perf_counter() - t0) * 1e3
            if not big:
                t_np, _ = timed(lambda: exec(src, dict(ns0)), min(rep, 3), lambda: None)
            dev_in = {k: (cp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}

            def eager():
                ns = {"np": cp, **dev_in}
                exec(src, ns)
                return ns

            t_cp, got = timed(eager, rep, sync)
            bad += [] if check(name, ref, got, "cupy") else ["cupy"]
            t_fuse = None
            if name in fused_fns:
                t_fuse, got = timed(lambda: fused_fns[name](**dev_in), rep, sync)
                bad += [] if check(name, ref, got, "cupy.fuse") else ["cupy.fuse"]
            t_jax = None
            jx = jax_version(src, outs)
            if jx is not None:
                t_jax, got = timed(lambda: jx(**inputs), rep, sync)
                bad += [] if check(name, ref, got, "jax.jit") else ["jax.jit"]

            def fused_host():
                ns = dict(ns0)
                ns["_r"] = jf.run_cell(src, ns, backend="cupy")
                return ns

            t_first0 = time.perf_counter()
            first = fused_host()
            t_first = (time.perf_counter() - t_first0) * 1e3
            bad += [] if check(name, ref, first, "fuse") else ["fuse"]
            t_host, got = timed(fused_host, rep, sync)
            report = got["_r"]

            def fused_resident():
                ns = {"np": np, **dev_in}
                ns["_r"] = jf.run_cell(src, ns, backend="cupy", keep=True)
                return ns

            t_res, got = timed(fused_resident, rep, sync)
            bad += [] if check(name, ref, got, "fuse --keep") else ["fuse --keep"]
            res_report = got["_r"]
            ktime = sum(k.get("device_time") or 0.0 for k in res_report.kernel_list) * 1e3
            for k in res_report.kernel_list:
                moved = k["bytes_read"] + k["bytes_written"]
                dt = k.get("device_time")
                if dt:
                    kernel_rows.append((name, k["name"], k.get("mode", k["kind"]), ", ".join(k["ops"])[:40], moved,
                                        dt * 1e3, moved / dt / 1e9))
            rows.append(dict(name=name, ops=report.ops, kernels=report.kernels, np=t_np, cp=t_cp, fuse=t_fuse,
                             jax=t_jax, host=t_host, first=t_first, res=t_res, ktime=ktime,
                             h2d=report.bytes_h2d, d2h=report.bytes_d2h, bad=bad))
        except Exception as e:  # noqa: BLE001 - one program's failure is reported; the others still run
            import traceback

            traceback.print_exc()
            print(f"{name}: FAILED ({type(e).__name__}: {e})", flush=True)
            continue
        print(f"{name}: done ({time.time() - t_start:.0f} s)", flush=True)
    print()
    print("| program | kernel | launch | ops | MB moved | device ms | GB/s | % of copy bandwidth |")
    print("|---|---|---|---|---|---|---|---|")
    for name, kname, mode, ops, moved, ms, gbs in kernel_rows:
        print(f"| {name} | {kname} | {mode} | {ops} | {moved / 1e6:.1f} | {ms:.3f} | {gbs:.0f} | {100 * gbs / bw:.0f}% |")
    print()
    name_dev = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"device: {name_dev}, copy bandwidth {bw:.0f} GB/s (device-to-device, read + write), "
          f"cupy {cp.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}"
          + ("" if tests_rc is None else f"; GPU tests: {'passed' if tests_rc == 0 else f'FAILED (rc {tests_rc})'}"))
    print()
    fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    print("| program | ops -> kernels | NumPy ms | CuPy eager ms | cupy.fuse ms | jax.jit ms | %%fuse ms (NumPy in/out) "
          "| transfers MB h2d/d2h | %%fuse resident ms (--keep) | kernels' device ms | %%fuse first ms | against NumPy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['name']} | {r['ops']} -> {r['kernels']} | {r['np']:.1f} | {fmt(r['cp'])} | {fmt(r['fuse'])} | "
              f"{fmt(r['jax'])} | {fmt(r['host'])} | {r['h2d'] / 1e6:.0f}/{r['d2h'] / 1e6:.0f} | {fmt(r['res'])} | "
              f"{r['ktime']:.2f} | {r['first']:.0f} | {'MISMATCH: ' + ', '.join(r['bad']) if r['bad'] else 'same'} |")
    return 0 if tests_rc in (None, 0) else 1


if __name__ == "__main__":
    sys.exit(main())
