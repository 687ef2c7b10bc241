"""The memory planner's scratch of each XNNPACK delegate kernel the first invoke's re-plan
prepares (a kernel after a rank-0 READ_VARIABLE), read off the wheel with
tests/litert_heap_trace.py's allocation tracer and cached in tests/data/litert_replan_scratch.json:

    python -m tests.litert_replan_scratch            # every model below, about 5 s each

Per model: the requests xnn_plan_value_allocation_tracker makes during invoke(), in order (per
kernel: its sorted-usage pointers, 8 B per id from the first value it plans to the last
operator, then its live blocks, 16 B per record placed; memory-planner.c).
runtimes/litert/heap_xnnpack_reshape.KernelReshape (`planned`, `placed`) is held to them
(tests/runtimes/litert/test_litert_xnnpack_replan.py). The models: the cached var11_*/var12_*
and new draws of both families (`scr13_*`, seeds 1301-1348), drawn after the exact counts were
written (session 13). Needs the `runtime` extra, gcc and binutils.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from tests.litert_heap_measure import DATA, held_out_model
from tests.litert_heap_trace import events, site, trace

SCRATCH = DATA.with_name("litert_replan_scratch.json")
COMMAND = "python -m tests.litert_replan_scratch"
_SITE = "xnn_plan_value_allocation_tracker"
SCR14_REPLAN = (1447, 1471, 1492, 1497, 1502, 1505, 1510, 1543, 1557, 1590)
SCR14_XNNPACK_REPLAN = (1410, 1421, 1469, 1497, 1530, 1543, 1566)
# (name, family, seed): held_out_model's families.
MODELS = (
    *((f"var11_{seed}", "replan", seed) for seed in range(1101, 1129)),
    *((f"var12_{seed}", "xnnpack_replan", seed) for seed in range(1201, 1225)),
    *((f"scr13_{seed}", "xnnpack_replan", seed) for seed in range(1301, 1325)),
    *((f"scr13_{seed}", "replan", seed) for seed in range(1325, 1349)),
    # Session 14: every seed of 1401-1600 of both families with a re-planned kernel whose
    # first planned value is one its nodes add, past a static one (an int8 FULLY_CONNECTED's
    # weights, the 2-D reshape before it: the bound scr13_1346 kept), drawn after
    # heap_xnnpack_reshape._added_position placed it.
    *((f"scr14r_{seed}", "replan", seed) for seed in SCR14_REPLAN),
    *((f"scr14x_{seed}", "xnnpack_replan", seed) for seed in SCR14_XNNPACK_REPLAN),
)


def scratch_requests(model: Path, folder: Path) -> list[int] | None:
    """The planner's scratch requests during invoke() (None: the wheel refused the model)."""
    try:
        log = trace(model, "xnnpack", folder)
    except Exception:  # a model the delegate refuses (trace's check=True): no figures
        return None
    return [
        request
        for phase, op, request, _usable, _pointer, frames in events(log)
        if phase == "invoke" and op != "F" and site(frames) == _SITE
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated name prefixes")
    arguments = parser.parse_args(argv)
    prefixes = tuple(arguments.only.split(",")) if arguments.only else ("",)
    found = json.loads(SCRATCH.read_text()) if SCRATCH.exists() else {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for name, family, seed in MODELS:
            if not name.startswith(prefixes):
                continue
            path = folder / f"{name}.tflite"
            path.write_bytes(held_out_model(family, seed))
            found[name] = scratch_requests(path, folder)
            print(name, found[name], flush=True)
    SCRATCH.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
