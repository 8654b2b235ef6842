"""Bulk copies whose size operand is a register (CUTLASS passes ``"r"(bytes)``): kept pending
until the body is read, then decoded with the register's one constant value; tensor copies with
``.L2::cache_hint`` decoded without the hint."""

from __future__ import annotations

from ..._infra.records import record
from ...errors import ParseError, SourcePos, UnsupportedError
from ...ir.program import Imm, Mov, Reg
from ...syntax.decode import decode

_SIZE_PENDING = "%ptxmm.size:"


def _cp(fb, quals, ops, c):
    """A bulk copy whose size is a register (CUTLASS passes ``"r"(bytes)``; nvcc writes
    ``mov.u32 %r4, 16;`` and ``[%rd], [%r], %r4``): decoded with the register's value once the
    body is read (:func:`_bulk_sizes`). A tensor copy: :func:`_cp_tensor`."""
    if "tensor" in quals:
        return _cp_tensor(quals, ops, c)
    if "bulk" not in quals or any(q in quals for q in ("commit_group", "wait_group")) or len(ops) < 3 \
            or not isinstance(ops[2], Reg):
        return None
    return [_PendingCopy(".".join(["cp", *quals]), tuple(ops), c["pos"], c["text"], c["guard"])]


def _cp_tensor(quals, ops, c):
    """``cp.async.bulk.tensor…`` as CUTLASS's SM90_TMA_LOAD_2D writes it, with
    ``.L2::cache_hint`` and a 64-bit cache-policy operand last (PTX ISA, cp.async.bulk.tensor: "The
    optional qualifier .L2::cache_hint specifies the cache eviction policy that may be used during
    the memory access" — a hint to the cache, no memory-model meaning): the qualifier and its
    operand are dropped, and the litmus decoder reads the rest (:func:`.instr._cp_tensor`, whose
    located errors name what is not supported: 3d–5d, im2col, ...)."""
    if "L2::cache_hint" not in quals:
        return None
    if not ops or not isinstance(ops[-1], Reg):
        raise ParseError(f"`{c['text']}`: .L2::cache_hint needs its cache-policy operand last", c["pos"],
                         "[dst], [tensorMap, {c0, c1}], [mbar], policy")
    rest = [q for q in quals if q != "L2::cache_hint"]
    return [decode(".".join(["cp", *rest]), ops[:-1], c["pos"], c["text"], c["guard"])]


@record
class _PendingCopy:
    """A bulk copy whose size operand is a register, until :func:`_bulk_sizes` finds its value."""

    mnemonic: str
    ops: tuple
    pos: SourcePos | None
    text: str
    guard: tuple | None = None


def _bulk_sizes(body: list) -> list:
    """Each :class:`_PendingCopy` decoded with its size register's value: the register must be
    written once in the function, by ``mov`` of a constant (what nvcc makes of a constant size);
    any other size register is a located "not supported yet"."""
    pending = [x for x in body if isinstance(x, _PendingCopy)]
    if not pending:
        return body
    writes: dict[str, list] = {}
    for ins in body:
        dst = getattr(ins, "dst", None)
        if isinstance(dst, Reg):
            writes.setdefault(dst.name, []).append(ins)
    out = []
    for ins in body:
        if not isinstance(ins, _PendingCopy):
            out.append(ins)
            continue
        size = ins.ops[2]
        ws = writes.get(size.name, [])
        if len(ws) != 1 or not isinstance(ws[0], Mov) or not isinstance(ws[0].src, Imm) or ws[0].guard:
            raise UnsupportedError(f"`{ins.text}`: its size {size.name} is not a constant", ins.pos,
                                   "a bulk copy's size register must be set once, to a constant "
                                   "(`mov.u32 %r, 16;`)")
        ops = list(ins.ops)
        ops[2] = ws[0].src
        out.append(decode(ins.mnemonic, ops, ins.pos, ins.text, ins.guard))
    return out
