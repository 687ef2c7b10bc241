"""A board check's placement search (`placement.place_lazily`): the same placement as trying every
way to put the split's buffers in the board's blocks, and no work a check on a board does not
need: the setup's steps are never written, and the split is made only when a placement in
several buffers may win."""

from __future__ import annotations

from itertools import permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arenalens
from arenalens.blocks import Block, blocks
from arenalens.placement import (
    ARENA,
    NON_PERSISTENT,
    PERSISTENT,
    VARIABLES,
    BoardPlacement,
    place,
    placement_score,
)
from arenalens.runtimes.arena_split import ArenaSplit, TwoBuffers, VariableArena
from arenalens.targets import BOARDS, CHIPS, Target
from tests.fixtures.bank_models import BANK_MODELS

KIB = 1024
BANKED = [target for target in (*BOARDS, *CHIPS) if len(target.banks) > 1]


def _every_way(split: ArenaSplit, target: Target, reserve: int) -> tuple[object, object]:
    """The search as the module's docstring states it: every assignment of each layout's buffers
    to disjoint blocks, the fitting ones ordered by score; (score..., bytes per part) of the
    winner, or () when none fits, then the fewest bytes over."""
    candidates = blocks(target.banks, reserve)
    layouts = [
        ((ARENA,), (split.single_bytes,)),
        (
            (PERSISTENT, NON_PERSISTENT),
            (split.two.persistent_bytes, split.two.non_persistent_bytes),
        ),
    ]
    if split.variables is not None:
        apart = split.variables
        layouts.append(((ARENA, VARIABLES), (apart.single_bytes, apart.arena_bytes)))
        layouts.append(
            (
                (PERSISTENT, NON_PERSISTENT, VARIABLES),
                (apart.two.persistent_bytes, apart.two.non_persistent_bytes, apart.arena_bytes),
            )
        )
    found: list[tuple[tuple[int, ...], tuple[str, ...]]] = []
    short: list[int] = []
    for parts, sizes in layouts:
        for chosen in permutations(candidates, len(parts)):
            if any(a.shares_a_bank_with(b) for a, b in permutations(chosen, 2)):
                continue
            short.append(
                sum(max(0, n - b.available_bytes) for n, b in zip(sizes, chosen, strict=True))
            )
            if short[-1] == 0:
                found.append((_score(parts, chosen, sizes), tuple(b.name for b in chosen)))
    if not found:
        return ((), (min(short),))
    score, names = min(found, key=lambda item: item[0])
    return (score, names)


def _score(
    parts: tuple[str, ...], chosen: tuple[Block, ...], sizes: tuple[int, ...]
) -> tuple[int, ...]:
    from arenalens.placement import BankUse, Placement

    uses = tuple(BankUse(p, n, b) for p, n, b in zip(parts, sizes, chosen, strict=True))
    return placement_score(Placement("", uses, VARIABLES in parts, ()))


def _answer(found: BoardPlacement) -> tuple[object, object]:
    if found.best is None:
        return ((), (found.short_bytes,))
    best = found.best
    return (placement_score(best), tuple(use.block.name for use in best.uses))


sizes = st.integers(min_value=1, max_value=3 * 1024 * KIB)


@settings(max_examples=300, deadline=None)
@given(
    board=st.sampled_from(BANKED),
    single=sizes,
    persistent=sizes,
    non_persistent=sizes,
    variables=st.none() | st.tuples(sizes, sizes, sizes, st.integers(1, 64)),
    reserve=st.sampled_from([0, 4 * KIB, 48 * KIB]),
)
def test_the_placement_is_the_fastest_of_every_way(
    *,
    board: Target,
    single: int,
    persistent: int,
    non_persistent: int,
    variables: tuple[int, int, int, int] | None,
    reserve: int,
) -> None:
    two = TwoBuffers(persistent, non_persistent, persistent, non_persistent, 0)
    apart = None
    if variables is not None:
        table, p, n, count = variables
        apart = VariableArena(table, count, single, TwoBuffers(p, n, p, n, 0))
    split = ArenaSplit(single, two, apart)
    assert _answer(place(split, board, reserve_bytes=reserve)) == _every_way(split, board, reserve)


def test_a_board_check_writes_no_setup_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The split is read from the settled (condensed) sequence: the steps with their messages
    are for reports."""
    from arenalens.runtimes.tflm import budget

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a check wrote the setup sequence")

    monkeypatch.setattr(budget, "setup_sequence", refuse)
    arenalens.clear_caches()
    data = dict(BANK_MODELS)["bank_two_banks"]()
    verdict = arenalens.check(data, target="nucleo-h743zi")
    assert verdict.fit is not None and verdict.fit.placement is not None


def test_a_one_arena_in_the_fastest_block_makes_no_split(monkeypatch: pytest.MonkeyPatch) -> None:
    from arenalens.runtimes.tflm import budget

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the split was made")

    monkeypatch.setattr(budget, "two_buffer_split", refuse)
    arenalens.clear_caches()
    verdict = arenalens.check("example:kws_ds_cnn", target="nucleo-h743zi")
    assert verdict.fit is not None and verdict.fit.placement is not None
    best = verdict.fit.placement.best
    assert best is not None and [use.block.name for use in best.uses] == ["dtcm"]
