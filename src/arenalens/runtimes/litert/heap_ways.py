"""The ways a run-time value picks in the first `invoke()`, each replayed on its own.

Where an IF's condition or a WHILE's first check is a run-time value (a model input reaches
it), the heap's figures count the larger of both ways (heap_control_flow: a device must hold
either). Here the primary subgraph's such IFs and WHILEs are also replayed one way at a time
(heap_control_flow.Ways: the IF's branch given, the WHILE's body run or not), each way's
figures exact for the inputs that take it, and the way the wheel measurement's all-zero inputs
take is named (prepare.first_check.zero_ways: the same folding as a WHILE's first check, the
model's integer and boolean inputs set to zeros). Every way up to `MOST_DECISIONS` such
operators (2 ** 3 ways); past it, whose ways double with each, only the all-zero-inputs way
(one replay more, whatever their number), and the heap's note says the others are not
replayed one by one. An IF or WHILE inside a loop's body stays counted both ways in every way
(a later turn may take the other), and the way says it is not exact.

A FULLY_CONNECTED whose EvalHybridDense unpacks an int4 filter (four_bit.unpacked_bytes) makes
that int8 copy only for an input that is not all zeros: a way of its own. Every way above has
each such operator read a non-zero input (a device's real inputs: the copy counted, exact),
and the all-zero-inputs way has those that read zeros then (zero_values: a forward walk from
zero inputs) skip it, a way more when one does; where the walk does not know an input, that
way counts the copy and says it is not exact.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from arenalens.ir import Model
from arenalens.runtimes.litert import four_bit, zero_values
from arenalens.runtimes.litert.heap_control_flow import Ways
from arenalens.runtimes.litert.heap_part import HeapPart, PhasedFigures
from arenalens.runtimes.litert.prepare.state import RuntimeNode
from arenalens.runtimes.litert.rules import litert_plans
from arenalens.units import format_bytes_exact

MOST_DECISIONS = 3
_DECIDED = ("IF", "WHILE")
_READS = "FULLY_CONNECTED"  # whether its input is all zeros decides its int4 filter's copy


@dataclass(frozen=True, slots=True)
class Choice:
    """One IF's branch, one WHILE's body run, or whether a FULLY_CONNECTED that unpacks an
    int4 filter reads an input that is not all zeros, as a run-time value picks it."""

    opcode: str  # IF | WHILE | FULLY_CONNECTED
    operator: int  # its operator index in the model's primary subgraph
    taken: bool  # IF: its then branch; WHILE: its body runs; FULLY_CONNECTED: a non-zero input

    @property
    def words(self) -> str:
        if self.opcode == "IF":
            return f"the IF at operator {self.operator} takes its {self.taken_words} branch"
        if self.opcode == _READS:
            made = "an int8 copy of its int4 filter for the call" if self.taken else "no copy"
            return (
                f"the FULLY_CONNECTED at operator {self.operator} reads {self.taken_words} "
                f"(it makes {made})"
            )
        return f"the WHILE at operator {self.operator} {self.taken_words} its body"

    @property
    def taken_words(self) -> str:
        if self.opcode == "IF":
            return "then" if self.taken else "else"
        if self.opcode == _READS:
            return "an input that is not all zeros" if self.taken else "all zeros"
        return "runs" if self.taken else "never runs"


@dataclass(frozen=True, slots=True)
class Way(PhasedFigures):
    """The heap's figures when the run takes `choices`."""

    choices: tuple[Choice, ...]
    parts: tuple[HeapPart, ...]
    zero_inputs: bool  # the way all-zero inputs take (the wheel measurement's)
    # An int4 FULLY_CONNECTED's input on all-zero inputs zero_values does not know: its copy
    # counted (the peak a bound).
    unknown_reads: bool = False

    @property
    def exact(self) -> bool:
        """Its first invoke replayed with no other way counted (no IF or WHILE in a loop's
        body picking at run time, no FULLY_CONNECTED whose input is not known, no other
        bound)."""
        return not self.unknown_reads and all(
            part.exact for part in self.parts if part.phase == "first_invoke" and not part.allowance
        )

    @property
    def words(self) -> str:
        if not self.choices:  # only children's IFs or WHILEs, followed on all-zero inputs
            return "every input is zeros"
        return " and ".join(choice.words for choice in self.choices)


def decisions(model: Model) -> tuple[RuntimeNode, ...]:
    """The primary subgraph's IFs and WHILEs whose way is a run-time value (an IF that runs
    Eval_static, a WHILE whose first check is not known before the run)."""
    prepared = litert_plans(model)[0].prepared
    return tuple(
        node
        for node in prepared.nodes
        if not node.eval_dynamic
        and (node.opcode == "IF" or (node.opcode == "WHILE" and node.first_check is None))
    )


def heap_ways(
    read: Model, model: Model, parts_of: Callable[[Ways], Sequence[HeapPart]]
) -> tuple[Way, ...]:
    """Every way of the primary subgraph's run-time decisions (`model`: the plan the first
    invoke replays, the delegated view under XNNPACK; `read`: the model as given, whose
    operator indices name them), each with the heap's parts (`parts_of`) when the run takes it;
    past MOST_DECISIONS only the way all-zero inputs take (none where the zero walk left one
    undecided: `every_way` tells the two apart); () for none. Each way has every
    FULLY_CONNECTED that unpacks an int4 filter read a non-zero input, but the
    all-zero-inputs way, which has those whose input is then zeros skip their copy (a way more
    when one does)."""
    found = decisions(model)
    plans = [plan.prepared for plan in litert_plans(model)]
    # The ways all-zero inputs take inside the children (an IF in a loop's body that takes
    # the same branch at every turn, or both in turn): given in the zero way only (other inputs
    # may take them otherwise).
    inner: dict[tuple[int, int], bool | tuple[bool, ...]] = {
        (state.index, node.position): node.zero_turns or bool(node.zero_way)
        for state in plans[1:]
        for node in state.nodes
        if (node.zero_way is not None or node.zero_turns) and node.opcode in _DECIDED
        and (node.opcode == "IF" or (node.opcode == "WHILE" and node.first_check is None))
    }  # fmt: skip
    reads = _copy_reads(read, model)
    if not (found or inner or reads.primary):
        return ()
    replayed: Iterable[tuple[bool, ...]] = itertools.product((True, False), repeat=len(found))
    if len(found) > MOST_DECISIONS:
        if any(node.zero_way is None for node in found):
            return ()
        replayed = [tuple(bool(node.zero_way) for node in found)]
    index = plans[0].index
    named = _operator_names(read, model)
    ways = []
    for taken in replayed:
        given = {(index, node.position): way for node, way in zip(found, taken, strict=True)}
        choices = tuple(
            Choice(node.opcode, named.get(node.operator, node.operator), way)
            for node, way in zip(found, taken, strict=True)
        )
        zero = all(node.zero_way is way for node, way in zip(found, taken, strict=True))
        if not zero or (reads.skipped and len(found) <= MOST_DECISIONS):
            # Every FULLY_CONNECTED that unpacks reads a non-zero input.
            nonzero = parts_of({**given, **reads.given})
            ways.append(Way((*choices, *reads.choices), tuple(nonzero), False))
        if zero:  # those that read zeros on all-zero inputs skip their copy
            zero_parts = parts_of({**inner, **given, **reads.zero_given})
            unknown = len(reads.zero_given) < len(reads.given)
            ways.append(Way((*choices, *reads.primary), tuple(zero_parts), True, unknown))
    return tuple(ways)


@dataclass(frozen=True, slots=True)
class _CopyReads:
    """The FULLY_CONNECTEDs whose EvalHybridDense unpacks an int4 filter, as ways give them."""

    primary: tuple[Choice, ...]  # the primary subgraph's, as they read on all-zero inputs
    given: dict[tuple[int, int], bool | tuple[bool, ...]]  # every one reads a non-zero input
    # On all-zero inputs, as known (one not known is left out: its copy counted, a bound).
    zero_given: dict[tuple[int, int], bool | tuple[bool, ...]]

    @property
    def choices(self) -> tuple[Choice, ...]:
        """The primary subgraph's, each reading a non-zero input."""
        return tuple(Choice(c.opcode, c.operator, True) for c in self.primary)

    @property
    def skipped(self) -> bool:
        """Whether one reads zeros on all-zero inputs (the zero way is a way of its own)."""
        return any(not choice.taken for choice in self.primary)


def _copy_reads(read: Model, model: Model) -> _CopyReads:
    """Every plan's FULLY_CONNECTEDs that unpack an int4 filter (`model`'s plans: the view's
    under XNNPACK), each primary one named by `read`'s operator index (the one writing its
    output) and its input on all-zero inputs read off `read` (zero_values)."""
    plans = [plan.prepared for plan in litert_plans(model)]
    unpacking = [
        (state, node)
        for state in plans
        for node in state.nodes
        if node.opcode == _READS and four_bit.unpacked_bytes(model, state.index, node.inputs)
    ]
    if not unpacking:
        return _CopyReads((), {}, {})
    states = zero_values.zero_tensors(read)  # reads every float constant: only when needed
    outputs = {op.outputs: op.index for op in read.subgraphs[0].operators} if read.subgraphs else {}
    primary: list[Choice] = []
    given: dict[tuple[int, int], bool | tuple[bool, ...]] = {}
    zero_given: dict[tuple[int, int], bool | tuple[bool, ...]] = {}
    for state, node in unpacking:
        key = (state.index, node.position)
        given[key] = True
        zero = states.get(node.inputs[0]) if state.index == 0 else None  # children: not known
        if zero is not None:
            zero_given[key] = not zero
        if state.index == 0:
            written = model.subgraphs[0].operators[node.operator].outputs
            primary.append(Choice(_READS, outputs.get(written, node.operator), zero is not True))
    return _CopyReads(tuple(primary), given, zero_given)


def _operator_names(read: Model, model: Model) -> dict[int, int]:
    """The plan's IF and WHILE operators by the given model's index (the delegate keeps them,
    in order, while it replaces the operators around them)."""
    ours = [i for i, op in enumerate(model.subgraphs[0].operators) if op.opcode in _DECIDED]
    given = [i for i, op in enumerate(read.subgraphs[0].operators) if op.opcode in _DECIDED]
    return dict(zip(ours, given, strict=True)) if len(ours) == len(given) else {}


def every_way(ways: Sequence[Way]) -> bool:
    """Whether `ways` are every way of their decisions (2 ** N of N IFs and WHILEs, and one
    more where a FULLY_CONNECTED reads zeros on all-zero inputs), not the zero way alone."""
    if not ways:
        return False
    decided = sum(choice.opcode in _DECIDED for choice in ways[0].choices)
    zero_reads = any(c.opcode == _READS and not c.taken for way in ways for c in way.choices)
    return bool(len(ways) == 2**decided + zero_reads)


def ways_notes(model: Model, ways: Sequence[Way]) -> tuple[str, ...]:
    """The heap's note on the ways a model input picks (`model`: the plan `heap_ways` read):
    each way's figures, or that past MOST_DECISIONS they are not replayed one by one."""
    if ways and every_way(ways):
        return (ways_note(ways),)
    count = len(decisions(model))
    if count <= MOST_DECISIONS:
        return ()
    beyond = (
        f"a model input picks the way the first invoke takes at {count} IFs and WHILEs of the "
        f"primary subgraph ({_ways_count(count)} ways, more than the {2**MOST_DECISIONS} "
        "replayed one by one): the figures above count the larger of each, which a device must "
        "hold"
    )
    if not ways:
        return (f"{beyond}; no way is replayed on its own",)
    return (f"{beyond}; replayed on its own only {_described(ways)}",)


def _ways_count(decided: int) -> str:
    return f"{2**decided:,}" if decided <= 16 else f"2^{decided}"


def ways_note(ways: Sequence[Way]) -> str:
    """The ways in words, for the heap's notes."""
    if _reads_alone(ways):
        return (
            f"the figures above are the run where {ways[0].words}, the way all-zero inputs "
            "take too; an input that reaches it as all zeros holds less (no copy)"
        )
    return (
        f"a model input picks the way the first invoke takes: {_described(ways)}; "
        "the figures above count the larger of each, which a device must hold"
    )


def _described(ways: Sequence[Way]) -> str:
    return "; ".join(
        f"{format_bytes_exact(way.after_first_invoke)} after the first invoke and "
        f"{format_bytes_exact(way.peak)} at the peak if {way.words}"
        + (" (the way all-zero inputs take)" if way.zero_inputs else "")
        + ("" if way.exact else " (still a bound: a run-time value in a loop's body)")
        for way in ways
    )


def decided_parts(ways: Sequence[Way], parts: Sequence[HeapPart]) -> frozenset[str]:
    """The parts counted as the larger of each way (not exact in `parts`) that every way has
    exact: none unless every way is replayed and exact."""
    if not every_way(ways) or not all(way.exact for way in ways):
        return frozenset()
    exact = [{part.name for part in way.parts if part.exact} for way in ways]
    return frozenset(
        part.name
        for part in parts
        if not part.exact and not part.allowance and all(part.name in names for names in exact)
    )


def ways_words(ways: Sequence[Way], exact: str) -> str:
    """The heap's estimate words where the ways explain its non-exact parts: the sizing
    figures are the larger way's, each way `exact` (how), the all-zero-inputs way named."""
    if _reads_alone(ways):
        return f"{SIZING_WORDS} the run where {ways[0].words}, {exact}"
    zero = next((way for way in ways if way.zero_inputs), None)
    named = f"; all-zero inputs take the one where {zero.words}" if zero is not None else ""
    return (
        f"{SIZING_WORDS} the larger of the {len(ways)} ways a model input picks, which a "
        f"device must hold; each way {exact}{named}"
    )


SIZING_WORDS = "sizing figures:"


def _reads_alone(ways: Sequence[Way]) -> bool:
    """One way, of FULLY_CONNECTEDs that read a non-zero input even on all-zero inputs."""
    return (
        len(ways) == 1
        and bool(ways[0].choices)
        and all(choice.opcode == _READS and choice.taken for choice in ways[0].choices)
    )


def way_document(way: Way) -> dict[str, object]:
    """One way as JSON (heap_json's `ways`)."""
    return {
        "choices": [
            {"opcode": choice.opcode, "operator": choice.operator, "taken": choice.taken_words}
            for choice in way.choices
        ],
        "after_setup_bytes": way.after_setup,
        "after_first_invoke_bytes": way.after_first_invoke,
        "peak_bytes": way.peak,
        "exact": way.exact,
        "zero_inputs": way.zero_inputs,
    }
