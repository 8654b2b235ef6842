"""cp.async.bulk.tensor (tile mode, 1d/2d) and the tensormap proxy (issue 27, item 2;
docs/hopper.md): the litmus tensor map declaration, the box a copy moves (zero fill outside the
tensor), the copy's tensormap-proxy read of its map and the case split on the map's value, and the
fence.proxy.tensormap::generic release/acquire fences (models/ptx-proxy.cat, ptx-async.cat)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT, agree, outcome_values

import ptxmm
from ptxmm.errors import ParseError, SemanticError, UnsupportedError
from ptxmm.ir.program import ProxyFence, TensorCopy, TensorMap, TensorMapReplace
from ptxmm.semantics.builder import build
from ptxmm.semantics.events import Kind

HOP = ROOT / "examples" / "hopper"
NEW = ["tma-tensor-load-2d.ptx", "tma-tensor-load-2d-no-expect-tx.ptx", "tma-tensor-store.ptx",
       "tma-tensor-store-no-fence.ptx", "tensormap-update-fence.ptx", "tensormap-update-no-fence.ptx"]
PTXAS = shutil.which("ptxas")


@pytest.mark.parametrize("name", NEW)
def test_new_example_verdict_both_engines(name):
    prog = ptxmm.load(HOP / name)
    assert prog.expect is not None
    assert agree(prog).holds == prog.expect


# ----- every new example assembles (ptxas, where installed) -------------------------------------

def _module(prog) -> str:
    """A PTX module of the example for ptxas: its locations as module variables (arrays as arrays,
    a tensor map as the 128-byte object, an mbarrier as a .b64), one .entry per thread with its
    body as written (registers declared by their names' conventions: %p/%q predicates, %rd 64-bit)."""
    decl, arrays = [], {}
    for loc in prog.locations:
        m = re.fullmatch(r"(\w+)\[(\d+)\]", loc.name)
        if m:
            arrays[m[1]] = (loc.space, loc.type, int(m[2]) + 1)
        elif loc.tensormap is not None:
            decl.append(f".global .align 64 .b8 {loc.name}[128];")
        else:
            decl.append(f".{loc.space} .align 8 .{loc.type} {loc.name};")
    decl += [f".{sp} .align 16 .{ty} {a}[{n}];" for a, (sp, ty, n) in arrays.items()]
    text = Path(prog.file).read_text()
    out = [".version 8.6", ".target sm_90a", ".address_size 64", *decl]
    for t in prog.threads:
        body = re.search(r"\.thread " + t.name + r"\b[^{]*\{(.*?)\n\}", text, re.S)[1]
        regs = sorted(set(re.findall(r"%[a-z]+\d*", body)))
        kinds = {r: "pred" if r[1] in "pq" else "u64" if r.startswith("%rd") else "u32" for r in regs}
        out += [f".visible .entry k_{t.name}()", "{", *(f"  .reg .{k} {r};" for r, k in kinds.items()),
                body, "  ret;", "}"]
    return "\n".join(out) + "\n"


@pytest.mark.skipif(PTXAS is None, reason="ptxas not on PATH")
@pytest.mark.parametrize("name", NEW)
def test_new_example_assembles(name, tmp_path):
    (tmp_path / "k.ptx").write_text(_module(ptxmm.load(HOP / name)))
    r = subprocess.run([PTXAS, "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + _module(ptxmm.load(HOP / name))


# ----- the declaration and the forms --------------------------------------------------------------

def test_declaration_and_forms_decode_to_their_records():
    p = ptxmm.load(HOP / "tensormap-update-fence.ptx")
    tm = p.location("tm")
    assert tm.tensormap == TensorMap("a", (2,), (2,)) and tm.space == "global" and tm.type == "b64"
    ins = [i for t in p.threads for i in t.instrs]
    rep = next(i for i in ins if isinstance(i, TensorMapReplace))
    assert rep.addr.base.name == "tm"
    fences = [i for i in ins if isinstance(i, ProxyFence)]
    assert [(f.kind, f.sem, f.scope, f.addr is not None) for f in fences] == [
        ("tensormap", "release", "gpu", False), ("tensormap", "acquire", "gpu", True)]
    cp = next(i for i in ins if isinstance(i, TensorCopy))
    assert cp.load and cp.dims == 1 and cp.tmap.base.name == "tm" and cp.smem.base.name == "s[0]"
    st_ = next(i for t in ptxmm.load(HOP / "tma-tensor-store.ptx").threads for i in t.instrs
               if isinstance(i, TensorCopy))
    assert not st_.load and st_.mbar is None and st_.dst_space == "global"


DECL = ".global .b32 a[8];\n.shared .u32 s[4];\n.shared .b64 bar = mbarrier.init(1);\n"
LOAD = ("cp.async.bulk.tensor.{d}.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
        "[s], [tm, {c}], [bar]")


def _one(decl: str, line: str, cls, words: str, at: int) -> None:
    src = DECL + decl + "\n.thread T0 .cta 0 {\n  .reg .u32 %r1 = 1;\n  " + line + ";\n}\n" \
        ".global .u32 z = 0;\nexists (z == 0)\n"
    with pytest.raises(cls) as e:
        ptxmm.check(ptxmm.parse(src, "t.ptx"))
    assert words in str(e.value), str(e.value)
    assert e.value.pos is not None and e.value.pos.line == at, str(e.value)


TM = ".global .tensormap tm = tensormap(a, dims {4, 2}, box {2, 2});"


@pytest.mark.parametrize("decl,cls,words", [
    (".global .tensormap tm = tensormap(a, dims {4, 2});", SemanticError, "needs dims and box"),
    (".global .tensormap tm = tensormap(a, dims {4, 2}, box {2});", SemanticError, "needs dims and box"),
    (".global .tensormap tm = tensormap(a, dims {4, 4}, box {2, 2});", SemanticError, "a holds 8"),
    (".global .tensormap tm = tensormap(a, dims {2, 2, 2}, box {1, 1, 1});", SemanticError, "one or two"),
    (".global .tensormap tm = tensormap(a, dims {0}, box {1});", SemanticError, "positive"),
    (".global .tensormap tm = tensormap(z, dims {1}, box {1});", SemanticError, "not a 32-bit array"),
    (".global .tensormap tm = tensormap(a, dims {4}, size {2});", ParseError, "tensormap field size"),
    (".global .tensormap tm = tensormp(a, dims {4}, box {2});", ParseError, "unknown initialiser"),
    (".shared .tensormap tm = tensormap(a, dims {4}, box {2});", SemanticError, ".global .tensormap"),
    (".global .tensormap tm;", SemanticError, "needs its contents"),
])
def test_declaration_mistakes_are_located(decl, cls, words):
    _one(decl, "mov.u32 %r0, 1", cls, words, 4)


@pytest.mark.parametrize("line,cls,words", [
    (LOAD.format(d="3d", c="{0, 0, 0}"), UnsupportedError, "tensor.3d"),
    (LOAD.format(d="2d", c="{0}"), ParseError, "takes 2 coordinate(s)"),
    (LOAD.replace(".tile", ".im2col").format(d="2d", c="{0, 0}"), UnsupportedError, "load mode .im2col"),
    ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [tm, {3, 0}], [s]", UnsupportedError,
     "crosses the tensor's boundary"),
    # the copy's .Nd is the map's rank (issue 38: was a box read with a dimension made up)
    ("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [tm, {3}], [s]", SemanticError,
     "copies a 1-d box, but tensor map tm is 2-d (dims {4, 2}, box {2, 2})"),
    (LOAD.format(d="1d", c="{0}"), SemanticError, "copies a 1-d box, but tensor map tm is 2-d"),
    (LOAD.format(d="2d", c="{0, 0}").replace("[tm,", "[z,"), SemanticError, "z is not a tensor map"),
    ("ld.global.u32 %r0, [z]; ld.global.u32 %r2, [tm]", UnsupportedError, "tensor map tm as data"),
    ("tensormap.replace.tile.global_dim.global.b1024.b32 [tm], 0, 4", UnsupportedError, "global_dim"),
    ("tensormap.replace.tile.global_address.global.b1024.b64 [tm], z", SemanticError, "new global address"),
    ("fence.proxy.tensormap::generic.acquire.gpu [tm], 64", ParseError, "constant 128"),
    ("fence.proxy.tensormap::generic.acquire.gpu [z], 128", SemanticError, "z is not a tensor map"),
    ("fence.proxy.tensormap::generic.release", ParseError, "needs a scope"),
    ("ld.global.u32 %r3, [z]; " + LOAD.format(d="2d", c="{%r3, 0}"), UnsupportedError,
     "computed from a loaded value"),
])
def test_form_mistakes_are_located(line, cls, words):
    _one(TM, line, cls, words, 7)


# ----- the box ---------------------------------------------------------------------------------

def _load_program(dims, box, coords, arr_n: int) -> str:
    n = box[0] * (box[1] if len(box) > 1 else 1)
    vals = ", ".join(str(10 + i) for i in range(arr_n))
    cs = ", ".join(map(str, coords))
    loads = "\n".join(f"    ld.shared.u32 %r{k}, [s+{4 * k}];" for k in range(n))
    cond = " && ".join(f"T0:%r{k} == 0" for k in range(n))
    return (f".global .b32 a[{arr_n}] = {{{vals}}};\n"
            f".global .tensormap tm = tensormap(a, dims {{{', '.join(map(str, dims))}}}, "
            f"box {{{', '.join(map(str, box))}}});\n.shared .u32 s[{n}] = {{{', '.join(['99'] * n)}}};\n"
            ".shared .b64 bar = mbarrier.init(1);\n.thread T0 .cta 0 {\n"
            f"    mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], {4 * n};\n"
            f"    cp.async.bulk.tensor.{len(dims)}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
            f"[s], [tm, {{{cs}}}], [bar];\n"
            "W:  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [bar], 0;\n"
            f"    @!%p bra W;\n{loads}\n}}\nexists ({cond})\n")


@settings(max_examples=25, deadline=None)
@given(d0=st.integers(1, 3), d1=st.integers(1, 2), b0=st.integers(1, 3), b1=st.integers(1, 2),
       c0=st.integers(-2, 3), c1=st.integers(-1, 2), two=st.booleans())
def test_tensor_load_moves_the_box_and_fills_zeros_outside(d0, d1, b0, b1, c0, c1, two):
    """The only outcome of a tensor load its thread waits for is the box, element (j0, j1) from
    a[(c1 + j1) * d0 + c0 + j0] and 0 where that lies outside the tensor (PTX ISA, Tensor › Out of
    Boundary Access, zero fill mode); the complete-tx counts every word of the box."""
    dims, box, coords = ((d0, d1), (b0, b1), (c0, c1)) if two else ((d0,), (b0,), (c0,))
    src = _load_program(dims, box, coords, d0 * (d1 if two else 1))
    r = ptxmm.check(ptxmm.parse(src, "t.ptx"))
    want = []
    for j1 in range(box[1] if two else 1):
        for j0 in range(box[0]):
            g0, g1 = c0 + j0, (c1 + j1 if two else 0)
            inside = 0 <= g0 < d0 and 0 <= g1 < (d1 if two else 1)
            want.append(10 + g1 * d0 + g0 if inside else 0)
    assert outcome_values(r) == {tuple((f"T0:%r{k}", v) for k, v in enumerate(want))}


def test_box_crossing_the_boundary_counts_its_zero_filled_words():
    """CHOICE (the complete-tx's "amount of data copied in bytes" is the box's: the zero-filled
    words are written to shared memory too): expecting only the in-bounds bytes never completes
    the phase."""
    src = _load_program((4,), (2,), (3,), 4)
    assert outcome_values(agree(ptxmm.parse(src, "t.ptx"))) == {(("T0:%r0", 13), ("T0:%r1", 0))}
    short = src.replace("_, [bar], 8;", "_, [bar], 4;")
    assert outcome_values(agree(ptxmm.parse(short, "t.ptx"))) == set()


def test_copy_events_read_the_map_through_the_tensormap_proxy_first():
    g = build(ptxmm.load(HOP / "tma-tensor-load-2d.ptx"))
    agent = [e for e in g.events if e.agent >= 0]
    tmap = [e for e in agent if "TMAP" in e.tags]
    assert len(tmap) == 1 and tmap[0].kind == Kind.R and tmap[0].loc == "tm" and "GEN" not in tmap[0].tags
    reads = [e for e in agent if e.kind == Kind.R and "ASYNC" in e.tags]
    assert [e.loc for e in reads] == ["a[1]", "a[2]", "a[5]", "a[6]"]
    aint, addr = set(g.edges["aint"]), set(g.edges["addr"])
    assert all((tmap[0].eid, r.eid) in aint and (tmap[0].eid, r.eid) in addr for r in reads)


# ----- the tensormap proxy ----------------------------------------------------------------------

UPDATE = """
.global .b32 a[2] = {1, 2};
.global .b32 b[2] = {5, 6};
.global .tensormap tm = tensormap(a, dims {2}, box {2});
.global .tensormap tm2 = tensormap(a, dims {2}, box {2});
.shared .u32 s[2];
.shared .b64 bar = mbarrier.init(1);
.thread T0 .cta 0 {
    mov.u64 %rd0, b;
    tensormap.replace.tile.global_address.global.b1024.b64 [tm], %rd0;
    %REL%
    %ACQ%
    mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], 8;
    cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [s], [tm, {0}], [bar];
W:  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [bar], 0;
    @!%p bra W;
    ld.shared.u32 %r0, [s];
}
exists (T0:%r0 == 1)
"""
REL = "fence.proxy.tensormap::generic.release.cta;"
ACQ = "fence.proxy.tensormap::generic.acquire.cta [tm], 128;"


def _update(rel: str, acq: str) -> ptxmm.CheckResult:
    return agree(ptxmm.parse(UPDATE.replace("%REL%", rel).replace("%ACQ%", acq), "t.ptx"))


def test_copy_case_split_reads_either_map_value_without_fences():
    r = _update("", "")
    assert r.holds and {dict(o)["T0:%r0"] for o in outcome_values(r)} == {1, 5}


def test_tensormap_needs_both_fences():
    """The CHOICE of models/ptx-proxy.cat (tm-ppcb): a generic write of a map reaches a copy's
    tensormap-proxy read only through the release fence and then the acquire fence naming it."""
    assert not _update(REL, ACQ).holds
    assert _update(REL, "").holds
    assert _update("", ACQ).holds
    assert _update(ACQ, REL).holds  # the wrong order


def test_acquire_fence_covers_only_the_map_it_names():
    """"[addr, addr+size-1] on which the ordering guarantees ... is to be provided": an acquire of
    another tensor map (tm2) does not order the write of tm before the copy's read of tm."""
    assert _update(REL, ACQ.replace("[tm]", "[tm2]")).holds


PUBLISH = """
.global .u32 data = 0;
.global .u32 flag = 0;
.thread T0 .cta 0 {
    st.global.u32 [data], 1;
    fence.proxy.tensormap::generic.release.gpu;
    st.relaxed.gpu.global.u32 [flag], 1;
}
.thread T1 .cta 1 {
S:  ld.relaxed.gpu.global.u32 %r9, [flag];
    setp.ne.u32 %q, %r9, 1;
    @%q bra S;
    %ACQ%
    ld.global.u32 %r0, [data];
}
exists (T1:%r0 == 0)
"""


def test_tensormap_fences_synchronize_with_each_other():
    """"A .release proxy fence can form a release sequence that synchronizes with an acquire
    sequence that contains a .acquire proxy fence" (models/ptx-async.cat, tm-sync); CHOICE: with
    no other acquire pattern — a plain fence.acquire after the flag read is not its partner."""
    src = ".global .b32 a[1];\n.global .tensormap tm = tensormap(a, dims {1}, box {1});\n" + PUBLISH
    assert not agree(ptxmm.parse(src.replace("%ACQ%", ACQ.replace(".cta", ".gpu")), "t.ptx")).holds
    assert agree(ptxmm.parse(src.replace("%ACQ%", "fence.acquire.gpu;"), "t.ptx")).holds
    assert agree(ptxmm.parse(src.replace("%ACQ%", ACQ), "t.ptx")).holds  # .cta: not in scope


def test_update_published_by_release_acquire_still_needs_the_proxy_fences():
    """st.release / ld.acquire order the map write before the copy in base causality, but the
    copy reads the map through the tensormap proxy: without the proxy fences it may use the old
    map (the ISA's proxy rule; kernel start does not acquire the tensormap proxy either)."""
    src = (HOP / "tensormap-update-no-fence.ptx").read_text().replace(
        "st.relaxed.gpu.global.u32 [flag], 1", "st.release.gpu.global.u32 [flag], 1").replace(
        "ld.relaxed.gpu.global.u32 %r9, [flag]", "ld.acquire.gpu.global.u32 %r9, [flag]")
    assert agree(ptxmm.parse(src, "t.ptx")).holds


def test_multicast_tensor_load_writes_the_box_in_every_cta_of_the_mask():
    src = """
.global .b32 a[4] = {1, 2, 3, 4};
.global .tensormap tm = tensormap(a, dims {4}, box {2});
.shared .u32 s[2];
.shared .b64 bar = mbarrier.init(1);
.thread T0 .cluster 0 .cta 0 {
    mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], 8;
    cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
        [s], [tm, {2}], [bar], 3;
W0: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [bar], 0;
    @!%p bra W0;
    ld.shared.u32 %r0, [s+4];
}
.thread T1 .cluster 0 .cta 1 {
    mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [bar], 8;
W1: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p, [bar], 0;
    @!%p bra W1;
    ld.shared.u32 %r0, [s];
}
exists (T0:%r0 != 4 || T1:%r0 != 3)
"""
    p = ptxmm.parse(src, "t.ptx")
    assert not agree(p).holds
    writes = [e for e in build(p).events if e.agent >= 0 and e.kind == Kind.W and "ASYNC" in e.tags]
    assert len({e.loc for e in writes}) == 4
    cta = ptxmm.parse(src.replace(".shared::cluster.global.tile", ".shared::cta.global.tile")
                      .replace(".multicast::cluster\n", "\n").replace("[bar], 3;", "[bar];")
                      .replace("T1:%r0 != 3", "T1:%r0 != 0"), "t.ptx")
    assert [i for i in cta.threads[0].instrs if isinstance(i, TensorCopy)][0].multicast is None
