"""The device sample, cached: flow models on every QEMU probe here, at the figure `check` gives.

`python -m flows.devices --pairs 40 --seed 1200501 --json tests/data/flows_devices.json` draws
(flow model, build with a probe, input size) triples (`flows.models` families, the held-out
`stateful` one included; the builds of `PROBED_BUILDS`, each on the probe that stands for it:
`oracle.probe_standing_for`), asks `check MODEL <build> --budget 1GB --json` (in-process, as a
flow does) and runs the probe: a number N must set the model up in exactly N bytes with
firmware's plain allocator (and 16 B below it should not: minimality, noted); a CANNOT RUN must
not set up at a roomy arena, or, refused at Invoke, must not invoke there (zeroed inputs; not on
the S3 and P4 probes, whose kernels are stubs, nor on the Ethos-U one: no NPU in QEMU).

QEMU takes seconds per run, so CI reads the cache instead (tests/test_flows.py): each entry's
model is drawn again from its (seed, index), must be the same bytes, and `check` must still give
the figure the probe confirmed; a changed figure names this command to remake the evidence.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from flows.commands import ANY_BUDGET, Verdict, at_shapes, run_cli
from flows.judge import DEVICE_REFERENCE_ARENA
from flows.models import ALL_FAMILIES, Subject, random_subject
from flows.oracle import (
    CORTEX_M_TARGETS,
    ESP_INVOKE_TARGETS,
    CortexM,
    DeviceRun,
    probe_standing_for,
)

# Builds with a probe here (../shared/tools/cortex-m and ../shared/tools/esp), as users name them.
PROBED_BUILDS: tuple[tuple[str, ...], ...] = (
    ("--cpu", "cortex-m7", "--kernels", "cmsis-nn"),
    ("--cpu", "cortex-m7"),
    ("--cpu", "cortex-m3", "--kernels", "cmsis-nn"),
    ("--cpu", "cortex-m55", "--kernels", "cmsis-nn"),
    ("--cpu", "cortex-m55"),
    ("--cpu", "cortex-m4", "--kernels", "cmsis-nn"),
    ("--cpu", "cortex-m33"),
    ("--cpu", "esp32s3"),
    ("--cpu", "esp32"),
    ("--cpu", "esp32c3"),
    ("--cpu", "esp32p4"),
    ("--cpu", "esp32", "--kernels", "esp-nn-ansi"),
    ("--cpu", "esp32s3", "--kernels", "esp-nn@1.2.0"),
    ("--cpu", "esp32s3", "--kernels", "esp-nn@1.1.2"),
    ("--cpu", "esp32c3", "--kernels", "reference"),
)
# Families whose models are small enough for a probe's RAM and a cache test's time (the
# 224x224 MobileNet example and the upstream files are left to the campaigns).
FAMILIES = ("cnn", "quant", "float_cnn", "dag", "audio", "fixture", "stateful")
MINIMALITY_STEP = 16
# A roomy arena every probe's RAM holds (the Cortex-M3/M7 machines have 16 MiB).
ROOMY = DEVICE_REFERENCE_ARENA
# The probes that invoke (run.py --invoke): every Cortex-M one, the ESP ones with real kernels.
# What a probe does with a model TFLM refuses: fails, faults, halts or spins (a failed DCHECK).
REFUSED = ("fail", "fault", "timeout", "halted")
INVOKE_TARGETS = frozenset(CORTEX_M_TARGETS.values()) | ESP_INVOKE_TARGETS


@dataclass(frozen=True)
class Pair:
    """One drawn (model, build, size): how to draw it again, and what check said."""

    seed: int
    index: int
    recipe: str
    sha256: str
    build: tuple[str, ...]
    shape: tuple[str, ...]
    verdict: str | None
    figure: int | None
    refused_at: str = ""  # CANNOT RUN: 'setup' when a refusal fails setup, else 'invoke'


@dataclass(frozen=True)
class Probed:
    """A pair and what the probe standing for its build did."""

    pair: Pair
    probe: str | None  # None: no probe for the build summary check gave (said, not hidden)
    at_figure: str  # the probe's status at the figure (or at a roomy arena for CANNOT RUN)
    below: str  # its status 16 B below the figure ('' when not asked)

    @property
    def confirmed(self) -> bool:
        if self.probe is None:
            return False
        if self.pair.figure is None:
            return self.at_figure in REFUSED
        return self.at_figure == "ok"


def draw(seed: int, index: int) -> tuple[Subject, tuple[str, ...], tuple[str, ...]]:
    """Pair `index` of the sample `seed`: the model, the build's options, the --input-shape."""
    rng = random.Random(f"flows-devices:{seed}:{index}")
    subject = random_subject(rng, FAMILIES)
    build = rng.choice(PROBED_BUILDS)
    needs_size = subject.placeholder and subject.sizes
    shape = (
        (rng.choice(subject.sizes),) if needs_size or (subject.sizes and rng.random() < 0.3) else ()
    )
    return subject, build, shape


def checked(seed: int, index: int, folder: Path) -> tuple[Pair, bytes, dict[str, Any]]:
    """Draw pair `index` and ask check about it → the pair, the model at its size, the build."""
    subject, build, shape = draw(seed, index)
    path = folder / f"pair-{index}.tflite"
    path.write_bytes(subject.data)
    options = [option for size in shape for option in ("--input-shape", size)]
    ran = run_cli(["check", str(path), *build, *options, "--budget", ANY_BUDGET, "--json"])
    document = ran.document()
    verdict = Verdict.of_check(document) if isinstance(document, dict) else None
    sized = at_shapes(subject.data, shape)
    refusals = document.get("cannot_run") or [] if isinstance(document, dict) else []
    phases = {refusal.get("phase") for refusal in refusals}
    pair = Pair(
        seed,
        index,
        subject.recipe,
        hashlib.sha256(subject.data).hexdigest(),
        build,
        shape,
        None if verdict is None else verdict.answer,
        None if verdict is None else verdict.required,
        ("setup" if "setup" in phases else "invoke") if refusals else "",
    )
    return pair, b"" if sized is None else sized[0], {} if verdict is None else verdict.build


def probe(pair: Pair, data: bytes, build: dict[str, Any], device: CortexM) -> Probed:
    """The probe standing for the build, at the figure (and 16 B below), or roomy for CANNOT
    RUN; a pair check refused with a usage error or a size the model refuses is not probed."""
    target = probe_standing_for(build) if build.get("allocator") == "MicroAllocator" else None
    if target is None or not data or pair.verdict is None:
        return Probed(pair, target, "", "")
    if pair.figure is None:
        if pair.verdict != "CANNOT RUN":
            return Probed(pair, target, "", "")  # no number and no refusal: an unknown size
        if pair.refused_at == "setup":
            return Probed(pair, target, _status(device.sets_up(data, target, ROOMY)), "")
        if target not in INVOKE_TARGETS:
            return Probed(pair, target, "", "")  # the probe's kernels do not run
        return Probed(pair, target, _status(device.invokes(data, target, ROOMY)), "")
    at = device.sets_up(data, target, pair.figure).status
    below = ""
    if at == "ok" and pair.figure > MINIMALITY_STEP:
        below = device.sets_up(data, target, pair.figure - MINIMALITY_STEP).status
    return Probed(pair, target, at, below)


def _status(run: DeviceRun) -> str:
    """The probe's status; an 'error' without a word is a probe that halted (an abort: QEMU
    ends without the JSON line, as tests/conformance/measure.py reads it), not a missing tool."""
    return "halted" if run.status == "error" and not run.detail else run.status


def sample(seed: int, pairs: int, folder: Path, log: Any = None) -> list[Probed]:
    """`pairs` pairs of the sample `seed`, each checked and probed."""
    device = CortexM()
    found = []
    for index in range(pairs):
        pair, data, build = checked(seed, index, folder)
        probed = probe(pair, data, build, device)
        found.append(probed)
        if log is not None:
            print(
                f"{index:3d} {probed.probe or '-':22s} {pair.verdict or '-':14s} "
                f"{pair.figure or '-':>9} at={probed.at_figure or '-'} below={probed.below or '-'} "
                f"{pair.recipe}; {' '.join(pair.build)} {' '.join(pair.shape)}",
                file=log,
                flush=True,
            )
    return found


def document(found: list[Probed], command: str) -> dict[str, Any]:
    """The cache: every pair with its probe's answers, and the command that remakes it."""
    return {
        "schema": "arenalens.flows.devices",
        "command": command,
        "pairs": [
            {
                **asdict(item.pair),
                "probe": item.probe,
                "at_figure": item.at_figure,
                "below": item.below,
            }
            for item in found
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flows.devices", description=__doc__)
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1200501)
    parser.add_argument("--json", metavar="FILE", required=True)
    args = parser.parse_args(argv)
    assert set(FAMILIES) <= set(ALL_FAMILIES)
    import tempfile

    command = "python -m flows.devices " + " ".join(argv if argv is not None else sys.argv[1:])
    with tempfile.TemporaryDirectory(prefix="flows-devices-") as folder:
        found = sample(args.seed, args.pairs, Path(folder), log=sys.stdout)
    Path(args.json).write_text(json.dumps(document(found, command), indent=1) + "\n")
    probed = [item for item in found if item.probe is not None and item.at_figure]
    failed = [item for item in probed if not item.confirmed]
    print(f"{len(probed)} of {len(found)} pairs probed, {len(failed)} not confirmed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
