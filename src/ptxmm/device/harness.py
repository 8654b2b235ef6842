"""Running a litmus test on the GPU with CuPy: iterations captured once in a CUDA graph
(one bump, then litmus → check ``iters_per_graph`` times) and replayed until the time budget is spent;
outcomes are histogrammed on the GPU and decoded here into the checker's Outcome objects. Every wait
on the GPU has a deadline (DeviceTimeout), so a hung kernel ends the run instead of the process."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, replace

from ..errors import PtxmmError
from ..ir.program import Program
from ..semantics.result import Outcome
from .build import compile_cubin
from .codegen import fusable, generate
from .env import RANDOM_CHUNK_S, Env, draw_config, fit
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
    # the launch configurations replayed (knobs, instances, seconds): one, or Env.random_config's draws
    configs: tuple[tuple[str, int, float], ...] = ()

    @property
    def per_s(self) -> float:
        return self.instances / self.seconds if self.seconds else 0.0


def cupy():
    """CuPy with a usable GPU, or a clear error."""
    try:
        import cupy as cp
    except ImportError:
        from .doctor import extra_for

        # the extra `ptxmm doctor` recommends, not the CUDA 12 alias `ptxmm[device]`
        raise PtxmmError("CuPy is not installed", None,
                         f"{extra_for(None)}, on a machine with an NVIDIA GPU (ptxmm doctor says "
                         "which)") from None
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


class DeviceTimeout(PtxmmError):
    """A launch did not finish within its deadline: a kernel that never ends (no watchdog here)."""

    kind = "timeout"


def _wait(ev, deadline: float, what: str) -> None:
    """Wait for a recorded event, or raise DeviceTimeout at the deadline (a kernel that never ends:
    this GPU has no watchdog, every loop of the generated code is bounded, so this means a bug)."""
    while not ev.done:
        if time.perf_counter() > deadline:
            raise DeviceTimeout(f"{what} did not finish in time: the kernel seems hung", None,
                                "the GPU context is unusable now; rerun the rest in a new process")
        time.sleep(0.0002)


def co_resident_blocks(kernel, threads: int, shared_bytes: int) -> int:
    """How many blocks of ``kernel`` the whole GPU holds at once (0 if CuPy cannot say)."""
    import cupy as cp

    try:
        per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads,
                                                                          shared_bytes)
        sms = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["multiProcessorCount"]
    except Exception:
        return 0
    return int(per_sm) * int(sms)


def fit_co_resident(env: Env, capacity: int, cluster_size: int) -> Env:
    """With a barrier, every testing and stress block must be resident at once, or the barrier
    waits out its bound: halve the testing blocks until they fit."""
    blocks = env.blocks
    while capacity and env.barrier_pct and blocks > cluster_size and blocks + env.stress_blocks > capacity:
        blocks //= 2
    return replace(env, blocks=blocks) if blocks != env.blocks else env


def fit_fused(env: Env, lay: Layout) -> Env:
    """Fused roles only where the layout allows them (codegen.fusable); other tests run unfused,
    and the environment reported says so."""
    return replace(env, fused=False) if env.fused and not fusable(lay) else env


SHARED_LIMIT = 48 * 1024  # dynamic shared memory per block without an opt-in attribute


def fit_sync(env: Env, lay: Layout) -> Env:
    """Adjust a fitted environment to a layout's memory and synchronization: one instance plane
    per block when shared memory holds instances (.shared locations, mbarriers); at most
    ``lay.max_threads`` per block (a hardware barrier per warp group), and with tensor copies
    (padded shared box rows) no more than 48 KiB of dynamic shared memory (halving the threads,
    down to one warp group); 16-byte global slots for bulk copies."""
    if (lay.shared or lay.mbars) and env.reps > 1:  # shared memory holds one plane per block
        env = replace(env, reps=1)
    if env.threads > lay.max_threads:
        env = replace(env, threads=lay.max_threads)
    least = 32 * (lay.sync.mw if lay.sync is not None else 1)
    while lay.tensor is not None and env.threads > least and lay.shared_bytes(env.threads) > SHARED_LIMIT:
        env = replace(env, threads=env.threads // 2)
    if lay.min_stride > 1 and env.stride % lay.min_stride:
        env = replace(env, stride=env.stride + lay.min_stride - env.stride % lay.min_stride)
    return env


class Harness:
    """Compiled kernels and device buffers for one (program, environment)."""

    def __init__(self, prog: Program, env: Env, layout: Layout | None = None, seed: int = 1,
                 timeout_s: float = 60.0):
        self.cp = cupy()
        self.lay = layout or make_layout(prog)
        self.timeout_s = timeout_s
        self.seed = seed
        env = self._fit(env)
        self.prog = prog
        lay = self.lay
        self.source = generate(lay, fused=env.fused, generic=env.generic, tail_fence=env.tail_fence)
        self.cubin = compile_cubin(self.source, rdc=env.rdc, ptxas=env.ptxas)
        self.mod = self.cp.RawModule(path=str(self.cubin))
        self.k_bump = self.mod.get_function("ptxmm_bump")
        self.k_litmus = self.mod.get_function("ptxmm_litmus")
        self.k_check = self.mod.get_function("ptxmm_check")
        # Env.random_config: the base (what the code was compiled for) and the configurations drawn
        self.base = env
        self._rng = random.Random(seed) if env.random_config else None
        self._cfg_s = 0.0  # replay seconds of the current configuration
        self._draws = 0
        self._setup(draw_config(env, self._rng) if self._rng else env)

    def _fit(self, env: Env) -> Env:
        lay = self.lay
        return fit_fused(fit_sync(fit(env, lay.warps_per_cta, lay.cluster_size), lay), lay)

    def _setup(self, env: Env) -> None:
        """Buffers and the captured graph for one launch configuration (the compiled code is the
        same for every configuration: blocks, threads, stride, barrier and stress are arguments)."""
        cp, lay = self.cp, self.lay
        env = self._fit(env)
        self.shared_bytes = lay.shared_bytes(env.threads)
        self.env = e = fit_co_resident(env, co_resident_blocks(self.k_litmus, env.threads, self.shared_bytes),
                                       lay.cluster_size)
        nb, bsz = e.blocks, e.threads
        self.n = n = nb * bsz * e.reps  # instances per iteration: reps planes of nb * bsz
        lg = lay.n_global_slots
        ipg = e.iters_per_graph
        seed = self.seed + 7919 * self._draws  # a fresh permutation sequence per configuration
        self._draws += 1
        self._cfg_s = 0.0
        self.params = cp.zeros(lay.params_words * ipg, dtype=cp.uint32)
        self.ctr = cp.array([0, seed & 0xFFFFFFFF], dtype=cp.uint32)
        slots = n * lg * e.stride
        tw = lay.tensor.words if lay.tensor is not None else 0
        self.mem = cp.zeros(slots + n * tw, dtype=cp.uint32)  # slots, then the tensor region
        for m, name in enumerate(lay.globals_):
            if lay.tensor is None or lay.tensor.global_element(name) is None:
                self.mem[:slots].reshape(n, lg, e.stride)[:, m, 0] = lay.init[name] & 0xFFFFFFFF
        self.maps = self._tensor_maps(slots, n) if lay.tensor is not None else []
        self.res = cp.zeros(n * max(1, lay.n_res), dtype=cp.uint64)
        self.bsm = cp.zeros(nb, dtype=cp.uint32)
        self.dnf = cp.zeros(n, dtype=cp.uint32)
        self.bar = cp.zeros(ipg, dtype=cp.uint32)
        self.scratch = cp.zeros(max(1, e.stress_lines * e.stress_line_words), dtype=cp.uint32)
        self.hist = cp.zeros(lay.hist_size * lay.hist_copies, dtype=cp.uint64)
        self.shfin = cp.zeros(max(1, n * len(lay.shared)), dtype=cp.uint32)
        self.grid = nb + e.stress_blocks
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.graph = self._capture()

    def _tensor_maps(self, slots: int, n: int) -> list:
        """Initialise the tensor region (every instance's row: the arrays' initial words) and
        encode one map per tensor map location over it (tensor.py)."""
        from .tensor import encode_tiled

        t = self.lay.tensor
        maps = []
        for arr in t.arrays:  # n rows of arr.words words (TensorArray.word, ptxmm_tword)
            start = arr.start(slots, n)
            rows = self.mem[start:start + n * arr.words].reshape(n, arr.words)
            for k in range(arr.elements):
                rows[:, 4 * k] = self.lay.init[f"{arr.name}[{k}]"] & 0xFFFFFFFF
        for m in t.maps:
            arr = t.array(m.array)
            address = self.mem.data.ptr + 4 * arr.start(slots, n)
            maps.append(encode_tiled(m.encoding(arr, n, address)))
        return maps

    def stages(self) -> dict[str, list]:
        """The pipeline's launches by stage, for one graph of ``iters_per_graph`` iterations (for
        profiling); "all" is what the graph holds."""
        e, lay = self.env, self.lay
        nc = e.blocks // lay.cluster_size
        w = lay.params_words

        def bump():
            self.k_bump((1,), (e.iters_per_graph,), (self.params, self.ctr, self.bar, _u32(nc),
                                                     _u32(e.threads), _u32(self.n), _u32(e.barrier_pct),
                                                     _u32(e.stripe), _u32(int(e.coalesce))))

        def litmus(j: int):
            args = (self.params[j * w:], self.mem, self.res, self.bsm, self.dnf, self.bar[j:],
                    self.scratch, self.shfin, _u32(e.blocks), _u32(e.threads), _u32(e.stride),
                    _u32(int(e.rotate)), _u32(e.stress_loops), _u32(max(1, e.stress_lines)),
                    _u32(max(1, e.stress_line_words)), _u32(e.reps), _u32(e.pre_stress),
                    _u32(32 if self.lay.sync is not None else e.warp_gap),
                    _u32(int(e.thread_barrier and self.lay.sync is None)))
            if self.maps:  # tensor maps: the last parameters, 128 bytes each, by value
                from .tensor import kernel_arg

                args += tuple(kernel_arg(m.bytes()) for m in self.maps)
            self.k_litmus((self.grid,), (e.threads,), args, shared_mem=self.shared_bytes)

        def check(j: int):
            self.k_check((self.n // 256,), (256,), (self.params[j * w:], self.mem, self.res, self.bsm,
                                                    self.dnf, self.shfin, self.hist, _u32(self.n),
                                                    _u32(e.threads), _u32(e.stride),
                                                    _u32(e.blocks * e.threads)))

        its = range(e.iters_per_graph)
        return {"bump": [bump], "litmus": [lambda j=j: litmus(j) for j in its],
                "check": [lambda j=j: check(j) for j in its],
                "all": [bump] + [f for j in its for f in (lambda j=j: litmus(j), lambda j=j: check(j))]}

    def _capture(self):
        cp = self.cp
        with self.stream:
            for stage in self.stages()["all"]:  # one eager graph's worth: loads the module, checks launches
                stage()
            ev = cp.cuda.Event(disable_timing=True)
            ev.record(self.stream)
            _wait(ev, time.perf_counter() + self.timeout_s, "the first launch")
            self.stream.begin_capture()
            for stage in self.stages()["all"]:
                stage()
            g = self.stream.end_capture()
            g.upload(self.stream)
            self.stream.synchronize()
        return g

    def run(self, budget_s: float = 1.5, iterations: int | None = None) -> DeviceRun:
        """Replay the graph for ``budget_s`` seconds (or ``iterations`` iterations, rounded up to
        whole graphs) and decode the histogram. Under ``Env.random_config`` a fresh launch
        configuration is drawn every RANDOM_CHUNK_S seconds of replay (``iterations``: the current
        one only); the run's ``configs`` lists each configuration used with its instances and
        seconds, its ``env`` is the base environment."""
        if self._rng is None or iterations is not None:
            hist, instances, dt = self._replay(budget_s, iterations)
            run = self._decode(hist, instances, dt, self.base if self._rng else self.env)
            run.configs = ((self.env.short(), instances, round(dt, 4)),)
            return run
        total: dict[int, int] = {}
        instances, dt = 0, 0.0
        configs = []
        while dt < budget_s:
            if self._cfg_s >= RANDOM_CHUNK_S - 1e-9:
                self._setup(draw_config(self.base, self._rng))
            hist, k, t = self._replay(min(RANDOM_CHUNK_S - self._cfg_s, budget_s - dt), None)
            self._cfg_s += t
            for key, c in hist.items():
                total[key] = total.get(key, 0) + c
            instances += k
            dt += t
            configs.append((self.env.short(), k, round(t, 4)))
        run = self._decode(total, instances, dt, self.base)
        run.configs = tuple(configs)
        return run

    def _decode(self, hist: dict[int, int], instances: int, dt: float, env: Env) -> DeviceRun:
        run = decode(self.prog, self.lay, hist, env, instances, dt)
        run.device = self.cp.cuda.runtime.getDeviceProperties(self.cp.cuda.Device().id)["name"].decode()
        return run

    def _replay(self, budget_s: float, iterations: int | None) -> tuple[dict[int, int], int, float]:
        """Replay the current configuration's graph: (histogram, instances, seconds). Batches of
        graphs are queued one ahead of the one waited for, so the GPU never idles on the host."""
        cp = self.cp
        with self.stream:
            self.hist.fill(0)
            self.stream.synchronize()
            launches = 0
            t0 = time.perf_counter()
            want = None if iterations is None else -(-iterations // self.env.iters_per_graph)
            pending = None
            while True:
                batch = 8 if want is None else min(8, want - launches)
                for _ in range(batch):
                    self.graph.launch(self.stream)
                launches += batch
                ev = cp.cuda.Event(disable_timing=True)
                ev.record(self.stream)
                if pending is not None:
                    _wait(pending, time.perf_counter() + self.timeout_s, "a graph replay")
                pending = ev
                dt = time.perf_counter() - t0
                if (want is not None and launches >= want) or (want is None and dt >= budget_s):
                    break
            _wait(pending, time.perf_counter() + self.timeout_s, "a graph replay")
            dt = time.perf_counter() - t0
            h = cp.asnumpy(self.hist.reshape(self.lay.hist_copies, self.lay.hist_size).sum(axis=0))
            hist = {int(k): int(h[k]) for k in h.nonzero()[0]}
        return hist, launches * self.env.iters_per_graph * self.n, dt


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
