"""``check --json``'s outcome rows (report/jsonout.py ``_row``) are written directly, not by
json.dumps: the text must be exactly json.dumps(outcome_json(...)) for every outcome, whatever the
engine (a packed witness from the SAT enumeration, a decoded one from brute force), the values'
sign, the flags and the condition."""

from __future__ import annotations

import json
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.report.jsonout import _row
from ptxmm.semantics.result import Execution, Outcome, OutcomeInfo, outcome_json

sys.path.insert(0, str(ROOT / "benchmarks"))
import shapes  # noqa: E402

_RACY = """.test RACY
.global .s32 x = 0;
.thread T0 { st.global.s32 [x], -3; ld.global.s32 %r0, [x]; }
.thread T1 { st.global.s32 [x], 7; ld.global.s32 %r1, [x]; }
"""


def _same(res) -> None:
    names: dict[str, str] = {}
    for o in res.outcomes:
        assert _row(o, res.enumerated, names) == json.dumps(outcome_json(o, res.enumerated))


def test_rows_of_a_sat_enumeration():
    res = ptxmm.check(ptxmm.parse(shapes.one_location(2).ptx(), "x1l2.ptx"), "ptx", engine="z3")
    assert len(res.outcomes) > 64  # past 64 outcomes: the SAT enumeration's packed witnesses
    _same(res)


def test_rows_with_negative_values_flags_and_no_condition():
    for engine in ("z3", "brute"):
        res = ptxmm.check(ptxmm.parse(_RACY, "racy.ptx"), "ptx", engine=engine)
        assert any(o.flags for o in res.outcomes) and all(o.satisfies is None for o in res.outcomes)
        assert any(v < 0 for o in res.outcomes for _, v in o.outcome.values)
        _same(res)


_pairs = st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 10 ** 6)), max_size=5)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(vals=st.dictionaries(st.text(max_size=8), st.integers(-2 ** 64, 2 ** 64), max_size=4),
       sat=st.sampled_from([True, False, None]), flags=st.lists(st.text(max_size=6), max_size=3),
       paths=st.lists(st.integers(0, 9), max_size=4), rf=_pairs, co=_pairs, enumerated=st.booleans())
def test_rows_equal_json_dumps(vals, sat, flags, paths, rf, co, enumerated):
    o = OutcomeInfo(Outcome(tuple(vals.items())), sat,
                    Execution(tuple(paths), tuple(rf), tuple(co), ()), flags)
    assert _row(o, enumerated, {}) == json.dumps(outcome_json(o, enumerated))
