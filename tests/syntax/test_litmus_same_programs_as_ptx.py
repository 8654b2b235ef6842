"""The herd/Dat3M .litmus front end produces the same Programs as the .ptx one."""

from __future__ import annotations

from click.testing import CliRunner
from support import ROOT

import ptxmm
from ptxmm.cli.main import main
from ptxmm.ir.program import (
    Addr,
    Alu,
    Atom,
    Barrier,
    Branch,
    Fence,
    Imm,
    Label,
    Load,
    ProxyFence,
    Red,
    Reg,
    Setp,
    Store,
    Sym,
)

MP = """PTX MP-litmus
"message passing"
{
x=0; y=0;
P1:r0=0; P1:r1=0;
}
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.weak x, 1        | ld.acquire.gpu r0, y ;
 st.release.gpu y, 1 | ld.weak r1, x        ;
exists (P1:r0 = 1 /\\ 1:r1 == 0)
"""


def test_same_verdicts_as_ptx_front_end():
    lit = ptxmm.parse(MP, "mp.litmus")
    ptx = ptxmm.load(ROOT / "tests" / "litmus" / "paper" / "P1-mp.ptx")
    assert lit.format == "litmus" and lit.name == "MP-litmus"
    assert [t.placement.cta for t in lit.threads] == [0, 1]
    a, b = ptxmm.check(lit), ptxmm.check(ptx)
    assert a.holds is False and b.holds is False
    assert len(a.outcomes) == len(b.outcomes)


def test_branches_and_labels():
    src = """PTX loop
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0      ;
 st.weak x, 1   | LC00:               ;
                | ld.relaxed.gpu r0, x ;
                | bne r0, 1, LC00     ;
exists (P1:r0 == 1)
"""
    r = ptxmm.check(ptxmm.parse(src, "l.litmus"))
    assert r.holds is True and r.awaits == 1


TYPED = """PTX typed
{ x=0; y=-1; }
 P0@cta 0,gpu 0                 | P1@cta 0,gpu 0       ;
 st.release.gpu x, 1            | LC00:                ;
 atom.acq_rel.sys.add r0, y, 2  | ld.relaxed.gpu r0, x ;
 red.relaxed.sub y, r0          | blt r0, -1, LC00     ;
 fence.sc.cta                   | add r1, r0, 3        ;
 fence.proxy.alias              | goto LC01            ;
 bar.cta.sync 1, 2, 2           | LC01:                ;
exists (P1:r0 == 1)
"""


def test_typed_instructions():
    """Dat3M spellings become the typed IR; registers and locations are Dat3M's 64-bit words."""
    p = ptxmm.parse(TYPED, "t.litmus")
    assert [(loc.name, loc.type, loc.init) for loc in p.locations] == [("x", "s64", 0), ("y", "s64", -1)]
    p0, p1 = (t.instrs for t in p.threads)
    assert [type(i) for i in p0] == [Store, Atom, Red, Fence, ProxyFence, Barrier]
    assert (p0[0].sem, p0[0].scope, p0[0].type, p0[0].addr, p0[0].src) == (
        "release", "gpu", "s64", Addr(Sym("x")), Imm(1))
    assert (p0[1].op, p0[1].sem, p0[1].scope, p0[1].dst, p0[1].srcs, p0[1].type) == (
        "add", "acq_rel", "sys", Reg("r0"), (Imm(2),), "s64")
    assert (p0[2].op, p0[2].sem, p0[2].scope, p0[2].src) == ("sub", "relaxed", "gpu", Reg("r0"))
    assert (p0[3].sem, p0[3].scope) == ("sc", "cta")
    assert (p0[5].kind, p0[5].ids, p0[5].count) == ("sync", (Imm(1), Imm(2)), Imm(2))
    assert [type(i) for i in p1] == [Label, Load, Setp, Branch, Alu, Branch, Label]
    assert p1[0].name == "LC00" and p1[6].name == "LC01"
    assert (p1[1].sem, p1[1].scope, p1[1].type, p1[1].dst) == ("relaxed", "gpu", "s64", Reg("r0"))
    setp, bra = p1[2], p1[3]
    assert (setp.cmp, setp.dst, setp.a, setp.b, setp.type) == (
        "lt", Reg("%branch"), Reg("r0"), Imm(-1), "s64")
    assert (bra.target, bra.guard) == ("LC00", (Reg("%branch"), False))
    assert (p1[4].op, p1[4].dst, p1[4].srcs, p1[4].type) == ("add", Reg("r1"), (Reg("r0"), Imm(3)), "s64")
    assert (p1[5].target, p1[5].guard) == ("LC01", None)


def test_proxy_alias_declaration_is_read():
    src = "PTX p\n{ x=0; y @ texture aliases x; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n"
    p = ptxmm.parse(src, "p.litmus")
    y = p.location("y")
    assert (y.alias_of, y.proxy) == ("x", "texture")
    assert (p.physical("y"), p.virtual("y")) == ("x", "x")


def test_cli_test_command_on_bundled_examples():
    r = CliRunner().invoke(main, ["test", str(ROOT / "tests" / "litmus"), "-j", "1"])
    assert r.exit_code == 0, r.output
    assert "27/27 agree" in r.output
