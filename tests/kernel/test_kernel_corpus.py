"""The kernel corpus (examples/kernels/): every kernel's findings are exactly its `// ptxmm: expect`
line and its condition holds, under the ptx and ptx-v7.5 models; each kernel agrees with its litmus
twins; the committed PTX is what nvcc makes of the .cu, and it keeps what the source means.

The checks read the committed .ptx (its launch, expect and condition lines come from the .cu beside
it), so they run without nvcc; with nvcc on the PATH a recompile is compared with the committed file.
"""

from __future__ import annotations

import re
import shutil

import pytest
from support import ROOT
from support.kernel_corpus import KINDS, assert_keeps, assert_recompiles, entry_body
from support.kernel_corpus import check as _check
from support.kernel_corpus import directives as _directives
from support.kernel_corpus import expected as _expected
from support.kernel_corpus import kinds as _kinds
from support.kernel_corpus import threads as _threads

KDIR = ROOT / "examples" / "kernels"
KERNELS = sorted(KDIR.glob("*.cu"))
NAMES = [p.stem for p in KERNELS]
MODELS = ("ptx", "ptx-v7.5")
# two uses of the grid barrier: its litmus twin alone takes 12-29 s on a loaded machine; the block
# reduce of two full warps (<<<2, 64>>>, the size of issue 40's target): minutes today
SLOW = {"grid-barrier-reuse", "block-reduce-shfl"}

# kernel -> its litmus twins. A twin whose condition is `exists` describes the bad behaviour (the
# assertion's failure); a `forall` twin describes the good one. Same verdict: the kernel's assertion
# can fail exactly when the twin's bad behaviour is allowed, and the kernel has a race finding exactly
# when the twin has a data race.
TWINS = {
    "mp-relaxed-flag": ["mp-relaxed-acquire.ptx", "teaching/06-relaxed-store-is-not-release.ptx"],
    "mp-release-flag": ["mp-spin.ptx"],
    "mp-block-scope": ["teaching/15-scope-too-narrow.ptx"],
    **{p.stem: [f"kernels/litmus/{p.name}"] for p in sorted((KDIR / "litmus").glob("*.ptx"))},
}


# What the front end cannot find yet, by kernel: those kernels' findings tests are strict xfails (an
# xpass fails, so the marker goes once the finding comes).
MISSING: dict[str, str] = {}


def _params(names, models=MODELS):
    def marks(n):
        return ([pytest.mark.slow] if n in SLOW else []) + (
            [pytest.mark.xfail(strict=True, reason=MISSING[n])] if n in MISSING else [])
    return [pytest.param(n, m, id=f"{n}-{m}", marks=marks(n)) for n in names for m in models]


# ----- the corpus itself (no front end needed) ---------------------------------------------------

def test_the_corpus_is_there():
    assert len(KERNELS) >= 20
    for must in ("mp-relaxed-flag", "mp-release-flag", "mp-block-scope", "spinlock-cas",
                 "spinlock-relaxed-cas", "spinlock-relaxed-unlock", "ticket-lock", "seqlock", "grid-barrier",
                 "grid-barrier-no-fence",
                 "lookback-packed", "lookback-two-words", "splitk-semaphore", "ring-buffer",
                 "syncthreads-exchange", "syncthreads-exchange-no-barrier", "spin-hoisted",
                 "exchange-off-by-one"):
        assert must in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_every_kernel_states_its_test(name):
    cu = KDIR / f"{name}.cu"
    d = _directives(cu)
    assert set(d) <= {"launch", "expect", "exists", "forall"} and {"launch", "expect"} <= set(d)
    assert ("exists" in d) != ("forall" in d), "one condition"
    assert _expected(cu) <= KINDS and (_expected(cu) or d["expect"] == "ok")
    # at most 32 threads (quick to check), or a slow kernel at a real size (full warps)
    assert 1 <= _threads(d["launch"]) <= (1024 if name in SLOW else 32)
    assert (KDIR / f"{name}.ptx").is_file(), "the nvcc PTX is committed beside the .cu"
    text = cu.read_text()
    assert "assert(" in text and "#include <cassert>" in text, "the property is an assert()"
    assert "Why" in text, "the verdict is argued in the header comment"
    # a kernel whose assertion may fail says how in its condition (exists), the others state an invariant
    assert ("exists" in d) == ("assert-fails" in _expected(cu))


# what nvcc must keep for the kernel to mean what its comment argues (read from the committed PTX)
KEEPS = {
    "mp-relaxed-flag": [r"st\.relaxed\.gpu\.b32", r"ld\.acquire\.gpu\.b32"],
    "mp-release-flag": [r"st\.release\.gpu\.b32", r"ld\.acquire\.gpu\.b32"],
    "mp-block-scope": [r"st\.release\.cta\.b32", r"ld\.acquire\.cta\.b32"],
    "spinlock-cas": [r"atom\.cas\.acquire\.gpu\.b32", r"st\.release\.gpu\.b32"],
    "spinlock-relaxed-cas": [r"atom\.cas\.relaxed\.gpu\.b32", r"st\.release\.gpu\.b32"],
    "spinlock-relaxed-unlock": [r"atom\.cas\.acquire\.gpu\.b32", r"st\.relaxed\.gpu\.b32"],
    "ticket-lock": [r"atom\.global\.add\.u32", r"ld\.acquire\.gpu\.b32", r"st\.release\.gpu\.b32"],
    "seqlock": [r"fence\.acq_rel\.gpu", r"st\.release\.gpu\.b32", r"ld\.acquire\.gpu\.b32"],
    "splitk-semaphore": [r"ld\.global\.acquire\.gpu\.b32", r"st\.global\.release\.gpu\.b32", r"bar\.sync"],
    "splitk-semaphore-syncthreads-and": [r"ld\.global\.acquire\.gpu\.b32", r"st\.global\.release\.gpu\.b32",
                                         r"bar\.red\.and\.pred"],
    "warp-wait-for-valid": [r"vote\.sync\.all\.pred", r"ld\.acquire\.gpu\.b32", r"st\.release\.gpu\.b32"],
    "syncthreads-exchange": [r"bar\.sync", r"st\.shared\.u32", r"ld\.shared\.u32"],
    "exchange-off-by-one": [r"bar\.sync", r"mul\.wide\.s32\s+%rd\d+, %r1, 4"],  # %r1 = %tid.x + 1
    "last-block-reset": [r"atom\.global\.inc\.u32", r"st\.global\.u32\s+\[count\], %r\d+"],
    "last-block-reset-fenced": [r"atom\.global\.inc\.u32", r"st\.global\.u32\s+\[count\], %r\d+"],
}
COUNTS = {  # (pattern, times) — the fenced and unfenced variants differ exactly in their fences
    "grid-barrier": [(r"membar\.gl", 3)],
    "grid-barrier-no-fence": [(r"membar\.gl", 2)],
    "grid-barrier-reuse": [(r"membar\.gl", 6)],
    "lookback-two-words": [(r"membar\.gl", 4)],
    "lookback-two-words-no-fence": [(r"membar\.gl", 0)],
    "syncthreads-exchange-no-barrier": [(r"bar\.sync", 0)],
    "ring-buffer": [(r"ld\.acquire\.gpu\.b32", 6), (r"st\.release\.gpu\.b32", 6)],
    "last-block-reset": [(r"membar\.gl", 1)],
    "last-block-reset-fenced": [(r"membar\.gl", 2)],
}


@pytest.mark.parametrize("name", sorted(set(KEEPS) | set(COUNTS)))
def test_the_ptx_keeps_what_the_source_means(name):
    assert_keeps(KDIR / f"{name}.ptx", KEEPS.get(name, []), COUNTS.get(name, []))


def test_nvcc_hoists_the_plain_load_out_of_the_spin():
    """spin-hoisted: the flag is loaded once, before the loop; the loop itself reads nothing."""
    lines = [x.split("//")[0].strip() for x in entry_body(KDIR / "spin-hoisted.ptx").splitlines()]
    lines = [x for x in lines if x and not x.startswith(".loc")]
    self_loops = [x for x, nxt in zip(lines, lines[1:])
                  if x.endswith(":") and re.fullmatch(rf"bra\.uni\s+{re.escape(x[:-1])};", nxt)]
    assert len(self_loops) == 1, "one loop, `L: bra.uni L;`, with nothing else in it"
    assert sum(1 for x in lines if re.match(r"ld\.global\.u32", x)) == 2  # the flag (once) and data


# ----- with nvcc: the committed PTX is nvcc's ----------------------------------------------------


# nvcc takes 2-5 s a kernel (libcu++'s headers): by default four kernels that between them use every
# kind of source in the corpus (plain C++, libcu++ atomics, inline asm, __shared__ and __syncthreads);
# the others are marked slow (`pytest -m slow` runs them).
RECOMPILED = {"spin-hoisted", "mp-relaxed-flag", "splitk-semaphore", "syncthreads-exchange"}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on the PATH")
@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if n in RECOMPILED else [pytest.mark.slow])
                                  for n in NAMES])
def test_a_recompile_equals_the_committed_ptx(name, tmp_path):
    assert_recompiles(KDIR, name, tmp_path)


# ----- the checker on the corpus -----------------------------------------------------------------

@pytest.mark.parametrize("name, model", _params(NAMES))
def test_findings_equal_the_expect_line_and_the_condition_holds(name, model):
    res = _check(str(KDIR / f"{name}.ptx"), model)
    assert _kinds(res) == _expected(KDIR / f"{name}.cu"), [str(f) for f in res.findings]
    assert res.holds is True, [str(o.outcome) for o in res.outcomes]


def test_findings_name_the_cuda_lines():
    """mp-relaxed-flag (the issue's first "done when"): the race is between the data store and the
    data load, and the assertion that fails is the assert() line — CUDA lines of the .cu."""
    res = _check(str(KDIR / "mp-relaxed-flag.ptx"), "ptx")
    cu = (KDIR / "mp-relaxed-flag.cu").read_text().splitlines()
    line_of = {text.strip(): i + 1 for i, text in enumerate(cu)}
    text = "\n".join(str(f) for f in res.findings)
    for src in ("data[0] = 42;", "int d = data[0];", "assert(d == 42);"):
        assert f"mp-relaxed-flag.cu:{line_of[src]}" in text, (src, text)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on the PATH")
def test_the_cu_and_its_ptx_give_the_same_findings():
    cu = _check(str(KDIR / "mp-relaxed-flag.cu"), "ptx")
    ptx = _check(str(KDIR / "mp-relaxed-flag.ptx"), "ptx")
    assert _kinds(cu) == _kinds(ptx) == {"race", "assert-fails"} and cu.holds is ptx.holds is True


@pytest.mark.parametrize("name, twin", [
    pytest.param(k, t, id=f"{k}~{t}", marks=[pytest.mark.slow] if k in SLOW else [])
    for k, ts in sorted(TWINS.items()) for t in ts])
def test_each_twin_gives_the_same_verdict(name, twin):
    kernel = _check(str(KDIR / f"{name}.ptx"), "ptx")
    lit = _check(str(ROOT / "examples" / twin), "ptx")
    assert lit.holds == lit.program.expect  # the twin's own .expect
    quant = str(lit.program.condition.quantifier)
    bad_in_twin = lit.holds if "exists" in quant else not lit.holds
    assert ("assert-fails" in _kinds(kernel)) == bad_in_twin
    assert ("race" in _kinds(kernel)) == ("race" in _kinds(lit))


def test_every_twin_is_named():
    for p in (KDIR / "litmus").glob("*.ptx"):
        assert (KDIR / f"{p.stem}.cu").is_file(), f"{p.name} is the twin of no kernel"
