"""Issue 38: nvcc for the playground runs in a sandbox (``ptxmm.web.sandbox``), not behind a text
filter alone. No request can learn whether a file outside its job directory and the CUDA toolkit
exists — whatever splices, trigraphs, digraphs, comments, macros, ``__has_include``,
``#include``, ``#embed``, ``_Pragma`` or ``asm`` it uses, with the text guard or without it (the
answer is the same with and without the file); a compile killed at its wall time leaves no
temporary file; where user namespaces are unavailable a ``.cu`` is refused, not compiled.

These compile with nvcc for real: without nvcc (or without user namespaces, for the tests that
need the sandbox) they are skipped, saying so."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

from ptxmm.cat.parser import builtin_models
from ptxmm.kernel.nvcc import find_nvcc
from ptxmm.web import kernel_source, sandbox
from ptxmm.web.jobs import job_of, run

MODELS = builtin_models()
HAS_NVCC = find_nvcc() is not None
needs_nvcc = pytest.mark.skipif(not HAS_NVCC, reason="nvcc is not installed: these tests compile with it")
needs_sandbox = pytest.mark.skipif(
    not HAS_NVCC or not sandbox.available(),
    reason="nvcc is not installed, or user namespaces are not available here (the playground then "
           "refuses .cu: test_without_user_namespaces_a_cu_is_refused)")
HEAD = "// ptxmm: launch k<<<1, 1>>>(int out[1])\n"


def _answer(source: str, guard: bool = True, timeout: float = 60.0) -> tuple[int, dict]:
    """The playground's answer to a .cu check (with or without the text guard), its status and
    JSON, less what differs from run to run (times, the job directory's random name)."""
    patch = contextlib.nullcontext() if guard else mock.patch.object(kernel_source, "check_cu",
                                                                      lambda *a: None)
    with patch:
        status, body, _ = run(job_of("check", {"source": source, "format": "cu"}, timeout, MODELS))
    body = re.sub(r"ptxmm-web-\d+-\w+", "JOB", body)
    body = re.sub(r"tmpxft_\w+", "TMPXFT", body)
    body = re.sub(r"/\.tmp/tmp\w+", "/.tmp/TMP", body)
    return status, _untimed(json.loads(body))


def _untimed(obj):
    if isinstance(obj, dict):
        return {k: _untimed(v) for k, v in obj.items() if k != "time_s"}
    if isinstance(obj, list):
        return [_untimed(v) for v in obj]
    return obj


def _in_sandbox(script: str, job: Path) -> tuple[int, str, str]:
    from ptxmm.web.kernel_source import cuda_include

    top = cuda_include()
    r = sandbox.run(["/bin/sh", "-c", script], job, top.parent.resolve() if top else None,
                    sandbox.Limits(wall=30))
    return r.returncode, r.stdout, r.stderr


@needs_sandbox
def test_the_sandbox_shows_only_the_job_the_toolkit_and_what_nvcc_needs():
    probe_dir = Path(tempfile.mkdtemp(prefix="ptxmm-probe-"))
    job = Path(tempfile.mkdtemp(prefix="ptxmm-sandbox-test-"))
    try:
        (probe_dir / "probe.h").write_text("SECRET\n")
        (job / "mine.cu").write_text("MINE\n")
        rc, out, err = _in_sandbox(
            f"ls -A /; echo ---; ls -A /tmp; echo ---; cat /etc/os-release {probe_dir}/probe.h "
            f"{ROOT}/README.md /proc/self/status; echo ---; cat mine.cu; echo ---; echo $TMPDIR; "
            f"id -u; touch /usr/x /y 2>&1 | wc -l", job)
    finally:
        shutil.rmtree(probe_dir)
        shutil.rmtree(job)
    parts = out.split("---\n")
    assert set(parts[0].split()) <= {"bin", "lib", "lib64", "sbin", "usr", "dev", "tmp", "etc"}, out
    assert parts[1].split() == [job.name]  # /tmp holds the job's directory alone
    assert "SECRET" not in out and parts[2] == "" and err.count("No such file or directory") == 4, err
    assert parts[3] == "MINE\n"
    assert parts[4].split() == [str(job.resolve() / ".tmp"), str(sandbox.USER), "2"]  # not root; read-only


@needs_nvcc
def test_without_user_namespaces_a_cu_is_refused(monkeypatch):
    """No sandbox: the playground compiles no .cu (it says why), and still checks .ptx."""
    def unshare_fails(self):  # in the child, as the kernel refuses unshare(CLONE_NEWUSER)
        raise PermissionError(1, "unshare: Operation not permitted")

    monkeypatch.setattr(sandbox._Setup, "__call__", unshare_fails)
    assert sandbox.available.__wrapped__() is False  # what available() finds then
    monkeypatch.setattr(sandbox, "available", lambda: False)
    src = (ROOT / "tests" / "data" / "kernels" / "mp_relaxed.cu").read_text()
    status, body, _ = run(job_of("check", {"source": src, "format": "cu"}, 60.0, MODELS))
    err = json.loads(body)["error"]
    assert status == 422 and err["kind"] == "refused" and err["position"] == "playground.cu:1:1"
    assert "no user namespaces" in err["message"] and ".ptx" in err["message"]
    status, _, _ = run(job_of("check", {"source": (ROOT / "examples" / "mp-relaxed-acquire.ptx").read_text()},
                              60.0, MODELS))
    assert status == 200


# ----- the splice cases -------------------------------------------------------------------


def _probed(ask, name=lambda path: path) -> list:
    """``ask(name(path))`` with a probe file at ``path`` (in a fresh temporary directory), then
    with the file removed."""
    d = Path(tempfile.mkdtemp(prefix="ptxmm-probe-"))
    probe = d / "probe.h"
    try:
        probe.write_text("#define PROBE 1\n")
        there = ask(name(str(probe)))
        probe.unlink()
        return [there, ask(name(str(probe)))]
    finally:
        shutil.rmtree(d)


def _with_and_without(template: str, guard: bool = True) -> tuple[int, dict]:
    """The answers to ``template`` (PATH: a probe file) with the probe there and not there,
    asserted equal; and the same for /etc/os-release against a name of its length that no host
    has (the path cut out)."""
    answers = _probed(lambda path: _answer(template.replace("PATH", path), guard))
    assert answers[0] == answers[1]
    host = []
    for path in ("/etc/os-release", "/etc/os-releasZ"):
        status, obj = _answer(template.replace("PATH", path), guard)
        host.append((status, json.loads(json.dumps(obj).replace(path, "PATH"))))
    assert host[0] == host[1]
    return answers[0]


@needs_sandbox
@pytest.mark.parametrize("guard", [True, False], ids=["guard", "sandbox-alone"])
def test_a_spliced_has_include_learns_nothing(guard):
    status, obj = _with_and_without(HEAD + '#if __has_in\\\nclude("PATH")\n#define V 1\n#else\n#define V 2\n'
                                    '#endif\n__global__ void k(int *out) { out[0] = V; }\n', guard)
    assert status == 200 and [o["values"] for o in obj["outcomes"]] == [{"out[0]": 2}]  # as if absent


@needs_sandbox
def test_a_spliced_pragma_runs_in_the_sandbox_and_learns_nothing():
    status, obj = _answer(HEAD + '_Pra\\\ngma("GCC error \\"boom\\"")\n__global__ void k(int *out) {}\n')
    assert status == 422 and obj["error"]["kind"] == "nvcc error" and "boom" in obj["error"]["message"]
    status, obj = _with_and_without(HEAD + '_Pra\\\ngma("GCC dependency \\"PATH\\"")\n'
                                    '__global__ void k(int *out) { out[0] = 1; }\n')
    assert status == 422 and "No such file" in obj["error"]["message"]


@needs_sandbox
def test_a_pasted_pragma_learns_nothing():
    status, obj = _with_and_without(HEAD + '#define CAT(a, b) a#\\\n#b\n#define S(x) #x\n'
                                    'CAT(_Pra, gma)(S(GCC dependency "PATH"))\n'
                                    '__global__ void k(int *out) { out[0] = 1; }\n')
    assert status == 422 and "No such file" in obj["error"]["message"]


# ----- the property: no form learns whether a file exists -----------------------------------------

SPLICES = ("\\\n", "\\ \n", "\\\r\n", "??/\n")
HASHES = ("#", "%:", "??=", "# /**/ ", "/* c */#", " #  ")


def _word(word: str, cut: int, splice: str | None) -> str:
    if splice is None:
        return word
    i = cut % (len(word) + 1)
    return word[:i] + splice + word[i:]


# each form: the lines before the kernel (defining V, or failing) and a statement in it
FORMS = {
    "has_include": lambda h, w, p: (f'{h}if {w("__has_include")}("{p}")\n#define V 1\n#else\n#define V 2\n'
                                    "#endif\n", ""),
    "has_include_angle": lambda h, w, p: (f"{h}if {w('__has_include')}(<{p}>)\n#define V 1\n#else\n"
                                          "#define V 2\n#endif\n", ""),
    "has_include_macro": lambda h, w, p: (f'#define Q "{p}"\n#define H {w("__has_include")}\n{h}if H(Q)\n'
                                          "#define V 1\n#else\n#define V 2\n#endif\n", ""),
    "include": lambda h, w, p: (f'{h}{w("include")} "{p}"\n#define V 1\n', ""),
    "include_angle": lambda h, w, p: (f"{h}{w('include')} <{p}>\n#define V 1\n", ""),
    "include_macro": lambda h, w, p: (f'#define F "{p}"\n{h}{w("include")} F\n#define V 1\n', ""),
    "include_next": lambda h, w, p: (f'{h}{w("include_next")} "{p}"\n#define V 1\n', ""),
    "embed": lambda h, w, p: (f'static const char e[] = {{\n{h}{w("embed")} "{p}"\n, 0}};\n'
                              "#define V 1\n", ""),
    "has_embed": lambda h, w, p: (f'{h}if {w("__has_embed")}("{p}")\n#define V 1\n#else\n#define V 2\n'
                                  "#endif\n", ""),
    "pragma": lambda h, w, p: (f'{h}{w("pragma")} GCC dependency "{p}"\n#define V 1\n', ""),
    "_Pragma": lambda h, w, p: (f'{w("_Pragma")}("GCC dependency \\"{p}\\"")\n#define V 1\n', ""),
    "_Pragma_pasted": lambda h, w, p: (f"#define CAT(a, b) a{h}{h}b\n#define S(x) #x\n"
                                       f'CAT(_Pra, gma)(S(GCC dependency "{p}"))\n#define V 1\n', ""),
    "line": lambda h, w, p: (f'{h}{w("line")} 7 "{p}"\n#define V 1\n', ""),
    "asm": lambda h, w, p: ("#define V 1\n", f'{w("asm")} volatile(".file 9 \\"{p}\\";");'),
}


def _relative(path: str) -> str:
    """``path`` (absolute) named from the job's directory, upwards."""
    return "../" * 8 + path.lstrip("/")


@st.composite
def sources(draw):
    form = draw(st.sampled_from(sorted(FORMS)))
    h = draw(st.sampled_from(HASHES))
    splice = draw(st.sampled_from((None, *SPLICES)))
    cut = draw(st.integers(0, 20))
    comment = draw(st.sampled_from(("", "/* PATH */ ", "// PATH\n")))
    pre, stmt = FORMS[form](h, lambda word: _word(word, cut, splice), "{PATH}")
    src = HEAD + comment + pre + f"__global__ void k(int *out) {{ {stmt} out[0] = V; }}\n"
    guard = draw(st.sampled_from((False, False, True)))  # mostly the sandbox alone: the harder case
    return src, draw(st.sampled_from(("absolute", "relative", "host"))), guard


def _learns_nothing(case) -> None:
    src, where, guard = case
    if where == "host":  # a file every host has, against a name of its length none has
        answers = []
        for path in ("/etc/os-release", "/etc/os-releasZ"):
            status, obj = _answer(src.replace("{PATH}", path), guard)
            answers.append((status, json.loads(json.dumps(obj).replace(path, "PATH"))))
    else:
        answers = _probed(lambda path: _answer(src.replace("{PATH}", path), guard),
                          (lambda p: p) if where == "absolute" else _relative)
    assert answers[0] == answers[1], src


@needs_sandbox
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources())
def test_no_source_learns_whether_a_file_outside_the_job_exists(case):
    _learns_nothing(case)


@needs_sandbox
@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sources())
def test_no_source_learns_whether_a_file_outside_the_job_exists_many(case):
    _learns_nothing(case)


# ----- killed compiles leave nothing --------------------------------------------------------------

SLOW = HEAD + ("#include <cuda/atomic>\n#include <cuda/barrier>\n#include <cuda/std/semaphore>\n"
               "#include <cuda/std/latch>\n#include <cooperative_groups.h>\n"
               "__global__ void k(int *out) { out[0] = 1; }\n")


def _killed_compiles(n: int) -> None:
    """``n`` compiles of a kernel that takes nvcc seconds, killed at the wall time (the request's
    limit): no ``tmpxft_*`` of those nvccs, and no job directory, is left in the temp directory —
    though the killed ones had written theirs (in the job's directory)."""
    system = Path(tempfile.gettempdir())
    jobs = f"ptxmm-web-{os.getpid()}-*"
    before = set(system.glob(jobs))
    groups, had_temp_files = [], 0
    kill = sandbox.kill_group

    def recording(pgid: int) -> None:  # called as nvcc's wall time passes
        nonlocal had_temp_files
        had_temp_files += any(any(d.glob(".tmp/tmpxft*")) for d in system.glob(jobs))
        groups.append(pgid)
        kill(pgid)

    with mock.patch.object(sandbox, "kill_group", recording):
        for i in range(n):
            status, obj = _answer(SLOW, timeout=0.5 + (i % 5) * 0.1)  # nvcc gets 0.375..0.75 s
            assert status == 422 and "took more than" in obj["error"]["message"], obj
    assert set(system.glob(jobs)) == before
    ours = {f"tmpxft_{g:08x}" for g in groups}
    assert [p for p in system.glob("tmpxft*") if p.name[:15] in ours] == []
    assert had_temp_files >= n // 2, had_temp_files


@needs_sandbox
def test_killed_compiles_leave_no_temp_file():
    _killed_compiles(5)


@needs_sandbox
@pytest.mark.slow
def test_100_killed_compiles_leave_no_temp_file():
    _killed_compiles(100)
