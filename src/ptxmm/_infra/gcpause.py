"""``no_gc``: run a block with Python's cyclic garbage collector paused.

Parsing and encoding allocate many objects that all stay alive until the block ends, so the
collector's passes over them would find nothing to free. Pausing it during a check also keeps
collections (which can run in any thread, e.g. a progress display's) from freeing solver terms
while this thread is inside the solver library."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_gc() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
