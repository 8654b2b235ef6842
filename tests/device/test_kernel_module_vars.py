"""Module-scope ``__device__`` variables under crossval, without a GPU (device/kernel_vars.py): each
instance gets its own copy in its memory block, its address an added kernel parameter; the PTX
that runs names that parameter's register wherever the kernel named the variable, assembles, and
keeps every other line; the plan compares the copy's final value with the model's; a variable
named outside the kernel's body is refused with the reason; a cooperative launch is planned as one."""

from __future__ import annotations

import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT

import ptxmm
from ptxmm.device import batch as B
from ptxmm.device import kernel_cross as KC
from ptxmm.device import kernel_plan as KP
from ptxmm.device import kernel_vars as KV
from ptxmm.device.kernel_run import instance_values
from ptxmm.errors import UnsupportedError

K = ROOT / "examples" / "kernels"
PTXAS = shutil.which("ptxas")


def _plan(name: str) -> KP.KernelPlan:
    path = K / name
    return KP.plan_kernel(ptxmm.load(path), path.read_text())


def test_the_counter_of_last_block_reset_is_one_element_of_each_instance():
    p = _plan("last-block-reset.ptx")
    assert p.elements == ("in[0]", "in[1]", "result[0]", "result[1]", "count")
    count = p.buffers[-1]
    assert count.name == "count" and count.scalar and count.count == 1 and count.type == "u32"
    # the model's final counter (2 when the broken reset lets both blocks see the last ticket)
    assert {s[-1] for s in p.allowed} == {0, 2} and p.assert_allowed
    # the kernel gets one more pointer argument: the copy's address in the instance's block
    assert len(p.args) == 3 and p.args[-1].buffer == len(p.buffers) - 1 and p.args[-1].width == 64
    base = 1 << 32
    assert instance_values(p, base, None)[-1] == base + count.offset
    fixed = _plan("last-block-reset-fenced.ptx")
    assert {s[-1] for s in fixed.allowed} == {0} and not fixed.assert_allowed


def test_the_copy_starts_at_its_initial_value_between_guards():
    p = _plan("last-block-reset.ptx")
    img, b = p.image(), p.buffers[-1]
    assert img[b.offset:b.offset + 4] == bytes(4)  # `__device__ unsigned int count = 0`
    assert img[b.offset - 1] == KP.SENTINEL and img[b.offset + 4] == KP.SENTINEL
    assert b.offset + 4 <= p.stride and b.offset >= p.buffers[-2].offset + p.buffers[-2].count * 4


def test_the_running_ptx_names_the_parameter_where_the_kernel_named_the_variable():
    src = (K / "last-block-reset.ptx").read_text()
    p = _plan("last-block-reset.ptx")
    assert not re.search(r"\.global[^\n]*\bcount\b", p.ptx)  # the module's copy is gone
    code = "\n".join(ln.split("//")[0] for ln in p.ptx.splitlines())
    assert not re.search(r"(?<![\w$%.])count(?![\w$])", code)  # every use names the register
    assert "[%ptxmm_var0]" in p.ptx and "mov.u64 \t%rd8, %ptxmm_var0;" in p.ptx
    assert re.search(r"_param_1,\n\t\.param \.u64 ptxmm_var_param_0\n\)", p.ptx)
    assert "ld.param.u64 \t%ptxmm_var0, [ptxmm_var_param_0];" in p.ptx
    # every other line of the harness's PTX is kept, in order (the last parameter gains a comma)
    before = KP.rewrite_ptx(src)[0].replace("_param_1\n)", "_param_1,\n)").splitlines()
    kept = [ln for ln in before if not re.search(r"\bcount\b", ln)]
    it = iter(p.ptx.replace("_param_0\n)", "\n)").splitlines())
    assert all(any(ln == o for o in it) for ln in kept)


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
@pytest.mark.parametrize("name", ["last-block-reset.ptx", "last-block-reset-fenced.ptx",
                                  "thread-fence-reduction.ptx"])
def test_the_rewritten_kernels_assemble(name, tmp_path, monkeypatch):
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path))
    p = _plan(name)
    assert "%ptxmm_var0" in p.ptx
    assert KP.assemble(p.ptx).stat().st_size > 0


HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


def _kernel(decls: str, body: str, params: int = 1) -> str:
    ps = ",\n".join(f"\t.param .u64 k_param_{i}" for i in range(params))
    return (HEAD + decls + f".visible .entry k(\n{ps}\n)\n{{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
            + body + "\tret;\n}\n")


def _var(ptx: str, name: str | None = None, count: int = 1, init: tuple = ()) -> KV.ModuleVar:
    return KV.ModuleVar(ptx, name or ptx, "u32", count, init, count == 1)


NAMES = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_$]{0,12}", fullmatch=True).filter(
    lambda n: not n.startswith(("k_param", "ptxmm")) and n not in ("k", "ret"))


@settings(max_examples=60, deadline=None)
@given(name=NAMES, offset=st.integers(0, 12), params=st.integers(0, 2))
def test_every_form_of_naming_the_variable_becomes_the_register(name, offset, params):
    body = (f"\tmov.u64 %rd1, {name};\n\tcvta.global.u64 %rd2, {name};\n"
            f"\tst.global.u32 [{name}+{offset}], %r1;\n\tld.global.u32 %r2, [{name}];\n"
            f"\tatom.global.add.u32 %r3, [{name}], 1;\n\tmov.u64 %rd3, {name}x;\n")
    text = _kernel(f".global .align 4 .u32 {name}[4] = {{1, 2, 3, 4}};\n.global .align 4 .u32 {name}x;\n",
                   body, params)
    used = KV.used_vars(text, "k", [_var(name, count=4), _var(name + "x")])
    assert [v.ptx for v in used] == [name, name + "x"]
    out = KV.per_instance(text, "k", used)
    assert f"[%ptxmm_var0+{offset}]" in out and "mov.u64 %rd1, %ptxmm_var0;" in out
    assert "cvta.global.u64 %rd2, %ptxmm_var0;" in out and "mov.u64 %rd3, %ptxmm_var1;" in out
    assert out.count("[%ptxmm_var0]") == 2
    assert not re.search(r"\.global\s[^\n]*" + re.escape(name), out)
    assert out.count(".param .u64 ptxmm_var_param_") == 2
    assert out.count(".param .u64 k_param_") == params


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed")
@pytest.mark.parametrize("params", [0, 2])
def test_a_kernel_with_or_without_parameters_assembles(params, tmp_path, monkeypatch):
    monkeypatch.setenv("PTXMM_CACHE", str(tmp_path))
    text = _kernel(".global .align 4 .u32 flag = 7;\n",
                   "\tld.global.u32 %r1, [flag];\n\tadd.u32 %r1, %r1, 1;\n\tst.global.u32 [flag+0], %r1;\n",
                   params)
    out = KV.per_instance(text, "k", KV.used_vars(text, "k", [_var("flag")]))
    assert KP.assemble(out).stat().st_size > 0


def test_a_variable_no_one_names_stays_and_nothing_changes():
    text = _kernel(".global .align 1 .b8 tag[1];\n", "\tmov.u32 %r1, 0;\n")
    assert KV.used_vars(text, "k", [_var("tag")]) == []
    assert KV.per_instance(text, "k", []) == text


def test_a_variable_named_outside_the_kernel_is_refused_with_its_name():
    text = _kernel(".global .align 4 .u32 gvar;\n.func touch()\n{\n\tst.global.u32 [gvar], 1;\n\tret;\n}\n",
                   "\tst.global.u32 [gvar], 2;\n")
    with pytest.raises(UnsupportedError, match="gvar.*outside the kernel's body.*on the device"):
        KV.used_vars(text, "k", [_var("gvar")])
    init = _kernel(".global .align 4 .u32 gvar;\n.global .align 8 .u64 p = generic(gvar);\n",
                   "\tst.global.u32 [gvar], 2;\n")
    with pytest.raises(UnsupportedError, match="gvar"):
        KV.used_vars(init, "k", [_var("gvar")])


def test_a_cooperative_launch_is_planned_as_one():
    """`cooperative` in the launch line: the harness loads the module for cuLaunchCooperativeKernel
    (the driver's grid workspace that cg::this_grid().sync() reads); a plain launch is plain."""
    item = KC.plan_kernel_file(K / "grid-sync-cg.ptx", "ptx", 2)
    assert not isinstance(item, B.Skip), item
    assert item.kplan.cooperative
    plain = KC.plan_kernel_file(K / "mp-release-flag.ptx", "ptx", 2)
    assert not plain.kplan.cooperative
