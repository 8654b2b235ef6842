"""A kernel launched on several GPUs of one system, as the all-reduce kernels of LLM serving run
(vLLM's ``csrc/custom_all_reduce.cuh``, TensorRT-LLM's ``customAllReduceKernels``): every GPU — a
*rank* — launches the same grid with its own rank and pointers to every rank's buffers (the peer
pointers ``cudaIpcOpenMemHandle`` or ``cudaDeviceEnablePeerAccess`` give it).

The launch line's multi-GPU parts (read by :func:`ptxmm.kernel.launch.parse_launch` through the
functions here)::

    allreduce<<<1, 2>>>(RankSignals sg = peers(sig), unsigned sig[4] per gpu, rank) on 2 gpus

* ``on N gpus`` after the arguments: the grid runs once on each of GPUs 0 .. N-1 (1 <= N <=
  :data:`MAX_GPUS`); the threads of GPU g are placed on GPU g (``Placement.gpu``), so a ``.gpu``
  scope holds the threads of one GPU only and ``.sys`` those of all (PTX ISA 8.5, "Scope").
* ``T name[N] per gpu``: a buffer in each GPU's memory; GPU g's copy is the buffer ``gpuG.name``
  (its elements ``gpuG.name[i]``, the names a condition uses), and a pointer parameter given it
  receives the copy of the GPU it runs on. A buffer without ``per gpu`` is one buffer every GPU
  reaches at one address (host-mapped or managed memory).
* ``rank``: a scalar argument whose value is the GPU's index.
* ``S name = peers(buf)``: a struct passed by value whose entry g (8 bytes each) is the address of
  GPU g's copy of the ``per gpu`` buffer ``buf`` — vLLM's ``RankSignals sg`` (``Signal
  *signals[8]``) and ``RankData`` (``const void *ptrs[8]``). The struct may have more entries than
  there are GPUs (vLLM's hold 8 or 16); a read of one beyond the GPUs is a located error.

A per-GPU copy is an ordinary global location: every GPU reaches every copy (NVLink peer access),
and the model relates accesses by their threads' placement alone."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from ..errors import ParseError, SemanticError, SourcePos, UnsupportedError
from ..ir.launch import Buffer, Launch, PeersArg, RankArg
from ..ir.layout import Layout

MAX_GPUS = 8  # vLLM's custom all-reduce supports up to 8 ranks; NVLink systems have 8 GPUs
POINTER_BYTES = 8
FORM = ("KERNEL<<<GRID, BLOCK>>>(T name[N] per gpu, S name = peers(name), rank, ...) on N gpus")


class Reader(Protocol):
    """What the launch parser's reader offers (kernel.launch._Reader)."""

    text: str
    i: int

    def at(self, i: int | None = None) -> SourcePos | None: ...
    def ws(self) -> None: ...
    def expect(self, s: str, what: str) -> None: ...
    def peek(self, s: str) -> bool: ...
    def integer(self, what: str) -> int: ...


_GPUS = re.compile(r"on\b")
_RANK = re.compile(r"rank\b\s*(?=[,)])")
_PEERS = re.compile(r"([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*=\s*peers\b")
_PER_GPU = re.compile(r"per\s+gpu\b")


def copy_name(name: str, gpu: int) -> str:
    """The name of GPU ``gpu``'s copy of the ``per gpu`` buffer ``name``."""
    return f"gpu{gpu}.{name}"


def read_gpus(r: Reader) -> tuple[int, SourcePos | None]:
    """``on N gpus`` after the arguments (1 and no position when absent)."""
    r.ws()
    if not _GPUS.match(r.text, r.i):
        return 1, None
    at = r.at()
    r.i += 2
    n = r.integer("the number of GPUs after `on`")
    r.ws()
    m = re.compile(r"gpus?\b").match(r.text, r.i)
    if not m:
        raise ParseError("expected `gpus` after the number of GPUs", r.at(), FORM)
    r.i = m.end()
    if not 1 <= n <= MAX_GPUS:
        raise SemanticError(f"a launch on {n} GPUs", at, f"ptxmm models 1 to {MAX_GPUS} GPUs of one "
                            "system (vLLM's custom all-reduce takes at most 8 ranks)")
    return n, at


def read_arg(r: Reader, buffer: Callable[[SourcePos | None], Buffer]) -> RankArg | PeersArg | None:
    """``rank`` or ``S name = peers(buf)`` at the reader's position, else None (read nothing);
    ``buffer`` reads ``T name[N]{ = {...}}`` there (``peers(int in[2] = {1, 2})`` declares the
    per-GPU buffer in place: a buffer no parameter points to, as vLLM's inputs, reached only
    through ``RankData``)."""
    r.ws()
    at = r.at()
    if _RANK.match(r.text, r.i):
        r.i += len("rank")
        return RankArg(at)
    m = _PEERS.match(r.text, r.i)
    if not m:
        return None
    r.i = m.end()
    r.expect("(", "after peers")
    r.ws()
    array_pos = r.at()
    name = re.compile(r"[A-Za-z_]\w*(?=\s*\))").match(r.text, r.i)
    if name:
        r.i = name.end()
        r.expect(")", "closing peers(...)")
        return PeersArg(m.group(1), m.group(2), name.group(0), at, array_pos)
    b = replace(read_per_gpu(r, buffer(array_pos)), per_gpu=True)
    r.expect(")", "closing peers(...)")
    return PeersArg(m.group(1), m.group(2), b.name, at, array_pos, b)


def read_per_gpu(r: Reader, b: Buffer) -> Buffer:
    """The buffer just read, marked ``per gpu`` when those words follow it."""
    r.ws()
    m = _PER_GPU.match(r.text, r.i)
    if not m:
        return b
    r.i = m.end()
    return replace(b, per_gpu=True)


def check_multigpu(launch: Launch, max_elements: int) -> None:
    """The multi-GPU parts of a launch agree: ``rank``, ``per gpu`` buffers and ``peers(...)`` come
    with ``on N gpus``; a peers struct names a ``per gpu`` buffer of the launch; the buffers' copies
    stay within ``max_elements``. Every mistake a located error."""
    hint = "add `on N gpus` after the arguments, e.g. `on 2 gpus`"
    per_gpu = {b.name: b for b in launch.buffers if b.per_gpu}
    for a in launch.args:
        if launch.gpus == 1 and launch.gpus_pos is None:
            if isinstance(a, RankArg):
                raise SemanticError("`rank` in a launch on one GPU", a.pos, hint)
            if isinstance(a, PeersArg):
                raise SemanticError(f"peers({a.array}) in a launch on one GPU", a.pos, hint)
            if isinstance(a, Buffer) and a.per_gpu:
                raise SemanticError(f"`per gpu` buffer {a.name} in a launch on one GPU", a.pos, hint)
        if isinstance(a, PeersArg) and a.array not in per_gpu:
            plain = any(b.name == a.array for b in launch.buffers)
            what = "a buffer that is not `per gpu`" if plain else "no buffer of the launch"
            raise SemanticError(f"peers({a.array}) names {what}", a.array_pos,
                                f"declare `int {a.array}[N] per gpu` among the arguments")
    if launch.cooperative and launch.gpus > 1:  # cudaLaunchCooperativeKernelMultiDevice: deprecated
        raise UnsupportedError(f"a cooperative launch on {launch.gpus} GPUs", launch.gpus_pos,
                               "cooperative groups' grid workspace is modelled on one GPU: launch "
                               "`cooperative` kernels on 1 GPU")
    for b in launch.shared:
        if b.per_gpu:
            raise SemanticError(f"`per gpu` on the dynamic shared array {b.name}", b.pos,
                                "shared memory is per CTA already: drop `per gpu`")
    total = sum(b.count * (launch.gpus if b.per_gpu else 1) for b in launch.buffers)
    total += sum(b.count for b in launch.shared)
    if total > max_elements:
        raise SemanticError(f"the buffers have {total} elements (a `per gpu` buffer counts once per GPU), "
                            f"more than the limit of {max_elements}", launch.pos or launch.gpus_pos,
                            "keep buffers small")


def region_names(b: Buffer, gpus: int) -> list[str]:
    """The buffers a launch buffer is: one, or one per GPU (:func:`copy_name`)."""
    return [copy_name(b.name, g) for g in range(gpus)] if b.per_gpu else [b.name]


def argument_values(a, p, gpu: int, gpus: int, bases: dict[str, int], k: int,
                    code: str | None = None, label: str | None = None) -> dict[str, int] | None:
    """The values parameter ``p`` (a PTX parameter with ``name``, ``type``, ``size``; ``code`` its
    mangled C++ type, when the name tells it) takes on GPU ``gpu`` from the multi-GPU argument ``a``
    (argument ``k + 1``), by the key ``ld.param`` reads (``name``, ``name+8``, ...); None when ``a``
    is no multi-GPU argument; errors name the parameter by ``label`` (``parameter 2 (int)``), never
    by nvcc's mangled ``.param`` name."""
    label = label or f"parameter {k + 1}"
    if isinstance(a, RankArg):
        if p.size is not None or not p.type[1:].isdigit() or p.type[0] not in "subt" \
                or (code is not None and code.startswith("P")):
            raise SemanticError(f"argument {k + 1} is `rank`, but {label} is not an integer",
                                a.pos, "`rank` is given to an int parameter")
        return {p.name: gpu}
    if isinstance(a, PeersArg):
        need = POINTER_BYTES * gpus
        if p.size is None or p.size < need or p.size % POINTER_BYTES:
            what = f"a {p.size}-byte aggregate" if p.size else f"a .{p.type} value"
            raise SemanticError(f"argument {k + 1} ({a.ctype} {a.name} = peers({a.array})) holds {gpus} "
                                f"pointers, but {label} is {what}", a.pos,
                                f"the kernel takes a struct of at least {gpus} pointers by value, as "
                                "vLLM's `RankSignals sg`")
        out = {}
        for g in range(gpus):
            key = p.name if g == 0 else f"{p.name}+{POINTER_BYTES * g}"
            out[key] = bases[copy_name(a.array, g)]
        return out
    return None


def check_module_globals(layout: Layout, launch: Launch) -> None:
    """A multi-GPU launch whose module has ``__device__`` variables: each GPU would hold its own
    copy, which ptxmm does not model yet (a located "not supported yet")."""
    ours = {n for b in launch.buffers for n in region_names(b, launch.gpus)}
    module = [r.name for r in layout.regions if r.space == "global" and r.located and r.name not in ours
              and r.tensormap is None]
    if module:
        raise UnsupportedError(f"module-scope __device__ variable(s) {', '.join(module)} in a launch on "
                               f"{launch.gpus} GPUs (one copy on each GPU)", launch.gpus_pos,
                               "pass the data as a `T name[N] per gpu` launch buffer")


def own_copies(launch: Launch, bases: dict[str, int], gpu: int) -> dict[str, int]:
    """Each ``per gpu`` buffer's name → the base of GPU ``gpu``'s copy (what a pointer parameter
    given the buffer receives on that GPU)."""
    return {b.name: bases[copy_name(b.name, gpu)] for b in launch.buffers if b.per_gpu}


__all__ = ["FORM", "MAX_GPUS", "argument_values", "check_module_globals", "check_multigpu", "copy_name",
           "own_copies", "read_arg", "read_gpus", "read_per_gpu", "region_names"]
