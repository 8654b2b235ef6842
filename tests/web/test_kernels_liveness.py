"""Issue 42 (items 1, 2, 4): kernels in the playground as on the command line — nvcc's own
``.file`` paths resolved then checked, the CUDA headers kernel authors include, errors located in
the CUDA source the user sees, a compile cache shared by the workers — liveness through the API
(a switch and the progress model), and a running request cancelled by its client."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import replace

import pytest
from support import ROOT

from ptxmm.cat.parser import builtin_models
from ptxmm.kernel.nvcc import find_nvcc
from ptxmm.web import sandbox
from ptxmm.web.examples import Library
from ptxmm.web.jobs import RequestError, in_cuda_source, job_of, run
from ptxmm.web.kernel_source import RefusedError, allowed_header, check_cu, check_ptx_files

MODELS = builtin_models()
HAS_SANDBOX = find_nvcc() is not None and sandbox.available()
needs_sandbox = pytest.mark.skipif(not HAS_SANDBOX, reason="nvcc is not installed, or user namespaces "
                                   "are not available here (the playground then refuses .cu)")
LIBRARY = Library()
KERNELS = [e["path"] for e in LIBRARY.listing() if e["format"] == "cu"]
# one of each kind the playground refused before: atomicAdd (nvcc's `.file` with `..`), <cuda.h>,
# <cuda/latch>, <cuda/semaphore>, `#pragma nv_diag_suppress`, <cooperative_groups/reduce.h>
ONCE_REFUSED = ["kernels/histogram.cu", "kernels/real/cg-awbarrier-block-reduce.cu",
                "hopper/kernels/tma-tensor-store.cu", "kernels/latch-arrive-wait.cu",
                "kernels/binary-semaphore-lock.cu", "kernels/barrier-arrive-wait.cu",
                "kernels/real/cg-grid-sync-reduce.cu"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("nvcc-cache"))


def _run(kind: str, body: dict, cache: str | None = None, limit: float = 120.0) -> tuple[int, dict]:
    job = job_of(kind, body, limit, MODELS)
    status, text, _ = run(replace(job, cache=cache) if cache else job)
    return status, json.loads(text)


def _example(path: str, kind: str = "check", cache: str | None = None, **fields) -> tuple[int, dict]:
    return _run(kind, {"source": LIBRARY.source(path), "file": path.rsplit("/", 1)[-1], **fields}, cache)


# ----- the guard: headers, pragmas, nvcc's .file paths ---------------------------------------------


@pytest.mark.parametrize("header", [
    "cuda.h", "cuda/barrier", "cuda/atomic", "cuda/ptx", "cuda/latch", "cuda/std/semaphore",
    "cooperative_groups.h", "cooperative_groups/reduce.h", "cub/cub.cuh", "cub/block/block_reduce.cuh",
    "cuda_runtime.h"])
def test_the_headers_kernel_authors_include_pass_the_guard(header):
    assert allowed_header(header)
    check_cu(f"#include <{header}>\n#pragma nv_diag_suppress static_var_with_dynamic_init\n", "k.cu")


@pytest.mark.parametrize("header", ["cuda/../../etc/passwd", "cub/./x", "cuda/.hidden", "cuda//x", "cudax/y",
                                    "etc/passwd", "/etc/passwd", "cub/", "cuda/a b", "bits/stdc++.h"])
def test_other_headers_are_refused(header):
    assert not allowed_header(header)
    with pytest.raises(RefusedError) as e:
        check_cu(f"int a;\n#include <{header}>\n", "k.cu")
    assert str(e.value.pos).startswith("k.cu:2:")


def test_nvccs_own_file_paths_are_resolved_then_checked(tmp_path):
    cuda = tmp_path / "cuda"
    (cuda / "include").mkdir(parents=True)
    (cuda / "bin").mkdir()
    (cuda / "targets" / "x86_64-linux").mkdir(parents=True)
    (cuda / "targets" / "x86_64-linux" / "include").symlink_to(cuda / "include")
    (cuda / "include" / "device_atomic_functions.hpp").write_text("")
    (cuda / "include" / "evil.hpp").symlink_to("/etc/passwd")
    nvcc = f'.file 2 "{cuda}/bin/../targets/x86_64-linux/include/device_atomic_functions.hpp"\n'
    check_ptx_files(nvcc, "k.ptx", [tmp_path / "job", cuda / "include"])  # what nvcc writes: accepted
    for bad in (f"{cuda}/bin/../../../etc/passwd", f"{cuda}/include/evil.hpp", f"{cuda}/include/../bin/x"):
        with pytest.raises(RefusedError) as e:
            check_ptx_files(nvcc + f'.file 3 "{bad}"\n', "k.ptx", [tmp_path / "job", cuda / "include"])
        assert str(e.value.pos) == "k.ptx:2:1"


# ----- every bundled kernel answers -----------------------------------------------------------------


@needs_sandbox
@pytest.mark.parametrize("path", ONCE_REFUSED)
def test_kernels_once_refused_are_checked(path, cache):
    status, res = _example(path, cache=cache)
    assert status == 200, res
    assert res["file"] == path.rsplit("/", 1)[-1] and res["status"] == "ok" and res["holds"] is not None


@needs_sandbox
@pytest.mark.slow  # every bundled .cu through nvcc: minutes
@pytest.mark.parametrize("path", KERNELS)
def test_every_bundled_kernel_answers(path, cache):
    """Each answers (a time limit is an answer, said as such), or is refused for a reason its
    directory's README documents, located at a line of the CUDA source."""
    status, res = _example(path, cache=cache)
    if status == 422 and _documented_refusal(path):
        name = path.rsplit("/", 1)[-1]
        assert res["error"]["kind"] == "not supported yet" and res["error"]["position"].startswith(
            name + ":"), res
        return
    assert status == 200, res
    assert res["status"] in ("ok", "timeout") and "error" not in res


def _documented_refusal(path: str) -> bool:
    readme = (ROOT / "examples" / path).parent / "README.md"
    stem = path.rsplit("/", 1)[-1][:-3]
    return readme.is_file() and any(f"[{stem}]" in row and "refused:" in row
                                    for row in readme.read_text().splitlines())


@needs_sandbox
def test_a_second_request_of_the_same_kernel_runs_no_nvcc(cache, monkeypatch):
    src = LIBRARY.source("kernels/mp-relaxed-flag.cu") + "\n// cached\n"
    calls = []
    real = sandbox.run

    def counted(cmd, *a, **k):
        calls.append(cmd)
        return real(cmd, *a, **k)

    monkeypatch.setattr(sandbox, "run", counted)
    t0 = time.monotonic()
    first = _run("check", {"source": src, "format": "cu", "text": True}, cache)
    t1 = time.monotonic()
    second = _run("check", {"source": src, "format": "cu", "text": True}, cache)
    t2 = time.monotonic()
    assert len(calls) == 1 and first[0] == second[0] == 200
    # the same answer, CUDA lines included (the cached PTX names the new job's directory)
    for _, res in (first, second):
        res.pop("time_s")
        res["text"] = re.sub(r"time [0-9.]+ ms", "", res["text"])
        for o in res["outcomes"] + res["findings"]:
            o.pop("witness", None)
    assert first == second and "playground.cu:" in second[1]["text"], second[1]["text"]
    # another source, or the same source under another name, is compiled
    _run("check", {"source": src, "file": "other.cu", "text": True}, cache)
    assert len(calls) == 2
    print(f"first {t1 - t0:.2f} s, second {t2 - t1:.2f} s")


# ----- errors located in the CUDA source ---------------------------------------------------------


def test_an_error_in_nvccs_ptx_is_located_at_its_cuda_line():
    ptx = ('.file 1 "/tmp/JOB/k.cu"\n.file 2 "/usr/local/cuda/include/x.hpp"\n.visible .entry k()\n{\n'
           '.loc 1 7 3\n  mov.u32 %r1, 1;\n.loc 2 90 1\n  add.u32 %r1, %r1, 1;\n  bogus.op;\n}\n')
    e = in_cuda_source(RefusedError("not supported", _pos("k.ptx", 9, 3)), ptx, "k.cu")
    assert str(e.pos) == "k.cu:7:3" and "`bogus.op`" in e.message  # the last .loc of k.cu, not x.hpp
    e = in_cuda_source(RefusedError("x", _pos("k.ptx", 3, 1)), ptx, "k.cu")
    assert str(e.pos) == "k.cu:1:1"  # before any .loc: the source's start
    e = in_cuda_source(RefusedError("x", _pos("other.ptx", 9, 1)), ptx, "k.cu")
    assert str(e.pos) == "other.ptx:9:1"  # not nvcc's PTX: left as it is


def _pos(file: str, line: int, col: int):
    from ptxmm.errors import SourcePos

    return SourcePos(file, line, col)


# ----- liveness ------------------------------------------------------------------------------------


def test_liveness_in_the_api_shows_the_hang():
    path = "liveness/spin-weak-flag.ptx"
    status, res = _example(path)
    assert status == 200 and res.get("liveness") is None
    assert not any(f["kind"] == "hang" for f in res["findings"])
    status, res = _example(path, liveness=True)
    assert status == 200 and res["liveness"]["verdict"] == "hangs" and res["liveness"]["agrees"] is True
    hang = next(f for f in res["findings"] if f["kind"] == "hang")
    assert "spins" in hang["detail"] and "forever" in hang["detail"]
    status, res = _example(path, liveness=True, progress="gpu=obe,cta=fair")
    assert status == 200 and res["liveness"]["progress"] == "gpu=obe,cta=fair"


def test_liveness_in_explain_explains_each_hang():
    status, x = _example("liveness/spin-weak-flag.ptx", kind="explain", liveness=True, text=True)
    assert status == 200 and len(x["hangs"]) == 1 and x["progress"] == "fair"
    assert "repeats forever" in x["text"] and "hang:" in x["text"]
    status, x = _example("mp-spin.ptx", kind="explain", liveness=True, text=True)
    assert status == 200 and x["hangs"] == [] and "no execution hangs" in x["text"]


@pytest.mark.parametrize("body, words", [
    ({"liveness": "yes"}, '"liveness" must be true or false'),
    ({"progress": "obe"}, 'applies only with "liveness": true'),
    ({"liveness": True, "progress": "sometimes"}, "not understood"),
    ({"liveness": True, "progress": "gpu=obe,gpu=fair"}, "twice"),
    ({"liveness": True, "progress": 3}, "progress model (text)"),
])
def test_liveness_fields_are_checked(body, words):
    with pytest.raises(RequestError) as e:
        job_of("check", {"source": "x", **body}, 10.0, MODELS)
    assert e.value.status == 400 and words in e.value.message


def test_graph_draws_a_hangs_witness():
    src = LIBRARY.source("liveness/spin-weak-flag.ptx")
    status, svg, media = run(job_of("graph", {"source": src, "finding": "hang"}, 60.0, MODELS))
    assert (status, media) == (200, "image/svg+xml") and "<svg" in svg and "flag" in svg
    status, svg, _ = run(job_of("graph", {"source": src, "finding": "hang", "progress": "obe"}, 60.0, MODELS))
    assert status == 200
    status, text, _ = run(job_of("graph", {"source": LIBRARY.source("mp-spin.ptx"), "finding": "hang"},
                                 60.0, MODELS))
    assert status == 422 and "finds no hang" in json.loads(text)["error"]["message"]
    with pytest.raises(RequestError) as e:
        job_of("graph", {"source": src, "finding": "hang", "outcome": "T1:%r0=1"}, 10.0, MODELS)
    assert e.value.status == 400 and "not both" in e.value.message


def test_graph_takes_no_liveness_switch():
    with pytest.raises(RequestError) as e:
        job_of("graph", {"source": "x", "liveness": True}, 10.0, MODELS)
    assert e.value.status == 400 and '"liveness"' in e.value.message


# ----- cancel --------------------------------------------------------------------------------------


def _four_threads() -> str:  # as test_server's: far longer than any limit here
    lines = [".global .u32 x = 0;"]
    for t in range(4):
        # fence.sc: the SAT enumeration declines it (engines/z3/satenum.py), so the listing stays
        # far slower than the limit (without it 20,000 outcomes can come before the limit)
        lines += [f".thread T{t} {{", f"    st.global.u32 [x], {2 * t + 1};", "    fence.sc.gpu;",
                  "    ld.global.u32 %r0, [x];", f"    st.global.u32 [x], {2 * t + 2};",
                  "    ld.global.u32 %r1, [x];", "}"]
    return "\n".join(lines + ["exists (T0:%r0 == 8)", ""])


def test_a_request_is_cancelled_by_its_client_and_its_worker_replaced(tmp_path):
    import urllib.request

    from test_server import get, post, running_server

    def post_named(url, body, token):
        req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "X-Ptxmm-Job": token})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    with running_server("--time-limit", "100", "--workers", "1", log=tmp_path / "log") as url:
        got: list = []
        t = threading.Thread(target=lambda: got.append(post_named(
            url + "/api/explain", {"source": _four_threads(), "fix": True}, "job-12345678")))
        t0 = time.monotonic()
        t.start()
        deadline = time.monotonic() + 60
        while True:  # until the job is running
            status, body, _ = post(url + "/api/cancel", {"job": "job-12345678"})
            assert status == 200
            if json.loads(body)["cancelled"]:
                break
            assert time.monotonic() < deadline
            time.sleep(0.1)
        t.join(60)
        assert got and got[0][0] == 409 and json.loads(got[0][1])["error"]["kind"] == "cancelled", got
        assert time.monotonic() - t0 < 60  # not the 100 s limit
        # nothing running by that name now; a bad name is a 400; the server goes on
        status, body, _ = post(url + "/api/cancel", {"job": "job-12345678"})
        assert status == 200 and json.loads(body)["cancelled"] is False
        assert post(url + "/api/cancel", {"job": "../x"})[0] == 400
        assert post(url + "/api/cancel", {"id": "job-12345678"})[0] == 400
        assert post_named(url + "/api/check", {"source": "x"}, "bad name!")[0] == 400
        mp_spin = (ROOT / "examples" / "mp-spin.ptx").read_text()
        status, body, _ = post(url + "/api/check", {"source": mp_spin})
        assert status == 200 and json.loads(body)["agrees"] is True
        health = json.loads(get(url + "/api/health")[1])
        assert health["ok"] and health["workers"] == 1 and health["crashed"] == 0


def test_the_server_removes_its_compile_cache(tmp_path):
    from ptxmm.web.app import Api, Config

    api = Api(Config(workers=1))
    assert os.path.isdir(api.cache)
    api.close()
    assert not os.path.exists(api.cache)
    kept = tmp_path / "kept"
    kept.mkdir()
    api = Api(Config(workers=1, cache_dir=str(kept)))
    api.close()
    assert kept.is_dir()  # a directory given is the caller's




@needs_sandbox
@pytest.mark.parametrize("include", ["#inc\\\nlude </etc/passwd>", '#inc\\\nlude "/etc/passwd"',
                                     "#include <cuda/../../../../../../etc/passwd>"])
def test_nvcc_itself_reads_no_file_of_the_server(include, monkeypatch):
    """The guard refuses each; without it nvcc (in the sandbox) still reads no /etc/passwd."""
    from ptxmm.web import kernel_source

    src = f"// ptxmm: launch k<<<1, 1>>>(int out[1])\n{include}\n__global__ void k(int *out) {{}}\n"
    status, res = _run("check", {"source": src, "format": "cu"})
    assert status == 422 and res["error"]["kind"] == "refused" and res["error"]["position"].startswith(
        "playground.cu:2:")
    monkeypatch.setattr(kernel_source, "check_cu", lambda *a: None)
    status, res = _run("check", {"source": src, "format": "cu"})
    assert status == 422 and res["error"]["kind"] == "nvcc error", res
    assert "root:x:0:0" not in json.dumps(res) and "No such file" in res["error"]["message"]


@needs_sandbox
def test_a_kernel_the_front_end_refuses_is_located_in_the_cuda_source(cache):
    # __activemask() as a membermask is modelled in warps of at most 4 lanes: 8 lanes are refused
    launch = "filter_arr<<<1, 8>>>(int dst[8], int nres[1], int src[8] = {5, 0, 7, 9, 1, 2, 3, 4}, 8)"
    status, res = _example("kernels/real/cg-warp-aggregated-inc.cu", cache=cache, launch=launch)
    err = res["error"]
    assert status == 422 and err["kind"] == "not supported yet"
    assert err["position"] == "cg-warp-aggregated-inc.cu:34:1" and "membermask" in err["message"]
