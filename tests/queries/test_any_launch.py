"""Race freedom for every launch up to <<<G, B>>> (ptxmm.queries.any_launch): the bundled barrier
kernels proved or refuted with a witness the concrete check confirms, kernels outside the encoding
falling back with their reason, and a property test: the symbolic verdict for "up to <<<g, b>>>"
equals the OR of the concrete race checks over every launch <= <<<g, b>>>."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support import ROOT

from ptxmm import check, load
from ptxmm.errors import ArgumentError
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.queries.any_launch import any_launch_races, parse_up_to
from ptxmm.semantics.result import FindingKind

K = ROOT / "examples" / "kernels"
DATA = ROOT / "tests" / "queries" / "data"


def test_exchange_is_race_free_for_every_block_size_of_one_block():
    r = any_launch_races(K / "syncthreads-exchange.ptx", "<<<1, 1024>>>")
    assert r.verdict == "race-free", [str(f) for f in r.findings]
    assert r.summary().startswith("no data race for any launch up to <<<1, 1024>>> (assumptions:")


def test_exchange_races_across_blocks_with_a_confirmed_witness():
    # every block writes out[threadIdx.x]: two blocks write out[0]
    r = any_launch_races(K / "syncthreads-exchange.ptx", "<<<1024, 1024>>>")
    assert r.verdict == "races"
    (f,) = r.findings
    assert (f.kind, f.buffer, f.grid, f.block) == ("race", "out", 2, 1)
    assert {c for c, _ in f.threads} == {0, 1}
    assert f.confirmed is True
    assert all("syncthreads-exchange.cu:30" in a for a in f.accesses)


def test_grid_wide_block_reverse_is_race_free_up_to_1024_blocks_of_1024():
    # out[blockIdx.x * blockDim.x + threadIdx.x]: distinct for distinct threads (a nonlinear fact)
    r = any_launch_races(DATA / "block-reverse.cu", "<<<1024, 1024>>>")
    assert r.verdict == "race-free", [str(f) for f in r.findings]


def test_block_reverse_into_thread_index_races_between_blocks():
    r = any_launch_races(DATA / "block-reverse-racy.cu", "<<<1024, 1024>>>")
    (f,) = r.findings
    assert (f.buffer, f.grid, f.block, f.confirmed) == ("out", 2, 1, True)
    assert f.threads[0][0] != f.threads[1][0] and f.threads[0][1] == f.threads[1][1] == 0
    # the same kernel in one block only: race-free
    assert any_launch_races(DATA / "block-reverse-racy.cu", "<<<1, 1024>>>").verdict == "race-free"


def test_exchange_without_barrier_races_in_one_block():
    r = any_launch_races(K / "syncthreads-exchange-no-barrier.ptx", "<<<1, 1024>>>")
    (f,) = r.findings
    assert (f.buffer, f.grid, f.block, f.confirmed) == ("s", 1, 2, True)
    assert {a.split(" ")[0] for a in f.accesses} == {"st.shared.u32", "ld.shared.u32"}


@pytest.mark.parametrize("name", ["exchange-off-by-one", "gather-oob"])
def test_one_block_kernels_are_race_free(name):
    assert any_launch_races(K / f"{name}.ptx", "<<<1, 1024>>>").verdict == "race-free"


@pytest.mark.parametrize("name", ["exchange-off-by-one", "gather-oob"])
def test_one_block_kernels_race_between_blocks(name):
    # both store to out[threadIdx.x (+ 1)]: two blocks write the same element
    (f,) = any_launch_races(K / f"{name}.ptx", "<<<1024, 1024>>>").findings
    assert (f.buffer, f.grid, f.block, f.confirmed) == ("out", 2, 1, True)


def test_histogram_atomics_are_race_free_for_every_launch():
    # relaxed gpu-scope atom.add on the same bin: morally strong, no race
    assert any_launch_races(K / "histogram.ptx", "<<<1024, 1024>>>").verdict == "race-free"


def test_scatter_race_found_and_confirmed():
    r = any_launch_races(K / "scatter-race.ptx", "<<<1024, 1024>>>")
    assert r.verdict == "races"
    assert {f.buffer for f in r.findings} == {"idx", "out"}
    assert all(f.confirmed for f in r.findings)
    assert any(f.grid == 2 and f.block == 1 and f.buffer == "idx" for f in r.findings)


@pytest.mark.parametrize("name, reason", [("mp-release-flag", "an acquire operation"),
                                          ("barrier-arrive-wait", "mbarrier")])
def test_outside_falls_back_with_its_reason(name, reason):
    r = any_launch_races(K / f"{name}.ptx", "<<<8, 8>>>")
    assert r.verdict == "outside"
    assert reason in r.outside
    assert r.fallback is not None and r.fallback_launch.startswith(r.kernel.split("(")[0])
    assert r.summary().startswith("outside what the every-launch encoding covers")


@pytest.mark.parametrize("body, reason", [
    ("$L0:\n\tadd.u32 %r1, %r1, 1;\n\tsetp.lt.u32 %p1, %r1, 4;\n\t@%p1 bra $L0;\n", "a loop"),
    ("\tmembar.gl;\n", "a fence"),
    ("\tcvt.u64.u32 %rd5, %r1;\n\tst.global.u32 [%rd5], %r1;\n", "an address not computed from one buffer"),
])
def test_generated_forms_outside(tmp_path, body, reason):
    path = tmp_path / "k.ptx"
    path.write_text(_HEAD + body + "\tret;\n}\n// ptxmm: launch k<<<1, 1>>>(int out[16])\n")
    r = any_launch_races(path, "<<<2, 2>>>")
    assert r.verdict == "outside" and reason in r.outside, r.outside
    assert r.fallback is not None


def test_up_to_is_checked():
    assert parse_up_to("k<<<4, 32>>>") == (4, 32)
    for bad in ("<<<0, 1>>>", "<<<1, 1025>>>", "4, 32", "<<<(2,1,1), 4>>>"):
        with pytest.raises(ArgumentError):
            parse_up_to(bad)


# ----- generated barrier kernels ------------------------------------------------------------------

_HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
\t.reg .pred %p<32>;
\t.reg .b32 %r<200>;
\t.reg .b64 %rd<200>;
\t.shared .align 4 .b32 s[16];
\tld.param.u64 %rd1, [k_param_0];
\tcvta.to.global.u64 %rd2, %rd1;
\tmov.u32 %r1, %tid.x;
\tmov.u32 %r2, %ctaid.x;
\tmov.u32 %r3, %ntid.x;
"""


def _stmt(k: int, op: str, a: int, b: int, c: int, guard: int | None, d: int = 0) -> str:
    """Statement ``k``: an access of element (a*tid + b*ctaid + d*ntid + c) % 16 of out or s, or a
    barrier; ``guard``: only threads with tid < guard make it (a predicated access, or, for an
    odd statement, a branch around it)."""
    if op == "bar":
        return "\tbar.sync 0;\n"
    r = 10 + 10 * k
    lines = [f"\tmul.lo.u32 %r{r}, %r1, {a};", f"\tmad.lo.u32 %r{r + 1}, %r2, {b}, %r{r};",
             f"\tmad.lo.u32 %r{r + 8}, %r3, {d}, %r{r + 1};",
             f"\tadd.u32 %r{r + 2}, %r{r + 8}, {c};", f"\trem.u32 %r{r + 3}, %r{r + 2}, 16;",
             f"\tshl.b32 %r{r + 4}, %r{r + 3}, 2;"]
    g, tail = "", ""
    if guard is not None:
        lines.append(f"\tsetp.lt.u32 %p{k + 1}, %r1, {guard};")
        if k % 2:
            lines.append(f"\t@!%p{k + 1} bra $L{k};")
            tail = f"$L{k}:\n"
        else:
            g = f"@%p{k + 1} "
    if op.endswith("shared"):
        lines += [f"\tmov.u32 %r{r + 5}, s;", f"\tadd.u32 %r{r + 6}, %r{r + 5}, %r{r + 4};"]
        addr = f"%r{r + 6}"
    else:
        lines += [f"\tcvt.u64.u32 %rd{r}, %r{r + 4};", f"\tadd.s64 %rd{r + 1}, %rd2, %rd{r};"]
        addr = f"%rd{r + 1}"
    kind, _, space = op.rpartition(".")
    instr = {"st": f"st.{space}.u32 [{addr}], %r1;", "ld": f"ld.{space}.u32 %r{r + 7}, [{addr}];",
             "st.relaxed.gpu": f"st.relaxed.gpu.{space}.u32 [{addr}], %r1;",
             "atom": f"atom.{space}.add.u32 %r{r + 7}, [{addr}], 1;",
             "atom.cta": f"atom.cta.{space}.add.u32 %r{r + 7}, [{addr}], 1;"}[kind]
    return "\n".join(lines) + f"\n\t{g}{instr}\n{tail}"


_OPS = ["st.global", "ld.global", "atom.global", "st.shared", "ld.shared", "atom.shared", "bar",
        "st.relaxed.gpu.global", "atom.cta.global"]
_STMT = st.tuples(st.sampled_from(_OPS), st.integers(0, 2), st.integers(0, 3), st.integers(0, 3),
                  st.one_of(st.none(), st.integers(1, 2)), st.integers(0, 1))


def _kernel(stmts) -> str:
    body = "".join(_stmt(k, *s) for k, s in enumerate(stmts))
    return _HEAD + body + "\tret;\n}\n// ptxmm: launch k<<<1, 1>>>(int out[16])\n"


def _concrete_race(path, g: int, b: int) -> bool:
    res = check(load(path, kernel=KernelArgs(f"k<<<{g}, {b}>>>(int out[16])")))
    return any(f.kind == FindingKind.RACE for f in res.findings)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stmts=st.lists(_STMT, min_size=1, max_size=4), g=st.integers(1, 2), b=st.integers(1, 4))
def test_symbolic_verdict_is_the_or_of_concrete_checks(tmp_path, stmts, g, b):
    path = tmp_path / "k.ptx"
    path.write_text(_kernel(stmts))
    r = any_launch_races(path, (g, b), confirm=False)
    assert r.verdict in ("race-free", "races")
    event(r.verdict)
    concrete = any(_concrete_race(path, gg, bb) for gg in range(1, g + 1) for bb in range(1, b + 1))
    assert (r.verdict == "races") == concrete, (stmts, g, b, [str(f) for f in r.findings])


def test_barrier_under_a_thread_dependent_condition_is_divergence(tmp_path):
    text = _HEAD + ("\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 bra $L1;\n\tbar.sync 0;\n$L1:\n"
                    "\tret;\n}\n// ptxmm: launch k<<<1, 2>>>(int out[16])\n")
    path = tmp_path / "div.ptx"
    path.write_text(text)
    r = any_launch_races(path, "<<<4, 64>>>")
    assert [f.kind for f in r.findings] == ["barrier-divergence"]
    (f,) = r.findings
    assert f.threads[0][0] == f.threads[1][0] and f.block >= 2
