"""Locate the data directories (grammar/, models/, examples/) in a source checkout or a wheel, and
ptxmm's directory in the user's cache."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parents[1]  # the ptxmm package


@cache
def data_dir(name: str) -> Path:
    for cand in (_PKG / name, _PKG.parents[1] / name):
        if cand.is_dir():
            return cand
    raise FileNotFoundError(f"ptxmm data directory '{name}' not found (broken install?)")


def cache_dir(name: str) -> Path:
    """``name`` in ptxmm's user cache directory ($XDG_CACHE_HOME/ptxmm, else ~/.cache/ptxmm); it
    may not exist yet."""
    import os

    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ptxmm" / name


def digest(key: str) -> str:
    """A short file name for a cache entry whose key is ``key`` (two 32-bit checksums: zlib is
    already loaded, hashlib's OpenSSL would cost 1-2 ms at every start). Not collision-proof, so
    every cache keeps the whole key in its entry and compares it on reading: a collision costs a
    miss, never a wrong entry."""
    import zlib

    b = key.encode()
    return f"{zlib.crc32(b):08x}{zlib.adler32(b):08x}"
