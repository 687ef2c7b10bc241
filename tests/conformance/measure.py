"""Measure conformance cases on the real runtimes and cache the figures under data/.

    python -m tests.conformance.measure --target host                 # every case, the wheel
    python -m tests.conformance.measure --target cortex-m7-cmsis-nn   # every case, one probe
    python -m tests.conformance.measure --target all --family nn      # one family, every target
    python -m tests.conformance.measure --target host --stale         # only new or changed models
    python -m tests.conformance.measure --target esp-ansi --variant-cases --stale  # an ESP build
    python -m tests.conformance.measure --target host@0.dev20250107191040    # an older wheel
    python -m tests.conformance.measure --target host@0.dev20250107191040 --models  # its models

`host@<version>` runs that `tflite-micro` wheel in an environment of its own, made on first use
(tests/conformance/wheels.py: pip, several minutes the first time). `--models` measures the shared
corpus (../shared/models, each model TFLM loads) and the built-in examples instead of the cases,
into data/<target>/models.json (on the installed wheel, the corpus is ../shared/models/
reference.json's).

The minimal arena is the smallest arena_size from which every larger size works. Whether a size
fits is monotone (every tail allocation rounds down from the array's end, so a larger array never
leaves less room), so a bisection bracketed around the measured head + tail finds it exactly; with
two exceptions. Kernel Init functions return AllocatePersistentBuffer's result unchecked, so when
the tail cannot hold an OpData, setup goes on without it, and for kernels whose Prepare never
touches their OpData (ELU int16) it succeeds at sizes below a band of failing ones: a size at which
setup kept fewer persistent buffers (or, for the plain allocator, which records nothing, a tail
16 bytes or more smaller) than at the roomy size lost one, and does not count as fitting. And
where a kernel's Prepare writes a tail buffer over its own live temp tensors (per-channel arrays,
lookup tables, dims copies: AllocatePersistentBuffer checks the head, not the temp end), setup
fails only at the sizes that put written bytes on the temp fields read afterwards, and a band of
failing sizes can lie above fitting ones. For those cases (`Case.scan_bytes`) the measurement walks
up from the bisection's answer until that many bytes of consecutive sizes fit.

Separately, kernel Init functions return AllocatePersistentBuffer's result unchecked, so when the
tail cannot hold an OpData, setup goes on without it, and for kernels whose Prepare never touches
their OpData (ELU int16) it succeeds at sizes below a band of failing ones. A size at which setup
kept fewer persistent buffers (or, for the plain allocator, which records nothing, a tail 16 bytes
or more smaller) than at the roomy size lost one: it does not count as fitting.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.conformance.cases import FAMILIES, Case, all_cases
from tests.conformance.targets import (
    DEVICE_RELEASE_SEPARATOR,
    ESP_FULL,
    ESP_PROBES,
    ESP_PROBES_REASON,
    ESP_TARGET_NAMES,
    PROBES,
    PROBES_REASON,
    RELEASE_PREFIX,
    TARGETS,
    Target,
    target_named,
)

# (model file, arena size) → a probe of the real interpreter (arenalens.runtimes.tflm.probe.probe,
# or tests.conformance.wheels.WheelProbe for an older wheel).
Prober = Callable[[str, int], Any]

DATA = Path(os.environ.get("ARENALENS_CONFORMANCE_DATA", Path(__file__).resolve().parent / "data"))
ROOMY = 4 << 20
# A probe of a conformance model finishes in a second or two; one still running after this has
# halted (an abort or a fault loop in a too-small arena, e.g. int8 UNIDIRECTIONAL_SEQUENCE_LSTM:
# run.py waits out its whole timeout, 120 s by default, which made bisections over kernels that
# dereference a failed temp allocation take hours). Such a size does not fit.
# ARENALENS_PROBE_TIMEOUT sets another limit (on an idle machine a few seconds are plenty; a
# too-short one shows as a measured minimum above arenalens's).
PROBE_TIMEOUT_SECONDS = float(os.environ.get("ARENALENS_PROBE_TIMEOUT", "30"))
# A run that times out (or ends without a word) is run once more with this limit: on a machine
# shared by many jobs a probe that fits can take longer than PROBE_TIMEOUT_SECONDS, and counting
# it as not fitting would raise the measured minimum (or call a loading model refused).
PATIENT_TIMEOUT_SECONDS = 300.0


def data_path(target: str, family: str) -> Path:
    """Where one family's measurements on one target are cached (one file each, so engineers
    measuring different families never edit the same file)."""
    return DATA / target / f"{family}.json"


def load(target: str) -> dict[str, Any]:
    """A target's cached measurements over every family: {"cases": {id: figures}}."""
    cases: dict[str, Any] = {}
    for family in FAMILIES:
        path = data_path(target, family)
        if path.exists():
            cases.update(json.loads(path.read_text())["cases"])
    return {"cases": cases}


def measured_device_releases() -> list[str]:
    """The Cortex-M probe builds at older TFLM commits with cached measurements
    (data/<probe build>@<commit>/): their target names."""
    return sorted(
        path.name
        for path in DATA.glob("*" + DEVICE_RELEASE_SEPARATOR + "*")
        if path.is_dir() and not path.name.startswith(RELEASE_PREFIX) and path.name not in TARGETS
    )


def measured_releases() -> list[str]:
    """The older wheel versions with cached measurements (data/host@<version>/), oldest first."""
    return sorted(
        path.name.removeprefix(RELEASE_PREFIX)
        for path in DATA.glob(RELEASE_PREFIX + "*")
        if path.is_dir()
    )


def remake_command(target: str, *options: str) -> str:
    """The command that remakes a target's cached measurements (a probe built at another TFLM
    commit is found through ARENALENS_CORTEX_M_RELEASE_PROBES: docs/tflm-releases.md)."""
    command = f"python -m tests.conformance.measure --target {target}"
    if target in ESP_TARGET_NAMES and target != ESP_FULL:
        # The ESP builds but the full one measure their variant cases only (esp_variants.py);
        # their names carry an esp-nn release after the separator, not a TFLM commit.
        options = (*options, "--variant-cases")
    elif DEVICE_RELEASE_SEPARATOR in target and not target.startswith(RELEASE_PREFIX):
        command = f"ARENALENS_CORTEX_M_RELEASE_PROBES=<folder> {command}"
    return " ".join([command, *options])


def save(target: str, family: str, cases: dict[str, Any]) -> None:
    """Write one family's measurements on one target, sorted, so reruns give the same bytes,
    with the command that remakes them."""
    path = data_path(target, family)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "about": f"The {family} conformance cases measured on {target}. Remade by "
        f"`{remake_command(target, '--family', family)}`.",
        "cases": dict(sorted(cases.items())),
    }
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")


def minimum_size(
    fits: Callable[[int], bool],
    total: int,
    roomy: int,
    guesses: Sequence[int] = (),
    *,
    scan_bytes: int = 0,
    tail_at: Callable[[int], int] | None = None,
) -> int:
    """Smallest size from which every larger one fits, by bisection: setup needs at least head +
    tail less a little alignment slack, and at most what the roomy probe had. `guesses` (arenalens'
    prediction, or what a sibling build measured) are tried first: one that fits with one byte
    less not fitting is where the bisection would end too (two runs instead of a dozen), and the
    sizes they tried bracket the bisection otherwise. Then, when `scan_bytes`, upwards until that
    many bytes of consecutive sizes fit (`_stable_above`)."""
    found = _bisect_minimum(_Remembered(fits), total, roomy, guesses)
    if not scan_bytes or tail_at is None:
        return found
    return _stable_above(fits, found, scan_bytes, _residue_groups(tail_at, total))


class _Remembered:
    """A fits() that runs each size once and knows the bracket its answers give (the largest
    size that failed below the smallest that fitted), when they are consistent."""

    def __init__(self, fits: Callable[[int], bool]) -> None:
        self._fits = fits
        self.seen: dict[int, bool] = {}

    def __call__(self, size: int) -> bool:
        if size not in self.seen:
            self.seen[size] = self._fits(size)
        return self.seen[size]

    def bracket(self) -> tuple[int | None, int | None]:
        """(largest failing size, smallest fitting size) seen, or None where none was."""
        fitting = [size for size, ok in self.seen.items() if ok]
        failing = [size for size, ok in self.seen.items() if not ok]
        return (max(failing) if failing else None, min(fitting) if fitting else None)

    def worth_trying(self, size: int) -> bool:
        """False for a size the answers so far decide (monotone fitting)."""
        failing, fitting = self.bracket()
        return (failing is None or size > failing) and (fitting is None or size < fitting)


def _bisect_minimum(fits: _Remembered, total: int, roomy: int, guesses: Sequence[int] = ()) -> int:
    """A size that fits with one byte less not fitting: a guess that is it, else bisected in the
    bracket the guesses' answers give, bracketed outward from the nearest answer when they give
    only one side (a guess a few bytes off costs a few runs), else around head + tail."""
    for guess in guesses:
        if guess > 0 and fits.worth_trying(guess) and fits(guess) and not fits(guess - 1):
            return guess
    failing, fitting = fits.bracket()
    if failing is not None and fitting is not None and failing < fitting:
        return _bisect(fits, failing, fitting)
    if fitting is not None:
        return _search_down(fits, fitting)
    if failing is not None:
        return _search_up(fits, failing, roomy)
    low = max(0, total - 64)
    if fits(low):
        return _bisect(fits, 0, low)
    high = max(total + 256, low + 1)
    while not fits(high):
        low, high = high, min(roomy, 2 * high)
    return _bisect(fits, low, high)


def _search_down(fits: Callable[[int], bool], fitting: int) -> int:
    """From a size that fits, 8, 16, 32, ... bytes down until one fails, then bisected."""
    high, step = fitting, 8
    while True:
        low = max(0, fitting - step)
        if low == 0 or not fits(low):
            return _bisect(fits, low, high)
        high, step = low, 2 * step


def _search_up(fits: Callable[[int], bool], failing: int, roomy: int) -> int:
    """From a size that fails, 8, 16, 32, ... bytes up until one fits (at most `roomy`, which
    fits), then bisected."""
    low, step = failing, 8
    while True:
        high = min(roomy, failing + step)
        if high == roomy or fits(high):
            return _bisect(fits, low, high)
        low, step = high, 2 * step


def _residue_groups(tail_at: Callable[[int], int], total: int) -> list[tuple[int, ...]]:
    """Residues of the size mod 16 whose tail allocations sit at the same offset from the
    16-aligned end: every allocation of a Prepare is 16-aligned, so sizes 16k + r of one group
    fit or fail together (measured at 16 consecutive roomy sizes by their used tail bytes)."""
    base = 16 * (total // 16 + 64)
    groups: dict[int, list[int]] = {}
    for residue in range(16):
        groups.setdefault(residue - tail_at(base + residue), []).append(residue)
    return sorted(tuple(group) for group in groups.values())


def _stable_above(
    fits: Callable[[int], bool], found: int, scan_bytes: int, groups: list[tuple[int, ...]]
) -> int:
    """From a fitting size, walk up 16 bytes at a time (one size per residue group) until
    `scan_bytes` bytes fit in a row; the minimum is one above the last size that failed."""
    last_failure = found - 1
    block = found // 16
    clean = 0
    while clean < scan_bytes:
        failed = False
        for group in groups:
            sizes = [16 * block + residue for residue in group if 16 * block + residue >= found]
            if sizes and not fits(sizes[0]):
                last_failure = max(last_failure, 16 * block + group[-1])
                failed = True
        clean = 0 if failed else clean + 16
        block += 1
    return last_failure + 1


def _bisect(fits: Callable[[int], bool], low: int, high: int) -> int:
    """Smallest size in (low, high] that fits; fits(high) holds."""
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            high = middle
        else:
            low = middle
    return high


def measure_host(case: Case, probe: Prober | None = None) -> dict[str, Any]:
    """The wheel: head, tail, categories at a roomy size, then the minimal arena. `probe` runs
    another wheel (default: the installed one)."""
    return measure_wheel(case.model(), probe, scan_bytes=case.scan_bytes)


def measure_wheel(
    data: bytes,
    probe: Prober | None = None,
    *,
    scan_bytes: int = 0,
    guesses: Callable[[dict[str, Any]], list[int]] | None = None,
    roomy_size: int = ROOMY,
) -> dict[str, Any]:
    """Model bytes on a wheel: head, tail, categories at a roomy size, then the minimal arena.
    `guesses(figures at the roomy size)` may name sizes to try first (minimum_size's guesses);
    `roomy_size` is the roomy arena (a real model may need more than a case's 4 MiB)."""
    if probe is None:
        from arenalens.runtimes.tflm.probe import probe

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "case.tflite"
        path.write_bytes(data)
        roomy = probe(str(path), roomy_size)
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

        def tail_at(size: int) -> int:
            return probe(str(path), size).tail or 0

        figures["min_arena"] = minimum_size(
            fits,
            total,
            roomy_size,
            [] if guesses is None else guesses(figures),
            scan_bytes=scan_bytes,
            tail_at=tail_at,
        )
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


def _run_probe(path: Path, target: Target, *arguments: str) -> dict[str, Any]:
    """One run.py call; a run that timed out or said nothing is run again with a long limit, so
    a busy machine never passes for a size that does not fit (or a model that does not load)."""
    result = _run_probe_once(path, target, PROBE_TIMEOUT_SECONDS, arguments)
    status = result.get("status")
    if status == "timeout" or (status == "error" and not result.get("detail")):
        result = _run_probe_once(path, target, PATIENT_TIMEOUT_SECONDS, arguments)
    return result


def _run_probe_once(
    path: Path, target: Target, timeout: float, arguments: tuple[str, ...]
) -> dict[str, Any]:
    command = [
        *(sys.executable, str(_run_py(target)), str(path), "--target", _probe_name(target)),
        "--json",
        *("--timeout", str(timeout)),
    ]
    completed = subprocess.run(
        [*command, *arguments], capture_output=True, text=True, timeout=1800, check=False
    )
    try:
        result: dict[str, Any] = json.loads(completed.stdout)
    except json.JSONDecodeError:
        return {"status": "error", "detail": completed.stderr.strip()[-300:]}
    return result


def _roomy_run(path: Path, target: Target, allocator: str) -> dict[str, Any]:
    """One run at a roomy arena: the target's `roomy_arena` (then that is the bisection's upper
    end), or the probe's default when the target has none or setup fails there."""
    if target.roomy_arena is not None:
        arena = str(target.roomy_arena)
        found = _run_probe(path, target, "--arena", arena, "--allocator", allocator)
        if found.get("status") == "ok":
            return {**found, "load_arena": target.roomy_arena}
    return _run_probe(path, target, "--allocator", allocator)


def _probe_name(target: Target) -> str:
    """The build's name as the probe's run.py knows it."""
    return target.probe_target or target.name


def _run_py(target: Target) -> Path:
    """The target's probe runner; SystemExit when the probes are missing (otherwise every case
    would be cached as "does not load")."""
    folder = target.probes or PROBES
    if not (folder / "run.py").exists():
        if folder in (ESP_PROBES, PROBES):
            raise SystemExit(ESP_PROBES_REASON if folder == ESP_PROBES else PROBES_REASON)
        raise SystemExit(
            f"no probe for {target.name} in {folder}: build it with ../shared/tools/cortex-m/"
            f"build/build.sh (TFLM_COMMIT) and put run.py and its ELF there"
        )
    return folder / "run.py"


def measure_device(case: Case, target: Target) -> dict[str, Any]:
    """A probe under QEMU (Cortex-M or ESP): recording allocator (head, tail, categories, and
    unless `target.recording_minimum` is off its minimal arena; none of it without
    `target.recording_run`), then the plain allocator (head, tail, minimal arena)."""
    _run_py(target)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "case.tflite"
        path.write_bytes(case.model())
        first = _roomy_run(path, target, "recording" if target.recording_run else "plain")
        if first.get("status") != "ok":
            return {"loads": False, "error": str(first.get("detail", first))[-300:]}
        figures: dict[str, Any] = {"loads": True, "head": first["head"]}
        searches = []
        if target.recording_run:
            figures["tail"] = first["tail"]
            figures["categories"] = {
                name: {key: value[key] for key in ("used", "requested", "count")}
                for name, value in sorted(first.get("categories", {}).items())
            }
            plain = _roomy_run(path, target, "plain")
            if target.recording_minimum:
                searches.append(("recording", "", first))
        else:
            plain = first
        figures["tail_plain"] = plain.get("tail")
        for allocator, suffix, run in [*searches, ("plain", "_plain", plain)]:

            def fits(size: int, allocator: str = allocator, run: dict[str, Any] = run) -> bool:
                found = _run_probe(path, target, "--arena", str(size), "--allocator", allocator)
                return found.get("status") == "ok" and not _lost_allocation(found, run)

            def tail_at(size: int, allocator: str = allocator) -> int:
                found = _run_probe(path, target, "--arena", str(size), "--allocator", allocator)
                return int(found.get("tail") or 0)

            total = int(run["head"]) + int(run["tail"])
            figures[f"min_arena{suffix}"] = minimum_size(
                fits,
                total,
                int(run["load_arena"]),
                _guesses(case, target, figures, suffix),
                scan_bytes=case.scan_bytes,
                tail_at=tail_at,
            )
    return figures


def _guesses(case: Case, target: Target, figures: dict[str, Any], suffix: str) -> list[int]:
    """Likely minimal arenas for one allocator (starting points for the measurement only; a
    wrong one costs a run or two): arenalens' prediction where it predicts the target; the setup
    overhead a sibling probe build measured for the same case, on this build's head and tail;
    for the plain allocator, the recording minimum less the tail difference, give or take the
    8 bytes its alignment moves; else head + tail and the overheads most cases measure."""
    head = int(figures["head"])
    tail = int(figures["tail" + suffix])
    found: list[int] = []
    predicted = _predicted_minima(case, target).get(f"min_arena{suffix}")
    if predicted is not None:
        found.append(predicted)
    for name, sibling in TARGETS.items():
        same_probes = sibling.probes == target.probes or name == target.probe_target
        if name == target.name or not same_probes:
            continue
        other = load_case(name, case)
        if other is not None and other.get("loads") and f"min_arena{suffix}" in other:
            overhead = other[f"min_arena{suffix}"] - other["head"] - other["tail" + suffix]
            found.append(head + tail + overhead)
    if suffix and "min_arena" in figures:
        shift = figures["min_arena"] - (int(figures["tail"]) - tail)
        found += [shift - 8, shift + 8]
    # The setup overheads most cases measure (the ESP probes: -8 recording, 0 plain).
    found += [head + tail + overhead for overhead in ((0, 4, -8, -4) if suffix else (-8, -4, 0, 8))]
    return list(dict.fromkeys(found))


def load_case(target: str, case: Case) -> dict[str, Any] | None:
    """One case's cached figures on a target, when they are of the current model."""
    path = data_path(target, case.family)
    if not path.exists():
        return None
    entry: dict[str, Any] | None = json.loads(path.read_text())["cases"].get(case.id)
    return entry if entry is not None and entry.get("sha256") == case.sha256() else None


def _predicted_minima(case: Case, target: Target) -> dict[str, int]:
    """arenalens' minimal arenas for the case (a starting point for the measurement only)."""
    from tests.conformance.predict import predict

    if target.build is None:
        return {}
    try:
        predicted = predict(case.model(), target)
    except Exception:  # a guess is optional: measure without it (the tests show the error)
        return {}
    return {k: v for k, v in predicted.items() if k.startswith("min_arena") and isinstance(v, int)}


def _last_line(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def measure(case: Case, target: Target, probe: Prober | None = None) -> dict[str, Any]:
    """One case on one target → its figures, with the model's hash (`probe`: the wheel of a
    `host@<version>` target)."""
    if target.device:
        figures = measure_device(case, target)
    else:
        figures = measure_wheel(
            case.model(),
            probe,
            scan_bytes=case.scan_bytes,
            guesses=_wheel_guesses(case.model(), target) if target.wheel else None,
        )
    return {"sha256": case.sha256(), **figures}


def _wheel_guesses(data: bytes, target: Target) -> Callable[[dict[str, Any]], list[int]]:
    """First sizes to try on an older wheel (starting points only: minimum_size confirms them, so
    a wrong one costs a few runs, not a wrong figure): arenalens' minimal arena for the wheel's
    release, and its minimal arena on the installed wheel moved by the measured difference in
    head + tail."""

    def guesses(figures: dict[str, Any]) -> list[int]:
        from tests.conformance.predict import predict

        found = []
        for build_of, moved in ((target, False), (TARGETS["host"], True)):
            try:
                predicted = predict(data, build_of)
            except Exception:  # a guess is optional: measure without it
                continue
            if predicted.get("loads"):
                shift = figures["head"] + figures["tail"] - predicted["head"] - predicted["tail"]
                found.append(int(predicted["min_arena"]) + (shift if moved else 0))
        return list(dict.fromkeys(found))

    return guesses


# The family name a corpus model or example takes when measured as a case (no case file has it).
MODELS_FAMILY = "models"


def models() -> dict[str, bytes]:
    """The shared corpus ('shared:<file>', when ../shared/models exists) and the built-in
    examples ('example:<name>'), as measured by `--models`."""
    from arenalens.examples import EXAMPLES, example_bytes
    from tests.conftest import SHARED_MODELS

    found = {f"shared:{path.name}": path.read_bytes() for path in SHARED_MODELS.glob("*.tflite")}
    found.update({f"example:{name}": example_bytes(name) for name in sorted(EXAMPLES)})
    return found


def models_path(target: str) -> Path:
    """Where `--models` caches one target's corpus and example measurements."""
    return DATA / target / "models.json"


def load_models(target: str) -> dict[str, Any]:
    """A target's cached corpus and example measurements: {key: figures} ({} when none)."""
    path = models_path(target)
    if not path.exists():
        return {}
    cached: dict[str, Any] = json.loads(path.read_text())["models"]
    return cached


def _measure_models(target: Target, probe: Prober | None, stale: bool) -> None:
    """Every corpus model and example on one wheel or probe build → data/<target>/models.json."""
    import hashlib

    found = load_models(target.name)
    chosen = models()
    for number, (key, data) in enumerate(sorted(chosen.items()), 1):
        digest = hashlib.sha256(data).hexdigest()
        if stale and found.get(key, {}).get("sha256") == digest:
            continue
        if target.device:
            case = Case(key, "", "", lambda data=data: data, family=MODELS_FAMILY)
            found[key] = {"sha256": digest, **measure_device(case, target)}
        else:
            guesses = _wheel_guesses(data, target) if target.wheel else None
            found[key] = {"sha256": digest, **measure_wheel(data, probe, guesses=guesses)}
        print(f"{target.name} {number}/{len(chosen)} {key}: {found[key]}")
        document = {
            "about": "Shared corpus models and built-in examples on this build (head, tail and "
            "categories at a roomy arena, minimal arena; on a probe also with the plain "
            f"allocator). Remade by `{remake_command(target.name, '--models')}`.",
            "models": dict(sorted(found.items())),
        }
        path = models_path(target.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")


def _wheel_probe(target: Target) -> Any:
    """The probe of a `host@<version>` target's wheel (a context manager), recorded in
    data/<target>/wheel.json with the commit it was built from."""
    from contextlib import nullcontext

    if target.wheel is None:
        return nullcontext(None)
    from tests.conformance.wheels import WheelProbe

    probe = WheelProbe(target.wheel)
    record = DATA / target.name / "wheel.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(
        json.dumps({"version": target.wheel, "commit": probe.commit}, indent=1) + "\n"
    )
    return probe


def record_device_probe(target: Target) -> dict[str, Any] | None:
    """For a probe built at another TFLM commit (`<probe build>@<commit>`), which probe measured
    it, in data/<target>/probe.json (as wheel.json names an older wheel): the sha256 of its ELF
    and run.py, and the sources it was built from (the kit's build_info.txt, when copied beside
    the ELF). None for the other targets."""
    if target.probe_target is None or target.probes is None:
        return None
    import hashlib

    run_py = _run_py(target)
    elf = target.probes / f"tflm-{target.probe_target}.elf"
    info = target.probes / "build_info.txt"
    record = {
        "target": target.name,
        "tflm_commit": target.name.partition(DEVICE_RELEASE_SEPARATOR)[2],
        "elf": elf.name,
        "elf_sha256": hashlib.sha256(elf.read_bytes()).hexdigest(),
        "run_py_sha256": hashlib.sha256(run_py.read_bytes()).hexdigest(),
        "built_from": info.read_text().splitlines() if info.exists() else [],
        "about": "The probe these measurements come from: built with ../shared/tools/cortex-m/"
        "build/build.sh at the TFLM commit (docs/tflm-releases.md says how), its run.py and ELF "
        f"in <folder>/{target.probes.name}/. Remade by `{remake_command(target.name, '--stale')}`"
        f" and `{remake_command(target.name, '--models', '--stale')}`.",
    }
    path = DATA / target.name / "probe.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


def main(argv: list[str] | None = None) -> int:
    """Measure the selected cases on the selected targets and update the cache."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--target",
        default="host",
        help=f"all, one of {', '.join(TARGETS)}, or {RELEASE_PREFIX}<tflite-micro version>",
    )
    parser.add_argument("--family", action="append", choices=FAMILIES)
    parser.add_argument("--case", action="append", help="case id (repeatable)")
    parser.add_argument("--stale", action="store_true", help="only cases new or changed")
    parser.add_argument(
        "--variant-cases",
        action="store_true",
        help="on an ESP build, only the cases tests/conformance/esp_variants.py selects for it",
    )
    parser.add_argument(
        "--models", action="store_true", help="the shared corpus and the examples, not the cases"
    )
    args = parser.parse_args(argv)
    targets = list(TARGETS) if args.target == "all" else [args.target]
    for name in targets:
        target = target_named(name)
        record_device_probe(target)
        selected = _selected_ids(name) if args.variant_cases else None
        cases = [
            case
            for case in all_cases()
            if (not args.case or case.id in args.case)
            and (not args.family or case.family in args.family)
            and (selected is None or case.id in selected)
        ]
        with _wheel_probe(target) as probe:
            if args.models:
                _measure_models(target, probe, args.stale)
                continue
            for number, case in enumerate(cases, 1):
                path = data_path(name, case.family)
                family = json.loads(path.read_text())["cases"] if path.exists() else {}
                cached = family.get(case.id)
                if args.stale and cached is not None and cached.get("sha256") == case.sha256():
                    continue
                family[case.id] = measure(case, target, probe)
                print(f"{name} {number}/{len(cases)} {case.id}: {family[case.id]}")
                save(name, case.family, family)
    return 0


def _selected_ids(target: str) -> set[str] | None:
    """The case ids an ESP build measures (None: every case, for the other targets)."""
    from tests.conformance.esp_variants import variant_cases
    from tests.conformance.targets import ESP_TARGET_NAMES

    if target not in ESP_TARGET_NAMES:
        return None
    return {case.id for case in variant_cases(target)}


if __name__ == "__main__":
    sys.exit(main())
