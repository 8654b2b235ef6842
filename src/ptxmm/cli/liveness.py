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


def _properties(ctx, param, value):
    from ..api_args import properties_arg
    from ..errors import PtxmmError

    try:
        return properties_arg(value)
    except PtxmmError as e:
        raise click.BadParameter(f"{e.message} ({e.hint})") from None


def properties_option(what: str):
    """``--properties condition,races,sites,liveness``: what a command asks (api_args.PROPERTIES);
    ``what`` says what the defaults are there."""
    def deco(f):
        return click.option("--properties", "properties", default=None, metavar="LIST",
                            callback=_properties,
                            help="the properties to ask, comma-separated, of condition, races, sites "
                                 f"(a kernel's assertions and bounds), liveness (default: {what}); "
                                 "those not asked are reported as not asked")(f)
    return deco


def with_properties(liveness: bool, properties) -> bool | None:
    """The ``liveness`` argument of a check given --liveness and --properties: --liveness names
    liveness once more, never both (a usage error: one option says what is asked)."""
    from . import conflicts

    if properties is not None:
        conflicts.refuse(conflicts.given("liveness"), "with --properties (name liveness in its list)")
        return None
    return liveness or None
