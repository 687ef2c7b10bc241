"""The resource-variable table a firmware creates, measured on the real wheel: models with
resource variables set up with `MicroResourceVariables::Create(allocator, N)` for several N
(the tflite_micro wheel's own InterpreterWrapper, given N instead of its count), the minimal
arena at each.

    python -m tests.resource_table   # re-measure on the installed wheel, rewrite the cache

The cache (tests/data/resource_table.json) records each model's sha256; tests/test_ladder.py
compares arenalens' figure for `--resource-variables N` with it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

CACHE = Path(__file__).resolve().parent / "data" / "resource_table.json"
TABLES = (None, 8, 20)  # None: the wheel's own count (distinct shared names)


def models() -> dict[str, bytes]:
    """The models measured: generated ones with 1 and 4 resource variables."""
    from tests.tflm_synthetic import resource_variable_in_while_body, resource_variables_mixed

    return {
        "resource_variables_mixed": resource_variables_mixed(),
        "resource_variable_in_while_body": resource_variable_in_while_body(),
    }


def _sets_up(data: bytes, arena_size: int, table: int | None) -> bool:
    """In a child: the wheel's interpreter with this arena and table; True when it sets up."""
    from arenalens.runtimes.child import run_in_child

    payload, _code = run_in_child(_child, (data, arena_size, table), timeout_seconds=60)
    return bool(payload and payload.get("ok"))


def _child(sender: Any, data: bytes, arena_size: int, table: int | None) -> None:
    result = {"ok": False}
    try:
        with open(os.devnull, "w") as quiet:
            os.dup2(quiet.fileno(), 2)
        from tflite_micro.python.tflite_micro import _runtime, runtime

        count = runtime.count_resource_variables(data) if table is None else table
        _runtime.InterpreterWrapper(
            data, [], arena_size, count, _runtime.PythonInterpreterConfig.kAllocationRecording, 0
        )
        result["ok"] = True
    except Exception:  # any failure: does not set up at this size
        result["ok"] = False
    sender.send(result)
    sender.close()


def minimal_arena(data: bytes, table: int | None) -> int:
    """The smallest arena that sets up (bisection, then confirmed one step of 16 below)."""
    from arenalens.runtimes.tflm.probe import minimal_arena as bisect

    high = 1 << 16
    while not _sets_up(data, high, table):
        high *= 2
    return bisect(lambda size: _sets_up(data, size, table), low=0, high=high)


def cached() -> dict[str, Any]:
    """{model: {"sha256", "tables": {"wheel" or N: minimal arena}}} as measured."""
    document: dict[str, Any] = json.loads(CACHE.read_text())
    return document


def main() -> int:
    from tflite_micro import __version__ as wheel  # type: ignore[attr-defined]

    found: dict[str, Any] = {}
    for name, data in models().items():
        tables = {}
        for table in TABLES:
            key = "wheel" if table is None else str(table)
            tables[key] = minimal_arena(data, table)
            print(name, key, tables[key], flush=True)
        found[name] = {"sha256": hashlib.sha256(data).hexdigest(), "tables": tables}
    document = {
        "about": "Minimal arena on the tflite_micro wheel with MicroResourceVariables tables of "
        "N entries (the wheel's InterpreterWrapper given N). Remade by "
        "`python -m tests.resource_table`.",
        "wheel": wheel,
        "models": found,
    }
    with tempfile.NamedTemporaryFile("w", dir=CACHE.parent, delete=False) as handle:
        handle.write(json.dumps(document, indent=1, sort_keys=True) + "\n")
    os.replace(handle.name, CACHE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
