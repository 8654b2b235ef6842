"""``python -m ptxmm``: the command line."""

from .cli.main import entry

entry()
