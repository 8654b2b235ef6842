"""Reading a witness: everything a leaf of a query or an enumeration reads, packed into one
bit-vector (one model evaluation gives an outcome and its execution), and the execution read back
from its binary digits."""

from __future__ import annotations

import ctypes
from itertools import compress
from operator import itemgetter

import z3

from ..._infra.records import record
from ...semantics.events import Kind
from ...semantics.result import Execution
from .capi import _DECIMAL_MAX_BITS, _P_BINARY, _P_DEC, _P_DECIMAL, _P_EVAL, _P_INC, _VP

_ONE = "1"
_BITS = bytes.maketrans(b"01", b"\x00\x01")  # binary digits as the bytes 0 and 1


@record
class _Layout:
    """Where a witness's parts lie in the packed term's binary digits (most significant first):
    a digit per Boolean, then the observables' words, then the reads' values."""

    width: int  # digits in all
    ex: list  # per event: True, False, or the digit of its execution guard
    paths: list  # per thread: None (one path) or the digit of each path's selector
    rf: list  # ((write, read), digit), sorted
    co: list  # ((a, b), digit)
    fin: list  # (location, [(write, digit)]): the write its final value comes from
    flags: list  # (name, True | False | digit)
    terms: list  # (start, end) of each observable's word
    reads: list  # (read, (start, end)), by read
    co_known: list  # co pairs known beforehand: in co when both ends execute
    init_co: list  # (initial write, write of its location): in co when the write executes
    chains: list = ()  # RMW chains (.chains): (initial write, ((read, write, (start, end)), ...))


def _init_co(ev: list, init: dict) -> list[tuple[int, int]]:
    """(initial write, write of its location) of every location, by initial write then write: one
    pass over the events by location rather than one per location (2,048 locations and 9,000
    events at the exchange's 1,024 threads)."""
    at: dict = {}
    for b, e in enumerate(ev):
        if e.kind == Kind.W:
            at.setdefault(e.loc, []).append(b)
    return [(w, b) for w in init.values() for b in at.get(ev[w].loc, ()) if b != w]


class Witness:
    """The witness reading of :class:`~ptxmm.engines.z3.problem.Z3Problem` (its choice ``self.ch``,
    observable terms ``self.terms``, final values ``self.fin`` and flag terms)."""

    def _packing(self) -> None:
        """Everything a leaf of the enumeration reads, packed into one bit-vector so that one
        model evaluation gives an outcome and its witness (evaluating term by term through the
        Python API costs more than the solving), and where each part lies in its binary digits
        (:class:`_Layout`). Built at the first witness read: a query answered "no" needs none."""
        ch = self.ch
        bools: list = []  # the term of every Boolean a witness records; its bit: its index
        ex_bit: list = []
        for g in ch.ex:
            ex_bit.append(g if g is True or g is False else len(bools))
            if g is not True and g is not False:
                bools.append(g)
        path_bits = []
        for sel in ch.sel:
            path_bits.append(None if sel is None else list(range(len(bools), len(bools) + len(sel))))
            bools += sel or ()
        rf_bits = [(p, len(bools) + k) for k, p in enumerate(ch.rfv)]
        bools += ch.rfv.values()
        co_bits = [(p, len(bools) + k) for k, p in enumerate(ch.cov)]
        bools += ch.cov.values()
        fin_bits = []
        for loc, fv in self.fin.items():
            fin_bits.append((loc, [(w, len(bools) + k) for k, w in enumerate(fv)]))
            bools += fv.values()
        flag_bits = []
        for name, t in self.flag_terms:
            if t is True or t is False:
                flag_bits.append((name, t))
            else:
                flag_bits.append((name, len(bools)))
                bools.append(t)
        reads = sorted(ch.vals)
        words = list(self.terms) + [ch.vals[r] for r in reads]
        chained = _chain_words(ch)
        words += [t for _, _, t in chained]
        spans, at = [], len(bools)
        for w in words:
            spans.append((at, at + w.size()))
            at += w.size()
        nt = len(self.terms)
        nr = nt + len(reads)
        chains: dict[int, list] = {}
        for (init, pair, _), span in zip(chained, spans[nr:]):
            chains.setdefault(init, []).append((*pair, span))
        ev = self.eg.events
        init_co = _init_co(ev, self.eg.init)
        self._layout = _Layout(at, ex_bit, path_bits, sorted(rf_bits), co_bits, fin_bits, flag_bits,
                               spans[:nt], list(zip(reads, spans[nt:nr])), sorted(self.co_known), init_co,
                               [(i, tuple(ps)) for i, ps in chains.items()])
        self._packed = self.lg.pack(bools, words)
        # (first digit, end, AST pointer) of every packed part: what the split into parts reads
        self._elements = [(k, k + 1, self.lg._ptr(t)) for k, t in enumerate(bools)]
        self._elements += [(i, j, w.as_ast().value) for (i, j), w in zip(spans, words)]

    def _number(self, m: z3.ModelRef) -> int:
        """The packed term's value in the model. Read in decimal: Z3 writes a numeral in binary
        about a hundred times slower (0.09 ms for 726 bits); past what Python converts from
        decimal (4300 digits), in binary."""
        if self._layout is None:
            self._packing()
        if self._packed is None:  # nothing to read: no Boolean, no observable, no read
            return 0
        ctx = self.lg.ctx.ref().value
        out = _VP()
        ok = _P_EVAL(ctx, m.model.value, self._packed.as_ast().value, True, ctypes.byref(out))
        if not ok or not out.value:  # the evaluation was interrupted: the check was stopped
            return self._interrupted(m)
        _P_INC(ctx, out.value)
        try:
            digits = (_P_DECIMAL if self._layout.width <= _DECIMAL_MAX_BITS else _P_BINARY)(ctx, out.value)
        finally:
            _P_DEC(ctx, out.value)
        if not digits:  # not a numeral: an evaluation the watchdog's interrupt cut short
            return self._interrupted(m)
        return int(digits) if self._layout.width <= _DECIMAL_MAX_BITS else int(digits, 2)

    def _interrupted(self, m: z3.ModelRef) -> int:
        """A model evaluation that gave no numeral: Z3 was interrupted (the watchdog stopped the
        check while it evaluated), so the check's stop is raised; were it not stopped, the value
        is read through z3's own (slower) evaluation."""
        self.deadline.check()
        return m.eval(self._packed, model_completion=True).as_long()

    def _digits(self, m: z3.ModelRef) -> str:
        """The packed term's value in the model, as ``_layout.width`` binary digits."""
        x = self._number(m)
        return format(x, "b").rjust(self._layout.width, "0")

    def _read(self, x: int, m: z3.ModelRef | None):
        """(values, witness, flags) of the packed value ``x`` (``m``: its model, which only
        fence.sc ranks and barrier phases are read from)."""
        lay = self._layout
        b = format(x, "b").rjust(lay.width, "0")
        values = tuple([int(b[i:j], 2) for i, j in lay.terms])
        flags = [name for name, k in lay.flags if k is True or (k is not False and b[k] == _ONE)]
        ch = self.ch
        if ch.values.unspec or ch.rank or ch.ph:  # read from the model: decoded now
            return values, self._execution(m, b), flags
        return values, Packed(x, lay), flags


    def _extract(self, m: z3.ModelRef) -> Execution:
        return self._execution(m, self._digits(m))

    def _execution(self, m: z3.ModelRef | None, b: str) -> Execution:
        """The witness the model's packed digits ``b`` describe."""
        ch, lay = self.ch, self._layout
        ex, paths, rf, co, vals, final = _decode(lay, b)
        if m is not None and ch.values.unspec:  # the values the ISA leaves to the solver
            vals = tuple(sorted(ch.values.chosen(m) + vals))
        sc = ()
        if ch.rank:
            sc = tuple(sorted((f for f in ch.rank if ex[f]),
                              key=lambda f: m.eval(ch.rank[f], model_completion=True).as_long()))
        phases = tuple((a, m.eval(v, model_completion=True).as_long())
                       for a, v in sorted(ch.ph.items()) if ex[a])
        return Execution(paths, rf, co, vals, sc, final, phases)


def _chain_words(ch) -> list:
    """(initial write, (read, write), its position as a bit-vector) per RMW of every chain."""
    rk = ch.ranks
    if rk is None:
        return []
    size: dict[int, int] = {}
    for init in rk.init_of.values():
        size[init] = size.get(init, 0) + 1
    return [(rk.init_of[r], (r, w), z3.Int2BV(rk.pos[w], max(1, size[rk.init_of[r]].bit_length())))
            for r, w in sorted(rk.read_of.items())]


def _decode(lay: _Layout, b: str):
    """The parts of a witness its packed digits ``b`` give (all but fence.sc ranks, barrier
    phases and unspecified values, which are read from a model)."""
    ex = [k if k is True or k is False else b[k] == _ONE for k in lay.ex]
    paths = tuple([0 if ks is None else [b[k] for k in ks].index(_ONE) for ks in lay.paths])
    rf = [p for p, k in lay.rf if b[k] == _ONE]
    co = {p for p, k in lay.co if b[k] == _ONE}
    for init, pairs in lay.chains:  # a chain: its executed writes in the order of their positions
        order = sorted((int(b[i:j], 2), r, w) for r, w, (i, j) in pairs if ex[w])
        prev = init
        for k, (_, r, w) in enumerate(order):
            rf.append((prev, r))
            co.update((w, w2) for _, _, w2 in order[k + 1:])
            prev = w
    rf = tuple(sorted(rf))  # (list comprehensions below: a generator per call costs more)
    co.update([p for p in lay.co_known if ex[p[0]] and ex[p[1]]])
    co.update([p for p in lay.init_co if ex[p[1]]])
    vals = tuple([(r, int(b[i:j], 2)) for r, (i, j) in lay.reads if ex[r]])
    final = tuple([(loc, next(w for w, k in ws if b[k] == _ONE)) for loc, ws in lay.fin])
    return ex, paths, rf, tuple(sorted(co)), vals, final


# The witness decoded last (layout, packed value, Execution): a report reads several attributes of
# one witness in a row, each through __getattr__, and decodes it once; one entry only, so that the
# decoded Executions of a long enumeration are never all kept (Packed's reason to be)
_LAST: list = [None, None, None]


class Packed:
    """A witness kept as its packed digits (one integer, with the layout every outcome of the
    problem shares) and decoded when it is read: an enumeration keeps one per outcome, and a
    decoded :class:`~ptxmm.semantics.result.Execution` takes some 3.5 KiB (a million outcomes
    took 3.8 GB). It reads as the Execution it stands for (every attribute, equality, hash);
    ``get()`` decodes it once for many reads."""

    __slots__ = ("x", "lay")

    def __init__(self, x: int, lay: _Layout):
        self.x, self.lay = x, lay

    def get(self) -> Execution:
        last = _LAST
        if last[0] is self.lay and last[1] == self.x:  # read again (a report reads paths, rf, co)
            return last[2]
        _, paths, rf, co, vals, final = _decode(self.lay, format(self.x, "b").rjust(self.lay.width, "0"))
        exe = Execution(paths, rf, co, vals, (), final, ())
        _LAST[:] = self.lay, self.x, exe
        return exe

    def witness_json(self) -> str | None:
        """The JSON text of this witness's ``{"paths": ..., "rf": ..., "co": ...}`` (what
        :func:`~ptxmm.semantics.result.outcome_json` gives, as ``json.dumps`` writes it), read
        from the packed digits with the layout's :func:`_text_table`, no Execution decoded: a
        report's row costs a few microseconds, not the decoding's 25. None where the table does
        not apply (:data:`WITNESS_TEXT` off, RMW chains, events executed only on some paths)."""
        table = _text_table(self.lay)
        if table is None:
            return None
        paths, rf_at, rf, co_at, co = table
        b = format(self.x, "b").rjust(self.lay.width, "0") + _ONE  # (the last: "always")
        ps = paths if type(paths) is str else ", ".join(
            [p if type(p) is str else str([b[k] for k in p].index(_ONE)) for p in paths])
        bits = b.encode().translate(_BITS)  # each digit a byte 0 or 1: its pairs picked in C
        return (f'{{"paths": [{ps}], "rf": [{", ".join(compress(rf, rf_at(bits)))}], '
                f'"co": [{", ".join(compress(co, co_at(bits)))}]}}')

    def __getattr__(self, name: str):
        if name.startswith("__") or name in Packed.__slots__:
            raise AttributeError(name)
        return getattr(self.get(), name)

    def __eq__(self, other) -> bool:
        return self.get() == (other.get() if isinstance(other, Packed) else other)

    def __hash__(self) -> int:
        return hash(self.get())

    def __repr__(self) -> str:
        return repr(self.get())

    def __reduce__(self):
        return (_execution_of, (self.get(),))  # pickled (a campaign's worker) as the Execution


def _execution_of(exe: Execution) -> Execution:
    return exe


# The switch: False makes Packed.witness_json answer None (a report then decodes each witness)
WITNESS_TEXT = True
_TABLE: list = [None, None]  # the layout last tabled and its table (one entry, as _LAST)


def _text_table(lay: _Layout):
    """(paths, rf_at, rf, co_at, co) of ``lay`` for :meth:`Packed.witness_json`, or None where it does not
    apply. paths: per thread "0" (one path) or its selectors' digits (their text where every
    thread has one path); rf, co: the digits' picker (:func:`_picker`) and the texts "[a, b]",
    sorted by pair, the digit ``lay.width`` standing for "always" (a co pair known beforehand, or
    from an initial write, whose events always execute). As :func:`_decode` reads them: rf the
    pairs whose digit is set (``lay.rf`` is sorted, its pairs distinct); co the pairs whose digit
    is set, with ``co_known`` and ``init_co``. Only where every event's execution is known
    (``lay.ex`` all True/False), there are no RMW chains, and each co pair has one condition."""
    if not WITNESS_TEXT:
        return None
    if _TABLE[0] is lay:
        return _TABLE[1]
    table = None
    if not lay.chains and all(k is True or k is False for k in lay.ex):
        table = _tabled(lay)
    _TABLE[:] = lay, table
    return table


def _tabled(lay: _Layout):
    always, ex = lay.width, lay.ex
    paths = ["0" if ks is None else ks for ks in lay.paths]
    if all(ks is None for ks in lay.paths):  # every thread one path: the same text every row
        paths = ", ".join(paths)
    rf = [(k, f"[{a}, {b}]") for (a, b), k in lay.rf]
    co: dict = {}
    for p, k in lay.co:
        if p in co:
            return None  # a pair with two digits (never built so): decoded instead
        co[p] = k
    for p in lay.co_known:
        if ex[p[0]] and ex[p[1]]:
            co[p] = always  # (in co whatever its digit says)
    for p in lay.init_co:
        if ex[p[1]]:
            co[p] = always
    co = [(co[p], f"[{p[0]}, {p[1]}]") for p in sorted(co)]
    return (paths, _picker([k for k, _ in rf]), [t for _, t in rf],
            _picker([k for k, _ in co]), [t for _, t in co])


def _picker(ks: list[int]):
    """The items at ``ks`` of a sequence, as a tuple (``itemgetter``, whatever the number of
    items)."""
    if len(ks) > 1:
        return itemgetter(*ks)
    if ks:
        k = ks[0]
        return lambda s: (s[k],)
    return lambda s: ()

