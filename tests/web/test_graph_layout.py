"""The playground draws what the CLI draws (issue 42, item 3): `/api/graph` answers the DOT that
`ptxmm graph -o out.dot` writes, an explanation carries it as its `"dot"` member, and the page lays
it out in Chromium with the vendored WebAssembly Graphviz — whose drawing of tutorial step 6 has
no edge through a box and no label on another (tests/explanation/test_graph_geometry.py's
checks)."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.svg_geometry import faults, parse
from test_jobs import MP, _job
from test_server import running_server

import ptxmm
from ptxmm.cat.parser import builtin_models
from ptxmm.cli.main import main
from ptxmm.queries.checker import check
from ptxmm.web.jobs import job_of, run

MODELS = builtin_models()

STATIC = Path(__file__).resolve().parents[2] / "src" / "ptxmm" / "web" / "static" / "graphviz"


def test_graph_answers_the_dot_the_cli_writes(tmp_path):
    status, dot, media = run(_job("graph", dot=True))
    assert status == 200 and media.startswith("text/vnd.graphviz")
    r = CliRunner().invoke(main, ["graph", str(MP), "-o", str(tmp_path / "g.dot")])
    assert r.exit_code == 0
    assert dot == (tmp_path / "g.dot").read_text()
    status, body, _ = run(_job("explain", graph=True))
    x = json.loads(body)
    assert x["dot"] == dot and x["svg"].startswith("<svg")


def test_the_vendored_graphviz_carries_its_licence():
    assert "Apache License" in (STATIC / "LICENSE").read_text()
    readme = (STATIC / "README").read_text()
    assert "@hpcc-js/wasm-graphviz 1.29.2" in readme and "Eclipse Public License" in readme
    assert (STATIC / "graphviz.js").stat().st_size < 1_000_000  # the page's one large asset


CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
STEP = "teaching/06-relaxed-store-is-not-release.ptx"


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium not installed (/usr/bin/chromium; "
                                                  "apt-get install chromium)")
def test_the_page_lays_the_dot_out_in_the_browser(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright not installed "
                                   "(pip install 'ptxmm[web-test]')")
    with running_server("--workers", "1", log=tmp_path / "server.log") as url, \
            sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.set_default_timeout(60_000)
        pg.goto(url + "/")
        pg.wait_for_selector("body[data-ready='1']")
        pg.select_option("#example", STEP)
        pg.wait_for_function(f"() => document.getElementById('status').textContent.startsWith("
                             f"{'opened ' + STEP!r})")
        with pg.expect_response(lambda r: r.url.endswith("/api/graph")) as answer:
            pg.click("#check")
        assert answer.value.headers["content-type"].startswith("text/vnd.graphviz")
        pg.wait_for_function("() => { const t = document.getElementById('graph-title').textContent;"
                             " return document.querySelector('#graph svg') && !t.includes('drawing'); }")
        drawing = pg.evaluate("new XMLSerializer().serializeToString(document.querySelector('#graph svg'))")
        browser.close()
    assert errors == []
    geo = parse(drawing)
    assert len(geo.nodes) == 5 and geo.edges  # init data=0, two stores, two loads
    assert faults(drawing) == []
    assert "st.relaxed.gpu.global.u32 [flag], 1" in drawing and "reads from" in drawing


HOLDS = """.test OneStore "a single store: x ends at 1 in every execution"
.global .u32 x = 0;
.thread T0 .cta 0 {
    st.global.u32 [x], 1;
}
"""


def _drawn_alike(f: Path, out: Path, note: str) -> str:
    """`ptxmm graph f -o out` draws with ``note`` on stderr, and the page's /api/graph answers the
    same DOT; returns it."""
    r = CliRunner().invoke(main, ["graph", str(f), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert note in r.stderr, r.stderr
    dot = out.read_text()
    status, body, _ = run(job_of("graph", {"source": f.read_text(), "dot": True}, 10.0, MODELS))
    assert status == 200 and body == dot
    return dot


def test_a_holding_forall_is_drawn_on_the_command_line_and_in_the_page(tmp_path):
    """A ``forall`` that holds where no candidate execution even reaches its opposite (as
    latch-arrive-wait.cu's; a ``~exists`` that holds, an ``exists`` that fails so): `graph` drew
    nothing ("no candidate execution produces this outcome", a 422 in the page). Now both draw one
    allowed execution, the title saying which outcome and that the forall holds in every allowed
    execution; the outcome drawn is the one the brute-force engine lists as allowed."""
    for cond in ("forall (x == 1)", "~exists (x == 0)"):
        f = tmp_path / "holds.ptx"
        f.write_text(HOLDS + cond + "\n")
        dot = _drawn_alike(f, tmp_path / "g.dot",
                           f"note: {cond} holds in every allowed execution; drawn: one of them, outcome x=1")
        assert f"{cond} holds in every allowed execution" in html.unescape(dot) and "x=1" in dot
        status, body, _ = run(job_of("explain", {"source": f.read_text(), "graph": True}, 10.0, MODELS))
        x = json.loads(body)
        assert x["verdict"] == "forbidden" and x["dot"] == dot and x["svg"].startswith("<svg")
    brute = check(ptxmm.load(f), engine="brute")
    assert [str(o.outcome) for o in brute.outcomes] == ["x=1"]
    # an exists that no execution reaches: one allowed execution too, said so
    f.write_text(HOLDS + "exists (x == 0)\n")
    _drawn_alike(f, tmp_path / "e.dot", "note: exists (x == 0) is reached by no allowed execution; "
                 "drawn: one allowed execution, outcome x=1")
    # a named outcome no candidate produces still has nothing to draw (that outcome is drawn or none)
    r = CliRunner().invoke(main, ["graph", str(f), "--outcome", "x=0"])
    assert r.exit_code != 0 and "no candidate execution produces this outcome" in r.output
    status, body, _ = run(job_of("graph", {"source": f.read_text(), "outcome": "x=0"}, 10.0, MODELS))
    assert status == 422 and "nothing to draw" in body


# the densest drawings: Graphviz 16 in WebAssembly put a label on a box at each of the six spacings
# the command line's dot (2.43) needs at most (graph.SPACINGS: the page now tries the last two too)
DENSE = ["hopper/pipeline-tma-async-no-consumer-fence.ptx", "hopper/pipeline-tma-async-no-empty-wait.ptx",
         "hopper/kernels/pipeline-tma-async-no-empty-wait.ptx"]


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium not installed (/usr/bin/chromium; "
                                                  "apt-get install chromium)")
def test_the_page_lays_dense_drawings_out_again_until_their_labels_are_clear(tmp_path):
    """The page's layout (app.js): the WebAssembly drawing at each of /api/info's spacings until
    its own label check (a port of labelfit.overlaps, which agrees with it here, on clear and
    faulty drawings) finds every label clear — for the three densest Hopper drawings, whose
    labels the first spacing puts on boxes."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright not installed "
                                   "(pip install 'ptxmm[web-test]')")
    from ptxmm.explanation import graph
    from ptxmm.explanation.explain import explain
    from ptxmm.explanation.findings import finding_graph
    from ptxmm.explanation.graph import dot_source
    from ptxmm.explanation.labelfit import overlaps

    graphs = {}
    for path in DENSE:
        prog = ptxmm.load(Path(__file__).resolve().parents[2] / "examples" / path)
        graphs[path] = explain(prog).graph if prog.condition is not None else finding_graph(prog)
    dots = {p: dot_source(g) for p, g in graphs.items()}
    with running_server("--workers", "1", log=tmp_path / "server.log") as url, \
            sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        pg = browser.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.set_default_timeout(120_000)
        pg.goto(url + "/")
        pg.wait_for_selector("body[data-ready='1']")
        drawn = {path: pg.evaluate("d => ptxmmLayout(d)", dot) for path, dot in dots.items()}
        first = {path: pg.evaluate("d => import('/static/graphviz/graphviz.js').then(m => m.Graphviz.load())"
                                   ".then(gv => gv.dot(d, 'svg'))", dot) for path, dot in dots.items()}
        svgs = [*first.values(), *(t for t in drawn.values() if t is not None)]
        counted = [pg.evaluate("s => ptxmmOverlaps(s)", s) for s in svgs]
        browser.close()
    assert errors == []
    assert counted == [overlaps(s) for s in svgs]  # the page's check is labelfit's
    assert all(overlaps(s) > 0 for s in first.values())  # at the first spacing: labels on boxes
    # laid out again, clear in the browser; where no spacing is (None: the page then shows the
    # server's drawing, whose dot clears it or draws the edges unlabelled), the server's is clear.
    # Which of the three the browser clears follows the witness Z3 picks (z3-solver 4.16 gives
    # pipeline-tma-async-no-empty-wait.ptx one no spacing clears in Graphviz 16; 5.4.1 did not)
    assert sum(text is not None for text in drawn.values()) >= 2
    for path, text in drawn.items():
        if text is None:
            text = graph.laid_out(graphs[path])[1]
        assert parse(text).nodes and faults(text) == [], path


def test_a_drawing_no_spacing_clears_is_drawn_with_unlabelled_edges(monkeypatch):
    """Where no spacing places every label clear (an allowed execution of a whole kernel, e.g.
    vllm-barrier-at-end-final-sync.cu's, whose dozen reads of initial values leave one box), the
    command line (and the page, which shows the server's drawing then) draws the edges without
    labels, the legend saying that their colours name them, rather than a label on a box."""
    from ptxmm.explanation import graph
    from ptxmm.explanation.explain import explain
    from ptxmm.explanation.labelfit import overlaps

    g = explain(ptxmm.load(Path(__file__).resolve().parents[2] / "examples" / "hopper" /
                           "wgmma-tma-war-early-release.ptx")).graph
    first = graph.dot_layout(graph.dot_source(g)).decode()
    assert overlaps(first) > 0  # at the first spacing a label lies on a box
    monkeypatch.setattr(graph, "SPACINGS", graph.SPACINGS[:1])  # the only spacing tried
    source, drawn = graph.laid_out(g)
    assert "xlabel" not in source and "xlabel" in graph.dot_source(g)
    assert "their colours name them" in drawn and faults(drawn) == [] and parse(drawn).edges
    assert len(parse(drawn).edges) == len(parse(first).edges)  # the same edges, unlabelled


TIMER = """.test Timer "a branch on the timer: x ends at 1 either way"
.global .u32 x = 0;
.thread T0 .cta 0 {
    mov.u64 %rd0, %globaltimer;
    setp.eq.u64 %p0, %rd0, 0;
    @%p0 bra L;
    st.global.u32 [x], 1;
    bra END;
L:
    st.global.u32 [x], 1;
END:
}
"""


def test_a_holding_forall_over_a_timer_is_drawn_by_the_solver(tmp_path):
    """A value the ISA leaves free (%globaltimer, as atomic-flag-wait.cu's backoff reads) stops
    explain's concrete enumeration of rejected candidates ("not supported yet"); the check's
    solver decides the forall and draws one allowed execution, on the command line and in the
    page alike."""
    f = tmp_path / "timer.ptx"
    f.write_text(TIMER + "forall (x == 1)\n")
    _drawn_alike(f, tmp_path / "g.dot", "note: forall (x == 1) holds in every allowed execution; "
                 "drawn: one of them, outcome x=1")
    # a forall that fails: the execution reaching its opposite, drawn as before (no note)
    f.write_text(TIMER + "forall (x == 0)\n")
    r = CliRunner().invoke(main, ["graph", str(f), "-o", str(tmp_path / "f.dot")])
    assert r.exit_code == 0 and "note:" not in r.stderr
    assert "holds" not in (tmp_path / "f.dot").read_text()


def test_a_kernel_reading_the_timer_whose_forall_holds_is_drawn():
    """cg-awbarrier-block-reduce (its barrier wait backs off by %globaltimer): the browser test
    over every example found its drawing an internal error (a verdict query's witness left the
    timer out of its outcome); the first enumerated allowed execution is drawn, its geometry clear."""
    from ptxmm.explanation.graph import svg
    from ptxmm.explanation.holding import condition_drawing

    prog = ptxmm.load(Path(__file__).resolve().parents[2] / "examples" / "kernels" / "real" /
                      "cg-awbarrier-block-reduce.ptx")
    g, note = condition_drawing(prog)
    assert note == ("forall (result[0] == 10) holds in every allowed execution; drawn: one of them, "
                    "outcome result[0]=10")
    drawn = svg(g)
    assert parse(drawn).nodes and faults(drawn) == []
