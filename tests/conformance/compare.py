"""Prediction vs measurement for one case on one target → the fields that differ."""

from __future__ import annotations

from typing import Any

# Fields compared when both sides loaded; categories are compared per name.
FIELDS = ("head", "tail", "min_arena", "tail_plain", "min_arena_plain")


def differences(predicted: dict[str, Any], measured: dict[str, Any]) -> list[str]:
    """Every disagreement, as 'field: predicted X, measured Y' lines ([] when exact)."""
    if predicted["loads"] != measured["loads"]:
        what = measured.get("error") if not measured["loads"] else predicted.get("reasons")
        return [f"loads: predicted {predicted['loads']}, measured {measured['loads']} ({what})"]
    if not measured["loads"]:
        return []
    found = [
        f"{name}: predicted {predicted.get(name)}, measured {measured[name]}"
        for name in FIELDS
        if name in measured and predicted.get(name) != measured[name]
    ]
    if "categories" not in measured:  # measured with the plain allocator only
        return found
    mine, theirs = predicted.get("categories", {}), measured["categories"]
    for name in sorted(set(mine) | set(theirs)):
        if mine.get(name) != theirs.get(name):
            found.append(
                f"category '{name}': predicted {mine.get(name)}, measured {theirs.get(name)}"
            )
    return found


def under_predicted(predicted: dict[str, Any], measured: dict[str, Any]) -> bool:
    """True when a model the runtime sets up is predicted to need less than it does (or not to
    load at all): the error a user pays for."""
    if not measured["loads"]:
        return False
    if not predicted["loads"]:
        return True
    return any(
        name in measured and (predicted.get(name) or 0) < measured[name]
        for name in ("min_arena", "min_arena_plain")
    )
