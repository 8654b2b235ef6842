"""Launches as CUDA validates them (issue 39 item 4; kernel/launch.py apply_directives, the module
reader's header directives): a kernel's .maxntid/.reqntid/.reqnctapercluster/.explicitcluster/
.maxclusterrank are read as ptxas reads them, the cluster of __cluster_dims__ is the launch's when
the launch line gives none (cluster ranks as the GPU gives them), and a launch CUDA refuses is a
located error at the launch line naming the directive — for every launch, CUDA's rule decides
(the property test's oracle is written from the PTX ISA and what an H200 did, not from the code)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.errors import ParseError, PtxmmError, SemanticError, UnsupportedError
from ptxmm.kernel import module as ptx_module
from ptxmm.kernel.launch import apply_directives, parse_launch
from ptxmm.kernel.module.records import EntryDirective

PTXAS = shutil.which("ptxas")
NVCC = shutil.which("nvcc")

# the kernel writes its CTA's cluster rank and the cluster's CTA count: out[2*ctaid], out[2*ctaid+1]
BODY = """{
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<5>;
\tld.param.u64 %rd1, [k_param_0];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, %cluster_ctarank;
\tmov.u32 %r2, %cluster_nctarank;
\tmov.u32 %r3, %ctaid.x;
\tmul.wide.u32 %rd3, %r3, 8;
\tadd.s64 %rd4, %rd2, %rd3;
\tst.global.u32 [%rd4], %r1;
\tst.global.u32 [%rd4+4], %r2;
\tret;
}
"""


def module(directives: str, launch: str) -> str:
    """A module whose line 1 is the launch and whose kernel k carries ``directives`` (line 9)."""
    return (f"// ptxmm: launch {launch}\n.version 8.0\n.target sm_90\n.address_size 64\n\n"
            f".visible .entry k(\n\t.param .u64 k_param_0\n)\n{directives}\n" + BODY)


def load(tmp_path, directives: str, launch: str):
    f = tmp_path / "k.ptx"
    f.write_text(module(directives, launch))
    return ptxmm.load(f)


def outcomes(prog) -> set[tuple[int, ...]]:
    return {tuple(o.outcome.as_dict()[f"out[{i}]"] for i in range(4))
            for o in ptxmm.check(prog, engine="brute", flags=False).outcomes}


# ----- refused launches: a located error at the launch line naming the directive ---------------------

REFUSED = [
    (".maxntid 2, 1, 1", "k<<<1, 4>>>(unsigned out[4])", ".maxntid 2, 1, 1", "4 threads"),
    (".maxntid 4, 1, 1", "k<<<1, (2, 3)>>>(unsigned out[4])", ".maxntid 4, 1, 1", "6 threads"),
    (".reqntid 4, 1, 1", "k<<<1, 2>>>(unsigned out[4])", ".reqntid 4, 1, 1", "the block is 2"),
    (".reqntid 2, 2, 1", "k<<<1, 4>>>(unsigned out[4])", ".reqntid 2, 2, 1", "the block is 4"),
    (".explicitcluster\n.reqnctapercluster 2, 1, 1", "k<<<2, 1, 1>>>(unsigned out[4])",
     ".reqnctapercluster 2, 1, 1", "cluster is 1"),
    (".reqnctapercluster 2, 1, 1", "k<<<4, 1, 4>>>(unsigned out[8])", ".reqnctapercluster", "cluster is 4"),
    (".reqnctapercluster 2, 1, 1", "k<<<3, 1>>>(unsigned out[6])", ".reqnctapercluster", "not a multiple"),
    (".explicitcluster", "k<<<2, 1>>>(unsigned out[4])", ".explicitcluster", "gives no cluster"),
    (".maxclusterrank 2", "k<<<4, 1, 4>>>(unsigned out[8])", ".maxclusterrank 2", "4 CTAs"),
]


@pytest.mark.parametrize("directives, launch, named, what", REFUSED)
def test_a_launch_cuda_refuses_is_an_error_at_the_launch_line(tmp_path, directives, launch, named, what):
    with pytest.raises(SemanticError) as e:
        load(tmp_path, directives, launch)
    msg = str(e.value)
    assert named in msg and what in msg, msg
    assert e.value.pos is not None and (e.value.pos.file, e.value.pos.line) == (str(tmp_path / "k.ptx"), 1)
    word = named.split()[0]
    line = 9 + next(k for k, d in enumerate(directives.split("\n")) if d.split()[0] == word)
    assert f"PTX line {line}" in msg  # the directive's own line
    assert "CUDA refuses" in (e.value.hint or "")


@pytest.mark.parametrize("directives, launch", [
    (".maxntid 4, 1, 1", "k<<<1, (1, 4)>>>(unsigned out[4])"),  # the total counts, not each extent
    (".maxntid 2, 2, 1", "k<<<1, 3>>>(unsigned out[4])"),
    (".reqntid 2, 1, 1", "k<<<2, 2>>>(unsigned out[4])"),
    (".maxntid 4, 1, 1\n.minnctapersm 2", "k<<<2, 1>>>(unsigned out[4])"),
    (".maxnreg 32", "k<<<2, 1>>>(unsigned out[4])"),
    (".explicitcluster\n.reqnctapercluster 2, 1, 1", "k<<<2, 1, 2>>>(unsigned out[4])"),
    (".maxclusterrank 2", "k<<<2, 1>>>(unsigned out[4])"),
])
def test_a_launch_cuda_accepts_is_checked(tmp_path, directives, launch):
    assert load(tmp_path, directives, launch).threads


def test_the_launch_error_names_the_cuda_attribute_and_its_line(tmp_path):
    cu = tmp_path / "k.cu"
    cu.write_text("// ptxmm: launch k<<<1, 8>>>(int out[8])\n\n"
                  "__global__ void __launch_bounds__(4) k(int *out)\n{\n    out[threadIdx.x] = 1;\n}\n")
    (tmp_path / "k.ptx").write_text(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry _Z1kPi(\n"
        "\t.param .u64 _Z1kPi_param_0\n)\n.maxntid 4, 1, 1\n{\n\tret;\n}\n")
    with pytest.raises(SemanticError) as e:
        ptxmm.load(tmp_path / "k.ptx")
    assert "`.maxntid 4, 1, 1` (PTX line 7; __launch_bounds__ at k.cu:3)" in str(e.value), str(e.value)


def test_blocks_as_clusters_is_not_supported_yet(tmp_path):
    with pytest.raises(UnsupportedError, match="blocksareclusters"):
        load(tmp_path, ".blocksareclusters\n.reqntid 1, 1, 1\n.reqnctapercluster 2, 1, 1",
             "k<<<1, 1>>>(unsigned out[4])")


# ----- cluster ranks ------------------------------------------------------------------------------------

def test_cluster_dims_give_the_launch_its_cluster_and_the_ranks_the_gpu_gives(tmp_path):
    """`__cluster_dims__(2, 1, 1)` launched <<<2, 1>>>: %cluster_ctarank 0 and 1, %cluster_nctarank
    2 (an H200: ranks 0 and 1; launched <<<4, 1>>>: 0, 1, 0, 1)."""
    prog = load(tmp_path, ".explicitcluster\n.reqnctapercluster 2, 1, 1", "k<<<2, 1>>>(unsigned out[4])")
    assert prog.kernel.launch.cluster == (2, 1, 1)
    assert {t.placement.cluster for t in prog.threads} == {0}
    assert outcomes(prog) == {(0, 2, 1, 2)}
    assert any("__cluster_dims__" in w.message for w in prog.warnings)
    four = load(tmp_path, ".reqnctapercluster 2, 1, 1", "k<<<4, 1>>>(unsigned out[8])")
    assert [t.placement.cluster for t in four.threads] == [0, 0, 1, 1]


def test_without_a_cluster_every_cta_is_rank_0_of_a_cluster_of_1(tmp_path):
    assert outcomes(load(tmp_path, "", "k<<<2, 1>>>(unsigned out[4])")) == {(0, 1, 0, 1)}


def test_a_launch_line_cluster_equal_to_cluster_dims_is_the_same_launch(tmp_path):
    a = load(tmp_path, ".reqnctapercluster 2, 1, 1", "k<<<2, 1, 2>>>(unsigned out[4])")
    assert a.kernel.launch.cluster_from == "launch" and outcomes(a) == {(0, 2, 1, 2)}


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
def test_cluster_dims_compiled_by_nvcc(tmp_path):
    cu = tmp_path / "c.cu"
    cu.write_text("// ptxmm: launch c<<<2, 1>>>(unsigned a[2])\n// ptxmm: forall a[0] == 0 && a[1] == 1\n"
                  "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
                  "__global__ void __cluster_dims__(2, 1, 1) c(unsigned *a)\n"
                  "{ a[blockIdx.x] = cg::this_cluster().block_rank(); }\n")
    assert ptxmm.check(ptxmm.load(cu)).holds is True


# ----- the directives as ptxas reads them -----------------------------------------------------------

BAD_DIRECTIVES = [  # (directives, error class) — each also refused by ptxas (test below)
    (".maxntid 0", SemanticError),
    (".maxntid 1, 2, 3, 4", ParseError),
    (".maxntid 4\n.reqntid 4", SemanticError),
    (".reqnctapercluster 2\n.maxclusterrank 4", SemanticError),
    (".minnctapersm 0", SemanticError),
    (".noreturn", SemanticError),
]


def _module(header: str, kind: str = ".visible .entry k()") -> str:
    return f".version 8.0\n.target sm_90\n.address_size 64\n{kind}\n{header}\n{{\n\tret;\n}}\n"


@pytest.mark.parametrize("header, error", BAD_DIRECTIVES)
def test_a_directive_ptxas_refuses_is_a_located_error(header, error):
    with pytest.raises(error) as e:
        ptx_module.parse(_module(header), "k.ptx")
    assert e.value.pos is not None and e.value.pos.line >= 5


def test_a_kernel_directive_on_a_func_is_an_error():
    with pytest.raises(SemanticError, match="reqnctapercluster"):
        ptx_module.parse(_module(".reqnctapercluster 2", ".func f()"), "k.ptx")


@pytest.mark.skipif(PTXAS is None, reason="ptxas not on PATH (the CUDA toolkit)")
@pytest.mark.parametrize("header", [h for h, _ in BAD_DIRECTIVES] + ["__func__"])
def test_the_refused_directives_are_what_ptxas_refuses(tmp_path, header):
    text = _module(".reqnctapercluster 2", ".func f()") if header == "__func__" else _module(header)
    f = tmp_path / "k.ptx"
    f.write_text(text)
    assert subprocess.run([PTXAS, "-arch=sm_90", str(f), "-o", "/dev/null"], capture_output=True).returncode


def test_directives_are_kept_on_the_function_in_order_with_their_lines():
    text = _module(".explicitcluster\n.reqnctapercluster 2, 1\n.maxnreg 40")
    fn = ptx_module.parse(text, "k.ptx").entries[0]
    assert [(d.name, d.values, d.pos.line) for d in fn.directives] == [
        ("explicitcluster", (), 5), ("reqnctapercluster", (2, 1, 1), 6), ("maxnreg", (40,), 7)]


def test_every_committed_example_kernel_still_loads():
    """The corpus kernels carry no directive that refuses their launch (nvcc's own headers)."""
    for ptx in sorted((ROOT / "examples" / "kernels").glob("*.ptx")):
        assert ptxmm.load(ptx).threads, ptx.name


# ----- launch attributes ----------------------------------------------------------------------------

def test_launch_attributes_come_before_the_kernel_name():
    a = parse_launch("cooperative k<<<2, 1>>>(int a[1])")
    assert (a.kernel, a.cooperative, a.nonportable) == ("k", True, False)
    b = parse_launch("nonportable cooperative k<<<2, 1>>>(int a[1])")
    assert (b.cooperative, b.nonportable) == (True, True)
    c = parse_launch("cooperative<<<2, 1>>>(int a[1])")  # a kernel named `cooperative`
    assert (c.kernel, c.cooperative) == ("cooperative", False)
    d = parse_launch("cooperative cooperative<<<2, 1>>>(int a[1])")
    assert (d.kernel, d.cooperative) == ("cooperative", True)
    with pytest.raises(ParseError, match="twice"):
        parse_launch("cooperative cooperative k<<<2, 1>>>(int a[1])")


def test_a_non_portable_cluster_needs_the_attribute():
    with pytest.raises(SemanticError, match="16 CTAs") as e:
        parse_launch("k<<<16, 1, 16>>>(int a[1])")
    assert "nonportable" in (e.value.hint or "")
    assert parse_launch("nonportable k<<<16, 1, 16>>>(int a[1])").cluster == (16, 1, 1)
    with pytest.raises(SemanticError, match="32 CTAs"):
        parse_launch("nonportable k<<<32, 1, 32>>>(int a[1])")


# ----- the property: accepted exactly when CUDA's rule accepts ---------------------------------------

def cuda_accepts(block, grid, cluster, nonportable, d: dict) -> bool:
    """CUDA's rules, written from the PTX ISA (11.4, 11.7) and the CUDA programming guide's cluster
    limits, each seen on an H200 (cudaLaunchKernelEx): independent of kernel/launch.py."""
    n = block[0] * block[1] * block[2]
    if "reqntid" in d and tuple(block) != d["reqntid"]:
        return False
    if "maxntid" in d and n > d["maxntid"][0] * d["maxntid"][1] * d["maxntid"][2]:
        return False
    if "reqnctapercluster" in d:
        if cluster is not None and tuple(cluster) != d["reqnctapercluster"]:
            return False
        cluster = d["reqnctapercluster"]
    if "explicitcluster" in d and cluster is None:
        return False
    if cluster is None:
        return True
    size = cluster[0] * cluster[1] * cluster[2]
    if "maxclusterrank" in d and size > d["maxclusterrank"][0]:
        return False
    if any(g % c for g, c in zip(grid, cluster)):
        return False
    return size <= (16 if nonportable else 8)


DIM = st.tuples(st.integers(1, 4), st.integers(1, 2), st.integers(1, 2))
WIDE = st.tuples(st.sampled_from([1, 2, 3, 4, 8, 16, 32]), st.integers(1, 2), st.integers(1, 2))


@st.composite
def launches(draw):
    block, grid = draw(DIM), draw(WIDE)
    assume(block[0] * block[1] * block[2] * grid[0] * grid[1] * grid[2] <= 32)  # ptxmm's own limit
    cluster = draw(st.one_of(st.none(), WIDE))
    d: dict[str, tuple[int, ...]] = {}
    if draw(st.booleans()):
        d["reqntid" if draw(st.booleans()) else "maxntid"] = draw(DIM)
    if draw(st.booleans()):
        d["reqnctapercluster"] = draw(WIDE)
    elif draw(st.booleans()):
        d["maxclusterrank"] = (draw(st.integers(1, 16)),)
    if draw(st.booleans()):
        d["explicitcluster"] = ()
    return block, grid, cluster, draw(st.booleans()), d


def _dim(x) -> str:
    return "(" + ", ".join(map(str, x)) + ")"


@settings(max_examples=400, deadline=None)
@given(launches())
def test_a_launch_is_accepted_exactly_when_cuda_accepts_it(case):
    block, grid, cluster, nonportable, d = case
    text = (("nonportable " if nonportable else "") + f"k<<<{_dim(grid)}, {_dim(block)}"
            + (f", {_dim(cluster)}" if cluster is not None else "") + ">>>(int a[1])")
    directives = tuple(EntryDirective(k, v) for k, v in d.items())
    try:
        launch = apply_directives(parse_launch(text), "k", directives)
    except PtxmmError as e:
        assert isinstance(e, SemanticError), e
        assert not cuda_accepts(block, grid, cluster, nonportable, d), str(e)
        return
    assert cuda_accepts(block, grid, cluster, nonportable, d), text
    want = cluster if cluster is not None else d.get("reqnctapercluster")
    assert launch.cluster == (tuple(want) if want is not None else None)
