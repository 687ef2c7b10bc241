"""The public planner API: a user registers a planner in a few lines and uses it everywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import arenalens
from arenalens.cli import main
from arenalens.errors import PlanError
from arenalens.planning.registry import PLANNERS, planner_names


@pytest.fixture
def scratch_registry() -> Iterator[None]:
    """Remove planners a test registers, so tests stay independent."""
    planner_names()  # load the built-ins before taking the snapshot
    before = set(PLANNERS)
    yield
    for name in set(PLANNERS) - before:
        del PLANNERS[name]


def test_a_registered_planner_plans_through_analyze(
    scratch_registry: None, shared_path: Path
) -> None:
    @arenalens.register_planner("by_start", description="first fit in order of first use")
    def by_start(problem: arenalens.Problem) -> dict[int, int]:
        offsets: dict[int, int] = {}
        placed: list[arenalens.Buffer] = []
        for buffer in sorted(problem.buffers, key=lambda b: (b.start, b.id)):
            offset = buffer.fixed_offset or 0
            if buffer.fixed_offset is None:
                for other in sorted(placed, key=lambda b: offsets[b.id]):
                    if buffer.conflicts_with(other) and offsets[other.id] < offset + buffer.size:
                        offset = max(offset, offsets[other.id] + other.size)
            offsets[buffer.id] = offset
            placed.append(buffer)
        return offsets

    analysis = arenalens.analyze(
        shared_path / "tflite_micro__hello_world_float.tflite", planner="by_start"
    )
    assert analysis.planner == "by_start"
    assert analysis.primary.plan.planner == "by_start"
    assert analysis.primary.lower_bound <= analysis.primary.plan.arena_size
    assert analysis.budget.required_bytes >= analysis.primary.plan.arena_size


def test_an_invalid_plan_never_reaches_the_user(scratch_registry: None) -> None:
    @arenalens.register_planner("everything_at_zero", description="broken on purpose")
    def everything_at_zero(problem: arenalens.Problem) -> dict[int, int]:
        return {buffer.id: 0 for buffer in problem.buffers}

    problem = arenalens.Problem((arenalens.Buffer(0, 0, 1, 16), arenalens.Buffer(1, 1, 2, 16)))
    with pytest.raises(PlanError, match="buffers 0 and 1 share bytes"):
        arenalens.run_planner("everything_at_zero", problem)


def test_duplicate_names_are_refused(scratch_registry: None) -> None:
    with pytest.raises(ValueError, match="already registered"):
        arenalens.register_planner("tflm_greedy", description="again")(lambda problem: {})


PLUGIN = """
import arenalens

@arenalens.register_planner("plugin_linear", description="no reuse, from a plugin file")
def plugin_linear(problem):
    offsets, cursor = {}, 0
    for buffer in sorted(problem.buffers, key=lambda b: b.id):
        offsets[buffer.id] = cursor
        cursor += buffer.size
    return offsets
"""


def test_the_cli_loads_a_plugin_file(
    scratch_registry: None, shared_path: Path, tmp_path: Path, capsys: Any
) -> None:
    plugin = tmp_path / "my_planners.py"
    plugin.write_text(PLUGIN)
    model = str(shared_path / "tflite_micro__hello_world_float.tflite")
    argv = ["plan", model, "--plugin", str(plugin), "--planner", "plugin_linear", "--json"]
    assert main(argv) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["planner"], document["arena_bytes"]) == ("plugin_linear", 160)
