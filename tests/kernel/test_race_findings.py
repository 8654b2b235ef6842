"""A race is reported once per pair of source operations on one location (queries/races.py): the
dynamic event pairs behind it — a loop's unrolled iterations, the cases of a case-split address —
are counted in the finding (``event_pairs``, text and JSON), not printed as identical lines; both
engines name the same pair and count."""

from __future__ import annotations

import io
import json
import shutil

import pytest

import ptxmm
from ptxmm.kernel.kernels import KernelArgs
from ptxmm.loading import parse_kernel
from ptxmm.report.jsonout import write_result

NVCC = shutil.which("nvcc")
HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


def loop_kernel(trips: int) -> str:
    """Every CTA stores its loop counter to flag[0], `trips` times, with a plain store."""
    return (HEAD + ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n\t.reg .pred %p<3>;\n"
            "\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [k_param_0];\n"
            "\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, 0;\nL:\n"
            "\tst.global.u32 [%rd2], %r1;\n\tadd.u32 %r1, %r1, 1;\n"
            f"\tsetp.lt.u32 %p1, %r1, {trips};\n\t@%p1 bra L;\n\tret;\n}}\n")


def races(res):
    return [f for f in res.findings if str(f.kind) == "race"]


@pytest.mark.parametrize("engine", ["z3", "brute"])
def test_a_loop_store_racing_across_ctas_is_one_finding_counting_its_event_pairs(engine):
    prog = parse_kernel(loop_kernel(2), "k.ptx", KernelArgs(launch="k<<<2, 1>>>(unsigned flag[1])"))
    found = races(ptxmm.check(prog, engine=engine))
    assert len(found) == 1
    f = found[0]
    assert f.event_pairs == 4  # 2 iterations x 2 iterations
    assert {e.thread for e in f.events} == {"b0t0", "b1t0"} and f.where == "flag[0]"
    assert "(4 event pairs)" in str(f)


def test_the_engines_name_the_same_pair_and_count():
    prog = parse_kernel(loop_kernel(2), "k.ptx", KernelArgs(launch="k<<<2, 1>>>(unsigned flag[1])"))
    z, b = (races(ptxmm.check(prog, engine=e)) for e in ("z3", "brute"))
    assert [(tuple(e.eid for e in f.events), f.event_pairs) for f in z] == \
        [(tuple(e.eid for e in f.events), f.event_pairs) for f in b]


def test_one_iteration_is_one_pair_and_three_ctas_are_three_findings():
    one = parse_kernel(loop_kernel(1), "k.ptx", KernelArgs(launch="k<<<2, 1>>>(unsigned flag[1])"))
    (f,) = races(ptxmm.check(one))
    assert f.event_pairs == 1 and "event pairs" not in str(f)
    three = parse_kernel(loop_kernel(1), "k.ptx", KernelArgs(launch="k<<<3, 1>>>(unsigned flag[1])"))
    found = races(ptxmm.check(three))  # a different pair of threads reads differently: its own line
    assert sorted(tuple(e.thread for e in f.events) for f in found) == \
        [("b0t0", "b1t0"), ("b0t0", "b2t0"), ("b1t0", "b2t0")]


def test_json_carries_the_count():
    prog = parse_kernel(loop_kernel(2), "k.ptx", KernelArgs(launch="k<<<2, 1>>>(unsigned flag[1])"))
    buf = io.StringIO()
    write_result(ptxmm.check(prog), buf)
    out = json.loads(buf.getvalue())
    (f,) = [f for f in out["findings"] if f["kind"] == "race"]
    assert f["event_pairs"] == 4 and f["location"] == "flag[0]"


DUP = ("// ptxmm: launch k<<<2, 1>>>(int a[1], 2)\n__global__ void k(int *a, int n)\n{\n"
       "    for (int i = 0; i < n; i++) {\n        a[0] = i;\n        asm volatile(\"\" ::: \"memory\");\n"
       "    }\n}\n")


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")
def test_a_cuda_loop_that_printed_four_identical_race_lines_prints_one(tmp_path):
    cu = tmp_path / "dup.cu"
    cu.write_text(DUP)
    res = ptxmm.check(ptxmm.load(cu))
    (f,) = races(res)
    assert f.event_pairs == 4 and "dup.cu:5" in str(f)
