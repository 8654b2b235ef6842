"""What a kernel Program keeps of its origin (:class:`KernelInfo`, ``Program.kernel``): the
kernel, its launch and layout, the CUDA source and the expected findings; and the CUDA line of a
kernel instruction (:func:`source_text`)."""

from __future__ import annotations

from dataclasses import field
from pathlib import Path

from .._infra.records import record
from ..errors import SourcePos
from ..ir.program import Program
from .launch import Launch
from .layout import Layout


@record
class KernelInfo:
    """What a kernel Program keeps of its origin (``Program.kernel``)."""

    kernel: str  # the PTX name
    source: str  # the demangled name
    launch: Launch
    layout: Layout
    source_file: str | None = None  # the .cu
    expect: tuple[str, ...] | None = None  # `// ptxmm: expect ...` finding kinds (sorted)
    expect_pos: SourcePos | None = None
    notes: tuple[str, ...] = ()
    sources: dict = field(default_factory=dict, compare=False)  # CUDA file → its lines


def source_text(prog: Program, pos) -> str | None:
    """``mp.cu:13 assert(data[0] == 42);`` — the CUDA line of a kernel instruction, with its text
    when the source file is at hand."""
    src = getattr(pos, "src", None)
    if src is None:
        return None
    where = f"{Path(src.file).name}:{src.line}"
    info = prog.kernel
    cand = [Path(src.file)]
    if info is not None and info.source_file:
        cand.insert(0, Path(info.source_file))
    for f in cand:
        try:
            if f.name != Path(src.file).name:
                continue
            lines = f.read_text().splitlines()
            if 0 < src.line <= len(lines):
                return f"{where} {lines[src.line - 1].strip()}"
        except OSError:
            continue
    return where


__all__ = ["KernelInfo", "source_text"]
