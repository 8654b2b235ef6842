"""The liveness options of ``ptxmm check`` and ``ptxmm test`` (:mod:`ptxmm.queries.hangs`), kept here so
that cli.py registers them with one line per command."""

from __future__ import annotations

import click

PROGRESS_HELP = ("progress model for --liveness: fair|obe|lobe|hsa|unfair, or per level "
                 "gpu=M,cta=M (gpu: across CTAs, cta: within a CTA; unnamed levels: fair)")


def _progress(ctx, param, value):
    from ..errors import PtxmmError
    from ..queries.hangs import Progress

    try:
        return str(Progress.parse(value))
    except PtxmmError as e:
        raise click.BadParameter(f"{e.message} ({e.hint})") from None


def liveness_options(what: str):
    """``--liveness`` and ``--progress`` for a command; ``what`` says what --liveness does there."""
    def deco(f):
        f = click.option("--progress", "progress_model", default="fair", show_default=True,
                         callback=_progress, help=PROGRESS_HELP)(f)
        return click.option("--liveness", is_flag=True, help=what)(f)
    return deco
