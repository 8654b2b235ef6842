"""Hypothesis strategies: random small litmus programs in the .ptx language."""

from __future__ import annotations

from hypothesis import strategies as st

SCOPES = ["cta", "gpu", "sys"]
LOCS = ["x", "y"]


@st.composite
def instruction(draw, reg: int) -> str:
    kind = draw(st.sampled_from(["ld", "st", "fence", "atom", "ldst_dep"]))
    loc = draw(st.sampled_from(LOCS))
    scope = draw(st.sampled_from(SCOPES))
    if kind == "ld":
        sem = draw(st.sampled_from(["", ".relaxed", ".acquire"]))
        return f"ld{sem}{'.' + scope if sem else ''}.global.u32 %r{reg}, [{loc}]"
    if kind == "st":
        sem = draw(st.sampled_from(["", ".relaxed", ".release"]))
        val = draw(st.integers(1, 2))
        return f"st{sem}{'.' + scope if sem else ''}.global.u32 [{loc}], {val}"
    if kind == "fence":
        sem = draw(st.sampled_from(["sc", "acq_rel"]))
        return f"fence.{sem}.{scope}"
    if kind == "atom":
        sem = draw(st.sampled_from(["relaxed", "acquire", "release", "acq_rel"]))
        op = draw(st.sampled_from(["add.u32", "exch.b32"]))
        return f"atom.{sem}.{scope}.global.{op} %r{reg}, [{loc}], 1"
    # a load whose value is stored elsewhere (data dependency)
    other = "y" if loc == "x" else "x"
    return f"ld.global.u32 %r{reg}, [{loc}];\n    st.global.u32 [{other}], %r{reg}"


@st.composite
def program(draw, max_threads: int = 3, max_instrs: int = 2) -> str:
    n = draw(st.integers(2, max_threads))
    lines = [".global .u32 x = 0;", ".global .u32 y = 0;"]
    for t in range(n):
        cta = draw(st.integers(0, 1))
        k = draw(st.integers(1, max_instrs))
        body = [draw(instruction(i)) for i in range(k)]
        lines.append(f".thread T{t} .cta {cta} {{\n    " + ";\n    ".join(body) + ";\n}")
    return "\n".join(lines) + "\n"
