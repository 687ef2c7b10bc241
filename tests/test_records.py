"""`record`: the classes `@dataclass(frozen=True)` makes, without compiling their methods."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import math
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest

from arenalens.records import record


@dataclass(frozen=True, slots=True)
class _PlainSlots:
    first: int
    second: str = "x"
    table: Any = field(default_factory=tuple)
    hidden: float = field(default=0.0, repr=False, compare=False)


@record(slots=True)
class _RecordSlots:
    first: int
    second: str = "x"
    table: Any = field(default_factory=tuple)
    hidden: float = field(default=0.0, repr=False, compare=False)


@dataclass(frozen=True)
class _Plain:
    first: int
    rest: tuple[int, ...] = ()


@record()
class _Record:
    first: int
    rest: tuple[int, ...] = ()


@record(slots=True, eq=False)
class _Identity:
    first: int


@record()
class _OwnEq:  # noqa: PLW1641 - record adds the __hash__, as dataclass does
    first: int

    def __eq__(self, other: object) -> bool:
        return True


PAIRS = ((_PlainSlots, _RecordSlots), (_Plain, _Record))
CALLS: tuple[tuple[tuple[Any, ...], dict[str, Any]], ...] = (
    ((1,), {}),
    ((1, "y"), {}),
    ((), {"first": 2}),
    ((math.nan,), {}),
)


def _signature(cls: type) -> list[tuple[str, Any, str]]:
    parameters = inspect.signature(cls.__init__).parameters.values()  # type: ignore[misc]
    return [(p.name, p.kind, repr(p.default)) for p in parameters]


@pytest.mark.parametrize(("plain", "made"), PAIRS)
def test_a_record_is_the_frozen_dataclass(plain: Any, made: Any) -> None:
    assert [f.name for f in dataclasses.fields(plain)] == [f.name for f in dataclasses.fields(made)]
    assert _signature(plain) == _signature(made)
    assert plain.__match_args__ == made.__match_args__
    assert ("__slots__" in vars(plain)) == ("__slots__" in vars(made))
    for args, kwargs in CALLS:
        a, b = plain(*args, **kwargs), made(*args, **kwargs)
        assert repr(a).replace(plain.__qualname__, "X") == repr(b).replace(made.__qualname__, "X")
        assert (a == copy.copy(a)) == (b == copy.copy(b))
        assert (a == plain(*args, **kwargs)) == (b == made(*args, **kwargs))
        assert hash(a) == hash(b)
        assert (a == 1) == (b == 1)
        assert repr(pickle.loads(pickle.dumps(b))) == repr(b)
        assert repr(copy.deepcopy(b)) == repr(b)
        assert (copy.deepcopy(a) == a) == (copy.deepcopy(b) == b)
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        others = {key: value for key, value in kwargs.items() if key != "first"}
        assert repr(dataclasses.replace(b, first=5)) == repr(made(5, *args[1:], **others))
        for name in ("first", "other"):
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"assign to field '{name}'"):
                setattr(b, name, 3)
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"delete field '{name}'"):
                delattr(b, name)
    with pytest.raises(TypeError):
        made()
    with pytest.raises(TypeError):
        made(1, "y", (), 0.0, 5)


def test_the_class_keeps_its_own_equality_and_identity() -> None:
    assert _Identity(1) != _Identity(1)
    assert hash(_Identity(1)) != hash(_Identity(1)) or _Identity(1) is not _Identity(1)
    assert _OwnEq(1) == _OwnEq(2)
    assert hash(_OwnEq(1)) == hash((1,))  # dataclass hashes the fields when __eq__ is its own


def test_classes_it_cannot_reproduce_are_refused() -> None:
    with pytest.raises(TypeError):

        @record()
        class AfterInit:
            value: int

            def __post_init__(self) -> None:
                pass

    with pytest.raises(TypeError):

        @record()
        class KeywordOnly:
            value: int = field(kw_only=True)

    with pytest.raises(TypeError):

        @record()
        class Derived(_Plain):
            more: int = 0


def _records(module: Any) -> list[type]:
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and value.__module__ == module.__name__
        and dataclasses.is_dataclass(value)
        and "_set_" not in str(value.__init__.__code__.co_names)  # type: ignore[misc]
        and "refuse" in getattr(value.__setattr__, "__code__", refuse_code()).co_name
    ]


def refuse_code() -> Any:
    return (lambda: None).__code__


RECORD_MODULES = ("arenalens.fit", "arenalens.verdict", "arenalens.targets", "arenalens.declared")


@pytest.mark.parametrize("name", RECORD_MODULES)
def test_every_record_takes_the_dataclass_parameters(name: str) -> None:
    """A record's __init__ takes what `@dataclass(frozen=True)` of the same fields would."""
    for made in _records(importlib.import_module(name)):
        fields = dataclasses.fields(made)  # type: ignore[arg-type]
        plain = dataclasses.make_dataclass(
            "Plain",
            [(f.name, f.type, f) for f in fields],  # type: ignore[misc]
            frozen=True,
        )
        assert _signature(plain) == _signature(made), made.__name__
