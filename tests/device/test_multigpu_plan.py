"""Multi-GPU kernel crossval without a GPU (device/kernel_plan.py, device/kernel_ranks.py): the plan
of each two-GPU all-reduce example (every rank's buffers in its GPU's block, the peer structs as
references to every GPU's copy, the argument values per rank, the states compared), the layout
and the argument values as properties, the refusals (too few GPUs, no peer access, a kernel the
model lets hang without --allow-hang), the PTX that runs assembling, the histogram over every
GPU's blocks, and the command end to end with a fake device."""

from __future__ import annotations

import json
import shutil
from functools import cache

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.cli.main import main
from ptxmm.device import batch as B
from ptxmm.device import kernel_cross as KC
from ptxmm.device import kernel_plan as KP
from ptxmm.device import kernel_ranks as KR
from ptxmm.device.kernel_run import KernelEnv, KernelHung, KernelRun, State
from ptxmm.errors import UnsupportedError
from ptxmm.ir.program import type_width
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.kernel.launch import parse_launch

K = ROOT / "examples" / "kernels"
ALLREDUCE = ["sys-flags", "volatile-fenced", "volatile-no-fence", "membar-gl-acquire", "gpu-scope-flags"]
RESULTS = ("gpu0.result[0]", "gpu0.result[1]", "gpu1.result[0]", "gpu1.result[1]")


@cache
def _plan(name: str) -> KP.KernelPlan:
    path = K / f"allreduce-{name}.ptx"
    return KP.plan_kernel(ptxmm.load(path), path.read_text(), allow_hang=True)


def _results(p: KP.KernelPlan) -> set[tuple[int, ...]]:
    at = [p.elements.index(e) for e in RESULTS]
    return {tuple(p.typed(s)[k] for k in at) for s in p.allowed}


# ----- the plan of each example -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ALLREDUCE)
def test_every_rank_has_its_copies_in_its_gpus_block_and_peers_of_every_gpu(name):
    p = _plan(name)
    assert p.gpus == 2 and p.span == 2 * p.stride and p.stride % KP.ALIGN == 0
    assert [(b.name, b.gpu) for b in p.buffers] == [("gpu0.in", 0), ("gpu1.in", 1), ("gpu0.sig", 0),
                                                    ("gpu1.sig", 1), ("gpu0.result", 0), ("gpu1.result", 1)]
    for g in (0, 1):  # allreduce(RankData dp, RankSignals sg, Signal *self_sg, int *result, int rank)
        assert p.describe(g) == ("{gpu0.in, gpu1.in}", "{gpu0.sig, gpu1.sig}", f"gpu{g}.sig",
                                 f"gpu{g}.result", str(g))
    peers = p.rank_args(1)[1]
    assert peers.width == 8 * 16 and peers.buffer is None  # the 16-byte struct nvcc passes by value
    assert p.rank_args(0) == p.args and p.rank_args(0) != p.rank_args(1)


def test_the_states_compared_are_the_models_over_every_gpus_elements():
    p = _plan("sys-flags")
    assert p.elements[:4] == ("gpu0.in[0]", "gpu0.in[1]", "gpu1.in[0]", "gpu1.in[1]")
    assert len(p.elements) == 16 and _results(p) == {(2, 4, 2, 4)} and len(p.allowed) == 1
    assert {s[:4] for s in p.allowed} == {(1, 2, 1, 2)}  # the inputs are only read
    assert not p.assert_allowed and p.check.liveness == "terminates"
    assert _results(_plan("volatile-fenced")) == {(2, 4, 2, 4)}
    broken = _plan("volatile-no-fence")  # the missing fence: a rank may read its peer's tmp early
    assert broken.assert_allowed
    assert _results(broken) == {(2, 4, 2, 4), (2, 0, 2, 4), (2, 4, 0, 4), (2, 0, 0, 4)}
    membar = _plan("membar-gl-acquire")
    assert membar.assert_allowed and membar.check.cut_paths > 0 and (2, 4, 2, 4) in _results(membar)


def test_a_kernel_the_model_lets_hang_runs_only_with_allow_hang():
    """allreduce-gpu-scope-flags: a .gpu flag does not reach the other GPU's thread, so the model
    lets the spin hang; refused by default, saying how to run it; with allow_hang the executions
    that end are judged against the model's outcomes (a spin on the GPU is a timeout row)."""
    item = KC.plan_kernel_file(K / "allreduce-gpu-scope-flags.ptx", "ptx", 2)
    assert isinstance(item, B.Skip) and item.reason == B.DEVICE_UNSUPPORTED
    assert "hang" in item.message and "--allow-hang" in item.hint
    p = _plan("gpu-scope-flags")
    assert p.check.liveness == "hangs" and p.assert_allowed and (2, 4, 2, 4) in _results(p)
    assert len(p.allowed) == 4


def test_each_gpus_block_holds_its_own_buffers_between_guards():
    p = _plan("sys-flags")
    for g in (0, 1):
        img = p.image(g)
        assert len(img) == p.stride
        mine = [b for b in p.buffers if b.gpu == g]
        own = {b.offset + i for b in mine for i in range(b.count * b.size)}
        assert all(img[i] == KP.SENTINEL for i in range(p.stride) if i not in own)
        b = next(b for b in mine if b.name == f"gpu{g}.in")
        o = b.offset
        assert [int.from_bytes(img[o + 4 * i:o + 4 * i + 4], "little") for i in (0, 1)] == [1, 2]
    assert p.image() == p.image(0) + p.image(1)
    assert all(p.stride <= o for o in p.element_bytes()[8:16])  # gpu1.in lies in GPU 1's block


def test_the_arguments_of_each_rank_point_into_the_same_instances_blocks():
    p = _plan("sys-flags")
    bases = (0x7F00_0000_0000, 0x7E00_0004_0000)
    by = {b.name: b for b in p.buffers}
    for g in (0, 1):
        dp, sg, self_sg, result, rank = KR.rank_values(p, g, bases)
        assert isinstance(dp, bytes) and len(dp) == 16 and isinstance(sg, bytes) and len(sg) == 16
        assert [int.from_bytes(sg[8 * h:8 * h + 8], "little") for h in (0, 1)] == \
            [bases[h] + by[f"gpu{h}.sig"].offset for h in (0, 1)]
        assert int.from_bytes(dp[8:], "little") == bases[1] + by["gpu1.in"].offset
        assert self_sg == bases[g] + by[f"gpu{g}.sig"].offset and rank == g
        assert result == bases[g] + by[f"gpu{g}.result"].offset


def test_a_peers_struct_larger_than_the_gpus_is_zero_beyond_them():
    p = _plan("sys-flags")
    big = KP.Arg(8 * 64, peers=p.rank_args(0)[1].peers)  # vLLM's `Signal *signals[8]`
    q = KP.KernelPlan(**{**p.__dict__, "ranks": ((big,), (big,)), "args": (big,)})
    (raw,) = KR.rank_values(q, 1, (4096, 8192))
    assert len(raw) == 64 and raw[16:] == bytes(48) and int.from_bytes(raw[:8], "little") != 0


def test_rank_arguments_as_cupy_passes_them():
    np = pytest.importorskip("numpy")
    p = _plan("sys-flags")
    args = KR.rank_args(p, 1, KR.rank_values(p, 1, (1 << 20, 2 << 20)))
    assert args[0].dtype.itemsize == 16 and args[0].shape == (1,)
    assert args[2].dtype == np.uint64 and args[4].dtype == np.uint32 and int(args[4]) == 1


def test_a_buffer_without_per_gpu_lies_on_gpu_0_and_every_rank_gets_its_address():
    path = ROOT / "tests" / "data" / "multigpu" / "rank_store.ptx"
    launch = "rank_store<<<1, 1>>>(int out[1], Peers box = peers(int box[2]), rank) on 2 gpus"
    prog = ptxmm.load(path, kernel=KernelArgs(launch=launch, forall="gpu0.box[1] == 21"))
    p = KP.plan_kernel(prog, path.read_text())
    assert [(b.name, b.gpu) for b in p.buffers] == [("out", 0), ("gpu0.box", 0), ("gpu1.box", 1)]
    assert p.describe(0) == ("out", "{gpu0.box, gpu1.box}", "0") and p.describe(1)[0] == "out"
    assert {p.typed(s)[p.elements.index("out[0]")] for s in p.allowed} == {10, 11}  # the race


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_a_launch_on_one_gpu_spelled_out_runs_through_the_ranks(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    cu = tmp_path / "rank.cu"
    cu.write_text("// ptxmm: launch k<<<1, 1>>>(int out[1] per gpu, rank) on 1 gpu\n"
                  "__global__ void k(int *out, int rank) { out[0] = rank + 10; }\n")
    p = KP.plan_kernel(ptxmm.load(cu), KP.kernel_ptx(cu))
    assert p.gpus == 1 and len(p.ranks) == 1 and p.describe(0) == ("gpu0.out", "0")
    assert p.allowed == {(10,)}
    plain = tmp_path / "plain.cu"
    plain.write_text("// ptxmm: launch k<<<1, 1>>>(int out[1], 3)\n"
                     "__global__ void k(int *out, int r) { out[0] = r + 10; }\n")
    assert KP.plan_kernel(ptxmm.load(plain), KP.kernel_ptx(plain)).ranks == ()


# ----- properties of the layout --------------------------------------------------------------------

_TYPES = st.sampled_from(["u8", "u16", "s32", "u32", "u64", "b32"])
_BUFS = st.lists(st.tuples(st.integers(1, 40), _TYPES, st.integers(0, 3)), min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(bufs=_BUFS, gpus=st.integers(1, 4))
def test_layout_buffers_never_overlap_and_lie_between_guards_in_their_gpus_block(bufs, gpus):
    from ptxmm.ir.launch import Buffer

    items = [(Buffer("int", t, f"b{k}", n), f"b{k}", g % gpus) for k, (n, t, g) in enumerate(bufs)]
    plans, stride = KP._buffers(items)
    assert stride % KP.ALIGN == 0
    for g in range(gpus):
        mine = sorted((b for b in plans if b.gpu == g), key=lambda b: b.offset)
        prev_end = 0
        for b in mine:
            assert b.offset % KP.ALIGN == 0 and b.offset - prev_end >= KP.GUARD
            prev_end = b.offset + b.count * b.size
        assert stride - prev_end >= KP.GUARD or not mine
    assert [b.gpu for b in plans] == [g for _, _, g in items]


@settings(max_examples=100, deadline=None)
@given(g0=st.integers(1, 1 << 30), g1=st.integers(1, 1 << 30), rank=st.integers(0, 1))
def test_every_address_of_an_instance_lies_in_its_buffers_gpu_block(g0, g1, rank):
    p = _plan("volatile-fenced")
    bases = (g0 << 12, g1 << 12)
    addrs = []
    for a, v in zip(p.rank_args(rank), KR.rank_values(p, rank, bases)):
        if a.buffer is not None:
            addrs.append((a.buffer, v))
        elif a.peers is not None:
            addrs += [(k, int.from_bytes(v[8 * h:8 * h + 8], "little")) for h, k in enumerate(a.peers)]
    assert addrs
    for k, addr in addrs:
        b = p.buffers[k]
        assert addr == bases[b.gpu] + b.offset and bases[b.gpu] <= addr < bases[b.gpu] + p.stride


# ----- refusals ------------------------------------------------------------------------------------

def test_too_few_gpus_is_refused_naming_how_many_were_found():
    la = parse_launch("k<<<1, 1>>>(int a[1] per gpu, rank) on 2 gpus")
    e = KR.peer_error(2, la.gpus_pos, count=lambda: 1, can_access=lambda g, h: True)
    assert isinstance(e, UnsupportedError) and e.pos == la.gpus_pos
    assert "needs 2 GPUs; this machine has 1 (found 1 GPU)" in e.message
    assert "found 0 GPUs" in KR.peer_error(2, None, count=lambda: 0, can_access=lambda g, h: True).message
    assert KR.peer_error(2, None, count=lambda: 8, can_access=lambda g, h: True) is None
    asked = []

    def one_way(g, h):
        asked.append((g, h))
        return (g, h) != (1, 0)

    e = KR.peer_error(2, la.gpus_pos, count=lambda: 2, can_access=one_way)
    assert "GPU 1 cannot access GPU 0's memory" in e.message and (1, 0) in asked


def test_a_tensor_map_in_a_multi_gpu_launch_is_refused_on_the_device():
    la = parse_launch("k<<<1, 1>>>(CUtensorMap tm = tensormap(int a[16] = {1}, dims {16}, box {8}), rank) "
                      "on 2 gpus")
    with pytest.raises(UnsupportedError, match="tensor map in a launch on 2 GPUs.*on the device"):
        KP._refuse_shape(type("Info", (), {"launch": la}))


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
@pytest.mark.parametrize("name", ALLREDUCE)
def test_the_ptx_that_runs_assembles(name, tmp_path, monkeypatch):
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path))
    p = _plan(name)
    assert p.uses_assert and "ptxmm_assert_count" in p.ptx
    assert KP.assemble(p.ptx).stat().st_size > 0


# ----- the histogram over every GPU's blocks -----------------------------------------------------

def _fill(rows, p: KP.KernelPlan, row: int, state: tuple[int, ...]) -> None:
    """Instance ``row``'s elements set to ``state`` (every GPU's block)."""
    import numpy as np

    eb, o = p.element_bytes(), 0
    for v, t in zip(state, p.types):
        n = type_width(t) // 8
        rows[row, eb[o:o + n]] = np.frombuffer(v.to_bytes(n, "little"), dtype=np.uint8)
        o += n


def test_the_histogram_reads_every_gpus_block_of_an_instance():
    np = pytest.importorskip("numpy")
    from ptxmm.device.kernel_run import Histogram

    p = _plan("volatile-no-fence")
    (good,) = [s for s in p.allowed if p.typed(s)[-4:] == (2, 4, 2, 4)]
    bad = good[:-2] + (0, good[-1])  # gpu1.result[0] == 0: rank 1 read rank 0's tmp too early
    rows = np.tile(np.frombuffer(p.image(), dtype=np.uint8), (3, 1)).copy()
    for r, state in enumerate((good, good, bad)):
        _fill(rows, p, r, state)
    gpu1_result = next(b for b in p.buffers if b.name == "gpu1.result")
    rows[1, p.stride + gpu1_result.offset + 8] = 1  # a write just past gpu1.result: GPU 1's guard
    h = Histogram(p)
    h.add(rows, np.array([0, 0, 1], dtype=np.uint32))
    assert h.states() == {State(good): 1, State(good, oob=True): 1, State(bad, asserts=1): 1}
    kc = KC.judge(p, KernelRun(p, KernelEnv(), 3, 1.0, h.states()))
    assert sorted(r.verdict for r in kc.rows if r.count) == ["VIOLATION", "ok", "ok"]  # the oob write
    assert kc.bug()["instances"] == {"assert-fails": 1, "condition": 1}


# ----- the command, with a fake device -------------------------------------------------------------

class _FakeRanks:
    """Every instance ends in an allowed state; the broken twins' bug state once each."""

    def __init__(self, plan, env, timeout_s=60.0, cubin=None):
        self.plan, self.env = plan, env

    def run(self, budget_s=1.0, rounds=None):
        states = {State(v): 10 for v in sorted(self.plan.allowed)}
        return KernelRun(self.plan, self.env, sum(states.values()), 0.5, states, device="2 x fake GPU")


@pytest.fixture
def fake_gpus(tmp_path, monkeypatch):
    from ptxmm.device import commands, kernel_run

    found = {"n": 2, "hangs": None}
    real = KR.peer_error
    monkeypatch.setattr(commands, "device_error", lambda: None)
    def isolated(plan, env, budget, rounds, timeout, cubin=None, target=None):
        assert (target is KR.rank_child) == bool(plan.ranks)  # the multi-GPU harness's child
        if plan.entry == found["hangs"]:
            raise KernelHung("no round of 1024 launches finished within 10 s: the kernel hung on the device")
        return _FakeRanks(plan, env).run()

    monkeypatch.setattr(kernel_run, "run_isolated", isolated)
    monkeypatch.setattr(KC, "assemble", lambda ptx, timeout=None: tmp_path / "fake.cubin")
    monkeypatch.setattr(KR, "peer_error", lambda gpus, pos: real(gpus, pos, count=lambda: found["n"],
                                                                  can_access=lambda g, h: True))
    return found


def test_crossval_of_the_multi_gpu_examples_reports_ranks_and_bugs(tmp_path, fake_gpus):
    out = tmp_path / "mg.json"
    files = [K / f"allreduce-{n}.ptx" for n in ("sys-flags", "volatile-no-fence", "gpu-scope-flags")]
    r = CliRunner().invoke(main, ["crossval", *map(str, files), "--no-self-check", "--budget", "0.1",
                                  "--allow-hang", "--json", str(out)])
    assert r.exit_code == 0, r.output
    ok, broken, hangs = json.loads(out.read_text())["tests"]
    assert ok["gpus"] == 2 and ok["violations"] == 0 and ok["rank_args"][1][2] == "gpu1.sig"
    assert ok["device"] == "2 x fake GPU" and ok["env"]["streams"] == KR.MULTI_LANES
    assert broken["bug"]["observed"] and broken["bug"]["instances"]["condition"] == 30
    assert hangs["bug"]["expect"] == ["assert-fails", "hang", "race"]
    shown = " ".join(r.output.split())
    assert "rank 1 on GPU 1: ({gpu0.in, gpu1.in}, {gpu0.sig, gpu1.sig}, gpu1.sig" in shown


def test_crossval_on_a_machine_with_one_gpu_is_a_row_naming_how_many_were_found(tmp_path, fake_gpus):
    fake_gpus["n"] = 1
    out = tmp_path / "mg.json"
    files = [str(K / "allreduce-sys-flags.ptx"), str(K / "mp-release-flag.ptx")]
    r = CliRunner().invoke(main, ["crossval", *files, "--no-self-check", "--budget", "0.1",
                                  "--json", str(out)])
    assert r.exit_code == 2, r.output
    row, single = json.loads(out.read_text())["tests"]
    assert row["status"] == "not run" and row["reason"] == B.NO_DEVICE
    assert "needs 2 GPUs; this machine has 1 (found 1 GPU)" in row["message"]
    assert "allreduce-sys-flags" in row["position"]  # located at the launch's `on 2 gpus`
    assert single["status"] == "ran"


def test_a_kernel_the_model_lets_hang_that_hangs_on_the_device_is_a_timeout_row(tmp_path, fake_gpus):
    fake_gpus["hangs"] = _plan("gpu-scope-flags").entry
    out = tmp_path / "mg.json"
    r = CliRunner().invoke(main, ["crossval", str(K / "allreduce-gpu-scope-flags.ptx"), "--allow-hang",
                                  "--no-self-check", "--budget", "0.1", "--json", str(out)])
    assert r.exit_code == 2, r.output
    (row,) = json.loads(out.read_text())["tests"]
    assert row["reason"] == B.TIMEOUT and "hung on the device" in row["message"]
    assert "the model lets it hang: --allow-hang" in row["message"]
