"""The heap a real LiteRT interpreter holds on other instruction sets, measured under qemu-user
and cached in tests/data/litert_heap_isa.json:

    python -m tests.litert_heap_isa --setup           # the arm64 tree, wheels and tracer (once)
    python -m tests.litert_heap_isa                   # every model on every emulated CPU
    python -m tests.litert_heap_isa --only vww --cpu cortex-a53  # one model, one CPU

Needs (Debian, as root): `apt-get install qemu-user gcc-aarch64-linux-gnu mmdebstrap`. The
setup builds into the git-ignored `.litert-isa/`: a Debian bookworm arm64 tree with Python 3.11
(`mmdebstrap --variant=extract`), the aarch64 `ai-edge-litert` and numpy wheels of the host's
versions (`pip install --target --platform manylinux_2_27_aarch64`), and the shared tool's
heap_tracer.c cross-compiled with aarch64-linux-gnu-gcc. Each run is the shared tool's
measure.py under `qemu-aarch64 -cpu CPU` (or `qemu-x86_64 -cpu CPU` with the host's own Python
and wheel), the tracer preloaded in the guest, the model copied to a path of the host
measurement's length (tests/litert_heap_measure.py says why).

What the emulated CPU tells the runtime: XNNPACK and ruy choose their microkernels from
pytorch/cpuinfo's view of the CPU. On arm64 Linux, cpuinfo takes the ISA features (dot product,
i8mm, ...) from the auxiliary vector's HWCAP/HWCAP2, which qemu sets from the `-cpu` model, and
the microarchitecture from /proc/cpuinfo's MIDR fields, which qemu 7.2 does not emulate for
arm64 (the guest would read the host's x86 text and cpuinfo crashes): each run bind-mounts, in
a private mount namespace (`unshare -m`), a /proc/cpuinfo naming the emulated core (`CPUS`:
implementer, part, variant and the features its HWCAP holds). On x86-64 cpuinfo reads CPUID,
which qemu emulates per model.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from tests.litert_heap_measure import MODES, REPO_ROOT, TOOL, heap_figures, models

DATA = REPO_ROOT / "tests/data/litert_heap_isa.json"
TREE = REPO_ROOT / ".litert-isa"
SUITE, MIRROR = "bookworm", "http://deb.debian.org/debian"
TREE_PACKAGES = "libc6,libstdc++6,python3.11,libpython3.11-stdlib,zlib1g,libffi8,libexpat1"
GUEST_PYTHON = "usr/bin/python3.11"
AARCH64_PLATFORMS = ("manylinux_2_27_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64")
TIMEOUT_SECONDS = 900


@dataclass(frozen=True)
class EmulatedCpu:
    """One CPU qemu-user emulates: its ISA as arenalens names it, and (arm64) the MIDR fields
    and feature words its /proc/cpuinfo shows (the features are those of the HWCAP qemu sets
    for the model: `getauxval` in the guest)."""

    name: str  # the cache's key
    isa: str  # arenalens' --isa name
    title: str
    qemu: str
    part: str = ""
    variant: str = ""
    features: str = ""
    qemu_cpu: str = ""  # qemu's -cpu value, when it is not `name`

    @property
    def cpu_option(self) -> str:
        return self.qemu_cpu or self.name

    def cpuinfo(self, processors: int) -> str:
        return "".join(
            f"processor\t: {index}\nBogoMIPS\t: 50.00\nFeatures\t: {self.features}\n"
            f"CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: {self.variant}\n"
            f"CPU part\t: {self.part}\nCPU revision\t: 0\n\n"
            for index in range(processors)
        )


_ARMV8 = "fp asimd evtstrm crc32 cpuid"
_ARMV82 = f"{_ARMV8} atomics fphp asimdhp asimdrdm lrcpc dcpop asimddp"
CPUS = (
    EmulatedCpu(
        "cortex-a53", "arm64", "Cortex-A53 (NEON, no dot product)", "qemu-aarch64",
        part="0xd03", variant="0x0", features=_ARMV8,
    ),
    EmulatedCpu(
        "cortex-a76", "arm64-dotprod", "Cortex-A76 (NEON dot product)", "qemu-aarch64",
        part="0xd0b", variant="0x4", features=_ARMV82,
    ),
    # qemu's max core without SME (with it XNNPACK takes KleidiAI's SME kernels, which pack
    # activations into its workspace: Armv9.2 cores, not modelled).
    EmulatedCpu(
        "max-nosme", "arm64-i8mm", "qemu max, no SME (dot product, i8mm; shown as a Neoverse N2)",
        "qemu-aarch64", part="0xd49", variant="0x0", features=f"{_ARMV82} asimdfhm i8mm bf16",
        qemu_cpu="max,sme=off",
    ),
    EmulatedCpu("Haswell", "x86-64-v3", "Haswell (AVX2, FMA; no AVX-512)", "qemu-x86_64"),
    EmulatedCpu("Nehalem", "x86-64-v2", "Nehalem (SSE4.2; no AVX)", "qemu-x86_64"),
)  # fmt: skip


def setup(tree: Path = TREE) -> None:
    """Build the arm64 tree, its wheels and the cross-compiled tracer into `tree`."""
    root = tree / "root"
    tree.mkdir(parents=True, exist_ok=True)
    if not (root / GUEST_PYTHON).is_file():
        subprocess.run(
            [
                *("mmdebstrap", "--arch=arm64", "--variant=extract"),
                *(f"--include={TREE_PACKAGES}", SUITE, str(root), MIRROR),
            ],
            check=True,
        )
    site = tree / "site"
    if not (site / "ai_edge_litert").is_dir():
        platforms = [f"--platform={name}" for name in (*AARCH64_PLATFORMS, "any")]
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "install", "-q", "--target", str(site)),
                *platforms,
                *("--only-binary=:all:", "--python-version=3.11", "--implementation=cp"),
                f"ai-edge-litert=={version('ai-edge-litert')}",
                f"numpy=={version('numpy')}",
            ],
            check=True,
        )
    for compiler, library in (
        ("aarch64-linux-gnu-gcc", "heap_tracer.so"),
        ("gcc", "heap_tracer_x86_64.so"),
    ):
        subprocess.run(
            [
                compiler,
                "-O2",
                "-shared",
                "-fPIC",
                "-o",
                str(tree / library),
                str(TOOL / "heap_tracer.c"),
                "-ldl",
            ],
            check=True,
        )
    processors = len(Path("/proc/cpuinfo").read_text().split("processor\t:")) - 1
    for cpu in CPUS:
        if cpu.qemu == "qemu-aarch64":
            (tree / f"cpuinfo-{cpu.name}").write_text(cpu.cpuinfo(processors))


def command(cpu: EmulatedCpu, model: Path, mode: str, tree: Path = TREE) -> list[str]:
    """The command that runs measure.py for `model` under `mode` on the emulated `cpu`."""
    measure = str(TOOL / "measure.py")
    if cpu.qemu == "qemu-x86_64":
        tracer = tree / "heap_tracer_x86_64.so"
        return [
            cpu.qemu,
            "-cpu",
            cpu.name,
            "-E",
            f"LD_PRELOAD={tracer}",
            sys.executable,
            measure,
            str(model),
            mode,
        ]
    guest = (
        f"{cpu.qemu} -cpu {cpu.cpu_option} -L {tree / 'root'}"
        f" -E LD_PRELOAD={tree / 'heap_tracer.so'} -E PYTHONPATH={tree / 'site'}"
        f" {tree / 'root' / GUEST_PYTHON} {measure} {model} {mode}"
    )
    cpuinfo = tree / f"cpuinfo-{cpu.name}"
    return ["unshare", "-m", "sh", "-c", f"mount --bind {cpuinfo} /proc/cpuinfo && exec {guest}"]


def measure(cpu: EmulatedCpu, model: Path, mode: str, tree: Path = TREE) -> dict[str, Any]:
    """One model under one delegate on one emulated CPU → measure.py's figures (or its error)."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "model.tflite"
        copy.write_bytes(model.read_bytes())
        completed = subprocess.run(
            command(cpu, copy, mode, tree),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    return heap_figures(completed)


def environment() -> dict[str, Any]:
    """Where the figures hold: the wheel, the tree, the emulator and the emulated CPUs."""
    qemu = subprocess.run(
        ["qemu-aarch64", "--version"], capture_output=True, text=True, check=False
    )
    return {
        "ai_edge_litert": version("ai-edge-litert"),
        "numpy": version("numpy"),
        "tree": f"Debian {SUITE} arm64 ({TREE_PACKAGES}), mmdebstrap --variant=extract",
        "qemu": qemu.stdout.splitlines()[0] if qemu.stdout else "",
        "cpus": {cpu.name: {"isa": cpu.isa, "title": cpu.title} for cpu in CPUS},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", action="store_true", help="build .litert-isa/ and stop")
    parser.add_argument("--only", default="", help="measure models whose name contains this")
    parser.add_argument("--cpu", action="append", help="emulated CPU(s) to measure on (CPUS)")
    arguments = parser.parse_args(argv)
    missing = [tool for tool in ("qemu-aarch64", "unshare") if shutil.which(tool) is None]
    if missing:
        sys.exit(f"litert_heap_isa: {', '.join(missing)} not found (apt-get install qemu-user)")
    setup()
    if arguments.setup:
        return 0
    cpus = [cpu for cpu in CPUS if not arguments.cpu or cpu.name in arguments.cpu]
    document: dict[str, Any] = {"models": {}}
    if DATA.is_file():
        document = json.loads(DATA.read_text())
    document["command"] = (
        "python -m tests.litert_heap_isa --setup && python -m tests.litert_heap_isa"
    )
    document["environment"] = environment()
    with tempfile.TemporaryDirectory() as scratch:
        for name, path, which in models(Path(scratch)):
            if arguments.only not in name:
                continue
            entry = document["models"].setdefault(name, {"set": which})
            for cpu in cpus:
                entry[cpu.name] = {mode: measure(cpu, path, mode) for mode in MODES}
                print(name, cpu.name, json.dumps(entry[cpu.name]), flush=True)
            document["models"] = dict(sorted(document["models"].items()))
            DATA.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
