"""The timers and environment registers (issue 39 item 1; ir/sregs.py, Builder.special): each
form ptxas reads is read, a timer read is a fresh value the solver chooses (non-decreasing per
thread and counter), an %envreg one value per CTA, the brute-force engine refuses them, and a
loop whose exit depends on a timer is never a hang (liveness: "not decided", with its reason)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from support import ROOT

import ptxmm
from ptxmm.errors import PtxmmError

PTXAS = shutil.which("ptxas")
KERNELS = ROOT / "tests" / "data" / "kernels"

# ptxas -arch=sm_90's verdict on each read (test_the_table_is_what_ptxas_says re-checks it)
FORMS = [(f"mov.{ty} {dst}, {reg};", ok) for reg, ok64 in
         [("%globaltimer", True), ("%clock64", True), ("%globaltimer_lo", False),
          ("%globaltimer_hi", False), ("%clock", False), ("%clock_hi", False), ("%envreg0", False),
          ("%envreg31", False)]
         for ty, dst, ok in [("u64", "%rd1", ok64), ("b64", "%rd1", ok64), ("s64", "%rd1", ok64),
                             ("u32", "%r1", not ok64), ("b32", "%r1", not ok64),
                             ("s32", "%r1", not ok64)]]
FORMS += [("cvt.u64.u32 %rd1, %clock;", True), ("cvt.u32.u64 %r1, %clock64;", True),
          ("mov.u32 %r1, %envreg32;", False), ("add.u64 %rd1, %globaltimer, 1;", False)]


def module(line: str) -> str:
    return ("// ptxmm: launch k<<<1, 1>>>(unsigned out[1])\n.version 8.0\n.target sm_90\n"
            ".address_size 64\n.visible .entry k(.param .u64 k_p)\n{\n  .reg .b32 %r<3>;\n"
            "  .reg .b64 %rd<3>;\n  " + line + "\n  ret;\n}\n")


def accepted(tmp_path, line: str) -> bool:
    f = tmp_path / "k.ptx"
    f.write_text(module(line))
    try:
        ptxmm.load(f)
    except PtxmmError:
        return False
    return True


@pytest.mark.parametrize("line,ok", FORMS)
def test_each_form_is_read_as_ptxas_reads_it(tmp_path, line, ok):
    assert accepted(tmp_path, line) == ok


@pytest.mark.skipif(PTXAS is None, reason="ptxas not on PATH (the CUDA toolkit)")
@pytest.mark.parametrize("line,ok", FORMS)
def test_the_table_is_what_ptxas_says(tmp_path, line, ok):
    f = tmp_path / "k.ptx"
    f.write_text(module(line))
    r = subprocess.run([PTXAS, "-arch=sm_90", str(f), "-o", "/dev/null"], capture_output=True)
    assert (r.returncode == 0) == ok, r.stderr


TWO_READS = module("""ld.param.u64 %rd1, [k_p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u64 %rd2, %globaltimer;
  mov.u32 %r1, %globaltimer_lo;
  cvt.u32.u64 %r2, %rd2;
  sub.u32 %r1, %r1, %r2;
  st.global.u32 [%rd1], %r1;""")


def test_two_timer_reads_can_differ_and_the_brute_engine_refuses_them(tmp_path):
    """Two reads of %globaltimer (the second its low half): the difference may be 0 or not — the
    solver chooses — and concrete enumeration has nothing to enumerate."""
    f = tmp_path / "k.ptx"
    f.write_text(TWO_READS)
    prog = ptxmm.load(f)
    res = ptxmm.check(prog, "ptx")
    assert not res.findings
    with pytest.raises(PtxmmError, match="cannot enumerate .* the timer %globaltimer"):
        ptxmm.check(prog, "ptx", engine="brute")


def test_two_reads_differ_in_some_execution_and_not_in_another(tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text(TWO_READS.replace("// ptxmm: launch", "// ptxmm: forall out[0] == 0\n// ptxmm: launch"))
    assert ptxmm.check(ptxmm.load(f), "ptx").holds is False
    f.write_text(TWO_READS.replace("// ptxmm: launch", "// ptxmm: exists out[0] == 0\n// ptxmm: launch"))
    assert ptxmm.check(ptxmm.load(f), "ptx").holds is True


def test_an_envreg_is_one_value_for_every_read(tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text(module("""ld.param.u64 %rd1, [k_p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %envreg3;
  mov.u32 %r2, %envreg3;
  sub.u32 %r1, %r1, %r2;
  st.global.u32 [%rd1], %r1;""").replace("// ptxmm: launch",
                                          "// ptxmm: forall out[0] == 0\n// ptxmm: launch"))
    assert ptxmm.check(ptxmm.load(f), "ptx").holds is True


def test_a_clock64_pair_never_goes_back():
    """tests/data/kernels/clock_pair.cu: assert(clock64() - a >= 0), which nvcc -O3 compiles to
    a signed b >= a: no assert fails (the counters count up and stay below 2^63)."""
    res = ptxmm.check(ptxmm.load(KERNELS / "clock_pair.ptx"), "ptx", liveness=True)
    assert not res.findings and res.liveness == "terminates"


def test_a_timed_wait_is_no_hang_and_says_why_it_is_not_decided():
    """tests/data/kernels/timed_wait.cu: a flag poll with __nanosleep that gives up after 1 ms of
    %globaltimer. Its exit depends on the timer: never a hang; "not decided", naming the read."""
    res = ptxmm.check(ptxmm.load(KERNELS / "timed_wait.ptx"), "ptx", liveness=True)
    assert not res.findings
    assert res.liveness == "undecided" and "%globaltimer" in res.liveness_why
