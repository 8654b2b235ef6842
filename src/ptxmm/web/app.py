"""The playground's ASGI application (Starlette): the page and its assets from the package, the
bundled examples, and the HTTP API over the Python API (docs/web.md).

Safe by default: requests are bounded in size (413) and nesting (400), typed (415 unless JSON: a
page of another site cannot post here without a preflight this server never grants), checked field by field
(400 with what is wrong), and each runs in a worker process under a time limit (the verdict
unknown past it, never a hung worker: :mod:`ptxmm.web.pool`). A program the checker refuses is a
422 with its located error. Nothing is read from the file system but the package's own assets and
examples, and only by names from their listings."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .examples import Library
from .jobs import JSON, KINDS, RequestError, error_object, job_of, reuse_key, stopped
from .pool import Cancelled, Pool, WorkerDied, default_workers

STATIC = Path(__file__).resolve().parent / "static"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_DEPTH = 32  # levels of arrays and objects in a request body (a request needs 1)
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    # no script but the page's own (and the vendored Graphviz's WebAssembly, compiled in the page);
    # no network but this server
    "Content-Security-Policy": "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' "
                               "'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; "
                               "base-uri 'none'; form-action 'none'",
}


@dataclass(frozen=True)
class Config:
    """How the server runs: ``time_limit`` seconds per request (a request may ask for less),
    ``max_body`` bytes per request, ``workers`` processes, ``max_waiting`` requests queued for a
    worker before the server answers 503, ``memory_mb`` per worker (None: no cap), ``hosts`` the
    Host headers accepted (None: any; the default accepts only the loopback names, so that a
    page of another site cannot reach the server through a name it controls)."""

    time_limit: float = 10.0
    max_body: int = 256 * 1024
    workers: int = 0  # 0: default_workers()
    max_waiting: int = 256
    memory_mb: int | None = 4096
    hosts: tuple[str, ...] | None = LOOPBACK
    cache_dir: str | None = None  # nvcc's outputs shared by the workers (None: a temporary directory)


class Api:
    """The handlers, over one pool of workers and the example library."""

    def __init__(self, config: Config):
        from ..cat.parser import builtin_models

        self.config = config
        self.pool = Pool(config.workers or default_workers(), config.memory_mb)
        self.library = Library()
        self.models = builtin_models()
        self.own_cache = config.cache_dir is None
        self.cache = config.cache_dir or tempfile.mkdtemp(prefix="ptxmm-web-nvcc-")

    def close(self) -> None:
        self.pool.close()
        if self.own_cache:
            shutil.rmtree(self.cache, ignore_errors=True)

    # ----- the page's data ----------------------------------------------------------------------

    async def index(self, request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html", headers=HEADERS)

    async def info(self, request: Request) -> Response:
        from .. import __version__
        from ..api_args import ENGINES, OBSERVE, UNROLL_MAX
        from ..explanation.graph import SPACINGS, dot_available
        from ..kernel.nvcc import find_nvcc
        from ..queries.hangs import MODELS as PROGRESS
        from . import sandbox
        from .formats import FORMATS

        models = [{"name": n, "description": _first_line(p)} for n, p in self.models.items()]
        return _json({"version": __version__, "models": models, "engines": list(ENGINES),
                      "observe": list(OBSERVE), "unroll_max": UNROLL_MAX,
                      "formats": [{"name": f, "supported": True} for f in FORMATS],
                      "nvcc": find_nvcc() is not None and sandbox.available(),
                      "progress_models": list(PROGRESS),
                      # the page lays a drawing's DOT out again at these (nodesep, ranksep) until
                      # its labels are clear, as graph.laid_out does; else the server's own (dot)
                      "graph_spacings": [list(s) for s in SPACINGS], "dot": dot_available(),
                      "time_limit_s": self.config.time_limit, "max_body": self.config.max_body})

    async def health(self, request: Request) -> Response:
        s = self.pool.stats
        return _json({"ok": True, "workers": len(self.pool.all), "waiting": self.pool.waiting,
                      "served": s.served, "stopped_at_limit": s.stopped, "crashed": s.died,
                      "cancelled": s.cancelled})

    async def model(self, request: Request) -> Response:
        """A built-in model file's text (a model or a library it includes), by its listed name:
        the start of a model written in the page."""
        from ..cat.parser import builtin_files

        name = request.path_params["name"]
        path = builtin_files().get(name)
        if path is None:
            return _json(error_object(name, "not found", f"no built-in model file {name!r}", None,
                                      "GET /api/info lists the models"), 404)
        return _json({"name": name, "source": path.read_text()})

    async def examples(self, request: Request) -> Response:
        return _json(self.library.listing())

    async def example(self, request: Request) -> Response:
        path = request.path_params["path"]
        text = self.library.source(path)
        if text is None:
            return _json(error_object(path, "not found", f"no bundled example {path!r}", None,
                                      "GET /api/examples lists them"), 404)
        return _json({"path": path, "source": text, "format": self.library.format(path)})

    # ----- the API ------------------------------------------------------------------------------

    async def work(self, request: Request) -> Response:
        kind = request.url.path.rsplit("/", 1)[-1]
        try:
            token = job_token(request.headers.get(JOB_HEADER))
            body = await self._body(request)
            job = replace(job_of(kind, body, self.config.time_limit, self.models), cache=self.cache)
        except RequestError as e:
            return _answer(e.answer())
        if self.pool.waiting >= self.config.max_waiting:
            return _answer(RequestError(503, "the server is busy: too many requests are waiting",
                                        "retry in a moment", "busy").answer())
        try:
            # to the worker that checked this text last, when idle: it kept the program and check
            answer = await self.pool.run(job, job.timeout, token, key=reuse_key(job))
        except Cancelled as e:
            return _answer((409, json.dumps(error_object(job.file, "cancelled", str(e), None,
                                                         "nothing was decided; run it again")), JSON))
        except WorkerDied as e:
            return _answer((500, json.dumps(error_object(job.file, "internal error",
                                                         f"the worker running the check ended: {e}")),
                            JSON))
        return _answer(answer if answer is not None else stopped(job, job.timeout))

    async def cancel(self, request: Request) -> Response:
        """``POST /api/cancel`` with ``{"job": TOKEN}``: end the running request that carried
        ``X-Ptxmm-Job: TOKEN`` (its worker is stopped; that request answers 409 "cancelled")."""
        try:
            body = await self._body(request)
            if not isinstance(body, dict) or set(body) != {"job"}:
                raise RequestError(400, 'the body must be {"job": TOKEN}',
                                   f"TOKEN: the {JOB_HEADER} header of the request to cancel")
            token = job_token(body["job"])
        except RequestError as e:
            return _answer(e.answer())
        return _json({"job": token, "cancelled": self.pool.cancel(token)})

    async def _body(self, request: Request):
        """The request's JSON, read within the size limit. A body past the limit is still read
        (up to 64 times the limit) so that the client sees the 413, not a broken connection."""
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            raise RequestError(415, f"the body must be JSON (Content-Type: application/json), "
                               f"not {media or 'untyped'}", None, "unsupported media type")
        limit = self.config.max_body
        data, size = bytearray(), 0
        async for chunk in request.stream():
            size += len(chunk)
            if size <= limit:
                data += chunk
            elif size > 64 * limit:
                break
        if size > limit:
            raise RequestError(413, f"the body has {'more than ' if size > 64 * limit else ''}"
                               f"{size} bytes; this server takes at most {limit}",
                               "a litmus test or kernel is a few kilobytes; ptxmm serve "
                               "--max-body raises the limit", "too large")
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise RequestError(400, f"the body is not UTF-8 text (byte {e.start})") from None
        depth = json_depth(text)
        if depth > MAX_DEPTH:
            raise RequestError(400, f"the body is nested {depth} deep; this server takes at most "
                               f"{MAX_DEPTH} levels of arrays and objects",
                               '{"source": "...", "format": "ptx"}')
        try:
            return json.loads(text)
        except RecursionError:  # not reached past the depth check; never a 500
            raise RequestError(400, "the body is nested too deeply") from None
        except json.JSONDecodeError as e:
            raise RequestError(400, f"the body is not JSON: {e.msg} at line {e.lineno} column {e.colno}",
                               '{"source": "...", "format": "ptx"}') from None


JOB_HEADER = "X-Ptxmm-Job"
_TOKEN_TEXT = re.compile(r"[A-Za-z0-9_-]{8,64}")


def job_token(v) -> str | None:
    """A client's name for a request (for ``/api/cancel``): 8 to 64 letters, digits, ``-``, ``_``."""
    if v is None:
        return None
    if not isinstance(v, str) or not _TOKEN_TEXT.fullmatch(v):
        raise RequestError(400, f"a job's name ({JOB_HEADER}) is 8 to 64 letters, digits, - or _")
    return v


def _first_line(p: Path) -> str:
    text = p.read_text()
    return text.splitlines()[0] if text else ""


def _json(obj, status: int = 200) -> Response:
    return JSONResponse(obj, status, headers=HEADERS)


def _answer(a) -> Response:
    status, body, media = a
    return Response(body, status, headers=HEADERS, media_type=media)


async def _not_found(request: Request, exc) -> Response:
    code = getattr(exc, "status_code", 404)
    return _json(error_object(request.url.path, "not found" if code == 404 else "bad request",
                              getattr(exc, "detail", "") or "not found", None,
                              "the page is at /, the API under /api/ (docs/web.md)"), code)


async def _internal(request: Request, exc) -> Response:
    return _json(error_object(request.url.path, "internal error", f"{type(exc).__name__}: {exc}"), 500)


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
# RFC 9110's Host: uri-host [":" port], the host a name or IPv4 address, or an IPv6 one in brackets
_HOST = re.compile(r"(?:\[([0-9a-f:.]+)\]|([a-z0-9._~!$&'()*+,;=%-]+))(?::[0-9]*)?")


def json_depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets in strings not counted)."""
    depth = deepest = 0
    for m in _TOKEN.finditer(text):
        c = m.group(0)
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def host_of(header: str) -> str | None:
    """The host of a Host header, without its port (``[::1]:8000`` → ``::1``); None when the
    header is not a host and port, read exactly (``[::1]evil.com:80`` is none)."""
    import ipaddress

    h = header.strip().lower()
    m = _HOST.fullmatch(h)
    if m is None:
        with contextlib.suppress(ValueError):  # a bare IPv6 address (``::1``)
            return str(ipaddress.IPv6Address(h)) if ":" in h else None
        return None
    if m.group(1) is not None:
        try:
            ipaddress.IPv6Address(m.group(1))
        except ValueError:
            return None
        return m.group(1)
    return m.group(2)


class HostCheck:
    """ASGI middleware: a request whose Host header names none of ``hosts`` gets a 400 (the error
    object): a page of another site cannot reach a loopback server through a name it controls."""

    def __init__(self, app, hosts: tuple[str, ...]):
        self.app, self.hosts = app, hosts

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if host_of(host) not in self.hosts:
                await _json(error_object(scope.get("path", ""), "bad request",
                                         f"this server answers requests for {', '.join(self.hosts)} "
                                         f"only, not {host!r}", None,
                                         "open it as http://127.0.0.1:PORT/, or start it with "
                                         "--host"), 400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(config: Config | None = None) -> Starlette:
    """The playground as an ASGI application (its worker processes start with it: lifespan)."""
    config = config or Config()
    api = Api(config)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        await api.pool.start()
        try:
            yield
        finally:
            await asyncio.get_running_loop().run_in_executor(None, api.close)

    routes = [Route("/", api.index), Route("/api/info", api.info), Route("/api/health", api.health),
              Route("/api/examples", api.examples), Route("/api/examples/{path:path}", api.example),
              Route("/api/cancel", api.cancel, methods=["POST"]), Route("/api/models/{name}", api.model),
              *(Route(f"/api/{k}", api.work, methods=["POST"]) for k in KINDS),
              Mount("/static", StaticFiles(directory=STATIC), name="static")]
    middleware = [Middleware(HostCheck, hosts=config.hosts)] if config.hosts else []
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                    exception_handlers={404: _not_found, 405: _not_found, 500: _internal})
    app.state.api = api
    return app
