"""The herd/Dat3M PTX ``.litmus`` front end: grammar/litmus.lark → the same Program objects.

Dat3M spelling: ``st.weak x, 1``, ``ld.acquire.gpu r1, y``, ``atom.acq_rel.sys.add r0, x, 1``,
``red.release.gpu.add x, 1``, ``fence.sc.cta``, ``bar.cta.sync id{, id2}{, quorum}``, labels
``LC00:``, ``goto LC00``, ``beq/bne/blt/ble/bgt/bge r, v, LC``. Anything else — proxies in
particular — is rejected with a clear "not supported yet" error, never a wrong answer."""

from __future__ import annotations

import re
from functools import cache

import lark
from lark import Token, Tree

from ..errors import ParseError, SourcePos, UnsupportedError
from ..program import (
    MEMORY_INSTRS,
    Addr,
    Alu,
    Atom,
    Barrier,
    Branch,
    Condition,
    Fence,
    Imm,
    Instruction,
    Label,
    Load,
    Location,
    MemRef,
    Placement,
    Program,
    ProxyFence,
    Red,
    Reg,
    RegRef,
    Setp,
    Store,
    Sym,
    Thread,
)
from ..resources import data_dir
from . import lark_errors
from .common import build_cond, check_program

SEMS = {"weak", "relaxed", "acquire", "release", "acq_rel", "sc"}
SCOPES = {"cta", "gpu", "sys", "cluster"}
OPS = {"add", "sub", "and", "or", "xor", "inc", "dec", "exch", "cas", "min", "max"}
BRANCH = {"beq": "eq", "bne": "ne", "blt": "lt", "ble": "le", "bgt": "gt", "bge": "ge"}
TYPE = "s32"  # herd's integers are signed; Dat3M's PTX tests use 32-bit words
PROXY_WORDS = ("tld", "suld", "sust", "cold", "suatom", "sured", "proxy")


@cache
def _parser() -> lark.Lark:
    return lark.Lark((data_dir("grammar") / "litmus.lark").read_text(), parser="lalr", cache=True,
                     propagate_positions=True, start=["start", "condition"])


def parse(text: str, file: str = "<string>") -> Program:
    for m in re.finditer(r"@\s*(texture|surface|constant|generic)\s+aliases", text):
        line = text.count("\n", 0, m.start()) + 1
        raise UnsupportedError(f"proxy {m.group(1)} alias declarations", SourcePos(file, line, 1),
                               "mixed-proxy tests get their own issue; only the generic proxy "
                               "and fence.proxy.alias are modelled")
    m = re.search(r"^\s*(~exists|exists|forall)\b", text, re.M)
    body, cond_text = (text[:m.start()], text[m.start():]) if m else (text, "")
    try:
        tree = _parser().parse(body, start="start")
        cond = None
        if cond_text:
            pad = "\n" * body.count("\n")
            cond = _parser().parse(pad + cond_text, start="condition")
    except lark.exceptions.LarkError as e:
        raise lark_errors.convert(e, file, text) from None
    if cond is not None:
        tree.children.append(cond)
    return _Builder(file).build(tree)


def _num(s: str) -> int:
    """herd reads integers as OCaml does: decimal (leading zeros allowed) or 0x hexadecimal."""
    neg = s.startswith("-")
    body = s.lstrip("-")
    v = int(body, 16) if body[:2].lower() == "0x" else int(body, 10)
    return -v if neg else v


class _Builder:
    def __init__(self, file: str):
        self.file = file

    def pos(self, tok) -> SourcePos:
        return SourcePos(self.file, tok.line, tok.column)

    def build(self, tree: Tree) -> Program:
        ch = list(tree.children)
        header = ch.pop(0)
        name = header.split(None, 1)[1].strip()
        docs = []
        while ch and isinstance(ch[0], Token) and ch[0].type == "DOC":
            docs.append(" ".join(ch.pop(0)[1:-1].split()))
        locs: dict[str, Location] = {}
        regs: dict[str, list] = {}
        rows = []
        cond = None
        decls = None
        for item in ch:
            if item.data == "init_item":
                self.init(item.children[0], locs, regs)
            elif item.data == "thread_row":
                decls = item.children
            elif item.data == "instr_row":
                rows.append(item)
            elif item.data == "condition":
                cond = self.condition(item)
        threads = []
        cells: list[list] = [[] for _ in decls]
        for row in rows:
            col = 0
            for c in row.children:
                if c.type == "BAR":
                    col += 1
                    continue
                if col >= len(cells):
                    raise ParseError("more columns than threads", self.pos(c))
                cells[col].append(c)
        for i, d in enumerate(decls):
            pname, cta, gpu = (str(x) for x in d.children)
            if pname != f"P{i}":
                raise ParseError(f"thread {pname} out of order (expected P{i})", self.pos(d.children[0]))
            instrs: list[Instruction] = []
            for c in cells[i]:
                text = str(c).strip()
                if text:
                    instrs += self.instr(text, self.pos(c))
            init_regs = tuple((r, v) for r, v in regs.get(pname, []))
            threads.append(Thread(pname, i, Placement(gpu=int(gpu), cta=int(cta)), tuple(instrs),
                                  init_regs, pos=self.pos(d.children[0])))
        used = set()
        for t in threads:
            for ins in t.instrs:
                if isinstance(ins, MEMORY_INSTRS) and isinstance(ins.addr.base, Sym):
                    used.add(ins.addr.base.name)
        for u in sorted(used - set(locs)):
            locs[u] = Location(u, type=TYPE)
        prog = Program(name=name, description=" ".join(docs), threads=tuple(threads),
                       locations=tuple(locs.values()), condition=cond, file=self.file,
                       format="litmus")
        check_program(prog)
        return prog

    def init(self, tok: Token, locs, regs) -> None:
        for part in str(tok).split(";"):
            part = part.strip()
            if not part:
                continue
            m = re.fullmatch(r"(?:(P?\d+):)?\s*(\w+)\s*=\s*(&?\w+|-?\d+|0x[0-9a-fA-F]+)", part)
            if not m:
                raise UnsupportedError(f"initialisation `{part}`", self.pos(tok),
                                       "use `x=0;` or `P0:r1=0;`")
            th, name, val = m.groups()
            if th is not None:
                p = th if th.startswith("P") else f"P{th}"
                v = _num(val) if re.fullmatch(r"-?\d+|0x[0-9a-fA-F]+", val) else val.lstrip("&")
                regs.setdefault(p, []).append((name, v))
            elif re.fullmatch(r"-?\d+|0x[0-9a-fA-F]+", val):
                locs[name] = Location(name, type=TYPE, init=_num(val), pos=self.pos(tok))
            else:
                raise UnsupportedError(f"location initialised with another location `{part}`",
                                       self.pos(tok))

    def val(self, s: str):
        s = s.strip()
        if re.fullmatch(r"-?\d+|0x[0-9a-fA-F]+", s):
            return Imm(_num(s))
        if re.fullmatch(r"r\w*", s):
            return Reg(s)
        return Sym(s)

    def instr(self, text: str, pos: SourcePos) -> list[Instruction]:
        m = re.fullmatch(r"(LC\w+|\w+)\s*:", text)
        if m:
            return [Label(pos=pos, text=text, name=m.group(1))]
        parts = text.split(None, 1)
        mn, args = parts[0], [a.strip() for a in parts[1].split(",")] if len(parts) > 1 else []
        q = mn.split(".")
        base = q[0]
        if base in PROXY_WORDS or "proxy" in q and "alias" not in q:
            raise UnsupportedError(f"proxy instruction `{mn}`", pos,
                                   "mixed-proxy tests get their own issue")
        c = dict(pos=pos, text=text)
        if base == "goto":
            return [Branch(target=args[0], **c)]
        if base in BRANCH:  # beq r, v, L: set the predicate %branch, then branch on it
            a, b, lab = args
            p = Reg("%branch")
            return [Setp(cmp=BRANCH[base], dst=p, a=self.val(a), b=self.val(b), type=TYPE, **c),
                    Branch(target=lab, guard=(p, False), **c)]
        if base in ("add", "sub", "mul", "and", "or", "xor"):
            d, a, b = args
            return [Alu(op=base, dst=Reg(d), srcs=(self.val(a), self.val(b)), type=TYPE, **c)]
        scope = next((x for x in q[1:] if x in SCOPES), None)
        if base == "fence":
            return [self.fence(q, scope, c)]
        if base == "bar":
            return [self.bar(mn, q, args, c)]
        if base in ("ld", "st", "atom", "red"):
            return [self.memory(mn, q, scope, args, c)]
        raise UnsupportedError(f"unknown instruction `{mn}`", pos)

    def fence(self, q: list[str], scope: str | None, c: dict) -> Instruction:
        if "proxy" in q:
            return ProxyFence(kind="alias", **c)
        if scope is None:
            raise ParseError(f"fence needs a scope: `{c['text']}`", c["pos"])
        return Fence(sem=next((x for x in q[1:] if x in SEMS), "acq_rel"), scope=scope, **c)

    def bar(self, mn: str, q: list[str], args: list[str], c: dict) -> Instruction:
        """``bar.cta.sync id{, id2}{, quorum}``: up to two id operands, then the thread count."""
        if "sync" not in q:
            raise UnsupportedError(f"barrier `{mn}`", c["pos"], "only bar.cta.sync is supported")
        vals = [self.val(a) for a in args]
        ident = vals[:2] if len(vals) >= 2 else vals
        quorum = vals[2] if len(vals) >= 3 else None
        return Barrier(kind="sync", ids=tuple(ident), count=quorum, **c)

    def memory(self, mn: str, q: list[str], scope: str | None, args: list[str], c: dict) -> Instruction:
        base, pos = q[0], c["pos"]
        sem = next((x for x in q[1:] if x in SEMS), None)
        if sem is None:
            raise ParseError(f"`{mn}` needs a semantics (.weak, .relaxed, ...)", pos)
        if sem == "weak":
            scope = None
        elif scope is None:
            if base not in ("atom", "red"):
                raise ParseError(f"`{mn}` needs a scope", pos)
            scope = "gpu"
        if base == "ld":
            d, a = args
            return Load(sem=sem, scope=scope, type=TYPE, dst=Reg(d), addr=Addr(Sym(a)), **c)
        if base == "st":
            a, v = args
            return Store(sem=sem, scope=scope, type=TYPE, addr=Addr(Sym(a)), src=self.val(v), **c)
        op = next((x for x in q[1:] if x in OPS), None)
        if op is None:
            raise UnsupportedError(f"unknown operation in `{mn}`", pos)
        if base == "atom":
            d, a, *rest = args
            return Atom(sem=sem, scope=scope, type=TYPE, op=op, dst=Reg(d), addr=Addr(Sym(a)),
                        srcs=tuple(self.val(v) for v in rest), **c)
        a, v = args
        return Red(sem=sem, scope=scope, type=TYPE, op=op, addr=Addr(Sym(a)), src=self.val(v), **c)

    def condition(self, item: Tree) -> Condition:
        q = str(item.children[0])
        return Condition(q, build_cond(item.children[1], self.ref, lambda x: int(str(x))), q)  # type: ignore[arg-type]

    def ref(self, t: Tree):
        if t.data == "regref":
            th, reg = str(t.children[0]).split(":")
            return RegRef(th if th.startswith("P") else f"P{th}", reg)
        return MemRef(str(t.children[0]))


__all__ = ["parse"]
