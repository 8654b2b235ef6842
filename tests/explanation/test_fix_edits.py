"""The edit kinds ``explain --fix`` adds for kernels no strengthening fixes (issue 42, item 5), each
on a small kernel of tests/data/kernels: a vector access split around its flag element
(explanation/vecsplit.py), a packed vector word made one scalar access (vecpack.py), a bound
check before an out-of-bounds access (boundsguard.py), an
inline-asm helper edited once for every call with a spin loop's read made an acquire first
(fixfind.py), and, where no edit tried removes the finding, a located "no single edit found"
that says why. Each fix is checked twice: applied to the kernel's PTX (as the search checks it,
with the Z3 and brute-force engines agreeing on the fixed program), and as the CUDA edit it is
said as, made in the .cu and recompiled by nvcc."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import agree

import ptxmm
from ptxmm.cat.parser import load_model
from ptxmm.explanation import fixfind
from ptxmm.explanation.advice import cuda_edit
from ptxmm.explanation.fix import compatible, single_changes
from ptxmm.explanation.vecsplit import inside_vector, is_vector

DATA = Path(__file__).resolve().parents[1] / "data" / "kernels"
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")


def _model():
    return load_model("ptx")


def _sites(prog) -> set[tuple[str, str]]:
    """The kernel's assertion failures and out-of-bounds accesses: (kind, CUDA place)."""
    found = ptxmm.check(prog, properties=("sites",)).findings
    return {(str(f.kind), f.events[0].text.split(" ")[0]) for f in found}


def _replaced(edit_text: str) -> tuple[str, str]:
    """The old and new line of an edit said as "`old` → `new`...": the source rewrite it names."""
    m = re.match(r"`(.*?)` → `(.*?)`(?::| \(|$)", edit_text)
    assert m, edit_text
    return m.group(1), m.group(2)


def _recompiled(tmp_path: Path, name: str, rewrite) -> object:
    """The kernel ``name`` of tests/data/kernels with its source rewritten, compiled by nvcc."""
    src = (DATA / name).read_text()
    out = tmp_path / name
    out.write_text(rewrite(src))
    return ptxmm.load(out)


def _fix(prog, bound: int):
    rep = fixfind.search(prog, _model(), budget_s=None, bound=bound)
    assert rep is not None and rep.solutions, "\n".join(rep.lines() if rep else ["no finding"])
    return rep


def _split_pair(prog, element: int) -> tuple:
    """The vector store's and the vector load's split at one flag element (fixfind's split pair)."""
    splits = [c for c in fixfind._distinct(prog, single_changes(prog)) if c.kind == "split"]
    return tuple(sorted((c for c in splits if c.element == element), key=lambda c: c.sem != "release"))


def test_a_vector_flag_is_split_on_both_sides(tmp_path):
    prog = ptxmm.load(DATA / "vector_flag.ptx")
    st, ld = _split_pair(prog, 0)  # the search finds the pack first (one change, not two): asked here
    assert (st.sem, st.element, ld.sem, ld.element) == ("release", 0, "acquire", 0)  # the flag is element 0
    fixed = fixfind.applied(prog, (st, ld))
    assert not _sites(fixed)
    agree(fixed)  # Z3 = brute force on the split kernel (its elements in the split's fixed order)
    e_st, e_ld = cuda_edit(prog, st), cuda_edit(prog, ld)
    assert (e_st.line, e_ld.line) == (12, 18)  # the asm lines of the helpers put() and get()
    assert '"st.relaxed.gpu.u32 [%0+4], %2;\\n\\tst.release.gpu.u32 [%0], %1;"' in e_st.text
    assert '"ld.acquire.gpu.u32 %0, [%2];\\n\\tld.relaxed.gpu.u32 %1, [%2+4];"' in e_ld.text
    # the other flag choices do not fix it: the split is checked, not assumed
    other = [c for c in single_changes(prog) if c.kind == "split" and c.element == 1]
    assert other and _sites(fixfind.applied(prog, other))


@needs_nvcc
def test_the_split_said_in_cuda_compiles_and_removes_the_failure(tmp_path):
    prog = ptxmm.load(DATA / "vector_flag.cu")
    assert _sites(prog) == {("assert-fails", "vector_flag.cu:33")}
    edits = [_replaced(cuda_edit(prog, c).text) for c in _split_pair(prog, 0)]

    def rewrite(src: str) -> str:
        for old, new in edits:
            assert old in src
            src = src.replace(old, new)
        return src
    assert not _sites(_recompiled(tmp_path, "vector_flag.cu", rewrite))


def test_a_packed_word_becomes_one_64_bit_access_and_its_buffer_64_bit_words():
    prog = ptxmm.load(DATA / "vector_flag.ptx")
    rep = _fix(prog, bound=2)  # a pack is tried right after the bound checks
    (sol,) = rep.solutions
    (c,) = sol.changes
    assert (c.kind, c.region, c.element) == ("pack", "box", 2)
    assert {prog.threads[t].instrs[i].text.split()[0] for t, i in c.sites} == \
        {"st.relaxed.gpu.v2.u32", "ld.relaxed.gpu.v2.u32"}  # both sides, in both blocks' code
    fixed = fixfind.applied(prog, sol.changes)
    assert [(x.name, x.type) for x in fixed.locations if x.name.startswith("box")] == [("box[0]", "b64")]
    assert not _sites(fixed)
    agree(fixed)  # Z3 = brute force on the packed kernel
    res = ptxmm.check(fixed, properties=("condition",))
    # the word read whole: the reader sees 42 beside the flag 1, packed as mov.b64 packs {lo, hi}
    assert [dict(o.outcome.values) for o in res.outcomes] == [{"box[0]": 42 << 32 | 1, "out[0]": 42}]
    e = cuda_edit(prog, c)
    assert e.line == 12 and "and line 18:" in e.text  # the asm lines of put() and get()
    assert '"{.reg .b64 w; mov.b64 w, {%1, %2}; st.relaxed.gpu.b64 [%0], w;}"' in e.text
    assert '"{.reg .b64 w; ld.relaxed.gpu.b64 w, [%2]; mov.b64 {%0, %1}, w;}"' in e.text


def test_no_pack_where_the_buffer_is_also_accessed_as_32_bit_words():
    prog = ptxmm.load(DATA / "vector_flag_scalar.ptx")
    assert any(c.kind == "split" for c in single_changes(prog))  # strong vector accesses are there
    assert not [c for c in single_changes(prog) if c.kind == "pack"]  # but box[1] is read alone too


def test_a_pack_and_an_edit_of_one_of_its_elements_are_not_made_together():
    prog = ptxmm.load(DATA / "vector_flag.ptx")
    (pack,) = [c for c in single_changes(prog) if c.kind == "pack"]
    st, ld = _split_pair(prog, 0)
    assert not compatible((pack, st)) and compatible((st, ld)) and compatible((pack,))


@needs_nvcc
def test_the_pack_said_in_cuda_compiles_and_removes_the_failure(tmp_path):
    """The asm lines rewritten as said; the buffer declared as the 64-bit words the packed program
    holds (the launch's type must be the parameter's: the model has no mixed-size accesses)."""
    prog = ptxmm.load(DATA / "vector_flag.cu")
    (c,) = [c for c in single_changes(prog) if c.kind == "pack"]
    text = cuda_edit(prog, c).text
    edits = re.findall(r"`([^`]*asm[^`]*)` → `([^`]*)`", text)
    assert len(edits) == 2

    def rewrite(src: str) -> str:
        for old, new in edits:
            assert old in src
            src = src.replace(old, new)
        return src.replace("unsigned box[2]", "unsigned long long box[1]").replace(
            "void mp(unsigned *box", "void mp(unsigned long long *box")
    fixed = _recompiled(tmp_path, "vector_flag.cu", rewrite)
    assert {i.text.split()[0] for t in fixed.threads for i in t.instrs if "relaxed" in i.text} == \
        {"st.relaxed.gpu.b64", "ld.relaxed.gpu.b64"}  # nvcc and ptxas took the asm as written
    assert not _sites(fixed)
    assert ptxmm.check(fixed, properties=("condition",)).holds is False


def test_no_fence_goes_inside_a_vector_access_and_no_vector_is_made_ordered_whole():
    prog = ptxmm.load(DATA / "vector_flag.ptx")
    for c in single_changes(prog):
        t = prog.threads[c.thread]
        if c.kind == "fence":
            assert not inside_vector(t, c.index), c.text
        elif c.kind == "sem" and is_vector(t.instrs[c.index]):
            assert c.sem not in ("acquire", "release"), c.text  # its elements' order: a split's choice


def test_an_out_of_bounds_store_is_guarded_by_its_buffers_bound():
    prog = ptxmm.load(DATA / "oob.ptx")
    rep = _fix(prog, bound=3)  # the bound check is tried first: no strengthening moves an index
    (sol,) = rep.solutions
    (c,) = sol.changes
    assert c.kind == "guard"
    fixed = fixfind.applied(prog, sol.changes)
    assert not _sites(fixed)
    agree(fixed)
    e = cuda_edit(prog, c)
    assert (Path(e.file).name, e.line) == ("oob.cu", 9)
    assert e.text.startswith("insert `if ((i + 1) < 0 || (i + 1) >= 4) return;` before line 9 "
                             "`out[i + 1] = 0;"), e.text


@needs_nvcc
def test_the_bound_check_said_in_cuda_compiles_and_removes_the_access(tmp_path):
    prog = ptxmm.load(DATA / "oob.cu")
    assert _sites(prog) == {("out-of-bounds", "oob.cu:9")}
    c = _fix(prog, bound=3).solutions[0].changes[0]
    check = re.search(r"insert `(.*?)` before line (\d+)", cuda_edit(prog, c).text)

    def rewrite(src: str) -> str:
        lines = src.splitlines()
        lines.insert(int(check.group(2)) - 1, check.group(1))
        return "\n".join(lines) + "\n"
    fixed = _recompiled(tmp_path, "oob.cu", rewrite)
    assert not _sites(fixed)


def test_an_inline_asm_helper_is_edited_once_for_every_call_and_its_spin_read_is_tried_first():
    prog = ptxmm.load(DATA / "cg_flag.ptx")
    m = _model()
    found = fixfind.findings_of(prog, m, 2)
    f = fixfind.target(found)
    acq = [c for c in fixfind._distinct(prog, single_changes(prog))
           if c.kind == "sem" and c.sem == "acquire" and "ld.cg" in c.text]
    assert len(acq) == 1  # the two calls of load_cg(): one edit of its asm line
    every = fixfind.everywhere(prog, acq)
    assert len({prog.threads[x.thread].instrs[x.index].pos.line for x in every}) == 2
    assert fixfind.ranker(prog, [f, *[g for g in found if g is not f]])(acq[0]) == 0  # a spin's read
    rep = _fix(prog, bound=1)  # the first candidate tried is the fix
    assert rep.solutions[0].changes == tuple(acq)
    e = cuda_edit(prog, acq[0])
    assert e.line == 13
    assert _replaced(e.text) == ('asm volatile("ld.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));',  # .cg: weak only
                                 'asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p));')
    fixed = fixfind.applied(prog, acq)
    assert not _sites(fixed)


@needs_nvcc
def test_the_helper_edit_said_in_cuda_compiles_and_removes_the_failure(tmp_path):
    prog = ptxmm.load(DATA / "cg_flag.cu")
    assert ("assert-fails", "cg_flag.cu:30") in _sites(prog)
    c = _fix(prog, bound=1).solutions[0].changes[0]
    old, new = _replaced(cuda_edit(prog, c).text)
    assert not _sites(_recompiled(tmp_path, "cg_flag.cu", lambda src: src.replace(old, new)))


def test_where_no_edit_removes_the_finding_the_fix_names_its_cuda_line_and_why():
    prog = ptxmm.load(DATA / "no_wait.ptx")
    m = _model()
    rep = fixfind.search(prog, m, budget_s=None, bound=30)  # the bound spent on the assertion's own search
    assert not rep.solutions
    assert rep.advice == ("no single edit found for no_wait.cu:16: no strengthening, scope, fence, split "
                          "or bound check tried removes it")
    assert rep.lines()[1].strip() == rep.advice
    # with its race known (the search asks for it when budget is left): the wait that is missing
    f = fixfind.target(fixfind.findings_of(prog, m, 2))
    races = fixfind.findings_of(prog, m, 2, "races")
    text = fixfind._advice(f, races, fixfind._distinct(prog, single_changes(prog)))
    assert text.startswith("no single edit found for no_wait.cu:16: its race is left: no change checked "
                           "orders `b0t1 ld.global.u32"), text
    assert "[no_wait.cu:14]` before `b0t0 st.global" in text and "the access at no_wait.cu:12 back" in text


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flag=st.just(0) | st.integers(1, 2**32 - 1), datum=st.integers(0, 2**32 - 1))
def test_a_packed_word_is_read_whole_whatever_its_initial_halves(flag, datum):
    """The packed program's word holds the two halves as mov.b64 packs them, and the load unpacks
    them back: with the box starting at (flag, datum), the consumer's datum is the initial one
    (when the initial flag already lets it through) or the producer's 42 — never a mix, as the
    split elements allowed — and both engines say so."""
    prog = _with_box(ptxmm.load(DATA / "vector_flag.ptx"), flag, datum)
    (pack,) = [c for c in single_changes(prog) if c.kind == "pack"]
    fixed = fixfind.applied(prog, (pack,))
    assert [x.init for x in fixed.locations if x.name == "box[0]"] == [datum << 32 | flag]
    for engine in ("z3", "brute"):
        res = ptxmm.check(fixed, engine=engine, properties=("condition",))
        seen = {(dict(o.outcome.values)["out[0]"]) for o in res.outcomes}
        assert seen == ({datum, 42} if flag else {42}), (engine, seen)
    if not flag and datum != 42:  # the two elements apart: the flag new beside the datum old
        torn = ptxmm.check(prog, properties=("condition",))
        assert datum in {dict(o.outcome.values)["out[0]"] for o in torn.outcomes}


def _with_box(prog, flag: int, datum: int):
    """``prog`` with its box starting at (flag, datum)."""
    from dataclasses import replace

    init = {"box[0]": flag, "box[1]": datum}
    locs = tuple(replace(x, init=init.get(x.name, x.init)) for x in prog.locations)
    regions = tuple(replace(r, init=(flag, datum)) if r.name == "box" else r for r in prog.layout.regions)
    return replace(prog, locations=locs, layout=replace(prog.layout, regions=regions))
