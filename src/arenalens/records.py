"""Frozen records: cheaper to define (`record`) and, in hot loops, cheaper to make (`quick_init`).

`record` is `dataclass(frozen=True)` for a plain record class at a fraction of the cost of
defining it. On Python 3.11 the dataclass decorator compiles six functions per frozen class
(`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`), about 1 ms of CPU
each class on a loaded machine; a command imports some 140 record classes, so defining them was
about a third of `arenalens check`'s whole process. `record` lets the dataclass machinery collect
the fields (and build the slotted class), compiles only `__init__` and gives the other methods as
closures over the field names, with the same behaviour and the same hash values; a class it
cannot reproduce exactly (its own dunder methods, `__post_init__`, fields outside `__init__`,
dataclass bases, no docstring) gets the standard decorator.

A frozen dataclass's generated `__init__` sets each field through `object.__setattr__` (the class
forbids its own), about twice the cost of a plain assignment: a Tensor of 13 fields costs ~7 µs
where a tuple costs ~2. Reading one model makes a few hundred tensors and operators, and setting
it up a few thousand kernel events and setup allocations, so `arenalens.check` spends a tenth of
its time in `__init__`s. `quick_init` gives such a class an `__init__` that stores each field
through its slot's descriptor: the same signature, defaults and frozenness, a little over half
the cost. The class stays an ordinary frozen dataclass (`replace`, `fields`, equality, hashing).
"""

from __future__ import annotations

import dataclasses
import inspect
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

Record = TypeVar("Record", bound=type)

# Methods the class may define itself: the dataclass decorator then keeps (or refuses) them.
_OWN_METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")


@overload
def record(cls: Record, /) -> Record: ...


@overload
def record(*, slots: bool = False, eq: bool = True) -> Callable[[Record], Record]: ...


@dataclass_transform(frozen_default=True)
def record(
    cls: Record | None = None, /, *, slots: bool = False, eq: bool = True
) -> Record | Callable[[Record], Record]:
    """`@record` = `@dataclass(frozen=True)`, `@record(slots=True, eq=False)` =
    `@dataclass(frozen=True, slots=True, eq=False)`: the same class, defined faster."""

    def wrap(plain: Record) -> Record:
        return _record(plain, slots=slots, eq=eq)

    return wrap if cls is None else wrap(cls)


def _record(cls: Record, *, slots: bool, eq: bool) -> Record:
    if (
        any(name in vars(cls) for name in _OWN_METHODS)
        or hasattr(cls, "__post_init__")
        or not vars(cls).get("__doc__")  # the dataclass writes one from the signature
        or any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:])
    ):
        return dataclasses.dataclass(cls, frozen=True, slots=slots, eq=eq)  # type: ignore[return-value]
    made: Any = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots)
    fields = dataclasses.fields(made)
    if len(made.__dataclass_fields__) != len(fields) or not all(f.init for f in fields):
        # Init-only variables or fields left out of __init__: the dataclass's own way.
        return dataclasses.dataclass(cls, frozen=True, slots=slots, eq=eq)  # type: ignore[return-value]
    methods = _methods(made, fields, eq=eq)
    for name, method in methods.items():
        method.__qualname__ = f"{made.__qualname__}.{name}"
        setattr(made, name, method)
    if slots:  # as the dataclass pickles a frozen slotted class (its setattr refuses)
        made.__getstate__ = _slotted_state
        made.__setstate__ = _set_slotted_state
    params = made.__dataclass_params__  # what the frozen dataclass would say
    params.init, params.repr, params.eq, params.frozen = True, True, eq, True
    return made  # type: ignore[no-any-return]


def _methods(cls: Any, fields: tuple[dataclasses.Field[Any], ...], *, eq: bool) -> dict[str, Any]:
    """The frozen dataclass's methods for `cls`: `__init__` compiled when the class is first
    made (`_first_init`), the others closures."""
    names = frozenset(field.name for field in fields)
    shown = tuple(field.name for field in fields if field.repr)

    def __setattr__(self: Any, name: str, value: Any) -> None:  # noqa: N807
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:  # noqa: N807
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:  # noqa: N807
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({values})"

    methods: dict[str, Any] = {
        "__init__": _first_init(cls, fields),
        "__repr__": __repr__,
        "__setattr__": __setattr__,
        "__delattr__": __delattr__,
    }
    if eq:
        compared = _values(tuple(field.name for field in fields if field.compare))
        hashed = _values(
            tuple(
                field.name
                for field in fields
                if (field.compare if field.hash is None else field.hash)
            )
        )

        def __eq__(self: Any, other: Any) -> Any:  # noqa: N807
            if other.__class__ is self.__class__:
                return compared(self) == compared(other)
            return NotImplemented

        def __hash__(self: Any) -> int:  # noqa: N807
            return hash(hashed(self))

        methods["__eq__"], methods["__hash__"] = __eq__, __hash__
    return methods


def _first_init(cls: Any, fields: tuple[dataclasses.Field[Any], ...]) -> Any:
    """A stand-in `__init__` with the dataclass's signature that compiles the real one when the
    class is first instantiated, puts it on the class and runs it: compiling is most of what
    defining a record costs, and most record classes a command imports are never made."""

    def __init__(self: Any, *arguments: Any, **keywords: Any) -> None:  # noqa: N807
        init = vars(cls)["__init__"]
        if init is stand_in:
            init = _init(fields, *_store(cls, fields))
            init.__qualname__ = stand_in.__qualname__
            cls.__init__ = init
        init(self, *arguments, **keywords)

    stand_in = __init__
    parameter, positional = inspect.Parameter, inspect.Parameter.POSITIONAL_OR_KEYWORD
    parameters = [parameter("self", positional)]
    for field in sorted(fields, key=lambda field: bool(field.kw_only)):  # keyword-only last
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = _FACTORY
        else:
            default = inspect.Parameter.empty
        kind = (
            inspect.Parameter.KEYWORD_ONLY
            if field.kw_only
            else inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        parameters.append(inspect.Parameter(field.name, kind, default=default))
    __init__.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    return __init__


def _store(cls: Any, fields: tuple[dataclasses.Field[Any], ...]) -> tuple[str, dict[str, Any]]:
    """How `__init__` stores a field: through its slot's descriptor when the class has slots
    (as `quick_init` does), else as the frozen dataclass does (object.__setattr__)."""
    if "__slots__" in vars(cls):
        setters = {f"_set_{field.name}": vars(cls)[field.name].__set__ for field in fields}
        return "_set_{name}(self, {name})", setters
    return "_set(self, {name!r}, {name})", {"_set": object.__setattr__}


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of the named fields' values, as the dataclass compares and hashes them."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda instance: (one(instance),)
    return lambda instance: ()


def _init(fields: tuple[dataclasses.Field[Any], ...], store: str, namespace: dict[str, Any]) -> Any:
    """An `__init__` taking the fields as the dataclass's does (defaults, factories, keyword-only
    fields last), storing each with `store` (a format of `name`)."""
    namespace = {**namespace, "_FACTORY": _FACTORY}
    positional: list[str] = []
    keyword_only: list[str] = []
    body: list[str] = []
    for field in fields:
        name = field.name
        if field.default is not dataclasses.MISSING:
            namespace[f"_default_{name}"] = field.default
            parameter = f"{name}=_default_{name}"
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{name}"] = field.default_factory
            parameter = f"{name}=_FACTORY"
            body.append(f"    if {name} is _FACTORY:\n        {name} = _factory_{name}()\n")
        else:
            parameter = name
        (keyword_only if field.kw_only else positional).append(parameter)
        body.append("    " + store.format(name=name) + "\n")
    parameters = ["self", *positional, *(["*", *keyword_only] if keyword_only else [])]
    source = f"def __init__({', '.join(parameters)}):\n" + ("".join(body) or "    pass\n")
    local: dict[str, Any] = {}
    exec(source, namespace, local)
    return local["__init__"]


def _slotted_state(self: Any) -> list[Any]:
    return [getattr(self, field.name) for field in dataclasses.fields(self)]


def _set_slotted_state(self: Any, state: list[Any]) -> None:
    for field, value in zip(dataclasses.fields(self), state, strict=False):
        object.__setattr__(self, field.name, value)


def quick_init(cls: Record) -> Record:
    """Decorator, above `@dataclass(frozen=True, slots=True)`: the faster `__init__`.

    Refuses (TypeError) a class it cannot reproduce exactly: not a frozen slotted dataclass, one
    with `__post_init__`, init-only variables or fields left out of `__init__`."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: quick_init takes a frozen dataclass with slots")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: quick_init cannot run __post_init__")
    fields = dataclasses.fields(cls)
    if not all(field.init for field in fields):
        raise TypeError(f"{cls.__name__}: quick_init cannot set fields left out of __init__")
    setters = {f"_set_{field.name}": cls.__dict__[field.name].__set__ for field in fields}
    init = _init(fields, "_set_{name}(self, {name})", setters)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    # Pseudo-fields (init-only variables, class variables) are left out of fields(); their
    # __init__ would take or do more than this one.
    if len(vars(cls)["__dataclass_fields__"]) != len(fields):
        raise TypeError(f"{cls.__name__}: quick_init cannot reproduce its __init__")
    init.__wrapped__ = vars(cls)["__init__"]  # the dataclass's own: tests compare signatures
    cls.__init__ = init  # type: ignore[misc]
    return cls


class _Factory:
    """The default of a field with a default_factory: call the factory."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()
