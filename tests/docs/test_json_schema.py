"""docs/ptxmm.schema.json, the JSON Schema of ``ptxmm check --json`` and of ``ptxmm test --jsonl``'s
lines, held to the output (issue 42, item 7): examples of every kind of entry here (a litmus test,
a kernel with its findings and liveness, an error, a timeout), every bundled example under
``-m slow``. The validator is tests/support/schema_check.py (jsonschema is no dependency of the
tests); where the jsonschema package is installed, it must agree."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT
from support.schema_check import errors

SCHEMA = json.loads((Path(ROOT) / "docs" / "ptxmm.schema.json").read_text())
SAMPLE = ["examples/mp-relaxed-acquire.ptx", "examples/kernels/mp-relaxed-flag.ptx",
          "examples/kernels/exchange-off-by-one.ptx", "examples/liveness/spin-weak-flag.ptx",
          "examples/classic/SB-relaxed.ptx"]


def _check_json(files: list[str], *extra: str, timeout: int = 600) -> object:
    proc = subprocess.run([sys.executable, "-m", "ptxmm", "check", "--json", *extra, *files], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    return json.loads(proc.stdout)


def _sample() -> list[str]:
    return [f for f in SAMPLE if (Path(ROOT) / f).is_file()]


def test_every_ref_of_the_schema_resolves():
    text = json.dumps(SCHEMA)
    refs = {r.split('"')[0] for r in text.split('"$ref": "#/$defs/')[1:]}
    assert refs and refs <= set(SCHEMA["$defs"])


def test_check_json_of_each_kind_of_entry_is_valid(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".global .u32 x = 0;\n.thread T0 {\n bogus;\n}\nexists (x == 1)\n")
    files = [*_sample(), str(bad)]
    out = _check_json(files, "--liveness")
    assert isinstance(out, list) and len(out) == len(files)
    assert any("error" in e for e in out) and any(e.get("findings") for e in out)
    assert any("liveness" in e for e in out)
    assert errors(out, SCHEMA) == []
    one = _check_json([_sample()[0]], "--observe", "condition")  # one file: an object, not a list
    assert isinstance(one, dict) and errors(one, SCHEMA) == []


def test_a_timed_out_check_is_valid():
    out = _check_json(["examples/kernels/mp-relaxed-flag.ptx"], "--timeout", "0.001")
    assert out.get("status") == "timeout" or out["error"]["kind"] == "timeout"
    assert errors(out, SCHEMA) == []


def test_the_schema_rejects_what_the_output_must_not_be():
    out = _check_json([_sample()[0]])
    assert errors(out, SCHEMA) == []
    for mutate in (lambda d: d.pop("holds"), lambda d: d.update(holds="yes"),
                   lambda d: d.update(surprise=1), lambda d: d.update(status="fine"),
                   lambda d: d["outcomes"][0].update(values={"x": "1"})):
        d = copy.deepcopy(out)
        mutate(d)
        assert errors(d, SCHEMA), d


def test_test_jsonl_lines_are_valid(tmp_path):
    out = tmp_path / "o.jsonl"
    subprocess.run([sys.executable, "-m", "ptxmm", "test", *_sample()[:2], "--jsonl", str(out), "-j", "1"],
                   cwd=ROOT, capture_output=True, text=True, timeout=600)
    head, *rows = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert errors(head, {"$ref": "#/$defs/jsonlHeader", "$defs": SCHEMA["$defs"]}) == []
    assert len(rows) == 2
    for r in rows:
        assert errors(r, {"$ref": "#/$defs/testRow", "$defs": SCHEMA["$defs"]}) == []


def test_the_validator_agrees_with_jsonschema_where_it_is_installed():
    jsonschema = pytest.importorskip("jsonschema")
    out = _check_json(_sample())
    jsonschema.validate(out, SCHEMA)
    d = copy.deepcopy(out)
    d[0]["holds"] = "yes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(d, SCHEMA)


@pytest.mark.slow  # every bundled example (minutes)
def test_every_bundled_examples_check_json_is_valid():
    """Each file in a process of its own: in one batch, a --timeout that stops one file's check
    can break the next file's (reported to the lead: a z3 `push canceled`, a half-imported module)."""
    from concurrent.futures import ThreadPoolExecutor

    from ptxmm.testing.runner import collect

    files = [str(f.relative_to(ROOT)) for f in collect([str(Path(ROOT) / "examples")])]
    assert len(files) > 200
    with ThreadPoolExecutor(2) as ex:
        outs = list(ex.map(lambda f: _check_json([f], "--timeout", "60", timeout=900), files))
    bad = {f: errors(o, SCHEMA)[:3] for f, o in zip(files, outs) if errors(o, SCHEMA)}
    assert bad == {}

def test_json_schema_md_lists_the_fields_in_the_order_of_the_output():
    doc = (Path(ROOT) / "docs" / "json-schema.md").read_text()
    table = doc.split("| field | type | meaning |")[1].split("\n\n")[0]
    listed = re.findall(r"^\| `(\w+)` \|", table, re.M)
    out = _check_json(["examples/mp-relaxed-acquire.ptx"], "--liveness")
    assert [k for k in listed if k in out] == list(out)
    assert set(listed) == set(SCHEMA["$defs"]["checkResult"]["properties"])
