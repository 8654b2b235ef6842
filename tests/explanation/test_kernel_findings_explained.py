"""``ptxmm explain`` and ``ptxmm graph`` of a kernel's findings (issue 25): each race,
assert-fails, out-of-bounds and hang finding with its witness execution and the CUDA lines."""

from __future__ import annotations

import html
import json

import pytest
from click.testing import CliRunner
from support import ROOT

import ptxmm
from ptxmm.cli.main import main
from ptxmm.errors import SemanticError
from ptxmm.explanation.findings import explain_findings, finding_graph

DATA = ROOT / "tests" / "data" / "kernels"
CORPUS = ROOT / "examples" / "kernels"


def _by_kind(xs) -> dict:
    out: dict = {}
    for x in xs:
        out.setdefault(x.kind, []).append(x)
    return out


def test_out_of_bounds_witness_shows_where_the_thread_stops():
    (x,) = explain_findings(ptxmm.load(DATA / "oob.ptx"))
    assert x.kind == "out-of-bounds"
    assert x.steps[-1] == ("b0t3 stops: an out-of-bounds access at oob.cu:9 out[i + 1] = 0;  "
                           "// off by one (line 42)")
    # the other threads finish, each after its in-bounds store (CUDA line 7)
    assert [s for s in x.steps if s.endswith("finishes")] == [f"b0t{t} finishes" for t in range(3)]
    assert sum("[oob.cu:7]" in s for s in x.steps) == 4
    assert "stops: an out-of-bounds access" in str(x) and x.to_json()["finding"]["kind"] == "out-of-bounds"


def test_assert_and_race_witnesses_of_message_passing():
    xs = _by_kind(explain_findings(ptxmm.load(DATA / "mp_relaxed.ptx"), hangs=False))
    assert set(xs) == {"race", "assert-fails"}
    (a,) = xs["assert-fails"]
    # the witness: the flag read sees 1, the data read the initial 0, and the assert fails
    assert any("[mp_relaxed.cu:18]" in s and "reads 0 from the initial value" in s for s in a.steps)
    assert any("[mp_relaxed.cu:16]" in s and "reads 1 from b0t0's" in s for s in a.steps)
    assert a.steps[-1].startswith("b1t0 stops: its assertion fails at mp_relaxed.cu:18 "
                                  "assert(data[0] == 42);")
    (r,) = xs["race"]
    edges = [e for e in r.graph.edges if e.rel == "race"]
    assert len(edges) == 1 and {edges[0].src, edges[0].dst} == {e.eid for e in r.finding.events}


def test_hang_witness():
    (h,) = explain_findings(ptxmm.load(CORPUS / "spin-hoisted.ptx"), kind="hang")
    assert h.kind == "hang" and h.steps[-1] == "b1t0 repeats the marked iteration forever"
    assert any("reads 0 from the initial value" in s for s in h.steps)
    assert h.graph is not None and "hang" in h.graph.title


def test_loaded_index_out_of_bounds_witness_reads_the_index():
    """gather-oob: thread 1 reads idx[1] = 4 (initial value) and stops at in[4]."""
    xs = explain_findings(ptxmm.load(CORPUS / "gather-oob.ptx"), hangs=False)
    (x,) = xs
    assert any(s.startswith("b0t1: ld.global.u32") and "reads 4 from the initial value" in s for s in x.steps)
    assert x.steps[-1].startswith("b0t1 stops: an out-of-bounds access at gather-oob.cu:22 int v = in[i];")


def test_no_finding_of_a_kind_is_an_error():
    with pytest.raises(SemanticError, match="no race finding"):
        finding_graph(ptxmm.load(DATA / "oob.ptx"), kind="race")
    with pytest.raises(SemanticError, match="unknown finding kind"):
        explain_findings(ptxmm.load(DATA / "oob.ptx"), kind="races")


def test_cli_explain_and_graph_of_kernel_findings(tmp_path):
    run = CliRunner().invoke
    r = run(main, ["explain", str(DATA / "oob.ptx")])  # no condition: the findings
    assert r.exit_code == 0, r.output
    assert "finding  out-of-bounds: b0t3 oob.cu:9" in r.output
    assert "stops: an out-of-bounds access" in r.output
    r = run(main, ["explain", str(DATA / "mp_relaxed.ptx"), "--finding", "assert-fails"])
    assert r.exit_code == 0 and "finding  assert-fails" in r.output and "data-race" not in r.output
    r = run(main, ["explain", str(CORPUS / "gather-oob.ptx"), "--json"])  # a condition and a finding
    doc = json.loads(r.output)
    assert doc["verdict"] == "forbidden"
    assert [f["finding"]["kind"] for f in doc["findings"]] == ["out-of-bounds"]
    r = run(main, ["graph", str(DATA / "mp_relaxed.ptx"), "--finding", "race", "--ascii"])
    assert r.exit_code == 0 and "--race-->" in r.output
    out = tmp_path / "w.svg"
    r = run(main, ["graph", str(DATA / "oob.ptx"), "-o", str(out)])
    drawn = html.unescape(out.read_text())  # Graphviz writes "-" in SVG text as "&#45;"
    assert r.exit_code == 0 and drawn.startswith("<svg") and "out-of-bounds" in drawn
    r = run(main, ["graph", str(DATA / "oob.ptx"), "--finding", "hang"])
    assert r.exit_code == 2 and "no hang finding" in r.output
