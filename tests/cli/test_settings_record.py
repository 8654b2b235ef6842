"""One validation layer (issue 38): ``check()``'s settings as a typed record
(``api_args.settings_model()``, pydantic) and the checks ``check()`` runs (``api_args.check_args``)
give the same answer on every generated value; the record's JSON Schema is the one
docs/json-schema.md prints; the record names exactly ``check()``'s settings."""

from __future__ import annotations

import inspect
import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

pydantic = pytest.importorskip("pydantic", reason="pydantic (the test extra) gives the typed record")

import ptxmm  # noqa: E402
from ptxmm.api_args import check_args, settings_model, settings_schema  # noqa: E402
from ptxmm.errors import ArgumentError  # noqa: E402

NOT_SETTINGS = {"prog", "progress", "graph"}  # objects: a program, a callback, an event graph
PROG = ptxmm.load(ROOT / "examples" / "mp-spin.ptx")


def test_the_record_names_exactly_checks_settings():
    params = set(inspect.signature(ptxmm.check).parameters) - NOT_SETTINGS
    assert set(settings_model().model_fields) == params


def test_the_docs_print_the_records_schema():
    text = (ROOT / "docs" / "json-schema.md").read_text()
    block = re.search(r"## Settings.*?```json\n(.*?)\n```", text, re.S)
    assert block, "docs/json-schema.md has a Settings section with the schema"
    assert json.loads(block.group(1)) == settings_schema()


VALUES = [None, True, False, -1, 0, 1, 2, 63, 64, 65, 2**70, 0.0, 0.5, 1.5, -2.0, math.inf, math.nan,
          "", "ptx", "sc", "auto", "z3", "Z3", "brute", "bogus", "all", "condition", "fair", "obe",
          "lobe", "hsa", "unfair", "gpu=obe,cta=fair", "cta=hsa", "gpu=fair,", "gpu=obe,gpu=fair",
          "no", "yes", "2", b"fair", [1], {"a": 1}]
FIELDS = ["engine", "unroll", "observe", "flags", "verdict_only", "max_outcomes", "timeout",
          "max_memory", "allow_no_axioms", "liveness", "progress_model"]


def _record_accepts(kw: dict) -> bool:
    try:
        settings_model()(**kw)
    except pydantic.ValidationError:
        return False
    return True


def _check_accepts(kw: dict) -> bool:
    try:
        check_args(PROG, **kw)
        from ptxmm.queries.hangs import Progress

        Progress.parse(kw.get("progress_model", "fair"))  # check() parses it whatever liveness says
    except (ArgumentError, TypeError):
        return False
    return True


@pytest.mark.parametrize("field", FIELDS)
def test_the_record_and_check_agree_on_every_value(field):
    """A setting the record refuses, check() refuses (with its own words), and the reverse — every
    field against every value of a list built around the edges (ranges, types, spellings)."""
    differ = [v for v in VALUES if _record_accepts({field: v}) != _check_accepts({field: v})]
    assert differ == [], (field, differ)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(kw=st.dictionaries(st.sampled_from(FIELDS), st.sampled_from(VALUES), max_size=4))
def test_the_record_and_check_agree_on_combinations(kw):
    assert _record_accepts(kw) == _check_accepts(kw), kw


@pytest.mark.parametrize("kw", [{"liveness": "no"}, {"progress_model": "bogus"}, {"unroll": True},
                                {"timeout": 0}, {"max_memory": 0}, {"engine": "Z3"}])
def test_known_wrong_settings_are_refused_by_both(kw):
    assert not _record_accepts(kw) and not _check_accepts(kw)
