"""The herd/Dat3M .litmus front end produces the same Programs as the .ptx one."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import ROOT

import ptxmm
from ptxmm.cli import main
from ptxmm.errors import UnsupportedError

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


def test_proxy_rejected():
    src = "PTX p\n{ x=0; y @ texture aliases x; }\n P0@cta 0,gpu 0 ;\n st.weak x, 1 ;\n"
    with pytest.raises(UnsupportedError) as e:
        ptxmm.parse(src, "p.litmus")
    assert "proxy" in str(e.value) and e.value.pos.line == 2


def test_cli_test_command_on_bundled_examples():
    r = CliRunner().invoke(main, ["test", str(ROOT / "tests" / "litmus"), "-j", "1"])
    assert r.exit_code == 0, r.output
    assert "27/27 agree" in r.output
