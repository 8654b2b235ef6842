"""Hopper instruction forms (docs/hopper.md): the IR of every barrier.cluster, mbarrier, bulk copy,
mapa and proxy fence form, and the located errors of the forms ptxmm refuses."""

from __future__ import annotations

import pytest

import ptxmm
from ptxmm.errors import PtxmmError, SemanticError, UnsupportedError
from ptxmm.ir.program import BulkCopy, BulkGroup, ClusterBarrier, Mapa, MBarrier, ProxyFence
from ptxmm.semantics.builder import build

# ----- syntax: instruction forms and their IR ------------------------------------------------------

DECL = ".shared .b64 bar;\n.shared .u32 s = 0;\n.global .u32 g = 0;\n"


def _ins(text: str):
    src = DECL + f".thread T0 .cluster 0 .cta 0 {{ .reg .b64 %st = 0; .reg .u32 %c = 1;\n{text};\n}}\n" \
        ".thread T1 .cluster 0 .cta 1 { }\nexists (g == 0)\n"
    return ptxmm.parse(src, "p.ptx").threads[0].instrs[0]


@pytest.mark.parametrize("text,want", [
    ("barrier.cluster.arrive", ClusterBarrier(kind="arrive", sem="release")),
    ("barrier.cluster.arrive.relaxed.aligned", ClusterBarrier(kind="arrive", sem="relaxed", aligned=True)),
    ("barrier.cluster.arrive.release", ClusterBarrier(kind="arrive", sem="release")),
    ("barrier.cluster.wait.acquire.aligned", ClusterBarrier(kind="wait", sem="acquire", aligned=True)),
    ("barrier.cluster.wait", ClusterBarrier(kind="wait", sem="acquire")),
    ("fence.proxy.async", ProxyFence(kind="async")),
    ("fence.proxy.async.global", ProxyFence(kind="async", space="global")),
    ("fence.proxy.async.shared::cta", ProxyFence(kind="async", space="shared")),
    ("fence.proxy.async.shared::cluster", ProxyFence(kind="async", space="shared")),
    ("cp.async.bulk.commit_group", BulkGroup(kind="commit")),
    ("cp.async.bulk.wait_group.read 1", BulkGroup(kind="wait", n=1, read=True)),
])
def test_instruction_ir(text, want):
    got = _ins(text)
    assert type(got) is type(want)
    for f in ("kind", "sem", "aligned", "space", "n", "read"):
        if hasattr(want, f):
            assert getattr(got, f) == getattr(want, f), f


@pytest.mark.parametrize("text,fields", [
    ("mbarrier.init.shared::cta.b64 [bar], 2", dict(op="init", sem="weak")),
    ("mbarrier.init.shared.b64 [bar], %c", dict(op="init")),
    ("mbarrier.arrive.shared.b64 %st, [bar]", dict(op="arrive", sem="release", scope="cta")),
    ("mbarrier.arrive.relaxed.cluster.shared::cta.b64 %st, [bar], 2", dict(op="arrive", sem="relaxed",
                                                                         scope="cluster")),
    ("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], 4", dict(op="arrive", dst=None)),
    ("mbarrier.arrive_drop.shared.b64 _, [bar]", dict(op="arrive_drop")),
    ("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 4", dict(op="expect_tx", sem="relaxed")),
    ("mbarrier.complete_tx.shared::cta.b64 [bar], 4", dict(op="complete_tx")),
    ("mbarrier.test_wait.shared.b64 %p, [bar], %st", dict(op="test_wait", parity=False, sem="acquire")),
    ("mbarrier.try_wait.parity.relaxed.cluster.shared::cta.b64 %p, [bar], 1",
     dict(op="try_wait", parity=True, sem="relaxed", scope="cluster")),
])
def test_mbarrier_ir(text, fields):
    got = _ins(text)
    assert isinstance(got, MBarrier)
    for k, v in fields.items():
        assert getattr(got, k) == v, k


def test_bulk_copy_and_mapa_ir():
    c = _ins("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [g], 4, [bar]")
    assert isinstance(c, BulkCopy) and (c.dst_space, c.src_space) == ("shared", "global")
    assert c.mbar is not None
    c = _ins("cp.async.bulk.global.shared::cta.bulk_group [g], [s], 4")
    assert isinstance(c, BulkCopy) and c.mbar is None and c.dst_space == "global"
    m = _ins("mapa.shared::cluster.u64 %rd0, s, 1")
    assert isinstance(m, Mapa)


@pytest.mark.parametrize("text,cls,words", [
    ("cp.async.bulk.global.shared::cta.bulk_group [g], [s], 8", PtxmmError, "of 8 bytes"),
    ("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [s], [g], [bar]",
     UnsupportedError, "tensor.3d"),
    ("cp.async.cg.shared.global [s], [g], 16", UnsupportedError, "cp.async.cg"),
    ("cp.async.bulk.global.shared::cta.mbarrier::complete_tx::bytes [g], [s], 4", PtxmmError,
     "bulk_group"),
    ("mbarrier.arrive.noComplete.shared.b64 %st, [bar], 1", UnsupportedError, "noComplete"),
    ("mbarrier.pending_count.b64 %r1, %st", UnsupportedError, "pending_count"),
    ("mbarrier.try_wait.parity.shared::cluster.b64 %p, [bar], 0", PtxmmError, "shared::cluster"),
    ("mbarrier.arrive.shared.global.b64 %st, [bar]", PtxmmError, "b64"),
    ("barrier.cluster.sync", PtxmmError, "arrive or .wait"),
    ("barrier.cluster.wait.release", PtxmmError, "release"),
    ("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [g], [s], 128",
     UnsupportedError, "tensormap.cp_fenceproxy"),
])
def test_rejected_forms(text, cls, words):
    with pytest.raises(cls) as e:
        _ins(text)
    assert words in str(e.value)
    assert e.value.pos is not None and e.value.pos.line == 5


@pytest.mark.parametrize("decl,words", [
    (".global .b64 b = mbarrier.init(1);", "is a .shared .b64 location"),
    (".shared .u32 b = mbarrier.init(1);", "is a .shared .b64 location"),
    (".shared .b64 b = mbarrier.init(0);", "out of range"),
    (".shared .b64 b = barrier.init(1);", "unknown initialiser"),
])
def test_mbarrier_declaration_errors(decl, words):
    with pytest.raises(PtxmmError) as e:
        ptxmm.parse(decl + "\n.thread T0 { }\nexists (true)\n", "d.ptx")
    assert words in str(e.value) and e.value.pos.line == 1


@pytest.mark.parametrize("body,cls,words", [
    ("mbarrier.arrive.shared.b64 _, [s];", SemanticError, "must be a .shared .b64 location"),
    ("mapa.shared::cluster.u64 %rd0, bar, 0; mbarrier.try_wait.parity.shared.b64 %p, [%rd0], 0;",
     UnsupportedError, "another CTA's mbarrier"),
    ("mapa.shared::cluster.u64 %rd0, bar, 3;", SemanticError, "ranks 0..1"),
    ("mapa.shared::cluster.u64 %rd0, g, 0;", SemanticError, "not a .shared location"),
    ("cp.async.bulk.global.shared::cta.bulk_group [s], [g], 4;", SemanticError, "must be a .shared"),
    ("ld.global.u32 %r, [g]; setp.eq.u32 %q, %r, 0; @%q barrier.cluster.arrive;", UnsupportedError,
     "predicated"),
])
def test_event_building_errors(body, cls, words):
    src = DECL + f".thread T0 .cluster 0 .cta 0 {{ .reg .pred %p = 0; {body} }}\n" \
        ".thread T1 .cluster 0 .cta 1 { }\nexists (g == 0)\n"
    with pytest.raises(cls) as e:
        build(ptxmm.parse(src, "e.ptx"))
    assert words in str(e.value)
