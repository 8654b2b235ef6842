"""Running a litmus test on the GPU with CuPy: iterations captured once in a CUDA graph
(bump → litmus → check, ``iters_per_graph`` times) and replayed until the time budget is spent;
outcomes are histogrammed on the GPU and decoded here into the checker's Outcome objects."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..errors import PtxmmError
from ..program import Program
from ..result import Outcome
from .build import compile_cubin
from .codegen import generate
from .env import Env, fit
from .layout import Layout, make_layout


@dataclass
class Observed:
    outcome: Outcome  # a value of None: the device saw a value outside every expected one
    count: int
    same_sm: int = 0  # how many of them ran every role on one SM

    @property
    def impossible_value(self) -> bool:
        return any(v is None for _, v in self.outcome.values)


@dataclass
class DeviceRun:
    program: Program
    layout: Layout
    env: Env
    instances: int
    seconds: float
    observed: list[Observed]
    dnf: int  # instances where a spin loop hit its bound
    device: str = ""
    checksum_ok: bool = True

    @property
    def per_s(self) -> float:
        return self.instances / self.seconds if self.seconds else 0.0


def cupy():
    """CuPy with a usable GPU, or a clear error."""
    try:
        import cupy as cp
    except ImportError:
        raise PtxmmError("CuPy is not installed", None,
                         "pip install 'ptxmm[device]' on a machine with an NVIDIA GPU") from None
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDARuntimeError and driver errors alike
        raise PtxmmError(f"no usable CUDA device: {e}", None, "run on a machine with a GPU") from None
    if n == 0:
        raise PtxmmError("no CUDA device", None, "run on a machine with a GPU")
    return cp


def _u32(x: int):
    import numpy as np

    return np.uint32(x)


class Harness:
    """Compiled kernels and device buffers for one (program, environment)."""

    def __init__(self, prog: Program, env: Env, layout: Layout | None = None, seed: int = 1):
        cp = self.cp = cupy()
        self.lay = layout or make_layout(prog)
        self.env = fit(env, self.lay.warps_per_cta, self.lay.cluster_size)
        self.prog = prog
        lay, e = self.lay, self.env
        self.source = generate(lay)
        self.cubin = compile_cubin(self.source)
        self.mod = cp.RawModule(path=str(self.cubin))
        self.k_bump = self.mod.get_function("ptxmm_bump")
        self.k_litmus = self.mod.get_function("ptxmm_litmus")
        self.k_check = self.mod.get_function("ptxmm_check")
        nb, bsz = e.blocks, e.threads
        self.n = n = nb * bsz
        lg = lay.n_global_slots
        nroles = len(prog.threads)
        self.params = cp.zeros(lay.params_words, dtype=cp.uint32)
        self.params[1] = seed & 0xFFFFFFFF
        self.mem = cp.zeros((n, lg, e.stride), dtype=cp.uint32)
        for m, name in enumerate(lay.globals_):
            self.mem[:, m, 0] = lay.init[name] & 0xFFFFFFFF
        self.res = cp.zeros(n * max(1, lay.n_res), dtype=cp.uint64)
        self.smid = cp.zeros(n * nroles, dtype=cp.uint32)
        self.dnf = cp.zeros(n, dtype=cp.uint32)
        self.bar = cp.zeros(1, dtype=cp.uint32)
        self.scratch = cp.zeros(max(1, e.stress_lines * e.stress_line_words), dtype=cp.uint32)
        self.hist = cp.zeros(lay.hist_size, dtype=cp.uint64)
        self.shfin = cp.zeros(max(1, n * len(lay.shared)), dtype=cp.uint32)
        self.shared_bytes = lay.shared_bytes(bsz)
        self.grid = nb + e.stress_blocks
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.graph = self._capture()

    def _iteration(self) -> None:
        e, lay = self.env, self.lay
        nc = e.blocks // lay.cluster_size
        self.k_bump((1,), (1,), (self.params, self.bar, _u32(nc), _u32(e.threads), _u32(self.n),
                                 _u32(e.barrier_pct)))
        self.k_litmus((self.grid,), (e.threads,),
                      (self.params, self.mem, self.res, self.smid, self.dnf, self.bar, self.scratch,
                       self.shfin, _u32(e.blocks), _u32(e.threads), _u32(e.stride), _u32(int(e.rotate)),
                       _u32(e.stress_loops), _u32(max(1, e.stress_lines)),
                       _u32(max(1, e.stress_line_words))),
                      shared_mem=self.shared_bytes)
        self.k_check((self.n // 256,), (256,), (self.params, self.mem, self.res, self.smid, self.dnf,
                                                self.shfin, self.hist, _u32(self.n), _u32(e.stride)))

    def _capture(self):
        with self.stream:
            self._iteration()  # one eager iteration: loads the module, checks the launch works
            self.stream.synchronize()
            self.stream.begin_capture()
            for _ in range(self.env.iters_per_graph):
                self._iteration()
            g = self.stream.end_capture()
            g.upload(self.stream)
            self.stream.synchronize()
        return g

    def run(self, budget_s: float = 1.5, iterations: int | None = None) -> DeviceRun:
        """Replay the graph for ``budget_s`` seconds (or ``iterations`` iterations, rounded up to
        whole graphs) and decode the histogram."""
        cp = self.cp
        with self.stream:
            self.hist.fill(0)
            self.stream.synchronize()
            launches = 0
            t0 = time.perf_counter()
            want = None if iterations is None else -(-iterations // self.env.iters_per_graph)
            while True:
                batch = 8 if want is None else min(8, want - launches)
                for _ in range(batch):
                    self.graph.launch(self.stream)
                launches += batch
                self.stream.synchronize()
                dt = time.perf_counter() - t0
                if (want is not None and launches >= want) or (want is None and dt >= budget_s):
                    break
            h = cp.asnumpy(self.hist)
            hist = {int(k): int(h[k]) for k in h.nonzero()[0]}
        instances = launches * self.env.iters_per_graph * self.n
        run = decode(self.prog, self.lay, hist, self.env, instances, dt)
        run.device = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()
        return run


def decode(prog: Program, lay: Layout, hist: dict[int, int], env: Env, instances: int,
           seconds: float) -> DeviceRun:
    """Histogram ({key: count}, non-zero entries) → observed outcomes. Pure Python."""
    counts: dict[Outcome, list[int]] = {}
    dnf = 0
    total = 0
    for key, c in sorted(hist.items()):
        total += c
        if key >> lay.dnf_bit & 1:
            dnf += c
            continue
        vals = []
        for s in lay.slots:
            code = key >> s.shift & ((1 << s.bits) - 1)
            vals.append((s.obs.key, s.values[code] if code < len(s.values) else None))
        o = Outcome(tuple(vals))
        acc = counts.setdefault(o, [0, 0])
        acc[0] += c
        if key >> lay.samesm_bit & 1:
            acc[1] += c
    observed = sorted((Observed(o, c, s) for o, (c, s) in counts.items()), key=lambda x: -x.count)
    return DeviceRun(prog, lay, env, instances, seconds, observed, dnf, checksum_ok=total == instances)
