"""Issue 30: `ptxmm serve` as a user runs it — a real uvicorn server in its own process, on the
loopback interface only — answering the HTTP API, refusing hostile requests with a clear 4xx or
an unknown verdict within the time limit, and serving 50 concurrent checks with no error while
staying up. Every request loop here is bounded in count and time."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import ROOT

pytest.importorskip("starlette", reason="the [web] extra is not installed (pip install 'ptxmm[web]')")
pytest.importorskip("uvicorn", reason="the [web] extra is not installed (pip install 'ptxmm[web]')")

LIMIT = 3.0  # seconds per request on the test server
SLACK = 2.5  # for a loaded machine: the answer's transfer, a worker's hand-over


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_server(*args: str, log: Path | None = None):
    """``ptxmm serve`` on a free loopback port with ``args``; yields its base URL; stopped after."""
    port = _free_port()
    out = open(log, "w") if log else subprocess.DEVNULL
    proc = subprocess.Popen([sys.executable, "-m", "ptxmm.cli", "serve", "--port", str(port), *args],
                            stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if get(url + "/api/health")[0] == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None, "the server exited" + (f": {log.read_text()}" if log else "")
            assert time.monotonic() < deadline, "the server did not start within 90 s"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log:
            out.close()


def get(url: str, headers: dict | None = None) -> tuple[int, str, dict]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


def post(url: str, body, media: str = "application/json") -> tuple[int, str, float]:
    """Status, body and seconds taken."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": media}, method="POST")
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode(), time.monotonic() - t0
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), time.monotonic() - t0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log = tmp_path_factory.mktemp("serve") / "server.log"
    with running_server("--time-limit", str(LIMIT), "--workers", "2", log=log) as url:
        yield url


def _src(path: str) -> str:
    return (ROOT / "examples" / path).read_text()


def test_the_api_checks_explains_and_draws(server):
    status, body, _ = post(server + "/api/check", {"source": _src("mp-relaxed-acquire.ptx")})
    res = json.loads(body)
    assert status == 200 and res["holds"] is True and res["agrees"] is True and res["n_outcomes"] == 4
    status, body, _ = post(server + "/api/explain", {"source": _src("classic/MP-rel-acq.ptx"), "text": True})
    x = json.loads(body)
    assert status == 200 and x["verdict"] == "forbidden" and "Causality" in x["text"]
    status, body, _ = post(server + "/api/graph", {"source": _src("classic/MP-rel-acq.ptx")})
    assert status == 200 and body.startswith("<svg") and "</svg>" in body
    status, body, _ = post(server + "/api/graph", {"source": _src("mp-relaxed-acquire.ptx"),
                                                   "outcome": "T1:%r0=0 T1:%r1=0"})
    assert status == 200 and "<svg" in body


def test_the_page_its_assets_and_the_examples_are_served(server):
    status, html, headers = get(server + "/")
    assert status == 200 and "codemirror.js" in html and "script-src 'self'" in headers[
        "content-security-policy"]
    for asset in ("codemirror/codemirror.js", "codemirror/codemirror.css", "codemirror/LICENSE",
                  "ptx-mode.js", "app.js", "app.css"):
        assert get(f"{server}/static/{asset}")[0] == 200, asset
    status, body, _ = get(server + "/api/examples")
    listing = json.loads(body)
    assert status == 200 and listing[0]["path"] == "teaching/01-mp-plain.ptx"
    status, body, _ = get(server + "/api/examples/classic/MP-relaxed.ptx")
    assert status == 200 and json.loads(body)["source"] == _src("classic/MP-relaxed.ptx")
    for bad in ("../pyproject.toml", "..%2Fpyproject.toml", "%2E%2E/%2E%2E/pyproject.toml", "nope.ptx"):
        status, body, _ = get(f"{server}/api/examples/{bad}")
        assert status == 404 and "[build-system]" not in body, bad
    for bad in ("../pyproject.toml", "..%2F..%2F..%2F..%2Fpyproject.toml", "..%2f__init__.py"):
        status, body, _ = get(f"{server}/static/{bad}")
        assert status == 404 and "[build-system]" not in body and "import" not in body, bad
    info = json.loads(get(server + "/api/info")[1])
    assert {m["name"] for m in info["models"]} >= {"ptx", "sc"} and info["time_limit_s"] == LIMIT
    assert [(f["name"], f["supported"]) for f in info["formats"]] == [("ptx", True), ("litmus", True),
                                                                       ("cu", True)]
    assert isinstance(info["nvcc"], bool)


def test_a_kernel_is_checked_through_the_api(tmp_path):
    """A PTX module (nvcc's output) needs no nvcc; a .cu is compiled by the worker (skipped without
    nvcc, where it is the front end's located error). A server of its own: nvcc's time counts
    against the request's limit, and the shared server's is short."""
    with running_server("--time-limit", "60", "--workers", "1", log=tmp_path / "server.log") as server:
        _kernel_requests(server)


def _kernel_requests(server: str) -> None:
    kernels = ROOT / "tests" / "data" / "kernels"
    status, body, _ = post(server + "/api/check", {"source": (kernels / "mp_relaxed.ptx").read_text(),
                                                   "launch": "mp<<<2, 1>>>(int data[1], int flag[1])"})
    assert status == 200 and {f["kind"] for f in json.loads(body)["findings"]} == {"race", "assert-fails"}
    status, body, _ = post(server + "/api/check", {"source": (kernels / "mp_relaxed.cu").read_text(),
                                                   "format": "cu"})
    from ptxmm.kernel.nvcc import find_nvcc

    if find_nvcc() is None:
        assert status == 422 and _error(body)["kind"] == "nvcc error"
        pytest.skip("nvcc is not installed: the .cu half of this test needs it")
    assert status == 200, body
    assert {f["kind"] for f in json.loads(body)["findings"]} == {"race", "assert-fails"}
    assert "playground.cu:18" in body


LOOP = """.test loop-forever
.global .u32 x = 0;
.thread T0 {
L:
    ld.global.u32 %r0, [x];
    bra L;
}
exists (T0:%r0 == 1)
"""


def _threads(n: int) -> str:
    body = "\n".join(f".thread T{i} {{\n    st.global.u32 [x], {i};\n    ld.global.u32 %r0, [x];\n}}"
                     for i in range(n))
    return f".test many\n.global .u32 x = 0;\n{body}\nexists (T0:%r0 == 1)\n"


def _four_threads() -> str:  # tests/cli/test_timeout_and_progress.py's input: far longer than the limit
    lines = [".global .u32 x = 0;"]
    for t in range(4):
        # fence.sc: the SAT enumeration declines it (engines/z3/satenum.py), so the listing stays
        # far slower than the limit (without it 20,000 outcomes can come before the limit)
        lines += [f".thread T{t} {{", f"    st.global.u32 [x], {2 * t + 1};", "    fence.sc.gpu;",
                  "    ld.global.u32 %r0, [x];", f"    st.global.u32 [x], {2 * t + 2};",
                  "    ld.global.u32 %r1, [x];", "}"]
    return "\n".join(lines + ["exists (T0:%r0 == 8)", ""])


def _error(body: str) -> dict:
    return json.loads(body)["error"]


def test_hostile_requests_get_a_clear_4xx(server):
    status, body, t = post(server + "/api/check", b"{" + b" " * (10 << 20) + b"}")
    assert status == 413 and "at most 262144" in _error(body)["message"] and t < LIMIT
    status, body, _ = post(server + "/api/check", bytes(range(256)) * 8)
    assert status == 400 and "not UTF-8" in _error(body)["message"]
    status, body, _ = post(server + "/api/check", b'{"source": "x",')
    assert status == 400 and "not JSON" in _error(body)["message"]
    status, body, _ = post(server + "/api/check", b"source=x", "application/x-www-form-urlencoded")
    assert status == 415
    status, body, _ = post(server + "/api/check", {"source": "\x00\x01\x02 binary \xff"})
    assert status == 422 and _error(body)["position"] == "playground.ptx:1:1"
    status, body, _ = post(server + "/api/check", {"source": _threads(100)})
    assert status == 422 and "100 threads" in _error(body)["message"]
    hostile = '__global__ void k() {}\n#include "/etc/passwd"\n'  # refused: nvcc never reads it
    status, body, _ = post(server + "/api/check", {"source": hostile, "format": "cu"})
    err = _error(body)
    assert status == 422 and err["kind"] == "refused" and err["position"] == "playground.cu:2:2"
    status, body, _ = post(server + "/api/nothing", {"source": "x"})
    assert status == 404 and _error(body)["kind"] == "not found"
    assert get(server + "/api/check")[0] == 405
    status, body, _ = get(server + "/api/health", {"Host": "attacker.example:80"})  # DNS rebinding
    assert status == 400 and "attacker.example" in _error(body)["message"]
    status, body, _ = get(server + "/api/health", {"Host": "[::1]evil.com:80"})  # read exactly
    assert status == 400 and "evil.com" in _error(body)["message"]
    deep_field = b'{"source": ' + b'{"a":' * 20_000 + b"1" + b"}" * 20_001
    for nested in (b"[" * 100_000 + b"]" * 100_000, deep_field):
        status, body, _ = post(server + "/api/check", nested)  # was a 500 (RecursionError)
        assert status == 400 and "nested" in _error(body)["message"]
    assert get(server + "/api/health", {"Host": "localhost:1"})[0] == 200


@pytest.mark.slow  # a wall-clock assertion: fails on a loaded machine
def test_long_work_is_unknown_within_the_time_limit_and_the_server_stays_up(server):
    status, body, t = post(server + "/api/check", {"source": LOOP})
    res = json.loads(body)
    assert status == 200 and res["status"] == "no-execution" and res["holds"] is None and t < LIMIT
    status, body, t = post(server + "/api/check", {"source": _four_threads()})
    res = json.loads(body)
    assert status == 200 and res["status"] == "timeout" and res["holds"] is None
    assert res["outcomes_left_out"] > 0 and t < LIMIT + SLACK
    # explain watches no clock of ours: its worker is ended at the limit, a new one takes its place
    status, body, t = post(server + "/api/explain", {"source": _four_threads(), "fix": True})
    x = json.loads(body)
    assert status == 200 and x["verdict"] == "unknown" and "time limit" in x["unknown"]
    assert LIMIT - 0.5 < t < LIMIT + SLACK
    # a drawing is one query: on a quiet machine it may well be done before the limit; either it
    # answers, or it is stopped at the limit with the "limit" error, never later
    status, body, t = post(server + "/api/graph", {"source": _four_threads()})
    assert (status == 200 and body.lstrip().startswith("<") or
            status == 422 and _error(body)["kind"] == "limit") and t < LIMIT + SLACK, (status, body[:200])
    status, body, _ = post(server + "/api/check", {"source": _src("mp-spin.ptx")})
    assert status == 200 and json.loads(body)["agrees"] is True
    health = json.loads(get(server + "/api/health")[1])
    assert health["ok"] and health["stopped_at_limit"] >= 1 and health["crashed"] == 0


QUICK = ["classic/MP-relaxed.ptx", "classic/MP-rel-acq.ptx", "classic/SB-relaxed.ptx", "classic/LB-weak.ptx",
         "classic/CoRR-weak.ptx", "classic/2+2W-relaxed.ptx", "mp-spin.ptx", "mp-relaxed-acquire.ptx",
         "teaching/05-release-acquire-ops.ptx", "teaching/06-relaxed-store-is-not-release.ptx"]


@pytest.mark.slow  # a wall-clock assertion: fails on a loaded machine
def test_50_concurrent_checks_all_answered_and_the_server_stays_up(server):
    files = [QUICK[i % len(QUICK)] for i in range(50)]
    t0 = time.monotonic()
    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(lambda f: post(server + "/api/check", {"source": _src(f)}), files))
    wall = time.monotonic() - t0
    assert [a[0] for a in answers] == [200] * 50
    results = [json.loads(a[1]) for a in answers]
    assert all(r["status"] == "ok" and r["agrees"] is True for r in results)
    by_file: dict[str, set] = {}
    for f, r in zip(files, results):
        by_file.setdefault(f, set()).add(json.dumps([sorted(o["values"].items()) for o in r["outcomes"]]))
    assert all(len(v) == 1 for v in by_file.values())  # the same answer for the same test, every time
    assert wall < 120
    health = json.loads(get(server + "/api/health")[1])
    assert health["ok"] and health["crashed"] == 0 and health["waiting"] == 0


def test_concurrent_checks_all_answered_alike_and_the_server_stays_up(server):
    """The default run's version of the two above, without a clock: ten concurrent checks, each
    answered with the same outcomes as its twin; then a check past the limit is unknown."""
    files = [QUICK[i % 5] for i in range(10)]
    with ThreadPoolExecutor(10) as pool:
        answers = list(pool.map(lambda f: post(server + "/api/check", {"source": _src(f)}), files))
    assert [a[0] for a in answers] == [200] * 10
    results = [json.loads(a[1]) for a in answers]
    assert all(r["status"] == "ok" and r["agrees"] is True for r in results)
    by_file: dict[str, set] = {}
    for f, r in zip(files, results):
        by_file.setdefault(f, set()).add(json.dumps([sorted(o["values"].items()) for o in r["outcomes"]]))
    assert all(len(v) == 1 for v in by_file.values())
    status, body, _ = post(server + "/api/check", {"source": _four_threads()})
    res = json.loads(body)
    assert status == 200 and res["status"] == "timeout" and res["holds"] is None
    health = json.loads(get(server + "/api/health")[1])
    assert health["ok"] and health["crashed"] == 0 and health["waiting"] == 0


def _measure(rounds: int = 3) -> None:
    """The figures of docs/web.md: ``python tests/web/test_server.py`` (a loopback server with
    --time-limit 3 --workers 2; bounded: 3 rounds of 50 checks and 3 of each hostile request)."""
    import statistics

    with running_server("--time-limit", str(LIMIT), "--workers", "2") as url:
        for _ in range(rounds):
            files = [QUICK[i % len(QUICK)] for i in range(50)]
            t0 = time.monotonic()
            with ThreadPoolExecutor(50) as pool:
                answers = list(pool.map(lambda f: post(url + "/api/check", {"source": _src(f)}), files))
            wall, lat = time.monotonic() - t0, sorted(a[2] for a in answers)
            print(f"50 concurrent checks: wall {wall:.2f} s, statuses {sorted({a[0] for a in answers})}, "
                  f"latency median {statistics.median(lat):.2f} s, max {lat[-1]:.2f} s")
        for _ in range(rounds):
            for what, path, body in (("4-thread check", "/api/check", {"source": _four_threads()}),
                                     ("4-thread explain --fix", "/api/explain",
                                      {"source": _four_threads(), "fix": True}),
                                     ("10 MB body", "/api/check", b"{" + b" " * (10 << 20) + b"}"),
                                     ("100 threads", "/api/check", {"source": _threads(100)})):
                status, text, t = post(url + path, body)
                obj = json.loads(text)
                said = obj.get("status") or obj.get("verdict") or obj.get("error", {}).get("kind")
                print(f"{what}: HTTP {status} {said} in {t:.2f} s (limit {LIMIT:g} s)")
        print("health:", get(url + "/api/health")[1])


if __name__ == "__main__":
    _measure()


def test_a_port_in_use_is_one_error_line_before_the_banner(monkeypatch):
    """Red team round 4, F27: ``serve --port <in use>`` says so in one line and exits 2; it does
    not print the playground's address, nor leave it to uvicorn's log."""
    import uvicorn
    from click.testing import CliRunner

    from ptxmm.cli.main import main

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("uvicorn started on a port in use"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = CliRunner().invoke(main, ["serve", "--port", str(port)])
    assert r.exit_code == 2, r.output
    assert r.output.strip() == (f"error: cannot listen on 127.0.0.1:{port}: the port is in use "
                                "(give another --port)")
