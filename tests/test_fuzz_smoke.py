"""Fuzzing, short: every crafter and mutator through every stage, and the harness's own limits.

The long campaign is `fuzz/__main__.py` (100,000 inputs); this runs in well under a minute.
"""

from __future__ import annotations

import os
import random
import time

import pytest
from fuzz.harness import (
    CRASH,
    HANG,
    MEMORY,
    OK,
    CampaignConfig,
    DeadlineExceeded,
    deadline,
    generate_input,
    run_campaign,
    run_stages,
)
from fuzz.hostile import HOSTILE
from fuzz.layout import SiteKind, find_layout
from fuzz.mutate import MUTATORS, mutate, mutate_kind
from fuzz.seeds import Seed, built_seeds
from fuzz.stages import Stage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hang_guard import HEADROOM, wall_bound

SEEDS = built_seeds()
SMALL_SEEDS = [seed for seed in SEEDS if len(seed.data) < 10_000]


def assert_acceptable(data: bytes, recipe: str, seconds: float = 20, deep: bool = True) -> None:
    # CPU seconds of this process: other processes' load on the machine cannot fail the test.
    started = time.process_time()
    with deadline(wall_bound(seconds * HEADROOM * 3), cpu_seconds=seconds * HEADROOM):
        outcome = run_stages(data, deep=deep)
    used = time.process_time() - started
    assert not outcome.failed, f"{recipe}: {outcome.signature}: {outcome.detail}"
    assert used < seconds * HEADROOM, f"{recipe}: took {used:.1f} s of CPU (hang guard)"


# One test per seed, so that the suite's workers share them (together they are its longest test).
@pytest.mark.parametrize("seed", SEEDS, ids=[seed.name for seed in SEEDS])
def test_seeds_run_every_stage(seed: Seed) -> None:
    with deadline(wall_bound(300), cpu_seconds=30):
        outcome = run_stages(seed.data)
    assert outcome.kind == OK, f"{seed.name}: {outcome.detail}"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_crafter_ends_in_a_result_or_model_error(name: str) -> None:
    for seed in range(2):
        # Every stage on the first; the fast tier on the other (the large ones take seconds).
        data = HOSTILE[name](random.Random(seed))
        assert_acceptable(data, f"{name} seed {seed}", deep=seed == 0)


@pytest.mark.parametrize("name", [name for name, _, _ in MUTATORS])
def test_mutator_outputs_end_in_a_result_or_model_error(name: str) -> None:
    mutator = next(m for n, m, _ in MUTATORS if n == name)
    corpus = [seed.data for seed in SMALL_SEEDS]
    rng = random.Random(name)
    for index in range(40):
        seed = rng.choice(SMALL_SEEDS)
        mutation = mutator(seed.data, rng, corpus)
        # The deep tier (charts, diagnose, reorder, optimize) on 1 in 8, as the campaign does.
        deep = index % 8 == 0
        assert_acceptable(mutation.data, f"{seed.name} | {mutation.recipe}", deep=deep)


@pytest.mark.parametrize("kind", list(SiteKind))
def test_each_structural_site_kind_mutated_alone(kind: SiteKind) -> None:
    mutator = mutate_kind(kind)
    rng = random.Random(str(kind))
    for _ in range(15):
        seed = rng.choice(SMALL_SEEDS)
        mutation = mutator(seed.data, rng, ())
        assert_acceptable(mutation.data, f"{seed.name} | {mutation.recipe}", deep=False)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.sampled_from(SMALL_SEEDS), st.randoms(use_true_random=False), st.integers(0, 7))
def test_hypothesis_driven_mutation(seed: object, rng: random.Random, tier: int) -> None:
    data = seed.data  # type: ignore[attr-defined]
    mutation = mutate(data, rng, [s.data for s in SMALL_SEEDS])
    assert_acceptable(mutation.data, mutation.recipe, deep=tier == 0)  # deep on 1 in 8


def test_inputs_are_deterministic() -> None:
    first = [generate_input(7, index, SEEDS) for index in range(40)]
    again = [generate_input(7, index, SEEDS) for index in range(40)]
    assert first == again
    assert len({data for data, _ in first}) > 30


def test_layout_walk_finds_the_structure_of_every_seed() -> None:
    for seed in SEEDS:
        layout = find_layout(seed.data)
        kinds = {site.kind for site in layout.sites}
        assert {SiteKind.ROOT, SiteKind.UOFFSET, SiteKind.LENGTH, SiteKind.INDEX} <= kinds
        assert "Tensor" in layout.tables and "Operator" in layout.tables


def test_layout_walk_never_raises_on_junk() -> None:
    rng = random.Random(0)
    for size in (0, 3, 4, 8, 64, 4096):
        for _ in range(50):
            find_layout(rng.randbytes(size))


def test_short_campaign_has_no_failures() -> None:
    result = run_campaign(CampaignConfig(executions=120, seed=1, workers=2, time_limit_s=30))
    assert result.executions == 120
    failures = [f"{e.index}: {e.outcome.signature} ({e.recipe})" for e in result.failures]
    assert not failures, "\n".join(failures)
    assert result.counts[OK] > 0


def sleep_forever(state: dict[str, object]) -> None:
    time.sleep(3600)


def spin_in_c(state: dict[str, object]) -> None:
    # One C call that never returns to the interpreter, so SIGALRM cannot interrupt it.
    sum(range(10**14))


def allocate_too_much(state: dict[str, object]) -> None:
    state["blob"] = bytearray(8 << 30)


def raise_key_error(state: dict[str, object]) -> None:
    raise KeyError("deliberate")


def exit_worker(state: dict[str, object]) -> None:
    os._exit(3)


def campaign_with(stage: Stage, **limits: float) -> dict[str, int]:
    config = CampaignConfig(executions=3, workers=1, batch=2, **limits)  # type: ignore[arg-type]
    result = run_campaign(config, stages=(stage,))
    return {kind: result.counts[kind] for kind in result.counts}


def test_harness_counts_a_hang_the_alarm_can_interrupt() -> None:
    counts = campaign_with(Stage("sleep", sleep_forever), time_limit_s=0.3, wall_limit_s=0.5)
    assert counts == {HANG: 3}


def spin_in_python(state: dict[str, object]) -> None:
    while True:
        pass


def test_harness_limits_cpu_time() -> None:
    started = time.perf_counter()
    counts = campaign_with(Stage("spin", spin_in_python), time_limit_s=0.3, wall_limit_s=60)
    assert counts == {HANG: 3}
    assert time.perf_counter() - started < 30  # the CPU limit fired, not the wall backstop


def test_a_deadline_swallowed_once_fires_again() -> None:
    # Seen under load: the alarm's exception landed in a weakref callback, Python reported it as
    # "unraisable" and the block ran on. Here the block swallows the first one itself.
    swallowed = 0
    started = time.perf_counter()
    with pytest.raises(DeadlineExceeded), deadline(0.2):
        while time.perf_counter() - started < 20:
            try:
                while time.perf_counter() - started < 20:
                    pass
            except DeadlineExceeded:
                swallowed += 1
                if swallowed > 1:
                    raise
    assert swallowed == 2
    assert time.perf_counter() - started < 10


def test_harness_kills_a_worker_stuck_in_c_code() -> None:
    counts = campaign_with(Stage("spin", spin_in_c), time_limit_s=0.3, watchdog_s=2)
    assert counts == {HANG: 3}


def test_harness_counts_a_memory_blowup() -> None:
    counts = campaign_with(Stage("allocate", allocate_too_much), memory_limit_bytes=2 << 30)
    assert counts == {MEMORY: 3}


def test_harness_counts_crashes_and_dead_workers() -> None:
    assert campaign_with(Stage("raise", raise_key_error)) == {CRASH: 3}
    assert campaign_with(Stage("exit", exit_worker)) == {CRASH: 3}


def test_structure_mutation_of_a_file_with_a_root_but_no_tables() -> None:
    # Found by the campaign: retargeting the root offset picked a table type from an empty
    # list, and the IndexError killed the worker (and the parent, regenerating that input).
    data = bytes.fromhex("0900000054464c335ce17008")
    assert find_layout(data).sites and not find_layout(data).tables
    for seed in range(200):
        mutate_kind(SiteKind.ROOT)(data, random.Random(seed), ())


def break_generation(seed: int, index: int, corpus: object) -> tuple[bytes, str]:
    raise IndexError("deliberate")


def test_a_generator_failure_is_counted_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    from fuzz import harness

    monkeypatch.setattr(harness, "generate_input", break_generation)
    result = run_campaign(CampaignConfig(executions=3, workers=1, batch=2))
    assert result.counts[CRASH] == 3
    assert all(e.outcome.stage == "generate" for e in result.failures)
