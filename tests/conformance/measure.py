"""Measure conformance cases on the real runtimes and cache the figures under data/.

    python -m tests.conformance.measure --target host                 # every case, the wheel
    python -m tests.conformance.measure --target cortex-m7-cmsis-nn   # every case, one probe
    python -m tests.conformance.measure --target all --family nn      # one family, every target
    python -m tests.conformance.measure --target host --stale         # only new or changed models

The minimal arena is the smallest arena_size from which every larger size works. Whether a size
fits is monotone (every tail allocation rounds down from the array's end, so a larger array never
leaves less room), so a bisection bracketed around the measured head + tail finds it exactly; with
one exception: kernel Init functions return AllocatePersistentBuffer's result unchecked, so when
the tail cannot hold an OpData, setup goes on without it, and for kernels whose Prepare never
touches their OpData (ELU int16) it succeeds at sizes below a band of failing ones. A size at which
setup kept fewer persistent buffers (or, for the plain allocator, which records nothing, a tail
16 bytes or more smaller) than at the roomy size lost one: it does not count as fitting.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conformance.cases import FAMILIES, Case, all_cases
from tests.conformance.targets import PROBES, TARGETS, Target

DATA = Path(os.environ.get("ARENALENS_CONFORMANCE_DATA", Path(__file__).resolve().parent / "data"))
ROOMY = 4 << 20
# A probe of a conformance model finishes in a second or two; one still running after this has
# halted (an abort or a fault loop in a too-small arena: run.py waits out its whole timeout, 120 s
# by default, which made bisections over kernels that dereference a failed temp allocation take
# hours). Such a size does not fit. ARENALENS_PROBE_TIMEOUT sets another limit (on an idle
# machine a few seconds are plenty; a too-short one shows as a measured minimum above arenalens's).
PROBE_TIMEOUT_SECONDS = float(os.environ.get("ARENALENS_PROBE_TIMEOUT", "30"))


def data_path(target: str, family: str) -> Path:
    """Where one family's measurements on one target are cached (one file each, so engineers
    measuring different families never edit the same file)."""
    return DATA / target / f"{family}.json"


def load(target: str) -> dict[str, Any]:
    """A target's cached measurements over every family: {"cases": {id: figures}}."""
    cases: dict[str, Any] = {}
    for path in sorted((DATA / target).glob("*.json")):
        cases.update(json.loads(path.read_text())["cases"])
    return {"cases": cases}


def save(target: str, family: str, cases: dict[str, Any]) -> None:
    """Write one family's measurements on one target, sorted, so reruns give the same bytes."""
    path = data_path(target, family)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"cases": dict(sorted(cases.items()))}
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")


def minimum_size(
    fits: Callable[[int], bool], total: int, roomy: int, guess: int | None = None
) -> int:
    """Smallest size that fits, by bisection: setup needs at least head + tail less a little
    alignment slack, and at most what the roomy probe had. A `guess` (arenalens' prediction) is
    tried first: when it fits and one byte less does not, it is the answer (two runs instead of
    a dozen; the bisection, which assumes the same monotonicity, would end there too)."""
    if guess is not None and guess > 0 and fits(guess) and not fits(guess - 1):
        return guess
    low = max(0, total - 64)
    if fits(low):
        return _bisect(fits, 0, low)
    high = total + 256
    while not fits(high):
        low, high = high, min(roomy, 2 * high)
    return _bisect(fits, low, high)


def _bisect(fits: Callable[[int], bool], low: int, high: int) -> int:
    """Smallest size in (low, high] that fits; fits(high) holds."""
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            high = middle
        else:
            low = middle
    return high


def measure_host(case: Case) -> dict[str, Any]:
    """The wheel: head, tail, categories at a roomy size, then the minimal arena."""
    from arenalens.runtimes.tflm.probe import probe

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "case.tflite"
        path.write_bytes(case.model())
        roomy = probe(str(path), ROOMY)
        if not roomy.fits:
            return {"loads": False, "error": _last_line(roomy.log)}
        figures: dict[str, Any] = {
            "loads": True,
            "head": roomy.head,
            "tail": roomy.tail,
            "categories": {
                name: {"used": c.used, "requested": c.requested, "count": c.count}
                for name, c in sorted(roomy.categories.items())
            },
        }
        buffers = _kernel_buffers(figures["categories"])

        def fits(size: int) -> bool:
            found = probe(str(path), size)
            kept = found.categories.get("Persistent buffer data")
            return found.fits and (0 if kept is None else kept.count) == buffers

        total = (roomy.head or 0) + (roomy.tail or 0)
        figures["min_arena"] = minimum_size(fits, total, ROOMY)
    return figures


def _kernel_buffers(categories: dict[str, Any]) -> int:
    """How many persistent buffers setup allocated (a lost Init allocation lowers it)."""
    return int(categories.get("Persistent buffer data", {}).get("count", 0))


def _lost_allocation(found: dict[str, Any], roomy: dict[str, Any]) -> bool:
    """Did this probe run keep fewer tail allocations than the roomy run? Recording runs count
    persistent buffers; plain runs only have the tail, whose padding varies by under 16 bytes."""
    if "categories" in roomy:
        return _kernel_buffers(found.get("categories", {})) != _kernel_buffers(roomy["categories"])
    return int(found.get("tail", 0)) <= int(roomy["tail"]) - 16


def _run_probe(path: Path, target: str, *arguments: str) -> dict[str, Any]:
    command = [
        *(sys.executable, str(PROBES / "run.py"), str(path), "--target", target, "--json"),
        *("--timeout", str(PROBE_TIMEOUT_SECONDS)),
    ]
    completed = subprocess.run(
        [*command, *arguments], capture_output=True, text=True, timeout=900, check=False
    )
    try:
        result: dict[str, Any] = json.loads(completed.stdout)
    except json.JSONDecodeError:
        return {"status": "error", "detail": completed.stderr.strip()[-300:]}
    return result


def measure_device(case: Case, target: Target) -> dict[str, Any]:
    """A Cortex-M probe: recording allocator (head, tail, categories, minimal arena), then the
    plain allocator (tail, minimal arena)."""
    guesses = _predicted_minima(case, target)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "case.tflite"
        path.write_bytes(case.model())
        recording = _run_probe(path, target.name, "--allocator", "recording")
        if recording.get("status") != "ok":
            return {"loads": False, "error": str(recording.get("detail", recording))[-300:]}
        figures: dict[str, Any] = {
            "loads": True,
            "head": recording["head"],
            "tail": recording["tail"],
            "categories": {
                name: {key: value[key] for key in ("used", "requested", "count")}
                for name, value in sorted(recording.get("categories", {}).items())
            },
        }
        plain = _run_probe(path, target.name, "--allocator", "plain")
        figures["tail_plain"] = plain.get("tail")
        for allocator, suffix, run in (("recording", "", recording), ("plain", "_plain", plain)):

            def fits(size: int, allocator: str = allocator, run: dict[str, Any] = run) -> bool:
                found = _run_probe(
                    path, target.name, "--arena", str(size), "--allocator", allocator
                )
                return found.get("status") == "ok" and not _lost_allocation(found, run)

            total = int(run["head"]) + int(run["tail"])
            figures[f"min_arena{suffix}"] = minimum_size(
                fits, total, int(run["load_arena"]), guesses.get(f"min_arena{suffix}")
            )
    return figures


def _predicted_minima(case: Case, target: Target) -> dict[str, int]:
    """arenalens' minimal arenas for the case (a starting point for the measurement only)."""
    from tests.conformance.predict import predict

    try:
        predicted = predict(case.model(), target)
    except Exception:  # a guess is optional: measure without it (the tests show the error)
        return {}
    return {k: v for k, v in predicted.items() if k.startswith("min_arena") and isinstance(v, int)}


def _last_line(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def measure(case: Case, target: Target) -> dict[str, Any]:
    """One case on one target → its figures, with the model's hash."""
    figures = measure_device(case, target) if target.device else measure_host(case)
    return {"sha256": case.sha256(), **figures}


def main(argv: list[str] | None = None) -> int:
    """Measure the selected cases on the selected targets and update the cache."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", default="host", help=f"all or one of {', '.join(TARGETS)}")
    parser.add_argument("--family", action="append", choices=FAMILIES)
    parser.add_argument("--case", action="append", help="case id (repeatable)")
    parser.add_argument("--stale", action="store_true", help="only cases new or changed")
    args = parser.parse_args(argv)
    targets = list(TARGETS) if args.target == "all" else [args.target]
    cases = [
        case
        for case in all_cases()
        if (not args.case or case.id in args.case)
        and (not args.family or case.family in args.family)
    ]
    for name in targets:
        target = TARGETS[name]
        for number, case in enumerate(cases, 1):
            path = data_path(name, case.family)
            family = json.loads(path.read_text())["cases"] if path.exists() else {}
            cached = family.get(case.id)
            if args.stale and cached is not None and cached.get("sha256") == case.sha256():
                continue
            family[case.id] = measure(case, target)
            print(f"{name} {number}/{len(cases)} {case.id}: {family[case.id]}")
            save(name, case.family, family)
    return 0


if __name__ == "__main__":
    sys.exit(main())
