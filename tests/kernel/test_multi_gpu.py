"""Kernels on several GPUs of one system (kernel/multigpu.py): a launch line's ``on N gpus``,
``per gpu`` buffers, ``rank`` and ``peers(buf)``; the placement of each GPU's blocks; the two-GPU
all-reduce examples after vLLM's custom all-reduce (examples/kernels/allreduce-*.cu) under the ptx
and ptx-v7.5 models, Z3 against brute force; located errors for bad multi-GPU launches; single-GPU
launches unchanged; ``ptxmm crossval`` planning a multi-GPU kernel."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT, agree

import ptxmm
from ptxmm.errors import ParseError, PtxmmError, SemanticError, UnsupportedError
from ptxmm.ir.launch import PeersArg, RankArg
from ptxmm.ir.program import Imm, Mov
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.kernel.launch import parse_launch

KDIR = ROOT / "examples" / "kernels"
DATA = ROOT / "tests" / "data" / "multigpu"
ALLREDUCE = ROOT / "examples" / "kernels" / "allreduce-sys-flags.ptx"
LAUNCH = ("allreduce<<<1, 2>>>(RankData dp = peers(int in[2] = {1, 2}), RankSignals sg = peers(sig), "
          "unsigned sig[4] per gpu, int result[2] per gpu, rank) on 2 gpus")
RANK_STORE = "rank_store<<<1, 1>>>(int out[1] per gpu, Peers box = peers(int box[2]), rank) on 2 gpus"


def kinds(res) -> set[str]:
    return {str(f.kind) for f in res.findings if str(f.kind) != "flag"}


def load(path, launch: str | None = None, forall: str | None = None):
    """``launch``: instead of the file's, with the condition ``forall`` (else gpu0.box[0] == 0)."""
    if launch is None:
        return ptxmm.load(path)
    return ptxmm.load(path, kernel=KernelArgs(launch=launch, forall=forall or "gpu0.box[0] == 0"))


# ----- the launch line ---------------------------------------------------------------------------

def test_a_multi_gpu_launch_line_reads():
    la = parse_launch(LAUNCH)
    assert la.gpus == 2 and la.gpus_pos is not None and la.gpus_pos.col == LAUNCH.index("on 2") + 1
    assert la.n_threads == 4  # 2 threads on each of 2 GPUs
    dp, sg, sig, result, rank = la.args
    assert isinstance(dp, PeersArg) and (dp.ctype, dp.name, dp.array) == ("RankData", "dp", "in")
    assert dp.buffer is not None and dp.buffer.per_gpu and dp.buffer.init == (1, 2)
    assert isinstance(sg, PeersArg) and sg.array == "sig" and sg.buffer is None
    assert sig.per_gpu and result.per_gpu and isinstance(rank, RankArg)
    assert [b.name for b in la.buffers] == ["in", "sig", "result"]  # the in-place buffer too
    assert str(la) == LAUNCH


def test_one_gpu_spelled_out_and_plain_buffers():
    la = parse_launch("k<<<1, 1>>>(int out[1], rank) on 1 gpu")
    assert la.gpus == 1 and not la.buffers[0].per_gpu


def test_single_gpu_launches_are_unchanged():
    text = "mp<<<2, 1>>>(int data[1], int flag[1], int out[1])"
    la = parse_launch(text)
    assert la.gpus == 1 and la.gpus_pos is None and la.n_threads == 2
    assert not any(b.per_gpu for b in la.buffers) and str(la) == text
    prog = ptxmm.load(KDIR / "mp-release-flag.ptx")
    assert [t.name for t in prog.threads] == ["b0t0", "b1t0"]
    assert {t.placement.gpu for t in prog.threads} == {0}
    assert sorted(loc.name for loc in prog.locations) == ["data[0]", "flag[0]", "out[0]"]
    assert prog.threads[0].instrs is prog.threads[1].instrs  # one body, as before


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 8), sp=st.sampled_from(["", " ", "  ", "\t"]), plural=st.booleans(),
       per=st.lists(st.booleans(), min_size=1, max_size=3))
def test_the_suffix_and_per_gpu_marks_read_in_any_spacing(n, sp, plural, per):
    bufs = ", ".join(f"int b{k}[1]{sp} per gpu" if p else f"int b{k}[1]" for k, p in enumerate(per))
    la = parse_launch(f"k<<<1,{sp}1>>>({bufs}, rank){sp} on {n} gpu{'s' if plural else ''}")
    assert la.gpus == n and [b.per_gpu for b in la.buffers] == per
    assert isinstance(la.args[-1], RankArg)


# ----- threads, placement, rank, peer buffers ----------------------------------------------------

def test_each_gpu_runs_the_grid_with_its_blocks_placed_on_it():
    prog = load(ALLREDUCE)
    assert [t.name for t in prog.threads] == ["g0b0t0", "g0b0t1", "g1b0t0", "g1b0t1"]
    assert [(t.placement.gpu, t.placement.cta) for t in prog.threads] == [(0, 0), (0, 0), (1, 0), (1, 0)]
    a, b, c, _ = prog.threads
    assert a.placement.level_with(b.placement) == "cta" and a.placement.level_with(c.placement) == "sys"
    # %ctaid and %tid are per GPU: the same on both GPUs
    assert dict(a.init_regs) == dict(c.init_regs)


def _param_reads(prog, thread: int) -> dict[str, int]:
    return {i.text.split("[")[1].rstrip("];").split("_param_")[1]: i.src.value
            for i in prog.threads[thread].instrs if isinstance(i, Mov) and isinstance(i.src, Imm)
            and "ld.param" in i.text}


def test_rank_and_own_buffers_differ_by_gpu_and_peers_do_not():
    prog = load(ALLREDUCE)
    bases = {r.name: r.base for r in prog.layout.regions}
    g0, g1 = _param_reads(prog, 0), _param_reads(prog, 2)
    assert g0["4"] == 0 and g1["4"] == 1  # rank
    assert g0["2"] == bases["gpu0.sig"] and g1["2"] == bases["gpu1.sig"]  # self_sg: this GPU's copy
    assert g0["3"] == bases["gpu0.result"] and g1["3"] == bases["gpu1.result"]
    # sg = peers(sig), dp = peers(in): entry g is GPU g's copy, on every GPU
    for reads in (g0, g1):
        assert (reads["1"], reads["1+8"]) == (bases["gpu0.sig"], bases["gpu1.sig"])
        assert (reads["0"], reads["0+8"]) == (bases["gpu0.in"], bases["gpu1.in"])


def test_per_gpu_buffers_are_copies_with_their_initial_values():
    prog = load(ALLREDUCE)
    names = [loc.name for loc in prog.locations]
    for b in ("in", "sig", "result"):
        assert f"gpu0.{b}[0]" in names and f"gpu1.{b}[0]" in names and f"{b}[0]" not in names
    assert prog.location("gpu1.in[1]").init == 2 and prog.location("gpu0.in[0]").init == 1


def test_rank_and_peer_pointers_on_two_gpus():
    """tests/data/multigpu/rank_store.cu: out[0] = rank + 10 on the GPU's own copy, rank + 20 into
    the other GPU's box[rank] through the peer pointers."""
    res = agree(load(DATA / "rank_store.ptx"))
    assert res.holds is True and len(res.outcome_set) == 1
    assert res.outcomes[0].outcome.as_dict() == {"gpu0.out[0]": 10, "gpu1.out[0]": 11, "gpu0.box[1]": 21,
                                                 "gpu1.box[0]": 20}


def test_a_buffer_without_per_gpu_is_one_buffer_every_gpu_writes():
    """`int out[1]` (no `per gpu`): both GPUs' weak stores go to the one out[0] — a race."""
    prog = load(DATA / "rank_store.ptx", RANK_STORE.replace("int out[1] per gpu", "int out[1]"))
    assert "out[0]" in [loc.name for loc in prog.locations]
    res = ptxmm.check(prog, observe="all")
    assert "race" in kinds(res)
    assert {o.outcome.as_dict()["out[0]"] for o in res.outcomes} == {10, 11}


# ----- the examples ------------------------------------------------------------------------------

EXAMPLES = {
    "allreduce-sys-flags": (set(), True),
    "allreduce-volatile-fenced": (set(), True),
    "allreduce-gpu-scope-flags": ({"race", "assert-fails", "hang"}, True),
    "allreduce-volatile-no-fence": ({"race", "assert-fails"}, True),
    # vLLM's pre-sm_70 pair: membar.gl (fence.sc.gpu) after the volatile load does not reach the peer
    "allreduce-membar-gl-acquire": ({"race", "assert-fails"}, True),
}


@pytest.mark.parametrize("model", ["ptx", "ptx-v7.5"])
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_all_reduce_examples_verdicts(name, model):
    res = ptxmm.check(load(KDIR / f"{name}.ptx"), model, observe="condition")
    want, holds = EXAMPLES[name]
    assert kinds(res) == want, [str(f) for f in res.findings]
    assert res.holds is holds


def test_the_gpu_scope_flags_race_on_the_flags_across_gpus():
    """The .gpu flags: the race is between the two GPUs' flag accesses (and their tmp), never within
    one GPU; the .sys flags of the correct kernel do not race."""
    res = ptxmm.check(load(KDIR / "allreduce-gpu-scope-flags.ptx"))
    races = [f for f in res.findings if str(f.kind) == "race"]
    assert races and all(".gpu." in str(f) or "sig[3]" in str(f) for f in races)
    assert all(str(f).count("g0b0") == 1 and str(f).count("g1b0") == 1 for f in races)


# brute force enumerates fence.sc orders: with their membar.sys/membar.gl, allreduce-volatile-fenced (15
# minutes unfinished) and allreduce-membar-gl-acquire (over 10) are checked on Z3 alone (verdicts above)
@pytest.mark.parametrize("name, model", [
    ("allreduce-sys-flags", "ptx"), ("allreduce-sys-flags", "ptx-v7.5"),
    ("allreduce-gpu-scope-flags", "ptx"), ("allreduce-gpu-scope-flags", "ptx-v7.5"),
    ("allreduce-volatile-no-fence", "ptx"),
    pytest.param("allreduce-volatile-no-fence", "ptx-v7.5", marks=pytest.mark.slow),
])
def test_z3_equals_brute_force_on_the_examples(name, model):
    res = agree(load(KDIR / f"{name}.ptx"), model)
    assert res.holds is EXAMPLES[name][1]


# ----- located errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, err, at, says", [
    ("k<<<1, 1>>>(int a[1]) on 0 gpus", SemanticError, "on 0", "on 0 GPUs"),
    ("k<<<1, 1>>>(int a[1]) on 9 gpus", SemanticError, "on 9", "on 9 GPUs"),
    ("k<<<1, 1>>>(int a[1]) on 2 cpus", ParseError, "cpus", "expected `gpus`"),
    ("k<<<1, 1>>>(int a[1]) on gpus", ParseError, "gpus", "number of GPUs"),
    ("k<<<1, 1>>>(int a[1], rank)", SemanticError, "rank", "`rank` in a launch on one GPU"),
    ("k<<<1, 1>>>(int a[1] per gpu)", SemanticError, "int a", "`per gpu` buffer a"),
    ("k<<<1, 1>>>(S s = peers(a), int a[1] per gpu)", SemanticError, "S s", "peers(a) in a launch on one"),
    ("k<<<1, 1>>>(S s = peers(a), int a[1]) on 2 gpus", SemanticError, "a), int", "not `per gpu`"),
    ("k<<<1, 1>>>(S s = peers(b), int a[1] per gpu) on 2 gpus", SemanticError, "b), int",
     "no buffer of the launch"),
    ("k<<<1, 1>>>(S s = peers(3)) on 2 gpus", ParseError, "3)", "expected a buffer's name"),
    ("k<<<1, 1>>>(S s = peers(int a[1] on 2 gpus", ParseError, "on 2", "closing peers"),
    ("k<<<16, 1024>>>(int a[1] per gpu) on 2 gpus", SemanticError, "16, 1024", "32768 threads"),
    ("k<<<1, 1>>>(int a[1024] per gpu, int b[1024] per gpu, int c[1024] per gpu) on 2 gpus", SemanticError,
     "on 2", "once per GPU"),
    ("k<<<1, 1>>>(int a[1]) on 2 gpus xyz", ParseError, "xyz", "unexpected"),
    ("cooperative k<<<2, 1>>>(int a[1]) on 2 gpus", UnsupportedError, "on 2", "cooperative launch on 2 GPUs"),
])
def test_bad_multi_gpu_launch_lines_are_located(text, err, at, says):
    with pytest.raises(err) as e:
        parse_launch(text)
    assert says in e.value.message, e.value.message
    assert e.value.pos is not None and e.value.pos.col == text.index(at) + 1, (e.value.pos, text.index(at))


@pytest.mark.parametrize("launch, err, says", [
    ("rank_store<<<1, 1>>>(int out[1] per gpu, Peers box = peers(int box[2]), int r[1]) on 2 gpus",
     SemanticError, "parameter"),  # a buffer for the int rank
    ("rank_store<<<1, 1>>>(rank, Peers box = peers(int box[2]), rank) on 2 gpus", SemanticError,
     "`rank`, but parameter"),
    ("rank_store<<<1, 1>>>(int out[1] per gpu, 5, rank) on 2 gpus", UnsupportedError, "passed by value"),
    ("rank_store<<<1, 1>>>(int out[1] per gpu, Peers box = peers(int box[2]), rank) on 3 gpus",
     SemanticError, "holds 3 pointers"),
    ("rank_store<<<1, 1>>>(Peers o = peers(int out[1]), Peers box = peers(int box[2]), rank) on 2 gpus",
     SemanticError, "is a .u64 value"),
])
def test_arguments_that_do_not_fit_the_kernel_are_located(launch, err, says):
    with pytest.raises(err) as e:
        load(DATA / "rank_store.ptx", launch)
    assert says in e.value.message, e.value.message
    assert e.value.pos is not None


def test_a_peer_entry_beyond_the_gpus_is_refused():
    """On one GPU, peers(box) holds one pointer: the kernel's read of entry 1 (`[param_1+8]`) is a
    located "not supported yet", never a made-up address."""
    with pytest.raises(UnsupportedError) as e:
        load(DATA / "rank_store.ptx", RANK_STORE.replace("on 2 gpus", "on 1 gpu"))
    assert "param_1+8" in e.value.message and e.value.pos.line > 0


def test_module_variables_on_several_gpus_are_not_supported_yet():
    la = "sum<<<1, 1>>>(unsigned in[2] per gpu, unsigned result[2] per gpu) on 2 gpus"
    with pytest.raises(UnsupportedError) as e:
        load(KDIR / "last-block-reset.ptx", la)
    assert "__device__" in e.value.message and "count" in e.value.message
    assert e.value.pos is not None


# ----- crossval ----------------------------------------------------------------------------------

def test_crossval_plans_a_multi_gpu_kernel_on_the_cpu():
    """Planning needs no GPU (tests/device/test_multigpu_plan.py holds the plan in detail); the
    GPU count is asked only when the kernel is about to run."""
    from ptxmm.device.batch import Skip
    from ptxmm.device.kernel_cross import plan_kernel_file

    job = plan_kernel_file(KDIR / "allreduce-sys-flags.ptx", "ptx", 2)
    assert not isinstance(job, Skip), job
    assert job.kplan.gpus == 2 and len(job.kplan.ranks) == 2
    single = plan_kernel_file(KDIR / "mp-release-flag.ptx", "ptx", 2)
    assert not isinstance(single, Skip) and single.kplan.gpus == 1 and single.kplan.ranks == ()


def test_every_error_here_is_a_ptxmm_error():
    for text in ("k<<<1, 1>>>() on", "k<<<1, 1>>>(S s = peers) on 2 gpus",
                 "k<<<1, 1>>>(int a[1] per) on 2 gpus"):
        with pytest.raises(PtxmmError):
            parse_launch(text)
