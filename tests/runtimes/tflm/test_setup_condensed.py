"""`setup_condensed`: the setup sequence a check settles, with runs of temp and tail allocations
made one step each (`condensed_sequence`), gives the whole sequence's figures at every arena
size; and `settled_setup`, which takes the kernels' Prepare events straight into the settle walk,
gives what settling the whole sequence gives."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arenalens.examples import example_bytes
from arenalens.ir import DTYPES_BY_NAME, Quantization, Tensor, TensorKind
from arenalens.pipeline import analyze, runtime_build
from arenalens.runtimes.tflm.alignment import ARENA_ALIGNMENT
from arenalens.runtimes.tflm.budget import plan_facts, predict_setup
from arenalens.runtimes.tflm.kernels.base import (
    MAX_SCRATCH_PER_OPERATOR,
    Event,
    Persistent,
    TempBytes,
)
from arenalens.runtimes.tflm.kernels.setups import OperatorSetup
from arenalens.runtimes.tflm.setup import (
    PlanFacts,
    _tensor_struct,
    heads_after_prepare,
    setup_sequence,
    setups_with_resources,
)
from arenalens.runtimes.tflm.setup_condensed import (
    _Condensed,
    _take_prepares,
    condensed_sequence,
    settled_setup,
)
from arenalens.runtimes.tflm.setup_layout import HOST_64, RuntimeLayout, layout_for
from arenalens.runtimes.tflm.setup_replay import Action, Allocation, ResidueWalk, replay, settle
from arenalens.tflite.reader import load_model

_ALIGNMENTS = st.sampled_from([1, 2, 4, 8, 16])
_STEP = st.one_of(
    st.tuples(st.just(Action.TEMP), st.integers(0, 90), _ALIGNMENTS),
    st.tuples(st.just(Action.PERSISTENT), st.integers(0, 120), _ALIGNMENTS),
    st.tuples(st.just(Action.HEAD), st.integers(0, 200), st.just(4)),
)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 60), st.lists(_STEP, max_size=40), st.integers(0, 8))
# A tail run cannot take a step whose rounded size is not a multiple of the run's alignment,
# nor one whose alignment does not divide it.
@example(0, [(Action.PERSISTENT, 0, 2), (Action.PERSISTENT, 1, 1)], 0)
@example(0, [(Action.PERSISTENT, 1, 4), (Action.PERSISTENT, 16, 16)], 0)
# A temp run's end is checked against the tail before the tail allocation that follows it, not
# after; a later temp allocation of the run, after it, checks for both.
@example(0, [(Action.TEMP, 90, 1), (Action.PERSISTENT, 120, 16), (Action.HEAD, 0, 4)], 0)
@example(
    0,
    [
        (Action.TEMP, 90, 1),
        (Action.PERSISTENT, 120, 16),
        (Action.TEMP, 8, 4),
        (Action.PERSISTENT, 20, 16),
        (Action.HEAD, 0, 4),
    ],
    0,
)
def test_condensed_runs_fit_and_leave_what_every_step_leaves_at_every_size(
    first_head: int, steps: list[tuple[Action, int, int]], planned: int
) -> None:
    """Operators' steps as `setup_sequence` writes them (a temp reset before each head resize),
    against the same steps through `_Condensed`, then the planner: the same settled figures, and
    at every size around the minimum the same fit (and head and tail where it fits)."""
    start = [Allocation(Action.HEAD, first_head, 4)]
    whole = list(start)
    condensed = _Condensed(list(start), HOST_64, first_head)
    for action, nbytes, alignment in steps:
        if action is Action.HEAD:
            whole.extend((Allocation(Action.RESET_TEMP, 0), Allocation(action, nbytes, alignment)))
            condensed.events((), nbytes)  # a phase without events, then the head resize
            continue
        whole.append(Allocation(action, nbytes, alignment))
        if action is Action.TEMP:
            condensed.temp_bytes(nbytes, alignment)
        elif alignment == ARENA_ALIGNMENT:  # a kernel's persistent buffer
            condensed.events((Persistent(nbytes, "buffer"),))
        else:  # an operator's parsed options
            condensed.options([(nbytes, alignment)])
    condensed.flush()
    end = (Allocation(Action.PLANNER, planned, 16), Allocation(Action.RESET_TEMP, 0))
    full, short = (*whole, *end), (*condensed.steps, *end)
    assert len(short) <= len(full)
    settled = settle(full, HOST_64)
    assert settle(short, HOST_64) == settled
    for size in range(max(settled.minimal_arena - 16, 0), settled.minimal_arena + 16):
        expected, found = replay(full, size, HOST_64), replay(short, size, HOST_64)
        assert found.fits == expected.fits
        if expected.fits:  # (a replay that fails may stop at another step of the run)
            assert (found.head, found.tail) == (expected.head, expected.tail)


@pytest.mark.parametrize("example", ["kws_ds_cnn", "branchy_inception", "resnet8_cifar"])
@pytest.mark.parametrize("build_name", [None, "cortex-m7/cmsis-nn", "esp32s3/esp-nn"])
def test_a_models_condensed_sequence_settles_as_its_whole_sequence(
    example: str, build_name: str | None
) -> None:
    model = load_model(example_bytes(example))
    build = runtime_build("tflm", build_name)
    result = analyze(model, build=build).arenas[0]
    layout = layout_for(build)
    operators = setups_with_resources(model, build)
    facts = plan_facts(model, result.arena, result.plan, build, operators)
    table = build.resource_variables
    whole = setup_sequence(model, facts, layout, operators, resource_table=table)
    condensed = condensed_sequence(model, facts, layout, operators, resource_table=table)
    assert condensed is not None
    assert len(condensed) < len(whole) / 2
    assert settle(condensed, layout) == settle(whole, layout)
    settled = settled_setup(model, facts, layout, operators, resource_table=table)
    assert settled == settle(whole, layout)
    # What a report reads: the whole sequence, written when asked, with every step's message.
    prediction = predict_setup(model, result.arena, result.plan, build)
    assert prediction.sequence == whole
    assert prediction.settled == settle(whole, layout)


def test_kernel_buffers_over_live_temps_settle_the_whole_sequence(shared_path: Path) -> None:
    """CMSIS-NN's LSTM fills buffers while its temps are live: their failing starts need every
    temp struct's place, so the prediction settles the whole sequence."""
    model = load_model(shared_path / "tflite_micro__trained_lstm_int8.tflite")
    build = runtime_build("tflm", "cortex-m7/cmsis-nn")
    layout = layout_for(build)
    result = analyze(model, build=build).arenas[0]
    operators = setups_with_resources(model, build)
    facts = plan_facts(model, result.arena, result.plan, build, operators)
    assert condensed_sequence(model, facts, layout, operators) is None
    prediction = predict_setup(model, result.arena, result.plan, build)
    assert any(step.fails_at for step in prediction.sequence)
    assert prediction.settled == settle(prediction.sequence, layout)


def _temp_view(channels: int | None) -> Tensor:
    """A tensor whose temp view copies `channels` zero points (None: no quantization)."""
    quantization = None if channels is None else Quantization(0.5, 0, channels, 0)
    return Tensor(
        0, "t", (1, 4), (1, 4), DTYPES_BY_NAME["INT8"], 0, False, False,
        TensorKind.INTERMEDIATE, False, False, quantization,
    )  # fmt: skip


_VIEW = st.builds(_temp_view, st.sampled_from([None, 1, 2, 3, 8]))
_EVENT = st.one_of(
    _VIEW,
    st.lists(_VIEW, min_size=1, max_size=4).map(tuple),  # a run of views (`TempTensors`)
    st.builds(Persistent, st.integers(0, 120), st.just("buffer"), st.none()),
    st.builds(TempBytes, st.integers(0, 90), _ALIGNMENTS),
)


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 120), st.sampled_from([4, 8])), max_size=6),
    st.integers(0, 120),
    st.lists(st.tuples(st.lists(_EVENT, max_size=8), st.integers(0, 200)), max_size=8),
    st.integers(0, 8),
    st.sampled_from(["", "cortex-m7/cmsis-nn"]),
)
def test_prepares_taken_into_the_walk_settle_as_their_written_steps(
    structs: list[tuple[int, int]],
    first_buffer: int,
    phases: list[tuple[list[Event], int]],
    planned: int,
    build_name: str,
) -> None:
    """Kernel Prepare events taken straight into the settle walk's lockstep (`_take_prepares`)
    against the steps `setup_sequence` writes for them (each temp tensor's struct and
    quantization copies, a temp reset and the head resize after each Prepare), settled whole:
    the same minimal arena, head and every residue's tail."""
    layout = layout_for(runtime_build("tflm", build_name or None))
    start = [Allocation(Action.HEAD, 48, 4)]
    start += [Allocation(Action.PERSISTENT, nbytes, alignment) for nbytes, alignment in structs]
    start.append(Allocation(Action.PERSISTENT, first_buffer, ARENA_ALIGNMENT))
    whole = list(start)
    for events, head in phases:
        for event in events:
            if isinstance(event, Persistent):
                whole.append(Allocation(Action.PERSISTENT, event.nbytes, ARENA_ALIGNMENT))
            elif isinstance(event, TempBytes):
                whole.append(Allocation(Action.TEMP, event.nbytes, event.alignment))
            elif isinstance(event, Tensor):
                whole += _tensor_struct(event, layout, Action.TEMP, "", recorded=False)
            else:  # a run of views, one after another
                for view in cast(tuple[Tensor, ...], event):
                    whole += _tensor_struct(view, layout, Action.TEMP, "", recorded=False)
        whole += [Allocation(Action.RESET_TEMP, 0), Allocation(Action.HEAD, head, 4)]
    end = [Allocation(Action.PLANNER, planned, 16), Allocation(Action.RESET_TEMP, 0)]
    walk = ResidueWalk(layout.planner_bytes_per_buffer)
    walk.take(start)
    lockstep = walk.aligned
    assert lockstep is not None  # from the first 16-aligned tail allocation on
    assert _take_prepares(lockstep, phases, layout)
    walk.take(end)
    assert walk.settled() == settle([*whole, *end], layout)


def _heads_by_key(
    operators: Sequence[OperatorSetup], facts: PlanFacts, layout: RuntimeLayout
) -> list[int]:
    """The head after each Prepare, counting each operator's requests by its (subgraph,
    operator) key: what `heads_after_prepare` finds by position."""
    requests: dict[tuple[int, int], int] = {}
    for request in facts.scratch:
        key = (request.subgraph, request.operator)
        requests[key] = requests.get(key, 0) + 1
    heads, so_far = [], 0
    for setup in operators:
        so_far += requests.get((setup.context.subgraph.index, setup.context.operator.index), 0)
        heads.append(layout.scratch_request * (so_far + MAX_SCRATCH_PER_OPERATOR))
    return heads


@pytest.mark.parametrize("example", ["kws_ds_cnn", "branchy_inception"])
def test_heads_after_prepare_count_each_operators_requests_in_any_order(example: str) -> None:
    """Model order finds a request's operator by position; any other list of setups (reversed,
    a part) is searched: the same heads as counting by key."""
    model = load_model(example_bytes(example))
    build = runtime_build("tflm", "cortex-m7/cmsis-nn")
    result = analyze(model, build=build).arenas[0]
    layout = layout_for(build)
    operators = list(setups_with_resources(model, build))
    facts = plan_facts(model, result.arena, result.plan, build, operators)
    assert facts.scratch  # the case: some kernel asks for scratch
    for order in (operators, operators[::-1], operators[1:], operators[:-1]):
        assert heads_after_prepare(order, facts, layout) == _heads_by_key(order, facts, layout)
