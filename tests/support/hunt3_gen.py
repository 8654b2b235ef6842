"""Random litmus programs for the third hunt's engine properties
(tests/engines/test_generated_programs_agree.py): each a pure function of a seed, so that
hypothesis draws seeds and a failure names its program.

:func:`program`: two or three threads over x, y and an array a[4]: loads and stores at every
strength, array elements ([a+4k]), div/rem by non-zero constants at .u16/.s16/.u32/.s32/.u64/.s64,
shifts by 0..255 and min/max/neg/not at those widths, signed and unsigned setp and selp, RMWs,
fences, spin loops (half of them carrying a counter from one iteration to the next), CAS retry
loops, counted loops with a store, predicated stores. :func:`parts`: two to four threads over up
to four locations, some only reading, so that formulas fall into independent parts (IRIW-like)."""

from __future__ import annotations

import random

WIDTH = {"u16": 16, "s16": 16, "u32": 32, "s32": 32, "u64": 64, "s64": 64}
PREFIX = {"u16": "%h", "s16": "%hs", "u32": "%r", "s32": "%s", "u64": "%rd", "s64": "%sd",
          "pred": "%p"}
LD = ["", "", ".relaxed.gpu", ".acquire.gpu", ".acquire.cta", ".volatile"]
ST = ["", "", ".relaxed.gpu", ".release.gpu", ".release.cta"]
FENCES = ["fence.sc.gpu;", "fence.acq_rel.gpu;", "fence.sc.cta;", "fence.acquire.gpu;",
          "fence.release.gpu;"]


class _Thread:
    """One thread body: its lines, and its registers (name → type) once written."""

    def __init__(self, rnd: random.Random, index: int):
        self.r, self.index = rnd, index
        self.lines: list[str] = []
        self.regs: dict[str, str] = {}
        self.n = 0

    def fresh(self, ty: str) -> str:
        self.n += 1
        return f"{PREFIX[ty]}{self.n}"

    def imm(self, ty: str) -> str:
        w = WIDTH[ty]
        v = self.r.choice([0, 1, 2, 3, 5, 7, (1 << w) - 1, 1 << (w - 1), (1 << (w - 1)) - 1])
        return str(v - (1 << w) if ty[0] == "s" and v >= 1 << (w - 1) else v)

    def use(self, ty: str) -> str:
        same = [r for r, t in self.regs.items() if t == ty]
        return self.r.choice(same) if same and self.r.random() < 0.7 else self.imm(ty)

    def emit(self, line: str) -> None:
        self.lines.append(line)

    # -- one kind of step each ------------------------------------------------------------------
    def store(self) -> None:
        v = self.use("u32") if self.regs else self.r.choice(["1", "2"])
        self.emit(f"st{self.r.choice(ST)}.global.u32 [{self.r.choice(['x', 'y'])}], {v};")

    def load(self) -> None:
        d = self.fresh("u32")
        self.emit(f"ld{self.r.choice(LD)}.global.u32 {d}, [{self.r.choice(['x', 'y'])}];")
        self.regs[d] = "u32"

    def element(self) -> None:
        at = f"[a+{4 * self.r.randint(0, 3)}]"
        if self.r.random() < 0.5:
            d = self.fresh("u32")
            self.emit(f"ld{self.r.choice(LD[:4])}.global.u32 {d}, {at};")
            self.regs[d] = "u32"
        else:
            self.emit(f"st{self.r.choice(ST[:4])}.global.u32 {at}, {self.use('u32')};")

    def divide(self) -> None:
        ty = self.r.choice(list(WIDTH))
        a = self.use(ty)
        b = self.r.choice(["1", "2", "3", "7", "-1", "-3"] if ty[0] == "s" else ["1", "2", "3", "7"])
        d = self.fresh(ty)
        self.emit(f"{self.r.choice(['div', 'rem'])}.{ty} {d}, {a}, {b};")
        self.regs[d] = ty

    def arith(self) -> None:
        ty = self.r.choice(list(WIDTH))
        op = self.r.choice(["shl", "shr", "add", "sub", "mul.lo", "min", "max", "neg", "not"])
        a = self.use(ty)
        name = {"shl": "b", "not": "b", "neg": "s"}.get(op, ty[0]) + ty[1:]
        d = self.fresh(ty if op != "neg" else name)
        if op in ("neg", "not"):
            self.emit(f"{op}.{name} {d}, {a};")
        elif op in ("shl", "shr"):
            w = WIDTH[ty]
            n = self.r.choice(["0", "1", "3", str(w - 1), str(w), str(w + 1), "255"])
            self.emit(f"{op}.{name} {d}, {a}, {n};")
        else:
            self.emit(f"{op}.{name} {d}, {a}, {self.use(ty)};")
        self.regs[d] = ty if op != "neg" else name

    def compare(self) -> None:
        ty = self.r.choice(list(WIDTH))
        cmps = ["eq", "ne", "lt", "le", "gt", "ge"] + (["lo", "ls", "hi", "hs"] if ty[0] == "u" else [])
        p, d = self.fresh("pred"), self.fresh("u32")
        self.emit(f"setp.{self.r.choice(cmps)}.{ty} {p}, {self.use(ty)}, {self.use(ty)};")
        self.emit(f"selp.u32 {d}, 1, 0, {p};")
        self.regs[p], self.regs[d] = "pred", "u32"

    def rmw(self) -> None:
        op = self.r.choice(["add", "exch", "cas", "inc", "dec", "max", "min", "and", "or"])
        ty = {"exch": "b32", "cas": "b32", "and": "b32", "or": "b32"}.get(op, "u32")
        sem = self.r.choice(["", ".relaxed.gpu", ".acquire.gpu", ".release.gpu", ".acq_rel.gpu"])
        v = self.use("u32")
        d = self.fresh("u32")
        srcs = f"{self.r.choice(['0', '1'])}, {v}" if op == "cas" else v
        self.emit(f"atom{sem}.global.{op}.{ty} {d}, [{self.r.choice(['x', 'y'])}], {srcs};")
        self.regs[d] = "u32"

    def fence(self) -> None:
        self.emit(self.r.choice(FENCES))

    def spin(self) -> None:
        """A spin loop on x or y; half of them count their iterations (a carried register)."""
        lab = f"L{self.index}_{len(self.lines)}"
        d, c, p = self.fresh("u32"), self.fresh("u32"), self.fresh("pred")
        carry = self.r.random() < 0.5
        if carry:
            self.emit(f"mov.u32 {c}, 0;")
        self.emit(f"{lab}:")
        self.emit(f"ld{self.r.choice(['', '.acquire.gpu', '.relaxed.gpu'])}.global.u32 {d}, "
                  f"[{self.r.choice(['x', 'y'])}];")
        if carry:
            self.emit(f"add.u32 {c}, {c}, {self.r.choice(['1', d])};")
            self.regs[c] = "u32"
        self.emit(f"setp.{self.r.choice(['eq', 'ne', 'lt', 'gt'])}.u32 {p}, {d}, {self.r.choice('012')};")
        self.emit(f"@{self.r.choice(['', '!'])}{p} bra {lab};")
        self.regs[d] = "u32"

    def cas_retry(self) -> None:
        lab = f"C{self.index}_{len(self.lines)}"
        o, n, d, p = self.fresh("u32"), self.fresh("u32"), self.fresh("u32"), self.fresh("pred")
        loc = self.r.choice(["x", "y"])
        self.emit(f"{lab}:")
        self.emit(f"ld.relaxed.gpu.global.u32 {o}, [{loc}];")
        self.emit(f"add.u32 {n}, {o}, {self.r.choice(['1', '2'])};")
        self.emit(f"atom{self.r.choice(['', '.acq_rel.gpu', '.acquire.gpu'])}.global.cas.b32 {d}, [{loc}], "
                  f"{o}, {n};")
        self.emit(f"setp.ne.u32 {p}, {d}, {o};")
        self.emit(f"@{p} bra {lab};")
        self.regs.update({o: "u32", n: "u32", d: "u32"})

    def counted(self) -> None:
        lab, c, p = f"K{self.index}_{len(self.lines)}", self.fresh("u32"), self.fresh("pred")
        self.emit(f"mov.u32 {c}, 0;")
        self.emit(f"{lab}:")
        self.emit(f"add.u32 {c}, {c}, 1;")
        if self.r.random() < 0.5:
            self.emit(f"st.global.u32 [{self.r.choice(['x', 'y'])}], {c};")
        self.emit(f"setp.lt.u32 {p}, {c}, {self.r.choice('123')};")
        self.emit(f"@{p} bra {lab};")
        self.regs[c] = "u32"

    def predicated(self) -> None:
        preds = [r for r, t in self.regs.items() if t == "pred"]
        if preds:
            self.emit(f"@{self.r.choice(['', '!'])}{self.r.choice(preds)} st.global.u32 "
                      f"[{self.r.choice(['x', 'y'])}], {self.r.choice(['1', '2'])};")


_STEPS = [_Thread.store, _Thread.store, _Thread.load, _Thread.load, _Thread.element, _Thread.divide,
          _Thread.arith, _Thread.compare, _Thread.rmw, _Thread.fence, _Thread.spin, _Thread.cas_retry,
          _Thread.predicated, _Thread.counted]


def program(seed: int, max_threads: int = 3) -> str:
    r = random.Random(seed)
    lines = [".global .u32 x = 0;", ".global .u32 y = 0;", ".global .u32 a[4] = {0, 1, 2, 3};"]
    observed: list[tuple[int, str, str]] = []
    for i in range(r.choice([2, 2, max_threads])):
        th = _Thread(r, i)
        for _ in range(r.randint(2, 5)):
            r.choice(_STEPS)(th)
        lines += [f".thread T{i} .cta {i % 2} {{", *("    " + ln for ln in th.lines), "}"]
        values = [x for x, t in th.regs.items() if t != "pred"]
        observed += [(i, x, th.regs[x]) for x in r.sample(values, min(2, len(values)))]
    conds = [f"T{i}:{x} == {_Thread(r, 0).imm(t) if r.random() < 0.3 else r.choice('012')}"
             for i, x, t in observed[:3]]
    if r.random() < 0.5 or not conds:
        conds.append(f"x == {r.choice('012')}")
    return "\n".join([*lines, "exists (" + " /\\ ".join(conds) + ")"]) + "\n"


def parts(seed: int) -> str:
    r = random.Random(seed)
    locs = ["x", "y", "z", "w"][:r.choice([2, 3, 4])]
    lines = [f".global .u32 {loc} = 0;" for loc in locs]
    observed: list[str] = []
    for t in range(r.choice([2, 3, 4])):
        body, n = [], 0
        for _ in range(r.randint(1, 3)):
            k, loc = r.random(), r.choice(locs)
            if k < 0.4:
                body.append(f"st{r.choice(ST)}.global.u32 [{loc}], {r.choice([1, 2])};")
                continue
            if k >= 0.85 and k < 0.95:
                body.append(r.choice(FENCES))
                continue
            body.append(f"ld{r.choice(LD)}.global.u32 %r{n}, [{loc}];" if k < 0.85 else
                        f"atom{r.choice(['', '.acq_rel.gpu'])}.global.add.u32 %r{n}, [{loc}], 1;")
            observed.append(f"T{t}:%r{n}")
            n += 1
        lines += [f".thread T{t} .cta {r.choice([0, t, t // 2])} {{", *("    " + b for b in body), "}"]
    picked = r.sample(observed, min(len(observed), r.randint(1, 4)))
    conds = [f"{o} == {r.choice('012')}" for o in picked]
    if r.random() < 0.4 or not conds:
        conds.append(f"{r.choice(locs)} == {r.choice('012')}")
    op = r.choice([" /\\ ", " /\\ ", " \\/ "])
    quant = r.choice(["exists", "exists", "forall", "~exists"])
    return "\n".join([*lines, f"{quant} ({op.join(conds)})"]) + "\n"
