"""Running a planned kernel (:mod:`.kernel_plan`) very many times on the GPU with CuPy.

One instance is one launch of the kernel, unchanged, with its own buffers: one allocation holds
``instances`` blocks of ``plan.stride`` bytes, and each launch gets the addresses of its block's
buffers as its pointer arguments. A CUDA graph holds one round: the blocks reset from the initial
image (guards included) and the assertion counters cleared, then ``instances`` launches spread
round-robin over ``lanes`` streams forked from and joined to the capturing stream, so that up to
``lanes`` instances run at once (each launch's blocks race each other, as the kernel's do),
optionally with memory-stress kernels on streams of their own (the Env's stress knobs). Two such
graphs, over two halves of the memory, alternate: while one replays, the other's final states are
copied back and histogrammed on the host (:class:`Histogram`: per instance the bytes of every
element, whether a guard byte changed, how many threads failed an assertion). Every wait has a
deadline (a hung kernel ends the run: DeviceTimeout).

A tensor map argument (``CUtensorMap tm = tensormap(a, …)``) is encoded per instance, by the CUDA
driver's ``cuTensorMapEncodeTiled`` (ctypes on ``libcuda.so.1``: CuPy has no binding of it) with
the address of ``a`` in that instance's block, and its 128 bytes are passed by value
(:func:`instance_args`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..errors import PtxmmError
from .env import Env
from .kernel_plan import SENTINEL, KernelPlan, assemble
from .tensor import MAP_BYTES as TENSORMAP_BYTES
from .tensor import MapArgs, kernel_arg

# cuTensorMapEncodeTiled: its arguments (tensor.MapArgs) → the map's 128 bytes
TiledEncoder = Callable[[MapArgs], bytes]


def driver_encoder() -> TiledEncoder:
    """cuTensorMapEncodeTiled of the CUDA driver, through the litmus harness's binding
    (tensor.encode_tiled: ctypes on ``libcuda.so.1``, the map in a 128-byte aligned host buffer).
    Interleave, swizzle, L2 promotion and OOB fill are NONE (0): zero fill, as the model's tensor
    loads assume. The launch's rules were checked when it was read; the driver checks them again
    (tests/device/test_tensor_map_kernels_gpu.py holds the two against each other)."""
    from .tensor import encode_tiled

    return lambda a: encode_tiled(a, check=False).bytes()


def instance_values(plan: KernelPlan, base: int, encode: TiledEncoder | None) -> tuple[int | bytes, ...]:
    """The kernel arguments of the instance whose block starts at device address ``base``, as
    plain values: each buffer's address and each scalar as an int, each tensor map as the 128
    bytes ``encode`` (cuTensorMapEncodeTiled) makes for its buffer's address in this block."""
    out: list[int | bytes] = []
    for a in plan.args:
        if a.buffer is not None:
            out.append(base + plan.buffers[a.buffer].offset)
        elif a.tensormap is not None:
            if encode is None:
                raise PtxmmError("a tensor map argument needs an encoder", None, None)
            m = plan.maps[a.tensormap]
            raw = encode(m.at(base + plan.buffers[m.buffer].offset))
            if len(raw) != TENSORMAP_BYTES:
                raise PtxmmError(f"the encoder made {len(raw)} bytes of tensor map {m.name}", None, None)
            out.append(bytes(raw))
        else:
            out.append(a.value)
    return tuple(out)


def kernel_args(plan: KernelPlan, values: tuple[int | bytes, ...]) -> tuple:
    """``instance_values`` as CuPy launches them: addresses as uint64, scalars at their width, a
    tensor map as a one-element numpy array of 128 raw bytes, which CuPy passes by value."""
    import numpy as np

    types = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
    out: list = []
    for a, v in zip(plan.args, values):
        if isinstance(v, bytes):
            out.append(kernel_arg(v))
        else:
            out.append(np.uint64(v) if a.buffer is not None else types[a.width](v))
    return tuple(out)


def instance_args(plan: KernelPlan, base: int, encode: TiledEncoder | None) -> tuple:
    """The launch arguments of one instance (``kernel_args`` of ``instance_values``)."""
    return kernel_args(plan, instance_values(plan, base, encode))


STRESS_SOURCE = r"""
extern "C" __global__ void ptxmm_kernel_stress(unsigned *scratch, unsigned loops, unsigned lines,
                                               unsigned words) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  for (unsigned i = 0; i < loops; i++) {
    volatile unsigned *p = scratch + ((t * 7u + i * 13u) % lines) * words + threadIdx.x % words;
    *p = *p + 1u;
  }
}
"""


@dataclass(frozen=True)
class KernelEnv:
    """How instances are run: per graph round, over how many streams, with what stress."""

    instances: int = 1024  # launches (instances) per graph
    lanes: int = 32  # streams the launches are spread over (instances in flight at once)
    stress_blocks: int = 0
    stress_loops: int = 0
    stress_lines: int = 0
    stress_line_words: int = 0

    @classmethod
    def of(cls, env: Env, instances: int = 1024, lanes: int = 32) -> KernelEnv:
        return cls(instances, lanes, env.stress_blocks, env.stress_loops, env.stress_lines,
                   env.stress_line_words)

    def as_dict(self) -> dict:
        return {"instances_per_graph": self.instances, "streams": self.lanes,
                "stress_blocks": self.stress_blocks, "stress_loops": self.stress_loops,
                "stress_lines": self.stress_lines, "stress_line_words": self.stress_line_words}

    def short(self) -> str:
        s = f"{self.instances} launches/graph over {self.lanes} streams"
        if self.stress_blocks:
            s += f", stress {self.stress_blocks}b/{self.stress_loops}l/{self.stress_lines}L"
        return s


@dataclass(frozen=True)
class State:
    """One observed final state: every element's value (unsigned), whether some write left the
    buffers (a guard byte changed), how many of the instance's threads failed an ``assert()``."""

    values: tuple[int, ...]
    oob: bool = False
    asserts: int = 0


@dataclass
class KernelRun:
    plan: KernelPlan
    env: KernelEnv
    instances: int
    seconds: float
    states: dict[State, int] = field(default_factory=dict)
    device: str = ""

    @property
    def per_s(self) -> float:
        return self.instances / self.seconds if self.seconds else 0.0

    @property
    def checksum_ok(self) -> bool:
        return sum(self.states.values()) == self.instances


class Histogram:
    """Final states of rounds of instances, counted (pure numpy: tested without a GPU)."""

    def __init__(self, plan: KernelPlan):
        import numpy as np

        self.plan = plan
        elem = plan.element_bytes()
        self.elem = np.array(elem, dtype=np.int64)
        mask = np.ones(plan.span, dtype=bool)  # an instance's blocks on every GPU, side by side
        mask[elem] = False
        self.guard = np.nonzero(mask)[0]
        self.counts: dict[bytes, int] = {}

    def add(self, rows, asserts=None) -> None:
        """``rows``: (n, span) uint8, every instance's blocks; ``asserts``: (n,) uint32 or None."""
        import numpy as np

        n = rows.shape[0]
        oob = (rows[:, self.guard] != SENTINEL).any(axis=1).astype(np.uint8)
        fails = np.zeros(n, dtype=np.uint32) if asserts is None else asserts.astype(np.uint32)
        key = np.ascontiguousarray(np.concatenate(
            [rows[:, self.elem], oob[:, None], fails.view(np.uint8).reshape(n, 4)], axis=1))
        v = key.view(np.dtype((np.void, key.shape[1]))).ravel()
        uniq, cnt = np.unique(v, return_counts=True)
        for u, c in zip(uniq, cnt):
            b = u.tobytes()
            self.counts[b] = self.counts.get(b, 0) + int(c)

    def states(self) -> dict[State, int]:
        out: dict[State, int] = {}
        sizes = [b.size for b in self.plan.buffers for _ in range(b.count)]
        for key, c in self.counts.items():
            vals, o = [], 0
            for s in sizes:
                vals.append(int.from_bytes(key[o:o + s], "little"))
                o += s
            st = State(tuple(vals), bool(key[o]), int.from_bytes(key[o + 1:o + 5], "little"))
            out[st] = out.get(st, 0) + c
        return out


class KernelHarness:
    """The assembled kernel, its instances' memory and the two graphs, for one plan."""

    def __init__(self, plan: KernelPlan, env: KernelEnv, timeout_s: float = 60.0, cubin=None,
                 encode: TiledEncoder | None = None):
        import numpy as np

        from .harness import cupy

        cp = self.cp = cupy()
        self.encode = encode if encode is not None or not plan.maps else driver_encoder()
        self.plan, self.env, self.timeout_s = plan, env, timeout_s
        n = env.instances
        if plan.uses_assert and 2 * n > _max_slots():
            raise ValueError(f"at most {_max_slots() // 2} instances per graph")
        # a cooperative plan's kernel is launched by cuLaunchCooperativeKernel (the driver's grid
        # workspace, which cooperative groups' grid sync reads through %envreg1-2)
        self.mod = cp.RawModule(path=str(cubin or assemble(plan.ptx)),
                                enable_cooperative_groups=plan.cooperative)
        self.kernel = self.mod.get_function(plan.entry)
        self.mem = cp.zeros(2 * n * plan.stride, dtype=cp.uint8)
        self.image = cp.asarray(np.frombuffer(plan.image() * n, dtype=np.uint8))
        self.asserts = None
        if plan.uses_assert:
            from .kernel_plan import ASSERT_COUNT

            ptr = self.mod.get_global(ASSERT_COUNT)
            self.asserts = cp.ndarray((2 * n,), dtype=cp.uint32, memptr=ptr)
        self.stress = self._stress_kernel() if env.stress_blocks else None
        self.scratch = cp.zeros(max(1, env.stress_lines * env.stress_line_words), dtype=cp.uint32)
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.copy_stream = cp.cuda.Stream(non_blocking=True)
        n_streams = env.lanes + (1 if self.stress else 0)
        self.lanes = [cp.cuda.Stream(non_blocking=True) for _ in range(n_streams)]
        ev = cp.cuda.Event
        self.events = [(ev(disable_timing=True), [ev(disable_timing=True) for _ in self.lanes])
                       for _ in (0, 1)]
        self._eager(0)
        self.graphs = [self._capture(h) for h in (0, 1)]

    def _stress_kernel(self):
        from .build import compile_cubin

        return self.cp.RawModule(path=str(compile_cubin(STRESS_SOURCE))).get_function("ptxmm_kernel_stress")

    def _args(self, half: int, i: int) -> tuple:
        base = self.mem.data.ptr + (half * self.env.instances + i) * self.plan.stride
        return instance_args(self.plan, base, self.encode)

    def _round(self, half: int) -> None:
        """One graph's worth of work on ``self.stream`` (eager, or while capturing)."""
        cp, env, plan = self.cp, self.env, self.plan
        n, size = env.instances, env.instances * plan.stride
        cp.cuda.runtime.memcpyAsync(self.mem.data.ptr + half * size, self.image.data.ptr, size,
                                    cp.cuda.runtime.memcpyDeviceToDevice, self.stream.ptr)
        if self.asserts is not None:
            with self.stream:
                self.asserts[half * n:(half + 1) * n].fill(0)
        fork, joins = self.events[half]
        fork.record(self.stream)
        for s in self.lanes:
            s.wait_event(fork)
        for i in range(n):
            lane = self.lanes[i % env.lanes]
            smem = half * n + i if plan.uses_assert else 0
            with lane:
                self.kernel(plan.grid, plan.block, self._args(half, i), shared_mem=smem)
        if self.stress is not None:
            import numpy as np

            with self.lanes[-1]:
                for _ in range(max(1, n // 64)):
                    self.stress((env.stress_blocks,), (256,),
                                (self.scratch, np.uint32(env.stress_loops),
                                 np.uint32(max(1, env.stress_lines)),
                                 np.uint32(max(1, env.stress_line_words))))
        for s, join in zip(self.lanes, joins):
            join.record(s)
            self.stream.wait_event(join)

    def _eager(self, half: int) -> None:
        """One round outside any graph: loads the module, checks every launch, before capturing."""
        from .harness import _wait

        self._round(half)
        ev = self.cp.cuda.Event(disable_timing=True)
        ev.record(self.stream)
        _wait(ev, time.perf_counter() + self.timeout_s, "the first round of launches")

    def _capture(self, half: int):
        self.stream.begin_capture()
        self._round(half)
        g = self.stream.end_capture()
        g.upload(self.stream)
        self.stream.synchronize()
        return g

    def _collect(self, half: int, hist: Histogram) -> None:
        n, stride = self.env.instances, self.plan.stride
        rows = self.mem[half * n * stride:(half + 1) * n * stride].get(stream=self.copy_stream)
        fails = None
        if self.asserts is not None:
            fails = self.asserts[half * n:(half + 1) * n].get(stream=self.copy_stream)
        hist.add(rows.reshape(n, stride), fails)

    def run(self, budget_s: float = 1.0, rounds: int | None = None) -> KernelRun:
        """Replay the two graphs alternately for ``budget_s`` seconds (or ``rounds`` rounds)."""
        from .harness import _wait

        cp = self.cp
        hist = Histogram(self.plan)
        done, half, pending = 0, 0, None
        t0 = time.perf_counter()
        while True:
            self.graphs[half].launch(self.stream)
            ev = cp.cuda.Event(disable_timing=True)
            ev.record(self.stream)
            if pending is not None:
                _wait(pending[1], time.perf_counter() + self.timeout_s, "a round of launches")
                self._collect(pending[0], hist)
                done += 1
            pending = (half, ev)
            half = 1 - half
            if (rounds is not None and done + 1 >= rounds) or (rounds is None and
                                                                time.perf_counter() - t0 >= budget_s):
                break
        _wait(pending[1], time.perf_counter() + self.timeout_s, "a round of launches")
        dt = time.perf_counter() - t0
        self._collect(pending[0], hist)
        done += 1
        run = KernelRun(self.plan, self.env, done * self.env.instances, dt, hist.states())
        run.device = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()
        return run


def _max_slots() -> int:
    from .kernel_plan import MAX_SLOTS

    return MAX_SLOTS


# ----- the watchdog: each kernel runs in a process of its own --------------------------------------

STARTUP_S = 90.0  # the child's start: Python, CuPy, the module, the graphs' capture


class KernelHung(PtxmmError):
    """A kernel did not finish on the device; its process was killed, the batch goes on."""

    kind = "timeout"


def run_isolated(plan: KernelPlan, env: KernelEnv, budget_s: float, rounds: int | None, timeout_s: float,
                 cubin=None, *, target=None, limit_s: float | None = None) -> KernelRun:
    """Run in a child process (``spawn``): a kernel that hangs on the GPU cannot be stopped from
    inside the process that launched it (the CUDA context never drains), but a process can be
    killed, and the driver then tears its context down. The child reports a hung round itself
    (DeviceTimeout after ``timeout_s``); past ``limit_s`` (start-up + budget + 2 x timeout) the
    parent kills it. Either way: KernelHung, and the next kernel runs in a fresh process."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    slim = replace(plan, prog=None, check=None)  # the model's part stays here
    recv, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=target or _child, args=(slim, env, budget_s, rounds, timeout_s,
                                                   None if cubin is None else str(cubin), send), daemon=True)
    p.start()
    send.close()
    if limit_s is None:
        limit_s = STARTUP_S + (budget_s if rounds is None else rounds * timeout_s) + 2 * timeout_s
    try:
        if not recv.poll(limit_s):
            raise KernelHung(f"the process running the kernel gave no answer within {limit_s:g} s", None,
                             "it was killed; raise --timeout if the kernel is only slow")
        kind, payload = recv.recv()
    except EOFError:
        p.join(5)
        raise PtxmmError(f"the process running the kernel died (exit code {p.exitcode})", None,
                         "a crash of the CUDA driver or of CuPy: the rest of the batch goes on") from None
    finally:
        if p.is_alive():
            p.kill()
        p.join(10)
    if kind == "hung":
        raise KernelHung(payload, None, "the process running it was killed; the batch goes on")
    if kind == "error":
        raise PtxmmError(payload, None, None)
    instances, seconds, states, device = payload
    return KernelRun(plan, env, instances, seconds, states, device)


def _child(plan, env, budget_s, rounds, timeout_s, cubin, conn) -> None:
    serve(KernelHarness, plan, env, budget_s, rounds, timeout_s, cubin, conn)


def serve(harness, plan, env, budget_s, rounds, timeout_s, cubin, conn) -> None:
    """The child's work: ``harness(plan, env, timeout_s, cubin).run(...)``, its answer sent on
    ``conn``, then the process ends without CuPy's cleanup."""
    import os

    from .harness import DeviceTimeout

    try:
        r = harness(plan, env, timeout_s, cubin).run(budget_s, rounds)
        conn.send(("ok", (r.instances, r.seconds, r.states, r.device)))
    except DeviceTimeout:
        conn.send(("hung", f"no round of {env.instances} launches finished within {timeout_s:g} s: "
                           "the kernel hung on the device"))
    except PtxmmError as e:
        conn.send(("error", e.message))
    except BaseException as e:  # reported as the kernel's row
        conn.send(("error", f"{type(e).__name__}: {e}"))
    conn.close()
    os._exit(0)  # a hung context must not hold the process at CuPy's cleanup
