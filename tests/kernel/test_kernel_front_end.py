"""The kernel front end (issue 25): PTX modules as nvcc emits them, launches, kernel Programs and
their findings (assert-fails, out-of-bounds, race), with CUDA source lines.

The kernels of tests/data/kernels/ are compiled .cu files with their PTX committed (regen.sh):
every test here runs without nvcc on the committed PTX; one recompiles with nvcc where it is
installed and compares."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.cli.main import main
from ptxmm.errors import ParseError, PtxmmError, SemanticError, UnsupportedError
from ptxmm.kernel import module as ptx_module
from ptxmm.kernel.demangle import demangle
from ptxmm.kernel.inline import thread_jumps
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.kernel.launch import MAX_BLOCK_THREADS, MAX_THREADS, parse_launch
from ptxmm.loading import parse_kernel

DATA = ROOT / "tests" / "data" / "kernels"


def kinds(res) -> set[str]:
    return {str(f.kind) for f in res.findings}


def load(name: str, **kw):
    return ptxmm.load(DATA / name, kernel=KernelArgs(**kw) if kw else None)


# ----- the module parser ---------------------------------------------------------------------------

def test_module_of_nvcc():
    mod = ptx_module.parse((DATA / "mp_relaxed.ptx").read_text(), "mp_relaxed.ptx")
    assert [f.name for f in mod.entries] == ["_Z2mpPiS_"]
    fn = mod.entries[0]
    assert [p.type for p in fn.params] == ["u64", "u64"]
    assert fn.declares("%r5") and fn.declares("%rd11") and not fn.declares("%r6")
    loads = [i for i in fn.body if type(i).__name__ == "Load"]
    # the CUDA line of each instruction comes from .loc (inlined libcu++ code: the calling line)
    assert [(i.text.split()[0], i.pos.src.line) for i in loads] == [("ld.relaxed.gpu.b32", 16),
                                                                   ("ld.global.u32", 18)]
    assert {v.name for v in mod.variables} >= {"$str"}


def test_statement_splitter_braces_and_labels():
    text = """.version 9.0
.target sm_90
.address_size 64
.global .align 4 .b8 tab[8] = {1, 0, 0, 0, 2, 0, 0, 0};
.visible .entry k(.param .u64 k_param_0)
{
 .reg .b32 %r<3>; .reg .b64 %rd<3>; /* a block
 comment */
 ld.param.u64 %rd1, [k_param_0];
$L__BB0_1:
 { // callseq
 mov.u32 %r1, 1;
 }
 @!%p1 bra $L__BB0_1; ret;
}
"""
    mod = ptx_module.parse(text, "k.ptx")
    fn = mod.functions["k"]
    names = [type(i).__name__ for i in fn.body]
    assert names == ["Mov", "Label", "Mov", "Branch", "Ret"]
    assert fn.body[3].guard[1] is True
    tab = mod.variables[0]
    # a byte array aligned to 4 is an array of 4-byte words (nvcc's `int tab[2] = {1, 2}`)
    assert (tab.name, tab.type, tab.count, tab.init) == ("tab", "b32", 2, (1, 2))


def test_demangle():
    assert demangle("_Z2mpPiS_") == "mp"
    assert demangle("_ZN2ns4kernEPi") == "ns::kern"
    assert demangle("_ZZ8exchangePiE1s") == "s"
    assert demangle("plain") == "plain"


# ----- findings ------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", ["ptx", "ptx-v7.5"])
def test_mp_relaxed_flag_races_and_assert_fails(model):
    res = ptxmm.check(load("mp_relaxed.ptx"), model)
    assert kinds(res) == {"race", "assert-fails"}
    race = next(f for f in res.findings if f.kind == "race")
    assert {e.text.rsplit(":", 1)[-1].rstrip("]") for e in race.events} == {"13", "18"}  # mp_relaxed.cu
    fail = next(f for f in res.findings if f.kind == "assert-fails")
    assert fail.events[0].thread == "b1t0"
    assert fail.events[0].text == "mp_relaxed.cu:18 assert(data[0] == 42);"


@pytest.mark.parametrize("model", ["ptx", "ptx-v7.5"])
def test_mp_release_is_ok_and_its_condition_holds(model):
    res = ptxmm.check(load("mp_release.ptx"), model)
    assert res.findings == () and res.holds is True


def test_mp_release_weakened_to_relaxed_fails():
    """The same kernel with the release store made relaxed: the assertion can fail."""
    text = (DATA / "mp_release.ptx").read_text().replace("st.release.gpu.b32", "st.relaxed.gpu.b32")
    res = ptxmm.check(parse_kernel(text, str(DATA / "mp_release.ptx")))
    assert kinds(res) == {"race", "assert-fails"} and res.holds is False


def test_out_of_bounds_is_a_finding_with_its_line():
    res = ptxmm.check(load("oob.ptx"))
    assert kinds(res) == {"out-of-bounds"}
    (f,) = res.findings
    assert f.events[0].thread == "b0t3"
    assert f.events[0].text.startswith("oob.cu:9 out[i + 1] = 0;")
    # the in-bounds stores all happened
    assert {o.outcome.as_dict()["out[3]"] for o in res.outcomes} == {3}


def test_in_bounds_launch_has_no_finding():
    """The same kernel with n = 5 (the last thread's i + 1 == 4 only when i == 4, never): no store
    past the end."""
    res = ptxmm.check(load("oob.ptx", launch="fill<<<1, 4>>>(int out[4], 5)"))
    assert res.findings == ()


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_engines_agree_on_findings(engine):
    for name in ("oob.ptx", "mp_relaxed.ptx"):
        res = ptxmm.check(load(name), engine=engine)
        assert kinds(res) == {"oob.ptx": {"out-of-bounds"}, "mp_relaxed.ptx": {"race", "assert-fails"}}[name]


def test_syncthreads_exchange_and_without_the_barrier():
    res = ptxmm.check(load("exchange.ptx"))
    assert res.findings == () and res.holds is True
    text = (DATA / "exchange.ptx").read_text()
    assert "bar.sync" in text
    res = ptxmm.check(parse_kernel(re.sub(r"\bbar\.sync\s+0;", "", text), str(DATA / "exchange.ptx")))
    assert kinds(res) == {"race"} and res.holds is False


def test_findings_in_json_and_text():
    r = CliRunner().invoke(main, ["check", str(DATA / "mp_relaxed.ptx"), "--json"])
    data = json.loads(r.output)
    assert {f["kind"] for f in data["findings"]} == {"race", "assert-fails"}
    r = CliRunner().invoke(main, ["check", str(DATA / "mp_relaxed.ptx")])
    assert "assert-fails: b1t0 mp_relaxed.cu:18 assert(data[0] == 42);" in r.output
    assert "[mp_relaxed.cu:13]" in r.output


def test_condition_from_the_command_line_wins():
    r = CliRunner().invoke(main, ["check", str(DATA / "mp_release.ptx"), "--exists", "out[0] == 0"])
    assert "FORBIDDEN" in r.output
    r = CliRunner().invoke(main, ["check", str(DATA / "mp_relaxed.ptx"), "--launch",
                                  "mp<<<2, 1>>>(int data[1], int flag[1])", "--forall", "data[0] == 42"])
    assert "REQUIRED" in r.output, r.output


def test_ptxmm_test_runs_kernels():
    r = CliRunner().invoke(main, ["test", str(DATA), "-j", "1"])
    assert r.exit_code == 0, r.output
    m = re.search(r"(\d+)/(\d+) agree", r.output)
    assert m and m[1] == m[2] and int(m[1]) >= 14, r.output  # every kernel of the data agrees


def test_ptxmm_test_disagrees_on_a_wrong_expect_line(tmp_path):
    for f in ("oob.ptx", "oob.cu"):
        text = (DATA / f).read_text().replace("expect out-of-bounds", "expect ok")
        (tmp_path / f).write_text(text)
    (tmp_path / "oob.cu").unlink()  # the .ptx reads its directives from itself then
    text = (tmp_path / "oob.ptx").read_text()
    (tmp_path / "oob.ptx").write_text("// ptxmm: launch fill<<<1, 4>>>(int out[4], 4)\n// ptxmm: expect ok\n"
                                      + text)
    r = CliRunner().invoke(main, ["test", str(tmp_path), "-j", "1"])
    assert r.exit_code == 1 and "DISAGREE" in r.output and "found out-of-bounds" in r.output


# ----- semantics of the nvcc instructions -----------------------------------------------------------

def _scalar_kernel(body: str, ty: str = "s32", params: int = 2) -> str:
    ps = ",\n".join(f"  .param .{ty} k_param_{i + 1}" for i in range(params))
    loads = "\n".join(f"  ld.param.{ty} %a{i + 1}, [k_param_{i + 1}];" for i in range(params))
    return f""".version 9.0
.target sm_90
.address_size 64
.visible .entry k(
  .param .u64 k_param_0,
{ps}
)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<9>;
  .reg .b64 %rd<9>;
  .reg .{ty[0] if ty[0] != 's' else 'b'}{ty[1:]} %a<4>;
  ld.param.u64 %rd1, [k_param_0];
  cvta.to.global.u64 %rd2, %rd1;
{loads}
{body}
  ret;
}}
"""


def _run(text: str, launch: str) -> int:
    prog = parse_kernel(text, "k.ptx", KernelArgs(launch=launch))
    res = ptxmm.check(prog)
    (o,) = res.outcomes
    return o.outcome.as_dict()["out[0]"]


def _s64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def _s32(v: int) -> int:
    v &= (1 << 32) - 1
    return v - (1 << 32) if v >> 31 else v


i32 = st.integers(-(1 << 31), (1 << 31) - 1)


@settings(max_examples=12, deadline=None)
@given(i32, i32)
def test_mul_wide_and_mad_wide(a, b):
    body = """  mul.wide.s32 %rd3, %a1, %a2;
  mad.wide.s32 %rd4, %a1, %a2, %rd3;
  st.global.u64 [%rd2], %rd4;"""
    got = _run(_scalar_kernel(body), f"k<<<1, 1>>>(long long out[1], {a}, {b})")
    assert got == _s64(2 * a * b)


@settings(max_examples=12, deadline=None)
@given(i32, i32)
def test_mul_hi_mad_lo_abs_cvt(a, b):
    body = """  mul.hi.s32 %r1, %a1, %a2;
  mad.lo.s32 %r2, %a1, %a2, %r1;
  abs.s32 %r3, %r2;
  cvt.s64.s16 %rd3, %r3;
  st.global.u64 [%rd2], %rd3;"""
    got = _run(_scalar_kernel(body), f"k<<<1, 1>>>(long long out[1], {a}, {b})")
    hi = (a * b) >> 32
    lo = _s32(a * b + hi)
    ab = _s32(abs(lo))
    low16 = ab & 0xFFFF
    assert got == (low16 - (1 << 16) if low16 >> 15 else low16)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, (1 << 32) - 1), st.integers(0, (1 << 32) - 1), st.integers(0, 40), st.integers(0, 40))
def test_bfe_bfi(a, b, pos, ln):
    body = f"""  bfe.u32 %r1, %a1, {pos}, {ln};
  bfi.b32 %r2, %a1, %a2, {pos}, {ln};
  xor.b32 %r3, %r1, %r2;
  st.global.u32 [%rd2], %r3;"""
    got = _run(_scalar_kernel(body, "u32"), f"k<<<1, 1>>>(unsigned out[1], {a}, {b})")
    p, n = min(pos, 32), min(ln, 32)
    bfe = (a >> p) & ((1 << n) - 1) if p < 32 else 0
    if n == 0 or pos >= 32:
        bfi = b
    else:
        n2 = min(n, 32 - pos)
        mask = ((1 << n2) - 1) << pos
        bfi = ((a << pos) & mask) | (b & ~mask & 0xFFFFFFFF)
    assert got == (bfe ^ bfi) & 0xFFFFFFFF


def test_special_registers_are_concrete_per_thread():
    body = """  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.s32 %rd3, %r4, 4;
  add.s64 %rd4, %rd2, %rd3;
  mov.u32 %r5, %laneid;
  st.global.u32 [%rd4], %r5;"""
    prog = parse_kernel(_scalar_kernel(body, params=0), "k.ptx",
                        KernelArgs(launch="k<<<2, 3>>>(int out[6])"))
    res = ptxmm.check(prog)
    (o,) = res.outcomes
    assert [o.outcome.as_dict()[f"out[{i}]"] for i in range(6)] == [0, 1, 2, 0, 1, 2]
    assert [t.placement.cta for t in prog.threads] == [0, 0, 0, 1, 1, 1]


def test_an_inlined_func():
    text = """.version 9.0
.target sm_90
.address_size 64
.func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [twice_param_0];
  add.s32 %r2, %r1, %r1;
  st.param.b32 [func_retval0+0], %r2;
  ret;
}
.visible .entry k(.param .u64 k_param_0)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [k_param_0];
  mov.u32 %r1, 21;
  { .param .b32 param0;
  st.param.b32 [param0+0], %r1;
  .param .b32 retval0;
  call.uni (retval0), twice, (param0);
  ld.param.b32 %r2, [retval0+0];
  }
  st.global.u32 [%rd1], %r2;
  ret;
}
"""
    assert _run(text, "k<<<1, 1>>>(int out[1])") == 42


def test_spin_loop_shape_of_nvcc_becomes_an_await():
    """``L: ld; setp; @p bra X; bra.uni L; X:`` is rewritten to ``L: ld; setp; @!p bra L; X:`` (the
    same control flow), which the event builder reduces to an await."""
    from ptxmm.ir.program import Branch, Label

    body = [Label(name="L"), Branch(target="X", guard=(ptxmm.ir.program.Reg("%p"), False)),
            Branch(target="L"), Label(name="X")]
    out = thread_jumps(body)
    assert [type(i).__name__ for i in out] == ["Label", "Branch", "Label"]
    assert out[1].target == "L" and out[1].guard[1] is True
    text = (DATA / "mp_release.ptx").read_text()
    res = ptxmm.check(parse_kernel(text, str(DATA / "mp_release.ptx")))
    assert res.awaits == 1


# ----- hostile kernels and launches: located errors --------------------------------------------------

@pytest.mark.parametrize("launch, message", [
    ("nope<<<2, 1>>>(int data[1], int flag[1])", "no kernel named nope"),
    ("mp<<<2, 1>>>(int data[1])", "takes 2 argument(s), the launch gives 1"),
    ("mp<<<0, 1>>>(int data[1], int flag[1])", "the grid has a dimension of 0"),
    ("mp<<<2, -1>>>(int data[1], int flag[1])", "the block has a dimension of -1"),
    ("mp<<<1000, 1000>>>(int data[1], int flag[1])", "1000000 threads, more than the limit of 16384"),
    ("mp<<<17, 1024>>>(int data[1], int flag[1])", "17408 threads, more than the limit of 16384"),
    ("mp<<<1, 1025>>>(int data[1], int flag[1])", "1025 threads, more than CUDA's limit of 1024"),
    ("mp<<<1, (32, 32, 2)>>>(int data[1], int flag[1])", "2048 threads, more than CUDA's limit of 1024"),
    ("mp<<<2, 1>>>(int data[0], int flag[1])", "buffer data has 0 elements"),
    ("mp<<<2, 1>>>(int data[100000], int flag[1])", "more than the limit"),
    ("mp<<<2, 1>>>(float data[1] = {1}, int flag[1])", "a buffer of float, parameter 1 is of type int *"),
    ("mp<<<2, 1>>>(wchar data[1], int flag[1])", "an argument is"),
    ("mp<<<2, 1>>>(int data[1], int data[1])", "two buffers are named data"),
    ("mp<<2, 1>>>(int data[1], int flag[1])", "expected `<<<`"),
])
def test_bad_launches(launch, message):
    with pytest.raises(PtxmmError) as e:
        load("mp_relaxed.ptx", launch=launch)
    assert message in e.value.message
    assert e.value.pos is not None or "kernel" in e.value.message


def test_buffer_for_a_scalar_parameter():
    with pytest.raises(SemanticError, match="not a pointer"):
        load("oob.ptx", launch="fill<<<1, 4>>>(int out[4], int n[1])")
    with pytest.raises(SemanticError, match=r"a buffer of unsigned, parameter 1 is of type int \*") as e:
        load("oob.ptx", launch="fill<<<1, 4>>>(unsigned out[4], 4)")
    assert e.value.pos is not None and e.value.hint == "declare it `int out[N]`"


def test_mangled_parameter_types():
    from ptxmm.kernel.demangle import param_types

    assert param_types("_Z2mpPiS_S_") == ["Pi", "Pi", "Pi"]
    assert param_types("_Z6tickerPjS_PiS0_") == ["Pj", "Pj", "Pi", "Pi"]
    assert param_types("_Z3fooPKiPj") == ["PKi", "Pj"]
    assert param_types("_Z1fv") == [] and param_types("_ZN2ns1fEv") is None


def test_warp_collectives_not_modelled_yet_are_refused():
    """The matrix instructions (ldmatrix, mma, wmma) are not modelled yet (shfl, vote, match,
    redux, activemask, elect and bar.warp.sync are: tests/kernel/test_warp_collectives.py)."""
    text = (DATA / "oob.ptx").read_text().replace("mov.u32 \t%r2, %tid.x;",
                                                  "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r2}, [%rd1];")
    assert "ldmatrix" in text
    with pytest.raises(UnsupportedError, match="warp-collective") as e:
        parse_kernel(text, "oob.ptx")
    assert e.value.pos.line > 0 and e.value.pos.src.line == 6


def test_unknown_special_register():
    body = "  mov.u32 %r1, %smid;\n  st.global.u32 [%rd2], %r1;"
    with pytest.raises(UnsupportedError, match="%smid"):
        parse_kernel(_scalar_kernel(body, params=0), "k.ptx", KernelArgs(launch="k<<<1, 1>>>(int out[1])"))


def test_address_from_a_loaded_value_names_the_element_of_the_value():
    """out[out[0]] = 1 (tests/kernel/test_loaded_addresses.py has the rest): out[0] is 1, the store names
    out[1]; no out-of-bounds finding (the case "outside every buffer" is not taken)."""
    body = """  ld.global.u32 %r1, [%rd2];
  mul.wide.s32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], 7;"""
    prog = parse_kernel(_scalar_kernel(body, params=0), "k.ptx",
                        KernelArgs(launch="k<<<1, 1>>>(int out[2] = {1, 0})"))
    res = ptxmm.check(prog)
    assert res.findings == ()
    assert [o.outcome.as_dict() for o in res.outcomes] == [{"out[0]": 1, "out[1]": 7}]


def test_mixed_size_access_is_located():
    body = "  st.global.u64 [%rd2], 1;"
    prog = parse_kernel(_scalar_kernel(body, params=0), "k.ptx", KernelArgs(launch="k<<<1, 1>>>(int out[2])"))
    with pytest.raises(UnsupportedError, match="mixed-size"):
        ptxmm.check(prog)


def test_directive_errors(tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text("// ptxmm: lunch k<<<1,1>>>()\n" + _scalar_kernel("", params=0))
    with pytest.raises(ParseError, match="unknown ptxmm directive") as e:
        ptxmm.load(f)
    assert e.value.pos.line == 1
    f.write_text("// ptxmm: launch k<<<1,1>>>(int out[1])\n// ptxmm: expect crash\n"
                 + _scalar_kernel("", params=0))
    with pytest.raises(ParseError, match="unknown finding kind"):
        ptxmm.load(f)
    f.write_text(_scalar_kernel("", params=0))
    with pytest.raises(SemanticError, match="has no launch"):
        ptxmm.load(f)


def test_condition_names_an_element():
    with pytest.raises(SemanticError, match="no buffer element"):
        load("mp_release.ptx", exists="out[3] == 1")
    with pytest.raises(ParseError):
        load("mp_release.ptx", exists="out[0] == ")


# ----- the launch parser ---------------------------------------------------------------------------

dims = st.one_of(st.integers(1, 2).map(lambda x: (x, 1, 1)),
                 st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2)))
ctypes = st.sampled_from(["int", "unsigned", "long long", "unsigned char", "uint64_t", "short"])


@settings(max_examples=60, deadline=None)
@given(dims, dims, st.lists(st.one_of(st.integers(-5, 5), st.tuples(ctypes, st.integers(1, 9))), max_size=4))
def test_launch_round_trip(grid, block, args):
    def dim(d):
        return str(d[0]) if d[1:] == (1, 1) else f"({d[0]}, {d[1]}, {d[2]})"

    parts = [str(a) if isinstance(a, int) else f"{a[0]} b{k}[{a[1]}]" for k, a in enumerate(args)]
    text = f"kern<<<{dim(grid)}, {dim(block)}>>>({', '.join(parts)})"
    la = parse_launch(text)
    assert (la.kernel, la.grid, la.block) == ("kern", grid, block)
    for a, got in zip(args, la.args):
        if isinstance(a, int):
            assert got.value == a
        else:
            assert (got.ctype, got.count, got.name) == (a[0], a[1], f"b{args.index(a)}") or got.count == a[1]


big = st.tuples(st.integers(1, 64), st.integers(1, 64), st.integers(1, 8))


@settings(max_examples=80, deadline=None)
@given(big, big)
def test_launch_size_ceilings(grid, block):
    """A launch is refused exactly past CUDA's threads per block, then past the machine's ceiling;
    every launch below both is read (its cost is left to --timeout and --max-memory)."""
    per_block = block[0] * block[1] * block[2]
    n = grid[0] * grid[1] * grid[2] * per_block
    text = f"k<<<({grid[0]}, {grid[1]}, {grid[2]}), ({block[0]}, {block[1]}, {block[2]})>>>()"
    if per_block > MAX_BLOCK_THREADS:
        with pytest.raises(SemanticError, match=f"{per_block} threads, more than CUDA's limit of 1024"):
            parse_launch(text)
    elif n > MAX_THREADS:
        with pytest.raises(SemanticError, match=f"{n} threads, more than the limit of {MAX_THREADS}") as e:
            parse_launch(text)
        assert "protects the machine" in str(e.value) and "--timeout" in str(e.value)
    else:
        assert parse_launch(text).n_threads == n


# ----- nvcc ----------------------------------------------------------------------------------------

def test_missing_nvcc_is_located(monkeypatch, tmp_path):
    import ptxmm.kernel.nvcc as nv

    monkeypatch.setattr(nv, "find_nvcc", lambda: None)
    shutil.copy(DATA / "oob.cu", tmp_path / "oob.cu")
    with pytest.raises(nv.CompileError, match="nvcc is not found") as e:
        ptxmm.load(tmp_path / "oob.cu")
    assert e.value.pos.file.endswith("oob.cu")


def _fake_nvcc(tmp_path, monkeypatch):
    """An nvcc that writes oob.ptx (committed) to its -o, and nothing under --dryrun."""
    import ptxmm.kernel.nvcc as nv

    fake = tmp_path / "nvcc"
    fake.write_text(f"""#!/bin/sh
[ "$1" = --version ] && {{ echo "fake nvcc"; exit 0; }}
for a in "$@"; do [ "$a" = --dryrun ] && exit 0; done
while [ $# -gt 1 ]; do [ "$1" = -o ] && cp {DATA / 'oob.ptx'} "$2"; shift; done
""")
    fake.chmod(0o755)
    monkeypatch.setattr(nv, "find_nvcc", lambda: str(fake))
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    shutil.copy(DATA / "oob.cu", tmp_path / "oob.cu")
    return tmp_path / "oob.cu"


def test_nvcc_writing_no_ptx_is_located(tmp_path, monkeypatch):
    """Flags under which nvcc succeeds and writes nothing (--dryrun): a located error, no
    FileNotFoundError of a temporary file (red team F6)."""
    cu = _fake_nvcc(tmp_path, monkeypatch)
    assert ptxmm.load(cu).layout is not None  # the fake compiles
    with pytest.raises(PtxmmError, match=r"nvcc produced no PTX for .*oob.cu \(flags '-arch=sm_90 "
                       r"--dryrun'\)") as e:
        ptxmm.load(cu, kernel=KernelArgs(nvcc_flags="-arch=sm_90 --dryrun"))
    assert e.value.pos.file == str(cu)


def test_no_such_kernel_names_the_cu_file(tmp_path, monkeypatch):
    """Not nvcc's output, a temporary .ptx that does not exist (red team F26)."""
    cu = _fake_nvcc(tmp_path, monkeypatch)
    with pytest.raises(SemanticError, match=f"no kernel named K in {re.escape(str(cu))}\n"):
        ptxmm.load(cu, kernel=KernelArgs(launch="K<<<1, 4>>>(int out[4], 4)"))


def _code(ptx: str) -> str:
    return ptx.split(".section")[0]


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


@pytest.mark.slow  # ~25 s; a recompile of each corpus kernel: tests/kernel/test_kernel_corpus.py
@needs_nvcc
def test_recompiled_ptx_equals_the_committed_one(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    for cu in sorted(DATA.glob("*.cu")):
        shutil.copy(cu, tmp_path / cu.name)
        subprocess.run(["nvcc", "-ptx", "-lineinfo", "-arch=sm_90", "-O3", cu.name, "-o", cu.stem + ".ptx"],
                       cwd=tmp_path, check=True, capture_output=True)
        got = (tmp_path / (cu.stem + ".ptx")).read_text().replace(f'"{tmp_path}/', '"')
        # the debug strings name an internal hash of the compile's directory: compared without them
        assert _code(got) == _code(cu.with_suffix(".ptx").read_text()), cu.name
        # and the .cu itself checks as its committed PTX does
        a = ptxmm.check(ptxmm.load(tmp_path / cu.name))
        b = ptxmm.check(ptxmm.load(cu.with_suffix(".ptx")))
        assert kinds(a) == kinds(b) and a.holds == b.holds


@needs_nvcc
def test_nvcc_error_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "bad.cu"
    f.write_text("// ptxmm: launch k<<<1, 1>>>(int out[1])\n__global__ void k(int *out) { out[0] = nope; }\n")
    from ptxmm.kernel.nvcc import CompileError

    with pytest.raises(CompileError, match="identifier \"nope\" is undefined") as e:
        ptxmm.load(f)
    assert e.value.pos.line == 2


@pytest.mark.slow  # a wall-clock assertion: fails on a loaded machine
@needs_nvcc
def test_compile_is_cached(tmp_path, monkeypatch):
    import time

    from ptxmm.kernel.nvcc import compile_cu

    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path / "cache"))
    shutil.copy(DATA / "oob.cu", tmp_path / "oob.cu")
    ptx, cached = compile_cu(tmp_path / "oob.cu")
    t0 = time.perf_counter()
    again, cached2 = compile_cu(tmp_path / "oob.cu")
    assert again == ptx and cached2 == cached
    assert time.perf_counter() - t0 < 0.5
    other, cached3 = compile_cu(tmp_path / "oob.cu", "-lineinfo -arch=sm_90 -O1")
    assert cached3 != cached


# ----- the corpus (examples/kernels, branch kcorpus) -------------------------------------------------

CORPUS = ROOT / "examples" / "kernels"


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the kernel corpus examples/kernels is not here")
@pytest.mark.parametrize("model", ["ptx", "ptx-v7.5"])
def test_corpus_findings_equal_their_expect_lines(model):
    """Every corpus kernel's findings equal its `expect` line (hangs included: the liveness query
    finds them) and its condition holds — except a model's documented departure
    (support/kernel_corpus.DEPARTURES: there the departure's findings, and the condition fails)."""
    from support.kernel_corpus import DEPARTURES

    from ptxmm.testing.runner import run_tests

    results = run_tests([str(CORPUS)], model, jobs=1)
    assert results
    for r in results:
        want = DEPARTURES.get((Path(r.path).stem, model))
        if want is None:
            assert r.status == "agree", (r.path, r.status, r.error or r.detail)
        else:
            assert r.detail and r.detail.split("; ")[1] == f"found {', '.join(sorted(want))}", r.detail
            assert "condition fails" in r.detail, r.detail
