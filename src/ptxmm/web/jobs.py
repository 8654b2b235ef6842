"""One request of the playground's HTTP API as a job: its fields checked (:func:`job_of`, in the
server, before any work), and run (:func:`run`, in a worker process) into an HTTP answer —
status, body, media type. A job is a plain picklable record; nothing here imports the web
framework, so a worker process loads only the checker.

What a job answers is what the command line prints: ``/api/check`` the object of
``ptxmm check --json`` (written by :mod:`ptxmm.report.jsonout`), ``/api/explain`` that of
``ptxmm explain --json``, ``/api/graph`` the SVG of ``ptxmm graph``. A program the front end or
the checker refuses is a 422 with the located error object of docs/json-schema.md ("errors").

A kernel (a ``.cu`` source or a PTX module) runs in a fresh empty directory; its ``.cu`` is checked
by :mod:`.kernel_source` (a friendly first refusal) and compiled by nvcc in :mod:`.sandbox`, which
sees that directory and the CUDA toolkit only; nvcc's time counts against the request's limit."""

from __future__ import annotations

import io
import json
import re
import time
from dataclasses import dataclass
from typing import Any

from ..api_args import ENGINES, OBSERVE, UNROLL_MAX
from ..engines import start_fresh
from ..errors import PtxmmError
from . import reuse
from .formats import FORMATS, SUFFIX, format_of, is_kernel, parse_source
from .reuse import RECENT, Kept

KINDS = ("check", "explain", "graph")
# a worker keeps its last checks for the same text's drawing and explanation (reuse.py); False:
# every job does its own work (the tests compare the two)
REUSE = True
MAX_NAME = 80
MAX_MODEL = 64 * 1024  # characters of a model written in a request
Answer = tuple[int, str, str]  # HTTP status, body, media type
JSON = "application/json"


class RequestError(Exception):
    """A request the API refuses before any work: its HTTP status, message and hint."""

    def __init__(self, status: int, message: str, hint: str | None = None, kind: str = "bad request"):
        super().__init__(message)
        self.status, self.message, self.hint, self.kind = status, message, hint, kind

    def answer(self) -> Answer:
        return self.status, json.dumps(error_object("<request>", self.kind, self.message, None,
                                                    self.hint)), JSON


def error_object(file: str, kind: str, message: str, pos=None, hint: str | None = None) -> dict:
    """The error object of docs/json-schema.md ("errors"): the CLI's, for a file not checked."""
    return {"file": file, "error": {"kind": kind, "message": message,
                                    "position": str(pos) if pos else None, "hint": hint}}


@dataclass(frozen=True)
class Job:
    kind: str
    source: str
    file: str
    fmt: str | None
    model: str = "ptx"
    engine: str = "auto"
    unroll: int = 2
    observe: str = "all"
    max_outcomes: int | None = None
    timeout: float = 10.0  # seconds the request may take (the server's limit, or less)
    outcome: str | None = None
    fix: bool = False
    fix_bound: int = 400
    text: bool = False  # add the CLI's plain-text report as a "text" member
    graph: bool = False  # explain: add the execution graph as "svg" and "dot" members
    dot: bool = False  # graph: answer the DOT source (the page lays it out with Graphviz in WebAssembly)
    launch: str | None = None  # a kernel's launch (else its `// ptxmm: launch` line)
    finding: str | None = None  # graph: draw the witness of the check's first finding of this kind
    liveness: bool | None = None  # also look for hangs (None: as check() decides, on for kernels)
    progress: str = "fair"  # the progress model liveness assumes
    model_text: str | None = None  # a cat model written in the request (instead of ``model``)
    cache: str | None = None  # the directory of nvcc's outputs shared by the workers (not a field)


# every field a request may carry, with a check of its value → the value the job gets
def _text(name: str, limit: int | None = None):
    def conv(v: Any) -> str:
        if not isinstance(v, str):
            raise RequestError(400, f'"{name}" must be a string, not {_json_type(v)}')
        if limit is not None and len(v) > limit:
            raise RequestError(400, f'"{name}" is longer than {limit} characters')
        return v
    return conv


def _choice(name: str, choices) -> Any:
    def conv(v: Any) -> str:
        if not isinstance(v, str) or v not in choices:
            raise RequestError(400, f'"{name}": {json.dumps(v)[:40]} is not one of '
                               + ", ".join(choices))
        return v
    return conv


def _int(name: str, lo: int, hi: int | None) -> Any:
    def conv(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise RequestError(400, f'"{name}" must be an integer, not {_json_type(v)}')
        if v < lo or (hi is not None and v > hi):
            raise RequestError(400, f'"{name}": {v} is not in the range {lo}..{hi if hi is not None else ""}')
        return v
    return conv


def _bool(name: str) -> Any:
    def conv(v: Any) -> bool:
        if not isinstance(v, bool):
            raise RequestError(400, f'"{name}" must be true or false, not {_json_type(v)}')
        return v
    return conv


def _json_type(v: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(v), type(v).__name__)


def _fields(models) -> dict:
    return {"source": _text("source"), "format": _choice("format", FORMATS),
            "file": _text("file", MAX_NAME), "model": _choice("model", models),
            "engine": _choice("engine", ENGINES), "unroll": _int("unroll", 0, UNROLL_MAX),
            "observe": _choice("observe", OBSERVE), "max_outcomes": _int("max_outcomes", 1, None),
            "timeout": _seconds, "outcome": _text("outcome", 2000), "fix": _bool("fix"),
            "fix_bound": _int("fix_bound", 1, 10_000), "text": _bool("text"), "graph": _bool("graph"),
            "dot": _bool("dot"),
            "launch": _text("launch", 2000), "model_text": _text("model_text", MAX_MODEL),
            "liveness": _bool("liveness"), "progress": _progress, "finding": _choice("finding", FINDINGS)}


def _progress(v: Any) -> str:
    """A progress model (``fair``, ``obe``, ``gpu=obe,cta=fair``: queries/hangs), as the CLI's
    ``--progress`` reads it."""
    from ..errors import ArgumentError
    from ..queries.hangs import Progress

    if not isinstance(v, str) or len(v) > 100:
        raise RequestError(400, f'"progress" must be a progress model (text), not {_json_type(v)}')
    try:
        return str(Progress.parse(v))
    except ArgumentError as e:
        raise RequestError(400, f'"progress": {e.message}', e.hint) from None


def _seconds(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
        raise RequestError(400, '"timeout" must be a number of seconds above 0')
    return float(v)


# which fields each endpoint reads (others are refused: a typo is not silently ignored)
_COMMON = ("source", "format", "file", "model", "model_text", "unroll", "text", "launch")
ACCEPTS = {"check": _COMMON + ("engine", "observe", "max_outcomes", "timeout", "liveness", "progress"),
           "explain": _COMMON + ("outcome", "fix", "fix_bound", "graph", "timeout", "liveness", "progress"),
           "graph": _COMMON + ("outcome", "timeout", "finding", "progress", "dot")}
FINDINGS = ("race", "assert-fails", "out-of-bounds", "hang", "trap")  # explanation/findings.py KINDS


def job_of(kind: str, body: Any, limit: float, models) -> Job:
    """The job a request body asks for; ``limit``: the server's seconds per request (a request
    may ask for less with "timeout"); ``models``: the model names it may name (the built-in
    ones: a request names no file)."""
    if not isinstance(body, dict):
        raise RequestError(400, f"the body must be a JSON object, not {_json_type(body)}",
                           '{"source": "...", "format": "ptx"}')
    unknown = sorted(set(body) - set(ACCEPTS[kind]))
    if unknown:
        raise RequestError(400, f"/api/{kind} does not take {', '.join(map(json.dumps, unknown))}",
                           "it takes " + ", ".join(ACCEPTS[kind]))
    if "source" not in body:
        raise RequestError(400, 'the body has no "source"', '{"source": "...", "format": "ptx"}')
    conv = _fields(models)
    args = {k: conv[k](v) for k, v in body.items() if v is not None or k == "source"}
    fmt = args.pop("format", None)
    name = _safe_name(args.pop("file", None), fmt, args["source"])
    args["timeout"] = min(args.get("timeout", limit), limit)
    if kind == "graph":
        args["text"] = False
    if "model_text" in args and "model" in args:
        raise RequestError(400, 'give "model" (a built-in model) or "model_text" (a model written '
                           'here), not both')
    if "finding" in args and "outcome" in args:
        raise RequestError(400, 'give "outcome" or "finding" to draw, not both')
    if args.get("progress", "fair") != "fair" and not (args.get("liveness") or args.get("finding") == "hang"):
        raise RequestError(400, f'"progress": {args["progress"]} applies only with "liveness": true '
                           "(the progress model is the one liveness assumes)",
                           'add "liveness": true, or leave "progress" out')
    return Job(kind=kind, file=name, fmt=fmt, **args)


def _safe_name(name: str | None, fmt: str | None, source: str) -> str:
    """The file name the answer shows: the request's (its last path component; it names no file
    that is read), else ``playground`` with the format's suffix."""
    if name:
        name = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name or name in (".", ".."):
        name = "playground" + SUFFIX[fmt or format_of("", source)]
    if fmt == "cu" or name.endswith(".cu"):
        # nvcc compiles the file of this name: a plain word, never an option, of the format's suffix
        stem = re.sub(r"[^\w.+-]", "_", name[:-3] if name.endswith(".cu") else name).lstrip("-.")
        name = (stem or "playground") + SUFFIX[fmt or "cu"]
    return name


# ----- in the worker ------------------------------------------------------------------------------


def budget(limit: float) -> float:
    """The checker's own timeout within a request's ``limit``: room left to write the answer
    before the worker would be stopped (a quarter of the limit, at most a second)."""
    return limit - min(1.0, limit / 4)


def run(job: Job) -> Answer:
    """The answer to ``job``: 200 with the CLI's JSON (or SVG), 422 with the error object when
    the program or the model is refused."""
    try:
        kept = RECENT.get(reuse_key(job)) if job.kind != "check" else None
        if kept is not None:  # this worker checked the same program: its work is not done again
            return _reusing(job, kept)
        start_fresh()  # the witnesses a fresh `ptxmm` process finds, whatever this worker did before
        fmt = job.fmt or format_of(job.file, job.source)
        if is_kernel(job.source, fmt):
            return _kernel(job, fmt)
        prog = _litmus(job, fmt)
        return HANDLERS[job.kind](job, prog)
    except PtxmmError as e:
        return 422, json.dumps(error_object(job.file, e.kind, e.message, e.pos, e.hint)), JSON
    except RecursionError:
        return 422, json.dumps(error_object(job.file, "limit", "the program is nested too deeply for "
                                            "the checker", None, "simplify the program")), JSON


def _litmus(job: Job, fmt: str):
    """A litmus test's Program; a "launch" with it is refused as the CLI refuses --launch on a
    litmus test (ptxmm.loading), never ignored."""
    from ..errors import ArgumentError
    from ..kernel.kernels import KernelArgs

    try:
        return parse_source(job.source, job.file, fmt,
                            None if job.launch is None else KernelArgs(launch=job.launch))
    except ArgumentError as e:
        if job.launch is not None and "--launch" in e.message:
            e.message = e.message.replace("--launch", '"launch"')
            e.hint = 'a litmus test states its own condition and threads: leave "launch" out'
        raise


def _kernel(job: Job, fmt: str) -> Answer:
    """A kernel job, in an empty directory of its own (nvcc's cache too): the ``.cu`` is checked
    for preprocessor lines that could read a file, written there and compiled in the sandbox
    (refused where there is none); the PTX (the request's or nvcc's) may name no file outside
    the directory but the CUDA headers."""
    import contextlib
    import os
    from dataclasses import replace

    from ..errors import SourcePos
    from ..kernel.kernels import KernelArgs
    from ..kernel.launch import parse_launch
    from . import sandbox as nvcc_sandbox
    from .compile_cache import CompileCache
    from .kernel_source import RefusedError, check_cu, check_ptx_files, cuda_include, plain_ptx_files, sandbox

    t0 = time.monotonic()
    if job.launch is not None:
        parse_launch(job.launch, SourcePos("<launch>", 1, 1))  # its errors located in the field
    args = KernelArgs(launch=job.launch)
    if fmt == "cu":
        if not nvcc_sandbox.available():
            raise RefusedError(nvcc_sandbox.UNAVAILABLE, SourcePos(job.file, 1, 1),
                               nvcc_sandbox.UNAVAILABLE_HINT)
        check_cu(job.source, job.file)  # a first, friendly refusal; the sandbox is the guard
    with sandbox() as tmp, contextlib.ExitStack() as stack:
        old = os.environ.get("PTXMM_CACHE")
        os.environ["PTXMM_CACHE"] = str(tmp / "cache")
        stack.callback(_restore, "PTXMM_CACHE", old)
        if fmt == "cu":
            from ..kernel.nvcc import compile_cu

            wall = max(0.1, budget(job.timeout) - (time.monotonic() - t0))
            cache = CompileCache(job.cache) if job.cache else None
            stack.enter_context(nvcc_sandbox.compiling(tmp, nvcc_sandbox.Limits(
                wall=wall, cpu=int(wall) + 2), job.file, cache, job.source))
            (tmp / job.file).write_text(job.source)
            ptx, _ = compile_cu(job.file)  # cached: the front end's compile below reads it back
            try:
                check_ptx_files(ptx, job.file[:-3] + ".ptx", [tmp] + [d for d in [cuda_include()] if d])
            except PtxmmError as e:
                raise in_cuda_source(e, ptx, job.file) from None
            source = job.source
        else:
            ptx, source = None, plain_ptx_files(job.source)
        try:
            prog = parse_source(source, job.file, fmt, args)
            left = max(0.1, job.timeout - (time.monotonic() - t0))
            job = replace(job, timeout=left)
            return HANDLERS[job.kind](job, prog, ptx=ptx)
        except PtxmmError as e:
            if e.message.endswith("has no launch"):
                e.hint = ('add a line `// ptxmm: launch KERNEL<<<GRID, BLOCK>>>(int buf[N], ...)` or '
                          'give "launch" in the request')
            raise e if ptx is None else in_cuda_source(e, ptx, job.file) from None


_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)", re.M)
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)


def in_cuda_source(e: PtxmmError, ptx: str, file: str) -> PtxmmError:
    """``e`` (an error of nvcc's PTX of the request's ``file``, which the user never sees) located
    at the CUDA line that PTX line came from: the last ``.loc`` of ``file`` before it (else the
    source's first line), the PTX line quoted in the message."""
    ptx_name = file[:-3] + ".ptx"
    if e.pos is None or e.pos.file != ptx_name:
        return e
    from ..errors import SourcePos

    lines = ptx.splitlines()
    at = min(max(e.pos.line, 1), len(lines) or 1)
    src = getattr(e.pos, "src", None)  # a KernelPos: its CUDA line, read from the .loc already
    if src is not None and re.split(r"[/\\]", src.file)[-1] == file:
        line, col = src.line, max(src.col, 1)
    else:
        own = {m.group(1) for m in _FILE.finditer(ptx) if re.split(r"[/\\]", m.group(2))[-1] == file}
        line, col = 1, 1
        for m in _LOC.finditer("\n".join(lines[:at])):
            if m.group(1) in own:
                line, col = int(m.group(2)), max(int(m.group(3)), 1)
    text = " ".join(lines[at - 1].split()).rstrip(";") if lines else ""
    if text and text not in " ".join(e.message.split()):  # the PTX it names, unless it does
        e.message = f"{e.message} (in nvcc's PTX of this line: `{text[:80]}`)"
    e.pos = SourcePos(file, line, col)
    return e


def _restore(name: str, value: str | None) -> None:
    import os

    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


MODEL_FILE = "playground.cat"


def model_of(job: Job):
    """The model a job names (a built-in one), or the one its request wrote ("model_text": read
    from no file, its includes only built-in files; its errors located in ``playground.cat``)."""
    if job.model_text is None:
        return job.model
    from ..cat.parser import model_from_text, require_axioms

    model = model_from_text(job.model_text, MODEL_FILE)
    require_axioms(model)
    return model


def _check(job: Job, prog, *, ptx: str | None = None, checked=None) -> Answer:
    from ..queries.checker import check
    from ..report.jsonout import write_result

    res = check(prog, model_of(job), engine=job.engine, unroll=job.unroll, observe=job.observe,
                verdict_only=job.observe == "condition", max_outcomes=job.max_outcomes,
                timeout=budget(job.timeout), liveness=job.liveness, progress_model=job.progress)
    if REUSE:  # the page's drawing and explanation of this text come next: kept for them
        RECENT.put(reuse_key(job), Kept(prog, ptx, res))
    res.timeout = job.timeout  # the request's limit, in the report
    out = io.StringIO()
    write_result(res, out)
    if not job.text:
        return 200, out.getvalue() + "\n", JSON
    from ..report.termtext import Writer
    from ..report.text import render

    report = io.StringIO()
    for w in res.program.warnings:
        report.write(str(w) + "\n")
    render(res, Writer(report, colour=False))
    obj = json.loads(out.getvalue())
    obj["text"] = report.getvalue()
    return 200, json.dumps(obj, indent=2) + "\n", JSON


def _explain(job: Job, prog, *, ptx: str | None = None, checked=None) -> Answer:
    from ..explanation.holding import explained, unlisted_text

    model = model_of(job)
    # the fix search within the request's limit (less a second for the witness, text and drawing):
    # the answer arrives with the fixes found so far rather than the worker stopped at the limit;
    # where the rejected candidates cannot be listed (%globaltimer), the solver's verdict
    x, why = explained(prog, model, outcome=job.outcome, unroll=job.unroll, checked=checked, fix=job.fix,
                       fix_bound=job.fix_bound, fix_budget_s=max(0.5, budget(job.timeout) - 1.0))
    obj = x.to_json() | ({"unlisted": why} if why else {})
    hangs = None
    if job.liveness:  # as `ptxmm explain --liveness`: each hang, where and why, after the outcome's
        from ..queries.hangs import find_hangs

        hangs = find_hangs(prog, model, job.unroll, job.progress)
        obj |= {"hangs": [h.to_json() for h in hangs], "progress": job.progress}
    if job.text:
        obj["text"] = unlisted_text(x, why) if why else str(x)
        if hangs is not None:
            obj["text"] += "\n" + ("\n".join(h.explained() for h in hangs) if hangs else
                                  f"liveness: no execution hangs (progress {job.progress})")
    if job.graph:
        from ..explanation.graph import dot_source, svg

        g = None if x.unknown else x.graph if x.graph is not None else _holding(job, prog, x, checked)
        obj["svg"] = svg(g) if g is not None else None
        obj["dot"] = dot_source(g) if g is not None else None
    return 200, json.dumps(obj, indent=2) + "\n", JSON


def _drawn(job: Job, g) -> Answer:
    """The drawing as ``ptxmm graph`` writes it: its SVG, or with ``dot`` the DOT source that the
    page lays out in the browser (``ptxmm graph -o out.dot``)."""
    from ..explanation.graph import dot_source, svg

    if job.dot:
        return 200, dot_source(g), "text/vnd.graphviz; charset=utf-8"
    return 200, svg(g) + "\n", "image/svg+xml"


def _graph(job: Job, prog, *, ptx: str | None = None, checked=None, kept: Kept | None = None) -> Answer:
    """The drawing; where the program is kept (:mod:`.reuse`), kept too: the page asks the same
    drawing again as the server's SVG when its own layout of the DOT leaves a label unclear."""
    what = (job.outcome, job.finding, job.progress)
    g = kept.drawings.get(what) if kept is not None else None
    if g is not None:
        return _drawn(job, g)
    if job.finding is not None:  # as `ptxmm graph --finding KIND` (a hang: under job.progress)
        from ..explanation.findings import finding_graph

        g = finding_graph(prog, model_of(job), kind=job.finding, unroll=job.unroll, progress=job.progress)
    else:
        from ..explanation.holding import condition_drawing

        g = condition_drawing(prog, model_of(job), outcome=job.outcome, unroll=job.unroll,
                              checked=checked)[0]
    if kept is not None:
        kept.drawings[what] = g
    return _drawn(job, g)


HANDLERS = {"check": _check, "explain": _explain, "graph": _graph}


def reuse_key(job: Job) -> str:
    """The key of the program and check a job is about (:mod:`.reuse`; the pool's preference)."""
    return reuse.key(job.source, job.fmt, job.file, job.launch, job.model, job.model_text, job.unroll)


def _reusing(job: Job, kept: Kept) -> Answer:
    """A graph or explain job on the program this worker checked last (:mod:`.reuse`): no nvcc,
    no parse; the check handed to the explanation; errors located as :func:`_kernel` locates them."""
    try:
        if job.kind == "graph":
            return _graph(job, kept.prog, checked=kept.checked, kept=kept)
        return HANDLERS[job.kind](job, kept.prog, checked=kept.checked)
    except PtxmmError as e:
        raise e if kept.ptx is None else in_cuda_source(e, kept.ptx, job.file) from None


def _holding(job: Job, prog, x, checked=None):
    """As ``ptxmm graph``: where the test's ``forall`` (or ``~exists``) holds and no candidate
    execution reaches its opposite, one allowed execution, its title saying so
    (explanation/holding.py); else None."""
    if job.outcome is not None or x.allowed:
        return None
    from ..explanation.holding import holding_graph

    held = holding_graph(prog, model_of(job), job.unroll, checked=checked)
    return held[0] if held is not None else None


def stopped(job: Job, limit: float) -> Answer:
    """The answer for a job stopped at the server's time limit (its worker was ended): the
    verdict unknown, as ``ptxmm check --timeout`` reports it, never a guess."""
    why = f"the time limit of {limit:g} s per request passed: the worker was stopped"
    if job.kind == "graph":
        return 422, json.dumps(error_object(job.file, "limit", why, None,
                                            "nothing to draw without an execution; simplify "
                                            "the program or lower --unroll")), JSON
    if job.kind == "explain":
        return 200, json.dumps({"name": None, "file": job.file, "model": job.model,
                                "outcome": job.outcome, "verdict": "unknown", "unknown": why},
                               indent=2) + "\n", JSON
    return 200, json.dumps({"name": None, "file": job.file, "model": job.model, "holds": None,
                            "outcomes": [], "n_outcomes": None, "status": "timeout",
                            "timeout": limit, "unknown": why}, indent=2) + "\n", JSON
