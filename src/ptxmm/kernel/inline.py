"""A kernel's body with its calls expanded (:class:`Expander`): a failing ``assert`` becomes a
recorded stop, ``printf`` is dropped, a ``.func`` of the module is inlined with its registers and
labels renamed per call, and parameters become their values; nvcc's spin loops get their exit
test on the backward branch (:func:`thread_jumps`)."""

from __future__ import annotations

from ..errors import SemanticError, UnsupportedError
from ..ir.layout import Layout
from ..ir.program import (
    Addr,
    Branch,
    Halt,
    Imm,
    Instruction,
    Label,
    Load,
    Mov,
    Reg,
    Ret,
    Sym,
    TensorMapReplace,
    operands,
)
from ..ir.stops import Stop, StopKind
from .demangle import demangle
from .module import PARAM, Call, Function, Module, ParamStore
from .threads import SPECIAL


class Expander:
    """A function body with its calls expanded: ``__assertfail`` → the thread stops (an
    assertion stop, :mod:`ptxmm.ir.stops`, at the call's PTX line); ``vprintf`` → dropped (with a
    note); a ``.func`` of the module → inlined (registers and labels renamed per call);
    parameters → their values."""

    def __init__(self, module: Module, layout: Layout, values: dict[str, int], notes: list[str]):
        self.m, self.layout, self.values, self.notes = module, layout, values, notes
        self.calls = 0
        self.symbols = layout.symbols
        self.declared: dict[str, str] = {}  # every declared register (an inlined body's renamed) → type

    def expand(self, fn: Function) -> tuple[Instruction, ...]:
        out = _printf_results(self.body(fn, {}, None, depth=0))
        return tuple(thread_jumps(out))

    def body(self, fn: Function, params: dict[str, Reg], frame: str | None, depth: int) -> list:
        """``params``: (inlined function) parameter name → the caller's register holding it;
        ``frame``: the suffix of an inlined body's registers and labels."""
        out: list = []
        pending: dict[str, object] = {}
        self.declared |= {f"{r}{frame or ''}": ty for r, ty in fn.reg_types().items()}
        bound = dict(params)  # parameter and return-value names → the registers holding them
        for ins in fn.body:
            if isinstance(ins, ParamStore):
                if frame is not None and ins.name in {r.name for r in fn.rets}:
                    out.append(Mov(dst=Reg(f"%ptxmm.ret{frame}.{ins.name}"), src=self.rename(ins.src, frame),
                                   type=ins.type, pos=ins.pos, text=ins.text))
                else:
                    pending[ins.name] = (ins, self.rename(ins.src, frame))
                continue
            if isinstance(ins, Call):
                out += self.call(ins, pending, frame, depth, bound)
                pending = {}
                continue
            if isinstance(ins, Ret) and frame is not None:
                out.append(Branch(target=f"$ptxmm.end{frame}", pos=ins.pos, text=ins.text,
                                  guard=self.rg(ins, frame)))
                continue
            out.append(self.instr(ins, fn, bound, frame))
        return out

    def rg(self, ins, frame):
        if ins.guard is None or frame is None:
            return ins.guard
        return (self.rreg(ins.guard[0], frame), ins.guard[1])

    def rreg(self, r: Reg, frame: str | None) -> Reg:
        if frame is None or SPECIAL.match(r.name):
            return r
        return Reg(f"{r.name}{frame}")

    def rename(self, o, frame: str | None):
        if isinstance(o, Reg):
            return self.rreg(o, frame)
        if isinstance(o, Addr) and isinstance(o.base, Reg):
            return Addr(self.rreg(o.base, frame), o.offset)
        return o

    def instr(self, ins: Instruction, fn: Function, params: dict[str, Reg], frame: str | None) -> Instruction:
        from dataclasses import replace

        if isinstance(ins, Load) and ins.proxy != "generic":
            raise UnsupportedError(f"`{ins.text}` (the {ins.proxy} proxy in a kernel)", ins.pos,
                                   "__constant__ and texture data are not modelled yet")
        if isinstance(ins, TensorMapReplace):
            raise UnsupportedError(f"`{ins.text}` in a kernel (a tensor map the kernel modifies)", ins.pos,
                                   "kernels take tensor maps as `const __grid_constant__ CUtensorMap` "
                                   "parameters; write a map updated on the device as a .ptx litmus test")
        self.check_symbols(ins)
        ch = self.renamed(ins, frame) if frame is not None else {}
        if isinstance(ins, Mov) and isinstance(ins.src, Sym) and ins.src.name.startswith(PARAM):
            ch["src"] = self.param(ins, ins.src.name[len(PARAM):], fn, params, frame)
        return replace(ins, **ch) if ch else ins

    def param(self, ins: Mov, p: str, fn: Function, params: dict[str, Reg], frame: str | None):
        """The value ``ld.param [p]`` reads: the caller's register (an inlined function's parameter,
        a call's return value), or the launch's argument."""
        if p in params:
            return params[p]
        if frame is None and p in self.values:
            return Imm(self.values[p])
        if "+" in p:  # `ld.param [p+8]`: a word of an aggregate; the launch's peers(...) give them
            raise UnsupportedError(f"`{ins.text}` reads {p}: a parameter read at an offset", ins.pos,
                                   "ptxmm knows the words of a struct passed by value only for "
                                   "`S name = peers(buf)` in a launch on N gpus, 8 bytes per GPU")
        if frame is None and p in self.symbols:  # a tensor map parameter's bytes
            raise UnsupportedError(f"`{ins.text}` reads the bytes of a tensor map parameter", ins.pos,
                                   "a CUtensorMap is an opaque object: pass its address (&tm) to "
                                   "cp.async.bulk.tensor")
        raise SemanticError(f"`{ins.text}` reads {p}, which is not a parameter of "
                            f"{'the kernel' if frame is None else fn.name}", ins.pos, None)

    def check_symbols(self, ins: Instruction) -> None:
        for o in operands(ins):
            s = o.base if isinstance(o, Addr) else o
            if isinstance(s, Sym) and not s.name.startswith(PARAM):
                self.symbol(s, ins)

    def renamed(self, ins: Instruction, frame: str) -> dict:
        """An inlined instruction's registers and labels, suffixed with its call's frame."""
        from dataclasses import fields

        ch: dict = {"guard": self.rg(ins, frame)}
        for f in fields(ins):
            v = getattr(ins, f.name)
            if f.name in ("pos", "text", "guard"):
                continue
            if isinstance(v, (Reg, Addr)):
                ch[f.name] = self.rename(v, frame)
            elif isinstance(v, tuple) and f.name in ("srcs", "ids"):
                ch[f.name] = tuple(self.rename(o, frame) for o in v)
        if isinstance(ins, Label):
            ch["name"] = f"{ins.name}{frame}"
        if isinstance(ins, Branch):
            ch["target"] = f"{ins.target}{frame}"
        return ch

    def symbol(self, s: Sym, ins: Instruction) -> None:
        if any(v.dynamic and v.name == s.name for v in self.m.variables) and s.name not in self.symbols:
            name = demangle(s.name)
            raise SemanticError(f"`{ins.text}` uses the dynamic shared array {name}, and the launch does "
                                "not give its size", ins.pos,
                                f"give it as the last item of <<< >>>: <<<GRID, BLOCK, int {name}[N]>>>")
        if s.name not in self.symbols and s.name != "_":
            raise UnsupportedError(f"`{ins.text}` names {s.name}, which is not a .global or .shared "
                                   "variable", ins.pos,
                                   ".const, .local and function addresses are not modelled yet")

    def call(self, c: Call, pending: dict, frame: str | None, depth: int, bound: dict) -> list:
        g = self.rg(c, frame)
        if c.callee == "__assertfail":
            line = c.pos.line if c.pos is not None else 0
            return [Halt(stop=Stop(StopKind.ASSERTION, line), pos=c.pos, text=c.text, guard=g)]
        if c.callee == "vprintf":
            note = "printf is ignored: ptxmm models memory, not output"
            if note not in self.notes:
                self.notes.append(note)
            for name in c.rets:  # its result, which nvcc reads back (ld.param [retval0])
                bound[name] = Reg(PRINTF_RESULT)
            return []
        callee = self.callee(c, g, depth)
        self.calls += 1
        sub = f".c{self.calls}"
        out: list = []
        params: dict[str, Reg] = {}
        for name, p in zip(c.args, callee.params):
            if name not in pending:
                raise SemanticError(f"argument {name} of `{c.text}` is never stored (st.param)", c.pos, None)
            ps, src = pending[name]
            r = Reg(f"%ptxmm.arg{sub}.{p.name}")
            out.append(Mov(dst=r, src=src, type=ps.type, pos=ps.pos, text=ps.text))
            params[p.name] = r
        if g is not None:  # `@p call f` runs f's body only when p holds
            out.append(Branch(target=f"$ptxmm.skip{sub}", guard=(g[0], not g[1]), pos=c.pos, text=c.text))
        out += self.body(callee, params, sub, depth + 1)
        out.append(Label(name=f"$ptxmm.end{sub}", pos=c.pos, text=f"$ptxmm.end{sub}:"))
        if g is not None:
            out.append(Label(name=f"$ptxmm.skip{sub}", pos=c.pos, text=f"$ptxmm.skip{sub}:"))
        for caller_name, r in zip(c.rets, callee.rets):  # read by the caller's ld.param [retval0]
            bound[caller_name] = Reg(f"%ptxmm.ret{sub}.{r.name}")
        return out


    def callee(self, c: Call, g, depth: int) -> Function:
        """The module's .func a call inlines (located errors for what cannot be inlined)."""
        callee = self.m.functions.get(c.callee)
        if callee is None or callee.entry:
            raise UnsupportedError(f"a call of {c.callee}", c.pos,
                                   "calls of the module's own .func functions, assert and printf are "
                                   "modelled; other external functions are not")
        if depth > 8:
            raise UnsupportedError(f"calls nested deeper than 8 ({c.callee})", c.pos,
                                   "recursion is not modelled")
        if len(c.args) != len(callee.params) or len(c.rets) != len(callee.rets):
            raise SemanticError(f"`{c.text}` passes {len(c.args)} argument(s) to {c.callee}, which takes "
                                f"{len(callee.params)}", c.pos, None)
        if g is not None and c.rets:
            raise UnsupportedError(f"a predicated call with a return value `{c.text}`", c.pos,
                                   "the value read back is undefined when the call does not run: "
                                   "branch around the call instead")
        return callee


PRINTF_RESULT = "%ptxmm.printf.result"


def _printf_results(body: list) -> list:
    """The body without the moves of printf's result into registers (nvcc reads it back after
    every printf, and most kernels never use it); a register holding it that an instruction reads
    is a located "not supported yet" (printf's result is the CUDA runtime's, not the ISA's)."""
    held = {i.dst.name for i in body if isinstance(i, Mov) and i.src == Reg(PRINTF_RESULT)}
    for ins in body:
        if isinstance(ins, Mov) and ins.src == Reg(PRINTF_RESULT):
            continue
        used = [o for o in operands(ins) if isinstance(o, Reg) and o.name in held]
        used += [ins.guard[0]] if ins.guard is not None and ins.guard[0].name in held else []
        if used:
            raise UnsupportedError(f"`{ins.text}` uses {used[0].name}, the value printf returned", ins.pos,
                                   "ptxmm drops printf, whose result is not modelled")
    return [i for i in body if not (isinstance(i, Mov) and i.src == Reg(PRINTF_RESULT))]


def thread_jumps(body: list) -> list:
    """nvcc's spin loop ``L: ...; @p bra X; bra.uni L; X:`` as ``L: ...; @!p bra L; X:`` — the same
    control flow (p: on to X, the next instruction; else back to L) with the loop's exit test on its
    backward branch, the shape the event builder reduces to an await where that is sound."""
    out = list(body)
    i = 0
    while i + 2 < len(out):
        a, b, c = out[i], out[i + 1], out[i + 2]
        if isinstance(a, Branch) and a.guard is not None and isinstance(b, Branch) and b.guard is None \
                and isinstance(c, Label) and c.name == a.target and b.target != a.target \
                and any(isinstance(x, Label) and x.name == b.target for x in out[:i]):
            out[i:i + 2] = [Branch(target=b.target, guard=(a.guard[0], not a.guard[1]), pos=b.pos,
                                   text=f"{a.text}; {b.text}")]
        i += 1
    return out


__all__ = ["Expander", "thread_jumps"]
