"""The LiteRT interpreter's heap on other instruction sets (runtimes/litert/isa.py) against the
real wheel's under qemu-user, as tests/data/litert_heap_isa.json cached it
(`python -m tests.litert_heap_isa --setup && python -m tests.litert_heap_isa` remakes it): the
aarch64 wheel on emulated Cortex-A53 (arm64), Cortex-A76 (arm64-dotprod) and an i8mm core
(arm64-i8mm), the x86-64 wheel on emulated Haswell (x86-64-v3) and Nehalem (x86-64-v2). An
ISA's figure is an estimate: it must never be under what the interpreter held there, and
armv7's (no wheel) never under any arm64 core's."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from arenalens.pipeline import analyze
from arenalens.runtimes.litert import eigen_blocking
from arenalens.runtimes.litert.heap import InterpreterHeap, interpreter_heap, xnnpack_unsized
from arenalens.runtimes.litert.isa import (
    ARM64,
    ARMV7,
    HOST,
    ISA_VARIABLE,
    PROFILES,
    X86_64_V3,
    X86_64_V3_ZEN,
    X86_64_V4,
    device_isa,
    profile,
    running_isa,
)
from tests.litert_heap_isa import CPUS, DATA
from tests.runtimes.litert.test_litert_heap import (
    DELEGATE_OF_MODE,
    HELD_OUT_FAMILIES,
    PHASES,
    model_path,
)

CACHE: dict[str, Any] = json.loads(DATA.read_text())
ISA_OF_CPU = {cpu.name: cpu.isa for cpu in CPUS}
MEASURED = sorted(CACHE["models"])


@functools.cache
def predicted(name: str, folder: str, isa: str) -> dict[str, InterpreterHeap | None] | None:
    path = model_path(name, Path(folder))
    if path is None:
        return None
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    chosen = PROFILES[isa]
    heaps: dict[str, InterpreterHeap | None] = {
        "none": interpreter_heap(analysis.model, sizes, delegate="none", isa=chosen)
    }
    heaps["xnnpack"] = (
        None
        if xnnpack_unsized(analysis.model)
        else interpreter_heap(analysis.model, sizes, delegate="xnnpack", isa=chosen)
    )
    return heaps


def test_cache_names_where_its_figures_hold() -> None:
    environment = CACHE["environment"]
    assert environment["ai_edge_litert"] and environment["qemu"] and environment["tree"]
    assert set(environment["cpus"]) == set(ISA_OF_CPU)
    assert CACHE["command"].startswith("python -m tests.litert_heap_isa")
    measured_everywhere = [
        name for name, entry in CACHE["models"].items() if all(cpu in entry for cpu in ISA_OF_CPU)
    ]
    assert len(measured_everywhere) >= 70
    assert sum(entry["set"] == "held_out" for entry in CACHE["models"].values()) >= 42


@pytest.mark.parametrize("name", MEASURED)
def test_other_isas_are_never_under_the_real_interpreter(name: str, tmp_path_factory: Any) -> None:
    folder = str(tmp_path_factory.getbasetemp())
    entry = CACHE["models"][name]
    for cpu, isa in ISA_OF_CPU.items():
        if cpu not in entry:
            continue
        heaps = predicted(name, folder, isa)
        if heaps is None:
            pytest.skip("the shared models are not here")
        armv7 = predicted(name, folder, ARMV7.name)
        assert armv7 is not None
        for mode, delegate in DELEGATE_OF_MODE.items():
            real = entry[cpu][mode]
            heap = heaps[delegate]
            if "error" in real or heap is None:
                continue
            assert not heap.exact and heap.estimate and isa in heap.estimate
            for measured_key, predicted_key in PHASES:
                figure = getattr(heap, predicted_key)
                assert figure >= real[measured_key], (cpu, mode, measured_key, figure)
                if cpu.startswith(("cortex", "max")):
                    # armv7 has no wheel: its estimate stays above every arm64 core's.
                    assert getattr(armv7[delegate], predicted_key) >= real[measured_key]


def test_the_measuring_machines_figure_falls_under_on_arm64(tmp_path_factory: Any) -> None:
    """Why other ISAs get their own figure: VWW int8 with XNNPACK needs more on a Cortex-A53
    than the x86-64 replay says (XNNPACK's operator objects are larger on arm64), and ResNet
    float without a delegate far more (Arm builds run float GEMMs through ruy, which keeps its
    packed buffer, where x86-64's Eigen frees its blocks)."""
    folder = str(tmp_path_factory.getbasetemp())
    for name, delegate, mode in (
        ("mlperf_tiny__vww_96_int8.tflite", "xnnpack", "xnnpack"),
        ("mlperf_tiny__pretrainedResnet.tflite", "none", "builtin"),
    ):
        host, arm = predicted(name, folder, HOST.name), predicted(name, folder, ARM64.name)
        if host is None or arm is None:
            pytest.skip("the shared models are not here")
        real = CACHE["models"][name]["cortex-a53"][mode]
        host_heap, arm_heap = host[delegate], arm[delegate]
        assert host_heap is not None and arm_heap is not None
        assert host_heap.after_first_invoke < real["after_invoke"] <= arm_heap.after_first_invoke
        assert "Linux arm64, estimated" in arm_heap.machine


def test_a_device_runs_as_its_core() -> None:
    assert device_isa("arm64", "cortex-a53") == "arm64"
    assert device_isa("arm64", "cortex-a72") == "arm64"
    assert device_isa("arm64", "cortex-a76") == "arm64-dotprod"
    assert device_isa("arm64", "cortex-x1") == "arm64-dotprod"
    assert device_isa("arm64", "cortex-a710") == "arm64-i8mm"
    assert device_isa("armv7", "cortex-a7") == "armv7"
    assert profile("") is HOST and profile("x86-64") is HOST
    with pytest.raises(ValueError, match="choose one of"):
        profile("riscv64")


def test_isa_is_an_option_of_the_litert_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check/plan --isa: the figure is that ISA's, says so, and every printed check command
    repeats --isa; under TFLM the option is a usage error."""
    from arenalens.cli import main
    from arenalens.examples import write_example
    from arenalens.litert_memory import litert_memory

    model = str(write_example("vww_mobilenet_v1", tmp_path))
    analysis = analyze(model, runtime="litert")
    needed = litert_memory(analysis, "xnnpack", isa="armv7")
    arm64 = litert_memory(analysis, "xnnpack", isa="arm64")
    assert needed.required_bytes >= arm64.required_bytes
    budget = str(needed.required_bytes - 1)
    argv = ["check", model, "--runtime", "litert", "--budget", budget, "--isa", "armv7"]
    assert main([*argv, "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["declare"]["required_bytes"] == needed.required_bytes
    assert any("errs high on armv7" in reason for reason in document["declare"]["reasons"])
    assert main([*argv, "--no-color"]) == 1
    commands = [line.strip() for line in capsys.readouterr().out.splitlines()]
    checks = [line for line in commands if line.startswith("arenalens check")]
    assert checks and all("--isa armv7" in line for line in checks)
    assert main(["plan", model, "--runtime", "litert", "--isa", "arm64", "--json"]) == 0
    heaps = json.loads(capsys.readouterr().out)["interpreter_heap"]
    assert {heap["isa"] for heap in heaps} == {"arm64"} and not any(h["exact"] for h in heaps)
    assert main(["plan", model, "--isa", "arm64"]) == 2
    assert "--runtime litert" in capsys.readouterr().err


# /proc/cpuinfo as each kind of CPU shows it (the fields running_isa reads).
_ZEN_EPYC = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 23\nmodel\t\t: 1\n" \
    "flags\t\t: fpu sse sse2 sse4_1 sse4_2 avx fma avx2\n\nprocessor\t: 1\n"  # fmt: skip
_ZEN2_EPYC = _ZEN_EPYC.replace("model\t\t: 1\n", "model\t\t: 49\n")
_HASWELL = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 60\n" \
    "flags\t\t: fpu sse sse2 sse4_1 sse4_2 avx fma avx2\n"  # fmt: skip
_SAPPHIRE_RAPIDS = _HASWELL.replace(
    "avx2", "avx2 avx512f avx512cd avx512bw avx512dq avx512vl amx_tile amx_int8"
)
# AVX-512 without AMX-INT8: an Ice Lake Xeon (VNNI, GFNI) and an AMD Zen 4 EPYC (family 19h).
_ICE_LAKE_SP = _HASWELL.replace("model\t\t: 60\n", "model\t\t: 106\n").replace(
    "avx2", "avx2 avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni gfni"
)
_ZEN4_EPYC = _ZEN_EPYC.replace(
    "cpu family\t: 23\nmodel\t\t: 1\n", "cpu family\t: 25\nmodel\t\t: 17\n"
).replace("avx2", "avx2 avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni avx512_bf16")
# Skylake-SP: AVX-512 F/CD/BW/DQ/VL, no VNNI; a CPU with the tile unit but not its int8 part
# has no AMX-INT8 either.
_SKYLAKE_SP = _ICE_LAKE_SP.replace(" avx512_vnni gfni", "")
_AMX_TILE_ONLY = _ICE_LAKE_SP.replace("gfni", "gfni amx_tile amx_bf16")
_NEHALEM = "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu sse sse2 sse4_1 sse4_2\n"
_CORTEX_A76 = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes crc32 atomics asimddp\n"
_CORTEX_A710 = "processor\t: 0\nFeatures\t: fp asimd asimddp i8mm bf16\n"


@pytest.mark.parametrize(
    ("cpuinfo", "machine", "expected"),
    [
        (_ZEN_EPYC, "x86_64", "x86-64-v3-zen"),  # this project's AVX2 machine
        (_ZEN2_EPYC, "x86_64", "x86-64-v3"),  # cpuinfo's Zen 2: XNNPACK's default AVX2 tiles
        (_HASWELL, "x86_64", "x86-64-v3"),
        (_SAPPHIRE_RAPIDS, "x86_64", "x86-64-avx512"),
        (_ICE_LAKE_SP, "x86_64", "x86-64-v4"),  # XNNPACK's 8-bit GEMMs 7x16c8, not AMX's
        (_ZEN4_EPYC, "x86_64", "x86-64-v4"),
        (_SKYLAKE_SP, "x86_64", "x86-64-v4"),
        (_AMX_TILE_ONLY, "x86_64", "x86-64-v4"),
        (_NEHALEM, "x86_64", "x86-64-v2"),
        (_CORTEX_A76, "aarch64", "arm64-dotprod"),
        (_CORTEX_A710, "aarch64", "arm64-i8mm"),
        ("processor\t: 0\nFeatures\t: fp asimd\n", "aarch64", "arm64"),
        ("processor\t: 0\nFeatures\t: half thumb neon vfpv4\n", "armv7l", "armv7"),
    ],
)
def test_the_default_isa_is_the_running_cpus(cpuinfo: str, machine: str, expected: str) -> None:
    assert running_isa(cpuinfo, machine) == expected


def test_arenalens_isa_pins_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ISA_VARIABLE, "x86-64-v3-zen")
    assert profile("") is X86_64_V3_ZEN
    assert profile("arm64") is ARM64  # --isa wins over the variable
    monkeypatch.setenv(ISA_VARIABLE, "pentium")
    with pytest.raises(ValueError, match="ARENALENS_ISA"):
        profile("")


def test_every_figure_names_its_isa_and_whether_it_is_a_replay(tmp_path: Path) -> None:
    path = model_path(sorted(HELD_OUT_FAMILIES)[0], tmp_path)  # generated: always here
    assert path is not None
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    for isa, replayed in (
        (HOST, True),
        (X86_64_V3_ZEN, True),
        (X86_64_V3, False),
        (X86_64_V4, False),
    ):
        heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack", isa=isa)
        assert isa.name in heap.machine
        assert heap.machine.endswith(": replayed" if replayed else ", estimated (errs high)")
        assert (isa.name in (heap.estimate or "")) is not replayed


def test_eigen_replays_the_zen_epycs_caches_as_sysfs_or_cpuid_gives_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # sysfs shows the EPYC's L3 per core complex (8 MiB), cpuid the whole (64 MiB): Eigen only
    # asks whether there is one. Other caches keep the bound.
    for pinned in ("32768,524288,8388608", "32768,524288,67108864"):
        monkeypatch.setenv(eigen_blocking.CACHES_VARIABLE, pinned)
        assert eigen_blocking.replayed_caches() is eigen_blocking.ZEN_EPYC
    monkeypatch.setenv(eigen_blocking.CACHES_VARIABLE, "32768,1048576,8388608")
    assert eigen_blocking.replayed_caches() is None
