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
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from arenalens.ir import Model
from arenalens.runtimes.litert.heap_control_flow import Ways
from arenalens.runtimes.litert.heap_part import HeapPart, PhasedFigures
from arenalens.runtimes.litert.prepare.state import RuntimeNode
from arenalens.runtimes.litert.rules import litert_plans
from arenalens.units import format_bytes_exact

MOST_DECISIONS = 3
_DECIDED = ("IF", "WHILE")


@dataclass(frozen=True, slots=True)
class Choice:
    """One IF's branch or one WHILE's body run, as a run-time value picks it."""

    opcode: str  # IF | WHILE
    operator: int  # its operator index in the model's primary subgraph
    taken: bool  # IF: its then branch; WHILE: its body runs

    @property
    def words(self) -> str:
        if self.opcode == "IF":
            return f"the IF at operator {self.operator} takes its {self.taken_words} branch"
        return f"the WHILE at operator {self.operator} {self.taken_words} its body"

    @property
    def taken_words(self) -> str:
        if self.opcode == "IF":
            return "then" if self.taken else "else"
        return "runs" if self.taken else "never runs"


@dataclass(frozen=True, slots=True)
class Way(PhasedFigures):
    """The heap's figures when the run takes `choices`."""

    choices: tuple[Choice, ...]
    parts: tuple[HeapPart, ...]
    zero_inputs: bool  # the way all-zero inputs take (the wheel measurement's)

    @property
    def exact(self) -> bool:
        """Its first invoke replayed with no other way counted (no IF or WHILE in a loop's
        body picking at run time, no other bound)."""
        return all(
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
    undecided: `every_way` tells the two apart); () for none."""
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
        and (node.opcode == "IF" or node.first_check is None)
    }  # fmt: skip
    if not (found or inner):
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
        ways.append(Way(choices, tuple(parts_of({**inner, **given} if zero else given)), zero))
    return tuple(ways)


def _operator_names(read: Model, model: Model) -> dict[int, int]:
    """The plan's IF and WHILE operators by the given model's index (the delegate keeps them,
    in order, while it replaces the operators around them)."""
    ours = [i for i, op in enumerate(model.subgraphs[0].operators) if op.opcode in _DECIDED]
    given = [i for i, op in enumerate(read.subgraphs[0].operators) if op.opcode in _DECIDED]
    return dict(zip(ours, given, strict=True)) if len(ours) == len(given) else {}


def every_way(ways: Sequence[Way]) -> bool:
    """Whether `ways` are every way of their decisions (2 ** N of N), not the zero way alone."""
    return bool(ways) and len(ways) == 2 ** len(ways[0].choices)


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
    zero = next((way for way in ways if way.zero_inputs), None)
    named = f"; all-zero inputs take the one where {zero.words}" if zero is not None else ""
    return (
        f"{SIZING_WORDS} the larger of the {len(ways)} ways a model input picks, which a "
        f"device must hold; each way {exact}{named}"
    )


SIZING_WORDS = "sizing figures:"


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
