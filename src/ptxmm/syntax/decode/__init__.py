"""Decode one instruction into a typed instruction of :mod:`ptxmm.ir.program` (Load, Store, Atom,
...): one module per instruction family, each registering its decoders in an opcode table
(registry.py); the qualifier cursor and the semantics/scope rules (qualifiers.py) are shared with
the Dat3M ``.litmus`` cells (dat3m.py). Every rejection names the offending qualifier's column
and gives a hint."""

from __future__ import annotations

from ...errors import ParseError, SourcePos, UnsupportedError
from ...ir.program import Guard, Instruction
from ..check import did_you_mean
from ..ptx_isa import PTX_OPCODES
from . import (  # noqa: F401  (each family registers its decoders on import)
    barriers,
    bulk,
    control,
    cp_async,
    fences,
    mbarrier,
    memory,
    misc,
    proxies,
    registers,
    tensor,
    warp,
    wgmma,
)
from .operands import SINK, Handle, Vec
from .qualifiers import Quals, check_repeats, split_mnemonic
from .registry import DECODERS, KNOWN, QUALIFIERS

__all__ = ["DECODERS", "KNOWN", "QUALIFIERS", "SINK", "Handle", "Quals", "Vec", "decode",
           "split_mnemonic"]

# other tools' spellings someone may type in a .ptx test, with the PTX to write instead
FOREIGN = {
    "tld": "Dat3M's texture load; in PTX write tex.1d.v4.s32.s32 {%r0, _, _, _}, [t, {0}];",
    "cold": "Dat3M's constant load; in PTX write ld.const.u32 %r0, [c];",
    "suatom": "Dat3M's surface atomic; PTX has no surface atomic with a result (only sured)",
}


def decode(mnemonic: str, ops: list, pos: SourcePos | None, text: str = "",
           guard: Guard | None = None) -> Instruction:
    """One instruction, typed and with its qualifiers normalised (see program.py). ``ops`` may
    hold the front-end operands Vec and Handle, which only proxy instructions accept."""
    base, q = split_mnemonic(mnemonic, pos)
    decoder = DECODERS.get(base)
    if decoder is None:
        _unknown_opcode(base, pos)
    check_repeats(base, q)
    return decoder(base, q, ops, dict(pos=pos, text=text or mnemonic, guard=guard))


# English words and other assemblers' spellings someone may type for an instruction ptxmm models
_SYNONYMS = {"load": "ld", "store": "st", "atomic": "atom", "reduce": "red", "move": "mov",
             "branch": "bra", "jump": "bra", "jmp": "bra", "return": "ret", "select": "selp",
             "compare": "setp", "cmp": "setp"}


def _unknown_opcode(base: str, pos: SourcePos | None) -> None:
    """A mnemonic with no decoder: another tool's spelling and anything that is not PTX are
    syntax errors (with a did-you-mean from the instructions ptxmm models); real PTX that ptxmm
    does not model is "not supported yet"."""
    modelled = "ptxmm models " + " ".join(KNOWN)
    if base in FOREIGN:
        raise ParseError(f"`{base}` is not a PTX instruction", pos, FOREIGN[base])
    if base in PTX_OPCODES:
        raise UnsupportedError(f"PTX instruction `{base}`", pos,
                               f"{modelled}; express the test with those")
    raise ParseError(f"unknown instruction `{base}`", pos,
                     did_you_mean(base.lower(), KNOWN, synonyms=_SYNONYMS)
                     + f"it is not a PTX instruction; {modelled}")
