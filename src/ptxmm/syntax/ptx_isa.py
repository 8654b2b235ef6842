"""The opcodes of the PTX ISA (the instruction set chapter of PTX ISA 8.x/9.x, "Instructions"),
as the first dot-separated word of a mnemonic: ``cp`` covers cp.async, cp.async.bulk{.tensor},
cp.reduce.async.bulk; ``bar`` covers bar.sync, bar.warp.sync; ``elect`` is elect.sync; ``istypep``
(not "istypeof") is the texture/sampler/surface type test.

What ptxmm does with a mnemonic (src/ptxmm/syntax/decode/): one it models is decoded; one in
this list it does not model is "not supported yet" (UnsupportedError); anything else is not PTX,
a syntax error with a did-you-mean from the instructions ptxmm models."""

from __future__ import annotations

PTX_OPCODES = frozenset("""
abs activemask add addc alloca and applypriority atom
bar barrier bfe bfi bfind bmsk bra brev brkpt brx
call clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta
discard div dp2a dp4a elect ex2 exit fence fma fns getctarank griddepcontrol
isspacep istypep ld ldmatrix ldu lg2 lop3
mad mad24 madc mapa match max mbarrier membar min mma mov movmatrix mul mul24 multimem
nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp red redux rem ret rsqrt
sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix
sub subc suld suq sured sust szext
tanh tcgen05 tensormap testp tex tld4 trap txq
vabsdiff vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2
vmin4 vote vset vset2 vset4 vshl vshr vsub vsub2 vsub4
wgmma wmma xor
""".split())


# ----- operand types, as ptxas -arch=sm_90 (CUDA 13.0) checks them ----------------------------------
# (PTX ISA "Operand Type Information": a register operand's type must agree with the instruction
# type in size and kind; ld/st relax the size; the instruction types each opcode takes.) Each entry
# below was asked of ptxas; tests/syntax/test_ptxas_accepts_what_ptxmm_reads.py keeps asking.

_INT = tuple(f"{k}{w}" for k in "us" for w in (16, 32, 64))
_BITS = ("b16", "b32", "b64")
_FLT = ("f32", "f64")
_MEM = tuple(f"{k}{w}" for k in "usb" for w in (8, 16, 32, 64)) + _FLT

INSTR_TYPES: dict[str, tuple[str, ...]] = {
    "mov": _INT + _BITS + _FLT + ("pred",), "selp": _INT + _BITS + _FLT,
    "add": _INT + _FLT, "sub": _INT + _FLT, "mul": _INT + _FLT, "div": _INT + _FLT,
    "rem": _INT, "min": _INT + _FLT, "max": _INT + _FLT,
    "and": _BITS + ("pred",), "or": _BITS + ("pred",), "xor": _BITS + ("pred",),
    "not": _BITS + ("pred",), "shl": _BITS, "shr": _BITS + _INT, "neg": ("s16", "s32", "s64") + _FLT,
    "setp": _INT + _BITS + _FLT, "ld": _MEM, "st": _MEM,
}
"""The instruction types each opcode takes (``mul`` meaning ``mul.lo`` for integers)."""

ATOM_TYPES: dict[str, tuple[str, ...]] = {
    "add": ("u32", "s32", "u64") + _FLT, "inc": ("u32",), "dec": ("u32",), "exch": ("b32", "b64"),
    "cas": ("b16", "b32", "b64"), "and": ("b32", "b64"), "or": ("b32", "b64"),
    "xor": ("b32", "b64"), "min": ("u32", "s32", "u64", "s64"), "max": ("u32", "s32", "u64", "s64"),
}
"""The types of ``atom.op`` and ``red.op`` (red takes the same, without exch and cas)."""

SETP_TYPES: dict[str, tuple[str, ...]] = {
    **{c: _INT + _BITS + _FLT for c in ("eq", "ne")},
    **{c: _INT + _FLT for c in ("lt", "le", "gt", "ge")},
    **{c: tuple(t for t in _INT if t[0] == "u") for c in ("lo", "ls", "hi", "hs")},
}
"""The types each comparison of ``setp`` takes."""


def _width(t: str) -> int:
    return 1 if t == "pred" else int(t[1:])


def register_fits(instr_type: str, reg_type: str, relaxed: bool = False) -> bool:
    """Whether a register of ``reg_type`` may be an operand of an instruction of ``instr_type``:
    a .bN instruction takes any register of N bits; a .uN or .sN one .bN, .uN and .sN registers;
    an .fN one .fN and .bN; a .pred one a .pred. ``relaxed`` (ld's destination, st's source) also
    takes a register wider than an integer or bit-size instruction type (ptxas zero- or
    sign-extends, or stores the low bits)."""
    if "pred" in (instr_type, reg_type):
        return instr_type == reg_type
    ik, rk, iw, rw = instr_type[0], reg_type[0], _width(instr_type), _width(reg_type)
    if relaxed and ik != "f" and rw > iw:
        return ik == "b" or rk != "f"
    if iw != rw:
        return False
    return ik == "b" or rk == "b" or (ik == "f") == (rk == "f")
