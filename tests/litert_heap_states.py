"""One model's heap, measured from Python processes that differ only in their state before the
baseline: the interpreter's prefix (the venv reached through symlinks of 1 to 64 characters)
and PYTHONPATH (unset, or the repository). Cached in tests/data/litert_heap_states.json:

    python -m tests.litert_heap_states            # this CPU (the AMD EPYC's AVX2 file's models)

Why (session 14): fresh measurements on this machine differed from the cached figures of
tests/data/litert_heap_avx2.json by -256 to +256 B, the same bytes every run in one process
state. The traced blocks (tests/litert_heap_trace.py) are the same in every state, request
for request: only `malloc_usable_size` moves, where glibc hands a free chunk out whole (16 B
more) or keeps an aligned block's tail (up to 32 B), which depends on what the process freed
before the baseline. The cached figures were measured from other worktrees' venvs (other
prefix lengths): neither they nor the fresh ones are stale; the figure must stay above every
state's, which the models here, the ones closest to their figure, check.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.litert_heap_cache import AVX2_DATA
from tests.litert_heap_measure import (
    HELD_OUT,
    REPO_ROOT,
    TIMEOUT_SECONDS,
    TOOL,
    environment,
    heap_figures,
    held_out_model,
    tracer,
)

DATA = REPO_ROOT / "tests/data/litert_heap_states.json"
PREFIX_LENGTHS = (1, 8, 16, 24, 40, 64)
# The cached entries with the least room between arenalens' figure and the wheel's (session 14,
# after the subgraphs' input/output vectors and the STRIDED_SLICE / RFFT2D Eval blocks were
# counted), by delegate.
MODELS = {
    "builtin": (
        "xnn9_blockwise_104", "xnn10_blockwise_203", "xnn9_blockwise_115", "xnn9_blockwise_119",
        "xnn10_blockwise_214", "caller10_11", "zen10_graph_883", "isa6_graph_701",
    ),
    "xnnpack": ("strings9_12", "var10_341", "turns13_22", "cf11_3", "cf11_6"),
}  # fmt: skip


def states(folder: Path) -> list[tuple[str, Path, str | None]]:
    """(label, python, PYTHONPATH) of each process state: this venv through symlinked prefixes."""
    found = []
    for length in PREFIX_LENGTHS:
        root = folder / ("p" * length)
        root.mkdir()
        (root / "venv").symlink_to(Path(sys.prefix))
        python = root / "venv/bin" / Path(sys.executable).name
        for path in (None, str(REPO_ROOT)):
            found.append((f"prefix+{length}{' PYTHONPATH' if path else ''}", python, path))
    return found


def measure_in(
    library: Path, model: Path, mode: str, python: Path, path: str | None
) -> dict[str, Any]:
    """measure.py's figures from one process state."""
    variables = dict(os.environ, LD_PRELOAD=str(library))
    variables.pop("PYTHONPATH", None)
    if path:
        variables["PYTHONPATH"] = path
    completed = subprocess.run(
        [str(python), str(TOOL / "measure.py"), str(model), mode],
        capture_output=True,
        text=True,
        env=variables,
        timeout=TIMEOUT_SECONDS,
        check=False,
        cwd=tempfile.gettempdir(),
    )
    return heap_figures(completed)


def main() -> int:
    families = {
        name: (family, seed, name.removeprefix("heldout_case_")) for name, family, seed in HELD_OUT
    }
    cached = json.loads(AVX2_DATA.read_text())
    if cached["environment"]["cpu_flags"] != environment()["cpu_flags"]:
        print("these models' figures are the AMD EPYC's (AVX2, no AVX-512)", file=sys.stderr)
        return 2
    document: dict[str, Any] = {
        "command": "python -m tests.litert_heap_states",
        "environment": environment(),
        "states": [],
        "models": {},
    }
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        library = tracer(folder)
        found = states(folder)
        document["states"] = [label for label, _, _ in found]
        for mode, names in MODELS.items():
            for name in names:
                model = folder / "model.tflite"
                model.write_bytes(held_out_model(*families[name]))
                figures = [
                    measure_in(library, model, mode, python, path) for _, python, path in found
                ]
                document["models"].setdefault(f"{name}.tflite", {})[mode] = figures
                print(name, mode, [figure.get("peak") for figure in figures], flush=True)
    DATA.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
