"""ptxas as an oracle for the ``.ptx`` front end's operand rules (issue 24, item 1).

A litmus test is not a PTX module. :func:`kernel` wraps one thread body into a minimal ``.entry``
kernel for ``ptxas -arch=sm_90``: the locations become module-scope ``.global``/``.shared``
variables, the registers ``.reg`` declarations (without the litmus initial values, which ptxas
does not take), the labels stay, and a ``ret`` ends it. :func:`litmus` wraps the same body into a
one-thread ``.ptx`` litmus test for ptxmm, every register starting at 0 (so that ptxmm's own
"read before written" rule, which ptxas does not have, never fires).

:func:`body` is a hypothesis strategy for bodies near the valid ones: instructions of the forms
the front end models (mov, the ALU operations, setp, selp, ld, st, atom, red, bar, mbarrier,
mapa, a guarded bra), with
instruction types, register types, literals (decimal, hexadecimal, octal, binary, ``U`` suffixes,
signs, floating-point spellings, boundary values) and state spaces drawn so that about half of the
bodies are wrong in one place. It also says where ptxmm departs from ptxas on purpose
(:attr:`Body.oversized`): ptxas silently truncates an integer constant too large for its operand
(``mov.u32 %r0, 0x1FFFFFFFF`` assembles), ptxmm rejects it, since a truncated literal changes the
program the user meant (README: "a literal its type cannot hold" is an error).

``ptxas_accepts`` runs ptxas on one kernel (a temporary file; ~30 ms); ``ptxmm_verdict`` parses
the litmus test: "accept", "reject" (a located ParseError/SemanticError) or "unsupported"."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

from hypothesis import strategies as st

import ptxmm
from ptxmm.errors import PtxmmError, UnsupportedError

PTXAS = shutil.which("ptxas")

# the registers every body may use: name → type
REGS = {
    "%c0": "u8", "%h0": "u16", "%h1": "u16", "%hs0": "s16", "%bh0": "b16",
    "%r0": "u32", "%r1": "u32", "%r2": "u32", "%s0": "s32", "%s1": "s32", "%b0": "b32", "%b1": "b32",
    "%rd0": "u64", "%rd1": "u64", "%sd0": "s64", "%bd0": "b64", "%f0": "f32", "%fd0": "f64",
    "%p0": "pred", "%p1": "pred",
}
# the locations: name → (state space, type)
LOCS = {"gx": ("global", "u32"), "gy": ("global", "s32"), "gz": ("global", "b32"),
        "gw": ("global", "u64"), "gh": ("global", "u16"), "sx": ("shared", "u32"),
        "sw": ("shared", "u64"), "mb": ("shared", "b64")}


def kernel(lines: list[str]) -> str:
    """The PTX module ptxas assembles for one body."""
    decl = "".join(f".{sp} .{ty} {name};\n" for name, (sp, ty) in LOCS.items())
    regs = "".join(f"  .reg .{ty} {name};\n" for name, ty in REGS.items())
    body = "".join(f"  {ln}\n" for ln in lines)
    return (".version 8.0\n.target sm_90\n.address_size 64\n" + decl
            + ".visible .entry k()\n{\n" + regs + body + "$Lend:\n  ret;\n}\n")


def litmus(lines: list[str]) -> str:
    """The same body as a one-thread ``.ptx`` litmus test."""
    decl = "".join(f".{sp} .{ty} {name} = 0;\n" for name, (sp, ty) in LOCS.items())
    regs = "".join(f"  .reg .{ty} {name} = 0;\n" for name, ty in REGS.items())
    body = "".join(f"  {ln}\n" for ln in lines)
    return decl + ".thread T0 {\n" + regs + body + "$Lend:\n}\n"


def ptxas_accepts(lines: list[str]) -> tuple[bool, str]:
    """Whether ptxas -arch=sm_90 assembles the kernel of ``lines``, and what it said."""
    assert PTXAS is not None
    fd, path = tempfile.mkstemp(suffix=".ptx")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(kernel(lines))
        r = subprocess.run([PTXAS, "-arch=sm_90", path, "-o", os.devnull], capture_output=True,
                           text=True, timeout=60)
    finally:
        os.unlink(path)
    return r.returncode == 0, r.stderr.replace(path, "k.ptx").strip()


def ptxmm_verdict(lines: list[str]) -> tuple[str, str]:
    """ptxmm's answer on the litmus form of ``lines``: ("accept" | "reject" | "unsupported", message)."""
    try:
        ptxmm.parse(litmus(lines), "k.ptx")
    except UnsupportedError as e:
        return "unsupported", str(e)
    except PtxmmError as e:
        return "reject", str(e)
    return "accept", ""


# ----- the generator ------------------------------------------------------------------------------

INT_TYPES = [f"{k}{w}" for k in "usb" for w in (16, 32, 64)]
ALL_TYPES = INT_TYPES + ["u8", "s8", "b8", "f32", "f64", "pred"]
ALU2 = ["add", "sub", "mul.lo", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "min", "max"]
ALU1 = ["not", "neg"]
CMPS = ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"]
ATOM_OPS = ["add", "inc", "dec", "exch", "cas", "and", "or", "xor", "min", "max"]
SPACES = ["", "", ".global", ".shared", ".shared::cta", ".shared::cluster"]
# values at the edges of every width, and their negations
EDGES = [0, 1, 2, 5, 0x7F, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
         0xFFFFFFFF, 0x100000000, 0x1FFFFFFFF, 4294967297, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000,
         0xFFFFFFFFFFFFFFFF]


def width(t: str) -> int:
    return 1 if t == "pred" else int(t[1:])


def fits(value: int, ty: str) -> bool:
    """Whether a constant names a value of type ``ty`` without truncation, read signed or unsigned
    (``-1`` is 0xFFFFFFFF in a .u32); a .pred constant is 0 or 1."""
    if ty == "pred":
        return value in (0, 1)
    w = width(ty)
    return -(1 << (w - 1)) <= value < 1 << w


@dataclass
class Body:
    lines: list[str]
    oversized: list[str] = field(default_factory=list)  # constants that do not fit their operand


class _Gen:
    def __init__(self, draw):
        self.draw = draw
        self.oversized: list[str] = []

    def pick(self, xs):
        return self.draw(st.sampled_from(list(xs)))

    def chance(self, num: int, den: int) -> bool:
        return self.draw(st.integers(0, den - 1)) < num

    def ty(self, good: list[str]) -> str:
        return self.pick(good) if self.chance(5, 6) else self.pick(ALL_TYPES)

    def literal(self, slot: str) -> str:
        """An integer (or, rarely, floating-point) constant for an operand of type ``slot``."""
        if self.chance(1, 12):
            return self.pick(["0f3F800000", "0d3FF0000000000000", "1.0", "0F00000000"])
        w = 64 if slot in ("f32", "f64") else max(1, width(slot))
        good = [v for v in EDGES if v < 1 << w] or [0, 1]
        v = self.pick(good) if self.chance(4, 5) else self.pick(EDGES)
        if self.chance(1, 5) and v:
            v = -v
        text = self.spell(abs(v), v < 0)
        if slot not in ("f32", "f64") and not fits(v, slot):
            self.oversized.append(text)
        return text

    def spell(self, v: int, neg: bool) -> str:
        style = self.pick(["dec", "dec", "hex", "HEX", "oct", "bin", "U", "plus"])
        s = {"dec": str(v), "hex": hex(v), "HEX": "0X" + format(v, "X"),
             "oct": "0" + format(v, "o") if v else "0", "bin": "0b" + format(v, "b"),
             "U": f"{v}U", "plus": f"+{v}"}[style]
        return "-" + s.lstrip("+") if neg else s

    def reg(self, ty: str) -> str:
        """A register of type ``ty`` mostly, of another type sometimes."""
        same = [r for r, t in REGS.items() if t == ty]
        if same and self.chance(3, 4):
            return self.pick(same)
        if ty != "pred" and self.chance(1, 2):
            w = width(ty)
            near = [r for r, t in REGS.items() if t != "pred" and width(t) == w]
            if near:
                return self.pick(near)
        return self.pick(list(REGS))

    def value(self, ty: str) -> str:
        k = self.draw(st.integers(0, 19))
        if k < 12:
            return self.reg(ty)
        if k < 19:
            return self.literal(ty)
        return self.pick(list(LOCS))

    def loc(self, ty: str, space: str) -> str:
        """A location for ``[...]``, or sometimes a register holding an address (0 here: the
        property is about the operand, not the access)."""
        if self.chance(1, 10):
            return self.pick(["%rd0", "%rd1", "%bd0", "%r0", "%s0", "%h0", "%f0", "%p0", "%fd0"])
        sp = "shared" if "shared" in space else "global" if space else None
        ok = [n for n, (s, t) in LOCS.items() if (sp is None or s == sp) and width(t) == width(ty)
              ] if ty != "pred" else []
        if ok and self.chance(5, 6):
            return self.pick(ok)
        return self.pick(list(LOCS))

    def guard(self) -> str:
        if not self.chance(1, 5):
            return ""
        r = self.pick(["%p0", "%p1"]) if self.chance(4, 5) else self.pick(list(REGS))
        return f"@{'!' if self.chance(1, 3) else ''}{r} "

    # -- the instruction forms --------------------------------------------------------------------
    def mov(self) -> str:
        t = self.ty(INT_TYPES + ["pred", "f32"])
        return f"mov.{t} {self.reg(t)}, {self.value(t)}"

    def alu(self) -> str:
        op = self.pick(ALU2 + ALU1)
        good = {"and": ["b16", "b32", "b64", "pred"], "or": ["b32", "pred"], "xor": ["b32", "b64"],
                "not": ["b16", "b32", "b64", "pred"], "shl": ["b16", "b32", "b64"],
                "shr": INT_TYPES, "neg": ["s16", "s32", "s64"]}.get(op, [f"{k}{w}" for k in "us"
                                                                      for w in (16, 32, 64)])
        t = self.ty(good)
        srcs = [self.value(t)] if op in ALU1 else [self.value(t), self.value(
            "u32" if op in ("shl", "shr") else t)]
        return f"{op}.{t} {self.reg(t)}, {', '.join(srcs)}"

    def setp(self) -> str:
        t = self.ty(INT_TYPES)
        cmp = self.pick(CMPS[:2] if t[0] == "b" else CMPS[:6] if t[0] == "s" else CMPS) \
            if self.chance(5, 6) else self.pick(CMPS)
        return f"setp.{cmp}.{t} {self.reg('pred')}, {self.value(t)}, {self.value(t)}"

    def selp(self) -> str:
        t = self.ty(INT_TYPES)
        return f"selp.{t} {self.reg(t)}, {self.value(t)}, {self.value(t)}, {self.value('pred')}"

    def ld(self) -> str:
        sem = self.pick(["", "", ".relaxed.gpu", ".acquire.sys", ".volatile", ".weak"])
        sp = self.pick(SPACES)
        t = self.ty(["u32", "s32", "b32", "u64", "b64", "u16", "s16"])
        return f"ld{sem}{sp}.{t} {self.reg(t)}, [{self.loc(t, sp)}]"

    def st(self) -> str:
        sem = self.pick(["", "", ".relaxed.cta", ".release.gpu", ".volatile"])
        sp = self.pick(SPACES)
        t = self.ty(["u32", "s32", "b32", "u64", "b64", "u16"])
        return f"st{sem}{sp}.{t} [{self.loc(t, sp)}], {self.value(t)}"

    def atom(self, red: bool) -> str:
        op = self.pick([o for o in ATOM_OPS if not (red and o in ("exch", "cas"))])
        good = {"add": ["u32", "s32", "u64"], "inc": ["u32"], "dec": ["u32"],
                "min": ["u32", "s32", "u64", "s64"], "max": ["u32", "s32", "u64", "s64"]
                }.get(op, ["b32", "b64"])
        t = self.ty(good)
        sp = self.pick(SPACES)
        sem = self.pick(["", ".relaxed.gpu", ".acq_rel.sys" if not red else ".release.cta"])
        a = f"[{self.loc(t, sp)}]"
        if red:
            return f"red{sem}{sp}.{op}.{t} {a}, {self.value(t)}"
        srcs = [self.value(t)] + ([self.value(t)] if op == "cas" else [])
        return f"atom{sem}{sp}.{op}.{t} {self.reg(t)}, {a}, {', '.join(srcs)}"

    def bar(self) -> str:
        """A CTA barrier; its thread count a multiple of 32, since a litmus test counts its own
        threads there (``bar.sync 0, 2``), where ptxas wants whole warps."""
        a = self.pick(["0", "1", "15", "16", "0x10", "-1", "4294967296"]) if self.chance(2, 3) \
            else self.reg("u32")
        b = "" if self.chance(1, 2) else ", " + (self.pick(["32", "64", "0"]) if self.chance(2, 3)
                                                   else self.reg("u32"))
        if a[0] in "-0123456789" and not fits(int(a, 0), "u32"):
            self.oversized.append(a)
        if self.chance(1, 4):
            return f"bar{self.pick(['', '.cta'])}.arrive {a}, {self.pick(['32', '64'])}"
        return self.pick(["bar.sync", "barrier.sync", "bar.cta.sync",
                          "barrier.cta.sync.aligned"]) + f" {a}{b}"

    def mbarrier(self) -> str:
        op = self.pick(["init", "arrive", "arrive_drop", "expect_tx", "complete_tx", "test_wait",
                        "try_wait", "test_wait.parity"])
        a = "mb" if self.chance(3, 4) else self.pick(list(LOCS) + ["%rd0", "%r0"])
        if op == "init" or op.endswith("_tx"):
            return f"mbarrier.{op}.shared.b64 [{a}], {self.value('u32')}"
        if op.startswith("arrive"):
            st_ = "_" if self.chance(1, 4) else self.reg("b64")
            n = f", {self.value('u32')}" if self.chance(1, 3) else ""
            return f"mbarrier.{op}.shared.b64 {st_}, [{a}]{n}"
        state = self.value("u32" if op.endswith("parity") else "b64")
        return f"mbarrier.{op}.shared.b64 {self.reg('pred')}, [{a}], {state}"

    def mapa(self) -> str:
        t = self.pick(["u32", "u64"])
        src = self.pick(["sx", "sw", "mb", "gx", self.reg(t)])
        return f"mapa.shared::cluster.{t} {self.reg(t)}, {src}, {self.value('u32')}"

    def bra(self) -> str:
        return "bra $Lend" if self.chance(1, 4) else "bra.uni $Lend"

    def instr(self) -> str:
        k = self.draw(st.integers(0, 12))
        form = [self.mov, self.alu, self.alu, self.setp, self.selp, self.ld, self.st,
                lambda: self.atom(False), lambda: self.atom(True), self.bra, self.bar,
                self.mbarrier, self.mapa][k]()
        return self.guard() + form + ";"


@st.composite
def body(draw, max_instrs: int = 3) -> Body:
    g = _Gen(draw)
    n = draw(st.integers(1, max_instrs))
    lines = [g.instr() for _ in range(n)]
    return Body(lines, g.oversized)
