"""A packed witness's JSON text read from its digits (engines/z3/witness.py ``Packed.witness_json``,
used by report/jsonout.py's rows): it must be exactly ``json.dumps`` of the decoded witness's paths,
rf and co, on every program (branches, RMWs, several locations), and the report's text the same with
the shortcut switched off (``witness.WITNESS_TEXT``)."""

from __future__ import annotations

import io
import json
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT
from support.grammar_gen import valid_ptx

import ptxmm
from ptxmm.engines.z3 import witness
from ptxmm.report.jsonout import write_result

sys.path.insert(0, str(ROOT / "benchmarks"))
import shapes  # noqa: E402

_TABLED: list[int] = []  # per example: how many witnesses the table answered (the last test checks)


def _decoded(w) -> str:
    exe = w.get()
    return json.dumps({"paths": list(exe.paths), "rf": [list(p) for p in exe.rf],
                       "co": [list(p) for p in exe.co]})


def _json(res) -> str:
    out = io.StringIO()
    write_result(res, out)
    return out.getvalue()


def _check_texts(res) -> int:
    n = 0
    for o in res.outcomes:
        w = o.witness
        if isinstance(w, witness.Packed):
            text = w.witness_json()
            if text is not None:
                n += 1
                assert text == _decoded(w)
    return n


def test_one_location_rows_are_the_decoded_witnesses(monkeypatch):
    prog = ptxmm.parse(shapes.one_location(2).ptx(), "x1l2.ptx")
    res = ptxmm.check(prog, "sc", engine="z3")
    assert _check_texts(res) == len(res.outcomes) > 8
    on = _json(res)
    monkeypatch.setattr(witness, "WITNESS_TEXT", False)
    witness._TABLE[:] = None, None
    assert all(o.witness.witness_json() is None for o in res.outcomes)
    assert _json(res) == on  # the report decodes each witness instead: the same text
    witness._TABLE[:] = None, None


_SETTINGS = dict(deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                        HealthCheck.data_too_large])


@settings(max_examples=60, **_SETTINGS)
@given(case=st.tuples(st.sampled_from(["ptx", "ptx-v6.0", "sc"]),
                      valid_ptx(max_threads=3, max_events=7, unroll=1)))
def test_witness_text_is_json_of_the_decoded_witness_on_random_programs(case):
    model, src = case
    prog = ptxmm.parse(src, "t.ptx")
    res = ptxmm.check(prog, model, engine="z3", unroll=1)
    _TABLED.append(_check_texts(res))


def test_the_random_programs_reached_the_table():
    """Most random programs' witnesses are packed and tabled: the property above was exercised."""
    assert sum(1 for n in _TABLED if n) >= len(_TABLED) // 3, _TABLED
