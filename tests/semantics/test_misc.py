"""The PTX ISA's miscellaneous instructions: ``nanosleep.u32 t`` (syntax/decode/misc.py,
semantics/misc.py). A delay with no memory effect: read as ptxas reads it, and a program behaves
the same with or without it — outcomes, verdict, findings, liveness — while a back-off inside a
spin loop keeps the loop an await."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT, agree
from support.ptxas_oracle import PTXAS, ptxas_accepts, ptxmm_verdict

import ptxmm
from ptxmm.ir.program import Nanosleep
from ptxmm.semantics.builder import build

# ptxas -arch=sm_90's verdict on each form (the oracle re-checks it where ptxas is installed)
FORMS = [
    ("nanosleep.u32 %r0;", "accept"),
    ("nanosleep.u32 100;", "accept"),
    ("nanosleep.u32 0xFFFFFFFF;", "accept"),
    ("@%p0 nanosleep.u32 %r1;", "accept"),
    ("nanosleep.u32 %b0;", "accept"),
    ("nanosleep.u32 %s0;", "accept"),
    ("nanosleep.b32 %r0;", "reject"),  # "Unexpected instruction types specified for 'nanosleep'"
    ("nanosleep.s32 %r0;", "reject"),  # "Instruction 'nanosleep' requires '.u32' type"
    ("nanosleep %r0;", "reject"),
    ("nanosleep.u64 %rd0;", "reject"),
    ("nanosleep.u32 %rd0;", "reject"),  # "Arguments mismatch for instruction 'nanosleep'"
    ("nanosleep.u32 %h0;", "reject"),
    ("nanosleep.u32 %f0;", "reject"),
    ("nanosleep.u32 %r0, %r1;", "reject"),
    ("nanosleep.u32 [gx];", "reject"),
    ("nanosleep.relaxed.u32 %r0;", "reject"),
]


@pytest.mark.parametrize("line,expected", FORMS)
def test_nanosleep_forms_are_read_as_ptxas_reads_them(line, expected):
    got, msg = ptxmm_verdict(["setp.eq.u32 %p0, %r0, 0;", line])
    assert got == expected, msg
    if got == "reject":
        assert re.search(r"k\.ptx:\d+:\d+", msg) and "nanosleep" in msg  # located, names the form


@pytest.mark.skipif(PTXAS is None, reason="ptxas not on PATH (the CUDA toolkit)")
@pytest.mark.parametrize("line,expected", FORMS)
def test_the_table_is_what_ptxas_says(line, expected):
    ok, said = ptxas_accepts(["setp.eq.u32 %p0, %r0, 0;", line])
    assert ok == (expected == "accept"), said


def test_a_literal_its_type_cannot_hold_is_refused():
    """ptxas truncates 0x100000000 silently; ptxmm refuses every such literal (README)."""
    got, msg = ptxmm_verdict(["nanosleep.u32 0x100000000;"])
    assert got == "reject" and "does not fit" in msg


def test_nanosleep_is_an_instruction_of_its_own_and_no_event():
    prog = ptxmm.parse(MP_BACKOFF, "t.ptx")
    sleeps = [i for t in prog.threads for i in t.instrs if isinstance(i, Nanosleep)]
    assert len(sleeps) == 1 and sleeps[0].guard is not None
    eg = build(prog)
    assert all(not isinstance(e.instr, Nanosleep) for e in eg.events)


MP_BACKOFF = """
.global .u32 data = 0;
.global .u32 flag = 0;
.thread T0 .cta 0 {
    st.global.u32 [data], 42;
    st.release.gpu.global.u32 [flag], 1;
}
.thread T1 .cta 1 {
$L_spin:
    ld.acquire.gpu.global.u32 %r0, [flag];
    setp.ne.u32 %p0, %r0, 1;
    @%p0 nanosleep.u32 32;
    @%p0 bra $L_spin;
    ld.global.u32 %r1, [data];
}
exists (T1:%r1 != 42)
"""


def test_a_back_off_keeps_the_spin_loop_an_await():
    """The loop with the sleep is reduced as the loop without it: one await, nothing cut."""
    with_sleep = build(ptxmm.parse(MP_BACKOFF, "t.ptx"))
    without = build(ptxmm.parse(MP_BACKOFF.replace("    @%p0 nanosleep.u32 32;\n", ""), "t.ptx"))
    assert with_sleep.awaits == without.awaits == 1
    assert with_sleep.cut_paths == without.cut_paths == 0
    res = agree(ptxmm.parse(MP_BACKOFF, "t.ptx"))
    assert res.holds is False


def test_a_back_off_does_not_hide_a_hang():
    """A flag no thread sets: the sleeping spin still hangs; set, it terminates."""
    hang = MP_BACKOFF.replace("st.release.gpu.global.u32 [flag], 1;", "st.release.gpu.global.u32 [flag], 2;")
    assert ptxmm.check(ptxmm.parse(hang, "t.ptx"), liveness=True).liveness == "hangs"
    assert ptxmm.check(ptxmm.parse(MP_BACKOFF, "t.ptx"), liveness=True).liveness == "terminates"


# ----- the same program with sleeps anywhere: the same answers ------------------------------------

PROGRAMS = ["mp-spin.ptx", "spinlock-cas.ptx", "classic/MP-rel-acq.ptx", "classic/SB-fence-sc.ptx",
            "classic/LB-relaxed.ptx", "mp-relaxed-acquire.ptx", "liveness/spin-weak-flag.ptx"]


def _instruction_lines(text: str) -> list[int]:
    """The lines of ``text`` that hold an instruction of a thread body (after which a sleep may go)."""
    out, inside = [], False
    for k, ln in enumerate(text.splitlines()):
        s = ln.strip()
        if s.startswith(".thread"):
            inside = True
        elif s.startswith("}"):
            inside = False
        elif inside and s and not s.startswith(("//", ".reg", "$")) and s.endswith(";"):
            out.append(k)
    return out


def _answers(res) -> tuple:
    findings = sorted((f.name, tuple(sorted(str(e.text) for e in f.events))) for f in res.findings)
    return res.holds, {o.values for o in res.outcome_set}, findings, res.liveness


@settings(max_examples=25, deadline=None, derandomize=True)
@given(data=st.data())
def test_sleeps_anywhere_change_no_answer(data):
    name = data.draw(st.sampled_from(PROGRAMS))
    text = (ROOT / "examples" / name).read_text()
    lines = text.splitlines()
    spots = data.draw(st.sets(st.sampled_from(_instruction_lines(text)), min_size=1, max_size=3))
    for k in sorted(spots, reverse=True):  # a sleep before the instruction, guarded as it is
        guard = re.match(r"\s*(@!?%\w+)\s", lines[k])
        lines.insert(k, f"    {guard.group(1) + ' ' if guard else ''}nanosleep.u32 64;")
    live = "liveness" in name
    plain = ptxmm.check(ptxmm.parse(text, name), liveness=live)
    slept = ptxmm.check(ptxmm.parse("\n".join(lines), name), liveness=live)
    assert _answers(slept) == _answers(plain)


# ----- kernels and the device ------------------------------------------------------------------------

def test_a_cuda_back_off_is_read_from_nvcc_ptx():
    """FlashOverlap's wait (examples/kernels/flag-wait-backoff.cu): nvcc's `nanosleep.u32 %r5` is
    read, the CAS retry loop around it is still an await, and the findings are the file's own."""
    prog = ptxmm.load(ROOT / "examples" / "kernels" / "flag-wait-backoff.ptx")
    assert any(isinstance(i, Nanosleep) for t in prog.threads for i in t.instrs)
    res = ptxmm.check(prog)
    assert res.awaits == 1 and res.findings == () and res.liveness == "terminates"
    broken = ptxmm.check(ptxmm.load(ROOT / "examples" / "kernels" / "flag-wait-backoff-no-fence.ptx"))
    assert {f.name for f in broken.findings} == {"data-race", "assert-fails"}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH (the CUDA toolkit)")
def test_the_device_harness_emits_the_sleep_and_compiles(tmp_path):
    from ptxmm.device.codegen import generate
    from ptxmm.device.layout import make_layout

    src = generate(make_layout(ptxmm.parse(MP_BACKOFF, "t.ptx")))
    assert 'asm volatile("nanosleep.u32 %0;" :: "r"((u32)(' in src
    cu = tmp_path / "h.cu"
    cu.write_text(src)
    r = subprocess.run(["nvcc", "-arch=sm_90", "-c", str(cu), "-o", str(tmp_path / "h.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
