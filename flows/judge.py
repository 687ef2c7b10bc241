"""The real runtime's side of a flow: a number, a CANNOT RUN, an optimized model → the claims the
wheel (host build) or the Cortex-M QEMU probes (device builds, for a sample) confirm or refute.

* A number N on the host build: the wheel sets the model (at the shapes asked) up in exactly N
  bytes and computes there, bit for bit, what the flow's original model computes at a roomy arena
  with the same seeded inputs (an optimized, reordered or overlapped model included); 16 bytes
  below it should fail (minimality: noted, never unsafe).
* CANNOT RUN on the host: the wheel refuses the model at a roomy arena (setup or invoke).
* On a device build of the sample: the probe sets up at N with firmware's plain allocator, an
  optimized model's output hashes at N equal the original's, a CANNOT RUN is refused there.
* LiteRT (`--runtime litert`, a Linux device): the figure names the delegate, threads and ISA
  asked; on the machine the heap was measured on (x86-64 with AVX-512, one thread) the real
  interpreter's peak heap is not above the figure's heap; a CANNOT RUN is refused there.
"""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arenalens.errors import ArenalensError
from arenalens.ir import Model
from arenalens.runtimes.litert.shapes import resize_model_inputs
from arenalens.tflite.reader import parse_model
from arenalens.tflite.rewriter import model_bytes
from flows.claims import CONFIRMED, NOTED, UNCHECKED, UNSAFE, WRONG, Claim
from flows.commands import Shapes, Verdict, at_shapes, input_shapes, option_values
from flows.oracle import (
    CORTEX_M_OUTPUT_TARGETS,
    CortexM,
    LiteRTHeap,
    OldWheels,
    Outputs,
    Wheel,
    roomy_arena,
)

# Cortex-M probes' RAM is 16 MiB (Cortex-M3/M7); an original run there as the outputs' reference.
DEVICE_REFERENCE_ARENA = 4 << 20
# measure.py's figures move by up to ~300 B between invocation contexts (the Python wrapper's own
# blocks; notes of issue 32): a figure under the measurement by no more than this is noted.
LITERT_MEASURE_NOISE = 320
DELEGATE_TITLES = {"xnnpack": "XNNPACK", "none": "builtin kernels"}


class Judge:
    """Judges one flow's claims on the real runtimes; `claims` collects the rulings."""

    def __init__(
        self,
        original: bytes,
        *,
        wheel: Wheel,
        cortex_m: CortexM | None = None,
        device_sample: bool = False,
        litert: LiteRTHeap | None = None,
    ) -> None:
        self.original = original  # the model the flow started from: every output's reference
        self.wheel = wheel
        self.litert = litert if litert is not None and litert.available else None
        self.cortex_m = cortex_m if cortex_m is not None and cortex_m.available else None
        self.device_sample = device_sample
        self.old_wheels = OldWheels()
        self.claims: list[Claim] = []
        self._references: dict[Shapes, tuple[Outputs, list[Any]] | None] = {}
        self._judged: set[tuple[str, int, str]] = set()

    def claim(self, kind: str, outcome: str, command: str, detail: str = "") -> None:
        self.claims.append(Claim(kind, outcome, command, detail))

    def number(
        self,
        kind: str,
        command: str,
        data: bytes,
        shape: Sequence[str],
        *,
        number: int,
        build: dict[str, Any],
    ) -> None:
        """`number` bytes, declared for `build`: on the host, the wheel sets the model (at the
        shapes asked) up there and computes the original's outputs; on another release's host
        build, that release's wheel sets it up there."""
        if str(build.get("name", "host")).startswith("host@"):
            self.old_wheel_number(command, data, shape, number, build)
            return
        if build.get("name", "host") != "host":
            self.device_number(command, data, shape, number, build)
            return
        at_shape = at_shapes(data, shape)
        if at_shape is None:
            return  # the size was refused before any claim was made
        subject_bytes, model = at_shape
        key = (hashlib.sha256(subject_bytes).hexdigest(), number, kind)
        if key in self._judged:
            return
        self._judged.add(key)
        reference = self.reference(input_shapes(model))
        inputs = (
            reference[1] if reference is not None else self.wheel.accepted(subject_bytes, model)[1]
        )
        at_number = self.wheel.run(subject_bytes, number, inputs)
        setup_kind = "sets-up-at-n"
        if not at_number.ok:
            roomy = self.wheel.roomy(subject_bytes, inputs)
            why = (
                f"the wheel fails at {number:,} B ({at_number.error})"
                if roomy.ok
                else f"the wheel refuses the model at any size ({roomy.error}) yet a number "
                f"({number:,} B) was given"
            )
            self.claim(setup_kind, UNSAFE, command, why)
            return
        self.claim(setup_kind, CONFIRMED, command, f"{number:,} B")
        output_kind = "outputs-at-n" if kind == "sets-up-at-n" else kind
        if reference is None or not reference[0].ok:
            error = "its size was refused" if reference is None else reference[0].error
            self.claim(output_kind, NOTED, command, f"the original does not run: {error}")
        elif at_number.same_as(reference[0]):
            self.claim(output_kind, CONFIRMED, command, f"{number:,} B")
        else:
            self.claim(
                output_kind, UNSAFE, command, f"other outputs than the original at {number:,} B"
            )
        if number > 16:
            below = self.wheel.run(subject_bytes, number - 16, inputs)
            self.claim(
                "minimal",
                CONFIRMED if not below.ok else NOTED,
                command,
                "" if not below.ok else f"also sets up at {number - 16:,} B",
            )

    def reference(self, shapes: Shapes) -> tuple[Outputs, list[Any]] | None:
        """The original model with these input shapes, without any offline plan, at a roomy
        arena: what every model of the flow at those shapes must compute (and its inputs)."""
        if shapes not in self._references:
            original = self.original_at(shapes)
            if original is None:
                self._references[shapes] = None
            else:
                self._references[shapes] = self.wheel.accepted(*original)
        return self._references[shapes]

    def original_at(self, shapes: Shapes) -> tuple[bytes, Model] | None:
        """The flow's original model resized to these input shapes (by position), no plan."""
        model = parse_model(self.original, "original")
        if shapes != input_shapes(model):
            try:
                model = resize_model_inputs(model, dict(enumerate(shapes)))
            except ArenalensError:
                return None
        data = model_bytes(model, drop_offline_plan=True)
        return data, parse_model(data, "original")

    def cannot_run(
        self, command: str, data: bytes, shape: Sequence[str], build: dict[str, Any]
    ) -> None:
        """CANNOT RUN: on the host, the wheel refuses it at a roomy arena; on a device build in
        the sample, the output probe refuses it (set up or invoke)."""
        at_shape = at_shapes(data, shape)
        if at_shape is None:
            return
        subject_bytes, model = at_shape
        if str(build.get("name", "host")).startswith("host@"):
            self.old_wheel_cannot_run(command, subject_bytes, build)
            return
        if build.get("name", "host") != "host":
            self.device_cannot_run(command, subject_bytes, build)
            return
        roomy, _ = self.wheel.accepted(subject_bytes, model)
        if roomy.ok and silent_overrun(subject_bytes):
            self.claim("cannot-run", NOTED, command, SILENT_OVERRUN)
        elif roomy.ok:
            self.claim("cannot-run", WRONG, command, "the wheel sets it up and invokes it")
        else:
            self.claim("cannot-run", CONFIRMED, command, roomy.error[:200])

    # -- the host build of another TFLM release, on that release's wheel ------------------------
    def old_wheel_version(self, command: str, kind: str, build: dict[str, Any]) -> str | None:
        """The wheel of the build's release when its environment is here (else unchecked)."""
        version = (build.get("tflm") or {}).get("wheel")
        if version and self.old_wheels.available(version):
            return str(version)
        self.claim(kind, UNCHECKED, command, f"{build.get('name')}: no wheel of that release here")
        return None

    def old_wheel_number(
        self, command: str, data: bytes, shape: Sequence[str], number: int, build: dict[str, Any]
    ) -> None:
        """`number` on that release's wheel: AllocateTensors in exactly those bytes (its worker
        does not invoke), and 16 bytes below it fails (minimality: noted)."""
        version = self.old_wheel_version(command, "sets-up-at-n", build)
        at_shape = at_shapes(data, shape)
        if version is None or at_shape is None:
            return
        key = (hashlib.sha256(at_shape[0]).hexdigest(), number, version)
        if key in self._judged:
            return
        self._judged.add(key)
        works, error = self.old_wheels.sets_up(at_shape[0], version, number)
        if not works:
            roomy, why = self.old_wheels.sets_up(at_shape[0], version, roomy_arena(at_shape[0]))
            detail = f"tflite-micro=={version} fails at {number:,} B ({error})"
            if not roomy:
                detail = f"tflite-micro=={version} refuses it at any size ({why}), yet {number:,} B"
            self.claim("sets-up-at-n", UNSAFE, command, detail)
            return
        self.claim("sets-up-at-n", CONFIRMED, command, f"tflite-micro=={version}: {number:,} B")
        if number > 16:
            below, _ = self.old_wheels.sets_up(at_shape[0], version, number - 16)
            detail = f"tflite-micro=={version} also sets up at {number - 16:,} B" if below else ""
            self.claim("minimal", NOTED if below else CONFIRMED, command, detail)

    def old_wheel_cannot_run(self, command: str, data: bytes, build: dict[str, Any]) -> None:
        """CANNOT RUN on another release: its wheel refuses the model at a roomy arena (a model
        it sets up may still fail at Invoke, which its worker does not run: unchecked)."""
        version = self.old_wheel_version(command, "cannot-run", build)
        if version is None:
            return
        works, error = self.old_wheels.sets_up(data, version, roomy_arena(data))
        if works:
            detail = f"tflite-micro=={version} sets it up; Invoke is not probed"
            self.claim("cannot-run", UNCHECKED, command, detail)
        else:
            self.claim("cannot-run", CONFIRMED, command, f"tflite-micro=={version}: {error[:160]}")

    # -- Cortex-M, on the QEMU sample ----------------------------------------------------------
    def device_target(self, build: dict[str, Any]) -> str | None:
        if self.cortex_m is None or not self.device_sample:
            return None
        return self.cortex_m.target_for(build)

    def device_number(
        self, command: str, data: bytes, shape: Sequence[str], number: int, build: dict[str, Any]
    ) -> None:
        target = self.device_target(build)
        if target is None or self.cortex_m is None:
            self.claim("device-sets-up-at-n", UNCHECKED, command, str(build.get("name")))
            return
        at_shape = at_shapes(data, shape)
        if at_shape is None:
            return
        run = self.cortex_m.sets_up(at_shape[0], target, number)
        outcome = CONFIRMED if run.ok else UNSAFE
        self.claim(
            "device-sets-up-at-n", outcome, command, f"{target} at {number:,} B: {run.status}"
        )

    def device_outputs(self, command: str, data: bytes, verdict: Verdict) -> None:
        """An optimized model on its own device build: output hashes at its number equal the
        original's (at a roomy arena), on the output probe."""
        target = self.device_target(verdict.build)
        if target is None or self.cortex_m is None or verdict.required is None:
            return
        if target not in CORTEX_M_OUTPUT_TARGETS or verdict.required >= DEVICE_REFERENCE_ARENA:
            return
        written = at_shapes(data, ())
        original = None if written is None else self.original_at(input_shapes(written[1]))
        if original is None:
            return
        before = self.cortex_m.outputs(original[0], target, DEVICE_REFERENCE_ARENA)
        after = self.cortex_m.outputs(data, target, verdict.required)
        if not before.ok:
            self.claim("device-outputs-at-n", NOTED, command, f"original: {before.status}")
        elif after.ok and after.hashes == before.hashes:
            self.claim("device-outputs-at-n", CONFIRMED, command, target)
        else:
            self.claim(
                "device-outputs-at-n",
                UNSAFE,
                command,
                f"{target} at {verdict.required:,} B: {after.status}, outputs differ",
            )

    def device_two_buffers(
        self,
        command: str,
        data: bytes,
        shape: Sequence[str],
        split: tuple[int, int],
        build: dict[str, Any],
    ) -> None:
        """A header's two buffers (persistent P, non-persistent N) on the sample: the two-buffer
        probe of its build sets the model up cleanly with exactly those two (guards intact, no
        write through null, no failure logged: TFLM does not reliably fail below the persistent
        minimum)."""
        probe = self.two_buffer_probe(build)
        if probe is None:
            return
        from tests.two_buffers import TwoRunner

        at_shape = at_shapes(data, shape)
        if at_shape is None:
            return
        persistent, non_persistent = split
        runner = TwoRunner(probe, at_shape[0])
        try:
            works = runner.ok(persistent, non_persistent)
        finally:
            runner.close()
        self.claim(
            "device-two-buffers",
            CONFIRMED if works else UNSAFE,
            command,
            f"{probe.name} at {persistent:,} + {non_persistent:,} B",
        )

    def two_buffer_probe(self, build: dict[str, Any]) -> Any:
        """The two-buffer probe built for this build (tests/two_buffers.py), on the sample."""
        if self.cortex_m is None or not self.device_sample:
            return None
        if build.get("allocator") != "MicroAllocator":
            return None
        from tests.two_buffers import PROBES

        for probe in PROBES.values():
            if probe.build == build.get("name") and probe.available():
                return probe
        return None

    def device_cannot_run(self, command: str, data: bytes, build: dict[str, Any]) -> None:
        target = self.device_target(build)
        if target is None or self.cortex_m is None:
            self.claim("cannot-run", UNCHECKED, command, "a device build outside the sample")
            return
        if target not in CORTEX_M_OUTPUT_TARGETS:
            self.claim("cannot-run", UNCHECKED, command, f"{target} has no output probe")
            return
        run = self.cortex_m.outputs(data, target, DEVICE_REFERENCE_ARENA, seeds="1")
        runs = run.ok and all("invoke failed" not in hashes for hashes in run.hashes.values())
        outcome = WRONG if runs else CONFIRMED
        self.claim("cannot-run", outcome, command, f"{target}: {run.status}")

    # -- LiteRT ---------------------------------------------------------------------------------
    def litert_verdict(
        self,
        command: str,
        data: bytes,
        shape: Sequence[str],
        verdict: Verdict,
        words: Sequence[str],
    ) -> None:
        """A LiteRT verdict: its figure is for what was asked (delegate, threads, ISA); on the
        measuring machine's ISA with one thread, the real interpreter's peak heap is not above
        the figure's heap; its CANNOT RUN, the interpreter refuses the model."""
        delegate = (option_values(words, "--delegate") or ("xnnpack",))[-1]
        threads = int((option_values(words, "--threads") or ("1",))[-1])
        isa = (option_values(words, "--isa") or ("",))[-1]
        on_device = bool(option_values(words, "--target"))
        if verdict.required is not None:
            self._figure_for(command, verdict, (delegate, threads, isa), device=on_device)
        at_shape = at_shapes(data, shape)
        if at_shape is None:
            return
        if self.litert is None:
            self.claim("litert-heap", UNCHECKED, command, "no LiteRT wheel or heap tracer here")
            return
        if verdict.required is None:
            if not verdict.runs:
                run = self.litert.peak(at_shape[0], delegate)
                outcome = WRONG if run.ok else CONFIRMED
                self.claim("cannot-run", outcome, command, run.error[:200] or "LiteRT runs it")
            return
        if not measured_here(isa, device=on_device) or threads != 1:
            self.claim(
                "litert-heap", UNCHECKED, command, f"isa {isa or 'device'}, {threads} threads"
            )
            return
        run = self.litert.peak(at_shape[0], delegate)
        heap = verdict.heap_peak
        if not run.ok:
            detail = f"the interpreter refuses the model ({run.error[:160]}) yet a number was given"
            self.claim("litert-heap", UNSAFE, command, detail)
        elif heap is None:
            self.claim("litert-heap", NOTED, command, "the figure names no heap part")
        elif heap >= run.peak:
            self.claim(
                "litert-heap", CONFIRMED, command, f"{heap:,} >= {run.peak:,} B ({delegate})"
            )
        else:
            outcome = NOTED if run.peak - heap <= LITERT_MEASURE_NOISE else UNSAFE
            detail = f"peak heap {heap:,} B < the interpreter's {run.peak:,} B ({delegate})"
            self.claim("litert-heap", outcome, command, detail)

    def _figure_for(
        self, command: str, verdict: Verdict, asked: tuple[str, int, str], *, device: bool
    ) -> None:
        """The figure says what it is for: the delegate, the threads and the ISA asked (a Linux
        device's arm64 when no --isa is given)."""
        from arenalens.runtimes.litert.isa import default_isa

        delegate, threads, isa = asked
        # No --isa: a device's (arm64 and its refinements), else the default (ARENALENS_ISA or
        # this machine's), which the figure names.
        machine = f"Linux {isa or ('arm64' if device else default_isa())}"
        words = [DELEGATE_TITLES[delegate], machine]
        words += [f"{threads} threads"] if threads > 1 else []
        missing = [word for word in words if word not in verdict.device]
        if threads == 1 and "threads" in verdict.device:
            missing.append("(one thread)")
        self.claim(
            "figure-for",
            WRONG if missing else CONFIRMED,
            command,
            f"{verdict.device!r} lacks {missing}" if missing else verdict.device,
        )


SILENT_OVERRUN = (
    "the wheel returns from an Invoke check calls memory corruption (an NDEBUG build copies past "
    "an output; at a roomy arena nothing it checks breaks)"
)


def silent_overrun(data: bytes) -> bool:
    """Whether every reason the host build cannot run the model is an Invoke that writes past
    a tensor on an NDEBUG build (micro_resource_variable.cc: a read into a smaller output; seed
    1300301 flow 23): the wheel is one, so its returning refutes nothing."""
    from arenalens import check

    try:
        refusals = check(data).as_dict()["cannot_run"]
    except ArenalensError:
        return False
    return bool(refusals) and all(
        refusal.get("phase") == "invoke" and "memory corruption" in str(refusal.get("reason"))
        for refusal in refusals
    )


def measured_here(isa: str, *, device: bool) -> bool:
    """Whether the figure's ISA (--isa; a device's arm64 without it; else the default,
    `isa.default_isa`) is the one the wheel runs on this machine, so that its heap can be
    measured here: an AVX-512 figure is not judged on an AVX2 CPU's interpreter (seed 1100201
    flow 44: other XNNPACK tiles, other packed weights)."""
    from arenalens.runtimes.litert.isa import default_isa, profile, running_isa

    if device and not isa:
        return False
    cpuinfo = Path("/proc/cpuinfo")
    text = cpuinfo.read_text(errors="replace") if cpuinfo.is_file() else ""
    here = running_isa(text, platform.machine())
    return profile(isa or default_isa()).name == profile(here).name
