"""The real-library kernel corpus (examples/kernels/real/): the synchronization skeletons of named
files of CUB, CUTLASS, NCCL, PyTorch, vLLM, TensorRT-LLM, DeepEP, ThunderKittens and cuda-samples
(cooperative groups, libcu++'s cuda::barrier), each citing its source and arguing its verdict in its
header. Every kernel's findings are exactly its `// ptxmm: expect` line and its condition holds,
under the ptx and ptx-v7.5 models — except the kernels today's front end refuses: REFUSED names them
(one list); their checks are strict expected failures on UnsupportedError, so a kernel that starts
being read must then agree with its argued verdict, and its entry goes.

The checks read the committed .ptx (launch, expect and condition come from the .cu beside it), so
they run without nvcc; with nvcc on the PATH a recompile is compared with the committed file.
"""

from __future__ import annotations

import difflib
import re
import shutil

import pytest
from support import ROOT, agree
from support.kernel_corpus import DEPARTURES, KINDS, assert_keeps, assert_recompiles
from support.kernel_corpus import check as _check
from support.kernel_corpus import directives as _directives
from support.kernel_corpus import expected as _expected
from support.kernel_corpus import kinds as _kinds
from support.kernel_corpus import threads as _threads

import ptxmm
from ptxmm.errors import UnsupportedError

KDIR = ROOT / "examples" / "kernels" / "real"
KERNELS = sorted(KDIR.glob("*.cu"))
NAMES = [p.stem for p in KERNELS]
MODELS = ("ptx", "ptx-v7.5")
LIBRARIES = ("cub-", "cutlass-", "nccl-", "pytorch-", "vllm-", "trtllm-", "deepep-", "tk-", "cg-")
# a check of 5-7 s a model on a loaded machine (weak-load spins: the liveness search is wide)
SLOW = {"cub-grid-barrier"}

# THE list: kernels today's front end refuses, with the form it names. Shrink it as support lands
# (a refused kernel that starts being read fails here as an XPASS until its entry is removed; one
# read but judged otherwise than its `expect` line fails outright).
REFUSED: dict[str, str] = {}




def _params(names, models=MODELS):
    def marks(n):
        return ([pytest.mark.slow] if n in SLOW else []) + (
            [pytest.mark.xfail(strict=True, raises=UnsupportedError, reason=f"refused today: {REFUSED[n]}")]
            if n in REFUSED else [])
    return [pytest.param(n, m, id=f"{n}-{m}", marks=marks(n)) for n in names for m in models]


# ----- the corpus itself (no front end needed) ---------------------------------------------------

def test_the_real_corpus_is_there():
    assert len(KERNELS) >= 25
    for lib in LIBRARIES:
        assert any(n.startswith(lib) for n in NAMES), lib
    assert set(REFUSED) <= set(NAMES), set(REFUSED) - set(NAMES)
    # some of each kind of verdict: race-free kernels, racy ones, hangs
    expects = [_expected(p) for p in KERNELS]
    assert sum(not e for e in expects) >= 8 and sum("race" in e for e in expects) >= 8
    assert sum("hang" in e for e in expects) >= 3


@pytest.mark.parametrize("name", NAMES)
def test_every_kernel_states_its_source_and_its_test(name):
    cu = KDIR / f"{name}.cu"
    d = _directives(cu)
    assert set(d) <= {"launch", "expect", "exists", "forall"} and {"launch", "expect"} <= set(d)
    assert ("exists" in d) != ("forall" in d), "one condition"
    assert _expected(cu) <= KINDS and (_expected(cu) or d["expect"] == "ok")
    assert 1 <= _threads(d["launch"]) <= 32
    assert (KDIR / f"{name}.ptx").is_file(), "the nvcc PTX is committed beside the .cu"
    text = cu.read_text()
    header = text[:text.index("#include")]
    assert "Source:" in header and "Cut" in header, "where it is from and what was cut"
    assert re.search(r"\b[\w.-]+/[\w.-]+[ ,:]", header), "the repository (owner/name)"
    assert "Why" in header and "PTX ISA" in header, "the verdict is argued from the PTX ISA"
    assert "assert(" in text and "#include <cassert>" in text, "the property is an assert()"
    # a kernel whose assertion may fail says how in its condition (exists), the others state an invariant
    assert ("exists" in d) == ("assert-fails" in _expected(cu))


def test_the_readme_table_lists_every_kernel_with_its_expect_line():
    rows = {}
    for line in (KDIR / "README.md").read_text().splitlines():
        m = re.match(r"\|\s*\[([\w.-]+)\]\(\1\.cu\)\s*\|", line)
        if m:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            rows[m.group(1)] = cells
    assert sorted(rows) == sorted(NAMES)
    for name, cells in rows.items():
        expect = _directives(KDIR / f"{name}.cu")["expect"]
        assert f"`{expect}`" in cells, (name, cells)
        status = cells[-1]
        assert status.startswith("refused" if name in REFUSED else "agrees"), (name, status)
    text = (KDIR / "README.md").read_text()
    assert f"{len(NAMES) - len(REFUSED)} of the {len(NAMES)} agree" in text
    assert f"{len(REFUSED)} {'is' if len(REFUSED) == 1 else 'are'} refused" in text


# what nvcc must keep for a kernel to mean what its header argues (read from the committed PTX)
KEEPS = {
    "cub-tile-state-packed": [r"st\.relaxed\.gpu\.v2\.u32", r"ld\.relaxed\.gpu\.v2\.u32", r"vote\.sync\.any"],
    "cub-tile-state-packed-acqrel": [r"st\.release\.gpu\.v2\.u32", r"ld\.acquire\.gpu\.v2\.u32"],
    "cub-tile-state-unpacked": [r"st\.cg\.u32", r"ld\.cg\.u32", r"st\.release\.gpu\.u32",
                                r"ld\.relaxed\.gpu\.u32"],
    "cub-grid-barrier": [r"ld\.cg\.u32", r"st\.volatile\.global\.u32", r"membar\.gl", r"membar\.cta"],
    "cutlass-streamk-acquire-accumulators": [r"atom\.global\.cas\.b32", r"fence\.acq_rel\.gpu",
                                             r"red\.relaxed\.gpu\.global\.add\.s32"],
    "cutlass-streamk-fixup": [r"ld\.global\.acquire\.gpu\.b32", r"fence\.acq_rel\.gpu", r"atom\.global\.add"],
    "cutlass-pipeline-async": [r"mbarrier\.try_wait\.parity", r"mapa\.shared::cluster",
                               r"fence\.mbarrier_init"],
    "cutlass-semaphore": [r"bar\.red\.and\.pred", r"ld\.global\.acquire\.gpu\.b32",
                          r"st\.global\.release\.gpu\.b32"],
    "nccl-ll-flag-data": [r"st\.volatile\.global\.v4\.u32", r"ld\.volatile\.global\.v4\.u32"],
    "nccl-ll-u64-halves": [r"st\.volatile\.global\.u64", r"ld\.volatile\.global\.u64"],
    "nccl-simple-volatile-step": [r"ld\.volatile\.global\.u64", r"fence\.acq_rel\.sys",
                                  r"st\.relaxed\.sys\.global\.u64", r"st\.global\.b32",
                                  r"ld\.volatile\.global\.b32"],
    "nccl-simple-acquire-step": [r"ld\.acquire\.sys\.global\.u64", r"fence\.acq_rel\.sys"],
    "pytorch-reduce-last-block": [r"atom\.global\.add\.u32"],
    "vllm-end-sync-threadfence": [r"membar\.sys", r"st\.volatile\.global\.u32", r"ld\.volatile\.global\.u32"],
    "vllm-barrier-at-end": [r"st\.release\.sys\.global\.u32", r"ld\.acquire\.sys\.global\.u32"],
    "trtllm-oneshot-block-barrier": [r"st\.global\.release\.sys\.b32", r"ld\.global\.acquire\.sys\.b32"],
    "trtllm-twoshot-syncthreads": [r"ld\.volatile\.global\.u32", r"st\.global\.release\.sys\.b32"],
    "deepep-barrier-block": [r"fence\.acq_rel\.sys", r"atom\.global\.sys\.add", r"ld\.volatile\.global\.s32",
                             r"vote\.sync\.all"],
    "tk-semaphore-ring": [r"mbarrier\.arrive\.release\.cta\.shared::cta\.b64", r"mbarrier\.try_wait\.parity"],
}
COUNTS = {  # (pattern, times): a broken twin differs from its kernel exactly there
    "cub-tile-state-unpacked": [(r"membar\.gl", 2)],
    "cub-tile-state-unpacked-no-fence": [(r"membar\.gl", 0)],
    "cutlass-streamk-fixup": [(r"bar\.sync", 3)],
    "cutlass-streamk-fixup-no-sync": [(r"bar\.sync", 2)],
    "cutlass-semaphore": [(r"bar\.sync", 2)],
    "cutlass-semaphore-release-no-sync": [(r"bar\.sync", 1)],
    "pytorch-reduce-last-block": [(r"membar\.gl", 1)],
    "pytorch-reduce-last-block-fenced": [(r"membar\.gl", 2)],
    "tk-semaphore-ring": [(r"mbarrier\.try_wait\.parity", 6)],
    "tk-semaphore-ring-no-finished-wait": [(r"mbarrier\.try_wait\.parity", 3)],
}


@pytest.mark.parametrize("name", sorted(set(KEEPS) | set(COUNTS)))
def test_the_ptx_keeps_what_the_source_means(name):
    assert_keeps(KDIR / f"{name}.ptx", KEEPS.get(name, []), COUNTS.get(name, []))


# (twin, its kernel, at most this many code lines changed): the one-line mistakes stay one line
TWINS = [
    ("cub-tile-state-unpacked-no-fence", "cub-tile-state-unpacked", 1),
    ("cutlass-streamk-fixup-no-sync", "cutlass-streamk-fixup", 1),
    ("cutlass-pipeline-async-consumer-phase", "cutlass-pipeline-async", 1),
    ("cutlass-semaphore-release-no-sync", "cutlass-semaphore", 1),
    ("tk-semaphore-ring-no-finished-wait", "tk-semaphore-ring", 1),
    ("pytorch-reduce-last-block-fenced", "pytorch-reduce-last-block", 1),
    ("nccl-simple-acquire-step", "nccl-simple-volatile-step", 12),   # loadStepValue's helper swapped
    ("cub-tile-state-packed-acqrel", "cub-tile-state-packed", 7),    # the two asm helpers and their uses
]


def _code(name: str) -> list[str]:
    lines = [ln.split("//")[0].rstrip() for ln in (KDIR / f"{name}.cu").read_text().splitlines()]
    return [ln for ln in lines if ln.strip()]


@pytest.mark.parametrize("twin, kernel, most", TWINS, ids=[t for t, _, _ in TWINS])
def test_a_twin_changes_only_a_few_code_lines_of_its_kernel(twin, kernel, most):
    diff = [ln for ln in difflib.unified_diff(_code(kernel), _code(twin), lineterm="", n=0)
            if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    removed = sum(ln.startswith("-") for ln in diff)
    added = sum(ln.startswith("+") for ln in diff)
    assert 1 <= max(removed, added) <= most, diff


# ----- with nvcc: the committed PTX is nvcc's ----------------------------------------------------


# nvcc takes 2-5 s a kernel: by default two (inline asm with mbarriers; plain CUDA with atomics and
# inline asm), the others under -m slow
RECOMPILED = {"tk-semaphore-ring", "cutlass-streamk-fixup"}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on the PATH")
@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if n in RECOMPILED else [pytest.mark.slow])
                                  for n in NAMES])
def test_a_recompile_equals_the_committed_ptx(name, tmp_path):
    assert_recompiles(KDIR, name, tmp_path)


# ----- the checker on the corpus -----------------------------------------------------------------

@pytest.mark.parametrize("name, model", _params(NAMES))
def test_findings_equal_the_expect_line_and_the_condition_holds(name, model):
    res = _check(str(KDIR / f"{name}.ptx"), model)
    want = DEPARTURES.get((name, model), _expected(KDIR / f"{name}.cu"))
    assert _kinds(res) == want, [str(f) for f in res.findings]
    assert res.holds is ((name, model) not in DEPARTURES), [str(o.outcome) for o in res.outcomes]


def test_a_finding_names_the_library_line():
    """cutlass-streamk-acquire-accumulators: the race is between the sharing peer's workspace store
    and the owner's workspace load — the CUDA lines of BlockStriped store / load_add."""
    res = _check(str(KDIR / "cutlass-streamk-acquire-accumulators.ptx"), "ptx")
    cu = (KDIR / "cutlass-streamk-acquire-accumulators.cu").read_text().splitlines()
    line_of = {text.strip(): i + 1 for i, text in enumerate(cu)}
    races = "\n".join(str(f) for f in res.findings if str(f.kind) == "race")
    for src in ("partials_workspace[thread_idx] = accumulator;  // BlockStripedReduceT::store",
                "accumulator += partials_workspace[thread_idx];  // BlockStripedReduceT::load_add"):
        assert f"cutlass-streamk-acquire-accumulators.cu:{line_of[src]}" in races, (src, races)


# the brute-force engine on the small ones (it takes 10-50 s on the mbarrier ring and the PyTorch
# reduction): the same outcome set and verdict as Z3, and the same findings
ENGINES = ["nccl-simple-volatile-step", "nccl-simple-acquire-step", "nccl-ll-u64-halves",
           "cutlass-streamk-acquire-accumulators"]
ENGINES_SLOW = ["cutlass-streamk-fixup", "cutlass-streamk-fixup-no-sync", "vllm-barrier-at-end-final-sync"]


@pytest.mark.parametrize("name", [*ENGINES, *(pytest.param(n, marks=pytest.mark.slow) for n in ENGINES_SLOW)])
def test_the_z3_and_brute_force_engines_agree(name):
    prog = ptxmm.load(str(KDIR / f"{name}.ptx"))
    agree(prog)
    z, b = ptxmm.check(prog, engine="z3"), ptxmm.check(prog, engine="brute")  # with the findings
    assert _kinds(z) == _kinds(b) == _expected(KDIR / f"{name}.cu")
    assert z.holds is b.holds is True
