"""``ptxmm serve``: the local web playground (docs/web.md) — an editor with PTX and litmus
highlighting, the bundled examples and the tutorial's steps, Check / Explain / Fix, execution
graphs, and an HTTP API over the Python API.

The server needs the ``[web]`` extra (Starlette, uvicorn); :func:`create_app` imports it. The
modules :mod:`.formats`, :mod:`.jobs` and :mod:`.examples` do without it."""

from __future__ import annotations


def create_app(config=None):
    """The playground as an ASGI application (see :class:`ptxmm.web.app.Config`)."""
    from .app import create_app as make

    return make(config)
