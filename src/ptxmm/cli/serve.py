"""`ptxmm serve` (cli.py adds it to the command group when it is named): the web playground under
uvicorn. Needs the ``[web]`` extra."""

from __future__ import annotations

import ipaddress

import click

from ..errors import PtxmmError


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _can_listen(host: str, port: int) -> None:
    """Bind ``host:port`` as uvicorn will (SO_REUSEADDR) and let it go: a port in use, an address
    not of this machine, a port below 1024 without the right, is one error line and exit 2, before
    the banner (not uvicorn's log line after it)."""
    import socket

    from .common import _fail

    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(addr)
    except OSError as e:
        import errno

        why = "the port is in use (give another --port)" if e.errno == errno.EADDRINUSE else \
            f"{e.strerror or e}"
        _fail(PtxmmError(f"cannot listen on {host}:{port}: {why}"))


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="address to listen on (anything but loopback lets other machines run checks here)")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="port")
@click.option("--workers", type=click.IntRange(1, 64), default=None,
              help="worker processes running checks (default: the cores, at most 4)")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), default=10.0,
              show_default=True, help="seconds per request; past it the verdict is unknown")
@click.option("--max-body", type=click.IntRange(1024), default=256 * 1024, show_default=True,
              help="bytes per request body")
@click.option("--memory", "memory_mb", type=click.IntRange(0), default=4096, show_default=True,
              help="MiB of address space per worker (0: no cap)")
def serve(host, port, workers, time_limit, max_body, memory_mb) -> None:
    """Start the web playground: write, check, explain and draw tests in a browser.

    Listens on 127.0.0.1 unless --host says otherwise; open the address it prints."""
    try:
        import uvicorn

        from ..web.app import LOOPBACK, Config, create_app
    except ImportError as e:
        from .common import _fail

        _fail(PtxmmError(f"ptxmm serve needs the web extra ({e.name} is not installed)", None,
                         "pip install 'ptxmm[web]'"))
    local = _loopback(host)
    if not local:
        click.echo(f"warning: listening on {host}: anyone who can reach it can run checks here",
                   err=True)
    config = Config(time_limit=time_limit, max_body=max_body, workers=workers or 0,
                    memory_mb=memory_mb or None, hosts=LOOPBACK if local else None)
    _can_listen(host, port)
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"ptxmm playground on http://{shown}:{port}/  (Ctrl-C stops it)", err=True)
    uvicorn.run(create_app(config), host=host, port=port, log_level="warning")
