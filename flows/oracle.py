"""The judges: real runtimes that confirm or refute a claim.

* `Wheel`: the x86-64 `tflite_micro` wheel (TFLM's reference kernels, the recording allocator),
  which every claim about the host build is checked on: does the model set up and run at N bytes,
  does it compute the same outputs as the original (seeded random inputs, several invocations),
  does it refuse the model at any size. Each run is a forked child (`arenalens.runtimes.tflm.run`):
  a crash is an answer, not the end of the campaign. Importing `tflite_micro` once in the parent
  makes each fork cheap (a tenth of a second instead of half a second).
* `LiteRTHeap`: the real `ai_edge_litert` interpreter on this machine, its heap counted by
  ../shared/tools/litert-heap (heap_tracer.so around measure.py, as tests/litert_heap_measure.py
  runs it): the peak a LiteRT figure must not be under, with XNNPACK or the builtin kernels.
* `CortexM`: real TFLM built for Cortex-M under QEMU (../shared/tools/cortex-m: `run.py` sets up
  at exactly N bytes with firmware's plain allocator, `run_outputs.py` hashes every output), for
  the builds it was made for; slow, so a flow asks it only for a sample.

Both take model bytes and an arena size and say what happened; neither knows arenalens' figures.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tests.conformance.targets import ESP_BUILDS

from arenalens.errors import ArenalensError
from arenalens.ir import Model
from arenalens.tflite.reader import parse_model

# Arena for "does the runtime run it at all": generous, and far above any figure of a flow model.
ROOMY_MINIMUM = 16 << 20
ROOMY_MAXIMUM = 512 << 20
INVOCATIONS = 3
REPO_ROOT = Path(__file__).resolve().parents[1]
CORTEX_M_PROBES = Path(
    os.environ.get("ARENALENS_CORTEX_M_PROBES", REPO_ROOT.parent / "shared" / "tools" / "cortex-m")
)
# Build name → the probe built for it (../shared/tools/cortex-m/README.md).
CORTEX_M_TARGETS = {
    "cortex-m7/reference": "cortex-m7-reference",
    "cortex-m7/cmsis-nn": "cortex-m7-cmsis-nn",
    "cortex-m3/cmsis-nn": "cortex-m3-cmsis-nn",
    "cortex-m55/reference": "cortex-m55-reference",
    "cortex-m55/cmsis-nn": "cortex-m55-cmsis-nn",
    # A Cortex-M4 with CMSIS-NN runs its DSP code path, as the Cortex-M7 probe does, with the same
    # ABI and the same TFLM and CMSIS-NN commits: arenalens gives both builds one figure (one
    # build record but for the core's name: `ladder.rewrite_class`). No Cortex-M4 probe is in
    # ../shared/tools/cortex-m; one built with its kit (tests/ladder_cases.py, LOCAL_PROBES) gives
    # issue 27's NUCLEO-F429ZI case the Cortex-M7 probe's figures, byte for byte
    # (tests/data/ladder_cases_device.json).
    "cortex-m4/cmsis-nn": "cortex-m7-cmsis-nn",
}
# The shared corpus (tests/conftest.py's place, read here without importing conftest, which
# pins the suite's ISA and CPU caches for the whole process).
SHARED_MODELS = Path(
    os.environ.get("ARENALENS_SHARED_MODELS", REPO_ROOT.parent / "shared" / "models")
)
ESP_PROBES = Path(
    os.environ.get("ARENALENS_ESP_PROBES", REPO_ROOT.parent / "shared" / "tools" / "esp")
)
# ESP builds → the ESP probe made for each (esp-tflite-micro with ESP-NN, RV32 under QEMU: the
# ESP32's struct layout; ../shared/tools/esp), as the conformance suite pairs them
# (tests/conformance/targets.ESP_BUILDS). Set-up only: the S3/P4 kernels' bodies are stubs there.
ESP_TARGETS = {build: probe for probe, build in ESP_BUILDS.items()}
# The Ethos-U probe: the Cortex-M55 reference build at the probes' TFLM with the real ETHOSU
# kernel (AllocateTensors only; the U65 driver build gives the same figures: its README).
ETHOS_U_TARGET = "cortex-m55-ethos-u"
ETHOS_U_BUILD = "cortex-m55/reference+ethos-u55-128"
# Builds whose output probe exists (run_outputs.py).
CORTEX_M_OUTPUT_TARGETS = frozenset(
    {"cortex-m7-reference", "cortex-m7-cmsis-nn", "cortex-m3-cmsis-nn", "cortex-m55-cmsis-nn"}
)
QEMU_TIMEOUT_SECONDS = 300
# An Invoke of a flow model takes seconds under QEMU; a failed DCHECK halts and never returns.
INVOKE_TIMEOUT_SECONDS = 60
# The ESP probes that run kernels' bodies (the S3 and P4 ones are stubs: set-up only).
ESP_INVOKE_TARGETS = frozenset({"esp-generic-opt", "esp-ansi", "rv32-reference"})


@dataclass(frozen=True)
class Outputs:
    """One run on the wheel: did it set up and invoke, and its outputs per invocation."""

    ok: bool
    outputs: tuple[tuple[np.ndarray[Any, Any], ...], ...]
    error: str = ""
    set_up: bool = False  # AllocateTensors succeeded (a failure then came from Invoke)

    def same_as(self, other: Outputs) -> bool:
        """Both ran and every output of every invocation is bit-identical."""
        if not (self.ok and other.ok) or len(self.outputs) != len(other.outputs):
            return False
        for mine, theirs in zip(self.outputs, other.outputs, strict=True):
            if len(mine) != len(theirs):
                return False
            for a, b in zip(mine, theirs, strict=True):
                if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                    return False
        return True


class Wheel:
    """The tflite_micro wheel, with seeded inputs per model shape."""

    def __init__(self, *, seed: int = 0) -> None:
        from arenalens.runtimes.tflm.probe import require_tflite_micro

        require_tflite_micro()
        # Imported here once, so every forked run starts with it loaded.
        from tflite_micro import runtime  # noqa: F401

        self.seed = seed
        self.runs = 0

    def inputs(
        self, model: Model, *, non_negative: bool = False
    ) -> list[list[np.ndarray[Any, Any]]]:
        from arenalens.runtimes.tflm.run import random_inputs

        runs = random_inputs(
            model, invocations=INVOCATIONS, seed=self.seed, non_negative=non_negative
        )
        return _bounded_loops(model, runs)

    def accepted(self, data: bytes, model: Model) -> tuple[Outputs, list[list[Any]]]:
        """A roomy run on inputs the model takes, and those inputs: over their whole range, or,
        when a kernel refuses them at Invoke (quantized RSQRT below its zero point), real
        values of at least 0. A model refused either way is refused."""
        inputs = self.inputs(model)
        roomy = self.roomy(data, inputs)
        if roomy.ok or not roomy.set_up:
            return roomy, inputs
        domain = self.inputs(model, non_negative=True)
        retried = self.roomy(data, domain)
        return (retried, domain) if retried.ok else (roomy, inputs)

    def run(
        self, data: bytes, arena_size: int, inputs: Sequence[Sequence[np.ndarray[Any, Any]]]
    ) -> Outputs:
        """Set the model up in exactly `arena_size` bytes and invoke it on the inputs."""
        from arenalens.runtimes.tflm.run import run_model

        self.runs += 1
        model = parse_model(data, "flow")
        result = run_model(
            data, inputs, output_count=len(model.subgraphs[0].outputs), arena_size=arena_size
        )
        error = result.error or ("" if result.ok else _last_line(result.log))
        return Outputs(
            result.ok, result.outputs if result.ok else (), error, result.head is not None
        )

    def roomy(self, data: bytes, inputs: Sequence[Sequence[np.ndarray[Any, Any]]]) -> Outputs:
        """A run at a generous arena: does the runtime run this model at all, and what it
        computes."""
        return self.run(data, roomy_arena(data), inputs)


def _bounded_loops(
    model: Model, runs: list[list[np.ndarray[Any, Any]]]
) -> list[list[np.ndarray[Any, Any]]]:
    """A model with a WHILE gets its integer inputs in [-7, 1]: a loop count is often an input
    (`count < limit`), and a random int32 there runs for 2^31 turns (5.7 us each on the wheel:
    hours), which a roomy run would take for a hang. The counts the held-out control-flow
    cases are run with (tests/litert_control_flow_cases.HELD_OUT_COUNTS) are in that range."""
    if not any(op.opcode == "WHILE" for graph in model.subgraphs for op in graph.operators):
        return runs
    return [
        [
            array % 9 - 7 if np.issubdtype(array.dtype, np.signedinteger) else array
            for array in arrays
        ]
        for arrays in runs
    ]


def roomy_arena(data: bytes) -> int:
    """Far above what the model needs, whatever arenalens says: 64 times the file, four times
    every tensor's bytes with no reuse at all (a small file may hold a model of large
    activations: LiteRT's ELU test needs 23.9 MB from 1 KB), at least 16 MiB."""
    try:
        model = parse_model(data, "roomy")
        tensors = sum(t.nbytes for graph in model.subgraphs for t in graph.tensors)
    except ArenalensError:
        tensors = 0  # the runtime then says what is wrong with the file
    return min(ROOMY_MAXIMUM, max(ROOMY_MINIMUM, 64 * len(data), 4 * tensors))


def _last_line(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return lines[-1] if lines else "setup failed"


# ---------------------------------------------------------------------------------------------
# tflite_micro wheels of other TFLM releases (`--tflm` on the host)


class OldWheels:
    """The `tflite-micro` wheel of another release, in the environment tests/conformance/wheels.py
    made for it (never made here: a campaign does not download TensorFlow). One worker per
    version, started in the flow's child on first use; AllocateTensors only (the worker's probe
    does not invoke)."""

    def __init__(self) -> None:
        self.runs = 0
        self._workers: dict[str, Any] = {}

    def available(self, version: str) -> bool:
        from tests.conformance.wheels import WHEELS

        made = any((WHEELS / version).glob("tflite_micro-*.dist-info"))
        return made and (WHEELS / "base" / "bin" / "python").exists()

    def sets_up(self, data: bytes, version: str, arena_size: int) -> tuple[bool, str]:
        """Whether that wheel sets the model up in exactly `arena_size` bytes, and its log's
        last line when it does not."""
        if version not in self._workers:
            from tests.conformance.wheels import WheelProbe

            self._workers[version] = WheelProbe(version)
        self.runs += 1
        with tempfile.TemporaryDirectory(prefix="flows-wheel-") as folder:
            path = Path(folder) / "model.tflite"
            path.write_bytes(data)
            found = self._workers[version](str(path), arena_size)
        return found.status == "ok", "" if found.status == "ok" else _last_line(found.log)

    def close(self) -> None:
        """End the workers (their pipes closed)."""
        for worker in self._workers.values():
            worker.close()
        self._workers.clear()


# ---------------------------------------------------------------------------------------------
# The real LiteRT interpreter's heap, on this machine


@dataclass(frozen=True)
class HeapRun:
    """One measure.py run: the interpreter's peak heap (bytes above its baseline), or why the
    interpreter refused the model."""

    ok: bool
    peak: int = 0
    error: str = ""


class LiteRTHeap:
    """measure.py under heap_tracer.so (compiled once, in the campaign's parent, before any
    fork)."""

    def __init__(self) -> None:
        self.runs = 0
        self._library: Path | None = None
        try:
            import ai_edge_litert  # noqa: F401
            from tests.litert_heap_measure import TOOL, tracer
        except ImportError:
            return
        import shutil

        if shutil.which("gcc") is None or not (TOOL / "heap_tracer.c").is_file():
            return
        import atexit

        folder = tempfile.mkdtemp(prefix="flows-litert-")
        atexit.register(shutil.rmtree, folder, True)  # the tracer lives as long as the campaign
        self._library = tracer(Path(folder))

    @property
    def available(self) -> bool:
        return self._library is not None

    def peak(self, data: bytes, delegate: str) -> HeapRun:
        """The peak heap of an interpreter of `data` under `delegate` ('xnnpack' | 'none'), one
        thread, through allocate_tensors() and one invoke()."""
        from tests.litert_heap_measure import measure

        assert self._library is not None
        self.runs += 1
        with tempfile.TemporaryDirectory(prefix="flows-litert-model-") as folder:
            path = Path(folder) / "model.tflite"
            path.write_bytes(data)
            figures = measure(self._library, path, "builtin" if delegate == "none" else delegate)
        if "error" in figures:
            return HeapRun(False, error=str(figures["error"]))
        return HeapRun(True, int(figures["peak"]))


# ---------------------------------------------------------------------------------------------
# Real TFLM for Cortex-M, under QEMU


@dataclass(frozen=True)
class DeviceRun:
    """One probe run: status ('ok', 'fail', 'fault', 'timeout', 'error'), and per seed the
    output hashes (output probe only)."""

    status: str
    hashes: Mapping[str, tuple[str, ...]]
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def probe_standing_for(build: Mapping[str, Any]) -> str | None:
    """The probe made for a build (its `build_summary`), or for one that differs from it only in
    the core it is named for (a Cortex-M33 with reference kernels, an ESP32 with ESP-NN's
    generic path: the same ABI, kernel path and commits, which arenalens gives one figure:
    `ladder.rewrite_class`); an Ethos-U55 or U65 of any size on the Ethos-U probe."""
    name = str(build.get("name", ""))
    if name in CORTEX_M_TARGETS or name in ESP_TARGETS:
        return CORTEX_M_TARGETS.get(name) or ESP_TARGETS[name]
    key = _unnamed(build)
    for probe, made_for in _probe_builds():
        if _unnamed(made_for) == key:
            return probe
    return None


_NAMES = ("name", "title", "cpu", "kernels_named_by")


def _unnamed(build: Mapping[str, Any]) -> dict[str, Any]:
    """A build's summary without what only names it; an Ethos-U55 or U65 NPU without its size
    (the ETHOSU kernel's arena does not depend on it)."""
    record = {key: value for key, value in build.items() if key not in _NAMES}
    npu = str(record.get("npu") or "")
    if npu.startswith(("ethos-u55", "ethos-u65")):
        record["npu"] = "ethos-u55/u65"
    return record


@functools.cache
def _probe_builds() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(probe, the summary of the build it was made for), for every probe here."""
    from arenalens.builds.build import build_named, build_summary

    made_for = [(probe, name) for name, probe in CORTEX_M_TARGETS.items()]
    made_for += [(probe, name) for probe, name in ESP_BUILDS.items()]
    made_for += [(ETHOS_U_TARGET, ETHOS_U_BUILD)]
    return tuple((probe, build_summary(build_named(name))) for probe, name in made_for)


class CortexM:
    """The Cortex-M probes for the builds they were made for."""

    def __init__(self, probes: Path = CORTEX_M_PROBES) -> None:
        self.probes = probes
        self.runs = 0

    @property
    def available(self) -> bool:
        import shutil

        return (self.probes / "run.py").is_file() and shutil.which("qemu-system-arm") is not None

    def target_for(self, build: Mapping[str, Any]) -> str | None:
        """The probe of a build (its `build_summary`), when there is one and it is firmware's
        plain allocator that the figure is for."""
        if build.get("allocator") != "MicroAllocator":
            return None
        target = probe_standing_for(build)
        if target in ESP_BUILDS:
            return target if self.esp_available else None
        return target

    @property
    def esp_available(self) -> bool:
        import shutil

        return (ESP_PROBES / "run.py").is_file() and shutil.which("qemu-system-riscv32") is not None

    def sets_up(self, data: bytes, target: str, arena_size: int) -> DeviceRun:
        """AllocateTensors() with exactly `arena_size` bytes and the plain allocator."""
        document = self._probe(
            "run.py", data, target, "--arena", str(arena_size), "--allocator", "plain", "--json"
        )
        return DeviceRun(str(document.get("status", "error")), {}, str(document.get("detail", "")))

    def invokes(self, data: bytes, target: str, arena_size: int) -> DeviceRun:
        """AllocateTensors() and one Invoke() on zeroed inputs at exactly `arena_size` bytes; the
        status is the Invoke's ('ok', 'fail', 'timeout': a failed DCHECK halts and spins)."""
        document = self._probe(
            "run.py", data, target, "--arena", str(arena_size), "--allocator", "plain",
            "--invoke", "--invoke-timeout", str(INVOKE_TIMEOUT_SECONDS), "--json",
        )  # fmt: skip
        status = str(document.get("status", "error"))
        invoke = str(document.get("invoke") or "")
        detail = str(document.get("detail", ""))
        return DeviceRun(invoke if status == "ok" and invoke else status, {}, detail)

    def outputs(self, data: bytes, target: str, arena_size: int, seeds: str = "1-3") -> DeviceRun:
        """Invoke once per seed at exactly `arena_size` bytes; the output hashes per seed."""
        document = self._probe(
            "run_outputs.py",
            data,
            target,
            "--arena",
            str(arena_size),
            "--seeds",
            seeds,
            "--brief",
        )
        hashes: dict[str, tuple[str, ...]] = {}
        for seed, run in (document.get("seeds") or {}).items():
            if run.get("invoke") != "ok":
                hashes[seed] = ("invoke failed",)
                continue
            hashes[seed] = tuple(str(output.get("fnv")) for output in run.get("outputs", ()))
        status = str(document.get("status", "error"))
        return DeviceRun(status, hashes, str(document.get("detail", "")))

    def _probe(self, script: str, data: bytes, target: str, *options: str) -> dict[str, Any]:
        self.runs += 1
        with tempfile.TemporaryDirectory(prefix="flows-qemu-") as folder:
            path = Path(folder) / "model.tflite"
            path.write_bytes(data)
            probes = ESP_PROBES if target in ESP_TARGETS.values() else self.probes
            command = [sys.executable, str(probes / script), str(path), "--target", target]
            try:
                done = subprocess.run(
                    [*command, *options],
                    capture_output=True,
                    text=True,
                    timeout=QEMU_TIMEOUT_SECONDS,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                return {"status": "timeout"}
        try:
            document: dict[str, Any] = json.loads(done.stdout)
        except json.JSONDecodeError:
            return {"status": "error", "detail": (done.stderr or done.stdout)[-300:]}
        return document
