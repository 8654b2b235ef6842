"""The opcode table of the PTX decoders: each family module registers its decoders with the
qualifiers each opcode takes (read by the misspelling hint and by the tests), and
:func:`~ptxmm.syntax.decode.decode` dispatches through it."""

from __future__ import annotations

from collections.abc import Callable, Iterable

# the opcodes ptxmm models, in the order "ptxmm models ..." lists them
KNOWN = ("ld st atom red fence membar mov add sub mul div rem and or xor not shl shr min max neg setp "
         "selp bra ret exit bar barrier tex tld4 suld sust sured mbarrier mapa cp wgmma elect "
         "tensormap nanosleep trap").split()

# A decoder takes (base mnemonic, qualifier cursor, operands, common fields pos/text/guard) and returns
# the typed instruction, or raises a ParseError/UnsupportedError naming the offending column.
Decoder = Callable
DECODERS: dict[str, Decoder] = {}
QUALIFIERS: dict[str, set[str]] = {}
# instructions whose forms name a qualifier category twice: tex's data and coordinate types, cp's
# destination and source state spaces
REPEATED: dict[str, set[str]] = {}


def register(opcodes: Iterable[str], decoder: Decoder, qualifiers: set[str],
             repeated: Iterable[str] = ()) -> None:
    """``decoder`` decodes each of ``opcodes``, whose qualifiers are among ``qualifiers``;
    ``repeated``: the qualifier categories its forms may name twice."""
    for op in opcodes:
        DECODERS[op] = decoder
        QUALIFIERS[op] = qualifiers
        if repeated:
            REPEATED[op] = set(repeated)


def all_qualifiers() -> set[str]:
    """Every qualifier some instruction takes."""
    return set().union(*QUALIFIERS.values())
