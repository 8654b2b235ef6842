"""``python -m ptxmm.cli``: the command line."""

from .main import entry

entry()
