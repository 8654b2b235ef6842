"""Itanium-mangled names, as far as a launch needs them: a kernel's or variable's source name
(:func:`demangle`) and a simply mangled kernel's parameter types (:func:`param_types`), which the
launch's arguments are checked against."""

from __future__ import annotations

import re


def demangle(name: str) -> str:
    """The source name of a simple Itanium-mangled name: ``_Z2mpPiS_`` → ``mp``,
    ``_ZN2ns4kernEv`` → ``ns::kern``, ``_ZZ4kernPiE3buf`` → ``buf`` (a static local); other
    names unchanged."""
    if name.startswith("_ZZ"):
        m = re.search(r"E(\d+)([A-Za-z_]\w*)$", name)
        if m and len(m.group(2)) == int(m.group(1)):
            return m.group(2)
        return name
    if name.startswith("_ZN"):
        parts, i = [], 3
        while i < len(name) and name[i].isdigit():
            m = re.match(r"\d+", name[i:])
            n = int(m.group(0))
            i += len(m.group(0))
            parts.append(name[i:i + n])
            i += n
        return "::".join(parts) if parts else name
    m = re.match(r"^_Z(\d+)", name)
    if m:
        n = int(m.group(1))
        return name[m.end():m.end() + n]
    return name



BUILTIN = {"v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
            "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
            "x": "long long", "y": "unsigned long long", "f": "float", "d": "double"}
# the mangling code of each C type a launch may name (x86-64 Linux: int64_t is long)
C_CODE = {"int": "i", "signed": "i", "signed int": "i", "unsigned": "j", "unsigned int": "j",
          "long long": "x", "long long int": "x", "unsigned long long": "y", "unsigned long long int": "y",
          "long": "l", "unsigned long": "m", "short": "s", "unsigned short": "t", "char": "c",
          "signed char": "a", "unsigned char": "h", "bool": "b", "float": "f", "double": "d",
          "int8_t": "a", "int16_t": "s", "int32_t": "i", "int64_t": "l", "uint8_t": "h", "uint16_t": "t",
          "uint32_t": "j", "uint64_t": "m", "size_t": "m"}


def param_types(name: str) -> list[str] | None:
    """The parameter types of a simply mangled function ``_Z<n><name><types>`` as mangling codes of
    pointers to builtins and builtins (``Pi``, ``PKj``, ``i``) and classes of the global namespace
    as ``N<name>`` (``NCUtensorMap_st``), substitutions ``S_``/``S<n>_`` resolved; None for
    anything else (templates, namespaces)."""
    m = re.match(r"^_Z(\d+)", name)
    if not m:
        return None
    i = m.end() + int(m.group(1))
    subs: list[str] = []
    out: list[str] = []
    while i < len(name):
        t, i = _one_type(name, i, subs)
        if t is None:
            return None
        out.append(t)
    return [] if out == ["v"] else out


def _one_type(name: str, i: int, subs: list[str]) -> tuple[str | None, int]:
    c = name[i]
    if c in BUILTIN:
        return c, i + 1
    if c in "PKV":
        inner, j = _one_type(name, i + 1, subs)
        if inner is None:
            return None, j
        t = c + inner
        subs.append(t)
        return t, j
    m = re.match(r"S(\d*)_", name[i:])
    if m:
        k = int(m.group(1)) + 1 if m.group(1) else 0
        return (subs[k] if k < len(subs) else None), i + m.end()
    m = re.match(r"(\d+)", name[i:])
    if m:  # a class named in the global namespace (``14CUtensorMap_st``): N<name>, substitutable
        n = int(m.group(1))
        t = "N" + name[i + m.end():i + m.end() + n]
        subs.append(t)
        return t, i + m.end() + n
    return None, i


def pointee_of(code: str) -> str | None:
    """``PKi`` → ``i``: the builtin a pointer type points to (qualifiers dropped), else None."""
    if not code.startswith("P"):
        return None
    rest = code[1:].lstrip("KV")
    return rest if rest in BUILTIN else None


def c_type(code: str) -> str:
    """A mangling code as C spells it: ``PKi`` → ``const int *``, ``j`` → ``unsigned int``,
    ``NCUtensorMap_st`` → ``CUtensorMap_st``."""
    if code.startswith("P"):
        return c_type(code[1:]).rstrip() + " *"
    if code.startswith("K"):
        return "const " + c_type(code[1:])
    if code.startswith("V"):
        return "volatile " + c_type(code[1:])
    if code.startswith("N"):
        return code[1:]
    return BUILTIN.get(code, code)


def param_label(fn_name: str, k: int, count: int, ptx_name: str | None = None) -> str:
    """Parameter ``k`` (0-based) of a kernel in the source's words: ``parameter 1 (const int *)``,
    never nvcc's ``_Z9histogramPKiPj_param_0``; a kernel of an unmangled name (PTX written by
    hand, ``extern "C"``) by its own ``.param`` name."""
    codes = param_types(fn_name)
    if codes is not None and len(codes) == count:
        return f"parameter {k + 1} ({c_type(codes[k])})"
    if ptx_name is not None and not fn_name.startswith("_Z"):
        return f"parameter {ptx_name}"
    return f"parameter {k + 1}"


def signature(fn_name: str, ptx_types: list[str]) -> str:
    """``histogram(const int *, unsigned int *)``: the kernel's source name and its parameter types
    (as C spells them where the name says them, else the PTX types)."""
    codes = param_types(fn_name)
    shown = ([c_type(c) for c in codes] if codes is not None and len(codes) == len(ptx_types)
             else [f".{t}" for t in ptx_types])
    return f"{demangle(fn_name)}({', '.join(shown)})"


__all__ = ["BUILTIN", "C_CODE", "c_type", "demangle", "param_label", "param_types", "pointee_of", "signature"]
