"""arenalens's prediction for one case on one target, in the measurement's shape."""

from __future__ import annotations

from typing import Any

from arenalens.builds.build import Build
from arenalens.planning.registry import run_planner
from arenalens.runtimes.tflm.arena import arenas
from arenalens.runtimes.tflm.budget import predict_setup
from arenalens.runtimes.tflm.support import support
from arenalens.tflite.reader import parse_model
from tests.conformance.targets import Target


def predict(data: bytes, target: Target) -> dict[str, Any]:
    """Model bytes + target → {loads, head, tail, categories, min_arena[, *_plain]}."""
    model = parse_model(data, "case")
    found = support(model, target.predicted)
    if not found.sets_up:
        return {"loads": False, "reasons": [o.text() for o in found.obstacles]}
    result: dict[str, Any] = {"loads": True, **_figures(data, target.predicted)}
    if target.device:
        plain = _figures(data, target.plain)
        result["tail_plain"] = plain["tail"]
        result["min_arena_plain"] = plain["min_arena"]
    if found.unmodelled:
        result["unmodelled"] = list(found.unmodelled)
    return result


def _figures(data: bytes, build: Build) -> dict[str, Any]:
    model = parse_model(data, "case")
    arena = arenas(model, build=build)[0]
    plan = run_planner("tflm_greedy", arena.problem)
    prediction = predict_setup(model, arena, plan, build)
    return {
        "head": prediction.head,
        "tail": prediction.tail,
        "min_arena": prediction.minimal_arena,
        "categories": {
            name: {"used": used, "requested": requested, "count": count}
            for name, (used, requested, count) in prediction.aligned.categories.items()
        },
    }
