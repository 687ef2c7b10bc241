"""`quick_init`: the same records as the dataclass's own __init__ makes, or a refusal."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import pkgutil
import sys
from dataclasses import InitVar, dataclass, field
from types import MappingProxyType
from typing import Any

import pytest

from arenalens import records
from arenalens.ir import Operator, Tensor
from arenalens.records import quick_init
from arenalens.runtimes.tflm.setup_replay import Action, Allocation


@dataclass(frozen=True, slots=True)
class _Plain:
    first: int
    second: str = "x"
    table: Any = field(default_factory=lambda: MappingProxyType({}))
    late: int = field(default=3, kw_only=True)


@quick_init
@dataclass(frozen=True, slots=True)
class _Quick:
    first: int
    second: str = "x"
    table: Any = field(default_factory=lambda: MappingProxyType({}))
    late: int = field(default=3, kw_only=True)


def test_records_are_the_dataclass_ones() -> None:
    for args, kwargs in (((1,), {}), ((1, "y", {}), {"late": 4}), ((), {"first": 2})):
        plain, quick = _Plain(*args, **kwargs), _Quick(*args, **kwargs)
        fields = [f.name for f in dataclasses.fields(_Plain)]
        assert [getattr(plain, f) for f in fields] == [getattr(quick, f) for f in fields]
    assert _Quick(1).table == {}  # the factory's
    assert dataclasses.replace(_Quick(1), second="z") == _Quick(1, "z")
    with pytest.raises(dataclasses.FrozenInstanceError):
        _Quick(1).first = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Quick()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Quick(1, "y", {}, 4)  # type: ignore[misc]


def test_the_hot_records_use_it() -> None:
    for record in (Tensor, Operator, Allocation):
        assert any(name.startswith("_set_") for name in record.__init__.__code__.co_names)
    assert Allocation(Action.TEMP, 8).alignment == 1


QUICK_MODULES = (
    "arenalens.ir",
    "arenalens.analysis.arena_problem",
    "arenalens.analysis.lifetimes",
    "arenalens.planning.problem",
    "arenalens.runtimes.tflm.arena",
    "arenalens.runtimes.tflm.kernels.base",
    "arenalens.runtimes.tflm.kernels.cmsis_nn.buffers",
    "arenalens.runtimes.tflm.setup_replay",
)


def _parameters(function: Any, *, follow_wrapped: bool) -> list[tuple[str, Any, Any]]:
    """(name, kind, default) of each parameter; a default factory's sentinel as '<factory>'."""
    signature = inspect.signature(function, follow_wrapped=follow_wrapped)
    return [(p.name, p.kind, repr(p.default)) for p in signature.parameters.values()]


def test_every_quick_record_takes_the_dataclass_parameters() -> None:
    """Every class quick_init gives an __init__ (in the modules that use it) takes the same
    parameters, kinds and defaults as the dataclass's own."""
    found = 0
    for name in QUICK_MODULES:
        for record in vars(importlib.import_module(name)).values():
            init = getattr(record, "__init__", None)
            if not isinstance(record, type) or not hasattr(init, "__wrapped__"):
                continue
            assert _parameters(init, follow_wrapped=False) == _parameters(
                init.__wrapped__, follow_wrapped=False
            ), record.__name__
            found += 1
    assert found >= 20


def test_classes_it_cannot_reproduce_are_refused() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        value: int

    @dataclass(slots=True)
    class NotFrozen:
        value: int

    @dataclass(frozen=True, slots=True)
    class AfterInit:
        value: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class InitOnly:
        value: int
        scale: InitVar[int] = 1

    @dataclass(frozen=True, slots=True)
    class Derived:
        value: int
        twice: int = field(default=0, init=False)

    for record in (NoSlots, NotFrozen, AfterInit, InitOnly, Derived):
        with pytest.raises(TypeError):
            quick_init(record)


def _made_by_record() -> list[type]:
    """Every class of the package `record` defined itself (its __setattr__ is records.py's)."""
    import arenalens

    for module in pkgutil.walk_packages(arenalens.__path__, "arenalens."):
        importlib.import_module(module.name)
    found = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("arenalens"):
            continue
        for value in vars(module).values():
            setter = vars(value).get("__setattr__") if isinstance(value, type) else None
            if (
                setter is not None
                and value.__module__ == name
                and getattr(setter, "__module__", "") == "arenalens.records"
            ):
                found.append(value)
    return found


def _reference(cls: type) -> Any:
    """The class as `dataclass(frozen=True, ...)` makes it from the same fields."""
    fields = []
    for item in dataclasses.fields(cls):
        options: dict[str, Any] = {
            "init": item.init,
            "repr": item.repr,
            "hash": item.hash,
            "compare": item.compare,
            "kw_only": item.kw_only,
        }
        if item.default is not dataclasses.MISSING:
            options["default"] = item.default
        if item.default_factory is not dataclasses.MISSING:
            options["default_factory"] = item.default_factory
        fields.append((item.name, item.type, field(**options)))
    params = vars(cls)["__dataclass_params__"]
    return dataclasses.make_dataclass(
        cls.__name__, fields, frozen=True, slots="__slots__" in vars(cls), eq=params.eq
    )


def test_every_record_is_the_frozen_dataclass() -> None:
    """Every class `record` defines behaves as `dataclass(frozen=True, ...)` would make it: the
    same __init__ parameters, repr, equality, hash values (set and dict orders depend on them),
    frozenness, slots, match args, dataclass parameters and pickling."""
    classes = _made_by_record()
    assert len(classes) >= 150
    for cls in classes:
        reference = _reference(cls)
        init = vars(cls)["__init__"]
        init = getattr(init, "__wrapped__", init)  # quick_init's: compared above
        assert _parameters(init, follow_wrapped=False) == _parameters(
            reference.__init__, follow_wrapped=False
        ), cls
        names = [item.name for item in dataclasses.fields(cls)]
        values = {name: f"{name}-value" for name in names}
        ours, theirs = cls(**values), reference(**values)
        # Methods a decorator above `record` replaced (`builds.records._identified_by`) are not
        # record's to answer for.
        own = {
            method
            for method in ("__repr__", "__eq__", "__hash__")
            if getattr(vars(cls).get(method), "__module__", "") == "arenalens.records"
        }
        if "__repr__" in own:
            assert repr(ours) == repr(theirs).replace(reference.__qualname__, cls.__qualname__, 1)
        assert cls.__match_args__ == reference.__match_args__, cls
        assert vars(cls).get("__slots__") == vars(reference).get("__slots__"), cls
        ours_params, reference_params = cls.__dataclass_params__, reference.__dataclass_params__
        assert repr(ours_params) == repr(reference_params), cls
        if "__hash__" in own:
            assert hash(ours) == hash(theirs), cls
        if "__eq__" in own:
            assert ours == cls(**values)
            assert ours != theirs  # another class
            if names:
                assert ours != cls(**{**values, names[0]: "other"})
        if not reference_params.eq:
            assert "__eq__" not in own and "__hash__" not in own, cls
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(ours, names[0] if names else "anything", 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(ours, names[0] if names else "anything")
        if "<locals>" not in cls.__qualname__:
            copied = pickle.loads(pickle.dumps(ours))
            assert [getattr(copied, name) for name in names] == list(values.values()), cls


def test_a_record_is_refused_nothing_the_dataclass_takes() -> None:
    """Classes `record` cannot reproduce get the dataclass decorator itself."""

    @records.record
    class WithPostInit:
        """A record that checks itself."""

        value: int

        def __post_init__(self) -> None:
            if self.value < 0:
                raise ValueError("negative")

    @records.record(slots=True)
    class Undocumented:
        value: int
        later: int = field(default=0, init=False)

    with pytest.raises(ValueError):
        WithPostInit(-1)
    assert Undocumented(1).later == 0
    assert Undocumented.__doc__ == "Undocumented(value: 'int')"  # the dataclass's
    with pytest.raises(dataclasses.FrozenInstanceError):
        Undocumented(1).value = 2  # type: ignore[misc]


def test_a_record_compiles_its_init_when_first_made() -> None:
    @records.record(slots=True)
    class Pair:
        """Two values."""

        first: int
        second: tuple[int, ...] = field(default_factory=tuple)
        late: int = field(default=0, kw_only=True)

    class Named(Pair):
        __slots__ = ("name",)

        def __init__(self, name: str, first: int) -> None:
            object.__setattr__(self, "name", name)
            super().__init__(first, late=2)

    stand_in = vars(Pair)["__init__"]
    expected = "(self, first, second=<factory>, *, late=0) -> None"
    assert str(inspect.signature(stand_in)).replace(": int", "") == expected
    made = Named("n", 1)
    assert (made.name, made.first, made.second, made.late) == ("n", 1, (), 2)
    compiled = vars(Pair)["__init__"]
    assert compiled is not stand_in
    assert _parameters(compiled, follow_wrapped=False) == _parameters(
        stand_in, follow_wrapped=False
    )
    assert Pair(3, (4,)) == Pair(3, (4,), late=0)
    with pytest.raises(TypeError):
        Pair()  # type: ignore[call-arg]
