"""Kernel events remembered across models: an operator seen before, on the same build, gets the
events its kernel rule gave then, bound to its own tensors, without running the rule again.

A search loop checks candidates that share most of their layers, and a CI job checks one model
on many boards: the same operator (its options, the shapes, types and quantization of its
operands) comes back again and again. A rule is a function of what it reads through its
`KernelContext`, so a result may be reused exactly when everything it read is the same. The key
(`_key`) holds what a rule may read of one operator without looking at the rest of the model:
the build, every field of the `Operator` but the two that place it in the file (`_PLACING`), and
its operand `Tensor`s compared whole (name and index included). It is derived from the classes'
fields, so a field added to either joins the key.

Whether a rule kept to that is not assumed: the first time, it runs against watched views of the
model, the subgraph and the operator (`_Watch`), which answer exactly as the real ones and note
any read the key does not cover (the model: buffers, custom options, other subgraphs; a tensor
that is not the operator's; the operator's position). Such a result is not remembered, nor one
whose events depend on the operators before it (`ScratchNumberAtLeast`) or would raise (a
negative size); the plain run answers then. Bounded: the oldest entries go first.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Hashable, Iterator
from operator import attrgetter
from typing import Any, NamedTuple, cast

from arenalens.builds.build import Build
from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.runtimes.tflm.kernels import base, registry

# Operator fields that say where it sits in the model, not what it is.
_PLACING = frozenset({"index", "file_index"})
_OPERATOR_FIELDS = tuple(f.name for f in dataclasses.fields(Operator) if f.name not in _PLACING)
# Mapping-valued fields enter the key as their items.
_MAPPING_FIELDS = frozenset({"options"})
CAPACITY = 4096  # entries per build; a VWW has 31 operators, mobilenet_v2 224 84


class KernelEvents(NamedTuple):
    """What `setups.operator_setup` computes of one operator before checking sizes: whether the
    build registers its kernel, the rule, its parsed options' (bytes, alignment), Init and
    Prepare events as the rule gives them; `kinds`, for remembered events only, the event
    types they hold (they pass `setups._checked` as they are: it was run when remembering)."""

    registered: bool
    rule: base.KernelRule | None
    builtin_data: tuple[int, int] | None
    init: tuple[base.Event, ...]
    prepare: tuple[base.Event, ...]
    kinds: frozenset[type] | None = None


# Per operator key: the operand tensors' fields (one tuple each) and the events they gave.
_Variants = list[tuple[tuple[tuple[Any, ...] | None, ...], KernelEvents]]


class _Table:
    """One build's remembered events, by the operator's own fields then its tensors' (equal
    tensors compare fast field by field: interned types and kinds compare by identity), and the
    opcodes whose rules were found to read beyond the key."""

    __slots__ = ("build", "entries", "reads_beyond")

    def __init__(self, build: Build) -> None:
        self.build = build
        self.entries: dict[Hashable, _Variants] = {}
        self.reads_beyond: set[str] = set()


_tables: dict[Build, _Table] = {}
_last: list[_Table] = []  # the table asked for last: most calls are for the same build
# The registry's tables the remembered rules came from: swapping one (tests do) forgets all.
_registry: list[object] = []


def _table(build: Build) -> _Table:
    reference, libraries = registry.REFERENCE_KERNELS, registry.LIBRARIES
    if not _registry or _registry[0] is not reference or _registry[1] is not libraries:
        clear()
        _registry[:] = [reference, libraries]
    if _last and _last[0].build is build:
        return _last[0]
    table = _tables.get(build)
    if table is None:
        table = _tables[build] = _Table(build)
    _last[:] = [table]
    return table


def clear() -> None:
    """Forget every remembered result (tests that compare with and without the memo)."""
    _tables.clear()
    _last.clear()


_operator_fields = attrgetter(*_OPERATOR_FIELDS)
_tensor_fields = attrgetter(*(f.name for f in dataclasses.fields(Tensor)))
_MAPPING_POSITIONS = tuple(
    position for position, name in enumerate(_OPERATOR_FIELDS) if name in _MAPPING_FIELDS
)
VARIANTS = 8  # tensor variants kept per operator key


def _operator_key(operator: Operator) -> Hashable | None:
    """The operator's own fields, or None when one cannot be hashed."""
    values = _operator_fields(operator)
    if _MAPPING_POSITIONS:
        listed = list(values)
        for position in _MAPPING_POSITIONS:
            listed[position] = tuple(listed[position].items())
        values = tuple(listed)
    try:
        hash(values)
    except TypeError:
        return None
    return values


def _tensors_key(
    operator: Operator, tensors: tuple[Tensor, ...]
) -> tuple[tuple[Any, ...] | None, ...] | None:
    """Every operand tensor's fields (None for an omitted one), or None when an index is out of
    range."""
    count = len(tensors)
    found: list[tuple[Any, ...] | None] = []
    for index in (*operator.inputs, *operator.outputs, *operator.intermediates):
        if index >= count:
            return None
        found.append(_tensor_fields(tensors[index]) if index >= 0 else None)
    return tuple(found)


def recalled(
    context: base.KernelContext, compute: Callable[[base.KernelContext], KernelEvents]
) -> KernelEvents:
    """`compute(context)`, remembered by the operator's key on the context's build."""
    table = _table(context.build)
    operator, tensors = context.operator, context.subgraph.tensors
    key = _operator_key(operator)
    operands = None if key is None else _tensors_key(operator, tensors)
    if key is None or operands is None:
        return compute(context)
    variants = table.entries.get(key)
    if variants is not None:
        for seen, events in variants:
            if seen == operands:
                # Its tensors are the first model's, equal field for field to this one's:
                # what reads the events (the setup sequence) reads their values.
                return events
    if operator.opcode in table.reads_beyond:
        return compute(context)
    watch = _Watch()
    try:
        events = compute(_watched(context, watch))
    except Exception:  # the plain run raises it, as without the memo
        return compute(context)
    if watch.beyond:
        table.reads_beyond.add(operator.opcode)
        return compute(context)
    if not _rememberable(events):
        return compute(context)
    kinds = frozenset(type(event) for event in (*events.init, *events.prepare))
    events = events._replace(kinds=kinds)
    if variants is None:
        variants = table.entries[key] = []
        while len(table.entries) > CAPACITY:
            del table.entries[next(iter(table.entries))]
    variants.append((operands, events))
    if len(variants) > VARIANTS:
        del variants[0]
    return events


def _rememberable(events: KernelEvents) -> bool:
    """Events that do not depend on the operators before this one (a scratch-number check) and
    pass the size check unchanged (`setups._checked` keeps them as they are)."""
    for event in (*events.init, *events.prepare):
        kind = type(event)
        if kind is base.ScratchNumberAtLeast:
            return False
        if (kind is base.Persistent or kind is base.Scratch or kind is base.TempBytes) and cast(
            "base.Persistent", event
        ).nbytes < 0:
            return False
    return True


# -- Watched views: the real objects' answers, with a note of any read the key does not hold.


class _Watch:
    __slots__ = ("beyond",)

    def __init__(self) -> None:
        self.beyond = ""  # the first read beyond the key ("" for none)

    def note(self, what: str) -> None:
        if not self.beyond:
            self.beyond = what


def _watched(context: base.KernelContext, watch: _Watch) -> base.KernelContext:
    operator = context.operator
    operands = frozenset(
        i for i in (*operator.inputs, *operator.outputs, *operator.intermediates) if i >= 0
    )
    return base.KernelContext(
        cast(Model, _ModelView(context.model, watch)),
        cast(
            Subgraph,
            _SubgraphView(
                context.subgraph, _TensorsView(context.subgraph.tensors, operands, watch), watch
            ),
        ),
        cast(Operator, _OperatorView(operator, watch)),
        context.build,
    )


class _ModelView:
    """Every read of the model is beyond the key."""

    __slots__ = ("_model", "_watch")

    def __init__(self, model: Model, watch: _Watch) -> None:
        self._model, self._watch = model, watch

    def __getattr__(self, name: str) -> Any:
        self._watch.note(f"model.{name}")
        return getattr(self._model, name)


class _SubgraphView:
    """The subgraph's tensors through `_TensorsView`; anything else is beyond the key."""

    __slots__ = ("_subgraph", "_watch", "tensors")

    def __init__(self, subgraph: Subgraph, tensors: _TensorsView, watch: _Watch) -> None:
        self._subgraph, self.tensors, self._watch = subgraph, tensors, watch

    def __getattr__(self, name: str) -> Any:
        self._watch.note(f"subgraph.{name}")
        return getattr(self._subgraph, name)


class _TensorsView:
    """The operator's own tensors are in the key; any other, or the whole tuple, is not."""

    __slots__ = ("_operands", "_tensors", "_watch")

    def __init__(
        self, tensors: tuple[Tensor, ...], operands: frozenset[int], watch: _Watch
    ) -> None:
        self._tensors, self._operands, self._watch = tensors, operands, watch

    def __getitem__(self, index: Any) -> Any:
        if type(index) is not int or index not in self._operands:
            self._watch.note(f"subgraph.tensors[{index!r}]")
        return self._tensors[index]

    def __len__(self) -> int:
        self._watch.note("len(subgraph.tensors)")
        return len(self._tensors)

    def __iter__(self) -> Iterator[Tensor]:
        self._watch.note("iter(subgraph.tensors)")
        return iter(self._tensors)


class _OperatorView:
    """The operator's fields but its position; properties and methods run against this view,
    so what they read is watched too."""

    __slots__ = ("_operator", "_watch")

    def __init__(self, operator: Operator, watch: _Watch) -> None:
        self._operator, self._watch = operator, watch

    def __getattr__(self, name: str) -> Any:
        member = getattr(Operator, name, None)
        if isinstance(member, property) and member.fget is not None:
            return member.fget(self)
        if isinstance(member, types.FunctionType):
            return types.MethodType(member, self)
        if name in _PLACING:
            self._watch.note(f"operator.{name}")
        return getattr(self._operator, name)
