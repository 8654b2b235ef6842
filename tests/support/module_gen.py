"""Small PTX modules for the differential test against ptxas (issue 38, item 6;
tests/kernel/test_module_operands.py): one ``.entry`` kernel with register declarations of varied
widths and types and a few instructions mixing the forms the module reader decodes (the litmus
decoder's: mov, the ALU operations, setp, selp, ld/st, atom; and the forms it lowers: cvt, cvta,
mul.wide/hi, mad, abs, bfe, bfi, ld.param, vector ld/st, a special register read), each operand a
register drawn mostly of a fitting type and sometimes of any declared one. Constants are small
(ptxas truncates an oversized one without a word, which ptxmm refuses on purpose: see
ptxas_oracle.py), so that a disagreement is about register and instruction types.

:func:`verdicts` runs both: ptxas -arch=sm_90 on the module, ptxmm's module reader on the same
text ("accept", "reject": a located error, or "unsupported")."""

from __future__ import annotations

import os
import subprocess
import tempfile

from hypothesis import strategies as st

from ptxmm.errors import PtxmmError, UnsupportedError
from ptxmm.kernel.module import parse
from support.ptxas_oracle import PTXAS

REG_TYPES = ["b8", "u8", "s8", "b16", "u16", "s16", "b32", "u32", "s32", "b64", "u64", "s64", "f32",
             "f64", "pred"]
INT = [f"{k}{w}" for k in "usb" for w in (16, 32, 64)]
SPECIALS = ["%tid.x", "%ctaid.y", "%ntid.x", "%laneid", "%cluster_ctarank"]


def header(regs: dict[str, str]) -> str:
    decl = "".join(f"\t.reg .{t} {r};\n" for r, t in regs.items())
    return (".version 8.0\n.target sm_90\n.address_size 64\n.global .align 8 .b8 g[64];\n"
            ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n" + decl)


def module(regs: dict[str, str], lines: list[str]) -> str:
    return header(regs) + "".join(f"\t{ln}\n" for ln in lines) + "\tret;\n}\n"


class _Gen:
    def __init__(self, draw, regs: dict[str, str]):
        self.draw, self.regs = draw, regs

    def pick(self, xs):
        return self.draw(st.sampled_from(list(xs)))

    def chance(self, num: int, den: int) -> bool:
        return self.draw(st.integers(0, den - 1)) < num

    def reg(self, ty: str) -> str:
        """A declared register of ``ty`` (or of its width) mostly; any declared one sometimes."""
        w = ty[1:]
        same = [r for r, t in self.regs.items() if t == ty] or \
            [r for r, t in self.regs.items() if t[1:] == w and t[0] in "usb" and ty[0] in "usb"]
        if same and self.chance(4, 5):
            return self.pick(same)
        return self.pick(list(self.regs))

    def val(self, ty: str) -> str:
        return str(self.draw(st.integers(0, 7))) if ty != "pred" and self.chance(1, 5) else self.reg(ty)

    def ty(self, good: list[str]) -> str:
        return self.pick(good) if self.chance(6, 7) else self.pick(INT + ["f32", "pred"])

    def addr(self) -> str:
        return "[g]" if self.chance(1, 3) else f"[{self.reg('u64')}]"

    def guard(self) -> str:
        if not self.chance(1, 6):
            return ""
        return f"@{'!' if self.chance(1, 2) else ''}{self.reg('pred')} "

    def instr(self) -> str:
        k = self.draw(st.integers(0, 17))
        return self.direct(k) if k < 7 or k == 17 else self.lowered(k)

    def direct(self, k: int) -> str:
        """The forms the litmus decoder reads."""
        if k == 17:
            op, t = self.pick([("add", "u32"), ("add", "u64"), ("exch", "b32"), ("max", "s32"),
                               ("or", "b64")])
            t = self.ty([t])
            return f"atom.global.{op}.{t} {self.reg(t)}, {self.addr()}, {self.val(t)};"
        if k == 0:
            t = self.ty(INT)
            return f"mov.{t} {self.reg(t)}, {self.val(t)};"
        if k in (1, 2):
            op = self.pick(["add", "sub", "mul.lo", "min", "max", "and", "or", "xor", "shl", "shr"])
            t = self.ty(["b16", "b32", "b64"] if op in ("and", "or", "xor", "shl") else INT)
            b = self.val("u32" if op in ("shl", "shr") else t)
            return f"{op}.{t} {self.reg(t)}, {self.val(t)}, {b};"
        if k == 3:
            t = self.ty(["s32", "u32", "s64", "b32"])
            return f"setp.{self.pick(['eq', 'ne'])}.{t} {self.reg('pred')}, {self.val(t)}, {self.val(t)};"
        if k == 4:
            t = self.ty(INT)
            return f"selp.{t} {self.reg(t)}, {self.val(t)}, {self.val(t)}, {self.reg('pred')};"
        if k == 5:
            t = self.ty(["u8", "s8", "u16", "s16", "u32", "s32", "b32", "u64", "b64"])
            return f"ld.global.{t} {self.reg(t)}, {self.addr()};"
        if k == 6:
            t = self.ty(["u8", "b16", "u32", "s32", "b64"])
            return f"st.global.{t} {self.addr()}, {self.val(t)};"
        raise AssertionError(k)

    def lowered(self, k: int) -> str:
        """The forms the module reader lowers (and a special register read)."""
        if k == 7:
            d, a = self.pick(INT + ["u8", "s8"]), self.pick(INT + ["u8", "s8"])
            return f"cvt.{d}.{a} {self.reg(d)}, {self.reg(a)};"
        if k == 8:
            t = self.pick(["u32", "s32", "u16", "s16"])
            wide = f"{t[0]}{2 * int(t[1:])}"
            return f"mul.wide.{t} {self.reg(wide)}, {self.reg(t)}, {self.val(t)};"
        if k == 9:
            t = self.pick(["u32", "s32", "u64"])
            if self.chance(1, 2):
                return f"mul.hi.{t} {self.reg(t)}, {self.reg(t)}, {self.val(t)};"
            wide = f"{t[0]}{2 * int(t[1:])}" if t != "u64" else t
            mode = "wide" if t != "u64" and self.chance(1, 2) else "lo"
            d = wide if mode == "wide" else t
            return f"mad.{mode}.{t} {self.reg(d)}, {self.reg(t)}, {self.val(t)}, {self.reg(d)};"
        if k == 10:
            t = self.pick(["s32", "s64", "s16"])
            return f"abs.{t} {self.reg(t)}, {self.reg(t)};"
        if k == 11:
            t = self.pick(["u32", "s32", "u64"])
            return f"bfe.{t} {self.reg(t)}, {self.reg(t)}, {self.draw(st.integers(0, 7))}, 3;"
        if k == 12:
            t = self.pick(["b32", "b64"])
            return f"bfi.{t} {self.reg(t)}, {self.reg(t)}, {self.reg(t)}, 2, 3;"
        if k == 13:
            t = self.ty(["u64", "u32", "b64"])
            return f"ld.param.{t} {self.reg(t)}, [k_param_0];"
        if k == 14:
            t = self.pick(["u32", "u16", "b64"])
            a, b = self.reg(t), self.reg(t)
            if self.chance(1, 2):
                return f"ld.global.v2.{t} {{{a}, {b}}}, {self.addr()};"
            return f"st.global.v2.{t} {self.addr()}, {{{a}, {b}}};"
        if k == 15:
            t = self.pick(["u64", "u32"])
            return f"cvta.to.global.{t} {self.reg(t)}, {self.reg(t)};"
        s = self.pick(SPECIALS)
        if self.chance(2, 3):
            t = self.pick(["u32", "u16", "u64", "s32", "b32"])
            return f"mov.{t} {self.reg(t)}, {s};"
        if self.chance(1, 2):
            return f"cvt.u64.u32 {self.reg('u64')}, {s};"
        return f"add.u32 {self.reg('u32')}, {s}, 1;"


@st.composite
def modules(draw, max_instrs: int = 3) -> tuple[dict[str, str], list[str]]:
    """(registers → type, instruction lines)."""
    n = draw(st.integers(3, 9))
    types = draw(st.lists(st.sampled_from(REG_TYPES), min_size=n, max_size=n))
    regs = {f"%v{k}": t for k, t in enumerate(types)}
    regs |= {"%a0": "u64", "%p0": "pred"}
    g = _Gen(draw, regs)
    lines = [g.guard() + g.instr() for _ in range(draw(st.integers(1, max_instrs)))]
    return regs, lines


def ptxas_verdict(text: str) -> tuple[bool, str]:
    assert PTXAS is not None
    fd, path = tempfile.mkstemp(suffix=".ptx")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        r = subprocess.run([PTXAS, "-arch=sm_90", path, "-o", os.devnull], capture_output=True,
                           text=True, timeout=60)
    finally:
        os.unlink(path)
    return r.returncode == 0, r.stderr.replace(path, "k.ptx").strip()


def ptxmm_verdict(text: str) -> tuple[str, str]:
    try:
        parse(text, "k.ptx")
    except UnsupportedError as e:
        return "unsupported", str(e)
    except PtxmmError as e:
        return "reject", str(e)
    return "accept", ""
