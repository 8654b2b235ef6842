"""The CUDA line of a kernel instruction (:func:`source_text`), read from the source file that
``Program.kernel`` (:class:`ptxmm.ir.launch.KernelInfo`) names."""

from __future__ import annotations

from pathlib import Path

from ..ir.program import Program


def source_lines(prog: Program, src) -> list[str] | None:
    """The lines of the CUDA file a ``.loc`` position names (the kernel's own source file first,
    by name), None when it is not at hand."""
    cand = [Path(src.file)]
    info = prog.kernel
    if info is not None and info.source_file:
        cand.insert(0, Path(info.source_file))
    for f in cand:
        if f.name != Path(src.file).name:
            continue
        try:
            return f.read_text().splitlines()
        except OSError:
            continue
    return None


def source_text(prog: Program, pos) -> str | None:
    """``mp.cu:13 assert(data[0] == 42);`` — the CUDA line of a kernel instruction, with its text
    when the source file is at hand."""
    src = getattr(pos, "src", None)
    if src is None:
        return None
    where = f"{Path(src.file).name}:{src.line}"
    lines = source_lines(prog, src)
    if lines is not None and 0 < src.line <= len(lines):
        return f"{where} {lines[src.line - 1].strip()}"
    return where


__all__ = ["source_lines", "source_text"]
