"""Kernel events remembered across models: an operator seen before, on the same build, gets the
events its kernel rule gave then, bound to its own tensors, without running the rule again.

A search loop checks candidates that share most of their layers, and a CI job checks one model
on many boards: the same operator (its options, the shapes, types and quantization of its
operands) comes back again and again. A rule is a function of what it reads through its
`KernelContext`, so a result may be reused exactly when everything it read is the same. The key
holds what a rule may read of one operator without looking at the rest of the model: the build,
every field of the `Operator` but the two that place it in the file (`_PLACING`), and of each
operand `Tensor` the fields a rule reads (`RULE_FIELDS`: shape, type, data, state, kind and
quantization summary), not the ones that name it or say how the file wrote it (index, name,
shape signature, buffer, ...): so a tensor's name never has to be read for the key. Events that
hold tensors (`TempTensor`, `TempTensors`) are bound again to the operator's own when recalled.

Whether a rule kept to that is not assumed: the first time, it runs against watched views of the
model, the subgraph, the operator and its tensors (`_Watch`), which answer exactly as the real
ones and note any read the key does not cover (the model: buffers, custom options, other
subgraphs; a tensor that is not the operator's; a tensor field outside `RULE_FIELDS`, or the
tensor as a whole: compared, hashed, iterated, printed; the operator's position). Such a result
is not remembered, nor one whose events depend on the operators before it
(`ScratchNumberAtLeast`) or would raise (a negative size); the plain run answers then. Bounded:
the oldest entries go first.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Hashable, Iterator
from itertools import repeat
from operator import attrgetter
from typing import Any, NamedTuple, cast

from arenalens.builds.build import Build
from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.memo import forgettable
from arenalens.runtimes.tflm.kernels import base, registry

# Operator fields that say where it sits in the model, not what it is.
_PLACING = frozenset({"index", "file_index"})
_OPERATOR_FIELDS = tuple(name for name in Operator._fields if name not in _PLACING)
# Mapping-valued fields enter the key as their items.
_MAPPING_FIELDS = frozenset({"options"})
# The operand fields a rule may read (and the properties made of them alone: element_count,
# nbytes, packed_nbytes, is_constant); a read of any other field through the watched view is a
# read beyond the key (`_TensorView`).
RULE_FIELDS = ("shape", "dtype", "has_data", "is_variable", "kind", "quantization")
_rule_fields = attrgetter(*RULE_FIELDS)
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


class _Gate:
    """Whether asking the memo pays: a key and a first run watched cost about as much as a
    quarter of a rule's run, and a stream of operators never seen again (candidates with their
    own weights, hence scales) only ever pays them. Over each window of `WINDOW` operators asked,
    fewer than one in `RARE` found means the next `RESTING` operators go straight to their rules;
    then a window is tried again. It keeps no model's data (`clear` leaves it): what it learns is
    how often this process's operators repeat, and answers never depend on it."""

    WINDOW = 64
    RARE = 8
    RESTING = 1024

    __slots__ = ("asked", "found", "resting")

    def __init__(self) -> None:
        self.asked = self.found = self.resting = 0

    def count(self, found: bool) -> None:
        self.asked += 1
        self.found += found
        if self.asked == self.WINDOW:
            if self.found * self.RARE < self.WINDOW:
                self.resting = self.RESTING
            self.asked = self.found = 0


_gate = _Gate()


@forgettable
def clear() -> None:
    """Forget every remembered result (tests that compare with and without the memo)."""
    _tables.clear()
    _last.clear()


# The key's plain fields in one C call; the mapping fields follow as their items.
_PLAIN_FIELDS = tuple(name for name in _OPERATOR_FIELDS if name not in _MAPPING_FIELDS)
_plain_fields = attrgetter(*_PLAIN_FIELDS)
_mapping_fields = tuple(attrgetter(name) for name in _OPERATOR_FIELDS if name in _MAPPING_FIELDS)
VARIANTS = 8  # tensor variants kept per operator key


def _operator_key(operator: Operator) -> Hashable:
    """The operator's own fields (`recalled` finds out whether they hash)."""
    return (_plain_fields(operator), *(tuple(get(operator).items()) for get in _mapping_fields))


def _tensors_key(
    operator: Operator, tensors: tuple[Tensor, ...]
) -> tuple[tuple[Any, ...] | None, ...] | None:
    """Every operand tensor's `RULE_FIELDS` (None for an omitted one), or None when an index is
    out of range. (Which tensor each operand is, and so which operands are the same tensor, is
    in the operator's own key: its inputs, outputs and intermediates.)"""
    try:
        return tuple(
            [
                _rule_fields(tensors[index]) if index >= 0 else None
                for index in (*operator.inputs, *operator.outputs, *operator.intermediates)
            ]
        )
    except IndexError:
        return None


def resting() -> bool:
    """Whether the memo rests for the next operator (`_Gate`; counted as asked): its caller
    computes the events itself then, without `recalled`."""
    gate = _gate
    if gate.resting:
        gate.resting -= 1
        return True
    return False


def recalled(
    context: base.KernelContext, compute: Callable[[base.KernelContext], KernelEvents]
) -> KernelEvents:
    """`compute(context)`, remembered by the operator's key on the context's build (or computed
    at once, while the memo rests: `_Gate`)."""
    gate = _gate
    if gate.resting:
        gate.resting -= 1
        return compute(context)
    table = _table(context.build)
    operator, tensors = context.operator, context.subgraph.tensors
    key = _operator_key(operator)
    operands = _tensors_key(operator, tensors)
    if operands is None:
        return compute(context)
    try:
        variants = table.entries.get(key)
    except TypeError:  # an option that does not hash
        return compute(context)
    if variants is not None:
        for seen, events in variants:
            if seen == operands:
                gate.count(True)
                return _bound(events, tensors)
    gate.count(False)
    if operator.opcode in table.reads_beyond:
        return compute(context)
    watch = _Watch()
    try:
        events = _bound(compute(_watched(context, watch)), tensors)
    except Exception:  # the plain run raises it, as without the memo
        return compute(context)
    if watch.beyond:
        # The views answer as the real objects do, but a read beyond the key may also ask
        # what they are (isinstance): the plain run is the answer, and the rule is not watched
        # again on this build.
        table.reads_beyond.add(operator.opcode)
        return compute(context)
    kinds = _kinds(events)
    if kinds is None:
        return events
    events = KernelEvents(*events[:5], kinds)
    if variants is None:
        variants = table.entries[key] = []
        while len(table.entries) > CAPACITY:
            del table.entries[next(iter(table.entries))]
    variants.append((operands, events))
    if len(variants) > VARIANTS:
        del variants[0]
    return events


def _bound(events: KernelEvents, tensors: tuple[Tensor, ...]) -> KernelEvents:
    """The events with each temp tensor (`TempTensor`: the fetched tensor itself) the
    subgraph's own tensor at its index: a remembered one is another model's tensor (equal in
    `RULE_FIELDS` only), a watched run's the view (`_TensorView`). Most operators' events are
    temp tensors of their operands."""
    init, prepare = events.init, events.prepare
    if init and not _TEMP_TYPES.isdisjoint(map(type, init)):
        init = tuple(map(_bind, init, repeat(tensors, len(init))))
    if prepare and not _TEMP_TYPES.isdisjoint(map(type, prepare)):
        prepare = tuple(map(_bind, prepare, repeat(tensors, len(prepare))))
    if init is events.init and prepare is events.prepare:
        return events
    return events._replace(init=init, prepare=prepare)


def _bind(event: base.Event, tensors: tuple[Tensor, ...]) -> base.Event:
    kind = type(event)
    if kind is base.TempTensors:
        # A run of them: each bound (its items are tuples: a view's index read unnoted).
        run = cast(tuple[Tensor, ...], event)
        return tuple([tensors[cast(int, tuple.__getitem__(item, 0))] for item in run])
    if kind is not base.TempTensor and kind is not _TensorViewClass:
        return event
    index = cast(int, tuple.__getitem__(cast(Tensor, event), 0))  # a view's index, unnoted
    return tensors[index]


_SIZED = frozenset({base.Persistent, base.Scratch, base.TempBytes})


def _kinds(events: KernelEvents) -> frozenset[type] | None:
    """The event types of remembrable events: None for events that depend on the operators
    before this one (a scratch-number check) or fail the size check (`setups._checked` must
    see them)."""
    every = (*events.init, *events.prepare)
    kinds = frozenset(map(type, every))
    if base.ScratchNumberAtLeast in kinds:
        return None
    if not kinds.isdisjoint(_SIZED):
        sized = _SIZED
        for event in every:
            if type(event) in sized and event.nbytes < 0:  # type: ignore[union-attr]
                return None
    return kinds


# -- Watched views: the real objects' answers, with a note of any read the key does not hold.
# They cost the first run of each operator little: the operator's fields and its own tensors are
# read at C speed (slots, a dict); only the reads beyond the key go through Python.


class _Watch:
    __slots__ = ("beyond",)

    def __init__(self) -> None:
        self.beyond = ""  # the first read beyond the key ("" for none)

    def note(self, what: str) -> None:
        if not self.beyond:
            self.beyond = what


def _watched(context: base.KernelContext, watch: _Watch) -> base.KernelContext:
    operator, subgraph = context.operator, context.subgraph
    tensors = subgraph.tensors
    own = _TensorsView(
        [
            (index, _tensor_view(tensors[index], watch))
            for index in (*operator.inputs, *operator.outputs, *operator.intermediates)
            if index >= 0
        ]
    )
    own._watch, own._tensors = watch, tensors
    return base.KernelContext(
        cast(Model, _ModelView(context.model, watch)),
        cast(Subgraph, _SubgraphView(subgraph, own, watch)),
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


class _TensorsView(dict[int, Tensor]):
    """The subgraph's tensors as the rule indexes them: the operator's own (`_TensorView`s) by a
    plain lookup; any other index, the length or an iteration is beyond the key, and answers as
    the tuple does."""

    __slots__ = ("_tensors", "_watch")
    _tensors: tuple[Tensor, ...]
    _watch: _Watch

    def __missing__(self, index: Any) -> Any:
        self._watch.note(f"subgraph.tensors[{index!r}]")
        return self._tensors[index]

    def __len__(self) -> int:
        self._watch.note("len(subgraph.tensors)")
        return len(self._tensors)

    def __iter__(self) -> Iterator[Any]:
        self._watch.note("iter(subgraph.tensors)")
        return iter(self._tensors)

    def __contains__(self, tensor: object) -> bool:
        self._watch.note("in subgraph.tensors")
        return tensor in self._tensors


def _noted_field(name: str, position: int) -> property:
    def read(view: Any) -> Any:
        view._watch.note(f"tensor.{name}")
        return tuple.__getitem__(view, position)

    return property(read)


def _noted_method(name: str) -> Callable[..., Any]:
    def run(view: Any, *arguments: Any) -> Any:
        view._watch.note(f"tensor {name}")
        real = tuple.__new__(Tensor, tuple.__iter__(view))  # (its own __iter__ is noted)
        return getattr(Tensor, name)(real, *arguments)

    return run


def _tensor_view_class() -> type:
    """A Tensor (the same values, so `isinstance` and every read answer as the real one) whose
    fields outside `RULE_FIELDS` are noted when read, as is any use of it as a whole tuple:
    compared, hashed, indexed, iterated (unpacked, `_replace`, `_asdict`), printed. Its
    properties run against it, so those made of other fields (`has_dynamic_dims`) are noted
    too."""
    namespace: dict[str, Any] = {
        "__doc__": "An operand tensor as its rule sees it on a first run (`_watched`).",
        # What it makes of its values (`_replace`, noted as it iterates) is a plain Tensor.
        "_make": classmethod(lambda _, values: Tensor._make(values)),
    }
    for position, name in enumerate(Tensor._fields):
        if name not in RULE_FIELDS:
            namespace[name] = _noted_field(name, position)
    for name in (
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__getitem__",
        "__iter__", "__len__", "__contains__", "__repr__", "__reduce__", "count",
    ):  # fmt: skip
        namespace[name] = _noted_method(name)
    return type("_TensorView", (Tensor,), namespace)


_TensorViewClass = _tensor_view_class()
# What a temp tensor event is: a tensor, or on a watched run its view; or a run of them.
_TEMP_TYPES = frozenset({base.TempTensor, _TensorViewClass, base.TempTensors})


def _tensor_view(tensor: Tensor, watch: _Watch) -> Tensor:
    view: Any = tuple.__new__(_TensorViewClass, tensor)
    view._watch = watch  # (in its __dict__: a tuple subclass has no slots of its own)
    return cast(Tensor, view)


def _placing(name: str) -> property:
    def read(view: Any) -> Any:
        view._watch.note(f"operator.{name}")
        return getattr(view._operator, name)

    return property(read)


def _operator_view_class() -> type:
    """An Operator look-alike: its key fields in slots, its properties and methods run against
    the view (so what they read is watched), its placing fields noted when read."""
    namespace: dict[str, Any] = {
        "__slots__": (*_OPERATOR_FIELDS, "_operator", "_watch"),
        "__doc__": "The operator as its rule sees it on a first run (`_watched`).",
    }
    for name, member in vars(Operator).items():
        if not name.startswith("__") and isinstance(member, property | types.FunctionType):
            namespace[name] = member
    for name in _PLACING:
        namespace[name] = _placing(name)
    return type("_OperatorView", (), namespace)


_OperatorViewClass = _operator_view_class()


def _OperatorView(operator: Operator, watch: _Watch) -> Any:  # noqa: N802 - a constructor
    view: Any = object.__new__(_OperatorViewClass)
    for setter, value in zip(_VIEW_SETTERS, _operator_fields(operator), strict=True):
        setter(view, value)
    view._operator, view._watch = operator, watch
    return view


_operator_fields = attrgetter(*_OPERATOR_FIELDS)
_VIEW_SETTERS = tuple(vars(_OperatorViewClass)[name].__set__ for name in _OPERATOR_FIELDS)
