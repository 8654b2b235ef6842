"""The ``.ptx`` front end's fast path (ptxmm.syntax.ptx_fast) gives Lark's own tree, token by token
(type, value, line, column, offsets), wherever it answers, and answers on every generated test:

- every test ``ptxmm gen`` writes (sizes 4 and 5), every bundled example and test file it accepts;
- random valid programs (tests/support/grammar_gen.py) and mutants of them, with random spacing,
  keyword names and forms just outside the subset: where Lark refuses a text the fast path gives
  None (so the error is Lark's, unchanged);
- the Program built from it equals the one built from Lark's tree, and the errors are the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.grammar_gen import mutated, valid_ptx

import ptxmm
from ptxmm._infra import larkrt
from ptxmm._infra.larkrt import Tree
from ptxmm.campaigns.gen import GenOptions, generate
from ptxmm.errors import PtxmmError
from ptxmm.syntax import ptx, ptx_fast
from ptxmm.syntax.ptx_fast import parse_fast

ROOT = Path(__file__).resolve().parents[2]


def flat(t) -> tuple:
    """A tree with every token's type, value and position (Tree and Token equality ignore those)."""
    if isinstance(t, Tree):
        return (t.data, tuple(flat(c) for c in t.children))
    return (t.type, str(t), t.start_pos, t.line, t.column, t.end_line, t.end_column, t.end_pos)


def lark_tree(text: str):
    try:
        return ptx._parser().parse(text)
    except larkrt.LarkError:
        return None


def same_as_lark(text: str) -> bool:
    """The fast path's answer agrees with Lark's; True when the fast path answered."""
    fast = parse_fast(text)
    if fast is None:
        return False
    slow = lark_tree(text)
    assert slow is not None, f"the fast path read what Lark refuses:\n{text}"
    assert flat(fast) == flat(slow), text
    return True


def _fresh_cache() -> None:
    ptx_fast._CACHE.clear()


@pytest.mark.parametrize("size", [4, 5])
def test_every_generated_test_reads_as_lark_reads_it(size):
    _fresh_cache()
    gens = list(generate(GenOptions(size=size)))
    assert gens
    for g in gens:
        assert same_as_lark(g.text()), g.name  # every one on the fast path


def test_bundled_files_read_as_lark_reads_them():
    files = sorted(ROOT.glob("examples/**/*.ptx")) + sorted(ROOT.glob("tests/data/**/*.ptx"))
    answered = sum(same_as_lark(f.read_text()) for f in files)
    assert answered >= 10  # the plain litmus examples take the fast path


def test_a_line_read_twice_gets_its_own_place():
    """The line cache gives the second copy of a line the second line's positions."""
    text = ".global .u32 x = 0;\n.global .u32 x = 0;\n"
    t = parse_fast(text)
    a, b = (loc.children[2] for loc in t.children)
    assert (a.line, a.start_pos, b.line, b.start_pos) == (1, 13, 2, 33)
    assert same_as_lark(text)


NAMES = st.sampled_from(["x", "y", "T0", "aliases", "true", "exists", "forall", "$L0", "a_1", "x.y"])
SPACE = st.sampled_from([" ", "  ", "\t", " \t "])


@st.composite
def subset_like(draw) -> str:
    """Files of the subset's forms, with random spacing and names (some of them keywords), and
    forms just outside it (hex, negative values, `||`, trailing comments, braces on a line)."""
    wild = draw(st.booleans())  # else only the subset's own forms: the fast path answers

    def pick(plain: list, more: list):
        return draw(st.sampled_from(plain + more if wild else plain))

    sp = lambda: draw(SPACE)  # noqa: E731
    name = lambda: pick(["x", "y", "T0", "$L0", "a_1"], ["aliases", "true", "exists", "forall", "x.y"])  # noqa: E731
    val = lambda: pick(["0", "1", "12", "007"], ["0x1", "-1", "1U"])  # noqa: E731
    desc = draw(st.sampled_from(["", ' "d"', ' "d";', ";"]))
    lines = [f".test{sp()}{draw(st.sampled_from(['A', 'MP+x', 'a.b=c']))}{desc}"]
    if draw(st.booleans()):
        lines.append(f".expect{sp()}{pick(['allowed', 'forbidden'], ['true'])}"
                     f"{draw(st.sampled_from(['', ';']))}")
    for _ in range(draw(st.integers(1, 3))):
        init = draw(st.sampled_from(["", f"{sp()}={sp()}{val()}"]))
        lines.append(f"{pick(['.global', '.shared'], ['.shared::cta'])}{sp()}"
                     f"{pick(['.u32', '.b64', '.s8'], ['.pred'])}{sp()}{name()}{init};")
    for t in range(draw(st.integers(1, 3))):
        lines.append(f".thread{sp()}T{t}{pick(['', ' .cta 0', ' .cta 1 .gpu 0'], [])}{sp()}{{")
        for _ in range(draw(st.integers(0, 4))):
            guard = draw(st.sampled_from(["", "@%p0 ", "@!%p1\t"]))
            ops = draw(st.lists(st.sampled_from(["%r0", val(), f"[{name()}]", "[%r1]", name()]
                                                + (["[x+4]"] if wild else [])), max_size=3))
            mn = pick(["ld.global.u32", "st.relaxed.gpu.global.u32", "fence.sc.gpu", "bra", "mov.u32"],
                      ["true"])
            tail = pick([";", " ;"], ["; // c", ";;"])
            lines.append(f"{sp()}{guard}{mn}{sp() if ops else ''}{', '.join(ops)}{tail}")
            if draw(st.booleans()):
                lines.append(f"{name()}:")
        lines.append(pick(["}", " } "], ["} }"]))
    odd = ["0:%r0 == 1", "y == -1"] if wild else []
    terms = draw(st.lists(st.sampled_from(["T0:%r0 == 1", "x != 0", f"{name()} == {val()}", *odd]),
                          min_size=1, max_size=3))
    op = pick([" && ", "&&"], [" || "])
    lines.append(f"{draw(st.sampled_from(['exists', '~exists', 'forall']))}{sp()}({op.join(terms)})")
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n// end\n"]))


_SETTINGS = settings(max_examples=300, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))


@_SETTINGS
@given(subset_like())
def test_subset_like_files_read_as_lark_reads_them(text):
    same_as_lark(text)


@_SETTINGS
@given(st.one_of(valid_ptx(), mutated(valid_ptx())))
def test_random_programs_read_as_lark_reads_them(text):
    same_as_lark(text)


def _program_or_error(text: str, fast: bool):
    """ptx.parse's answer with the fast path on or off: the Program, or the error's words and place."""
    real = ptx_fast.parse_fast
    if not fast:
        ptx.parse_fast = lambda _t: None
    try:
        return ptx.parse(text, "t.ptx")
    except PtxmmError as e:
        return (type(e).__name__, e.message, e.pos, e.hint)
    finally:
        ptx.parse_fast = real


def test_programs_and_errors_are_the_same():
    texts = [g.text() for g in generate(GenOptions(size=4))][:200]
    texts += [
        ".global .u32 x = 0;\n.thread T0 .cta 0 {\n    ld.global.u32 %r0, [y];\n}\nexists (T0:%r0 == 1)\n",
        ".global .u32 x = 0;\n.thread T0 .cta 0 {\n    lod.global.u32 %r0, [x];\n}\nexists (x == 1)\n",
        ".global .u32 x = 0;\n.thread T0 .cta 0 {\n    st.global.u32 [x], 99999999999;\n}\nexists (x == 1)\n",
        ".global .u32 x = 0;\n.thread T0 .cta 0 {\n    st.global.u32 [x], 1;\n}\nexists (T3:%r0 == 1)\n",
    ]
    for text in texts:
        assert parse_fast(text) is not None
        assert _program_or_error(text, True) == _program_or_error(text, False), text


def test_check_answers_through_the_fast_path():
    text = next(g.text() for g in generate(GenOptions(size=4)) if g.name.startswith("MP"))
    assert parse_fast(text) is not None
    res = ptxmm.check(ptxmm.parse(text, "t.ptx"), "sc", observe="condition")
    assert res.status == "ok" and res.holds is False  # MP's weak outcome: never under SC
