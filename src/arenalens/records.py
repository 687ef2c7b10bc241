"""`quick_init`: a cheaper `__init__` for the frozen dataclasses made in hot loops.

A frozen dataclass's generated `__init__` sets each field through `object.__setattr__` (the class
forbids its own), about twice the cost of a plain assignment: a Tensor of 13 fields costs ~7 µs
where a tuple costs ~2. Reading one model makes a few hundred tensors and operators, and setting
it up a few thousand kernel events and setup allocations, so `arenalens.check` spends a tenth of
its time in `__init__`s. `quick_init` gives such a class an `__init__` that stores each field
through its slot's descriptor: the same signature, defaults and frozenness, a little over half
the cost. The class stays an ordinary frozen dataclass (`replace`, `fields`, equality, hashing).

`record`: a frozen dataclass made without compiling six functions. On Python 3.11, `@dataclass(
frozen=True)` writes the source of `__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__` and
`__delattr__` and compiles each (`dataclasses._create_fn`): ~1.4 ms a class, and a check creates
about ninety, half of the start-up of `arenalens check` (callgrind: 320 of 647 M instructions
were the parser and compiler). `record` lets `dataclass` collect the fields (and add the slots)
and gives the same methods as closures over the field names; only `__init__` is compiled, from
the short source `quick_init` writes. The same fields, signature, repr, equality, hash,
frozenness and pickling as `@dataclass(frozen=True)` (tests/test_records.py compares them).
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import reprlib
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform

Record = TypeVar("Record", bound=type)


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


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def record(*, slots: bool = False, eq: bool = True) -> Callable[[Record], Record]:
    """Decorator: `@record(slots=True)` makes what `@dataclass(frozen=True, slots=True)` makes
    (see the module's docstring). Refuses (TypeError) what it cannot reproduce: `__post_init__`,
    init-only or class variables, fields left out of `__init__`, keyword-only fields, a base
    class that is a dataclass, a `__setattr__` or `__delattr__` of its own."""

    def make(cls: Record) -> Record:
        _refuse_unusual(cls)
        # Nothing compiled: no __init__, __repr__ or __eq__, not frozen (no __setattr__).
        made: Any = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots)
        fields = dataclasses.fields(made)
        if len(made.__dataclass_fields__) != len(fields):  # pseudo-fields slipped through
            raise TypeError(f"{cls.__name__}: record takes plain fields (no InitVar, ClassVar)")
        names = tuple(field.name for field in fields)
        methods = {
            "__init__": _init_method(made, fields, slots=slots),
            "__repr__": _repr_method(tuple(f.name for f in fields if f.repr)),
            "__setattr__": _frozen_method(made, names, "assign to", "__setattr__"),
            "__delattr__": _frozen_method(made, names, "delete", "__delattr__"),
        }
        if slots:  # as dataclass: pickling a frozen slotted class sets its slots itself
            methods["__getstate__"] = _getstate_method(names)
            methods["__setstate__"] = _setstate_method(names)
        if eq:
            methods["__eq__"] = _eq_method(tuple(f.name for f in fields if f.compare))
            # As dataclass: a __hash__ of the class's own is kept, else hash the hashed fields
            # (Python set __hash__ to None when the body defines __eq__ alone).
            own_hash = cls.__dict__.get("__hash__", dataclasses.MISSING)
            if own_hash is dataclasses.MISSING or (own_hash is None and "__eq__" in cls.__dict__):
                hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
                methods["__hash__"] = _hash_method(hashed)
        for name, method in methods.items():
            if name not in cls.__dict__ or name == "__hash__":
                method.__qualname__ = f"{made.__qualname__}.{name}"
                setattr(made, name, method)
        return made  # type: ignore[no-any-return]

    return make


def _refuse_unusual(cls: type) -> None:
    annotations = inspect.get_annotations(cls)
    unusual = ("InitVar", "ClassVar", "KW_ONLY")
    if any(any(word in str(kind) for word in unusual) for kind in annotations.values()):
        raise TypeError(f"{cls.__name__}: record takes plain fields (no InitVar, ClassVar)")
    if "__post_init__" in cls.__dict__ or any(dataclasses.is_dataclass(b) for b in cls.__mro__[1:]):
        raise TypeError(f"{cls.__name__}: record cannot run __post_init__ or extend a dataclass")
    if "__setattr__" in cls.__dict__ or "__delattr__" in cls.__dict__:
        raise TypeError(f"{cls.__name__}: a record is frozen: no __setattr__ of its own")
    for value in cls.__dict__.values():
        if isinstance(value, dataclasses.Field) and (value.kw_only is True or not value.init):
            raise TypeError(f"{cls.__name__}: record fields are all positional and in __init__")


def _init_method(
    cls: type, fields: tuple[dataclasses.Field[Any], ...], *, slots: bool
) -> Callable[..., None]:
    """`quick_init`'s __init__: each field stored through its slot's descriptor, or with
    object.__setattr__ (as dataclass's own, the class's being frozen)."""
    if slots:
        setters = {f"_set_{field.name}": cls.__dict__[field.name].__set__ for field in fields}
        init: Callable[..., None] = _init(fields, "_set_{name}(self, {name})", setters)
    else:
        init = _init(fields, "_setattr(self, '{name}', {name})", {"_setattr": object.__setattr__})
    return init


def _repr_method(names: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()  # as dataclass's: "..." for a record inside itself
    def repr_(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return repr_


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The fields' values as a tuple: attrgetter (C) for two or more names."""
    if len(names) >= 2:
        values: Callable[[Any], tuple[Any, ...]] = operator.attrgetter(*names)
        return values
    return lambda instance: tuple(getattr(instance, name) for name in names)


def _eq_method(names: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    values = _values(names)

    def eq(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            # Tuples, as dataclass's: an item equal to itself by identity (a NaN) counts equal.
            return values(self) == values(other)
        return NotImplemented

    return eq


def _hash_method(names: tuple[str, ...]) -> Callable[[Any], int]:
    values = _values(names)

    def hash_(self: Any) -> int:
        return hash(values(self))

    return hash_


def _frozen_method(
    cls: type, names: tuple[str, ...], verb: str, method: str
) -> Callable[..., None]:
    """__setattr__ / __delattr__ as a frozen dataclass's: refused for its fields (and for any
    name on the class itself), left to the base class for a subclass's other attributes."""
    fields = frozenset(names)

    def refuse(self: Any, name: str, *value: Any) -> None:
        if type(self) is cls or name in fields:
            raise dataclasses.FrozenInstanceError(f"cannot {verb} field {name!r}")
        getattr(super(cls, self), method)(name, *value)

    return refuse


def _getstate_method(names: tuple[str, ...]) -> Callable[[Any], list[Any]]:
    def getstate(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    return getstate


def _setstate_method(names: tuple[str, ...]) -> Callable[[Any, list[Any]], None]:
    def setstate(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)  # the record is frozen

    return setstate
