"""The playground's screenshots in docs/img, taken in Chromium (Playwright) from a fresh
``ptxmm serve``: one command, rerun whenever the page or its drawings change.

    python tools/screenshots.py [--out docs/img] [--chromium /usr/bin/chromium]

Writes ``web-playground.png`` (README.md and docs/web.md): tutorial step 6 opened from the
example list, checked, then Fix — the verdict, the outcome table, the execution graph as explained
and the fixes — at 1400×900, the results scrolled to the top. Needs the ``[web]`` and
``[web-test]`` extras and Chromium; the drawings of ``ptxmm graph`` (docs/img/*.svg) are not
written here."""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
STEP = "teaching/06-relaxed-store-is-not-release.ptx"
WAIT_MS = 120_000


@contextlib.contextmanager
def serving(log: Path):
    """``ptxmm serve`` on a free loopback port (two workers, a 60 s limit: a loaded machine);
    yields its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with open(log, "w") as out:
        cmd = [sys.executable, "-m", "ptxmm", "serve", "--port", str(port), "--workers", "2",
               "--time-limit", "60"]
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    with urllib.request.urlopen(url + "/api/health", timeout=5):
                        break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit(f"ptxmm serve did not start: {log.read_text()}") from None
                    time.sleep(0.3)
            yield url
        finally:
            proc.terminate()
            proc.wait(30)


def _status(pg, start: str) -> None:
    pg.wait_for_function("s => document.getElementById('status').textContent.startsWith(s)", arg=start)


def playground(pg, url: str, out: Path) -> None:
    pg.goto(url + "/")
    pg.wait_for_selector("body[data-ready='1']")
    pg.select_option("#example", STEP)
    _status(pg, "opened " + STEP)
    for _ in range(2):  # the second check's time is shown: the workers' first check warms them up
        pg.click("#check")
        _status(pg, "checked in")
        pg.wait_for_function("() => !document.getElementById('graph-title').textContent.includes('drawing')")
    pg.click("#fix")
    _status(pg, "fixes")
    pg.wait_for_selector("#graph svg")
    pg.evaluate("() => { document.getElementById('results').scrollTop = 0; }")
    pg.screenshot(path=str(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img"), help="directory written (default docs/img)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with serving(out / ".serve.log") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.set_default_timeout(WAIT_MS)
        playground(pg, url, out / "web-playground.png")
        browser.close()
    (out / ".serve.log").unlink(missing_ok=True)
    if errors:
        raise SystemExit(f"the page logged errors: {errors}")
    print(f"wrote {out / 'web-playground.png'}")


if __name__ == "__main__":
    main()
