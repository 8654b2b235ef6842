"""A launch's arguments against the kernel's parameters: each scalar and pointer parameter's value
(a buffer's base address, the scalar), a tensor map for a ``CUtensorMap`` parameter, a buffer
of the pointer's own element type; every mismatch a located error."""

from __future__ import annotations

from ..errors import SemanticError, UnsupportedError
from ..ir.layout import Layout
from ..ir.program import TENSORMAP_BYTES, type_width
from .demangle import BUILTIN, C_CODE, demangle, param_label, param_types, pointee_of, signature
from .launch import Buffer, Launch, Scalar, TensorMapArg
from .module import Function
from .multigpu import argument_values, own_copies


def param_values(fn: Function, launch: Launch, layout: Layout, gpu: int = 0) -> dict[str, int]:
    """Each scalar and pointer parameter's value (a buffer's base address, the scalar) on GPU
    ``gpu`` of the launch (``rank``, ``per gpu`` buffers and ``peers(...)``: kernel/multigpu.py); a
    tensor map parameter has none (the kernel takes its address: Layout.symbols), an aggregate
    passed by value that is neither one nor peer pointers is a located "not supported yet"."""
    if len(launch.args) != len(fn.params):
        raise SemanticError(f"kernel {demangle(fn.name)} takes {len(fn.params)} argument(s), the launch "
                            f"gives {len(launch.args)}", launch.pos,
                            "the kernel: " + signature(fn.name, [p.type for p in fn.params]))
    bases = {r.name: r.base for r in layout.regions}
    bases |= own_copies(launch, bases, gpu)  # a `per gpu` buffer's name: GPU gpu's copy
    out = {}
    codes = param_types(fn.name)
    for k, (p, a) in enumerate(zip(fn.params, launch.args)):
        code = codes[k] if codes is not None and len(codes) == len(fn.params) else None
        label = param_label(fn.name, k, len(fn.params), p.name)  # never nvcc's `_Z9histogramPKiPj_param_0`
        mg = argument_values(a, p, gpu, launch.gpus, bases, k, code, label)
        if mg is not None:
            out |= mg
            continue
        if _by_value(p, a, code, k, label):
            continue
        w = type_width(p.type) if p.type[1:].isdigit() else 64
        if isinstance(a, Buffer) and code is not None:
            _buffer_type(a, code, k)
        if isinstance(a, Buffer):
            if w != 64:
                raise SemanticError(f"argument {k + 1} ({a.name}) is a buffer, but "
                                    f"{label} is a "
                                    f"{w}-bit .{p.type} value, not a pointer", a.pos,
                                    "pass an integer literal for a scalar parameter")
            out[p.name] = bases[a.name]
        else:
            assert isinstance(a, Scalar)
            if w == 64 and p.type.startswith("u") and a.value < 0:
                raise SemanticError(f"argument {k + 1} is {a.value}, {label} "
                                    "is unsigned",
                                    a.pos, None)
            if not -(1 << (w - 1)) <= a.value < (1 << w):
                raise SemanticError(f"argument {k + 1} ({a.value}) does not fit "
                                    f"{label} "
                                    f"(.{p.type})", a.pos, None)
            out[p.name] = a.value & ((1 << w) - 1)
    return out


TENSORMAP_CODE = "NCUtensorMap_st"  # how `CUtensorMap` (typedef of struct CUtensorMap_st) mangles


def _by_value(p, a, code: str | None, k: int, label: str) -> bool:
    """Whether parameter ``p`` is a tensor map given by ``a`` (checked): nvcc declares a
    ``const __grid_constant__ CUtensorMap`` parameter ``.param .align 64|128 .b8 name[128]``. Any
    other aggregate by value, or a tensor map for another parameter, is a located error."""
    is_map = p.size == TENSORMAP_BYTES and code in (None, TENSORMAP_CODE)
    if isinstance(a, TensorMapArg):
        if not is_map:
            what = f"a {p.size}-byte aggregate" if p.size else f"a .{p.type} value"
            raise SemanticError(f"argument {k + 1} is the tensor map {a.name}, but {label} is "
                                f"{what}, not a CUtensorMap", a.pos,
                                "the kernel takes it as `const __grid_constant__ CUtensorMap tm`")
        return True
    if p.size is not None:
        raise UnsupportedError(f"{label}: {'a CUtensorMap' if is_map else 'a struct or array'} "
                               f"passed by value ({p.size} bytes), and argument {k + 1} is not a tensor map",
                               p.pos, "give a CUtensorMap parameter as `CUtensorMap tm = tensormap(a, dims "
                               "{8, 2}, box {4, 2})` in the launch; other aggregates: pass a pointer")
    return False


def _buffer_type(a: Buffer, code: str, k: int) -> None:
    """A buffer for a pointer parameter of its own element type (``int x[N]`` for ``int *``)."""
    shown = code[1:] if code.startswith("N") else BUILTIN.get(code.lstrip("PKV"), "?")
    if not code.startswith("P"):
        raise SemanticError(f"argument {k + 1} ({a.ctype} {a.name}[{a.count}]) is a buffer, parameter "
                            f"{k + 1} is of type {shown}, not a pointer", a.pos, "pass an integer literal")
    pointee = pointee_of(code)
    if pointee is not None and pointee != "v" and C_CODE.get(a.ctype) != pointee:
        raise SemanticError(f"argument {k + 1} is a buffer of {a.ctype}, parameter {k + 1} is of type "
                            f"{BUILTIN[pointee]} *", a.pos, f"declare it `{BUILTIN[pointee]} {a.name}[N]`")



__all__ = ["TENSORMAP_CODE", "param_values"]
