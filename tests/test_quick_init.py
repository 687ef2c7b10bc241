"""`quick_init`: the same records as the dataclass's own __init__ makes, or a refusal."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from dataclasses import InitVar, dataclass, field
from types import MappingProxyType
from typing import Any

import pytest

from arenalens.analysis.lifetimes import ScratchRequest, Step
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
    for record in (ScratchRequest, Step):
        assert any(name.startswith("_set_") for name in record.__init__.__code__.co_names)
    # The model's tensors and operators and the setup steps are NamedTuples (cheaper still),
    # with the dataclass's defaults.
    assert issubclass(Tensor, tuple) and issubclass(Operator, tuple)
    assert Operator(0, "ADD", 0, 0, None, 1, (), (), ()).file_index is None
    assert Allocation(Action.TEMP, 8).alignment == 1
    assert Allocation(Action.TEMP, 8).count == 1


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
    # 8 since OperatorSetup, KernelContext (6cc10126) and Buffer (49c59a79) became NamedTuples.
    assert found >= 8


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
