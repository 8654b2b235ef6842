"""Module-scope ``__device__`` variables, one copy per instance (``ptxmm crossval`` of a kernel).

nvcc declares a ``__device__`` variable as a module ``.global`` variable: one copy in the loaded
module, which every launch of the kernel shares — the many instances a crossval run keeps in
flight at once would read and write each other's counter. The harness gives each instance its own
copy instead, in the instance's memory block beside the launch's buffers (so the block's reset
from its initial image resets it, its guards catch a write past it, and its final value is read
back and compared with the model's like any buffer element):

* the variable's declaration is taken out of the module;
* the kernel gets one more ``.param .u64`` per variable (after its own parameters), whose value is
  the address of the variable's copy in the instance's block (:class:`.kernel_plan.Arg`);
* the entry loads it into a register at its start, and every use of the variable's name in the
  entry's body — an address operand ``[count]``, ``[count+4]``, or ``mov.u64 %rd, count`` — names
  that register. The name stands for the variable's address in the ``.global`` window (PTX ISA,
  "Variables" / "Addresses as Operands"); the parameter holds the copy's address as
  ``cudaMalloc`` gives it, which on a 64-bit target addresses global memory unchanged (what the
  kernel's own pointer parameters rely on after ``cvta.to.global``).

A variable that nothing in the entry names stays as it is (libcu++'s tag objects: no one reads or
writes them, so sharing them changes nothing). One named outside the entry — in a ``.func`` the
kernel calls, or in another variable's initialiser (``generic(var)``) — is refused on the device
with its name: the register exists only in the entry."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UnsupportedError

PARAM = "ptxmm_var_param"  # the added parameters: ptxmm_var_param_0, _1, ...
REG = "%ptxmm_var"  # the registers holding the copies' addresses: %ptxmm_var0, ...


@dataclass(frozen=True)
class ModuleVar:
    """One module-scope variable the kernel uses: its PTX name, the model's name for its elements
    (a scalar's element is the name itself), element type and count, initial values."""

    ptx: str
    name: str
    type: str
    count: int
    init: tuple[int, ...]
    scalar: bool


def _name(ptx_name: str) -> str:
    return r"(?<![\w$%.])" + re.escape(ptx_name) + r"(?![\w$])"


def _decl(ptx_name: str) -> re.Pattern:
    """The variable's declaration: ``[.visible|.weak] .global [.align N] .T name[...] [= ...];``."""
    return re.compile(r"^[ \t]*(?:\.(?:visible|weak|extern)\s+)?\.global\b[^;{]*?" + _name(ptx_name)
                      + r"[^;]*;[ \t]*\n?", re.M)


def _entry_span(ptx: str, entry: str) -> tuple[int, int, int, int]:
    """(start of the parameter list's text, its end, the body's opening brace, its closing brace)."""
    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\(", ptx)
    if m is None:
        raise UnsupportedError(f"kernel {entry} not found in its PTX: not run on the device", None, None)
    close = ptx.index(")", m.end())
    brace = ptx.index("{", close)
    depth, i = 0, brace
    while True:
        c = ptx[i]
        depth += (c == "{") - (c == "}")
        if depth == 0:
            return m.end(), close, brace, i
        i += 1


def used_vars(ptx: str, entry: str, candidates: list[ModuleVar]) -> list[ModuleVar]:
    """The variables of ``candidates`` the entry's body names, in order; raises UnsupportedError
    (its message says "on the device") for one named anywhere else but its declaration."""
    _, _, brace, end = _entry_span(ptx, entry)
    out = []
    for v in candidates:
        body_uses = len(re.findall(_name(v.ptx), ptx[brace:end]))
        rest = _decl(v.ptx).sub("", ptx[:brace] + ptx[end:], count=1)
        if re.search(_name(v.ptx), rest):
            raise UnsupportedError(
                f"module-scope __device__ variable {v.name} is named outside the kernel's body (a "
                "function it calls, or another variable's initialiser): not run on the device", None,
                "pass the data as a launch buffer")
        if body_uses:
            out.append(v)
    return out


def per_instance(ptx: str, entry: str, used: list[ModuleVar]) -> str:
    """``ptx`` with each variable of ``used`` taken out of the module and given to the entry as an
    address parameter (see the module's docstring); unchanged when ``used`` is empty."""
    if not used:
        return ptx
    start, close, brace, end = _entry_span(ptx, entry)
    body = ptx[brace + 1:end]
    for k, v in enumerate(used):
        body = re.sub(_name(v.ptx), f"{REG}{k}", body)
    loads = "".join(f"\tld.param.u64 \t{REG}{k}, [{PARAM}_{k}];\n" for k in range(len(used)))
    head = (f"\n\t// ptxmm: module variable(s) {', '.join(v.ptx for v in used)}: one copy per instance, "
            f"its address a parameter\n\t.reg .b64 \t{REG}<{len(used)}>;\n" + loads)
    params = ptx[start:close]
    extra = ",\n".join(f"\t.param .u64 {PARAM}_{k}" for k in range(len(used)))
    params = (params.rstrip() + ",\n" + extra + "\n") if params.strip() else ("\n" + extra + "\n")
    text = ptx[:start] + params + ptx[close:brace + 1] + head + body + ptx[end:]
    for v in used:
        text = _decl(v.ptx).sub(f"// ptxmm: {v.ptx} is per instance (a kernel parameter)\n", text, count=1)
    return text


__all__ = ["ModuleVar", "per_instance", "used_vars"]
