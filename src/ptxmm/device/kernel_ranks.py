"""Running a kernel launched ``on N gpus`` (:mod:`ptxmm.kernel.multigpu`) on N GPUs of one host with
CuPy: the multi-GPU twin of :class:`.kernel_run.KernelHarness`, planned by :mod:`.kernel_plan`.

* **GPUs and peer access** — the launch needs N GPUs, and every GPU must reach every other's memory
  (``cudaDeviceCanAccessPeer``); :func:`peer_error` says why not, located at the launch's ``on N
  gpus``, before anything runs. The harness enables peer access between every ordered pair
  (``cudaDeviceEnablePeerAccess``). Nothing here uses NVLink multicast (no ``cuMulticastCreate``,
  no NVLS): only ordinary loads and stores through peer pointers.
* **memory** — GPU g holds its block of every instance (:attr:`.kernel_plan.KernelPlan.stride`
  bytes, its buffers: :attr:`.kernel_plan.BufferPlan.gpu`), in memory allocated on GPU g, two
  halves of ``instances`` blocks each as on one GPU. Instance i of rank g is given the addresses
  of instance i's blocks on every GPU (:func:`rank_values`): its own buffers, and in a
  ``peers(buf)`` struct each GPU's copy of ``buf`` — instance i of rank 0 talks to instance i of
  rank 1 only.
* **a round** — every GPU's blocks of the half reset from its image and its assertion counters
  cleared (each GPU's module has its own ``ptxmm_assert_count``; the failures of an instance are
  the sum over its ranks), each GPU's stream then waits for the resets of every other GPU (a rank
  writes into the other GPUs' blocks), then every GPU replays its CUDA graph of ``instances``
  launches spread round-robin over ``lanes`` streams, one graph per GPU launched back to back.
  The final state of instance i is its blocks on every GPU side by side
  (:attr:`.kernel_plan.KernelPlan.span`), collected once every GPU's round is done, and judged
  as on one GPU (:class:`.kernel_run.Histogram`).
* **progress** — a rank's instance may spin until its partner on another GPU runs. Every GPU
  launches its instances in the same order, instance i on lane ``i % lanes``; the smallest
  unfinished instance is then first in its lane on every GPU, so some instance can always run
  as long as one instance per lane fits on each GPU at once (:data:`MULTI_LANES` is small). A
  round that still does not end is a hang (:class:`.kernel_run.KernelHung`: a ``timeout`` row).
* **stress** (``--stress``: the Env's stress knobs) — on every GPU, as on one: the stress kernel
  of :mod:`.kernel_run` on a stream of its own in each GPU's graph, hammering a scratch buffer
  of that GPU while the instances run."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..errors import PtxmmError, SourcePos, UnsupportedError
from .kernel_plan import ASSERT_COUNT, KernelPlan, assemble
from .kernel_run import Histogram, KernelEnv, KernelRun

MULTI_LANES = 8  # instances in flight at once on each GPU of a multi-GPU run
POINTER_BYTES = 8


def peer_error(gpus: int, pos: SourcePos | None, count: Callable[[], int] | None = None,
               can_access: Callable[[int, int], bool] | None = None) -> UnsupportedError | None:
    """Why a launch on ``gpus`` GPUs cannot run here (located at its ``on N gpus``), or None:
    fewer GPUs than it needs (naming how many were found), or a pair of GPUs without peer
    access. ``count`` and ``can_access`` ask CUDA unless given (tests fake them)."""
    if count is None or can_access is None:
        import cupy as cp

        count = count or cp.cuda.runtime.getDeviceCount
        can_access = can_access or (lambda g, h: bool(cp.cuda.runtime.deviceCanAccessPeer(g, h)))
    found = count()
    if found < gpus:
        return UnsupportedError(f"the launch needs {gpus} GPUs; this machine has {found} "
                                f"(found {found} GPU{'s' if found != 1 else ''})", pos,
                                f"run it on a machine with at least {gpus} GPUs of one host, or check it "
                                "with the model only (ptxmm check)")
    for g in range(gpus):
        for h in range(gpus):
            if g != h and not can_access(g, h):
                return UnsupportedError(f"GPU {g} cannot access GPU {h}'s memory (no peer access: "
                                        "cudaDeviceCanAccessPeer is 0), and the kernel's peer pointers "
                                        "need it", pos, "run it on GPUs with peer access between every "
                                        "pair (NVLink or PCIe P2P: nvidia-smi topo -p2p r)")
    return None


def rank_values(plan: KernelPlan, rank: int, bases: tuple[int, ...]) -> tuple[int | bytes, ...]:
    """The arguments of rank ``rank``'s launch of the instance whose block on GPU g starts at
    device address ``bases[g]``, as plain values: a buffer's address (in its GPU's block), a
    ``peers(buf)`` struct as its bytes (entry g: GPU g's copy of ``buf``, little-endian, the
    entries beyond the GPUs zero: the model refuses a kernel that reads them), a scalar."""
    if len(bases) != plan.gpus:
        raise PtxmmError(f"{len(bases)} block addresses for {plan.gpus} GPUs", None, "report this bug")
    out: list[int | bytes] = []
    for a in plan.rank_args(rank):
        if a.buffer is not None:
            out.append(_address(plan, a.buffer, bases))
        elif a.peers is not None:
            raw = b"".join(_address(plan, k, bases).to_bytes(POINTER_BYTES, "little") for k in a.peers)
            out.append(raw + bytes(a.width // 8 - len(raw)))
        elif a.tensormap is not None:
            raise PtxmmError("a tensor map in a multi-GPU launch", None, "a bug: planning refuses it")
        else:
            out.append(a.value)
    return tuple(out)


def _address(plan: KernelPlan, k: int, bases: tuple[int, ...]) -> int:
    b = plan.buffers[k]
    return bases[b.gpu] + b.offset


def rank_args(plan: KernelPlan, rank: int, values: tuple[int | bytes, ...]) -> tuple:
    """``rank_values`` as CuPy launches them: addresses as uint64, scalars at their width, a struct
    as a one-element numpy array of its raw bytes (passed by value: cuLaunchKernel copies the
    parameter's size from it)."""
    import numpy as np

    types = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
    out: list = []
    for a, v in zip(plan.rank_args(rank), values):
        if isinstance(v, bytes):
            out.append(np.frombuffer(v, dtype=np.dtype((np.void, len(v)))).copy())
        else:
            out.append(np.uint64(v) if a.buffer is not None else types[a.width](v))
    return tuple(out)


def enable_peer_access(cp, gpus: int) -> None:
    """Peer access from every GPU to every other (already enabled is fine)."""
    for g in range(gpus):
        with cp.cuda.Device(g):
            for h in range(gpus):
                if h == g:
                    continue
                if not cp.cuda.runtime.deviceCanAccessPeer(g, h):
                    raise PtxmmError(f"GPU {g} cannot access GPU {h}'s memory (no peer access)", None,
                                     "run on GPUs with peer access between every pair")
                try:
                    cp.cuda.runtime.deviceEnablePeerAccess(h)
                except cp.cuda.runtime.CUDARuntimeError as e:
                    if "AlreadyEnabled" not in str(e):
                        raise


class _Rank:
    """One GPU's part: its module, its blocks of every instance, its streams and graphs, its
    stress kernel (or None) and scratch buffer."""

    def __init__(self, cp, plan: KernelPlan, env: KernelEnv, gpu: int, cubin: str, stress: str | None):
        import numpy as np

        n = env.instances
        self.gpu = gpu
        with cp.cuda.Device(gpu):
            self.mod = cp.RawModule(path=cubin)
            self.kernel = self.mod.get_function(plan.entry)
            self.mem = cp.zeros(2 * n * plan.stride, dtype=cp.uint8)
            self.image = cp.asarray(np.frombuffer(plan.image(gpu) * n, dtype=np.uint8))
            self.asserts = None
            if plan.uses_assert:
                self.asserts = cp.ndarray((2 * n,), dtype=cp.uint32, memptr=self.mod.get_global(ASSERT_COUNT))
            self.stream = cp.cuda.Stream(non_blocking=True)
            self.copy_stream = cp.cuda.Stream(non_blocking=True)
            self.stress = None
            if stress is not None:
                self.stress = cp.RawModule(path=stress).get_function("ptxmm_kernel_stress")
                self.scratch = cp.zeros(max(1, env.stress_lines * env.stress_line_words), dtype=cp.uint32)
            n_streams = env.lanes + (1 if self.stress is not None else 0)
            self.lanes = [cp.cuda.Stream(non_blocking=True) for _ in range(n_streams)]
            ev = cp.cuda.Event
            self.resets = [ev(disable_timing=True) for _ in (0, 1)]
            self.events = [(ev(disable_timing=True), [ev(disable_timing=True) for _ in self.lanes])
                           for _ in (0, 1)]
        self.graphs: list = []


class RankHarness:
    """The assembled kernel on every GPU of the launch, its instances' memory and graphs."""

    def __init__(self, plan: KernelPlan, env: KernelEnv, timeout_s: float = 60.0, cubin=None):
        from .harness import cupy
        from .kernel_plan import MAX_SLOTS

        cp = self.cp = cupy()
        self.plan, self.env, self.timeout_s = plan, env, timeout_s
        if plan.uses_assert and 2 * env.instances > MAX_SLOTS:
            raise ValueError(f"at most {MAX_SLOTS // 2} instances per graph")
        enable_peer_access(cp, plan.gpus)
        path = str(cubin or assemble(plan.ptx))
        stress = None
        if env.stress_blocks:
            from .build import compile_cubin
            from .kernel_run import STRESS_SOURCE

            stress = str(compile_cubin(STRESS_SOURCE))
        self.ranks = [_Rank(cp, plan, env, g, path, stress) for g in range(plan.gpus)]
        self._eager(0)
        for r in self.ranks:
            r.graphs = [self._capture(r, h) for h in (0, 1)]

    def _bases(self, half: int, i: int) -> tuple[int, ...]:
        off = (half * self.env.instances + i) * self.plan.stride
        return tuple(r.mem.data.ptr + off for r in self.ranks)

    def _launch(self, r: _Rank, half: int, i: int) -> None:
        plan = self.plan
        smem = half * self.env.instances + i if plan.uses_assert else 0
        args = rank_args(plan, r.gpu, rank_values(plan, r.gpu, self._bases(half, i)))
        with r.lanes[i % self.env.lanes]:
            r.kernel(plan.grid, plan.block, args, shared_mem=smem)

    def _stress(self, r: _Rank) -> None:
        """The stress kernel's launches of one round, on GPU ``r``'s last stream."""
        import numpy as np

        env = self.env
        with r.lanes[-1]:
            for _ in range(max(1, env.instances // 64)):
                r.stress((env.stress_blocks,), (256,),
                         (r.scratch, np.uint32(env.stress_loops), np.uint32(max(1, env.stress_lines)),
                          np.uint32(max(1, env.stress_line_words))))

    def _reset(self, half: int) -> None:
        """Every GPU's blocks of ``half`` from its image, its counters cleared; then every GPU's
        stream waits for every other GPU's reset."""
        cp, n = self.cp, self.env.instances
        size = n * self.plan.stride
        for r in self.ranks:
            with cp.cuda.Device(r.gpu):
                cp.cuda.runtime.memcpyAsync(r.mem.data.ptr + half * size, r.image.data.ptr, size,
                                            cp.cuda.runtime.memcpyDeviceToDevice, r.stream.ptr)
                if r.asserts is not None:
                    with r.stream:
                        r.asserts[half * n:(half + 1) * n].fill(0)
                r.resets[half].record(r.stream)
        for r in self.ranks:
            with cp.cuda.Device(r.gpu):
                for o in self.ranks:
                    if o is not r:
                        r.stream.wait_event(o.resets[half])

    def _fork(self, r: _Rank, half: int) -> None:
        fork, _ = r.events[half]
        fork.record(r.stream)
        for s in r.lanes:
            s.wait_event(fork)

    def _join(self, r: _Rank, half: int) -> None:
        _, joins = r.events[half]
        for s, join in zip(r.lanes, joins):
            join.record(s)
            r.stream.wait_event(join)

    def _eager(self, half: int) -> None:
        """One round outside any graph (loads the modules, checks every launch): instance i
        launched on every GPU before instance i + 1, so that a full launch queue cannot hold back
        the partner of a spinning instance."""
        from .harness import _wait

        cp = self.cp
        self._reset(half)
        for r in self.ranks:
            with cp.cuda.Device(r.gpu):
                self._fork(r, half)
                if r.stress is not None:
                    self._stress(r)
        for i in range(self.env.instances):
            for r in self.ranks:
                with cp.cuda.Device(r.gpu):
                    self._launch(r, half, i)
        deadline = time.perf_counter() + self.timeout_s
        for r in self.ranks:
            with cp.cuda.Device(r.gpu):
                self._join(r, half)
                ev = cp.cuda.Event(disable_timing=True)
                ev.record(r.stream)
            _wait(ev, deadline, "the first round of launches")

    def _capture(self, r: _Rank, half: int):
        with self.cp.cuda.Device(r.gpu):
            r.stream.begin_capture()
            self._fork(r, half)
            if r.stress is not None:
                self._stress(r)
            for i in range(self.env.instances):
                self._launch(r, half, i)
            self._join(r, half)
            g = r.stream.end_capture()
            g.upload(r.stream)
            r.stream.synchronize()
        return g

    def _round(self, half: int) -> list:
        """Reset, then every GPU's graph; returns the events of every GPU's end of the round."""
        cp = self.cp
        self._reset(half)
        out = []
        for r in self.ranks:
            with cp.cuda.Device(r.gpu):
                r.graphs[half].launch(r.stream)
                ev = cp.cuda.Event(disable_timing=True)
                ev.record(r.stream)
                out.append(ev)
        return out

    def _collect(self, half: int, hist: Histogram) -> None:
        import numpy as np

        n, stride = self.env.instances, self.plan.stride
        blocks, fails = [], None
        for r in self.ranks:
            with self.cp.cuda.Device(r.gpu):
                blocks.append(r.mem[half * n * stride:(half + 1) * n * stride].get(stream=r.copy_stream)
                              .reshape(n, stride))
                if r.asserts is not None:
                    f = r.asserts[half * n:(half + 1) * n].get(stream=r.copy_stream).astype(np.uint32)
                    fails = f if fails is None else fails + f
        hist.add(np.concatenate(blocks, axis=1), fails)

    def run(self, budget_s: float = 1.0, rounds: int | None = None) -> KernelRun:
        """Replay the rounds, two halves alternating, for ``budget_s`` seconds (or ``rounds``)."""
        from .harness import _wait

        def wait(events) -> None:
            deadline = time.perf_counter() + self.timeout_s
            for ev in events:
                _wait(ev, deadline, "a round of launches")

        hist = Histogram(self.plan)
        done, half, pending = 0, 0, None
        t0 = time.perf_counter()
        while True:
            events = self._round(half)
            if pending is not None:
                wait(pending[1])
                self._collect(pending[0], hist)
                done += 1
            pending = (half, events)
            half = 1 - half
            if (rounds is not None and done + 1 >= rounds) or (rounds is None and
                                                                time.perf_counter() - t0 >= budget_s):
                break
        wait(pending[1])
        dt = time.perf_counter() - t0
        self._collect(pending[0], hist)
        done += 1
        run = KernelRun(self.plan, self.env, done * self.env.instances, dt, hist.states())
        name = self.cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        run.device = f"{self.plan.gpus} x {name}"
        return run


def rank_child(plan, env, budget_s, rounds, timeout_s, cubin, conn) -> None:
    """The watchdog's child process for a multi-GPU plan (:func:`.kernel_run.run_isolated`'s
    ``target``)."""
    from .kernel_run import serve

    serve(RankHarness, plan, env, budget_s, rounds, timeout_s, cubin, conn)


__all__ = ["MULTI_LANES", "RankHarness", "enable_peer_access", "peer_error", "rank_args", "rank_child",
           "rank_values"]
