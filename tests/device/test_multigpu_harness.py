"""The multi-GPU harness (device/kernel_ranks.py) against a fake CuPy, without a GPU: memory on each
fake GPU at addresses of its own, a fake all-reduce kernel that follows the pointers it is given
(its inputs through ``dp``, its peers' Signals through ``sg``), graphs that replay recorded
launches. What it checks: each rank's pointers reach the right GPU's block of the same instance,
the resets and counters per GPU, the histogram over every GPU's blocks, the launch order (instance
i on every GPU before instance i + 1), peer access asked for between every pair, and the stress
kernel on every GPU."""

from __future__ import annotations

import sys
import types
from functools import cache

import pytest
from support import ROOT

import ptxmm
from ptxmm.device import kernel_plan as KP
from ptxmm.device.kernel_ranks import RankHarness
from ptxmm.device.kernel_run import KernelEnv, State

np = pytest.importorskip("numpy")

K = ROOT / "examples" / "kernels"


@cache
def _plan(name: str = "sys-flags") -> KP.KernelPlan:
    path = K / f"allreduce-{name}.ptx"
    return KP.plan_kernel(ptxmm.load(path), path.read_text())


class _Mem:
    """Every fake allocation by base address; GPU g's at (g + 1) << 40 onwards."""

    def __init__(self):
        self.allocs: list[tuple[int, np.ndarray]] = []
        self.next = {}

    def alloc(self, gpu: int, arr: np.ndarray) -> int:
        base = self.next.get(gpu, (gpu + 1) << 40)
        self.next[gpu] = base + ((arr.nbytes + 4095) // 4096 + 1) * 4096
        self.allocs.append((base, arr))
        return base

    def view(self, addr: int, n: int) -> np.ndarray:
        for base, arr in self.allocs:
            if base <= addr and addr + n <= base + arr.nbytes:
                return arr.view(np.uint8)[addr - base:addr - base + n]
        raise AssertionError(f"address {addr:#x} is in no allocation")

    def read(self, addr: int) -> int:
        return int.from_bytes(self.view(addr, 4).tobytes(), "little", signed=True)

    def write(self, addr: int, v: int) -> None:
        self.view(addr, 4)[:] = np.frombuffer((v & 0xFFFFFFFF).to_bytes(4, "little"), dtype=np.uint8)


_W = types.SimpleNamespace(mem=None, log=None, dev=0, stream=None, capture=None, enabled=set())


class _Ptr:
    def __init__(self, ptr):
        self.ptr = ptr


class _Array:
    def __init__(self, arr, ptr=None):
        self.arr = arr
        self.data = _Ptr(_W.mem.alloc(_W.dev, arr) if ptr is None else ptr)

    def __getitem__(self, sl):
        return _Array(self.arr[sl], self.data.ptr + sl.start * self.arr.itemsize)

    def fill(self, v):
        self.arr[:] = v

    def get(self, stream=None):
        return self.arr.copy()


class _Device:
    def __init__(self, g=0):
        self.id = g

    def __enter__(self):
        self.prev, _W.dev = _W.dev, self.id

    def __exit__(self, *a):
        _W.dev = self.prev


class _Event:
    def __init__(self, disable_timing=True):
        self.done = True

    def record(self, stream=None):
        pass


class _Graph:
    def __init__(self, ops):
        self.ops = ops

    def upload(self, stream):
        pass

    def launch(self, stream):
        for op in self.ops:
            op()


class _Stream:
    def __init__(self, non_blocking=True):
        self.ptr, self.gpu = id(self), _W.dev

    def __enter__(self):
        self.prev, _W.stream = _W.stream, self

    def __exit__(self, *a):
        _W.stream = self.prev

    def wait_event(self, ev):
        pass

    def begin_capture(self):
        _W.capture = []

    def end_capture(self):
        ops, _W.capture = _W.capture, None
        return _Graph(ops)

    def synchronize(self):
        pass


class _Function:
    def __init__(self, gpu, name):
        self.gpu, self.name = gpu, name

    def __call__(self, grid, block, args, shared_mem=0):
        assert _W.stream.gpu == self.gpu == _W.dev, "a launch on another GPU's stream"
        if self.name == "ptxmm_kernel_stress":
            _W.log.append(("stress", self.gpu, id(_W.stream)))
            return

        def op():
            _allreduce(_W.mem, args, _W.log, self.gpu)

        if _W.capture is not None:
            _W.capture.append(op)
        else:
            op()


class _RawModule:
    def __init__(self, path=None, enable_cooperative_groups=False):
        self.gpu = _W.dev
        self.counter = _Array(np.zeros(KP.MAX_SLOTS, dtype=np.uint32))

    def get_function(self, name):
        return _Function(self.gpu, name)

    def get_global(self, name):
        return types.SimpleNamespace(arr=self.counter.arr, ptr=self.counter.data.ptr)


class _CUDARuntimeError(Exception):
    pass


def _enable(h):
    if (_W.dev, h) in _W.enabled:
        raise _CUDARuntimeError("cudaErrorPeerAccessAlreadyEnabled")
    _W.enabled.add((_W.dev, h))


def _memcpy(dst, src, n, kind, stream):
    _W.mem.view(dst, n)[:] = _W.mem.view(src, n)


def _fake_cupy():
    cp = types.ModuleType("cupy")
    cp.uint8, cp.uint32 = np.uint8, np.uint32
    cp.zeros = lambda n, dtype: _Array(np.zeros(n, dtype=dtype))
    cp.asarray = lambda a: _Array(np.array(a))
    cp.ndarray = lambda shape, dtype, memptr: _Array(memptr.arr[:shape[0]], memptr.ptr)
    cp.RawModule = _RawModule
    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 2, deviceCanAccessPeer=lambda g, h: True, deviceEnablePeerAccess=_enable,
        CUDARuntimeError=_CUDARuntimeError, memcpyAsync=_memcpy, memcpyDeviceToDevice=3,
        getDeviceProperties=lambda g: {"name": b"Fake H200"})
    cp.cuda = types.SimpleNamespace(Device=_Device, Event=_Event, Stream=_Stream, runtime=runtime)
    return cp


def _allreduce(mem: _Mem, args, log: list, gpu: int) -> None:
    """What allreduce-sys-flags leaves in memory when it ends, computed from the pointers it is
    given: tmp (sig[3]) of rank r = in_0[r] + in_1[r] read through dp; the flags end[0][rank] of
    both peers' Signals and its own _flag set to 1; result[i] = rank i's sum."""
    dp, sg, self_sg, result, rank = (a.tobytes() if a.dtype.kind == "V" else int(a) for a in args)
    rank_ins = [int.from_bytes(dp[8 * h:8 * h + 8], "little") for h in (0, 1)]
    signals = [int.from_bytes(sg[8 * h:8 * h + 8], "little") for h in (0, 1)]
    assert rank == gpu and signals[gpu] == self_sg
    log.append((gpu, self_sg))
    sums = [mem.read(rank_ins[0] + 4 * i) + mem.read(rank_ins[1] + 4 * i) for i in (0, 1)]
    mem.write(self_sg + 12, sums[rank])
    for h in (0, 1):
        mem.write(signals[h] + 4 * rank, 1)
    mem.write(self_sg + 8, 1)
    for i in (0, 1):
        mem.write(result + 4 * i, sums[i])


@pytest.fixture
def fake(monkeypatch):
    log: list = []
    for k, v in dict(mem=_Mem(), log=log, dev=0, stream=None, capture=None, enabled=set()).items():
        monkeypatch.setattr(_W, k, v)
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())
    return _W, log


def test_every_instance_ends_in_the_models_state_on_both_fake_gpus(fake):
    cp, log = fake
    p = _plan()
    h = RankHarness(p, KernelEnv(instances=8, lanes=3), cubin="fake.cubin")
    run = h.run(rounds=3)
    (allowed,) = p.allowed
    assert run.instances == 24 and run.states == {State(allowed): 24} and run.checksum_ok
    assert run.device == "2 x Fake H200" and cp.enabled == {(0, 1), (1, 0)}
    eager = log[:16]  # the first round: instance i on GPU 0, then on GPU 1, then instance i + 1
    assert [g for g, _ in eager] == [0, 1] * 8
    assert all(b - a == p.stride for (_, a), (_, b) in zip(eager[::2], eager[2::2]))


def test_stress_runs_on_every_gpu_on_a_stream_of_its_own(fake, monkeypatch):
    from ptxmm.device import build

    cp, log = fake
    monkeypatch.setattr(build, "compile_cubin", lambda src: "stress.cubin")
    p = _plan()
    env = KernelEnv(instances=128, lanes=4, stress_blocks=2, stress_loops=3, stress_lines=4,
                    stress_line_words=2)
    run = RankHarness(p, env, cubin="fake.cubin").run(rounds=2)
    (allowed,) = p.allowed
    assert run.states == {State(allowed): 256}
    stress = [x for x in log if x[0] == "stress"]
    assert {g for _, g, _ in stress} == {0, 1} and len({s for _, _, s in stress}) == 2  # one stream per GPU
    assert len(stress) == 2 * 2 * 3  # 128 // 64 launches per round on each GPU: eager, then 2 rounds


def test_a_wrong_value_in_one_gpus_block_is_seen_there(fake, monkeypatch):
    """A kernel that leaves gpu1.result[0] at 0 in every instance: the state read back holds GPU
    1's block of each instance, and the verdict machinery sees the bug's state."""
    right = _allreduce

    def wrong(mem, args, log, gpu):
        right(mem, args, log, gpu)
        if gpu == 1:
            mem.write(int(args[3]), 0)

    monkeypatch.setattr(sys.modules[__name__], "_allreduce", wrong)
    p = _plan()
    run = RankHarness(p, KernelEnv(instances=4, lanes=2), cubin="fake.cubin").run(rounds=2)
    (allowed,) = p.allowed
    k = p.elements.index("gpu1.result[0]")
    assert run.states == {State(allowed[:k] + (0,) + allowed[k + 1:]): 8}
