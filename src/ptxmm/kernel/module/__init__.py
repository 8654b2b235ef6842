"""PTX modules as nvcc emits them (``nvcc -ptx``): the kernel front end's parser.

A hand-written statement splitter rather than a Lark grammar: a module is a flat sequence of
``;``-terminated statements, labels, scopes ``{ }`` and a few line directives (``.loc``, ``.file``,
``.section``) whose only difficulty is telling a scope brace from a vector or initialiser brace —
one rule does it (a brace opens a scope only at the start of a statement or after a function
header). The splitter keeps, for every statement, its PTX position and the CUDA position of the
``.loc`` in force (inlined code: the line of the call in the kernel's source file).

Instructions are decoded by the litmus front end's decoder (:func:`.instr.decode`: ptxas's
qualifier and operand rules) except for the forms nvcc emits that litmus tests do not use
(:mod:`.lowering`): ``cvta``, ``cvt``, ``mul.wide``/``mul.hi``, ``mad``, ``abs``, ``bfe``/``bfi``,
``ld.param``/``st.param``, ``ld.global.nc``, ``bar.warp.sync`` and ``call``; these become short
sequences of the IR's own instructions (``Alu``/``Mov``/``Selp``) on scratch registers named
``%ptxmm.*`` — exact machine-integer semantics, no new IR. Warp collectives (``shfl.sync``,
``vote``, ``match``, ``redux``, ``activemask``) are "not supported yet", with their line.

Nothing here knows a launch: :mod:`ptxmm.kernel.instantiate` instantiates an entry for one."""

from __future__ import annotations

from .lowering import PARAM
from .reader import is_module, parse
from .records import Call, Function, KernelPos, Module, Param, ParamStore, Variable, type_width_bytes
from .statements import _Splitter

__all__ = ["PARAM", "Call", "Function", "KernelPos", "Module", "Param", "ParamStore",
           "Variable", "_Splitter", "is_module", "parse", "type_width_bytes"]
