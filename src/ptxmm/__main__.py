"""``python -m ptxmm``: the command line."""

from .cli import entry

entry()
