"""Kernel crossval without a GPU: planning (the model's states over every buffer element, whether an
assertion failure or an out-of-bounds access is allowed, hanging kernels refused), the PTX that runs
(nvcc's, with the harness's own ``__assertfail``), batch rows for files that cannot run, the
histogram's decoding, the verdicts, and the command end to end with a fake device."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

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
from ptxmm.device.kernel_run import KernelEnv, KernelHung, KernelRun, State, run_isolated
from ptxmm.kernel.kernels import KernelArgs

K = ROOT / "examples" / "kernels"


def _plan(name: str, launch: str | None = None) -> KP.KernelPlan:
    path = K / name
    prog = ptxmm.load(path, kernel=KernelArgs(launch=launch) if launch else None)
    return KP.plan_kernel(prog, path.read_text())


# ----- planning ---------------------------------------------------------------------------------

def test_allowed_states_are_the_models_outcomes_over_every_element():
    p = _plan("mp-relaxed-flag.ptx")
    assert p.elements == ("data[0]", "flag[0]", "out[0]")
    assert p.allowed == {(42, 1, 0), (42, 1, 42)}
    assert p.assert_allowed and not p.oob_allowed and p.uses_assert
    q = _plan("mp-release-flag.ptx")
    assert q.allowed == {(42, 1, 42)} and not q.assert_allowed


def test_unwritten_elements_keep_their_initial_values():
    p = _plan("lookback-packed.ptx")
    assert p.elements[:3] == ("in[0]", "in[1]", "in[2]")
    assert {s[:3] for s in p.allowed} == {(1, 2, 3)}  # `in` is only read
    # a launch with a longer buffer: the extra elements are never written and stay 0
    q = _plan("mp-release-flag.ptx", "mp<<<2, 1>>>(int data[1], int flag[1], int out[3])")
    assert q.elements[-3:] == ("out[0]", "out[1]", "out[2]") and q.allowed == {(42, 1, 42, 0, 0)}


def test_instance_memory_has_guards_around_every_buffer():
    p = _plan("mp-relaxed-flag.ptx")
    img = p.image()
    assert len(img) == p.stride and p.stride % KP.ALIGN == 0
    elem = set(p.element_bytes())
    assert all(img[i] == KP.SENTINEL for i in range(p.stride) if i not in elem)
    for b in p.buffers:  # a guard before and after each buffer
        assert img[b.offset - 1] == KP.SENTINEL and img[b.offset + b.count * b.size] == KP.SENTINEL
    q = _plan("lookback-packed.ptx")
    b = q.buffers[0]
    assert [int.from_bytes(q.image()[b.offset + 4 * i:b.offset + 4 * i + 4], "little") for i in range(3)] \
        == [1, 2, 3]


def test_a_kernel_the_model_lets_hang_is_refused():
    item = KC.plan_kernel_file(K / "spin-hoisted.ptx", "ptx", 2)
    assert isinstance(item, B.Skip) and item.reason == B.DEVICE_UNSUPPORTED
    assert "hang" in item.message and "model only" in item.hint


def test_signed_values_read_as_their_type():
    p = _plan("mp-release-flag.ptx")
    assert p.typed((0xFFFFFFFF, 1, 42)) == (-1, 1, 42)


# ----- the PTX that runs -----------------------------------------------------------------------

def _decl(ptx: str) -> str:
    m = KP._EXTERN.search(ptx)
    assert m and m.group(2) == "__assertfail"
    return m.group(0)


def test_only_the_assertfail_declaration_changes():
    ptx = (K / "mp-relaxed-flag.ptx").read_text()
    out, uses = KP.rewrite_ptx(ptx)
    assert uses and ".extern .func __assertfail" not in out
    end = "exit;\n}\n"
    defn = out[out.index(f".global .align 4 .u32 {KP.ASSERT_COUNT}"):out.index(end) + len(end)]
    assert out.replace(defn, "") == ptx.replace(_decl(ptx), "")
    assert "%dynamic_smem_size" in defn and "red.relaxed.gpu.global.add.u32" in defn
    # the parameters are the declaration's, so nvcc's call matches the definition
    assert re.findall(r"__assertfail_param_\d", defn) == re.findall(r"__assertfail_param_\d", _decl(ptx))


def test_vprintf_becomes_silent_and_other_externals_are_refused():
    decl = (".extern .func  (.param .b32 func_retval0) vprintf\n(\n\t.param .b64 vprintf_param_0,\n"
            "\t.param .b64 vprintf_param_1\n)\n;\n")
    out, uses = KP.rewrite_ptx(".version 8.0\n" + decl + ".visible .entry k() { ret; }\n")
    assert not uses and ".extern" not in out and "st.param.b32 [func_retval0], 0;" in out
    with pytest.raises(ptxmm.UnsupportedError, match="external function memcpy_like"):
        KP.rewrite_ptx(".extern .func memcpy_like\n(\n\t.param .b64 p0\n)\n;\n")


_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(before=st.lists(_NAMES, max_size=4), after=st.lists(_NAMES, max_size=4),
       params=st.lists(st.sampled_from(["b32", "b64"]), min_size=1, max_size=6))
def test_rewrite_keeps_every_other_line(before, after, params):
    """Property: whatever surrounds the declaration, the rewrite removes exactly it and adds the
    definition with the same parameters."""
    decl = ".extern .func __assertfail\n(\n" + ",\n".join(
        f"\t.param .{t} __assertfail_param_{i}" for i, t in enumerate(params)) + "\n)\n;\n"
    head = "".join(f"// {w}\n.global .u32 {w}_v;\n" for w in before)
    tail = "".join(f"\tmov.u32 %r1, {w};\n" for w in after)
    out, uses = KP.rewrite_ptx(head + decl + tail)
    assert uses and out.startswith(head) and out.endswith(tail)
    names = [f"__assertfail_param_{i}" for i in range(len(params))]
    assert names == re.findall(r"__assertfail_param_\d+", out)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_the_rewritten_ptx_assembles(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path))
    for name in ("mp-relaxed-flag.ptx", "spinlock-cas.ptx", "syncthreads-exchange.ptx"):
        cubin = KP.assemble(KP.rewrite_ptx((K / name).read_text())[0])
        assert cubin.is_file() and cubin.stat().st_size > 0
    with pytest.raises(ptxmm.PtxmmError, match="ptxas could not assemble"):
        KP.assemble(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n")


# ----- batches ------------------------------------------------------------------------------------

def _bad_kernels(tmp_path: Path) -> dict[str, Path]:
    src = (K / "mp-release-flag.ptx").read_text()
    launch = "// ptxmm: launch mp<<<2, 1>>>(int data[1], int flag[1], int out[1])\n"
    files = {"no-launch": tmp_path / "no-launch.ptx", "device-var": tmp_path / "device-var.ptx",
             "null-pointer": tmp_path / "null-pointer.ptx"}
    files["no-launch"].write_text(src)  # no `// ptxmm: launch` line and no .cu twin beside it
    # a module variable named outside the kernel's body (a function): no per-instance copy for it
    files["device-var"].write_text(launch + src.replace(".visible .entry", ".global .align 4 .u32 gvar;\n"
                                                        ".func touch()\n{\n\tst.global.u32 [gvar], 1;\n"
                                                        "\tret;\n}\n.visible .entry", 1))
    files["null-pointer"].write_text(src.replace("//\n", "// ptxmm: launch mp<<<2, 1>>>(int data[1], 0, "
                                                 "int out[1])\n", 1))
    return files


def test_a_batch_plans_kernels_and_litmus_tests_and_keeps_every_bad_file_as_a_row(tmp_path, monkeypatch):
    monkeypatch.setattr(KC, "assemble", lambda ptx, timeout=None: tmp_path / "fake.cubin")
    monkeypatch.setattr(B, "compile_cubin", lambda src, timeout=None: tmp_path / "fake.cubin")
    bad = _bad_kernels(tmp_path)
    files = [K / "mp-relaxed-flag.ptx", ROOT / "examples/classic/MP-relaxed.ptx", bad["no-launch"],
             K / "spin-hoisted.ptx", bad["device-var"], bad["null-pointer"], K / "mp-release-flag.ptx"]
    items = KC.plan_files(files, "ptx", 2)
    assert [Path(i.file) for i in items] == files
    kinds = [type(i).__name__ for i in items]
    assert kinds == ["KernelJob", "Job", "Skip", "Skip", "Skip", "Skip", "KernelJob"]
    reasons = {Path(i.file).stem: i for i in items if isinstance(i, B.Skip)}
    assert reasons["no-launch"].reason == B.PARSE and "no launch" in reasons["no-launch"].message
    assert reasons["spin-hoisted"].reason == B.DEVICE_UNSUPPORTED
    assert reasons["device-var"].reason == B.DEVICE_UNSUPPORTED and "gvar" in reasons["device-var"].message
    assert reasons["null-pointer"].reason == B.DEVICE_UNSUPPORTED
    assert "pointer" in reasons["null-pointer"].message


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_a_cu_that_does_not_compile_is_a_compile_error_row(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    cu = tmp_path / "broken.cu"
    cu.write_text("// ptxmm: launch k<<<1, 1>>>(int out[1])\n__global__ void k(int *out) { out[0] = ; }\n")
    item = KC.plan_kernel_file(cu, "ptx", 2)
    assert isinstance(item, B.Skip) and item.reason == B.COMPILE and "broken.cu" in item.message


# ----- what a run observed, and the verdicts --------------------------------------------------------

def test_histogram_decodes_values_guards_and_assertion_failures():
    np = pytest.importorskip("numpy")
    from ptxmm.device.kernel_run import Histogram

    p = _plan("mp-relaxed-flag.ptx")
    rows = np.tile(np.frombuffer(p.image(), dtype=np.uint8), (6, 1)).copy()
    off = {b.name: b.offset for b in p.buffers}

    def put(r, name, v):
        rows[r, off[name]:off[name] + 4] = np.frombuffer(v.to_bytes(4, "little"), dtype=np.uint8)

    for r in range(6):
        put(r, "data", 42)
        put(r, "flag", 1)
    put(1, "out", 42)
    put(2, "out", 0xFFFFFFFF)
    rows[3, off["out"] + 4] = 7  # a write just past out[0]: into the guard
    h = Histogram(p)
    h.add(rows[:3], np.array([0, 0, 0], dtype=np.uint32))
    h.add(rows[3:], np.array([0, 2, 0], dtype=np.uint32))
    assert h.states() == {State((42, 1, 0)): 2, State((42, 1, 42)): 1, State((42, 1, 0xFFFFFFFF)): 1,
                          State((42, 1, 0), oob=True): 1, State((42, 1, 0), asserts=2): 1}


def _run(p, states: dict) -> KernelRun:
    return KernelRun(p, KernelEnv(), sum(states.values()), 1.0, states)


def test_verdicts():
    p = _plan("mp-relaxed-flag.ptx")  # assertion failures allowed, out-of-bounds not
    kc = KC.judge(p, _run(p, {State((42, 1, 0)): 5, State((42, 1, 0), asserts=1): 3,
                              State((42, 1, 7)): 1, State((42, 1, 0), oob=True): 1}))
    by = {(r.values, r.oob, r.asserts): r.verdict for r in kc.rows}
    assert by == {((42, 1, 0), False, False): "ok", ((42, 1, 0), False, True): "ok",
                  ((42, 1, 7), False, False): "VIOLATION", ((42, 1, 0), True, False): "VIOLATION",
                  ((42, 1, 42), False, False): "unseen"}
    assert len(kc.violations) == 2 and kc.assert_instances == 3 and kc.oob_instances == 1
    assert kc.condition_instances == 9  # exists out[0] == 0
    bug = kc.bug()
    assert bug["observed"] and bug["instances"] == {"assert-fails": 3, "condition": 9}
    q = _plan("mp-release-flag.ptx")  # no assertion failure allowed
    kq = KC.judge(q, _run(q, {State((42, 1, 42)): 4, State((42, 1, 42), asserts=1): 1}))
    assert [r.verdict for r in kq.rows] == ["ok", "VIOLATION"] and kq.bug() is None
    o = _plan("exchange-off-by-one.ptx")  # the model lets it write out of bounds: what follows is undefined
    (good,) = o.allowed
    ko = KC.judge(o, _run(o, {State(good, oob=True): 4, State((9, 9, 9, 9), oob=True): 1}))
    assert [r.verdict for r in ko.rows] == ["ok", "undefined"] and not ko.violations
    data = ko.to_json()
    assert data["out_of_bounds_writes"] == {"allowed": True, "instances": 5}
    assert data["bug"]["observed"] and json.dumps(data)


def test_an_element_the_isa_leaves_unspecified_is_not_compared(tmp_path):
    """A division by zero leaves its result unspecified (PTX ISA, div): the model lists no value for
    out[0], so the device's value there is not compared — never judged against an invented 0."""
    cu = tmp_path / "div.cu"
    cu.write_text("// ptxmm: launch k<<<1, 1>>>(unsigned out[2], 0)\n"
                  "__global__ void k(unsigned *out, unsigned d) { out[0] = 7u / d; out[1] = 1; }\n")
    prog = ptxmm.load(cu)
    p = KP.plan_kernel(prog, KP.kernel_ptx(cu))
    assert p.elements == ("out[0]", "out[1]") and p.free == {0}
    assert p.allowed == {(KP.FREE, 1)}
    kc = KC.judge(p, _run(p, {State((0xFFFFFFFF, 1)): 3, State((5, 0)): 1}))
    by = {r.values: r.verdict for r in kc.rows}
    assert by == {(0xFFFFFFFF, 1): "ok", (5, 0): "VIOLATION"}
    data = kc.to_json()
    assert data["not_compared"] == ["out[0]"] and data["allowed_states_seen"] == 1


# ----- the command, with a fake device -----------------------------------------------------------------

class _FakeHarness:
    """Every instance ends in one of the model's states, as often as the plan's index; ``bad``:
    one instance of mp-release-flag reads a stale out[0]."""

    bad = False
    hangs = None  # the name of a kernel that hangs on the fake device

    def __init__(self, plan, env, timeout_s=60.0, cubin=None):
        self.plan, self.env = plan, env

    def run(self, budget_s=1.0, rounds=None):
        states = {State(v): 100 + k for k, v in enumerate(sorted(self.plan.allowed))}
        if self.bad and self.plan.prog.name == "mp" and len(self.plan.allowed) == 1:
            states[State((42, 1, 0))] = 1
        return KernelRun(self.plan, self.env, sum(states.values()), 0.5, states, device="fake GPU")


def _fake_isolated(plan, env, budget_s, rounds, timeout_s, cubin=None):
    if _FakeHarness.hangs == plan.prog.name:
        raise KernelHung("no round of 1024 launches finished within 20 s: the kernel hung on the device")
    return _FakeHarness(plan, env).run(budget_s, rounds)


@pytest.fixture
def fake_device(tmp_path, monkeypatch):
    from ptxmm.device import commands, kernel_run

    monkeypatch.setattr(commands, "device_error", lambda: None)
    monkeypatch.setattr(kernel_run, "run_isolated", _fake_isolated)
    monkeypatch.setattr(KC, "assemble", lambda ptx, timeout=None: tmp_path / "fake.cubin")
    return _FakeHarness


def test_crossval_of_kernels_reports_rows_json_and_exit_codes(tmp_path, fake_device):
    out = tmp_path / "k.json"
    files = [K / "mp-release-flag.ptx", K / "spin-hoisted.ptx", K / "mp-relaxed-flag.ptx"]
    r = CliRunner().invoke(main, ["crossval", *map(str, files), "--no-self-check", "--budget", "0.1",
                                  "--json", str(out)])
    assert r.exit_code == 2, r.output  # spin-hoisted did not run
    data = json.loads(out.read_text())
    assert (data["summary"]["ran"], data["summary"]["not_run"], data["summary"]["violations"]) == (2, 1, 0)
    t0, t1, t2 = data["tests"]
    assert t0["status"] == "ran" and t0["kind"] == "kernel" and t0["states"][0]["verdict"] == "ok"
    assert t0["instances"] == 100 and t0["allowed_states_seen"] == 1 and t0["bug"] is None
    assert t1["status"] == "not run" and t1["reason"] == B.DEVICE_UNSUPPORTED
    # the fake shows the model's states only: the condition's, never an assertion failure
    assert t2["bug"]["expect"] == ["assert-fails", "race"] and t2["bug"]["observed"]
    assert t2["bug"]["instances"]["assert-fails"] == 0 and t2["bug"]["instances"]["condition"] > 0
    shown = " ".join(r.output.split())
    assert "1 of 1 allowed state(s) seen" in shown and "1 not run (1 not supported on the device)" in shown
    fake_device.bad = True
    try:
        r = CliRunner().invoke(main, ["crossval", str(K / "mp-release-flag.ptx"), "--no-self-check",
                                      "--json", str(out)])
    finally:
        fake_device.bad = False
    assert r.exit_code == 1 and "VIOLATION" in r.output
    assert json.loads(out.read_text())["summary"]["violations"] == 1


def test_crossval_launch_option_sets_the_kernels_launch(tmp_path, fake_device):
    out = tmp_path / "k.json"
    r = CliRunner().invoke(main, ["crossval", str(K / "mp-release-flag.ptx"), "--no-self-check", "--json",
                                  str(out), "--launch", "mp<<<2, 1>>>(int data[1], int flag[1], int out[2])"])
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["tests"][0]["elements"] == ["data[0]", "flag[0]", "out[0]", "out[1]"]


def test_a_kernel_that_hangs_on_the_device_is_a_timeout_row_and_the_batch_goes_on(tmp_path, fake_device):
    out = tmp_path / "k.json"
    fake_device.hangs = "scan"
    try:
        r = CliRunner().invoke(main, ["crossval", str(K / "lookback-packed.ptx"),
                                      str(K / "mp-release-flag.ptx"), "--no-self-check", "--json", str(out)])
    finally:
        fake_device.hangs = None
    assert r.exit_code == 2, r.output
    data = json.loads(out.read_text())
    assert data["summary"]["reasons"] == {B.TIMEOUT: 1} and not data["summary"]["hung"]
    hung, ran = data["tests"]
    assert hung["status"] == "not run" and "liveness disagreement" in hung["message"]
    assert ran["status"] == "ran" and ran["violations"] == 0


# spawn targets for the watchdog (module level: the child imports them)
def _silent_child(*args) -> None:
    import time

    time.sleep(600)


def _hung_child(plan, env, budget_s, rounds, timeout_s, cubin, conn) -> None:
    conn.send(("hung", "no round finished"))


def _ok_child(plan, env, budget_s, rounds, timeout_s, cubin, conn) -> None:
    assert plan.prog is None and plan.check is None  # the model's part stays in the parent
    conn.send(("ok", (2048, 0.5, {State(next(iter(plan.allowed))): 2048}, "child GPU")))


def test_the_watchdog_kills_a_silent_child():
    """The default run's version of the test below, without its clock."""
    p = _plan("mp-release-flag.ptx")
    with pytest.raises(KernelHung, match="no answer within 2 s"):
        run_isolated(p, KernelEnv(), 1.0, None, 1.0, target=_silent_child, limit_s=2)


@pytest.mark.slow  # a wall-clock assertion: fails on a loaded machine
def test_the_watchdog_kills_a_silent_child_and_reports_a_hung_one():
    p = _plan("mp-release-flag.ptx")
    import time

    t0 = time.perf_counter()
    with pytest.raises(KernelHung, match="no answer within 2 s"):
        run_isolated(p, KernelEnv(), 1.0, None, 1.0, target=_silent_child, limit_s=2)
    assert time.perf_counter() - t0 < 30
    with pytest.raises(KernelHung, match="no round finished"):
        run_isolated(p, KernelEnv(), 1.0, None, 1.0, target=_hung_child, limit_s=60)
    run = run_isolated(p, KernelEnv(), 1.0, None, 1.0, target=_ok_child, limit_s=60)
    assert run.plan is p and run.instances == 2048 and run.checksum_ok and run.device == "child GPU"


def test_an_undecided_kernel_runs_only_when_allowed():
    """warp-wait-for-valid: liveness "undecided" (a loop that holds a vote.sync). Refused by
    default, saying how to run it; planned with allow_undecided (crossval --allow-undecided), where
    a kernel that spins is a timeout row after --timeout."""
    item = KC.plan_kernel_file(K / "warp-wait-for-valid.ptx", "ptx", 2)
    assert isinstance(item, B.Skip) and item.reason == B.DEVICE_UNSUPPORTED
    assert "did not decide" in item.message and "--allow-undecided" in item.hint
    planned = KC.plan_kernel_file(K / "warp-wait-for-valid.ptx", "ptx", 2, allow_undecided=True)
    assert not isinstance(planned, B.Skip), planned
    hang = KC.plan_kernel_file(K / "spin-hoisted.ptx", "ptx", 2, allow_undecided=True)
    assert isinstance(hang, B.Skip) and "hang" in hang.message  # a hang stays refused
