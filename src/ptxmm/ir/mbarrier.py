"""The mbarrier object as a value: one 64-bit word in shared memory (docs/hopper.md).

The PTX ISA (Parallel Synchronization and Communication Instructions › mbarrier › "Contents of
the mbarrier object") keeps, per object, the current phase, the pending arrival count of the
current phase, the expected arrival count of the next phases and the tx-count; the encoding is
opaque to programs. ptxmm packs them into the word's four 16-bit fields::

    bits  0..15  pending arrivals        bits 32..47  tx-count (two's complement, 16 bits)
    bits 16..31  expected arrivals       bits 48..63  phase (the number of completed phases)

Every mbarrier operation that changes the object is one atomic read-modify-write of that word,
computed by :func:`update`: "phase completion" (ISA: "mbarrier › Phase Completion of the mbarrier
object") happens inside the write that brings both the pending count and the tx-count to zero; it
advances the phase and reloads the pending count from the expected count. A wait reads the word
and compares its phase with the ``state`` an arrive returned (or with a phase parity).

The functions build value expressions (:mod:`ptxmm.ir.values`), so both engines compute with them."""

from __future__ import annotations

from .values import Const, Expr, mk

W = 64
_F = 0xFFFF


def _c(v: int) -> Const:
    return Const(v & ((1 << W) - 1), W)


def _field(word: Expr, shift: int) -> Expr:
    return mk("and", mk("shr", word, _c(shift)) if shift else word, _c(_F))


def phase(word: Expr) -> Expr:
    """The phase field: how many phases of the object have completed."""
    return mk("shr", word, _c(48))


def init_word(count: Expr) -> Expr:
    """``mbarrier.init [a], count``: phase 0, pending = expected = count, tx-count 0."""
    n = mk("and", count, _c(_F))
    return mk("or", mk("shl", n, _c(16)), n)


def init_count(count: int) -> int:
    """The word ``init_word`` gives for a constant count."""
    return ((count & _F) << 16) | (count & _F)


def update(old: Expr, arrivals: Expr, drop: bool, tx: Expr) -> Expr:
    """The word after ``arrivals`` arrive-on operations (``drop``: arrive_drop, which also lowers
    the expected count) and a tx-count change of ``tx`` (expect-tx: +n, complete-tx: -n)."""
    pend = mk("and", mk("sub", _field(old, 0), arrivals), _c(_F))
    exp = _field(old, 16)
    if drop:
        exp = mk("and", mk("sub", exp, arrivals), _c(_F))
    txc = mk("and", mk("add", _field(old, 32), tx), _c(_F))
    ph = phase(old)
    done = mk("land", mk("eq", pend, _c(0)), mk("eq", txc, _c(0)))
    head = mk("or", mk("shl", exp, _c(16)), exp)
    completed = mk("or", mk("shl", mk("add", ph, _c(1)), _c(48)), head)
    running = mk("or", mk("or", mk("shl", ph, _c(48)), mk("shl", txc, _c(32))),
                 mk("or", mk("shl", exp, _c(16)), pend))
    return mk("ite", done, completed, running)


def wait_complete(word: Expr, state: Expr, parity: bool) -> Expr:
    """``test_wait``/``try_wait``: the phase ``state`` names has completed (its phase differs
    from the current one); with ``.parity``, the phase of parity ``state`` has completed (the
    current phase has the other parity)."""
    if parity:
        return mk("ne", mk("and", phase(word), _c(1)), mk("and", state, _c(1)))
    return mk("ne", phase(word), phase(state))


def decode(v: int) -> dict[str, int]:
    """The fields of a concrete word (for explanations and tests)."""
    tx = (v >> 32) & _F
    return {"phase": v >> 48, "pending": v & _F, "expected": (v >> 16) & _F,
            "tx": tx - (1 << 16) if tx >> 15 else tx}
