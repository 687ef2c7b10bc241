"""`quick_init`: a cheaper `__init__` for the frozen dataclasses made in hot loops.

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
from typing import Any, TypeVar

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
