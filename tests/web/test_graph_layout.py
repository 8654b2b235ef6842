"""The playground draws what the CLI draws (issue 42, item 3): `/api/graph` answers the DOT that
`ptxmm graph -o out.dot` writes, an explanation carries it as its `"dot"` member, and the page lays
it out in Chromium with the vendored WebAssembly Graphviz — whose drawing of tutorial step 6 has
no edge through a box and no label on another (tests/explanation/test_graph_geometry.py's
checks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.svg_geometry import faults, parse
from test_jobs import MP, _job
from test_server import running_server

from ptxmm.cli.main import main
from ptxmm.web.jobs import run

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
