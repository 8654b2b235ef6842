"""nvcc's instruction forms that litmus tests do not use (``cvta``, ``cvt``, ``mul.wide``/
``mul.hi``, ``mad``, ``abs``, ``bfe``/``bfi``, ``ld.param``/``st.param``, ``ld.global.nc``,
``bar.warp.sync``, vectors, mbarriers, bulk copies) lowered to short sequences of the IR's own
instructions on scratch registers; ld/st/atom/red qualifiers put in the ISA's order."""

from __future__ import annotations

import re
from dataclasses import replace

from ...errors import ParseError, UnsupportedError
from ...ir.instructions import VectorOrder  # an IR record (semantics needs no kernel reader for it)
from ...ir.program import Addr, Alu, Imm, Instruction, Mov, Reg, Selp, Setp, Sym
from ...syntax.decode import Vec, decode
from .floats import FLOAT_TYPES, arith, float_type, literals, unary
from .floats import HANDLERS as FLOAT_HANDLERS
from .floats import cvt as float_cvt
from .records import ParamStore
from .sizes import _cp

_SIGN = {"s": True, "u": False, "b": False}


def _ty(t: str) -> tuple[int, bool]:
    return (1 if t == "pred" else int(t[1:])), t[0] == "s"

_ORDERED = {"ld", "st", "atom", "red"}
_RANK = {**{q: 0 for q in ("weak", "relaxed", "acquire", "release", "acq_rel", "sc", "volatile", "mmio")},
         **{q: 1 for q in ("cta", "cluster", "gpu", "sys")},
         **{q: 2 for q in ("global", "shared", "shared::cta", "shared::cluster", "const", "local", "param")},
         **{q: 4 for q in ("add", "inc", "dec", "exch", "cas", "and", "or", "xor", "min", "max")},
         **{q: 5 for q in ("v2", "v4", "v8")}}


def _canonical(base: str, quals: list[str]) -> str:
    """``base`` with ``quals`` in the ISA's order (``mmio.relaxed.sys`` kept together); ``.nc`` (a
    non-coherent load of data read-only for the kernel's lifetime) dropped: a weak load."""
    if "mmio" in quals:
        return ".".join([base, *quals])
    qs = [q for q in quals if not (base == "ld" and q == "nc")]

    def rank(q: str) -> int:
        if q in _RANK:
            return _RANK[q]
        return 6 if re.fullmatch(r"(u|s|b|f)(8|16|32|64)", q) else 3

    return ".".join([base, *sorted(qs, key=rank)])


def _need(ops: list, n: int, form: str, c: dict) -> None:
    if len(ops) != n:
        raise ParseError(f"`{c['text']}` takes {n} operands", c["pos"], f"expected form: {form}")


def _types_of(quals: list[str]) -> list[str]:
    return [q for q in quals if re.fullmatch(r"(u|s|b|f)(8|16|32|64)|pred", q)]


def _param_type(quals: list[str], c: dict, form: str) -> str:
    """The type of an ``ld.param`` / ``st.param``: exactly one of PTX's fundamental types."""
    types = _types_of(quals)
    if len(types) != 1:
        raise ParseError(f"`{c['text']}` needs one type of .u8-.u64, .s8-.s64, .b8-.b64 or .f16-.f64",
                         c["pos"], f"expected form: {form}")
    return types[0]


_FLOAT_QUALS = {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "ftz", "sat", "approx"}


def _no_float(quals: list[str], c: dict) -> None:
    if any(q.startswith("f") and q[1:].isdigit() for q in quals) or \
            any(q in _FLOAT_QUALS for q in quals):
        raise UnsupportedError(f"floating-point or saturating `{c['text'].split()[0]}`", c["pos"],
                               "ptxmm models integer arithmetic only")


def _extend(fb, dst: Reg, src, from_ty: str, to_ty: str, c: dict) -> list[Instruction]:
    """``dst`` (of ``to_ty``) = ``src`` read at ``from_ty`` and converted as cvt does: truncated,
    or zero-/sign-extended by the source type's signedness."""
    fw, fs = _ty(from_ty)
    tw, _ = _ty(to_ty)
    t = fb.scratch()
    out: list[Instruction] = [Mov(dst=t, src=src, type=f"b{fw}", **c)]
    if tw <= fw:
        return out + [Mov(dst=dst, src=t, type=to_ty, **c)]
    if fs:  # sign extension: shift the value to the top of the wider word, then back (arithmetic)
        u = fb.scratch()
        return out + [Alu(op="shl", dst=u, srcs=(t, Imm(tw - fw)), type=f"b{tw}", **c),
                      Alu(op="shr", dst=dst, srcs=(u, Imm(tw - fw)), type=f"s{tw}", **c)]
    return out + [Alu(op="and", dst=dst, srcs=(t, Imm((1 << fw) - 1)), type=f"b{tw}", **c)]


def _cvta(fb, quals, ops, c):
    """``cvta{.to}.{global|shared|const|param}.u64 d, a``: generic and state-space addresses are
    the same numbers in ptxmm's layout (each buffer has one address range; a ``.local`` array's range
is the same in every thread, each thread's accesses naming its own copy), so a move. ``.param``:
    the generic address of a kernel parameter (nvcc's ``mov.b64 %rd, k_param_0; cvta.param.u64``
    for ``&tm`` of a ``__grid_constant__ CUtensorMap``; kernels.Layout gives the map its range)."""
    space = next((q for q in quals if q in ("global", "shared", "const", "local", "param")), None)
    if space is None:
        raise UnsupportedError(f"`{c['text']}`", c["pos"], "cvta names a state space")
    ty = (_types_of(quals) or ["u64"])[-1]
    _need(ops, 2, "cvta{.to}.space.u64 d, a", c)
    return [Mov(dst=ops[0], src=ops[1], type=ty, **c)]


def _cvt(fb, quals, ops, c):
    if any(q in FLOAT_TYPES for q in quals):
        return float_cvt(fb, quals, ops, c)
    _no_float(quals, c)
    tys = _types_of(quals)
    if len(tys) != 2:
        raise ParseError(f"`{c['text']}` names two types", c["pos"], "cvt.dtype.atype d, a")
    _need(ops, 2, "cvt.dtype.atype d, a", c)
    return _extend(fb, ops[0], ops[1], tys[1], tys[0], c)


def _mul(fb, quals, ops, c):
    if float_type(quals, c):
        return arith("mul")(fb, quals, ops, c)
    _no_float(quals, c)
    tys = _types_of(quals)
    if "wide" in quals:
        _need(ops, 3, "mul.wide.type d, a, b", c)
        ty = tys[0]
        w, s = _ty(ty)
        wide = f"{'s' if s else 'u'}{2 * w}"
        a, b = fb.scratch(), fb.scratch()
        return (_extend(fb, a, ops[1], ty, wide, c) + _extend(fb, b, ops[2], ty, wide, c)
                + [Alu(op="mul", dst=ops[0], srcs=(a, b), type=wide, **c)])
    if "hi" in quals:
        _need(ops, 3, "mul.hi.type d, a, b", c)
        ty = tys[0]
        w, s = _ty(ty)
        wide = f"{'s' if s else 'u'}{2 * w}"
        a, b, p, h = fb.scratch(), fb.scratch(), fb.scratch(), fb.scratch()
        return (_extend(fb, a, ops[1], ty, wide, c) + _extend(fb, b, ops[2], ty, wide, c)
                + [Alu(op="mul", dst=p, srcs=(a, b), type=wide, **c),
                   Alu(op="shr", dst=h, srcs=(p, Imm(w)), type=wide, **c),
                   Mov(dst=ops[0], src=h, type=ty, **c)])
    return None  # mul.lo: the litmus decoder


def _mad(fb, quals, ops, c):
    """``mad.{lo|hi|wide}.type d, a, b, c`` = mul then add (``.wide``: at twice the width)."""
    if float_type(quals, c):
        return arith("mad")(fb, quals, ops, c)
    _no_float(quals, c)
    _need(ops, 4, "mad.lo.type d, a, b, c", c)
    mode = next((q for q in quals if q in ("lo", "hi", "wide")), None)
    if mode is None:
        raise ParseError(f"`{c['text']}` needs .lo, .hi or .wide", c["pos"], None)
    ty = _types_of(quals)[0]
    w, s = _ty(ty)
    p = fb.scratch()
    mul = _mul(fb, [mode, ty] if mode != "lo" else ["lo", ty], [p, ops[1], ops[2]], c) if mode != "lo" \
        else [Alu(op="mul", dst=p, srcs=(ops[1], ops[2]), type=ty, **c)]
    sty = f"{'s' if s else 'u'}{2 * w}" if mode == "wide" else ty
    return mul + [Alu(op="add", dst=ops[0], srcs=(p, ops[3]), type=sty, **c)]


def _abs(fb, quals, ops, c):
    if float_type(quals, c):
        return unary("abs")(fb, quals, ops, c)
    _no_float(quals, c)
    _need(ops, 2, "abs.sN d, a", c)
    ty = _types_of(quals)[0]
    p, n = fb.scratch(), fb.scratch()
    return [Setp(cmp="lt", dst=p, a=ops[1], b=Imm(0), type=ty, **c),
            Alu(op="neg", dst=n, srcs=(ops[1],), type=ty, **c),
            Selp(dst=ops[0], a=n, b=ops[1], p=p, type=ty, **c)]


def _bfe(fb, quals, ops, c):
    """``bfe.type d, a, pos, len`` with constant pos and len (what nvcc emits for bit fields)."""
    _need(ops, 4, "bfe.type d, a, b, c", c)
    ty = _types_of(quals)[0]
    w, s = _ty(ty)
    if not (isinstance(ops[2], Imm) and isinstance(ops[3], Imm)):
        raise UnsupportedError("bfe with a register position or length", c["pos"], None)
    p, n = ops[2].value & 0xFF, ops[3].value & 0xFF
    if n == 0:
        return [Mov(dst=ops[0], src=Imm(0), type=ty, **c)]
    p, n = min(p, w), min(n, w - min(p, w)) if p < w else 0
    if n == 0:  # position past the word: the sign (.s) or 0
        t = fb.scratch()
        return [Alu(op="shr", dst=t, srcs=(ops[1], Imm(w - 1)), type=ty, **c),
                Mov(dst=ops[0], src=t if s else Imm(0), type=ty, **c)]
    t = fb.scratch()
    return [Alu(op="shl", dst=t, srcs=(ops[1], Imm(w - p - n)), type=f"b{w}", **c),
            Alu(op="shr", dst=ops[0], srcs=(t, Imm(w - n)), type=ty, **c)]


def _bfi(fb, quals, ops, c):
    """``bfi.bN f, a, b, pos, len``: a's low len bits inserted into b at pos (constants)."""
    _need(ops, 5, "bfi.type f, a, b, c, d", c)
    ty = _types_of(quals)[0]
    w, _ = _ty(ty)
    if not (isinstance(ops[3], Imm) and isinstance(ops[4], Imm)):
        raise UnsupportedError("bfi with a register position or length", c["pos"], None)
    p, n = ops[3].value & 0xFF, ops[4].value & 0xFF
    if n == 0 or p >= w:
        return [Mov(dst=ops[0], src=ops[2], type=ty, **c)]
    n = min(n, w - p)
    mask = ((1 << n) - 1) << p
    t, u, v = fb.scratch(), fb.scratch(), fb.scratch()
    return [Alu(op="shl", dst=t, srcs=(ops[1], Imm(p)), type=ty, **c),
            Alu(op="and", dst=u, srcs=(t, Imm(mask)), type=ty, **c),
            Alu(op="and", dst=v, srcs=(ops[2], Imm(~mask & ((1 << w) - 1))), type=ty, **c),
            Alu(op="or", dst=ops[0], srcs=(u, v), type=ty, **c)]


def _space_decode(base: str, quals: list[str], ops: list, c: dict):
    """``ld/st`` through the litmus decoder, a ``.local`` access decoded as a ``.global`` one and
    given its space back (the litmus language has no .local; kernels do: each thread's own
    locations, kernel/memory.py)."""
    if "local" not in quals:
        return decode(_canonical(base, quals), ops, c["pos"], c["text"], c["guard"])
    ins = decode(_canonical(base, ["global" if q == "local" else q for q in quals]), ops, c["pos"], c["text"],
                 c["guard"])
    return replace(ins, space="local")


def _ld(fb, quals, ops, c):
    if any(q in ("v2", "v4", "v8") for q in quals):
        return _vector(fb, "ld", quals, ops, c)
    if "local" in quals:
        return [_space_decode("ld", quals, ops, c)]
    if "const" in quals:  # __constant__ data: a load of the const space (kernels.Layout: read-only)
        ld = decode(".".join(["ld"] + ["global" if q == "const" else q for q in quals]), ops, c["pos"],
                    c["text"], c["guard"])
        return [replace(ld, space="const")]
    if "param" not in quals:
        return None
    _need(ops, 2, "ld.param.type d, [p]", c)
    a = ops[1]
    if not isinstance(a, Addr) or not isinstance(a.base, Sym) or a.offset < 0:
        raise UnsupportedError(f"`{c['text']}`", c["pos"], "a parameter is read whole, at offset 0")
    ty = _param_type(quals, c, "ld.param.type d, [p]")
    # `[p+8]`: a word of a struct passed by value (kernel/multigpu.py: peer pointers), by that key
    key = a.base.name if not a.offset else f"{a.base.name}+{a.offset}"
    return [Mov(dst=ops[0], src=Sym(PARAM + key), type=ty, **c)]


def _st(fb, quals, ops, c):
    lits = literals(ops, next((q for q in quals if re.fullmatch(r"(u|s|b|f)(8|16|32|64)", q)), None), c)
    vector = any(q in ("v2", "v4", "v8", "param") for q in quals)
    if (lits is not ops or "local" in quals) and not vector:
        return [_space_decode("st", quals, lits, c)]
    ops = lits
    if any(q in ("v2", "v4", "v8") for q in quals) and "param" not in quals:
        return _vector(fb, "st", quals, ops, c)
    if "param" not in quals:
        return None
    _need(ops, 2, "st.param.type [p], v", c)
    a = ops[0]
    if not isinstance(a, Addr) or not isinstance(a.base, Sym) or a.offset:
        raise UnsupportedError(f"`{c['text']}`", c["pos"], "a parameter is written whole, at offset 0")
    return [ParamStore(a.base.name, ops[1], _param_type(quals, c, "st.param.type [p], v"), c["pos"],
                       c["text"])]


def _vector(fb, base: str, quals: list[str], ops: list, c: dict) -> list:
    """``ld/st{.sem.scope}{.space}.v2|.v4|.v8.type`` — nvcc's vector accesses (``int4``, the stores it
    merges: four ``stage[i] = …`` into one ``st.shared.v4.u32``; CUB's and NCCL's strong ``v2``/``v4``
    flag+data accesses). PTX ISA 8.2.4 (memory operations on vector data types): "modelled as a set
    of equivalent memory operations with a scalar data type, executed in an unspecified order on the
    elements in the vector". So: one scalar access per element, with the instruction's semantics
    and scope, at the address plus the element's offset.

    Weak, relaxed and volatile elements: here in element order, which changes no answer (ptx.cat,
    ptx-v7.5.cat): the elements are different locations; a program-order edge between them is in
    base causality, but every pattern that turns program order into synchronisation starts at a
    release or ends at an acquire (an access or a fence), and no fence can sit between two
    elements. So a causality path through the edge e0 → e1 enters e0 and leaves e1 by program
    order, which relates its ends directly; the edge itself relates two locations, which no axiom
    (Coherence, Causality, SC-per-Location: all per location) looks at. Each element is also
    single-copy atomic on its own only: a reader may see one element new and another old (a torn
    vector).

    Acquire and release elements are different: a release element orders the elements before it
    (an acquire element those after it) for whoever synchronises with it, so no one order may be
    fixed. A :class:`VectorOrder` before the elements lets the execution choose among every
    permutation of them (v2: 2, v4: 24; semantics/vectors.py). Leaving the elements unordered (no
    program order between them) would allow more: two readers that each acquire one element and
    then read the other, each seeing the other element old, need the two opposite orders in one
    execution (tests/kernel/test_vector_acqrel.py). A ``.v8`` access (40320 orders) stays a located
    "not supported yet", as do ``.mmio`` vectors and a vector load into its own address register
    (its elements' addresses would depend on the order)."""
    n = int(next(q for q in quals if q in ("v2", "v4", "v8"))[1:])
    scalar = [q for q in quals if q not in ("v2", "v4", "v8")]
    vec, addr = ((ops[0], ops[1]) if base == "ld" else (ops[1], ops[0])) if len(ops) == 2 else (None, None)
    if not isinstance(vec, Vec) or len(vec.items) != n or not isinstance(addr, Addr):
        raise ParseError(f"`{c['text']}` takes a vector of {n} and an address", c["pos"],
                         f"{base}.v{n}.type " + ("{d0, ...}, [a]" if base == "ld" else "[a], {v0, ...}"))
    ordered = any(q in ("acquire", "release") for q in scalar)
    if any(q in ("mmio", "acq_rel", "sc") for q in scalar) or (ordered and n > 4):
        raise UnsupportedError(f"an acquire or release vector access `{c['text']}` of {n} elements"
                               if ordered else f"an mmio vector access `{c['text']}`", c["pos"],
                               "PTX ISA 8.2.4: its elements are accessed in an unspecified order, which "
                               "decides what each acquire/release element orders; ptxmm checks every "
                               "order of a .v2 or .v4 acquire/release access (a .v8 has 40320), and "
                               "weak, relaxed and volatile vector accesses")
    if ordered and base == "ld" and addr.base in vec.items:
        raise UnsupportedError(f"a vector load into its own address register `{c['text']}`", c["pos"],
                               "its elements are loaded in an unspecified order; load into other registers")
    width = _ty(_types_of(scalar)[-1])[0] // 8 if _types_of(scalar) else 4
    out: list = []
    if ordered:
        pos = c["pos"]
        out.append(VectorOrder(name=f"%vector:{pos.line}:{pos.col}" if pos is not None else "%vector",
                               n=n, pos=pos, text=c["text"]))
    for k, item in enumerate(vec.items):
        a = Addr(addr.base, addr.offset + k * width)
        if base == "ld":
            dst = fb.scratch() if item == Sym("_") else item
            out.append(_space_decode(base, scalar, [dst, a], c))
        else:
            out.append(_space_decode(base, scalar, [a, item], c))
    return out


def _mbarrier(fb, quals, ops, c):
    """``mbarrier.try_wait{.parity}… p, [a], state|parity, suspendTimeHint`` (CUTLASS's wait): the
    hint bounds how long one try_wait may suspend the thread before it returns; a try_wait that
    returns False is already an execution the model allows, so the hint is dropped."""
    if "try_wait" in quals and len(ops) == 4:
        return [decode(".".join(["mbarrier", *quals]), ops[:3], c["pos"], c["text"], c["guard"])]
    return None

_BIT_TYPES = {"popc": ("b32", "b64"), "clz": ("b32", "b64"), "brev": ("b32", "b64"),
              "bfind": ("u32", "u64", "s32", "s64")}


def _bits(base: str):
    """``popc``, ``clz``, ``brev``, ``bfind{.shiftamt}`` (PTX ISA, Integer Arithmetic Instructions):
    ``__popc``, ``__clz``, ``__brev``, ``__ffs`` (brev + bfind.shiftamt). The result is .u32 but for
    brev (the operand's type); the operation reads its operand at the instruction's type (``op:type``,
    ir/values.py BIT_OPS)."""
    types = _BIT_TYPES[base]
    form = f"{base}{'{.shiftamt}' if base == 'bfind' else ''}.type d, a   (.type = {' | '.join(types)})"

    def lower(fb, quals, ops, c):
        _need(ops, 2, form, c)
        if not isinstance(ops[1], (Reg, Imm)):  # (the destination: bodies._destinations)
            raise ParseError(f"`{c['text']}`: a must be a register or an immediate", c["pos"],
                             f"expected form: {form}")
        shift = base == "bfind" and "shiftamt" in quals
        rest = [q for q in quals if not (shift and q == "shiftamt")]
        if len(rest) != 1 or rest[0] not in types:
            raise ParseError(f"`{c['text']}`: unexpected qualifiers", c["pos"], f"expected form: {form}")
        ty = rest[0]
        op = base if base != "bfind" else ty[0].replace("b", "u") + "bfind" + (".shiftamt" if shift else "")
        return [Alu(op=f"{op}:{ty}", dst=ops[0], srcs=(ops[1],), type=ty if base == "brev" else "u32", **c)]
    return lower


def _mov(fb, quals, ops, c):
    """``mov.bN {a, b, ...}, d`` (unpack) and ``mov.bN d, {a, b, ...}`` (pack): PTX ISA, mov: "d =
    a.x | (a.y << 32)" — the first element is the least significant part. nvcc writes them to split
    a 64-bit value into halves (a 64-bit ``__shfl_sync``, ``%envreg`` pairs) and join them back.
    Lowered to shifts, masks and moves at the element's width; a ``_`` element is not written.
    Anything else is the float literal handler's or the plain decoder's."""
    if not any(isinstance(o, Vec) for o in ops):
        return FLOAT_HANDLERS["mov"](fb, quals, ops, c)
    _need(ops, 2, "mov.bN {a, b}, d | mov.bN d, {a, b}", c)
    ty = next((q for q in quals if re.fullmatch(r"b(16|32|64|128)", q)), None)
    vec, other = (ops[0], ops[1]) if isinstance(ops[0], Vec) else (ops[1], ops[0])
    if ty is None or ty == "b128" or isinstance(other, Vec) or len(quals) != 1 \
            or not isinstance(other, (Reg, Imm)) or len(vec.items) not in (2, 4):
        raise UnsupportedError(f"`{c['text']}`", c["pos"], "ptxmm reads mov.b32/.b64 with a vector of "
                               "two or four elements (pack or unpack)")
    w = int(ty[1:])
    ew = w // len(vec.items)
    if ew < 8:
        raise ParseError(f"`{c['text']}`: {len(vec.items)} elements of a .{ty}", c["pos"],
                         "mov.b32 {a, b} (.b16 halves), mov.b64 {a, b} (.b32) or {a, b, c, d} (.b16)")
    ety = f"b{ew}"
    out: list[Instruction] = []
    if isinstance(ops[0], Vec):  # unpack
        for k, item in enumerate(vec.items):
            if isinstance(item, Sym) and item.name == "_":
                continue
            if not isinstance(item, Reg):
                raise ParseError(f"`{c['text']}`: element {k} must be a register or `_`", c["pos"], None)
            t = fb.scratch()
            out += [Alu(op="shr", dst=t, srcs=(other, Imm(k * ew)), type=ty, **c),
                    Mov(dst=item, src=t, type=ety, **c)]
        return out
    acc = None  # (a destination that is no register: bodies._destinations)
    for k, item in enumerate(vec.items):
        if not isinstance(item, (Reg, Imm)):
            raise ParseError(f"`{c['text']}`: element {k} must be a register or an immediate", c["pos"], None)
        t, m = fb.scratch(), fb.scratch()
        out += [Mov(dst=t, src=item, type=ety, **c), Mov(dst=m, src=t, type=ty, **c),
                Alu(op="and", dst=m, srcs=(m, Imm((1 << ew) - 1)), type=ty, **c)]
        if k:
            out.append(Alu(op="shl", dst=m, srcs=(m, Imm(k * ew)), type=ty, **c))
            out.append(Alu(op="or", dst=m, srcs=(acc, m), type=ty, **c))
        acc = m
    out.append(Mov(dst=other, src=acc, type=ty, **c))
    return out


PARAM = "%param:"
_NVCC = {"cvta": _cvta, "cvt": _cvt, "mul": _mul, "mad": _mad, "abs": _abs, "bfe": _bfe, "bfi": _bfi,
         **{k: _bits(k) for k in _BIT_TYPES},
         "ld": _ld, "st": _st, "mbarrier": _mbarrier, "cp": _cp, **FLOAT_HANDLERS, "mov": _mov}
