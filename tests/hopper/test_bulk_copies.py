"""Bulk copies of more than one word (issue 27, item 2; docs/hopper.md): litmus arrays of
consecutive words (``.shared .u32 s[4];``, ``[s+4]``), ``cp.async.bulk`` / ``cp.reduce.async.bulk``
of 4·k bytes as k per-word async reads and writes, one implicit completion fence, one complete-tx
of the whole byte count."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import agree, outcome_values

import ptxmm
from ptxmm.errors import ParseError, PtxmmError, SemanticError, UnsupportedError
from ptxmm.semantics.builder import build
from ptxmm.semantics.events import Kind

PTXAS = shutil.which("ptxas")


# ----- arrays ------------------------------------------------------------------------------------

def test_array_declares_one_location_per_element_with_ptx_initialisation():
    p = ptxmm.parse(".global .u32 a[4] = {7, 8};\n.thread T0 { ld.global.u32 %r0, [a+8]; "
                    "ld.global.u32 %r1, [a+4]; ld.global.u32 %r2, [a]; }\nexists (T0:%r0 == 0)\n", "t.ptx")
    assert [(loc.name, loc.init) for loc in p.locations] == [("a[0]", 7), ("a[1]", 8), ("a[2]", 0),
                                                              ("a[3]", 0)]
    assert [ins.addr.base.name for ins in p.threads[0].instrs] == ["a[2]", "a[1]", "a[0]"]
    r = ptxmm.check(p)
    assert r.holds and outcome_values(r) == {(("T0:%r0", 0), ("T0:%r1", 8), ("T0:%r2", 7))}


def test_array_elements_in_the_condition_and_by_address():
    src = (".global .u32 a[2];\n.thread T0 { mov.u64 %rd0, a; st.global.u32 [%rd0], 5; "
           "st.global.u32 [a+4], 6; }\nexists (a[0] == 5 && a[1] == 6)\n")
    assert ptxmm.check(ptxmm.parse(src, "t.ptx")).holds


@pytest.mark.parametrize("decl,access,cls,words", [
    (".global .u32 a[4];", "ld.global.u32 %r0, [a+16];", SemanticError, "outside the array"),
    (".global .u32 a[4];", "ld.global.u32 %r0, [a-4];", SemanticError, "outside the array"),
    (".global .u32 a[4];", "ld.global.u32 %r0, [a+2];", SemanticError, "not the start of an element"),
    (".global .u32 a[0];", "ld.global.u32 %r0, [a];", SemanticError, "1 to 64 elements"),
    (".global .u32 a[2] = {1, 2, 3};", "ld.global.u32 %r0, [a];", SemanticError, "3 values"),
    (".global .u8 a[2] = {1, 300};", "ld.global.u8 %r0, [a];", PtxmmError, "300"),
    (".const .u32 a[2];", "ld.const.u32 %r0, [a];", UnsupportedError, "an array of .const"),
    (".global .u32 a;", "ld.global.u32 %r0, [a+4];", UnsupportedError, "address offset"),
    (".global .u32 a[4];", "ld.global.u32 %r0, [a+08];", ParseError, "malformed integer constant"),
])
def test_array_mistakes_are_located(decl, access, cls, words):
    with pytest.raises(cls) as e:
        ptxmm.parse(f"{decl}\n.thread T0 {{\n  {access}\n}}\nexists (T0:%r0 == 0)\n", "t.ptx")
    assert words in str(e.value)
    assert e.value.pos is not None and e.value.pos.line in (1, 3)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 8), width=st.sampled_from([8, 16, 32, 64]), offset=st.integers(-20, 80))
def test_array_offset_names_the_element_or_is_a_located_error(n, width, offset):
    """``[a+off]`` names a[off / (width/8)] exactly when off is a whole element inside the array;
    everything else is a located SemanticError on the access's line."""
    src = (f".global .u{width} a[{n}];\n.thread T0 {{\n  ld.global.u{width} %r0, [a{offset:+d}];\n}}\n"
           "exists (T0:%r0 == 0)\n")
    size = width // 8
    if offset % size == 0 and 0 <= offset // size < n:
        p = ptxmm.parse(src, "t.ptx")
        assert p.threads[0].instrs[0].addr.base.name == f"a[{offset // size}]"
    else:
        with pytest.raises(SemanticError) as e:
            ptxmm.parse(src, "t.ptx")
        assert e.value.pos.line == 3


# ----- multi-word TMA load ------------------------------------------------------------------------

TMA16 = """
.global .u32 g[4] = {1, 2, 3, 4};
.shared .u32 s[4];
.shared .b64 bar = mbarrier.init(1);
.thread T0 .cta 0 {
    mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], %TX%;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [g], 16, [bar];
}
.thread T1 .cta 0 {
WAIT:
    mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [bar], 0;
    @!%p bra WAIT;
    ld.shared.u32 %r0, [s];
    ld.shared.u32 %r3, [s+12];
}
exists (T1:%r0 != 1 || T1:%r3 != 4)
"""


def test_16_byte_tma_load_with_expect_tx_16_forbids_the_stale_read():
    r = agree(ptxmm.parse(TMA16.replace("%TX%", "16"), "t.ptx"))
    assert not r.holds
    assert outcome_values(r) == {(("T1:%r0", 1), ("T1:%r3", 4))}


def test_16_byte_tma_load_with_expect_tx_8_never_completes_its_phase():
    """One complete-tx of the 16 bytes copied (cp.async.bulk: "with completeCount argument equal
    to amount of data copied in bytes") against an expected 8: tx-count ends at −8, the phase
    never completes, no execution finishes and the reader hangs (the liveness finding)."""
    p = ptxmm.parse(TMA16.replace("%TX%", "8"), "t.ptx")
    r = agree(p)
    assert outcome_values(r) == set() and not r.holds
    live = ptxmm.check(p, liveness=True)
    assert any(f.kind == "hang" for f in live.findings)


def test_tx_count_short_of_two_copies_lets_the_phase_complete_early():
    """expect_tx 16 for two 16-byte copies: the first copy's complete-tx completes the phase, the
    second copy's words may still be stale — allowed (the broken twin of the 16-byte load)."""
    src = TMA16.replace("%TX%", "16").replace(
        ".shared .u32 s[4];", ".shared .u32 s[4];\n.global .u32 h[4] = {5, 6, 7, 8};\n.shared .u32 u[4];"
    ).replace("[s], [g], 16, [bar];", "[s], [g], 16, [bar];\n    cp.async.bulk.shared::cluster.global."
              "mbarrier::complete_tx::bytes [u], [h], 16, [bar];").replace(
        "ld.shared.u32 %r3, [s+12];", "ld.shared.u32 %r3, [u+12];").replace("%r3 != 4", "%r3 != 8")
    r = agree(ptxmm.parse(src, "t.ptx"))
    assert r.holds
    assert (("T1:%r0", 1), ("T1:%r3", 0)) in outcome_values(r)
    fixed = src.replace("_, [bar], 16;", "_, [bar], 32;")
    assert not agree(ptxmm.parse(fixed, "t.ptx")).holds


def test_multi_word_copy_events_are_per_word_with_one_fence_and_one_complete_tx():
    g = build(ptxmm.parse(TMA16.replace("%TX%", "16"), "t.ptx"))
    agent = [e for e in g.events if e.agent >= 0]
    reads = [e for e in agent if e.kind == Kind.R and "ASYNC" in e.tags]
    writes = [e for e in agent if e.kind == Kind.W and "ASYNC" in e.tags]
    fences = [e for e in agent if e.kind == Kind.F]
    mbar = [e for e in agent if "MBAR" in e.tags]
    assert [e.loc for e in reads] == ["g[0]", "g[1]", "g[2]", "g[3]"]
    assert [e.loc.split("@")[0] for e in writes] == ["s[0]", "s[1]", "s[2]", "s[3]"]
    assert len(fences) == 1 and len(mbar) == 2  # one complete-tx: an RMW's read and write
    aint, data = set(g.edges["aint"]), set(g.edges["data"])
    for r, w in zip(reads, writes):
        assert (r.eid, w.eid) in aint and (r.eid, w.eid) in data
        assert (w.eid, fences[0].eid) in aint
    assert (fences[0].eid, mbar[0].eid) in aint


# ----- multi-word bulk store and reduction --------------------------------------------------------

STORE16 = """
.shared .u32 s[4] = {1, 1, 1, 1};
.global .u32 g[4];
.thread T0 .cta 0 {
    st.shared.u32 [s+8], 2;
    %FENCE%
    cp.async.bulk.global.shared::cta.bulk_group [g], [s], 16;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
    ld.global.u32 %r0, [g+8];
    ld.global.u32 %r1, [g+12];
}
exists (T0:%r0 != 2 || T0:%r1 != 1)
"""


def test_16_byte_bulk_store_after_proxy_fence_copies_every_word():
    r = agree(ptxmm.parse(STORE16.replace("%FENCE%", "fence.proxy.async.shared::cta;"), "t.ptx"))
    assert not r.holds


def test_16_byte_bulk_store_without_proxy_fence_may_copy_the_stale_word():
    r = agree(ptxmm.parse(STORE16.replace("%FENCE%", ""), "t.ptx"))
    assert r.holds and any(dict(o)["T0:%r0"] == 1 for o in outcome_values(r))


def test_wait_group_read_covers_every_word_of_the_source():
    """D1 for a 16-byte store: after wait_group.read 0, a write of the last source word cannot be
    what the copy read."""
    src = """
.shared .u32 s[4] = {1, 1, 1, 1};
.global .u32 g[4];
.thread T0 .cta 0 {
    cp.async.bulk.global.shared::cta.bulk_group [g], [s], 16;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group.read 0;
    st.shared.u32 [s+12], 2;
    cp.async.bulk.wait_group 0;
    ld.global.u32 %r0, [g+12];
}
exists (T0:%r0 == 2)
"""
    assert not agree(ptxmm.parse(src, "t.ptx")).holds
    assert agree(ptxmm.parse(src.replace("cp.async.bulk.wait_group.read 0;", ""), "t.ptx")).holds


def test_16_byte_reduction_adds_word_by_word():
    src = """
.shared .u32 s[4] = {1, 2, 3, 4};
.global .u32 g[4] = {10, 20, 30, 40};
.thread T0 .cta 0 {
    cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [g], [s], 16;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
    ld.global.u32 %r0, [g];
    ld.global.u32 %r3, [g+12];
}
exists (T0:%r0 == 11 && T0:%r3 == 44)
"""
    r = agree(ptxmm.parse(src, "t.ptx"))
    assert r.holds and outcome_values(r) == {(("T0:%r0", 11), ("T0:%r3", 44))}


def test_multicast_16_bytes_writes_every_word_in_every_cta():
    src = """
.global .u32 g[4] = {1, 2, 3, 4};
.shared .u32 s[4];
.shared .b64 bar = mbarrier.init(1);
.thread T0 .cluster 0 .cta 0 {
    mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], 16;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
        [s], [g], 16, [bar], 3;
W0: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [bar], 0;
    @!%p bra W0;
    ld.shared.u32 %r0, [s+12];
}
.thread T1 .cluster 0 .cta 1 {
    mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], 16;
W1: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [bar], 0;
    @!%p bra W1;
    ld.shared.u32 %r0, [s+8];
}
exists (T0:%r0 != 4 || T1:%r0 != 3)
"""
    p = ptxmm.parse(src, "t.ptx")
    assert not agree(p).holds
    g = build(p)
    writes = [e for e in g.events if e.agent >= 0 and e.kind == Kind.W and "ASYNC" in e.tags]
    assert len(writes) == 8 and len({e.loc for e in writes}) == 8


# ----- sizes and bounds ---------------------------------------------------------------------------

COPY = ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [g], {n}, [bar];")


def _copy(decls: str, n: str, line: str = COPY) -> str:
    return (f"{decls}\n.shared .b64 bar = mbarrier.init(1);\n.thread T0 {{\n  "
            + line.format(n=n) + "\n}\n.global .u32 z = 0;\nexists (z == 0)\n")


@pytest.mark.parametrize("n,cls,words", [
    ("8", ParseError, "of 8 bytes"),
    ("20", ParseError, "multiple of 16"),
    ("0", ParseError, "of 0 bytes"),
    ("%r1", UnsupportedError, "held in a register"),
])
def test_copy_sizes_ptxas_rejects_are_located(n, cls, words):
    with pytest.raises(cls) as e:
        src = _copy(".global .u32 g[8];\n.shared .u32 s[8];", n)
        ptxmm.parse(src.replace("{\n", "{\n .reg .u32 %r1 = 16;\n"), "t.ptx")
    assert words in str(e.value) and e.value.pos is not None


@pytest.mark.parametrize("decls,words", [
    (".global .u32 g = 1;\n.shared .u32 s[4];", "g is one word"),
    (".global .u32 g[4];\n.shared .u32 s[2];", "declare an array of at least 4 words"),
])
def test_copy_running_off_the_end_of_its_location_is_located(decls, words):
    p = ptxmm.parse(_copy(decls, "16"), "t.ptx")
    with pytest.raises(SemanticError) as e:
        ptxmm.check(p)
    assert words in str(e.value)
    assert e.value.pos is not None and e.value.pos.line == 5


def test_copy_from_an_offset_runs_to_the_end_of_the_array():
    src = _copy(".global .u32 g[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n.shared .u32 s[4];", "16").replace(
        "[s], [g], 16", "[s], [g+16], 16")
    g = build(ptxmm.parse(src, "t.ptx"))
    assert [e.loc for e in g.events if e.agent >= 0 and e.kind == Kind.R and "ASYNC" in e.tags] == \
        ["g[4]", "g[5]", "g[6]", "g[7]"]
    with pytest.raises(SemanticError):
        ptxmm.check(ptxmm.parse(src.replace("[g+16]", "[g+20]"), "t.ptx"))


@pytest.mark.skipif(PTXAS is None, reason="ptxas not on PATH")
@pytest.mark.parametrize("line", [
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [g], 16, [bar];",
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [g+16], 16, [bar];",
    "cp.async.bulk.global.shared::cta.bulk_group [g], [s], 32;",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [g], [s], 16;",
])
def test_multi_word_forms_assemble(line, tmp_path):
    """ptxas (sm_90a) assembles the forms with the arrays declared as PTX declares them."""
    ptxmm.parse(_copy(".global .u32 g[8];\n.shared .u32 s[8];", "16", line), "t.ptx")
    mod = (".version 8.6\n.target sm_90a\n.address_size 64\n.global .align 16 .u32 g[8];\n"
           ".shared .align 16 .u32 s[8];\n.shared .align 8 .b64 bar;\n.visible .entry k()\n{\n  "
           + line + "\n  ret;\n}\n")
    (tmp_path / "k.ptx").write_text(mod)
    r = subprocess.run([PTXAS, "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
