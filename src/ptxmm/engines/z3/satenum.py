"""Outcome enumeration on a SAT solver: the problem's formula bit-blasted to clauses ONCE, and every
outcome found by one incremental SAT solver, each excluded by a clause over the observables' bits
alone (issue 41: where the formula does not split, Z3's check, model and evaluation per outcome
cost 0.6-1.7 ms; a SAT solver's model is a list of literals, read in microseconds).

How: the formula the problem asserted (its well-formedness, the model's axioms, the final values,
symmetry breaking) and one Boolean ``p_k`` per binary digit of the packed witness term
(:mod:`.witness`: execution guards, path selectors, rf, co, final writes, flags, observables, read
values) are turned into clauses by Z3's tactics (simplify, card2bv, bit-blast, tseitin-cnf); the
clauses go to a SAT solver of the ``python-sat`` package (a dependency of ptxmm;
CaDiCaL). Each model gives the packed witness's digits directly (the ``p_k``), so an outcome and
its witness cost one SAT call and no model evaluation; the next call excludes the outcome with a
clause over the observables' digits that some model can still change (digits no model can change
are fixed once with a unit clause).

Before the enumeration, CaDiCaL's preprocessor (python-sat's ``Processor``) simplifies the clauses
with every digit a model is read for frozen (bounded variable elimination, subsumption, equivalent
literals, probing leave frozen variables in place, so the models' projection onto them is the
formula's), and the variables left are renumbered densely, the digits first: on issue 41's
4-thread SC shape 3,166 variables become 495, reading a model is 6x cheaper and each SAT call
faster (the whole check 2x faster). ``PREPROCESS`` (or ``PTXMM_SAT_PREPROCESS=0``) turns it off.

A long enumeration (past :data:`_CUBE_AFTER` outcomes of the one solver) goes on in cubes: one
fresh solver on the preprocessed clauses per value of the observable whose values split the
outcomes found so far most evenly, each with the blocking clauses of its own value's outcomes
only (:func:`_cubes`). Every outcome left has one value of that observable, so lies in exactly
one cube: the same outcomes, each once; what changes is which model (witness) stands for an
outcome, and the order they come in. On issue 41's 4-thread SC shape (41,040 outcomes, 4 cubes)
the SAT calls take ~35 % less. ``CUBES`` (or ``PTXMM_SAT_CUBES=0``) keeps the one solver.

Acyclicity in the cat model is encoded with integer ranks (:meth:`.logic.Z3Logic.acyclic`, the
leaves ``x < y`` the Logic records in ``order``); for the clauses each such leaf becomes an
unsigned bit-vector comparison over ranks of ``w`` bits, 2^w at least the number of ranked events:
a relation is acyclic exactly when its events have a topological numbering below their count, so
the models' projections onto everything else are the same.

Where it applies: the problem reads nothing from a model but the packed digits (no fence.sc
ranks, barrier phases or values the ISA leaves unspecified), every rank is such an order leaf's,
and the tactics give clauses (else :func:`sat_enumerator` answers None and the SMT enumeration
goes on). Chosen automatically (:data:`ENABLED`, or ``PTXMM_SAT_ENUM=0`` in the environment,
turns it off)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from itertools import compress
from operator import itemgetter, neg

import z3

ENABLED = True  # the switch: False (or PTXMM_SAT_ENUM=0) keeps every enumeration on Z3's SMT solver
_TACTICS = ("simplify", "card2bv", "bit-blast", "tseitin-cnf")
_SOLVERS = ("cadical195", "minisat22")  # the first python-sat offers
# Past this many clauses the SMT enumeration goes on (bit-blasted arithmetic: a litmus test's
# 32-bit adds gave 80,000 clauses, and SAT calls slower than Z3's; the one-location shapes of
# issue 41 give 3,000-16,000)
_MAX_CLAUSES = 60_000
_TACTICS_MS = 2000  # a formula whose clauses take longer stays on the SMT solver
_SETTLE_S = 0.25  # CPU seconds for settling which digits no model changes (_settle)
PREPROCESS = True  # the switch: False (or PTXMM_SAT_PREPROCESS=0) enumerates on the formula as blasted
_POSITIVE = (0).__lt__  # a literal's truth in a model
_PROCESSOR = "cd195"  # python-sat's name of the CaDiCaL whose preprocessing _preprocessed runs
CUBES = True  # the switch: False (or PTXMM_SAT_CUBES=0) goes on in one solver however many outcomes (_cubes)
_CUBE_AFTER = 2048  # outcomes one solver finds before the rest goes on in cubes (a small enumeration: never)
_CUBE_MAX = 64  # the most values of the observable the cubes split on


def enabled() -> bool:
    """Whether the SAT enumeration is switched on and python-sat is installed (imported lazily:
    never at start-up)."""
    if not ENABLED or os.environ.get("PTXMM_SAT_ENUM", "1").strip() in ("0", "no", "off", "false"):
        return False
    try:
        import pysat.solvers  # noqa: F401
    except ImportError:
        return False
    return True


def sat_enumerator(pb, seen: set[tuple[int, ...]], packed: list[int]):
    """The rest of ``pb``'s outcomes (those not in ``seen``; ``packed``: their witnesses' packed
    values) from a SAT solver: an iterator of (values, witness, flags) as
    :meth:`Z3Problem.outcomes` yields them, or None where the SAT enumeration does not apply (see
    the module's docstring)."""
    ch = pb.ch
    if not enabled() or ch.rank or ch.ph or ch.values.unspec or pb._layout is None or pb._packed is None:
        return None
    cnf = _clauses(pb)
    if cnf is None:
        return None
    clauses, digit_var, assumed = cnf
    return _enumerate(pb, clauses, digit_var, assumed, seen, packed)


def _clauses(pb):
    """(clauses, the SAT variable of each packed digit, the unit literals of the symmetry
    assumptions) of ``pb``'s formula, or None where it does not turn into clauses."""
    lg, lay = pb.lg, pb._layout
    base = [lg.z3(c) for c in pb._base if c is not True]
    subst = _ranks_as_bitvectors(lg)
    if subst is None:
        return None
    tag = next(lg._tag)
    w, packed = lay.width, pb._packed
    digits = [z3.Bool(f"pd{tag}_{k}") for k in range(w)]
    g = z3.Goal(ctx=lg.ctx)
    formula = z3.And(base) if base else z3.BoolVal(True, lg.ctx)
    g.add(z3.substitute(formula, *subst) if subst else formula)
    for k, d in enumerate(digits):  # digit k counts from the most significant (witness._Layout)
        g.add(d == (z3.Extract(w - 1 - k, w - 1 - k, packed) == 1))
    try:
        goals = z3.TryFor(z3.Then(*_TACTICS, ctx=lg.ctx), _TACTICS_MS, ctx=lg.ctx)(g)
        if len(goals) != 1 or len(goals[0]) > _MAX_CLAUSES:
            return None
        if not z3.Probe("is-propositional", ctx=lg.ctx)(goals[0]):  # terms the tactics left
            return None  # (integers in RMW chains' positions): DIMACS would make them free atoms
        dimacs = goals[0].dimacs(True)
    except z3.Z3Exception:  # not clauses (integers the tactics cannot blast), or slow: SMT goes on
        return None
    clauses, names = _parse(dimacs)
    if clauses is None or len(clauses) > _MAX_CLAUSES:
        return None
    digit_var = [names.get(f"pd{tag}_{k}") for k in range(w)]
    if any(v is None for v in digit_var):  # a digit the tactics dropped: not read here
        return None
    assumed = []
    for lit in pb._sym:
        v = names.get(lit.decl().name())
        if v is not None:
            assumed.append(v)
    return clauses, digit_var, assumed


def _ranks_as_bitvectors(lg) -> list | None:
    """(x < y, ULT(bx, by)) for every order leaf of the Logic (integer ranks of acyclicity), with
    bit-vector ranks wide enough to number every ranked event apart; None where a leaf is not over two
    integer constants."""
    leaves, consts = [], {}
    for i in lg.order:
        t = lg.kids[i]
        x, y = t.arg(0), t.arg(1)
        if not (z3.is_const(x) and z3.is_const(y) and z3.is_int(x) and z3.is_int(y)):
            return None
        leaves.append((t, x, y))
        for c in (x, y):
            consts.setdefault(c.get_id(), c)
    if not leaves:
        return []
    width = max(1, (len(consts) - 1).bit_length())  # 2^width >= the number of ranked events
    tag = next(lg._tag)
    bv = {k: z3.BitVec(f"rb{tag}_{k}", width, lg.ctx) for k in consts}
    return [(t, z3.ULT(bv[x.get_id()], bv[y.get_id()])) for t, x, y in leaves]


def _parse(dimacs: str) -> tuple[list[list[int]] | None, dict[str, int]]:
    """Clauses and named variables of Z3's DIMACS text."""
    clauses: list[list[int]] = []
    names: dict[str, int] = {}
    for line in dimacs.splitlines():
        if not line or line[0] == "p":
            continue
        if line[0] == "c":
            parts = line.split()
            if len(parts) == 3:
                names[parts[2]] = int(parts[1])
            continue
        try:
            lits = [int(x) for x in line.split()]
        except ValueError:  # not a clause: the goal was not in clausal form
            return None, names
        if not lits or lits[-1] != 0:
            return None, names
        clauses.append(lits[:-1])
    return clauses, names


def _solver(clauses: list[list[int]]):
    from pysat.solvers import Solver, SolverNames

    for name in _SOLVERS:
        if name in SolverNames.__dict__ or hasattr(SolverNames, name):
            try:
                return Solver(name=name, bootstrap_with=clauses)
            except (NotImplementedError, ValueError):  # pragma: no cover - a build without it
                continue
    return Solver(bootstrap_with=clauses)  # pragma: no cover - python-sat's default


def _enumerate(pb, clauses, digit_var, assumed, seen, packed) -> Iterator:
    lay = pb._layout
    run = _Run(pb, _solver(clauses))
    try:
        for v in assumed:
            run.s.add_clause([v])
        fixed, vary = _settle(pb, run.s, digit_var, packed)
        obs = {k for i, j in lay.terms for k in range(i, j)}  # the observables' digits
        free = [k for k, _ in vary if k in obs]  # what a blocking clause needs
        if not free and seen:  # the observables have one value, found already
            return
        small = _preprocessed(pb, clauses, assumed, digit_var, fixed, vary)
        base = None
        if small is not None:  # the same outcomes from a smaller formula: its solver goes on
            run.swap(small[0])
            base, var = small[2], small[1]
            vary = [(k, var[v]) for k, v in vary]
            digit_var = dict(vary)
        block = [digit_var[k] for k in free]
        blocked = [_blocking(_obs_digits(lay, values), free, digit_var) for values in seen]
        for c in blocked:
            run.s.add_clause(c)
        read = _reader(lay.width, fixed, vary)
        if not free:  # the observables have one value: one model tells it
            if _solve(pb, run.s):
                yield pb._read(read(run.s.get_model()), None)
            return
        until = _CUBE_AFTER if base is not None and _cubes_on() else None
        if not (yield from _models(pb, run, read, block, blocked, until)):
            return  # every outcome found
        cubes = _cubes(pb, base, blocked, _split_on(lay, free, blocked))
        if cubes is None:  # no split: the one solver goes on
            yield from _models(pb, run, read, block, None, None)
            return
        for units, rest, done in cubes:  # every outcome left lies in exactly one cube
            run.swap(_solver(base + [[u] for u in units] + done))
            yield from _models(pb, run, read, rest, None, None)
    finally:
        run.close()


class _Run:
    """The solver an enumeration is on (watched by the check's deadline; replaced when the
    enumeration goes on in cubes)."""

    def __init__(self, pb, s) -> None:
        self.pb, self.s = pb, s
        pb.deadline.watch(s.interrupt)

    def swap(self, s) -> None:
        self.close()
        self.s = s
        self.pb.deadline.watch(s.interrupt)

    def close(self) -> None:
        self.pb.deadline.unwatch(self.s.interrupt)
        self.s.delete()


def _models(pb, run: _Run, read, block: list[int], blocked: list | None, until: int | None):
    """The outcomes of ``run``'s solver, each blocked by a clause over the variables ``block``
    (kept in ``blocked`` where it is given), until there are none (then it returns False) or
    ``until`` of them (True)."""
    s, n = run.s, 0
    at = itemgetter(*[v - 1 for v in block]) if len(block) > 1 else lambda m, i=block[0] - 1: (m[i],)
    while _solve(pb, s):
        m = s.get_model()
        yield pb._read(read(m), None)
        c = list(map(neg, at(m)))  # (a model's literal of variable v is v or -v)
        s.add_clause(c)
        if blocked is not None:
            blocked.append(c)
        n += 1
        if not n & 63:
            pb.deadline.check()
        if n == until:
            return True
    return False


def _cubes_on() -> bool:
    return CUBES and os.environ.get("PTXMM_SAT_CUBES", "1").strip() not in ("0", "no", "off", "false")


def _reader(w: int, fixed: int, vary: list[tuple[int, int]]):
    """A model's packed value: the settled digits ``fixed`` and the varying ones (digit, variable)."""
    read = [(v - 1, 1 << (w - 1 - k)) for k, v in vary]
    bits = [bit for _, bit in read]
    if all(i == j for j, (i, _) in enumerate(read)):  # the varying digits are variables 1..
        return lambda m: fixed + sum(compress(bits, map(_POSITIVE, m)))  # summed in C

    def slow(m) -> int:
        x = fixed
        for i, bit in read:
            if m[i] > 0:
                x |= bit
        return x
    return slow


def _split_on(lay, free: list[int], blocked: list[list[int]]) -> list[int] | None:
    """The positions in the blocking clauses (over the digits ``free``) of the observable to split
    the rest of the enumeration on, judged by the outcomes found so far (``blocked``: their
    clauses): of those whose most frequent value holds at most half of them, the one with the
    fewest values (fewer cubes: fewer solvers to set up and learned clauses lost), then the most
    even; else the most even. None where no observable has shown two values, or only one
    observable has digits that vary (a cube would hold one outcome). (On issue 41's 4-thread SC
    shape the final value of x, 4 values, gives cubes that take 10-15 % less than a register's 7.)"""
    best = None
    for i, j in lay.terms:
        pos = [p for p, k in enumerate(free) if i <= k < j]
        if not pos or len(pos) == len(free):
            continue
        counts: dict = {}
        for c in blocked:
            key = tuple([c[p] for p in pos])
            counts[key] = counts.get(key, 0) + 1
        if len(counts) < 2:
            continue
        top = max(counts.values()) / len(blocked)
        score = (top > 0.5, len(counts) if top <= 0.5 else 0, top)
        if best is None or score < best[0]:
            best = score, pos
    return None if best is None else best[1]


def _cubes(pb, base: list[list[int]], blocked: list[list[int]], pos: list[int] | None):
    """The cubes the rest of the enumeration goes on in: (the split observable's value as unit
    literals, the other blocking variables, the blocking clauses of the outcomes found in that
    cube over those variables) per value it takes in an outcome not yet found; None where there
    is no split or it has more than :data:`_CUBE_MAX` values.

    Why: each outcome's blocking clause watches two of the few observable digits, so every SAT call
    walks longer watch lists as they pile up (the last outcomes of issue 41's 4-thread SC shape
    cost 3.6x the first ones); a solver per value of one observable holds only that value's
    clauses (on that shape the SAT calls take ~35 % less, the learned clauses lost included)."""
    if pos is None:
        return None
    keep = [p for p in range(len(blocked[0])) if p not in pos]
    vs = [abs(blocked[0][p]) for p in pos]
    found: dict[tuple[int, ...], list[list[int]]] = {}
    for c in blocked:
        found.setdefault(tuple([-c[p] for p in pos]), []).append([c[p] for p in keep])
    s = _solver(base + blocked)
    pb.deadline.watch(s.interrupt)
    values: list[tuple[int, ...]] = []
    try:
        while _solve(pb, s):
            if len(values) == _CUBE_MAX:
                return None
            m = s.get_model()
            value = tuple([m[v - 1] for v in vs])
            values.append(value)
            s.add_clause([-x for x in value])
    finally:
        pb.deadline.unwatch(s.interrupt)
        s.delete()
    rest = [abs(blocked[0][p]) for p in keep]
    return [(list(value), rest, found.get(value, [])) for value in values]


def _preprocessed(pb, clauses, assumed, digit_var, fixed: int, vary: list[tuple[int, int]]):
    """(a solver, the new number of each varying digit's variable, its clauses) of a formula whose models'
    projection onto the varying digits is ``clauses``' (with the symmetry units ``assumed`` and
    the settled digits): CaDiCaL's preprocessing (bounded variable elimination, subsumption,
    equivalent literals, probing...) with those digits frozen, so that it eliminates only the
    others (Tseitin variables, rank bits), and the variables left renumbered densely with the
    digits first. A model is then a few hundred literals, not thousands (reading one was half
    of each outcome's cost), and each SAT call propagates fewer clauses. None where it is switched
    off (:data:`PREPROCESS`, ``PTXMM_SAT_PREPROCESS=0``), python-sat has no preprocessor, or
    the preprocessing found the formula unsatisfiable (it has models: then the unprocessed
    formula goes on)."""
    if not PREPROCESS or os.environ.get("PTXMM_SAT_PREPROCESS", "1").strip() in ("0", "no", "off", "false"):
        return None
    try:
        from pysat.process import Processor
        from pysat.solvers import NoSuchSolverError
    except ImportError:  # pragma: no cover - an old python-sat
        return None
    w, varying = pb._layout.width, dict(vary)
    units = [[v] for v in assumed]  # (the settled digits' units are implied: they help it along)
    units += [[digit_var[k] if fixed >> (w - 1 - k) & 1 else -digit_var[k]]
              for k in range(w) if k not in varying]
    frozen = [v for _, v in vary]  # numbered 1.. in the digits' order (_enumerate reads them so)
    try:
        with Processor(bootstrap_with=clauses + units, engine=_PROCESSOR) as proc:
            out = proc.process(rounds=1, freeze=frozen)
    except (NotImplementedError, ValueError, TypeError, NoSuchSolverError):  # pragma: no cover
        return None  # a build without that CaDiCaL (or an older Processor): the formula as blasted
    if not out.status:  # pragma: no cover - cannot be: the formula has models
        return None
    var = {v: n for n, v in enumerate(frozen, 1)}
    for c in out.clauses:
        for lit in c:
            var.setdefault(abs(lit), len(var) + 1)
    small = [[var[lit] if lit > 0 else -var[-lit] for lit in c] for c in out.clauses]
    small.append([len(var), -len(var)])  # every variable known to the solver, so in each model
    return _solver(small), var, small


def _solve(pb, s, assumptions=()) -> bool:
    r = s.solve_limited(assumptions=list(assumptions), expect_interrupt=True)
    if r is None:  # interrupted (the check was stopped) or out of budget
        raise pb._unknown()
    return r


def _settle(pb, s, digit_var: list[int], packed: list[int]) -> tuple[int, list[tuple[int, int]]]:
    """The packed digits no model can change, fixed by unit clauses (their value as a packed
    number), and the others: (digit, variable). A digit the known witnesses (``packed``) show both
    ways varies; any other one a SAT call settles (a unit clause then spares every later call the
    search, and the reading of a model reads only the digits that vary) while the calls have taken
    less than :data:`_SETTLE_S`; past that, the digit is read from every model (as one that varies:
    only slower, never wrong)."""
    w = pb._layout.width
    ones = zeros = 0
    for x in packed:
        ones |= x
        zeros |= ~x
    fixed, vary = 0, []
    until = time.process_time() + _SETTLE_S
    for k, v in enumerate(digit_var):
        bit = 1 << (w - 1 - k)
        one, zero = bool(ones & bit), bool(zeros & bit)
        if (one and zero) or time.process_time() > until:
            vary.append((k, v))
            continue
        if not one and not zero:  # no witness yet: ask both ways
            one = _solve(pb, s, [v])
            zero = _solve(pb, s, [-v])
        elif _solve(pb, s, [-v] if one else [v]):
            vary.append((k, v))
            continue
        if one and zero:
            vary.append((k, v))
        else:
            s.add_clause([v if one else -v])
            fixed |= bit if one else 0
    return fixed, vary


def _obs_digits(lay, values: tuple[int, ...]) -> dict[int, str]:
    """The observables' packed digits of an outcome's values."""
    out = {}
    for (i, j), x in zip(lay.terms, values):
        b = format(x, "b").rjust(j - i, "0")
        for k in range(i, j):
            out[k] = b[k - i]
    return out


def _blocking(digits: dict[int, str], free: list[int], digit_var: list[int]) -> list[int]:
    return [-digit_var[k] if digits[k] == "1" else digit_var[k] for k in free]
