"""Z3's C API called directly: Z3's Python And/Or/Not, If and Concat coerce and sort-check every
argument, and the engine builds and evaluates many terms of one context, so it goes through the C
entry points (checked where a call may fail, raw pointer calls where it cannot)."""

from __future__ import annotations

import ctypes
import threading

import z3

# ----- one Z3 context per thread -------------------------------------------------------------------
# A Z3 context is not thread-safe, and Z3's Python API builds every term whose context is not given
# in ONE process-wide main context. Two checks on two threads (a Dask worker runs one task per
# core, each on its own thread) then build and solve in the same context at once: Z3Exceptions,
# "'BoolRef' object is not iterable", wrong answers. So the API's default context is made
# per-thread: the main thread keeps Z3's own main context (``z3.z3._main_ctx``, which
# problem._fresh_context may replace), and every other thread gets a context of its own, made on
# its first term. Every term the engine builds without naming a context (z3.BitVec, z3.BoolVal,
# z3.SimpleSolver, ...) is then built in the calling thread's context, and a check never shares Z3
# state with a check on another thread. The thread's pool of solvers (problem._pool) is per-thread
# for the same reason.
_Z3_MAIN_CTX = z3.z3.main_ctx  # Z3's own: the process-wide context
_THREAD = threading.local()


def thread_context() -> z3.Context:
    """The calling thread's Z3 context: Z3's main context on the main thread, a context of the
    thread's own on any other (made on first use, freed with the thread and its last term)."""
    if threading.current_thread() is threading.main_thread():
        return _Z3_MAIN_CTX()
    ctx = getattr(_THREAD, "ctx", None)
    if ctx is None:
        ctx = _THREAD.ctx = z3.Context()
    return ctx


def fresh_thread_context() -> None:
    """Forget the calling thread's context: the next term starts a new one (problem._fresh_context;
    terms of the old context stay valid and keep it alive)."""
    if threading.current_thread() is threading.main_thread():
        z3.z3._main_ctx = None
    else:
        _THREAD.ctx = None


def thread_state() -> threading.local:
    """Per-thread engine state (problem.py keeps its solver pool and open problems there)."""
    return _THREAD


# z3's functions look ``main_ctx`` up in their module at each call: this makes their default
# context the calling thread's. The package-level name (``z3.main_ctx``) is the same function.
if getattr(z3.z3, "_main_ctx", "absent") != "absent":
    z3.z3.main_ctx = thread_context
    z3.main_ctx = thread_context


# Z3's Python And/Or/Not coerce and sort-check every argument; guards are Bool terms of one
# context, so build them through the C API directly (about 7x faster).
def _raw(fn):
    try:
        return fn.__defaults__[0].f
    except (TypeError, IndexError, AttributeError):  # other binding layouts: the checked call
        return fn


_LT, _EQ, _NOT = _raw(z3.Z3_mk_lt), _raw(z3.Z3_mk_eq), _raw(z3.Z3_mk_not)
_ASSERT = _raw(z3.Z3_solver_assert)
_ATMOST = _raw(z3.Z3_mk_atmost)


def _at_most_one(vs: list) -> z3.BoolRef:
    """z3.AtMost(*vs, 1) without the per-argument coercion (vs: Bool constants of one context)."""
    ctx = vs[0].ctx
    arr = (z3.Ast * len(vs))(*[v.as_ast() for v in vs])
    return z3.BoolRef(_ATMOST(ctx.ref(), len(vs), arr, 1), ctx)

# The same C entry points with plain pointer (int) arguments and results, unchecked: the
# Logic's terms are Bool terms of one context, built bottom-up, which cannot fail.
_VP = ctypes.c_void_p


def _proto(fn, restype, *argtypes):
    f = _raw(fn)
    try:
        return ctypes.CFUNCTYPE(restype, *argtypes)(ctypes.cast(f, _VP).value)
    except (TypeError, ctypes.ArgumentError):  # pragma: no cover - other binding layouts
        return None


_P_AND = _proto(z3.Z3_mk_and, _VP, _VP, ctypes.c_uint, ctypes.POINTER(_VP))
_P_OR = _proto(z3.Z3_mk_or, _VP, _VP, ctypes.c_uint, ctypes.POINTER(_VP))
_P_NOT = _proto(z3.Z3_mk_not, _VP, _VP, _VP)
_P_INC = _proto(z3.Z3_inc_ref, None, _VP, _VP)
_P_DEC = _proto(z3.Z3_dec_ref, None, _VP, _VP)
_P_ASSERT = _proto(z3.Z3_solver_assert, None, _VP, _VP, _VP)
_P_ITE = _proto(z3.Z3_mk_ite, _VP, _VP, _VP, _VP, _VP)
_P_CONCAT = _proto(z3.Z3_mk_concat, _VP, _VP, _VP, _VP)
_P_EVAL = _proto(z3.Z3_model_eval, ctypes.c_bool, _VP, _VP, _VP, ctypes.c_bool, ctypes.POINTER(_VP))
_P_BINARY = _proto(z3.Z3_get_numeral_binary_string, ctypes.c_char_p, _VP, _VP)
_P_CHECK = _proto(z3.Z3_solver_check, ctypes.c_int, _VP, _VP)
_P_AST_KIND = _proto(z3.Z3_get_ast_kind, ctypes.c_uint, _VP, _VP)
_P_NUM_ARGS = _proto(z3.Z3_get_app_num_args, ctypes.c_uint, _VP, _VP)
_P_APP_ARG = _proto(z3.Z3_get_app_arg, _VP, _VP, _VP, ctypes.c_uint)
_P_APP_DECL = _proto(z3.Z3_get_app_decl, _VP, _VP, _VP)
_P_DECL_KIND = _proto(z3.Z3_get_decl_kind, ctypes.c_uint, _VP, _VP)
_P_DECIMAL = _proto(z3.Z3_get_numeral_string, ctypes.c_char_p, _VP, _VP)
_DECIMAL_MAX_BITS = 14000  # 10^4300 > 2^14284: Python's int() reads a numeral this wide in decimal


def _assert(s: z3.Solver, c) -> None:
    """Solver.add without the Python API's per-call coercion (``c``: a Z3 Bool, a bool, or a
    term of the Logic the solver's problem attached as ``s.lg``)."""
    if c is True:
        return
    if c is False:
        c = z3.BoolVal(False)
    elif type(c) is int:
        _P_ASSERT(s.ctx.ref().value, s.solver.value, s.lg.ast(c))
        return
    _ASSERT(s.ctx.ref(), s.solver, c.as_ast())


def _eq(a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
    return z3.BoolRef(_EQ(a.ctx.ref(), a.as_ast(), b.as_ast()), a.ctx)


def _not(a: z3.BoolRef) -> z3.BoolRef:
    return z3.BoolRef(_NOT(a.ctx.ref(), a.as_ast()), a.ctx)


def _const(name: str, sort_fn, cls):
    ctx = thread_context()
    r = ctx.ref()
    return cls(z3.Z3_mk_const(r, z3.Z3_mk_string_symbol(r, name), sort_fn(r)), ctx)


def mk_bool(name: str) -> z3.BoolRef:
    return _const(name, z3.Z3_mk_bool_sort, z3.BoolRef)


def mk_int(name: str) -> z3.ArithRef:
    return _const(name, z3.Z3_mk_int_sort, z3.ArithRef)

