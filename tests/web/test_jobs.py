"""Issue 30: the playground's jobs without a server — requests checked field by field (every
refusal a RequestError with an HTTP 4xx, never another exception), answers equal to what the
command line prints, the examples read only by their listed names, kernels (.cu through nvcc, PTX
modules without it) and the .cu preprocessor guard."""

from __future__ import annotations

import contextlib
import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from support import DAT3M_SB as SB_LITMUS
from support import ROOT

from ptxmm.cat.parser import builtin_models
from ptxmm.cli.main import main
from ptxmm.kernel.nvcc import find_nvcc
from ptxmm.web import formats
from ptxmm.web.examples import Library
from ptxmm.web.jobs import ACCEPTS, Job, RequestError, budget, job_of, run, stopped
from ptxmm.web.kernel_source import RefusedError, check_cu, check_ptx_files, plain_ptx_files

MODELS = builtin_models()
MP = ROOT / "examples" / "mp-relaxed-acquire.ptx"


def _job(kind: str = "check", **body) -> Job:
    return job_of(kind, {"source": MP.read_text(), **body}, 10.0, MODELS)


def _cli_json(*args: str) -> dict:
    out = CliRunner().invoke(main, [*args, "--json"]).output
    return json.loads(out)


def _same(a: dict, b: dict) -> None:
    """Equal but for the file's name, the time taken and the witnesses (the solver may pick
    another execution for the same outcome or finding in another process)."""
    for d in (a, b):
        d.pop("file"), d.pop("time_s")
        for o in d["outcomes"] + d["findings"]:
            o.pop("witness")
        for f in d["findings"]:
            f.pop("outcome")
    assert a == b


@pytest.mark.parametrize("path", ["mp-relaxed-acquire.ptx", "classic/SB-fence-sc.ptx",
                                  "teaching/12-work-queue-atom-acq-rel.ptx", "spinlock-cas.ptx"])
def test_check_answers_what_check_json_prints(path):
    f = ROOT / "examples" / path
    status, body, media = run(job_of("check", {"source": f.read_text()}, 10.0, MODELS))
    assert (status, media) == (200, "application/json")
    got, want = json.loads(body), _cli_json("check", str(f), "--timeout", str(budget(10.0)))
    assert got["file"] == "playground.ptx"
    got["timeout"] = want["timeout"] = None  # the request's limit / the CLI's
    _same(got, want)


def test_litmus_format_and_options_reach_the_checker():
    body = {"source": SB_LITMUS, "format": "litmus", "model": "sc", "engine": "brute", "unroll": 1}
    status, text, _ = run(job_of("check", body, 10.0, MODELS))
    res = json.loads(text)
    assert status == 200 and res["model"] == "sc" and res["engine"] == "brute"
    assert res["holds"] is False and res["file"] == "playground.litmus"
    status, text, _ = run(job_of("check", {**body, "model": "ptx"}, 10.0, MODELS))
    assert json.loads(text)["holds"] is True  # SB's weak outcome: allowed by PTX, not by SC


def test_text_member_is_the_cli_report():
    res = json.loads(run(_job(text=True))[1])
    cli = CliRunner().invoke(main, ["check", str(MP)]).output
    assert res["text"].splitlines()[0] == cli.splitlines()[0].replace(str(MP), "playground.ptx")
    assert "ALLOWED" in res["text"] and "ALLOWED" in cli


def test_explain_and_graph_answer_what_the_cli_prints():
    status, body, _ = run(_job("explain", text=True, graph=True))
    x = json.loads(body)
    assert status == 200 and x["verdict"] == "allowed" and x["svg"].startswith("<svg")
    cli = _cli_json("explain", str(MP))
    for d in (x, cli):
        d.pop("file"), d.pop("time_s"), d.pop("text", None), d.pop("svg", None), d.pop("dot", None)
    assert x == cli
    status, svg, media = run(_job("graph"))
    assert (status, media) == (200, "image/svg+xml")
    assert svg.strip() == CliRunner().invoke(main, ["graph", str(MP)]).output.strip()


def test_program_errors_are_422_with_the_located_error():
    status, body, _ = run(job_of("check", {"source": ".global .u32 x = 0;\n.thread T0 {\n  bogus;\n}\n"},
                                 10.0, MODELS))
    err = json.loads(body)["error"]
    assert status == 422 and err["position"].startswith("playground.ptx:3:")
    assert err["kind"] in ("syntax error", "error", "not supported yet") and err["message"]


KERNELS = ROOT / "tests" / "data" / "kernels"
MP_LAUNCH = "mp<<<2, 1>>>(int data[1], int flag[1])"
needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed: .cu sources need it")


def _kinds(body: str) -> list[str]:
    return sorted({f["kind"] for f in json.loads(body)["findings"]})


def _no_nvcc(monkeypatch):
    import ptxmm.kernel.nvcc

    monkeypatch.setattr(ptxmm.kernel.nvcc, "find_nvcc", lambda: None)


def test_formats_are_listed_once_and_every_one_is_read():
    assert formats.FORMATS == tuple(formats.SUFFIX) == ("ptx", "litmus", "cu")
    assert not hasattr(formats, "register") and not hasattr(formats, "supported")
    assert formats.is_kernel("", "cu") and formats.is_kernel((KERNELS / "oob.ptx").read_text(), "ptx")
    assert not formats.is_kernel(MP.read_text(), "ptx") and not formats.is_kernel(SB_LITMUS, "litmus")


@needs_nvcc
def test_a_cu_kernel_is_compiled_and_checked_with_its_cuda_lines():
    src = (KERNELS / "mp_relaxed.cu").read_text()
    status, body, _ = run(job_of("check", {"source": src, "format": "cu", "file": "mp_relaxed.cu",
                                           "text": True}, 60.0, MODELS))
    assert status == 200, body
    assert _kinds(body) == ["assert-fails", "race"]
    assert "mp_relaxed.cu:18 assert(data[0] == 42);" in json.loads(body)["text"]
    # no file name: the source is compiled as playground.cu; the launch may come with the request
    status, body, _ = run(job_of("check", {"source": src.replace("// ptxmm: launch", "// launch"),
                                           "format": "cu", "launch": MP_LAUNCH}, 60.0, MODELS))
    assert status == 200 and _kinds(body) == ["assert-fails", "race"]
    assert json.loads(body)["file"] == "playground.cu"


@needs_nvcc
def test_nvcc_errors_and_a_missing_launch_are_located():
    status, body, _ = run(job_of("check", {"source": "__global__ void k() {\n  undefined_thing;\n}\n",
                                           "format": "cu"}, 60.0, MODELS))
    err = json.loads(body)["error"]
    assert status == 422 and err["kind"] == "nvcc error" and err["position"].endswith("playground.cu:2:1")
    status, body, _ = run(job_of("check", {"source": "__global__ void k() {}\n", "format": "cu"}, 60.0,
                                 MODELS))
    err = json.loads(body)["error"]
    assert status == 422 and "has no launch" in err["message"] and '"launch"' in err["hint"]


def test_a_ptx_module_is_checked_without_nvcc(monkeypatch):
    _no_nvcc(monkeypatch)
    ptx = (KERNELS / "mp_relaxed.ptx").read_text()
    status, body, _ = run(job_of("check", {"source": ptx, "launch": MP_LAUNCH}, 60.0, MODELS))
    assert status == 200, body
    assert _kinds(body) == ["assert-fails", "race"]
    lines = [e["text"] for f in json.loads(body)["findings"] for e in f["events"]]
    assert any("mp_relaxed.cu:18" in t for t in lines)
    status, body, _ = run(job_of("check", {"source": ptx}, 60.0, MODELS))  # no launch anywhere
    err = json.loads(body)["error"]
    assert status == 422 and err["position"] == "playground.ptx:1:1" and '"launch"' in err["hint"]
    status, body, _ = run(job_of("check", {"source": ptx, "launch": "mp<<<2, >>>()"}, 60.0, MODELS))
    err = json.loads(body)["error"]
    assert status == 422 and err["position"] == "<launch>:1:9"


@pytest.mark.parametrize("kind", ["check", "explain", "graph"])
def test_a_launch_with_a_litmus_test_is_refused(kind):
    """As the CLI refuses --launch on a litmus test: never silently ignored (red team F18)."""
    status, body, _ = run(job_of(kind, {"source": MP.read_text(), "launch": "k<<<1, 1>>>(int o[1])"},
                                 10.0, MODELS))
    err = json.loads(body)["error"]
    assert status == 422 and err["kind"] == "argument error", body
    assert err["message"] == ('"launch" applies only to kernel files (.cu, a PTX module); playground.ptx '
                              "is a litmus test")
    assert run(job_of(kind, {"source": MP.read_text()}, 10.0, MODELS))[0] == 200


def test_a_cu_kernel_without_nvcc_is_the_front_ends_located_error(monkeypatch):
    _no_nvcc(monkeypatch)
    src = (KERNELS / "mp_relaxed.cu").read_text()
    status, body, _ = run(job_of("check", {"source": src, "format": "cu"}, 60.0, MODELS))
    err = json.loads(body)["error"]
    assert status == 422 and err["kind"] == "nvcc error" and err["position"] == "playground.cu:1:1"
    assert "nvcc is not found" in err["message"]


def test_a_ptx_module_names_no_file_that_is_read(monkeypatch, tmp_path):
    """A request's `.file` path is cut to its plain name, looked up in the job's empty directory."""
    _no_nvcc(monkeypatch)
    secret = tmp_path / "secret.cu"
    secret.write_text("\n".join(f"SECRET{i}" for i in range(40)))
    ptx = (KERNELS / "mp_relaxed.ptx").read_text().replace('"mp_relaxed.cu"', f'"{secret}"')
    assert f'"{secret}"' in ptx and '.file 1 "secret.cu"' in plain_ptx_files(ptx)
    status, body, _ = run(job_of("check", {"source": ptx, "launch": MP_LAUNCH, "text": True}, 60.0, MODELS))
    assert status == 200 and "secret.cu:18" in body and "SECRET" not in body
    monkeypatch.chdir(tmp_path)  # nor a plain name in the server's directory
    ptx = (KERNELS / "mp_relaxed.ptx").read_text().replace('"mp_relaxed.cu"', '"secret.cu"')
    status, body, _ = run(job_of("check", {"source": ptx, "launch": MP_LAUNCH, "text": True}, 60.0, MODELS))
    assert status == 200 and "secret.cu:18" in body and "SECRET" not in body


def test_nvccs_ptx_may_name_only_the_kernel_and_the_cuda_headers(tmp_path):
    ok = '.file 1 "k.cu"\n.file 2 "' + str(tmp_path / "k.cu") + '"\n'
    check_ptx_files(ok, "k.ptx", [tmp_path])
    for bad in ("/etc/passwd", str(tmp_path / ".." / "x.cu"), "../x.cu", "sub/x.cu"):
        with pytest.raises(RefusedError) as e:
            check_ptx_files(ok + f'  .file 3 "{bad}"\n', "k.ptx", [tmp_path])
        assert str(e.value.pos) == "k.ptx:3:3"


BENIGN = (KERNELS / "mp_relaxed.cu").read_text()
HOSTILE = [
    '#include "/etc/passwd"', "#include </etc/passwd>", "#include <../../etc/passwd>", "#include FILE",
    "#include <cassert> junk", "#include_next <cassert>", "#import <cassert>", "#embed </etc/passwd>",
    '#line 1 "x.cu"', '# 1 "x.cu"', "#pragma GCC dependency \"/etc/passwd\"", "#pragma message(\"x\")",
    "#pragma", "#ident \"x\"", "#if __has_include(</etc/passwd>)\n#endif", '_Pragma("once")',
    '%:include "/etc/passwd"', '??=include "/etc/passwd"', '#in\\\nclude "/etc/passwd"',
    '/* a */ # /* b */ include "/etc/passwd"', '/* a\n */ #include "/etc/passwd"',
    '#include \\ \n "/etc/passwd"', 'int a = 1; /*\n*/#include "x"',
    "#define P(x) _Pr ## x", "%:define H(x) __has_incl %:%: x",
    '\x00#include "/etc/passwd"', '\ufeff#include "/etc/passwd"', '\v\f#include "/etc/passwd"',
]


@pytest.mark.parametrize("line", HOSTILE)
def test_hostile_preprocessor_lines_are_refused_at_their_line(line):
    src = BENIGN.replace("#include <cuda/atomic>", line)
    at = BENIGN.splitlines().index("#include <cuda/atomic>") + 1
    status, body, _ = run(job_of("check", {"source": src, "format": "cu"}, 10.0, MODELS))
    err = json.loads(body)["error"]
    assert status == 422 and err["kind"] == "refused", body
    assert err["position"].startswith(f"playground.cu:{at}:") or err["position"].startswith(
        f"playground.cu:{at + 1}:"), err  # a directive after a comment's end: the line it is on


@pytest.mark.parametrize("src", [
    *(p.read_text() for p in sorted(KERNELS.glob("*.cu"))),
    "#pragma unroll 4\n#pragma once\n# define N 4\n#if defined(N) && N > 2\n#else\n#endif\n#\n",
    "#include <cuda/std/atomic> // atomics\n#include /* c */ <cstdio>\n%:include <stdint.h>\n",
    '// #include "/etc/passwd" in a comment is no directive\nint x;\n',
])
def test_the_kernels_ptxmm_knows_pass_the_guard(src):
    check_cu(src, "k.cu")


DECOR = st.sampled_from(["", " ", "\t", "/* c */", "/**/ ", "\\\n", " \\ \n", "\x00", "\\\r\n", "/*\n*/"])


@settings(max_examples=300, deadline=None)
@given(before=DECOR, hash_=st.sampled_from(["#", "%:"]), gap=DECOR, after=DECOR,
       target=st.sampled_from(['"/etc/passwd"', "</etc/passwd>", "<x/../../etc/passwd>", "PATH", "<cassert"]),
       where=st.integers(0, 5))
def test_no_decoration_hides_a_hostile_include(before, hash_, gap, after, target, where):
    lines = BENIGN.splitlines()
    lines.insert(where, f"{before}{hash_}{gap}include{after}{target}")
    with pytest.raises(RefusedError):
        check_cu("\n".join(lines), "k.cu")


@pytest.mark.parametrize("body, words", [
    ([1, 2], "JSON object"),
    ({}, 'no "source"'),
    ({"source": 3}, "must be a string"),
    ({"source": "x", "model": "../../etc/passwd"}, "is not one of"),
    ({"source": "x", "model": "models/ptx.cat"}, "is not one of"),
    ({"source": "x", "format": "c"}, "is not one of"),
    ({"source": "x", "unroll": 65}, "not in the range"),
    ({"source": "x", "unroll": True}, "integer"),
    ({"source": "x", "timeout": -1}, "above 0"),
    ({"source": "x", "max_outcomes": 0}, "not in the range"),
    ({"source": "x", "sauce": 1}, 'does not take "sauce"'),
    ({"source": "x", "file": "a" * 200}, "longer than"),
])
def test_bad_requests_are_400_with_what_is_wrong(body, words):
    with pytest.raises(RequestError) as e:
        job_of("check", body, 10.0, MODELS)
    assert e.value.status == 400 and words in e.value.message
    status, text, _ = e.value.answer()
    assert status == 400 and json.loads(text)["error"]["message"] == e.value.message


def test_the_request_limit_caps_a_requested_timeout_and_names_no_file():
    assert _job(timeout=100).timeout == 10.0 and _job(timeout=2).timeout == 2.0
    assert _job(file="../../../etc/passwd").file == "passwd"  # a label in the answer; nothing is read
    assert 0 < budget(1.0) < 1.0 and budget(10.0) == 9.0


def test_a_stopped_job_is_unknown_never_a_verdict():
    for kind in ACCEPTS:
        status, body, _ = stopped(_job(kind), 3.0)
        obj = json.loads(body)
        if kind == "graph":
            assert status == 422 and obj["error"]["kind"] == "limit"
        else:
            assert status == 200 and "time limit of 3 s" in obj["unknown"]
            assert obj.get("holds") is None and obj.get("verdict", "unknown") == "unknown"


_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                            | st.text(max_size=20),
                            lambda inner: st.lists(inner, max_size=3)
                            | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(ACCEPTS)),
       st.dictionaries(st.sampled_from(["source", "format", "model", "engine", "unroll", "observe",
                                        "max_outcomes", "timeout", "outcome", "fix", "fix_bound",
                                        "text", "graph", "file", "extra"]), _json_values, max_size=6)
       | _json_values)
def test_any_json_body_is_a_job_or_a_4xx(kind, body):
    try:
        job = job_of(kind, body, 5.0, MODELS)
    except RequestError as e:
        assert 400 <= e.status < 500 and e.message
        return
    assert isinstance(job.source, str) and 0 < job.timeout <= 5.0 and job.file


def test_examples_are_read_by_their_listed_names_only():
    lib = Library()
    listing = lib.listing()
    paths = [e["path"] for e in listing]
    files = [p for p in (ROOT / "examples").rglob("*") if p.suffix in (".ptx", ".litmus", ".cu")
             and not (p.suffix == ".ptx" and p.with_suffix(".cu").is_file())]  # a kernel's twin: its .cu
    assert len(paths) == len(set(paths)) == len(files)
    for e in listing:  # a kernel is offered as a cu example, described by its launch
        if e["path"].endswith(".cu"):
            assert e["format"] == "cu" and "<<<" in e["description"]
    steps = [e for e in listing if e["group"] == "teaching"]
    assert paths[:len(steps)] == sorted(e["path"] for e in steps)  # the tutorial first, in order
    assert steps[0]["comment"].startswith("Step 1") and steps[0]["name"] == "teach-01-plain"
    assert lib.source("classic/MP-relaxed.ptx") == (ROOT / "examples/classic/MP-relaxed.ptx").read_text()
    for bad in ("../pyproject.toml", "/etc/passwd", "classic/../../pyproject.toml", "classic"):
        assert lib.source(bad) is None


def test_a_kernel_example_is_listed_once_as_its_cu(tmp_path):
    (tmp_path / "kernels").mkdir()
    for suffix in (".cu", ".ptx"):
        (tmp_path / "kernels" / ("mp" + suffix)).write_text((KERNELS / ("mp_relaxed" + suffix)).read_text())
    (tmp_path / "mp.ptx").write_text(MP.read_text())
    lib = Library(tmp_path)
    assert [(e["path"], e["format"], e["group_title"], e["description"]) for e in lib.listing()] == [
        ("mp.ptx", "ptx", "Examples", "st.relaxed alone is not a release"),
        ("kernels/mp.cu", "cu", "Kernels (CUDA)", MP_LAUNCH)]
    assert lib.source("kernels/mp.ptx") is None and lib.format("kernels/mp.cu") == "cu"


def test_host_headers_are_read_with_and_without_a_port():
    pytest.importorskip("starlette", reason="the [web] extra is not installed")
    from ptxmm.web.app import host_of

    assert [host_of(h) for h in ("127.0.0.1:8000", "LOCALHOST", "[::1]:8000", "[::1]", "::1", "a.b:1")] \
        == ["127.0.0.1", "localhost", "::1", "::1", "::1", "a.b"]
    # read exactly (issue 38): anything but a host and a port is no host
    for bad in ("[::1]evil.com:80", "[::1]evil.com", "[::1", "localhost:80:80", "[evil.com]:80",
                "localhost evil", "", "127.0.0.1:8000x", ":80", "localhost/x", "127.0.0.1@evil.com"):
        assert host_of(bad) is None, bad


def test_json_nesting_is_measured_outside_strings():
    pytest.importorskip("starlette", reason="the [web] extra is not installed")
    from ptxmm.web.app import json_depth

    text = r'{"source": "[[[{{\\", "a": [1, {"b": []}], "c": "]}\"]"}'
    assert json.loads(text)["c"] == ']}"]' and json_depth(text) == 4
    assert json_depth("[" * 100_000) == 100_000 and json_depth('"x"') == 0


def test_an_ended_worker_takes_what_it_started_and_its_job_directories_with_it():
    """A worker leads a process group: ending it at the time limit also ends nvcc compiling for it
    (in a session of its own, named in the job directory's .pgid: the sandbox), and removes the
    kernel job directories it left."""
    import multiprocessing
    import os
    import tempfile
    import time
    from pathlib import Path

    from ptxmm.web.pool import _Worker

    w = _Worker(multiprocessing.get_context("spawn"), None)
    pid = w.proc.pid
    assert os.getpgid(pid) == pid  # a group of its own
    left = Path(tempfile.gettempdir()) / f"ptxmm-web-{pid}-x"
    (left / "cache").mkdir(parents=True)
    if find_nvcc() is not None:  # a .cu job, ended while nvcc compiles it
        import threading

        from ptxmm.web.pool import WorkerDied

        src = (KERNELS / "mp_relaxed.cu").read_text()
        job = job_of("check", {"source": src, "format": "cu"}, 60.0, MODELS)

        def call():
            with contextlib.suppress(WorkerDied):  # it is ended under the call
                w.call(job)

        threading.Thread(target=call, daemon=True).start()
        t0 = time.monotonic()
        while not (nvcc := _compiling(pid)) and time.monotonic() - t0 < 30:
            time.sleep(0.02)
        assert nvcc, "nvcc did not start"
    w.end()
    assert not w.proc.is_alive() and not left.exists()
    t0 = time.monotonic()  # nothing of the groups is left running (zombies wait for their reaper);
    groups = [pid] + ([nvcc] if find_nvcc() is not None else [])  # nvcc alone would run on for seconds
    while any(_group(g, live=True) for g in groups) and time.monotonic() - t0 < 1:
        time.sleep(0.05)
    assert [_group(g, live=True) for g in groups] == [[] for _ in groups]


def _group(pgid: int, live: bool = False) -> list[int]:
    """The processes of a process group (Linux: /proc); ``live``: not the zombies."""
    import os

    out = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and os.getpgid(int(d)) == pgid:
                with open(f"/proc/{d}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
                if not (live and state in "ZX"):
                    out.append(int(d))
        except OSError:
            pass
    return out


def _compiling(worker: int) -> int | None:
    """The process group of nvcc compiling the playground's .cu for ``worker`` (its sandbox's, named
    in the job directory), when a process of it runs (nvcc, or what it runs)."""
    import tempfile
    from pathlib import Path

    for d in Path(tempfile.gettempdir()).glob(f"ptxmm-web-{worker}-*"):
        with contextlib.suppress(OSError, ValueError):
            pgid = int((d / ".pgid").read_text())
            for p in _group(pgid, live=True):
                with contextlib.suppress(OSError), open(f"/proc/{p}/cmdline", "rb") as f:
                    if b"playground" in f.read():
                        return pgid
    return None


def test_the_playground_reads_an_expectation_as_check_and_test_do():
    """One definition of "an expectation" (syntax/expect.py): a `// ptxmm: expect` comment that
    contradicts the `.expect` line is the same located error in the playground as in `ptxmm
    check`; a comment alone sets the expectation the report's `expected` shows."""
    src = MP.read_text()
    assert ".expect allowed" in src
    bad = src.replace(".expect allowed", ".expect allowed\n// ptxmm: expect forbidden")
    status, body, _ = run(job_of("check", {"source": bad}, 10.0, MODELS))
    err = json.loads(body)["error"]
    assert status == 422 and err["position"].startswith("playground.ptx:")
    line = int(err["position"].split(":")[1])
    assert "ptxmm: expect forbidden" in bad.splitlines()[line - 1]
    alone = src.replace(".expect allowed", "// ptxmm: expect allowed")
    status, body, _ = run(job_of("check", {"source": alone}, 10.0, MODELS))
    assert status == 200 and json.loads(body)["expected"] is True


@pytest.mark.parametrize("outcome", ["T1:%r1=\uff11", "T1:%r1=99999999999"])
def test_an_outcome_in_other_digits_or_too_large_is_422(outcome):
    """As --outcome: ASCII digits, a value its register can hold (red team F23)."""
    status, body, _ = run(job_of("explain", {"source": MP.read_text(), "outcome": outcome}, 10.0, MODELS))
    assert status == 422, body


def test_a_worker_stopped_at_the_limit_leaves_no_unretrieved_exception(monkeypatch):
    """The pool ends a worker at the time limit; its pending call then fails with WorkerDied. That
    failure is expected and handled: before, every stopped job printed "Future exception was never
    retrieved ... ptxmm.web.pool.WorkerDied" with a traceback in the server's log (red team F7)."""
    import asyncio
    import gc
    import threading

    from ptxmm.web import pool as P

    class Worker:  # a worker that answers only when it is ended: with the error a killed one gives
        def __init__(self, ctx, memory_mb):
            self.ended = threading.Event()

        def call(self, job):
            self.ended.wait(10)
            raise P.WorkerDied("the worker was ended at the limit")

        def end(self):
            self.ended.set()

    monkeypatch.setattr(P, "_Worker", Worker)
    seen: list = []

    async def serve():
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: seen.append(ctx))
        p = P.Pool(1)
        await p.start()
        assert await p.run(object(), 0.05) is None and p.stats.stopped == 1
        for _ in range(50):  # the replacement ends the old worker; its call fails
            await asyncio.sleep(0.02)
            gc.collect()
        p.close()

    asyncio.run(serve())
    assert [c.get("message") for c in seen] == []
