"""The planner and reorderer registries: clashes refused, built-ins importable in any order."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arenalens.errors import UsageError
from arenalens.planning import register_planner
from arenalens.reorder import register_reorderer


def test_a_user_planner_named_like_a_built_in_is_refused() -> None:
    with pytest.raises(ValueError, match="planner named 'tflm_greedy' is already registered"):
        register_planner("tflm_greedy", description="mine")(lambda problem: {})


def test_a_user_reorderer_named_like_a_built_in_is_refused() -> None:
    with pytest.raises(ValueError, match="reorderer named 'beam' is already registered"):
        register_reorderer("beam", description="mine")(lambda problem: [])


def test_unknown_names_list_the_known_ones() -> None:
    from arenalens.planning import get_planner
    from arenalens.reorder import get_reorderer

    with pytest.raises(UsageError, match="unknown planner 'nope' \\(known: best, "):
        get_planner("nope")
    with pytest.raises(UsageError, match="unknown reorderer 'nope' \\(known: auto, "):
        get_reorderer("nope")


@pytest.mark.parametrize(
    "module",
    ["arenalens.reorder.beam", "arenalens.reorder.auto", "arenalens.planning.best"],
)
def test_a_built_in_module_imported_first_registers_every_built_in(module: str) -> None:
    # A fresh interpreter: the module is the first of its package to be imported.
    code = (
        f"import {module}\n"
        "from arenalens.planning import planner_names\n"
        "from arenalens.reorder import reorderer_names\n"
        "print(len(planner_names()), len(reorderer_names()))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    planners, reorderers = map(int, done.stdout.split())
    assert planners >= 10 and reorderers >= 4
