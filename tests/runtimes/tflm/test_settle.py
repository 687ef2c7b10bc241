"""`settle`: the minimal arena, head and tails from one walk agree with replaying every size."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalens.runtimes.tflm.setup_layout import HOST_64
from arenalens.runtimes.tflm.setup_replay import Action, Allocation, ResidueWalk, replay, settle

_ALIGNMENTS = st.sampled_from([1, 2, 4, 8, 16])
_FAILING = st.lists(
    st.tuples(st.integers(0, 400), st.integers(0, 60)).map(lambda lh: (lh[0], lh[0] + lh[1])),
    max_size=2,
).map(tuple)


def _step() -> st.SearchStrategy[list[Allocation]]:
    """One step as setup_sequence writes them: the planner always followed by a temp reset (its
    temp end is the aligned tail, a position that depends on the size)."""
    return st.one_of(
        st.builds(
            lambda n, a, f: [Allocation(Action.PERSISTENT, n, a, fails_at=f)],
            st.integers(0, 200),
            _ALIGNMENTS,
            st.one_of(st.just(()), _FAILING),
        ),
        st.builds(lambda n, a: [Allocation(Action.TEMP, n, a)], st.integers(0, 100), _ALIGNMENTS),
        st.builds(lambda n: [Allocation(Action.HEAD, n, 8)], st.integers(0, 300)),
        st.just([Allocation(Action.RESET_TEMP, 0)]),
        st.just([Allocation(Action.RELEASE_HEAD, 0)]),
        st.builds(
            lambda n: [Allocation(Action.PLANNER, n, 16), Allocation(Action.RESET_TEMP, 0)],
            st.integers(0, 10),
        ),
    )


@settings(max_examples=80, deadline=None)
@given(st.lists(_step(), min_size=1, max_size=40))
def test_settled_figures_are_the_replays_of_every_size_from_the_minimum(
    parts: list[list[Allocation]],
) -> None:
    sequence = tuple(step for part in parts for step in part)
    settled = settle(sequence, HOST_64)
    for size in range(max(settled.minimal_arena, 0), max(settled.minimal_arena, 0) + 17):
        outcome = replay(sequence, size, HOST_64)
        assert outcome.fits
        assert outcome.tail == settled.tail(size)
        assert settled.head is None or outcome.head == settled.head


def test_the_head_is_left_to_a_replay_while_the_planner_holds_the_temp_end() -> None:
    sequence = (
        Allocation(Action.PERSISTENT, 40, 16),
        Allocation(Action.PLANNER, 1, 16),
    )
    assert settle(sequence, HOST_64).head is None
    assert settle((*sequence, Allocation(Action.RESET_TEMP, 0)), HOST_64).head == 0


@settings(max_examples=80, deadline=None)
@given(st.lists(_step(), min_size=1, max_size=40), st.lists(st.integers(0, 80), max_size=3))
def test_a_walk_fed_in_parts_settles_as_the_whole_sequence(
    parts: list[list[Allocation]], cuts: list[int]
) -> None:
    """`ResidueWalk.take` part by part (the walk may end a part in its lockstep, its residues
    grouped) settles to what one walk of the whole sequence does."""
    sequence = [step for part in parts for step in part]
    walk = ResidueWalk(HOST_64.planner_bytes_per_buffer)
    start = 0
    for cut in sorted(min(cut, len(sequence)) for cut in cuts):
        walk.take(sequence[start:cut])
        start = cut
    walk.take(sequence[start:])
    try:
        whole = settle(sequence, HOST_64)
    except ValueError:
        with pytest.raises(ValueError):
            walk.settled()
        return
    assert walk.settled() == whole
