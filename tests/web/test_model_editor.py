"""Issue 42 item 8: a cat model written in the playground (``"model_text"``) — parsed and run in
the worker under the request's limits, its errors located in ``playground.cat``, its includes only
the built-in model files by name (never a path of the server); the same verdicts as the built-in
model of the same text."""

from __future__ import annotations

import json

import pytest
from support import ROOT

from ptxmm.cat.parser import builtin_files, builtin_models, model_from_text
from ptxmm.errors import ModelError
from ptxmm.web.jobs import RequestError, job_of, run

MODELS = builtin_models()
SB = (ROOT / "examples" / "classic" / "SB-relaxed.ptx").read_text()
MP = (ROOT / "examples" / "mp-relaxed-acquire.ptx").read_text()


def _check(source: str, **body) -> tuple[int, dict]:
    status, text, _ = run(job_of("check", {"source": source, **body}, 30.0, MODELS))
    return status, json.loads(text)


def _verdicts(res: dict) -> tuple:
    return res["holds"], sorted(json.dumps(o["values"], sort_keys=True) for o in res["outcomes"])


@pytest.mark.parametrize("name", ["sc", "ptx"])
@pytest.mark.parametrize("source", [SB, MP])
def test_a_built_in_models_text_written_here_answers_as_the_model(name, source):
    text = builtin_files()[name].read_text()
    status, own = _check(source, model_text=text)
    assert status == 200 and own["model"] == "playground"
    assert _verdicts(own) == _verdicts(_check(source, model=name)[1])


def test_a_model_of_ones_own_changes_the_verdict():
    sc = "acyclic po | rf | co | fr as sc\n"
    assert _check(SB, model_text=sc)[1]["holds"] is False  # SB's weak outcome: not under SC
    assert _check(SB, model_text="include \"ptx-common.cat\"\nempty 0 as nothing\n")[1]["holds"] is True


@pytest.mark.parametrize("text, at, words", [
    ('include "/etc/passwd"\nacyclic po as x\n', "playground.cat:1:", "includes only a built-in"),
    ('acyclic po as a\ninclude "../models/ptx.cat"\n', "playground.cat:2:", "includes only a built-in"),
    ('include "ptx-common"\n', "playground.cat:1:", "includes only a built-in"),
    ("let x = po\n", "playground.cat:1:1", "states no axiom"),
    ("acyclic po |\n", "playground.cat:", ""),
    ("acyclic nosuchrel as x\n", "playground.cat:1:", "nosuchrel"),
])
def test_a_model_written_here_is_refused_at_its_line(text, at, words):
    status, res = _check(SB, model_text=text)
    err = res["error"]
    assert status == 422 and err["kind"] == "model error" and err["position"].startswith(at), err
    assert words in err["message"]
    assert "root:" not in json.dumps(res)


def test_model_and_model_text_are_not_both_given():
    with pytest.raises(RequestError) as e:
        job_of("check", {"source": SB, "model": "sc", "model_text": "acyclic po as x"}, 10.0, MODELS)
    assert e.value.status == 400 and "not both" in e.value.message
    with pytest.raises(RequestError) as e:
        job_of("check", {"source": SB, "model_text": "x" * 70_000}, 10.0, MODELS)
    assert e.value.status == 400 and "longer than" in e.value.message


def test_explain_and_graph_use_the_model_written_here():
    sc = "acyclic po | rf | co | fr as sc\n"
    status, text, _ = run(job_of("explain", {"source": SB, "model_text": sc}, 30.0, MODELS))
    assert status == 200 and json.loads(text)["verdict"] == "forbidden"
    status, text, _ = run(job_of("explain", {"source": SB, "model": "ptx"}, 30.0, MODELS))
    assert json.loads(text)["verdict"] == "allowed"
    status, svg, media = run(job_of("graph", {"source": SB, "model_text": sc}, 30.0, MODELS))
    assert (status, media) == (200, "image/svg+xml") and svg.lstrip().startswith("<")
    status, text, _ = run(job_of("graph", {"source": SB, "model_text": "let x = po\n"}, 30.0, MODELS))
    assert status == 422 and json.loads(text)["error"]["position"] == "playground.cat:1:1"


def test_model_from_text_reads_no_file_but_built_in_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.cat").write_text("acyclic po as mine\n")
    with pytest.raises(ModelError):
        model_from_text('include "mine.cat"\n', "x.cat")
    m = model_from_text('include "sc.cat"\n', "x.cat")
    assert "SC" in [a.name for a in m.axioms] and m.name == "x" and m.path == "x.cat"
