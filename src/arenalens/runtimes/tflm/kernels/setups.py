"""Kernel setups: model + build → every operator's Init and Prepare events, in TFLM's order.

TFLM parses, inits and prepares every operator of every subgraph, subgraph 0 first, each in
FlatBuffer order, reachable or not (*micro_interpreter_graph.cc — InitSubgraphs,
PrepareSubgraphs*). Operators without a registered kernel get no events here: setup fails on them
(`support`). A registered kernel arenalens has no rule for gets a stated estimate instead of a
silent default.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from arenalens.analysis.lifetimes import ScratchRequest
from arenalens.builds.build import HOST, Build
from arenalens.ir import Model
from arenalens.memo import recent_by_identity
from arenalens.runtimes.tflm.kernels import base, registry, setup_memo
from arenalens.runtimes.tflm.kernels.registry import is_registered, rule_for

# What an unmodelled kernel is assumed to take: an options struct, an OpData, temp tensors for its
# operands. A kernel may take far more (lookup tables, copies of inputs), hence the Estimate.
_UNMODELLED_BUILTIN = (32, 4)
_UNMODELLED_OP_DATA = 64


class OperatorSetup(NamedTuple):
    """One operator's setup on one build: what its kernel allocates, refuses, or leaves unknown.

    `registered` False means this build has no kernel for the operator (setup fails); the events
    are then those of the builds that do register it, when arenalens knows them. A NamedTuple
    (made with `_new_setup` from all its fields in one C call): one per operator per check."""

    context: base.KernelContext
    registered: bool  # False: the build has no kernel for this operator
    rule: base.KernelRule | None  # None: registered, but arenalens has no rule (an estimate)
    builtin_data: tuple[int, int] | None  # (bytes, alignment) of the parsed options
    init: tuple[base.Event, ...]
    prepare: tuple[base.Event, ...]
    # Set when `init` and `prepare` are the memo's own tuples (`setup_memo`), the same objects
    # in every model that recalls them (what is made of them alone may be kept with them:
    # `setup`): the event types they hold, so that asking for a kind they lack costs nothing.
    kinds: frozenset[type] | None = None
    # The event types `init` and `prepare` hold, whether remembered or not (None: not known), so
    # that the stages asking each operator for its scratch, refusals, estimates and rewritten
    # shapes skip the operators that have none (most).
    holds: frozenset[type] | None = None

    @property
    def remembered(self) -> bool:
        """`init` and `prepare` are the memo's tuples (`kinds` says what they hold)."""
        return self.kinds is not None

    # The four views below start by looking `holds` (else `kinds`) up inline: the stages ask
    # every operator for them, several times a check.

    @property
    def scratch(self) -> tuple[base.Scratch, ...]:
        """The scratch buffers Prepare requests, in order."""
        holds = self.kinds if self.holds is None else self.holds
        if holds is not None and base.Scratch not in holds:
            return ()
        return tuple(event for event in self.prepare if type(event) is base.Scratch)

    @property
    def output_shapes(self) -> dict[int, tuple[int, ...]]:
        """Tensor index → the dims Prepare gave that output (only outputs it rewrote)."""
        holds = self.kinds if self.holds is None else self.holds
        if holds is not None and base.OutputShape not in holds:
            return {}
        outputs = self.context.operator.outputs
        return {
            outputs[event.position]: event.shape
            for event in self.prepare
            if type(event) is base.OutputShape  # event types have no subclasses
            and event.position < len(outputs)
            and outputs[event.position] >= 0
        }

    @property
    def refusals(self) -> tuple[base.Refusal, ...]:
        """Why the kernel refuses this operator (setup or Invoke)."""
        holds = self.kinds if self.holds is None else self.holds
        if holds is not None and base.Refusal not in holds:
            return ()
        return tuple(e for e in (*self.init, *self.prepare) if type(e) is base.Refusal)

    @property
    def estimates(self) -> tuple[base.Estimate, ...]:
        """Where the events are not exact."""
        holds = self.kinds if self.holds is None else self.holds
        if holds is not None and base.Estimate not in holds:
            return ()
        return tuple(e for e in (*self.init, *self.prepare) if type(e) is base.Estimate)


_new_setup = partial(tuple.__new__, OperatorSetup)  # from all eight fields


def operator_setup(
    context: base.KernelContext, earlier_scratch: int, kernels: Kernels | None = None
) -> OperatorSetup:
    """One operator → its kernel's events on the context's build (sizes checked non-negative),
    after `earlier_scratch` scratch requests of the operators set up before it (`kernels`: the
    kernel facts the other operators of the model found, on the same build)."""
    return (Kernels(context.build) if kernels is None else kernels).setup(context, earlier_scratch)


def kernel_events(context: base.KernelContext) -> setup_memo.KernelEvents:
    """One operator → what its kernel's rule gives on the context's build, sizes unchecked: the
    part of `operator_setup` that depends on the operator alone (`setup_memo` remembers it)."""
    return Kernels(context.build).events(context)


class _PrepareShape(NamedTuple):
    """What the event types of one Prepare, in order, decide of its check (`_prepare_shape`):
    the types its setup holds (the kernel's Init's too), where its sized events are, and
    whether a scratch-number check is among them."""

    holds: frozenset[type]
    sized: tuple[int, ...]  # positions of the events with a size of their own (`_SIZED`)
    numbered: bool  # a `ScratchNumberAtLeast` to decide (`_scratch_numbers`)


class _Kernel(NamedTuple):
    """What one operator's events take from its kernel alone, on one build: whether the build
    registers it, its rule, its parsed options' (bytes, alignment), and its Init's events when
    they depend on the build alone (`base.BUILD_ONLY_INITS`; else None), checked, with the
    event types they hold (`init_kinds`); then, for such a kernel, the `_PrepareShape` of each
    sequence of event types its Prepare gave so far (a kernel gives a few: the usual one and
    its refusals')."""

    registered: bool
    rule: base.KernelRule | None
    builtin_data: tuple[int, int] | None
    init: tuple[base.Event, ...] | None
    init_kinds: frozenset[type] = frozenset()
    prepares: dict[tuple[type, ...], _PrepareShape] | None = None


class Kernels:
    """The kernel facts of one build, by opcode (and whether the operator is custom), found once
    per process (`_facts`): a model has a handful of kernels for its tens of operators. Keeps
    nothing of any model but the facts of its kernels on the build."""

    __slots__ = ("build", "found")

    def __init__(self, build: Build) -> None:
        self.build = build
        self.found = _facts(build)

    def kernel(self, context: base.KernelContext) -> _Kernel:
        """The facts of the operator's kernel on this build (found on first asking)."""
        operator = context.operator
        key = (operator.opcode, operator.custom_code is not None)
        kernel = self.found.get(key)
        if kernel is None:
            kernel = self.found[key] = _kernel(context)
        return kernel

    def events(self, context: base.KernelContext) -> setup_memo.KernelEvents:
        """`kernel_events` with this pass's kernel facts."""
        kernel = self.kernel(context)
        rule = kernel.rule
        if rule is None:
            return (
                _unmodelled(context)
                if kernel.registered
                else setup_memo.KernelEvents(False, None, None, (), ())
            )
        init = tuple(rule.init(context)) if kernel.init is None else kernel.init
        prepare = tuple(rule.prepare(context))
        return _kernel_events((kernel.registered, rule, kernel.builtin_data, init, prepare, None))

    def setup(self, context: base.KernelContext, earlier_scratch: int) -> OperatorSetup:
        """`operator_setup` with this pass's kernel facts: the rule's events (remembered or
        not: `setup_memo`), checked in one pass that also notes the types they hold."""
        if setup_memo.resting():
            operator = context.operator  # (`kernel`, its lookup inline: every operator)
            kernel = self.found.get((operator.opcode, operator.custom_code is not None))
            if kernel is None:
                kernel = self.kernel(context)
            if kernel.init is not None:  # (most kernels): no KernelEvents to take apart
                return self._set_up(context, kernel, earlier_scratch)
            events = self.events(context)
        else:
            events = setup_memo.recalled(context, self.events)
        registered, rule, options, init, prepare, kinds = events
        if kinds is not None:  # remembered: checked when it was
            return _new_setup((context, registered, rule, options, init, prepare, kinds, None))
        if rule is None:
            holds = frozenset(map(type, (*init, *prepare)))
            return _new_setup((context, registered, None, options, init, prepare, None, holds))
        found: set[type] = set()
        # (An Init of the build alone was checked when its kernel's facts were found: `_kernel`;
        # passing it again, the same tuple, only notes its event types.)
        init = _checked(context, init, earlier_scratch, found)
        prepare = _checked(context, prepare, earlier_scratch, found)
        # A kernel other builds register (ethos-u) still says what it would allocate there.
        holds = frozenset(found)
        return _new_setup((context, registered, rule, options, init, prepare, None, holds))

    @staticmethod
    def _set_up(
        context: base.KernelContext, kernel: _Kernel, earlier_scratch: int
    ) -> OperatorSetup:
        """`setup` of a kernel whose Init depends on the build alone, the memo not asked: only
        Prepare runs and is checked as `_checked` checks it (the Init was, with its kinds, when
        the kernel was found), what its event types decide found once per sequence of them
        (`_PrepareShape`): its sized events alone looked at."""
        rule, prepares = kernel.rule, kernel.prepares
        assert rule is not None and prepares is not None  # (`_kernel`: a rule's Init)
        prepare = tuple(rule.prepare(context))
        types = tuple(map(type, prepare))
        shape = prepares.get(types)
        if shape is None:
            shape = _prepare_shape(prepares, kernel.init_kinds, types)
        holds, sized, numbered = shape
        for position in sized:
            nbytes = prepare[position][0]  # type: ignore[index]
            if nbytes < 0:  # type: ignore[operator]
                context.checked_size(nbytes, _size_name(prepare[position]))  # type: ignore[arg-type]
        if numbered:
            found = set(holds)
            prepare = _scratch_numbers(prepare, earlier_scratch, found)
            holds = frozenset(found)
        return _new_setup(
            (
                context,
                kernel.registered,
                rule,
                kernel.builtin_data,
                kernel.init,
                prepare,
                None,
                holds,
            )
        )


# The kernel facts found so far, by build: a function of the build and the registry's rules
# alone, never of a model (as the rules and the struct layouts are), so kept for the process and
# not forgotten by `clear_caches`; swapping the registry's tables (tests do) forgets them.
_FACTS: dict[Build, dict[tuple[str, bool], _Kernel]] = {}
_FACTS_FROM: list[object] = []  # the registry's tables they came from
_FACTS_BUILDS = 64  # builds kept (a process checks a handful)


def _facts(build: Build) -> dict[tuple[str, bool], _Kernel]:
    """The kernel facts of one build found so far (filled by `Kernels.events`)."""
    reference, libraries = registry.REFERENCE_KERNELS, registry.LIBRARIES
    if not _FACTS_FROM or _FACTS_FROM[0] is not reference or _FACTS_FROM[1] is not libraries:
        _FACTS.clear()
        _FACTS_FROM[:] = [reference, libraries]
    found = _FACTS.get(build)
    if found is None:
        if len(_FACTS) >= _FACTS_BUILDS:
            _FACTS.clear()
        found = _FACTS[build] = {}
    return found


# KernelEvents from all its fields in one C call: once per operator.
_kernel_events = partial(tuple.__new__, setup_memo.KernelEvents)


def _kernel(context: base.KernelContext) -> _Kernel:
    opcode = context.opcode
    registered = is_registered(opcode, context.build)
    rule = rule_for(opcode, context.build)
    if rule is None:
        return _Kernel(registered, None, None, None)
    if rule.init not in base.BUILD_ONLY_INITS:
        return _Kernel(registered, rule, rule.builtin_bytes(context), None)
    # Checked here, once per kernel and build (sizes of the build alone: one struct).
    kinds: set[type] = set()
    init = _checked(context, tuple(rule.init(context)), 0, kinds)
    return _Kernel(registered, rule, rule.builtin_bytes(context), init, frozenset(kinds), {})


_PREPARE_SHAPES = 64  # sequences of event types kept per kernel (a kernel gives a few)


def _prepare_shape(
    prepares: dict[tuple[type, ...], _PrepareShape],
    init_kinds: frozenset[type],
    types: tuple[type, ...],
) -> _PrepareShape:
    """The `_PrepareShape` of a Prepare whose events have these types, kept in `prepares`."""
    if len(prepares) >= _PREPARE_SHAPES:
        prepares.clear()
    sized = tuple(position for position, kind in enumerate(types) if kind in _SIZED)
    shape = prepares[types] = _PrepareShape(
        init_kinds.union(types), sized, _SCRATCH_NUMBER in types
    )
    return shape


# The events with a size of their own: `nbytes` is the first field of each.
_SIZED = frozenset({base.Persistent, base.Scratch, base.TempBytes})
_SCRATCH_NUMBER = base.ScratchNumberAtLeast


def _checked(
    context: base.KernelContext,
    events: tuple[base.Event, ...],
    earlier_scratch: int,
    kinds: set[type],
) -> tuple[base.Event, ...]:
    """A rule's events with every size checked non-negative (`KernelContext.checked_size`) and
    each scratch-number check decided (`_scratch_numbers`), the types of the events that result
    added to `kinds`. This runs for every operator: the types are found in C, and only events
    with a size of their own are looked at one by one (no event type has subclasses). Without a
    scratch-number check the events are the same: the tuple itself."""
    these = set(map(type, events))
    kinds |= these
    if not these.isdisjoint(_SIZED):
        sized = _SIZED
        for event in events:
            if type(event) in sized and event[0] < 0:  # type: ignore[index, operator]
                context.checked_size(event[0], _size_name(event))  # type: ignore[index, arg-type]
    if _SCRATCH_NUMBER in these:
        return _scratch_numbers(events, earlier_scratch, kinds)
    return events


def _size_name(event: base.Event) -> str:
    """What a sized event is, for the negative-size error."""
    if type(event) is base.Persistent:
        return event.what
    if type(event) is base.Scratch:
        return event.label
    return "temporary buffer"


def _scratch_numbers(
    events: tuple[base.Event, ...], earlier_scratch: int, kinds: set[type]
) -> tuple[base.Event, ...]:
    """Each scratch-number check decided: its refusal when fewer scratch requests come before
    the operator's than the kernel requires, else nothing (`kinds` follows)."""
    decided: list[base.Event] = []
    for event in events:
        if type(event) is not _SCRATCH_NUMBER:
            decided.append(event)
        elif earlier_scratch < event.minimum:
            decided.append(event.refusal(earlier_scratch))
            kinds.add(base.Refusal)
    kinds.discard(_SCRATCH_NUMBER)
    return tuple(decided)


def _unmodelled(context: base.KernelContext) -> setup_memo.KernelEvents:
    builtin = None if context.operator.is_custom else _UNMODELLED_BUILTIN
    estimate = base.Estimate(
        f"no rule for the {context.opcode} kernel: its options, OpData and temporaries are "
        "assumed; buffers it allocates beyond them are not counted",
        margin_bytes=0,
    )
    init: tuple[base.Event, ...] = (
        base.Persistent(_UNMODELLED_OP_DATA, "OpData (assumed)"),
        estimate,
    )
    return setup_memo.KernelEvents(
        True, None, builtin, init, tuple(base.inputs_then_outputs(context))
    )


def operator_setups(model: Model, build: Build = HOST) -> tuple[OperatorSetup, ...]:
    """Every operator of every subgraph, in TFLM's Init/Prepare order, with its events."""
    return _operator_setups(model, build)


@recent_by_identity()
def _operator_setups(model: Model, build: Build) -> tuple[OperatorSetup, ...]:
    # The head arena, the setup replay and the support check all ask for the same model.
    found: list[OperatorSetup] = []
    earlier_scratch = 0
    set_up = Kernels(build).setup
    new_context, scratch = base.new_context, base.Scratch
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            setup = set_up(new_context((model, subgraph, operator, build)), earlier_scratch)
            # Set by `Kernels.setup` either way: `setup.scratch` asked only where there is some.
            holds = setup.kinds if setup.holds is None else setup.holds
            if holds is None or scratch in holds:
                earlier_scratch += len(setup.scratch)
            found.append(setup)
    return tuple(found)


def prepared_shapes(model: Model, build: Build = HOST) -> dict[tuple[int, int], tuple[int, ...]]:
    """(subgraph, tensor) → the dims a kernel's Prepare wrote for that output (GATHER, RESHAPE
    with -1, ...): what TFLM plans it with. Tensors no kernel rewrites keep their own shape."""
    shapes: dict[tuple[int, int], tuple[int, ...]] = {}
    output_shape = base.OutputShape
    for setup in operator_setups(model, build):
        # `output_shapes`' own test of `holds`, inline: most operators rewrite no output, and
        # this asks every one of them.
        holds = setup.kinds if setup.holds is None else setup.holds
        if holds is not None and output_shape not in holds:
            continue
        subgraph = setup.context.subgraph.index
        for tensor, shape in setup.output_shapes.items():
            shapes[subgraph, tensor] = shape
    return shapes


def scratch_requests(
    model: Model, build: Build = HOST, setups: tuple[OperatorSetup, ...] | None = None
) -> tuple[ScratchRequest, ...]:
    """Model → every kernel scratch request, in the order TFLM's Prepare makes them."""
    if setups is None:
        return _scratch_requests(model, build)  # the arena and the setup replay both ask
    return _requests_of(setups)


@recent_by_identity()
def _scratch_requests(model: Model, build: Build) -> tuple[ScratchRequest, ...]:
    return _requests_of(operator_setups(model, build))


def _requests_of(found: tuple[OperatorSetup, ...]) -> tuple[ScratchRequest, ...]:
    requests: list[ScratchRequest] = []
    scratch = base.Scratch
    for setup in found:
        # `scratch`'s own test of `holds`, inline: most operators request none.
        holds = setup.kinds if setup.holds is None else setup.holds
        if holds is not None and scratch not in holds:
            continue
        context = setup.context
        subgraph, operator = context.subgraph.index, context.operator.index
        requests.extend(
            ScratchRequest(subgraph, operator, event.nbytes, event.label) for event in setup.scratch
        )
    return tuple(requests)
