"""Cooperative launches (issue 39 item 4; ir/sregs.py, kernel/instantiate.py): under `cooperative
k<<<...>>>` cooperative groups' grid workspace (%envreg1:%envreg2) is a hidden zero-initialised
global buffer, the same address in every CTA, so nvcc's grid.sync() is checked as written — the
exchange holds and both engines agree; without `cooperative` the workspace pointer is null and
grid.sync() reaches its `trap`, a finding at the CUDA line. `trap` and `__trap()` end the grid."""

from __future__ import annotations

import io
import shutil

import pytest
from support import ROOT

import ptxmm
from ptxmm.ir.sregs import GRID_WORKSPACE, WORKSPACE
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.loading import parse_kernel
from ptxmm.report.termtext import Writer
from ptxmm.report.text import render

NVCC = shutil.which("nvcc")
EXAMPLE = ROOT / "examples" / "kernels" / "grid-sync-cg.ptx"
LAUNCH = "exchange<<<2, 1>>>(int slot[2], int out[2])"


def kinds(res) -> set[str]:
    return {str(f.kind) for f in res.findings if str(f.kind) != "flag"}


def example(launch: str | None = None):
    return parse_kernel(EXAMPLE.read_text(), str(EXAMPLE), KernelArgs(launch=launch) if launch else None)


def test_grid_sync_under_a_cooperative_launch_exchanges_the_values():
    prog = example()
    assert prog.kernel.launch.cooperative
    res = ptxmm.check(prog)
    assert kinds(res) == set() and res.holds is True
    assert {o.outcome.as_dict()["out[0]"] for o in res.outcomes} == {2}
    assert any("co-resident" in w.message for w in prog.warnings)


def test_both_engines_agree_on_the_cooperative_grid_sync():
    prog = example()
    z = ptxmm.check(prog, engine="z3", flags=False)
    b = ptxmm.check(prog, engine="brute", flags=False)
    assert z.outcome_set == b.outcome_set and len(z.outcome_set) == 1


def test_the_workspace_is_one_hidden_zeroed_buffer_whose_address_every_cta_reads():
    prog = example()
    ws = next(r for r in prog.layout.regions if r.name == WORKSPACE)
    assert (ws.space, ws.type, ws.count, ws.init) == ("global", "u32", 2, (0, 0))
    assert all(ws.base != r.base for r in prog.layout.regions if r is not ws)
    regs = {dict(t.init_regs)[GRID_WORKSPACE[0]] << 32 | dict(t.init_regs)[GRID_WORKSPACE[1]]
            for t in prog.threads}
    assert regs == {ws.base}
    assert {loc.name for loc in prog.locations} >= {f"{WORKSPACE}[0]", f"{WORKSPACE}[1]"}


def test_without_a_cooperative_launch_grid_sync_traps_at_its_cuda_line():
    prog = example(LAUNCH)
    assert not prog.kernel.launch.cooperative
    assert all(r.name != WORKSPACE for r in prog.layout.regions)
    assert all(dict(t.init_regs)[GRID_WORKSPACE[0]] == dict(t.init_regs)[GRID_WORKSPACE[1]] == 0
               for t in prog.threads)
    res = ptxmm.check(prog)
    assert kinds(res) == {"trap"} and res.holds is False
    assert "grid-sync-cg.cu:47 cg::this_grid().sync();" in "\n".join(str(f) for f in res.findings)
    assert any("not cooperative" in w.message for w in prog.warnings)
    brute = ptxmm.check(prog, engine="brute", flags=False)
    assert brute.outcome_set == ptxmm.check(prog, engine="z3", flags=False).outcome_set


HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


def envreg_kernel(reg: str, launch: str):
    text = (HEAD + ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n\t.reg .b32 %r<3>;\n"
            f"\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [k_param_0];\n\tmov.u32 %r1, {reg};\n"
            "\tst.global.u32 [%rd1], %r1;\n"
            "\tret;\n}\n")
    return parse_kernel(text, "k.ptx", KernelArgs(launch=launch))


def test_other_environment_registers_stay_unknown_in_a_cooperative_launch():
    prog = envreg_kernel("%envreg0", "cooperative k<<<1, 1>>>(unsigned out[1])")
    assert all("%envreg0" not in dict(t.init_regs) for t in prog.threads)
    assert all(r.name != WORKSPACE for r in prog.layout.regions)  # no workspace read: none given
    res = ptxmm.check(prog)
    unspecified = "out[0] may hold a value the PTX ISA leaves unspecified"
    assert any(unspecified in w.message for w in res.program.warnings)


@pytest.mark.parametrize("launch, value", [("cooperative k<<<1, 1>>>(unsigned out[1])", None),
                                           ("k<<<1, 1>>>(unsigned out[1])", 0)])
def test_the_workspace_registers_are_the_address_or_null(launch, value):
    prog = envreg_kernel("%envreg2", launch)
    want = prog.layout.base_of(WORKSPACE) if value is None else value
    assert {o.outcome.as_dict()["out[0]"] for o in ptxmm.check(prog).outcomes} == {want}


TRAP = ("// ptxmm: launch t<<<2, 1>>>(int a[2] = {0, 1})\n"
        "__global__ void t(int *a)\n{\n    if (a[blockIdx.x])\n        __trap();\n"
        "    a[blockIdx.x] = 5;\n}\n")


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
def test_cuda_trap_is_a_trap_finding_at_its_line(tmp_path):
    cu = tmp_path / "t.cu"
    cu.write_text(TRAP)
    res = ptxmm.check(ptxmm.load(cu))
    assert kinds(res) == {"trap"}
    assert "t.cu:5" in "\n".join(str(f) for f in res.findings)


def _module(body: str) -> str:
    return (HEAD + ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n\t.reg .pred %p<3>;\n"
            "\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [k_param_0];\n"
            "\tmov.u32 %r1, %ctaid.x;\n\tsetp.ne.u32 %p1, %r1, 0;\n\t@%p1 bra W;\n" + body + "\tret;\n}\n")


LAUNCH_FLAG = KernelArgs(launch="k<<<2, 1>>>(unsigned flag[1])")


def test_ptx_trap_is_a_trap_finding():
    """CTA 0 executes `trap`, CTA 1 stores: a `trap` finding; without the trap, none."""
    body = "\ttrap;\n\tret;\nW:\n\tst.global.u32 [%rd1], 1;\n"
    assert kinds(ptxmm.check(parse_kernel(_module(body), "k.ptx", LAUNCH_FLAG))) == {"trap"}
    clean = _module(body.replace("\ttrap;\n", ""))
    assert kinds(ptxmm.check(parse_kernel(clean, "k.ptx", LAUNCH_FLAG))) == set()


WAITS_FOR_TRAPPER = ("\ttrap;\n\tst.release.gpu.global.u32 [%rd1], 1;\n\tret;\nW:\n"
                     "\tld.acquire.gpu.global.u32 %r2, [%rd1];\n\tsetp.eq.u32 %p2, %r2, 0;\n\t@%p2 bra W;\n")


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_a_trap_ends_the_grid_while_another_cta_waits(engine):
    """CTA 0 traps before it sets the flag CTA 1 waits for: a `trap` finding and no hang (PTX ISA,
    trap: "Abort execution"; ir/stops.py: a trap ends the grid) — found on the liveness graph,
    where CTA 1 stops mid-loop (queries/sites.grid_ending_sites); no execution runs to its end."""
    res = ptxmm.check(parse_kernel(_module(WAITS_FOR_TRAPPER), "k.ptx", LAUNCH_FLAG), engine=engine)
    assert kinds(res) == {"trap"}
    assert res.liveness == "terminates" and res.status == "no-execution"
    assert "ends the grid early" in res.status_text


def test_the_trap_while_another_waits_is_reported_with_its_ending_in_words():
    res = ptxmm.check(parse_kernel(_module(WAITS_FOR_TRAPPER), "k.ptx", LAUNCH_FLAG))
    (f,) = [f for f in res.findings if str(f.kind) == "trap"]
    assert f.outcome is None and f.events[0].thread == "b0t0" and f.events[0].line == 15
    buf = io.StringIO()
    render(res, Writer(buf, colour=False))
    assert "trap: b0t0 trap (line 15)   (in an execution that ends there: the other threads stop where" \
        in buf.getvalue()
    assert "e.g. None" not in buf.getvalue()


def test_without_the_trap_the_waiter_hangs_and_no_trap_is_found():
    body = WAITS_FOR_TRAPPER.replace("\ttrap;\n\tst.release.gpu.global.u32 [%rd1], 1;\n", "")
    res = ptxmm.check(parse_kernel(_module(body), "k.ptx", LAUNCH_FLAG))
    assert kinds(res) == {"hang"}


def test_a_trap_on_a_path_no_execution_takes_is_still_no_finding_while_another_waits():
    """The trap sits behind a flag nobody sets: the grid-ending query finds no execution for it."""
    body = ("\tld.relaxed.gpu.global.u32 %r2, [%rd1+4];\n\tsetp.eq.u32 %p2, %r2, 0;\n\t@%p2 bra S;\n"
            "\ttrap;\nS:\n\tst.release.gpu.global.u32 [%rd1], 1;\n\tret;\nW:\n"
            "\tld.acquire.gpu.global.u32 %r2, [%rd1];\n\tsetp.eq.u32 %p2, %r2, 0;\n\t@%p2 bra W;\n")
    launch = KernelArgs(launch="k<<<2, 1>>>(unsigned flag[2])")
    res = ptxmm.check(parse_kernel(_module(body), "k.ptx", launch))
    assert kinds(res) == set() and res.liveness == "terminates"
