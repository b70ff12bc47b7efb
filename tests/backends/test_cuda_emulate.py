"""The CUDA emulator (``-b cupy --emulate``): its execution model on hand-written kernels, then the
backend's launches at sizes that take several blocks, a partial last block and grid-stride loops,
kernels the host compiler rejects, kernels that would hang a GPU, replays, and the panel's labels.

test_cuda.py runs every dry-run test under ``--emulate`` as well (all kernel shapes and dtypes).
"""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest
from harness import check
from test_cpu import PROGRAMS, SETUP
from test_cuda import edit_source

import jupyter_fuse as jf
from jupyter_fuse.backends import BackendUnavailable, cuda_emulate, get_backend
from jupyter_fuse.backends import cupy as jc
from jupyter_fuse.backends.cuda_emulate import EMULATED, EmulationError, compile_source

EMULATE = dict(backend="cupy", emulate=True)


def emulated(src: str, setup, **kw):
    """check() under --emulate: values are the CUDA kernels' own, against NumPy."""
    f = check(src, setup, **EMULATE, **kw)
    assert f.report is not None, f"the cell raised: {f.error!r}"
    fused = [k for k in f.report.kernel_list if k.get("source")]
    assert fused and all(k["runs_on"] == EMULATED and k["compiled"] for k in fused), f.report.kernel_list
    return f


def module(source: str, *entries: str) -> cuda_emulate.Module:
    mod, log, _ = compile_source(source, list(entries))
    assert mod is not None, log
    return mod


# -- the execution model, on hand-written CUDA ---------------------------------------------------

BLOCK_SUMS = r"""#define BLOCK 64
extern "C" __global__ void block_sums(const long long n, const double* __restrict__ x, double* __restrict__ out) {
  __shared__ double sh[BLOCK];
  double acc = 0.0;
  for (long long t = (long long)blockIdx.x * BLOCK + threadIdx.x; t < n; t += (long long)gridDim.x * BLOCK)
    acc += x[t];
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int w = BLOCK / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}

extern "C" __global__ void rotate(long long* __restrict__ out) {
  __shared__ long long sh[BLOCK];
  sh[threadIdx.x] = (long long)blockIdx.x * 1000 + threadIdx.x;
  __syncthreads();  /* without a real barrier, thread 0 would read its neighbour's slot before it is written */
  out[(long long)blockIdx.x * BLOCK + threadIdx.x] = sh[(threadIdx.x + 1) % BLOCK] + gridDim.x * 0 + blockDim.x * 0;
}

extern "C" __global__ void racy_rotate(long long* __restrict__ out) {
  __shared__ long long sh[BLOCK];
  sh[threadIdx.x] = (long long)blockIdx.x * 1000 + threadIdx.x;  /* no barrier: a race */
  out[(long long)blockIdx.x * BLOCK + threadIdx.x] = sh[(threadIdx.x + 1) % BLOCK];
}

extern "C" __global__ void half_waits(long long* __restrict__ out) {
  if (threadIdx.x < 32) {
    __syncthreads();
  }
  out[threadIdx.x] = 1;
}

extern "C" __global__ void two_barriers(long long* __restrict__ out) {
  if (threadIdx.x % 2) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1;
}

extern "C" __global__ void forever(const long long n) {
  volatile long long i = 0;
  while (n > 0) i = i + 1;
}
"""
ENTRIES = ("block_sums", "rotate", "racy_rotate", "half_waits", "two_barriers", "forever")


def test_a_grid_stride_reduction_in_shared_memory_over_several_blocks():
    mod = module(BLOCK_SUMS, *ENTRIES)
    n, grid = 1000, 5  # 320 threads for 1000 elements: three strides, the last one partial
    x = np.arange(n, dtype=np.float64)
    out = np.full(grid, np.nan)
    assert mod.launch("block_sums", grid, 64, [np.int64(n), x, out]) >= 0
    block = (np.arange(n) // 64) % grid
    np.testing.assert_array_equal(out, [x[block == b].sum() for b in range(grid)])
    assert mod.params["block_sums"] == ["x", "PKd", "Pd"]  # typeid names of the kernel's parameters


def rotated(entry: str, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """What ``entry`` (rotate or racy_rotate) wrote over ``blocks`` blocks, and the right answer: each
    thread's neighbour's slot of shared memory, block b's slots holding b * 1000 + thread."""
    out = np.zeros(blocks * 64, np.int64)
    module(BLOCK_SUMS, *ENTRIES).launch(entry, blocks, 64, [out])
    tid = np.arange(64)
    return out.reshape(blocks, 64), np.stack([b * 1000 + (tid + 1) % 64 for b in range(blocks)])


def test_syncthreads_is_a_barrier_and_shared_memory_is_per_block():
    out, right = rotated("rotate", 3)
    np.testing.assert_array_equal(out, right)


def test_a_race_in_shared_memory_gives_a_wrong_answer():
    """Without the barrier, thread t reads its neighbour's slot in one order or the other: wrong either way
    (block 0 runs its threads in ascending order, block 1 in descending order)."""
    out, right = rotated("racy_rotate", 2)
    assert (out != right).any(axis=1).all()


def test_a_barrier_some_threads_never_reach_stops_with_its_line():
    mod = module(BLOCK_SUMS, *ENTRIES)
    lines = BLOCK_SUMS.splitlines()
    start = next(i for i, ln in enumerate(lines) if "half_waits" in ln)
    line = next(i for i in range(start, len(lines)) if "__syncthreads" in lines[i]) + 1  # kernel.cu's line
    with pytest.raises(EmulationError) as e:
        mod.launch("half_waits", 2, 64, [np.zeros(64, np.int64)], name="k7")
    msg = str(e.value)
    assert "CUDA kernel k7 (half_waits)" in msg and "32 of its 64 threads wait at __syncthreads()" in msg
    assert f"(line {line})" in msg and "hangs" in msg
    with pytest.raises(EmulationError, match=r"different __syncthreads\(\) \(lines \d+ and \d+\)"):
        mod.launch("two_barriers", 1, 64, [np.zeros(64, np.int64)])
    out = np.zeros(64, np.int64)  # the runtime is fine afterwards
    mod.launch("rotate", 1, 64, [out])
    assert out[0] == 1


def test_a_kernel_that_never_finishes_stops_at_the_time_limit():
    mod = module(BLOCK_SUMS, *ENTRIES)
    with pytest.raises(EmulationError, match=r"CUDA kernel k3 \(forever\).*stopped after 0.3 s"):
        mod.launch("forever", 1, 64, [np.int64(1)], name="k3", timeout=0.3)


def test_an_interrupt_stops_a_launch():
    mod = module(BLOCK_SUMS, *ENTRIES)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))  # Jupyter's interrupt button
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match="forever"):
            mod.launch("forever", 1, 64, [np.int64(1)], timeout=30)
    finally:
        timer.cancel()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's handler is back


def test_the_argument_list_is_checked_against_the_kernels_parameters():
    mod = module(BLOCK_SUMS, *ENTRIES)
    x, out = np.zeros(10), np.zeros(1)
    with pytest.raises(EmulationError, match="argument 1 is a float32 array, the kernel takes `PKd`"):
        mod.launch("block_sums", 1, 64, [np.int64(10), x.astype(np.float32), out])
    with pytest.raises(EmulationError, match="argument 0 is int32"):
        mod.launch("block_sums", 1, 64, [np.int32(10), x, out])
    with pytest.raises(EmulationError, match="2 arguments for its 3 parameters"):
        mod.launch("block_sums", 1, 64, [np.int64(10), x])
    with pytest.raises(EmulationError, match="compiled for BLOCK 64"):
        mod.launch("block_sums", 1, 32, [np.int64(10), x, out])
    mod.launch("block_sums", 1, 64, [10, x, out])  # a Python int goes as CuPy passes it: int64


def test_what_the_compiler_rejects_comes_back_with_its_log():
    mod, log, _ = compile_source(BLOCK_SUMS.replace("acc += x[t];", "acc += no_such(x[t]);"), ["block_sums"])
    assert mod is None and "kernel.cu:6:" in log and "no_such" in log


def test_without_a_compiler_emulate_says_what_to_install(monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    with pytest.raises(BackendUnavailable, match=r"host C\+\+ compiler.*install g\+\+.*--dry-run"):
        get_backend("cupy", emulate=True)
    with pytest.raises(BackendUnavailable, match="does not apply to -b cpu"):
        get_backend("cpu", emulate=True)
    with pytest.raises(BackendUnavailable, match="does not apply to --dry-run"):
        get_backend("cupy", emulate=True, dry_run=True)


# -- the backend: several blocks, a partial last block, grid-stride loops ------------------------

def test_launches_with_several_blocks_partial_blocks_and_grid_stride_loops(monkeypatch):
    monkeypatch.setattr(cuda_emulate, "EMULATED_SMS", 1)  # a 1-multiprocessor GPU: at most 32 blocks a grid
    f = emulated("""
y = np.sin(x) * 2 + x
s = x.sum()
i = x.argmax()
j = (-x).argmin()
m = x.reshape(130, 130).max(axis=1)
v = x.reshape(130, 130).var(axis=0)
w = x[::-1].reshape(13, 1300).mean(axis=1)
u = x.reshape(130, 130).copy()
u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
""", "x = np.random.default_rng(0).random(16900); x[9000] = 2.0; x[15000] = 2.0")
    launches = {mode: [k["launch"] | {"block": k["block"]} for k in f.report.kernel_list if k.get("mode") == mode]
                for mode in ("ew", "full", "block")}
    assert {"n": 16900, "grids": [32], "block": 256} in launches["ew"]  # grid-stride; the last block partial
    assert {"nout": 1, "nred": 16900, "nparts": 32, "grids": [32, 1], "block": 256} in launches["full"]
    assert any(c["nout"] > c["grids"][0] for c in launches["block"])  # blocks stride over outputs
    assert any(c["nred"] % c["block"] for c in launches["block"])  # a block's threads stride over a row


def test_an_h200_sized_grid_strides_over_a_large_array():
    f = emulated("y = x * 2 + 1", "x = np.arange(1_100_003, dtype=np.float64)")
    (k,) = [k for k in f.report.kernel_list if k.get("source")]
    assert k["launch"]["grids"] == [132 * 32] and k["launch"]["n"] > 132 * 32 * 256  # the real launch's grid


def test_large_reductions_find_the_first_maximum_and_the_first_nan():
    emulated("a = x.argmax()\nb = x.argmin()\nc = z.argmax()\nd = z.max()\ne = x.reshape(300, 1000).argmax(axis=0)",
             "x = np.random.default_rng(0).random(300_000); x[77_777] = 2.0; x[288_888] = 2.0; x[5] = -1.0; "
             "x[299_999] = -1.0\nz = x.copy(); z[200_001] = np.nan; z[250_000] = np.nan")


def test_emulated_results_are_the_kernels_own(monkeypatch):
    """A wrong index in a kernel fails under --emulate; the dry run (NumPy's values) would not see it."""
    edit_source(monkeypatch, "out0[t] =", "out0[t > 0 ? t - 1 : 0] =")
    check("y = x * 2", "x = np.arange(10.0)", backend="cupy", dry_run=True)
    with pytest.raises(AssertionError, match="y"):
        check("y = x * 2", "x = np.arange(10.0)", **EMULATE)


# -- kernels the host compiler rejects, kernels that would hang ----------------------------------

def _rejected_by_gcc(monkeypatch):
    """``__dsqrt_rn`` is CUDA (NVRTC compiles it), not something the emulator's header provides."""
    edit_source(monkeypatch, "sqrt(", "__dsqrt_rn(")


def test_a_kernel_the_host_compiler_rejects_runs_on_the_cpu_and_says_why(monkeypatch, capsys):
    monkeypatch.delenv("JUPYTER_FUSE_STRICT", raising=False)
    _rejected_by_gcc(monkeypatch)
    x = np.random.default_rng(0).random(100)
    ns = {"np": np, "x": x}
    r = jf.run_cell("y = np.sqrt(x) * 2 + 1", ns, **EMULATE)
    np.testing.assert_allclose(ns["y"], np.sqrt(x) * 2 + 1)
    err = capsys.readouterr().err
    assert "CUDA kernel k0" in err and "failed to compile for the CPU (g++)" in err and "g++ log:" in err
    assert "'__dsqrt_rn' was not declared" in err  # the compiler's own log
    assert any(line.lstrip().startswith(">") and "__dsqrt_rn" in line for line in err.splitlines())  # marked
    assert "runs on the CPU backend instead; the cell completes there" in err
    (k,) = r.kernel_list
    assert k["compiled"] is False and "__dsqrt_rn" in k["cuda_source"] and "did not compile" in k["fallback"]
    assert r.fallbacks[-1]["reason"] == "the CUDA kernel did not compile; it ran on the CPU backend"


def test_a_kernel_the_host_compiler_rejects_is_an_error_in_strict_mode(monkeypatch):
    _rejected_by_gcc(monkeypatch)
    with pytest.raises(jc.CudaCompileError, match="k0.*the CPU"):
        jf.run_cell("y = np.sqrt(x)", {"np": np, "x": np.zeros(3)}, **EMULATE)


def test_a_rendered_kernel_that_would_hang_stops_with_an_error_naming_it(monkeypatch):
    edit_source(monkeypatch, "__syncthreads();", "if (threadIdx.x < 32) __syncthreads();", 1)
    ns = {"np": np, "x": np.random.default_rng(0).random(1000)}
    with pytest.raises(EmulationError, match=r"CUDA kernel k0 \(jf_part\).*__syncthreads\(\).*hangs"):
        jf.run_cell("y = np.sin(x)\ns = y.sum()", ns, **EMULATE)
    assert "s" not in ns


# -- the real run's behaviour: ledger, replays, the panel ----------------------------------------

@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_emulated_ledger_and_kernels_are_the_dry_runs(name):
    src = PROGRAMS[name][0] + "\nprint(float(np.asarray(X).sum()))\n"
    runs = {}
    for mode in ("dry_run", "emulate"):
        ns: dict = {"np": np}
        exec(SETUP, ns)
        runs[mode] = jf.run_cell(src, ns, backend="cupy", **{mode: True})
    strip = lambda r: [(t["direction"], t["bytes"], t["name"], t["cause"]) for t in r.transfers]  # noqa: E731
    assert strip(runs["emulate"]) == strip(runs["dry_run"])
    sources = {mode: [k.get("source") for k in r.kernel_list] for mode, r in runs.items()}
    assert sources["emulate"] == sources["dry_run"]
    emulated(PROGRAMS[name][0], SETUP)  # and the values, against NumPy


def test_replays_run_the_kernels_again_and_move_what_the_traced_run_moved():
    src = "y = np.sin(x) * 2\ns = y.sum()\nif s > 0:\n    z = y / s\nprint(s)\nx += 1"  # (a float() would be a guard)
    ns = {"np": np, "x": np.random.default_rng(0).random(1000)}
    ref = {"np": np, "x": ns["x"].copy()}
    x0 = ns["x"]
    reports = [jf.run_cell(src, ns, **EMULATE) for _ in range(3)]
    for _ in range(3):
        exec(src, ref)
    assert [r.cache for r in reports] == ["miss", "hit", "hit"] and ns["x"] is x0
    for k in ("x", "y", "z", "s"):
        np.testing.assert_allclose(ns[k], ref[k], rtol=1e-12)
        assert type(ns[k]) is type(ref[k])
    # (not the names: a replay calls the value a print() copies back "?", on every cupy backend alike)
    strip = lambda r: [(t["direction"], t["bytes"], t["cause"]) for t in r.transfers]  # noqa: E731
    assert strip(reports[0]) == strip(reports[1]) == strip(reports[2])
    assert all(k["runs_on"] == EMULATED for r in reports[1:] for k in r.kernel_list if k.get("source"))


def test_the_panel_says_the_kernels_ran_emulated_and_times_are_the_emulators():
    from jupyter_fuse.dashboard import html, text

    r = jf.run_cell("y = np.sin(x) * 2", {"np": np, "x": np.zeros(100)}, **EMULATE)
    d = r.to_dict()
    assert "fuse[cupy --emulate]" in html.headline(d) and "emulation time" in html.kernels_table(d)
    assert f"ran as {EMULATED}: timed on the CPU, not on a GPU" in html.kernel_sources(d)
    assert r.summary().startswith("fuse[cupy --emulate]") and "1/1 CUDA kernels compiled, emulated on the CPU" in \
        text.render(r)
    (k,) = r.kernel_list
    assert k["device_time"] is None and k["emulation_time"] > 0
