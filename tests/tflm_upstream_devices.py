"""The smallest arena real TFLM needs on devices for the upstream repositories' own .tflite files,
measured under QEMU with ../shared/tools/cortex-m and ../shared/tools/esp (`run.py --min-arena
--allocator plain`: firmware's MicroAllocator) and cached in tests/data/tflm_upstream_devices.json:

    nice -n 10 python -m tests.tflm_upstream_devices          # about 40 minutes

The models (held out: no rule was fitted to them) are read from the fetched mirrors as
tests/litert_upstream_measure.py reads them, never copied here: those TFLM sets up on the host
that are not in the shared corpus, seanet's integration tests one in ten. A model the probe's
board cannot hold, or that fails, is recorded with the probe's status.
tests/runtimes/tflm/test_tflm_upstream_devices.py compares `check` with this file.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.conftest import SHARED_MODELS
from tests.litert_upstream_measure import absence, key, model_bytes, upstream_models

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = REPO_ROOT / "tests/data/tflm_upstream_devices.json"
COMMAND = "nice -n 10 python -m tests.tflm_upstream_devices"
TOOLS = SHARED_MODELS.parent / "tools"
# arenalens build → (probe folder, probe target)
BUILDS = {
    "cortex-m7/cmsis-nn": ("cortex-m", "cortex-m7-cmsis-nn"),
    "esp32s3/esp-nn": ("esp", "esp32s3-esp-nn"),
}


def chosen_models(*, runnable_only: bool = True) -> list[tuple[str, str]]:
    """(repository, path) measured: not in the shared corpus, seanet one in ten, and (unless
    `runnable_only` is off) those arenalens says TFLM sets up on the host."""
    from arenalens.declared import Status, declared_arena
    from arenalens.pipeline import analyze

    corpus = {hashlib.sha256(p.read_bytes()).hexdigest() for p in SHARED_MODELS.glob("*.tflite")}
    chosen, seanet = [], 0
    for repository, path in upstream_models():
        data = model_bytes(repository, path)
        if data is None or absence(data) or hashlib.sha256(data).hexdigest() in corpus:
            continue
        if "/seanet/" in path:
            seanet += 1
            if seanet % 10 != 1:
                continue
        if not runnable_only:
            chosen.append((repository, path))
            continue
        with tempfile.TemporaryDirectory() as folder:
            model = Path(folder) / "model.tflite"
            model.write_bytes(data)
            if declared_arena(analyze(str(model))).status is Status.CANNOT_RUN:
                continue
        chosen.append((repository, path))
    return chosen


def probe(data: bytes, folder: str, target: str) -> dict[str, Any]:
    """The probe's JSON for the smallest arena at which setup succeeds."""
    with tempfile.TemporaryDirectory() as scratch:
        model = Path(scratch) / "model.tflite"
        model.write_bytes(data)
        done = subprocess.run(
            [sys.executable, str(TOOLS / folder / "run.py"), str(model), "--target", target,
             "--min-arena", "--allocator", "plain", "--json"],
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
    try:
        found: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"status": "error", "detail": done.stderr[-300:]}
    return found


def main() -> int:
    models: dict[str, Any] = {}
    for repository, path in chosen_models():
        data = model_bytes(repository, path)
        assert data is not None
        entry = models[key(repository, path)] = {}
        for build, (folder, target) in BUILDS.items():
            found = probe(data, folder, target)
            entry[build] = (
                {"min_arena": found["min_arena"]}
                if found.get("status") == "ok"
                else {"status": found.get("status", "error")}
            )
        print(key(repository, path), entry, flush=True)
    DATA.write_text(json.dumps({"command": COMMAND, "models": models}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
