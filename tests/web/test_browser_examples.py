"""Issue 42: every bundled example the playground offers — the page's own example list (litmus
``.ptx``, Dat3M ``.litmus``, ``.cu`` kernels) — opened and checked in Chromium, as a user would,
under the server's default time limit (10 s).

Each one answers: a verdict (or "no condition" with its outcomes), or a time limit or "not
decided" said as such, never a refusal — except one its directory's README documents
(``[stem] ... refused: why``), and that one located at a line of the editor; liveness examples are
checked with liveness on (the page turns it on for them) and show the hang their
``.expect-liveness`` names; each tutorial step draws its execution graph, and every drawing the
page shows passes the geometry test (support/svg_geometry.py: no edge through a box, no label on
another or on a box). The page logs no error. Two pages run at a time (the server's two workers).

The test over every example takes minutes (marked slow: ``pytest -m slow
tests/web/test_browser_examples.py -n 0 -s`` prints a table and the wall time); the fast one opens
the first example of each group of the list. Skipped, saying why, where Chromium or Playwright is
missing; a kernel where nvcc or the sandbox is missing."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import DAT3M_SB, ROOT
from support.svg_geometry import faults
from test_browser import ARGS, CHROMIUM, sync_api
from test_server import running_server

from ptxmm.kernel.nvcc import find_nvcc
from ptxmm.web import sandbox

pytestmark = [pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium not installed "
                                 "(/usr/bin/chromium; apt-get install chromium)")]
HAS_NVCC = find_nvcc() is not None and sandbox.available()
PAGES = 2  # pages checking at once: the server's workers
WAIT_S = 240.0  # one example's check and drawing on a loaded machine (the server stops each at 10 s)

# what the page shows once a check has answered and its drawing (if any) has arrived
_DONE = """() => {
  const s = document.getElementById('status').textContent;
  if (/^(checking|cancelling|opened)/.test(s)) return false;
  return document.getElementById('graph-box').hidden ||
         !document.getElementById('graph-title').textContent.includes('drawing');
}"""
_SHOWN = """() => {
  const $ = id => document.getElementById(id), shown = id => !$(id).hidden;
  const g = $('graph');
  return {status: $('status').textContent,
          error: shown('error') ? $('error').innerText : null,
          verdict: shown('verdict') ? $('verdict').textContent : null,
          colour: $('verdict').className,
          liveness: shown('liveness-line') ? $('liveness-line').textContent : null,
          findings: shown('findings') ? $('findings').innerText : '',
          outcomes: shown('outcomes') ? $('outcomes').tBodies[0].rows.length : 0,
          graph: !shown('graph-box') ? null : g.querySelector('svg') ? 'svg' : g.textContent,
          drawing: shown('graph-box') && g.querySelector('svg') ?
            new XMLSerializer().serializeToString(g.querySelector('svg')) : null,
          lines: ptxmmEditor.lineCount(), liveness_on: $('liveness').checked};
}"""
# a check's status line when it answered (checkedStatus in app.js)
ANSWERED = ("checked in", "time limit: stopped after", "no condition:", "not decided")
RUN_TOGETHER = re.compile(r"\S(?:✓|✗|expect |no expectation)")  # "…passedexpect ok", "…42)✓ agrees"
_LOCATED = re.compile(r"^playground\.(?:ptx|litmus|cu):(\d+):(\d+): ")


@dataclass(frozen=True)
class Shown:
    """What the page showed for one example after Check (and its drawing)."""

    path: str
    status: str
    error: str | None
    verdict: str | None
    colour: str
    liveness: str | None
    findings: str
    outcomes: int
    graph: str | None
    drawing: str | None  # the drawing's SVG, as the page shows it
    lines: int
    liveness_on: bool
    seconds: float

    @property
    def answer(self) -> str:
        """In a word: ok, timeout, undecided, no-condition, refused."""
        if self.error is not None:
            return "refused"
        if self.status.startswith("time limit"):
            return "timeout"
        if self.status.startswith("not decided"):
            return "undecided"
        return "no-condition" if self.status.startswith("no condition") else "ok"


def _listed(pg) -> list[str]:
    """The page's example list, in its order."""
    return pg.evaluate("() => Array.from(document.querySelectorAll('#example option'))"
                       ".map(o => o.value).filter(v => v)")


def _new_page(browser, url: str):
    pg = browser.new_page(viewport={"width": 1400, "height": 900})
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" and
          "Failed to load resource" not in m.text else None)  # an answer other than 200 is logged
    pg.set_default_timeout(int(WAIT_S * 1000))
    pg.goto(url + "/")
    pg.wait_for_selector("body[data-ready='1']")
    return pg


def check_all(url: str, paths: list[str] | None, browser) -> list[Shown]:
    """Open each example (``None``: every one the page lists) and check it, ``PAGES`` at a time;
    what each page showed, in the list's order."""
    pages = [_new_page(browser, url) for _ in range(PAGES)]
    todo = list(paths if paths is not None else _listed(pages[0]))
    order = {p: i for i, p in enumerate(todo)}
    running: dict[int, tuple[str, float]] = {}
    out: list[Shown] = []
    while todo or running:
        for i, pg in enumerate(pages):
            if i not in running and todo:
                path = todo.pop(0)
                pg.select_option("#example", path)
                pg.wait_for_function("p => document.getElementById('status').textContent === 'opened ' + p",
                                     arg=path)
                pg.click("#check")
                running[i] = (path, time.monotonic())
        for i, (path, t0) in list(running.items()):
            if pages[i].evaluate(_DONE):
                out.append(Shown(path=path, seconds=time.monotonic() - t0, **pages[i].evaluate(_SHOWN)))
                del running[i]
            else:
                assert time.monotonic() - t0 < WAIT_S, f"{path}: no answer within {WAIT_S:.0f} s"
        time.sleep(0.1)
    errors = [e for pg in pages for e in pg.errors]
    for pg in pages:
        pg.close()
    assert errors == [], errors
    return sorted(out, key=lambda s: order[s.path])


def documented_refusal(path: str) -> str | None:
    """The reason its directory's README gives for refusing the example (a row naming
    ``[stem]`` with ``refused: why``), else None."""
    readme = (ROOT / "examples" / path).parent / "README.md"
    stem = Path(path).stem
    if not readme.is_file():
        return None
    for row in readme.read_text().splitlines():
        if f"[{stem}]" in row and "refused:" in row:
            return row.split("refused:", 1)[1].strip(" |")
    return None


def expected_liveness(path: str) -> str | None:
    m = re.search(r"^\s*\.expect-liveness\s+(\w+)", (ROOT / "examples" / path).read_text(), re.M)
    return m.group(1) if m else None


def problems(s: Shown) -> list[str]:
    """What is wrong with what the page showed for one example (empty: nothing)."""
    bad = []
    if s.error is not None:
        m = _LOCATED.match(s.error)
        if documented_refusal(s.path) is None:
            bad.append(f"refused, and no README documents why: {s.error.splitlines()[0]}")
        elif m is None or not 1 <= int(m.group(1)) <= s.lines:
            bad.append(f"refused at no line of its {s.lines}-line editor: {s.error.splitlines()[0]}")
        return bad
    if not s.status.startswith(ANSWERED) or s.verdict is None:
        bad.append(f"no answer: status {s.status!r}, verdict {s.verdict!r}")
    if s.verdict is not None and RUN_TOGETHER.search(s.verdict):
        bad.append(f"the verdict and its note run together: {s.verdict!r}")
    if s.answer == "timeout" and "the time limit" not in (s.verdict or ""):
        bad.append(f"a time limit not said in the verdict: {s.verdict!r}")
    if s.path.startswith("liveness/") and not s.liveness_on:
        bad.append("a liveness example opened with liveness off")
    want = expected_liveness(s.path)
    if want is not None and s.liveness_on and s.answer != "timeout":
        words = {"hangs": "an execution hangs", "terminates": "no execution hangs"}[want]
        if s.liveness is None or words not in s.liveness or "✓ agrees" not in s.liveness:
            bad.append(f".expect-liveness {want}, the page shows {s.liveness!r}")
        elif want == "hangs" and "hang:" not in s.findings:
            bad.append("a hang without its hang finding")
    if s.path.startswith("teaching/") and s.graph != "svg":
        bad.append(f"a tutorial step without its graph: {s.graph!r}")
    if s.drawing is not None and (wrong := faults(s.drawing)):  # every drawing, the tutorial's among them
        bad.append(f"the drawing's geometry: {'; '.join(wrong[:3])}")
    return bad


def table(shown: list[Shown]) -> str:
    rows = [f"{'example':58} {'answer':12} {'s':>6} {'graph':8} verdict / error"]
    for s in shown:
        said = (s.error or s.verdict or s.status).splitlines()[0][:70]
        graph = "-" if s.graph is None else "drawn" if s.graph == "svg" else "none"
        rows.append(f"{s.path:58} {s.answer:12} {s.seconds:6.1f} {graph:8} {said}")
        if graph == "none":  # why nothing was drawn
            rows.append(f"{'':87} {s.graph.splitlines()[0][:100]}")
    counts: dict[str, int] = {}
    for s in shown:
        counts[s.answer] = counts.get(s.answer, 0) + 1
    rows.append(", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + f" of {len(shown)}")
    return "\n".join(rows)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The playground as ``ptxmm serve`` starts it (two workers, the default 10 s limit) and a
    Chromium."""
    sync = pytest.importorskip("playwright.sync_api", reason="Playwright not installed "
                               "(pip install 'ptxmm[web-test]')")
    assert sync is sync_api
    log = tmp_path_factory.mktemp("serve") / "server.log"
    with running_server("--workers", str(PAGES), log=log) as url, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield url, browser
        browser.close()


def _wanted(paths: list[str]) -> list[str]:
    return [p for p in paths if HAS_NVCC or not p.endswith(".cu")]


def test_the_first_example_of_each_group_answers(served):
    url, browser = served
    pg = _new_page(browser, url)
    listed = _listed(pg)
    groups = pg.evaluate("() => Array.from(document.querySelectorAll('#example optgroup'))"
                         ".map(g => g.querySelector('option').value)")
    pg.close()
    assert len(listed) >= 200 and {"teaching", "classic", "kernels", "liveness"} <= {
        p.rsplit("/", 1)[0] for p in groups if "/" in p}
    # every bundled file is in the list (a kernel's .cu stands for its .ptx twin)
    files = [p for p in (ROOT / "examples").rglob("*") if p.suffix in (".ptx", ".litmus", ".cu")]
    bundled = {p.relative_to(ROOT / "examples").as_posix() for p in files
               if p.suffix != ".ptx" or not p.with_suffix(".cu").is_file()}
    assert set(listed) == bundled
    sample = _wanted(groups + ["liveness/spin-weak-flag.ptx"])
    shown = check_all(url, sample, browser)
    print("\n" + table(shown))
    assert {s.path: problems(s) for s in shown if problems(s)} == {}
    hang = next(s for s in shown if s.path == "liveness/spin-weak-flag.ptx")
    assert "an execution hangs" in hang.liveness and "hang: T1 spins" in hang.findings




def test_a_dat3m_litmus_test_pasted_in_answers(served):
    """The bundled examples hold no Dat3M ``.litmus`` file (the list offers none); the format is
    recognised when pasted in."""
    url, browser = served
    pg = _new_page(browser, url)
    pg.evaluate(f"ptxmmEditor.setValue({DAT3M_SB!r})")
    pg.click("#check")
    pg.wait_for_function(_DONE)
    s = pg.evaluate(_SHOWN)
    assert s["error"] is None and s["status"].startswith("checked in"), s
    assert "ALLOWED" in s["verdict"] and s["outcomes"] == 4 and s["graph"] == "svg"
    assert pg.errors == []
    pg.close()


@pytest.mark.slow  # the kernels alone (.cu, kernels/ and hopper/kernels/): minutes
def test_every_kernel_the_page_offers_answers(served):
    url, browser = served
    t0 = time.monotonic()
    pg = _new_page(browser, url)
    kernels = [p for p in _listed(pg) if p.endswith(".cu")]
    pg.close()
    shown = check_all(url, _wanted(kernels), browser)
    print("\n" + table(shown) + f"\nwall time {time.monotonic() - t0:.0f} s for {len(shown)} kernels "
          f"({PAGES} pages, {PAGES} workers)")
    assert len(shown) == len(_wanted(kernels)) and (len(shown) >= 60 or not HAS_NVCC)
    assert {s.path: problems(s) for s in shown if problems(s)} == {}


@pytest.mark.slow  # every example: minutes
def test_every_example_the_page_offers_answers(served):
    url, browser = served
    t0 = time.monotonic()
    pg = _new_page(browser, url)
    listed = _listed(pg)
    pg.close()
    shown = check_all(url, _wanted(listed), browser)
    print("\n" + table(shown) + f"\nwall time {time.monotonic() - t0:.0f} s for {len(shown)} examples "
          f"({PAGES} pages, {PAGES} workers)")
    assert len(shown) == len(_wanted(listed))
    assert {s.path: problems(s) for s in shown if problems(s)} == {}
    assert sum(s.path.startswith("teaching/") for s in shown) >= 20
