"""The missing mbarrier wait as a checked fix (issue 42, item 5; explanation/waitfix.py): its
parities derived from the kernel's own arrivals and init count (PTX ISA 9.7.13.15), the wait
inserted at each PTX copy of the writer's CUDA line and model-checked (the finding gone, no new
race or hang, the condition's outcome forbidden), said as the line the kernel's author would
insert. Checked three ways on ThunderKittens' semaphore ring: the PTX edit as the search makes
it, the PTX edit as text (ptxas takes it, the front end reads it back), and the CUDA line
compiled by nvcc. A small hand-off kernel gets the same; its twin whose producer loop nvcc keeps
gets the named wait, unchecked, with the reason no parity can be derived."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from support import agree

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.cli.main import main
from ptxmm.explanation import fixfind, waitfix
from ptxmm.explanation.advice import cuda_edit
from ptxmm.ir.instructions import Imm, MBarrier, Mov, Reg

ROOT = Path(__file__).resolve().parents[2]
RING = ROOT / "examples/kernels/real/tk-semaphore-ring-no-finished-wait.cu"
TWIN = ROOT / "examples/kernels/real/tk-semaphore-ring.cu"
DATA = ROOT / "tests/data/kernels"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")


def _model():
    return load_model("ptx")


def _plan(prog):
    (race,) = fixfind.findings_of(prog, _model(), 2, "races")
    return waitfix.plan_of(prog, race)


def _clean(prog) -> None:
    """No race, failing assertion or hang, and the condition's outcome forbidden."""
    res = ptxmm.check(prog, properties=("condition", "sites", "races", "liveness"))
    assert res.holds is False and not res.findings, res.findings


def _writer_parities(prog, sym: str) -> list[int]:
    """The parities of the writer's (thread 0's) waits on ``sym``, as its PTX sets them."""
    t = prog.threads[0]
    out = []
    for i, ins in enumerate(t.instrs):
        if isinstance(ins, MBarrier) and ins.op == "try_wait" and waitfix._address(t, ins)[0] == sym:
            s = ins.state
            if isinstance(s, Reg):  # mov.u32 %r, imm before it
                s = next(x.src for x in reversed(t.instrs[:i]) if isinstance(x, Mov) and x.dst == s)
            assert isinstance(s, Imm)
            out.append(s.value)
    return out


def test_the_rings_wait_parities_come_from_its_arrivals_and_are_its_twins():
    prog = ptxmm.load(RING)
    plan = _plan(prog)
    assert plan.reason is None
    assert [(s.mbar.split("@")[0], s.offset, s.parity, s.use) for s in plan.sites] == [
        ("inputs_finished[0]", 0, 1, 0), ("inputs_finished[1]", 8, 1, 0), ("inputs_finished[0]", 0, 0, 1)]
    # the same parities as the producer's waits of the correct twin (nvcc's PTX of TK's line)
    sym = plan.sites[0].sym
    assert _writer_parities(ptxmm.load(TWIN), sym) == [s.parity for s in plan.sites]
    assert _writer_parities(prog, sym) == []  # the broken kernel has none


def test_the_rings_explain_fix_proposes_the_checked_wait_at_its_cuda_line():
    r = CliRunner().invoke(main, ["explain", "--fix", "--fix-bound", "10", str(RING)])
    assert r.exit_code == 0, r.output
    fix = r.output[r.output.index("\nfix: "):].split("\n\n")[0]
    assert "1 fix(es) of 1 change(s) that remove the finding assert-fails" in fix and "re-checked gone" in fix
    assert ("1. tk-semaphore-ring-no-finished-wait.cu:110: insert `wait(inputs_finished[input_ring], "
            "get_phasebit<1>(semaphore_bitfield, input_ring));` in b0t0 before line 110 "
            "`update_phasebit<1>(semaphore_bitfield, input_ring);`") in fix, fix
    assert "PTX: insert a `mbarrier.try_wait.parity.shared::cta.b64` loop in b0t0 before each of the 3 " \
           "copies of CUDA line 111" in fix and "parities 1, 1, 0" in fix
    assert "not checked" not in fix

    j = CliRunner().invoke(main, ["explain", "--fix", "--fix-bound", "10", "--json", str(RING)])
    assert j.exit_code == 0, j.output
    (sol,) = json.loads(j.output)["fixes"]["solutions"]
    (c,) = sol["changes"]
    assert c["kind"] == "wait" and [w["parity"] for w in c["waits"]] == [1, 1, 0]
    assert Path(c["cuda"]["file"]).name == RING.name and c["cuda"]["line"] == 110
    assert c["cuda"]["edit"].startswith("insert `wait(inputs_finished[input_ring], get_phasebit<1>(")


def test_the_rings_wait_is_a_fix_of_every_finding_and_only_when_its_parities_are_right():
    prog = ptxmm.load(RING)
    m = _model()
    c = waitfix.change_of(prog, _plan(prog))
    found = fixfind.findings_of(prog, m, 2, "sites")
    assert fixfind.wait_judged(prog, m, 2, c, found[0], found) is None
    _clean(fixfind.applied(prog, (c,)))
    # the parities not derived but flipped: the check refutes the waits (the producer waits for
    # a phase no arrive completes first), so no such fix is ever said
    flipped = tuple(replace(s, parity=1 - s.parity) for s in c.plan.sites)
    wrong = replace(c, plan=replace(c.plan, sites=flipped))
    assert fixfind.wait_judged(prog, m, 2, wrong, found[0], found) is not None


@needs_ptxas
def test_the_ptx_edit_as_text_is_legal_and_reads_back_fixed(tmp_path):
    """The waits written into the kernel's .ptx before the PTX lines the plan names: ptxas takes
    them, and the front end reads the edited module back as a kernel with no finding."""
    prog = ptxmm.load(RING)
    plan = _plan(prog)
    t = prog.threads[plan.writer]
    at = {t.instrs[s.index].pos.line: (k, s) for k, s in enumerate(plan.sites)}
    ptx = RING.with_suffix(".ptx").read_text().splitlines()
    out = [ln for ln in RING.read_text().splitlines() if ln.startswith("// ptxmm: launch")
           or ln.startswith("// ptxmm: exists")]
    for n, ln in enumerate(ptx, 1):
        if n in at:
            k, s = at[n]
            code = [i.text for i in waitfix._wait_code(s, k, None)]
            out += ["{", f".reg .pred %ptxmm_wait{k};", code[0], code[1] + ";", code[2] + ";", "}"]
        out.append(ln)
    f = tmp_path / "ring-waits.ptx"
    f.write_text("\n".join(out) + "\n")
    done = subprocess.run(["ptxas", "-arch=sm_90", str(f), "-o", "/dev/null"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    _clean(ptxmm.load(f))


@needs_nvcc
def test_the_cuda_edit_compiles_and_removes_every_finding(tmp_path):
    prog = ptxmm.load(RING)
    c = waitfix.change_of(prog, _plan(prog))
    e = cuda_edit(prog, c)
    inserted = re.match(r"insert `(.*?)` in b0t0 before line (\d+)", e.text)
    assert inserted and int(inserted.group(2)) == e.line == 110
    lines = RING.read_text().splitlines()
    lines.insert(e.line - 1, "            " + inserted.group(1))
    f = tmp_path / RING.name
    f.write_text("\n".join(lines) + "\n")
    fixed = ptxmm.load(f)
    _clean(fixed)
    assert _writer_parities(fixed, c.plan.sites[0].sym) == [s.parity for s in c.plan.sites]


def test_a_handoff_kernel_without_its_wait_gets_it_derived_and_checked():
    prog = ptxmm.load(DATA / "mbar_handoff.cu")
    m = _model()
    rep = fixfind.search(prog, m, budget_s=None, bound=1)
    (sol,) = rep.solutions
    (c,) = sol.changes
    assert c.kind == "wait" and [(s.mbar.split("@")[0], s.parity) for s in c.plan.sites] == [("empty", 1),
                                                                                              ("empty", 0)]
    fixed = fixfind.applied(prog, sol.changes)
    assert fixfind.removes(fixed, m, 2, rep.finding) and not fixfind.removes(prog, m, 2, rep.finding)
    _clean(fixed)
    assert agree(fixed).holds is False  # the Z3 and brute-force engines agree on the fixed kernel
    e = cuda_edit(prog, c)  # no phase bit in the producer: the parities in words
    assert str(e).startswith("mbar_handoff.cu:50: insert `wait(&empty, parity);` in b0t0 before line 50 "
                             "`slot = in[i];`"), str(e)
    assert "parities 1, 0 at the 2 copies of line 50" in e.text


def test_no_parity_is_derived_where_nvcc_keeps_the_writers_loop():
    prog = ptxmm.load(DATA / "mbar_handoff_loop.cu")
    plan = _plan(prog)
    assert plan is not None and plan.sites == ()
    assert "runs more than once in one execution (a loop nvcc kept)" in plan.reason
    rep = fixfind.search(prog, _model(), budget_s=None, bound=1)
    assert not rep.solutions
    assert "insert, in b0t0 before line 50 `slot = in[i];`, a wait on that mbarrier" in rep.advice
    assert "not checked: the write at line 50 runs more than once" in rep.advice, rep.advice


_ARG = st.from_regex(r"[a-z_][a-z0-9_]{0,6}(\[[a-z0-9_]{1,4}\])?", fullmatch=True)


@given(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True), st.lists(_ARG, min_size=1, max_size=3),
       st.lists(_ARG, min_size=1, max_size=3), st.sampled_from(["", "<0>", "<1>"]))
def test_a_call_line_is_read_back_as_its_function_and_arguments(fn, inner, outer, tmpl):
    nested = f"get{tmpl}({', '.join(inner)})"
    args = [*outer, nested]
    assert waitfix._call(f"    {fn}{tmpl}({', '.join(args)});") == (fn + tmpl, args)
    assert waitfix._call(nested, statement=False) == ("get" + tmpl, inner)
    assert waitfix._call(f"{fn}({', '.join(args)})") is None  # not a statement


def test_waits_the_check_refutes_stay_a_named_proposal_that_says_so(monkeypatch):
    prog = ptxmm.load(DATA / "mbar_handoff.cu")
    monkeypatch.setattr(fixfind, "wait_judged", lambda *a: "the kernel with the waits has a new race")
    rep = fixfind.search(prog, _model(), budget_s=None, bound=1)
    assert not rep.solutions
    assert ("the derived waits (parities 1, 0) were checked and are no fix: the kernel with the waits has "
            "a new race") in rep.advice, rep.advice
