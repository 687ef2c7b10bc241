"""Two-buffer TFLM measured: the minimal persistent and non-persistent buffers of
`MicroAllocator::Create(persistent, P, non_persistent, N)` on real TFLM for Cortex-M under QEMU,
and resource variables on their own allocator on the ESP probes (`--var-arena`).

    python -m tests.two_buffers                          # every probe found, every model
    python -m tests.two_buffers --probe cortex-m55-reference-two --only hello_world
    python -m tests.two_buffers --probe esp32s3-esp-nn-vars

The probes:

* `cortex-m55-reference-two`: ../shared/tools/cortex-m/tflm-cortex-m55-reference-two.elf (TFLM
  90b983c, reference kernels; its README's "two-buffer probe").
* `cortex-m3-cmsis-nn-two`: the same probe source (`build/two-arena/probe_two.cc`) linked against
  the kit's Cortex-M3 CMSIS-NN library (`tests/build_two_probe.sh` builds it:
  `MIRROR=<bare mirrors> bash tests/build_two_probe.sh cortex-m3-cmsis-nn`, into
  `.cortexm/`; the ELF is looked for in $ARENALENS_TWO_BUFFER_PROBES, default
  `.cortexm/build/<target>-two/probe.elf`).
* `esp32s3-esp-nn-vars`: ../shared/tools/esp's run.py `--allocator plain --var-arena V`: the main
  arena's minimum with the variables' table apart, and the smallest V.

Every minimum is bisected on the probe alone (arenalens' prediction is never a hint): a roomy run
gives what each buffer holds after setup, a gallop from there brackets the minimum, a bisection
finds it; the pair of minima is then run together. Anything but a clean run counts as a failure:
`status=ok`, `guards=ok`, `null_write=0` and no "Failed to" line (TFLM does not reliably fail below
the persistent minimum: it may return OK after an unchecked allocation failed). Every QEMU run has
a timeout: a hang is a failure.

Measurements go to tests/data/two_buffers.json with each model's sha256;
tests/runtimes/tflm/test_two_buffers.py compares arenalens' figures with them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "tests" / "data" / "two_buffers.json"
SHARED = REPO.parent / "shared"
CORTEX_M = Path(os.environ.get("ARENALENS_CORTEX_M_PROBES", SHARED / "tools" / "cortex-m"))
ESP = Path(os.environ.get("ARENALENS_ESP_PROBES", SHARED / "tools" / "esp"))
LOCAL_PROBES = Path(os.environ.get("ARENALENS_TWO_BUFFER_PROBES", REPO / ".cortexm" / "build"))
MODELS = SHARED / "models"
TIMEOUT_S = 60
ROOMY_VAR_ARENA = 4096


@dataclass(frozen=True)
class Probe:
    """One two-buffer build: its ELF, the QEMU machine, the arenalens build it is predicted with."""

    name: str
    build: str  # arenalens' build name (plain MicroAllocator)
    elf: Path
    machine: str
    roomy: int  # each buffer's roomy size (both plus the model fit the machine's big RAM)
    remake: str

    def available(self) -> bool:
        return self.elf.is_file() and shutil.which("qemu-system-arm") is not None


PROBES = {
    "cortex-m55-reference-two": Probe(
        "cortex-m55-reference-two",
        "cortex-m55/reference",
        CORTEX_M / "tflm-cortex-m55-reference-two.elf",
        "mps3-an547",
        64 << 20,
        "../shared/tools/cortex-m/build/two-arena/build_two_probe.sh",
    ),
    "cortex-m3-cmsis-nn-two": Probe(
        "cortex-m3-cmsis-nn-two",
        "cortex-m3/cmsis-nn",
        LOCAL_PROBES / "cortex-m3-cmsis-nn-two" / "probe.elf",
        "mps2-an385",
        6 << 20,
        "MIRROR=<bare mirrors> bash tests/build_two_probe.sh cortex-m3-cmsis-nn",
    ),
}
ESP_VARS = "esp32s3-esp-nn-vars"
ESP_VARS_BUILD = "esp32s3/esp-nn"

RESULT = re.compile(r"^RESULT (.*)$", re.MULTILINE)


def clean(text: str) -> bool:
    """A run that worked: status=ok, guards intact, no write through null, no failure logged."""
    found = RESULT.search(text)
    if found is None or "Failed to" in text or "FAULT" in text:
        return False
    fields = dict(item.split("=", 1) for item in found.group(1).split() if "=" in item)
    return (
        fields.get("status") == "ok"
        and fields.get("guards", "ok") == "ok"
        and fields.get("null_write", "0") == "0"
    )


def result_fields(text: str) -> dict[str, str]:
    found = RESULT.search(text)
    if found is None:
        return {}
    return dict(item.split("=", 1) for item in found.group(1).split() if "=" in item)


class TwoRunner:
    """Runs one model on a two-buffer probe at (P, N)."""

    def __init__(self, probe: Probe, model: bytes) -> None:
        self.probe = probe
        self.folder = Path(tempfile.mkdtemp(prefix="arenalens-two-"))
        (self.folder / "m.tflite").write_bytes(model)
        self.runs = 0

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def text(self, persistent: int, non_persistent: int) -> str:
        self.runs += 1
        config = (
            f"enable=on,target=native,arg=probe,arg=m.tflite,arg={persistent},arg={non_persistent}"
        )
        command = [
            "qemu-system-arm", "-M", self.probe.machine, "-display", "none", "-monitor", "none",
            "-serial", "null", "-semihosting-config", config, "-kernel", str(self.probe.elf),
        ]  # fmt: skip
        try:
            done = subprocess.run(
                command,
                check=False,
                cwd=self.folder,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return "TIMEOUT"
        return done.stdout.decode("utf-8", "replace")

    def ok(self, persistent: int, non_persistent: int) -> bool:
        return clean(self.text(persistent, non_persistent))


def smallest(works: Callable[[int], bool], start: int, *, step: int = 16) -> int:
    """The smallest size that works, found from `start` (a size near it): gallop to a bracket
    (one size that fails, one that works), then bisect. Assumes fitting is monotone."""
    if works(start):
        high, gap = start, step
        low = max(start - gap, -1)
        while low >= 0 and works(low):
            high, gap = low, gap * 4
            low = max(high - gap, -1)
    else:
        low, gap = start, step
        high = start + gap
        while not works(high):
            low, gap = high, gap * 4
            high = low + gap
    while high - low > 1:
        middle = (low + high) // 2
        if works(middle):
            high = middle
        else:
            low = middle
    return high


def measure_two(probe: Probe, model: bytes) -> dict[str, Any]:
    """One model on a two-buffer probe → the minima, what each buffer holds, the pair run."""
    runner = TwoRunner(probe, model)
    try:
        roomy = runner.text(probe.roomy, probe.roomy)
        if not clean(roomy):
            return {"status": "fail", "detail": _detail(roomy)}
        fields = result_fields(roomy)
        tail, head = int(fields["tail"]), int(fields["head"])
        persistent = smallest(lambda size: runner.ok(size, probe.roomy), tail)
        non_persistent = smallest(lambda size: runner.ok(probe.roomy, size), head)
        pair = runner.ok(persistent, non_persistent)
        return {
            "status": "ok",
            "tail": tail,
            "head": head,
            "persistent_min": persistent,
            "non_persistent_min": non_persistent,
            "pair_ok": pair,
            "runs": runner.runs + 0,
        }
    finally:
        runner.close()


def _esp_run(model_path: Path, arena: int | None, var_arena: int) -> dict[str, Any]:
    command = [
        sys.executable, str(ESP / "run.py"), str(model_path), "--target", "esp32s3-esp-nn",
        "--allocator", "plain", "--var-arena", str(var_arena), "--json",
        "--timeout", str(TIMEOUT_S),
    ]  # fmt: skip
    command += ["--min-arena"] if arena is None else ["--arena", str(arena)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TIMEOUT_S * 40, check=False
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout"}
    try:
        found: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"status": "error", "detail": done.stderr[-300:]}
    return found


def measure_vars(model: bytes) -> dict[str, Any]:
    """One model with resource variables on the ESP32-S3 probe: the main arena's minimum with
    the table in a roomy var arena, then the smallest var arena at a roomy main arena."""
    folder = Path(tempfile.mkdtemp(prefix="arenalens-vars-"))
    path = folder / "m.tflite"
    path.write_bytes(model)
    try:
        main = _esp_run(path, None, ROOMY_VAR_ARENA)
        if main.get("status") != "ok":
            return {"status": "fail", "detail": str(main.get("detail", main.get("status")))}
        minimum = int(main["min_arena"])
        roomy = minimum + (64 << 10)

        def works(size: int) -> bool:
            if size <= 0:
                return False
            return _esp_run(path, roomy, size).get("status") == "ok"

        var_arena = smallest(works, 256)
        return {"status": "ok", "main_min": minimum, "var_arena_min": var_arena}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _detail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-3:])[-300:]


def shared_models() -> Iterator[tuple[str, bytes]]:
    """The shared corpus (../shared/models) by file name."""
    for path in sorted(MODELS.glob("*.tflite")):
        yield path.name, path.read_bytes()


# Generated cases measured: the conformance cases of these families whose id matches, plus
# every case with resource variables or several subgraphs (the setups that differ most).
CASE_FAMILIES = ("nn", "cmsis_nn", "shape", "elementwise", "signal", "quantization")


def generated_cases(every: int) -> Iterator[tuple[str, bytes]]:
    """Every `every`-th conformance case of CASE_FAMILIES, plus those with resource variables."""
    from tests.conformance.cases import all_cases

    for position, case in enumerate(all_cases()):
        if case.family not in CASE_FAMILIES:
            continue
        if _has_variables(case.id) or position % every == 0:
            yield f"case:{case.id}", case.model()


def variable_models() -> Iterator[tuple[str, bytes]]:
    """Models with resource variables: the conformance cases that have them."""
    from tests.conformance.cases import all_cases

    for case in all_cases():
        if _has_variables(case.id):
            yield f"case:{case.id}", case.model()


def _has_variables(case_id: str) -> bool:
    return "VAR" in case_id or "resource" in case_id


def bank_models() -> Iterator[tuple[str, bytes]]:
    """The models the placement tests put on an STM32H7 (tests/fixtures/bank_models.py)."""
    from tests.fixtures.bank_models import BANK_MODELS

    for name, make in BANK_MODELS:
        yield f"fixture:{name}", make()


def cached() -> dict[str, Any]:
    if not CACHE.exists():
        return {}
    document: dict[str, Any] = json.loads(CACHE.read_text())
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", action="append", choices=[*PROBES, ESP_VARS])
    parser.add_argument("--only", help="models whose name contains this")
    parser.add_argument("--every", type=int, default=9, help="every n-th generated case")
    parser.add_argument("--no-cases", action="store_true", help="shared models only")
    parser.add_argument("--stale", action="store_true", help="only models not measured yet")
    args = parser.parse_args(argv)
    document = cached()
    names = args.probe or [name for name, probe in PROBES.items() if probe.available()]
    for name in names:
        entry = document.setdefault(name, {})
        if name == ESP_VARS:
            entry.update(
                {"build": ESP_VARS_BUILD, "remake": f"python -m tests.two_buffers --probe {name}"}
            )
            models: Iterator[tuple[str, bytes]] = variable_models()
        else:
            probe = PROBES[name]
            if not probe.available():
                print(f"{name}: probe not found at {probe.elf} ({probe.remake})", file=sys.stderr)
                return 2
            entry.update(
                {
                    "build": probe.build,
                    "elf_sha256": hashlib.sha256(probe.elf.read_bytes()).hexdigest(),
                    "probe": probe.remake,
                    "remake": f"python -m tests.two_buffers --probe {name}",
                }
            )
            models = shared_models()
            if not args.no_cases:
                models = _chain(
                    models, bank_models(), generated_cases(args.every), variable_models()
                )
        figures = entry.setdefault("models", {})
        for model_name, data in models:
            if args.only and args.only not in model_name:
                continue
            digest = hashlib.sha256(data).hexdigest()
            if args.stale and figures.get(model_name, {}).get("sha256") == digest:
                continue
            found = measure_vars(data) if name == ESP_VARS else measure_two(PROBES[name], data)
            found["sha256"] = digest
            figures[model_name] = found
            print(name, model_name, json.dumps(found), flush=True)
            CACHE.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


def _chain(*parts: Iterator[tuple[str, bytes]]) -> Iterator[tuple[str, bytes]]:
    seen: set[str] = set()
    for part in parts:
        for name, data in part:
            if name not in seen:
                seen.add(name)
                yield name, data


if __name__ == "__main__":
    sys.exit(main())
