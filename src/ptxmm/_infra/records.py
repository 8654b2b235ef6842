"""``@record``: ptxmm's dataclasses, the same classes as ``@dataclass`` at a fraction of the cost of
creating them.

``@record`` makes a dataclass with the methods ``@dataclass`` generates, and the same behaviour:
__init__ (positional, then keyword-only fields; defaults and factories; __post_init__), __repr__,
__eq__ and __hash__ over the compared fields (as tuples, so hash values are the same),
__setattr__/__delattr__ raising FrozenInstanceError (frozen records), __match_args__, and
__dataclass_fields__ (dataclasses.fields and replace work). The difference is the cost of creating
a class: dataclass compiles six methods from source text per class (~0.4 ms each class; ptxmm has
some 60 of them, all created at every start), ``record`` builds closures over the field list.
Creating an *instance* costs about what dataclass's compiled __init__ costs: the common calls (all
arguments positional) take a path that fills the instance's dictionary in one C call.
tests/startup/test_startup.py holds records and dataclasses equal.

A record extends records (and plain classes), not dataclasses, and is extended by records: to
dataclass's own checks every record is a mutable dataclass, whatever its options.

Options: ``@record`` is ``@dataclass(frozen=True)``; ``kw_only=True``, ``eq=False`` (identity
equality and hash) and ``frozen=False`` (a mutable record: assignable fields, and unhashable when
compared by value, as dataclass makes it) as dataclass's options of the same names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, FrozenInstanceError, dataclass, field, fields
from operator import attrgetter
from reprlib import recursive_repr
from typing import Any, dataclass_transform


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    """The tuple of the named attributes of an object (a 1-tuple for one name, as dataclass)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _fast_path(flds: tuple, simple: bool, defaults: dict) -> tuple[bool, int, tuple]:
    """When __init__ may fill the instance in one C call: positional arguments only (no keyword-only
    field), at least ``fast_from`` of them, the fields after them all with plain defaults
    (``tail``, aligned with the fields)."""
    first_default = next((i for i, f in enumerate(flds) if f.default is not MISSING or
                          f.default_factory is not MISSING), len(flds))
    tail = tuple(defaults.get(f.name, MISSING) for f in flds)
    fast_from = len(flds) if any(v is MISSING for v in tail[first_default:]) else first_default
    return simple, fast_from, tail


class _Spec:
    """What a record's __init__ needs of its class's fields."""

    def __init__(self, cls: type) -> None:
        flds = fields(cls)
        self.qual = cls.__qualname__
        self.order = tuple(f.name for f in flds)
        self.positional = tuple(f.name for f in flds if not f.kw_only)
        self.defaults = {f.name: f.default for f in flds if f.default is not MISSING}
        self.factories = {f.name: f.default_factory for f in flds if f.default_factory is not MISSING}
        self.known = frozenset(self.order)
        self.simple, self.fast_from, self.tail = _fast_path(flds, self.positional == self.order,
                                                            self.defaults)

    def fill(self, obj: Any, args: tuple, kw: dict) -> None:
        """The general path: keywords, factories, and every error dataclass's __init__ raises."""
        if len(args) > len(self.positional):
            raise TypeError(f"{self.qual}.__init__() takes {len(self.positional) + 1} positional "
                            f"arguments but {len(args) + 1} were given")
        for name, value in zip(self.positional, args):
            if name in kw:
                raise TypeError(f"{self.qual}.__init__() got multiple values for argument '{name}'")
            kw[name] = value
        if not self.known.issuperset(kw):
            bad = next(k for k in kw if k not in self.known)
            raise TypeError(f"{self.qual}.__init__() got an unexpected keyword argument '{bad}'")
        d = obj.__dict__
        for name in self.order:
            if name in kw:
                d[name] = kw[name]
            elif name in self.defaults:
                d[name] = self.defaults[name]
            elif name in self.factories:
                d[name] = self.factories[name]()
            else:
                raise self.missing(kw)

    def missing(self, kw: dict) -> TypeError:
        gone = [n for n in self.order if n not in kw and n not in self.defaults and n not in self.factories]
        return TypeError(f"{self.qual}.__init__() missing required argument(s): "
                         + ", ".join(f"'{n}'" for n in gone))


def _init_method(cls: type) -> Callable[..., None]:
    spec = _Spec(cls)
    order, tail, simple, fast_from, fill = spec.order, spec.tail, spec.simple, spec.fast_from, spec.fill
    n_fields = len(order)
    post_init = getattr(cls, "__post_init__", None)

    if post_init is None and simple:
        def __init__(self: Any, *args: Any, **kw: Any) -> None:
            if kw or not fast_from <= len(args) <= n_fields:
                fill(self, args, kw)
            else:
                self.__dict__.update(zip(order, args + tail[len(args):]))
        return __init__

    def __init__(self: Any, *args: Any, **kw: Any) -> None:  # noqa: F811 (the general form)
        n = len(args)
        if not kw and simple and fast_from <= n <= n_fields:
            self.__dict__.update(zip(order, args + tail[n:]))
        else:
            fill(self, args, kw)
        if post_init is not None:
            post_init(self)

    return __init__


def _methods(cls: type, frozen: bool, eq: bool) -> dict[str, Any]:
    """The methods ``@dataclass(frozen=frozen, eq=eq)`` would generate for ``cls``, as closures."""
    flds = fields(cls)
    names = tuple(f.name for f in flds)
    cmp_key = _key(tuple(f.name for f in flds if f.compare))
    hash_key = _key(tuple(f.name for f in flds if (f.compare if f.hash is None else f.hash)))
    shown = tuple(f.name for f in flds if f.repr)

    @recursive_repr()
    def __repr__(self) -> str:
        return (f"{self.__class__.__qualname__}("
                + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return cmp_key(self) == cmp_key(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(hash_key(self))

    def __setattr__(self, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    out: dict[str, Any] = {"__init__": _init_method(cls), "__repr__": __repr__}
    if eq:
        out |= {"__eq__": __eq__, "__hash__": __hash__ if frozen else None}
    if frozen:
        out |= {"__setattr__": __setattr__, "__delattr__": __delattr__}
    return out


class _InitSignature:
    """``inspect.signature`` of a record class (its __init__ takes ``*args, **kw``): the
    parameters dataclass's __init__ would have, built when asked for."""

    def __get__(self, obj: object, owner: type) -> Any:
        import dataclasses
        import inspect

        P = inspect.Parameter
        factory = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", P.empty)  # shown as <factory>
        flds = sorted(fields(owner), key=lambda f: f.kw_only)  # positional ones first
        return inspect.Signature(
            [P(f.name, P.KEYWORD_ONLY if f.kw_only else P.POSITIONAL_OR_KEYWORD,
               default=f.default if f.default is not MISSING else
               factory if f.default_factory is not MISSING else P.empty, annotation=f.type)
             for f in flds], return_annotation=None)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type | None = None, /, *, kw_only: bool = False, frozen: bool = True,
           eq: bool = True) -> Any:
    """``@record`` / ``@record(kw_only=True, frozen=False, eq=False)``: ``@dataclass(frozen=True)``
    (or with those options) at a fraction of the cost of creating the class (see above)."""

    def wrap(c: type) -> type:
        own_doc = c.__dict__.get("__doc__")
        c.__doc__ = own_doc or c.__name__  # a docstring spares dataclass an inspect.signature
        # fields, defaults, __match_args__ and __dataclass_fields__, but no generated method
        dataclass(init=False, repr=False, eq=False, kw_only=kw_only)(c)
        for name, fn in _methods(c, frozen, eq).items():
            if fn is not None:
                fn.__qualname__ = f"{c.__qualname__}.{name}"
            setattr(c, name, fn)
        c.__signature__ = _InitSignature()
        if not own_doc:
            c.__doc__ = c.__name__ + "(" + ", ".join(
                f"{f.name}: {f.type!r}" + ("" if f.default is MISSING else f" = {f.default!r}")
                for f in fields(c)) + ")"
        return c

    return wrap if cls is None else wrap(cls)
