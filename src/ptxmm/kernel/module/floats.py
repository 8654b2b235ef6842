"""nvcc's floating-point instructions (PTX ISA 9.7.3, setp 9.7.4, cvt 9.7.9.21, atom/red's
``.add.f32``) lowered to the IR's ALU, setp and atomic records with ``f.…`` operations
(ir/floats.py: bit-exact IEEE 754, both engines), and float literals (``0f3F800000``,
``0d3FF0000000000000``, ``1.5``) given the bits of their instruction's type.

Refused with a located "not supported yet": approximate instructions (``div.approx``,
``div.full``, ``rcp``, ``sqrt``, ``sin``, ``ex2``, …: the ISA bounds their error but does not fix
their value), ``.f16``/``.bf16``/``.f32x2`` and other packed types, ``min/max.NaN``/``.xorsign``/
``.abs``, ``setp`` with a boolean operation, and a generic-address ``atom.add.f32`` (whose
subnormal rule depends on the state space it resolves to: "flushes subnormal inputs and results
to sign-preserving zero on global memory but supports subnormal inputs and results … on shared
memory")."""

from __future__ import annotations

from dataclasses import replace

from ...errors import ParseError, SemanticError, UnsupportedError
from ...ir import floats as F
from ...ir.program import Alu, Imm, Mov, Setp
from ...syntax.decode import decode
from .operands import FloatLit

FLOAT_TYPES = ("f32", "f64")
_OTHER_FLOATS = ("f16", "f16x2", "bf16", "bf16x2", "f32x2", "e4m3x2", "e5m2x2", "tf32")
ROUND = ("rn", "rz", "rm", "rp")
IROUND = ("rni", "rzi", "rmi", "rpi")
_INT_TYPES = {f"{k}{w}" for k in "usb" for w in (8, 16, 32, 64)}


def float_type(quals: list[str], c: dict) -> str | None:
    """The instruction's f32/f64 type; another float type is a located "not supported yet"."""
    other = next((q for q in quals if q in _OTHER_FLOATS), None)
    if other is not None:
        raise UnsupportedError(f"`{c['text']}` on .{other}", c["pos"],
                               "ptxmm models .f32 and .f64 floating point")
    return next((q for q in quals if q in FLOAT_TYPES), None)


def literal_bits(lit: FloatLit, w: int, c: dict) -> int:
    """A float literal as the bits of a ``w``-bit float: an f32 hex literal exact, an f64 hex
    literal or a decimal (a double, PTX ISA 4.5.4) rounded to nearest for f32."""
    if w not in (32, 64):
        raise SemanticError(f"the floating-point constant {lit.text} in a {w}-bit operand", c["pos"],
                            "a float constant is an .f32 or .f64 value")
    t = lit.text
    neg = t.startswith("-")
    body = t.lstrip("+-")
    if body[:2].lower() == "0f":
        bits, aw = int(body[2:], 16), 32
    elif body[:2].lower() == "0d":
        bits, aw = int(body[2:], 16), 64
    else:
        bits, aw = F.float_bits(body, 64), 64
    if neg:
        bits ^= 1 << (aw - 1)
    if aw == w:
        return bits
    if F.is_nan(bits, aw):
        raise UnsupportedError(f"the NaN constant {t} converted to .f{w}", c["pos"], None)
    return F.convert(bits, aw, w, "rn")


def literals(ops: list, ty: str | None, c: dict) -> list:
    """``ops`` with each float literal as an immediate of type ``ty``'s width."""
    if not any(isinstance(o, FloatLit) for o in ops):
        return ops
    w = 1 if ty in (None, "pred") else int(ty[1:])
    return [Imm(literal_bits(o, w, c)) if isinstance(o, FloatLit) else o for o in ops]


def _need(ops: list, n: int, form: str, c: dict) -> None:
    if len(ops) != n:
        raise ParseError(f"`{c['text']}` takes {n} operands", c["pos"], f"expected form: {form}")


def _mods(quals: list[str], c: dict, allowed: tuple[str, ...]) -> list[str]:
    unknown = [q for q in quals if q not in allowed and q not in FLOAT_TYPES]
    if unknown:
        raise UnsupportedError(f"`{c['text']}` with .{unknown[0]}", c["pos"],
                               "ptxmm models the IEEE-exact forms (.rn .rz .rm .rp, .ftz, .sat)")
    return [q for q in ROUND + IROUND + ("ftz", "sat") if q in quals]


def arith(base: str):
    """``add/sub/mul{.rnd}{.ftz}{.sat}.f32``, ``fma/mad.rnd…``, ``div.rnd…`` (IEEE-exact forms)."""
    def lower(fb, quals, ops, c):
        ty = float_type(quals, c)
        if ty is None:
            return None
        if any(q in ("approx", "full") for q in quals):
            raise UnsupportedError(f"the approximate `{c['text']}`", c["pos"],
                                   "the ISA bounds its error but leaves its value open; div.rn is modelled")
        mods = _mods(quals, c, ROUND + ("ftz", "sat"))
        rnd = [q for q in mods if q in ROUND]
        if not rnd and base in ("fma", "mad", "div"):
            raise ParseError(f"`{c['text']}` needs a rounding modifier", c["pos"],
                             f"{base}.rn.{ty} (or .rz .rm .rp)")
        name = "fma" if base in ("fma", "mad") else base
        n = 4 if name == "fma" else 3
        _need(ops, n, f"{base}.rnd.{ty} d, a, b" + (", c" if n == 4 else ""), c)
        ops = literals(ops, ty, c)
        op = ".".join(["f", name, rnd[0] if rnd else "rn", *(q for q in mods if q in ("ftz", "sat"))])
        return [Alu(op=op, dst=ops[0], srcs=tuple(ops[1:]), type=ty, **c)]
    return lower


def unary(base: str):
    """``min/max{.ftz}.f32 d, a, b``, ``neg/abs{.ftz}.f32 d, a``, ``copysign.f32 d, a, b``."""
    def lower(fb, quals, ops, c):
        ty = float_type(quals, c)
        if ty is None:
            return None
        mods = _mods(quals, c, ("ftz",))
        n = 2 if base in ("neg", "abs") else 3
        _need(ops, n, f"{base}.{ty} d, a" + (", b" if n == 3 else ""), c)
        ops = literals(ops, ty, c)
        return [Alu(op=".".join(["f", base, *mods]), dst=ops[0], srcs=tuple(ops[1:]), type=ty, **c)]
    return lower


def setp(fb, quals, ops, c):
    """``setp.cmp{.ftz}.f32 p, a, b`` (cmp: eq ne lt le gt ge, their unordered forms equ … geu,
    num, nan)."""
    ty = float_type(quals, c)
    if ty is None:
        return None
    cmps = [q for q in quals if q in F.ORDERED + F.UNORDERED + ("num", "nan")]
    if len(cmps) != 1 or any(q in ("and", "or", "xor") for q in quals) or len(ops) != 3:
        raise UnsupportedError(f"`{c['text']}`", c["pos"], "setp.cmp{.ftz}.f32 p, a, b is modelled "
                               "(no boolean operation, one destination)")
    _mods(quals, c, ("ftz", *cmps))
    ops = literals(ops, ty, c)
    cmp = cmps[0] + (".ftz" if "ftz" in quals else "")
    return [Setp(cmp=cmp, dst=ops[0], a=ops[1], b=ops[2], type=ty, **c)]


def testp(fb, quals, ops, c):
    ty = float_type(quals, c)
    kind = next((q for q in quals if q in F.TESTP), None)
    if ty is None or kind is None:
        raise ParseError(f"`{c['text']}` names a test and .f32 or .f64", c["pos"],
                         "testp.notanumber.f32 p, a")
    _need(ops, 2, "testp.op.type p, a", c)
    ops = literals(ops, ty, c)
    return [Alu(op=f"f.testp.{kind}:{ty}", dst=ops[0], srcs=(ops[1],), type="pred", **c)]


def cvt(fb, quals, ops, c):
    """``cvt`` with a float side: int → float (``.rn .rz .rm .rp``), float → int (``.rni .rzi
    .rmi .rpi``), float → float (f32 → f64 exact, f64 → f32 rounded, ``.rni…`` to an integral
    value of the same type)."""
    tys = [q for q in quals if q in FLOAT_TYPES or q in _INT_TYPES]
    if len(tys) != 2:
        raise ParseError(f"`{c['text']}` names two types", c["pos"], "cvt.rnd.dtype.atype d, a")
    dty, aty = tys
    _need(ops, 2, "cvt.rnd.dtype.atype d, a", c)
    mods = _mods([q for q in quals if q not in tys], c, ROUND + IROUND + ("ftz",))
    rnd = next((q for q in mods if q in ROUND + IROUND), None)
    ftz = [".ftz"] if "ftz" in mods else []
    if dty[0] != "f":  # float → integer
        if rnd not in IROUND:
            raise ParseError(f"`{c['text']}` needs an integer rounding modifier", c["pos"], "cvt.rzi.s32.f32")
        op = f"f.toint.{rnd}{''.join(ftz)}.{'s' if dty[0] == 's' else 'u'}:{aty}"
    elif aty[0] != "f":  # integer → float
        if rnd not in ROUND:
            raise ParseError(f"`{c['text']}` needs a rounding modifier", c["pos"], "cvt.rn.f32.s32")
        op = f"f.cvt.{rnd}.{'s' if aty[0] == 's' else 'u'}:{aty}"
    elif dty == aty and rnd in IROUND:
        op = f"f.rint.{rnd}{''.join(ftz)}"
    elif dty == aty:  # cvt{.ftz}.f32.f32: the value itself (.ftz: a subnormal flushed)
        if rnd is not None:
            raise ParseError(f"`{c['text']}` rounds a float to its own type", c["pos"],
                             "an integer rounding (.rni .rzi .rmi .rpi) or none")
        op = f"f.cvt.rn{''.join(ftz)}:{aty}"
    else:
        if dty == "f32" and rnd not in ROUND:
            raise ParseError(f"`{c['text']}` needs a rounding modifier", c["pos"], "cvt.rn.f32.f64")
        op = f"f.cvt.{rnd if rnd in ROUND else 'rn'}{''.join(ftz)}:{aty}"
    ops = [ops[0], *literals(ops[1:], aty, c)]
    return [Alu(op=op, dst=ops[0], srcs=(ops[1],), type=dty, **c)]


def mov(fb, quals, ops, c):
    """``mov.f32 d, 0f3F800000`` / ``mov.b32 d, 1.5``: the literal's bits at the type's width."""
    if not any(isinstance(o, FloatLit) for o in ops):
        return None
    ty = next((q for q in quals if q in FLOAT_TYPES or q in _INT_TYPES), None)
    _need(ops, 2, "mov.type d, a", c)
    ops = literals(ops, ty, c)
    return [Mov(dst=ops[0], src=ops[1], type=ty or "b32", **c)]


def with_literals(base: str):
    """An instruction the litmus decoder reads, once its float literals have their bits."""
    def lower(fb, quals, ops, c):
        if not any(isinstance(o, FloatLit) for o in ops):
            return None
        ty = next((q for q in quals if q in FLOAT_TYPES or q in _INT_TYPES), None)
        return [decode(".".join([base, *quals]), literals(ops, ty, c), c["pos"], c["text"], c["guard"])]
    return lower


def atomic(base: str):
    """``atom/red{.sem}{.scope}.global|shared.add.f32|f64``: the integer form's access with the
    float operation (atom.add: "rounds to nearest even"; .f32 without .noftz "flushes subnormal
    inputs and results to sign-preserving zero on global memory but supports subnormal inputs and
    results … on shared memory"). ptxas takes .min/.max only on integer and half types."""
    def lower(fb, quals, ops, c):
        ty = float_type(quals, c)
        if ty is None:
            return with_literals(base)(fb, quals, ops, c)
        op = next((q for q in quals if q == "add"), None)
        if op is None:  # ptxas: "Operation .max requires .u32 or .s32 or .u64 or .s64 or .f16 …"
            raise SemanticError(f"`{c['text']}`: a floating-point {base} on .{ty} adds", c["pos"],
                                f"{base}.global.add.{ty}")
        space = next((q for q in quals if q in ("global", "shared", "shared::cta", "shared::cluster")), None)
        if space is None:
            raise UnsupportedError(f"`{c['text']}` on a generic address", c["pos"],
                                   "atom.add.f32 flushes subnormals on global memory and keeps them on "
                                   "shared memory (PTX ISA, atom): name the state space (.global or .shared)")
        ftz = ty == "f32" and space == "global" and "noftz" not in quals
        fop = ".".join(["f", "add", "rn", *(["ftz"] if ftz else [])])
        ity = "u" + ty[1:]  # the integer form of the same access (add takes .u32/.u64)
        q = [ity if x == ty else x for x in quals if x != "noftz"]
        ins = decode(".".join([base, *q]), literals(ops, ty, c), c["pos"], c["text"], c["guard"])
        return [replace(ins, op=fop, type=ty)]
    return lower


HANDLERS = {"add": arith("add"), "sub": arith("sub"), "fma": arith("fma"), "div": arith("div"),
            "min": unary("min"), "max": unary("max"), "neg": unary("neg"), "copysign": unary("copysign"),
            "setp": setp, "testp": testp, "mov": mov, "selp": with_literals("selp"),
            "atom": atomic("atom"), "red": atomic("red")}
FLOAT_BASES = ("mul", "mad", "abs", "cvt")  # lowering's handlers hand their float forms here

__all__ = ["FLOAT_BASES", "HANDLERS", "arith", "cvt", "float_type", "literals", "unary"]
