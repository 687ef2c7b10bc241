"""The upstream repositories' own .tflite files on TFLM builds no rule was fitted to: older
`tflite-micro` wheels (`host@<version>`, each in its own environment: tests/conformance/wheels.py)
and the other device probes (../shared/tools/cortex-m and ../shared/tools/esp: reference kernels,
CMSIS-NN without DSP and with MVE, ESP-NN's generic, ANSI C and P4 paths, older esp-nn releases,
RV32 reference), cached one file per build in tests/data/tflm_upstream/<target>.json:

    nice -n 10 python -m tests.tflm_upstream_builds --target host@0.dev20250107191040
    nice -n 10 python -m tests.tflm_upstream_builds --target cortex-m7-reference --stale

A wheel measures every upstream model that is not in the shared corpus (its head, tail and
categories at a roomy arena and its minimal arena, or the refusal: tests/conformance/measure.py's
`measure_wheel`); a probe measures the models tests/tflm_upstream_devices.py chooses (seanet
one in ten), those TFLM refuses on the host included, with firmware's plain allocator (head, tail,
minimal arena, or the refusal: `measure_device`), one QEMU run at a time. The models are read
from the fetched mirrors, never copied here. tests/runtimes/tflm/test_tflm_upstream_builds.py
compares arenalens with these files.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from arenalens.builds.build import build_named
from tests.conformance.cases import Case
from tests.conformance.measure import measure_device, measure_wheel
from tests.conformance.targets import ESP_ROOMY_ARENA, Target, target_named
from tests.conftest import SHARED_MODELS
from tests.litert_upstream_measure import absence, key, mirror, model_bytes, upstream_models

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = REPO_ROOT / "tests/data/tflm_upstream"
MODULE = "tests.tflm_upstream_builds"
# The wheels' roomy arena: the largest upstream model TFLM sets up needs about 40 MB.
WHEEL_ROOMY_ARENA = 256 << 20
# The wheels docs/tflm-releases.md lists as measured, and five between them measured here first,
# each the first wheel with one of its changes (2025-04-04: 3, 2025-07-10: 5, 2025-11-10: 11,
# 2026-01-25: 13) or the last without one (2026-10-09: 17); the installed wheel is `host`.
WHEELS = (
    "0.dev20250107191040",
    "0.dev20250404171617",
    "0.dev20250710203257",
    "0.dev20250808035851",
    "0.dev20251110172539",
    "0.dev20260125052541",
    "0.dev20260202175109",
    "0.dev20261009205824",
)
# The probes besides cortex-m7-cmsis-nn and esp32s3-esp-nn (tests/tflm_upstream_devices.py).
PROBE_TARGETS = (
    "cortex-m7-reference",
    "cortex-m3-cmsis-nn",
    "cortex-m55-cmsis-nn",
    "cortex-m55-reference",
    "esp-generic-opt",
    "esp-ansi",
    "esp32p4-esp-nn",
    "esp32s3-esp-nn@v1.2.0",
    "esp32s3-esp-nn@v1.1.2",
    "rv32-reference",
)
# The two-buffer probe (tests/two_buffers.py: MicroAllocator::Create(persistent, P,
# non_persistent, N)), measured as that module measures it: each buffer's minimum.
TWO_BUFFER_TARGETS = ("cortex-m55-reference-two",)


# TFLM's words when an arena cannot hold what setup asks for (micro_allocator.cc,
# single_arena_buffer_allocator.cc), and the arena the probe tried (run.py's RESULT line).
_OUT_OF_ARENA = re.compile(r"Failed to (resize buffer|allocate (tail|temp) memory)")
_ARENA_SIZE = re.compile(r"arena_size=(\d+)")


def command(target: str) -> str:
    """The command that remakes one target's cache."""
    return f"nice -n 10 python -m {MODULE} --target {target}"


def cache_path(target: str) -> Path:
    return DATA / f"{target}.json"


def load(target: str) -> dict[str, Any]:
    """One target's cached measurements, {model key: figures} ({} when none)."""
    path = cache_path(target)
    if not path.exists():
        return {}
    found: dict[str, Any] = json.loads(path.read_text())["models"]
    return found


def measured_target(name: str) -> Target:
    """The target as measured here: a probe with the plain allocator only (what firmware runs)
    and a 4 MiB roomy arena (QEMU touches the whole arena; larger models fall back to the probe's
    default, its RAM less the model)."""
    if name in TWO_BUFFER_TARGETS:  # driven by tests/two_buffers.py, not a run.py target
        from tests.two_buffers import PROBES

        return Target(name, build_named(PROBES[name].build), True)
    target = target_named(name)
    if not target.device:
        return target
    return dataclasses.replace(
        target, recording_run=False, recording_minimum=False, roomy_arena=ESP_ROOMY_ARENA
    )


def chosen_models(target: Target, *, runnable_only: bool = False) -> list[tuple[str, str]]:
    """(repository, path) measured on one target: a wheel (the installed one, `host`, too) every
    readable model not in the shared corpus; a probe those tests/tflm_upstream_devices.py
    chooses, the models TFLM refuses on the host included (a probe must refuse them too)."""
    if target.device or target.name in TWO_BUFFER_TARGETS:
        from tests.tflm_upstream_devices import chosen_models as device_models

        return device_models(runnable_only=runnable_only)
    corpus = {hashlib.sha256(p.read_bytes()).hexdigest() for p in SHARED_MODELS.glob("*.tflite")}
    chosen = []
    for repository, path in upstream_models():
        data = model_bytes(repository, path)
        if data is None or absence(data) or hashlib.sha256(data).hexdigest() in corpus:
            continue
        chosen.append((repository, path))
    return chosen


def read_models(names: list[str]) -> dict[str, bytes | None]:
    """Many models' bytes from the mirrors by cache key, one `git cat-file --batch` per mirror
    (a process per model costs more than predicting it); None for a blob the mirror lacks."""
    found: dict[str, bytes | None] = {}
    by_repository: dict[str, list[str]] = {}
    for name in names:
        repository, path = name.split(":", 1)
        by_repository.setdefault(repository, []).append(path)
    for repository, paths in by_repository.items():
        listing = "".join(f"HEAD:{path}\n" for path in paths).encode()
        output = subprocess.run(
            ["git", "-C", str(mirror(repository)), "cat-file", "--batch"],
            input=listing, capture_output=True, check=True,
        ).stdout  # fmt: skip
        position = 0
        for path in paths:
            end = output.index(b"\n", position)
            header = output[position:end].split()
            position = end + 1
            if len(header) != 3:  # "<name> missing"
                found[key(repository, path)] = None
                continue
            size = int(header[2])
            found[key(repository, path)] = output[position : position + size]
            position += size + 1
    return found


def _probe(target: Target) -> Any:
    """The older wheel's probe (a context manager), or nothing: a device probe, or the installed
    wheel, imported here once so that each forked probe inherits it (seconds per probe if not)."""
    if target.wheel is None:
        if not target.device:
            from tflite_micro import runtime  # noqa: F401
        return nullcontext(None)
    from tests.conformance.wheels import WheelProbe

    return WheelProbe(target.wheel)


def measure_one(data: bytes, target: Target, probe: Any) -> dict[str, Any]:
    """One model on one target → its figures with the model's hash."""
    digest = hashlib.sha256(data).hexdigest()
    if target.name in TWO_BUFFER_TARGETS:
        from tests.two_buffers import PROBES, measure_two

        return {"sha256": digest, **measure_two(PROBES[target.name], data)}
    if target.device:
        case = Case(digest[:12], "", "", lambda: data, family="upstream")
        figures = measure_device(case, target)
        return {"sha256": digest, **_board_too_small(figures)}
    from tests.conformance.measure import _wheel_guesses

    guesses = _wheel_guesses(data, target) if target.wheel else None
    figures = measure_wheel(data, probe, guesses=guesses, roomy_size=WHEEL_ROOMY_ARENA)
    return {"sha256": digest, **figures}


def _board_too_small(figures: dict[str, Any]) -> dict[str, Any]:
    """A probe whose whole RAM is too small for the model's arena (TFLM's own "Failed to resize
    buffer" or "Failed to allocate" at the probe's largest arena) did not refuse the model: record
    the arena that was too small, which the prediction must exceed."""
    error = str(figures.get("error", ""))
    size = _ARENA_SIZE.search(error)
    if figures.get("loads") or not _OUT_OF_ARENA.search(error) or size is None:
        return figures
    return {"board_too_small": int(size.group(1)), "error": error}


def save(name: str, found: dict[str, Any], extra: dict[str, Any]) -> None:
    document = {
        "command": command(name),
        **extra,
        "models": dict(sorted(found.items())),
    }
    DATA.mkdir(parents=True, exist_ok=True)
    cache_path(name).write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, help="host@<wheel version> or a probe build")
    parser.add_argument("--stale", action="store_true", help="only models not measured yet")
    parser.add_argument("--only", default="", help="only models whose path contains this")
    parser.add_argument(
        "--runnable-only",
        action="store_true",
        help="a probe: only the models TFLM sets up on the host (a refusal can cost a run at the "
        "probe's whole RAM, minutes on the Cortex-M55)",
    )
    arguments = parser.parse_args(argv)
    target = measured_target(arguments.target)
    found = load(target.name)
    chosen = chosen_models(target, runnable_only=arguments.runnable_only)
    chosen = [m for m in chosen if arguments.only in m[1]]
    with _probe(target) as probe:
        extra = {} if probe is None else {"wheel": target.wheel, "commit": probe.commit}
        for number, (repository, path) in enumerate(chosen, 1):
            name = key(repository, path)
            data = model_bytes(repository, path)
            assert data is not None
            digest = hashlib.sha256(data).hexdigest()
            if arguments.stale and found.get(name, {}).get("sha256") == digest:
                continue
            found[name] = measure_one(data, target, probe)
            print(f"{target.name} {number}/{len(chosen)} {name}: {found[name]}", flush=True)
            save(target.name, found, extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
