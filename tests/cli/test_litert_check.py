"""`check --runtime litert` on a Linux-class device (issue 32): the figure is the model file and
the interpreter's peak heap under the delegate the app runs (XNNPACK by default), against the
device's RAM less what the OS and the rest of the app keep; one verdict in the terminal, --json,
the Python API and the exit code."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import arenalens
from arenalens.cli import main
from arenalens.declared import Status
from arenalens.examples import write_example
from arenalens.litert_memory import litert_memory
from arenalens.pipeline import analyze
from arenalens.runtimes.litert.heap import interpreter_heap
from arenalens.runtimes.litert.isa import ARM64
from arenalens.targets import LINUX_DEVICES, get_target
from tests.conftest import SHARED_MODELS
from tests.litert_heap_measure import DATA
from tests.litert_kernel_cases import KERNEL_CASES

PI = "raspberry-pi-zero-2-w"
CACHE: dict[str, Any] = json.loads(DATA.read_text())


def check_json(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", *arguments, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_linux_device_is_checked_under_litert_with_xnnpack(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_example("vww_mobilenet_v1", tmp_path)
    code, document = check_json(capsys, str(path), "--target", PI)
    assert code == 0 and document["runtime"] == "litert"
    declare = document["declare"]
    assert declare["symbol"] == "LiteRT memory (XNNPACK)"
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    # The Pi Zero 2 W's Cortex-A53: arm64 without the dot product (runtimes/litert/isa.py).
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack", isa=ARM64)
    # The model file (the interpreter reads every weight from it) + the peak heap.
    assert declare["required_bytes"] == path.stat().st_size + heap.peak
    assert sum(part["bytes"] for part in declare["parts"]) == declare["required_bytes"]
    assert declare["parts"][0]["name"] == "model file"
    # Replayed on x86-64, for an arm64 device: an estimate that says so.
    assert declare["status"] == "estimate"
    assert any("errs high on arm64" in reason for reason in declare["reasons"])
    device = get_target(PI)
    assert device.runs_linux and device.reserve_bytes > 0
    assert document["available_bytes"] == device.sram_bytes - device.reserve_bytes


def test_exit_codes_follow_the_figure_and_the_reserve(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(write_example("kws_ds_cnn", tmp_path))
    analysis = analyze(path, runtime="litert")
    needed = litert_memory(analysis, "none", isa="arm64").required_bytes
    device = get_target(PI)
    base = ["check", path, "--target", PI, "--delegate", "none", "--reserve"]
    assert main([*base, str(device.sram_bytes - needed)]) == 0
    assert main([*base, str(device.sram_bytes - needed + 1)]) == 1
    output = capsys.readouterr().out
    assert "LiteRT memory (builtin kernels)" in output and "DOES NOT FIT" in output
    # With a budget on the wheel's own machine, the builtin figure is the replayed heap.
    needed = litert_memory(analysis, "none").required_bytes
    code, document = check_json(capsys, path, "--runtime", "litert", "--delegate", "none",
                                "--budget", str(needed))  # fmt: skip
    assert code == 0 and document["required_bytes"] == needed
    assert document["verdict"] in ("FITS", "FITS, TIGHT", "FITS (estimate)")


def test_runtimes_that_do_not_run_on_a_target_are_usage_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "example:kws_ds_cnn", "--target", PI, "--runtime", "tflm"]) == 2
    assert "--runtime litert" in capsys.readouterr().err
    microcontroller = ["--target", "stm32f746", "--runtime", "litert"]
    assert main(["check", "example:kws_ds_cnn", *microcontroller]) == 2
    assert "microcontroller" in capsys.readouterr().err
    assert main(["check", "example:kws_ds_cnn", "--budget", "1MB", "--delegate", "none"]) == 2
    assert "--runtime litert" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["plan", "diagnose", "export", "compare"])
def test_every_command_asks_a_linux_device_under_litert_as_check_does(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Linux device is LiteRT's for every command, as for check (held-out flow paths: `export
    --target PI -f c-header` wrote the x86-64 TFLM wheel's kTensorArenaSize, diagnose and plan
    answered in TFLM's terms, for a board check says TFLM does not run on); the runtimes a
    target does not run are the same one-line usage errors."""
    options = {"export": ["--format", "json"], "diagnose": ["--json"], "plan": ["--json"]}
    asked = [command, "example:kws_ds_cnn", *options.get(command, [])]
    code = main([*asked, "--target", PI])
    out = capsys.readouterr().out
    assert code in (0, 1)
    if command == "compare":
        assert "litert" in out.splitlines()[0]
    else:
        assert json.loads(out)["runtime"] == "litert"
    assert main([*asked, "--target", PI, "--runtime", "tflm"]) == 2
    assert "--runtime litert" in capsys.readouterr().err
    assert main([*asked, "--target", "stm32f746", "--runtime", "litert"]) == 2
    assert "microcontroller" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["plan", "export"])
def test_plan_and_export_size_a_devices_heap_for_its_isa_as_check_does(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The interpreter heap plan --json and export -f json give for a Linux device is for its
    ISA, the heap check counts (held-out path: they gave the x86-64 heap for an arm64 Pi, under
    what check says the device needs)."""
    model = "example:kws_ds_cnn"
    options = ["--json"] if command == "plan" else ["--format", "json"]
    assert main([command, model, "--target", PI, *options]) == 0
    heaps = {
        heap["delegate"]: heap for heap in json.loads(capsys.readouterr().out)["interpreter_heap"]
    }
    for delegate in ("xnnpack", "none"):
        _code, document = check_json(capsys, model, "--target", PI, "--delegate", delegate)
        heap = heaps[delegate]
        assert heap["isa"] == "arm64"
        file_bytes = dict((part["name"], part["bytes"]) for part in document["declare"]["parts"])
        assert heap["peak_bytes"] == document["required_bytes"] - file_bytes["model file"]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ((), ("XNNPACK", "x86-64")),
        (("--delegate", "none"), ("builtin kernels", "x86-64")),
        (("--isa", "arm64", "--threads", "2"), ("XNNPACK", "2 threads", "arm64")),
    ],
)
def test_the_assumptions_are_the_figures_delegate_threads_and_isa(
    options: tuple[str, ...], named: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """check --json's assumptions say what the LiteRT figure is for (held-out flow paths: they
    said 'no delegate (XNNPACK off)' and 'num_threads = 1; Linux x86-64' whatever was asked,
    the arena budget's words, beside a figure for XNNPACK, 2 threads, arm64)."""
    _code, document = check_json(
        capsys, "example:kws_ds_cnn", "--runtime", "litert", "--budget", "10MB", *options
    )
    first = document["assumptions"][0]
    assert first.startswith(document["declare"]["device"])
    assert all(word in first for word in named), first
    assert not any("XNNPACK off" in text for text in document["assumptions"])


def test_every_device_is_checked_with_target_all(capsys: pytest.CaptureFixture[str]) -> None:
    code, document = check_json(capsys, "example:vww_mobilenet_v1", "--target", "all",
                                "--runtime", "litert")  # fmt: skip
    assert code == 0
    names = [row["board"] for row in document["boards"]]
    assert sorted(names) == sorted(device.name for device in LINUX_DEVICES)
    assert all(row["fits_after_optimize"] == row["fits"] for row in document["boards"])
    assert document["declare"]["symbol"] == "LiteRT memory (XNNPACK)"


def test_the_builtin_kernels_step_runs_as_printed(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """XNNPACK does not fit; the step printed checks the builtin kernels, and that command's own
    figure is the builtin one (it fits here: the reserve leaves room for it alone)."""
    path = str(write_example("vww_mobilenet_v1", tmp_path))
    analysis = analyze(path, runtime="litert")
    builtin = litert_memory(analysis, "none").required_bytes
    xnnpack = litert_memory(analysis, "xnnpack").required_bytes
    assert builtin < xnnpack
    budget = (builtin + xnnpack) // 2
    code, document = check_json(capsys, path, "--runtime", "litert", "--budget", str(budget))
    assert code == 1
    commands = [step["command"] for step in document["next_steps"] if step["command"]]
    printed = next(command for command in commands if "--delegate none" in command)
    words = shlex.split(printed)
    assert words[:2] == ["arenalens", "check"]
    code, again = check_json(capsys, *words[2:])
    assert code == 0 and again["required_bytes"] == builtin


def test_an_unsigned_transpose_conv_has_an_xnnpack_figure(tmp_path: Any) -> None:
    """An 8-bit unsigned TRANSPOSE_CONV: XNNPACK takes it (its qu8 deconvolution, replayed since
    session 18; it was a usage error before), so check gives a figure under either delegate,
    on the x86-64 host and on an arm64 board alike."""
    path = tmp_path / "transpose_conv_uint8.tflite"
    path.write_bytes(KERNEL_CASES["transpose_conv_uint8"]())
    assert main(["check", str(path), "--target", PI]) == 0
    assert main(["check", str(path), "--target", PI, "--delegate", "none"]) == 0
    assert main(["check", str(path), "--runtime", "litert", "--budget", "1MiB"]) == 0


@pytest.mark.parametrize(
    "name", ["mlperf_tiny__vww_96_int8.tflite", "mlperf_tiny__ad01_fp32.tflite"]
)
def test_the_figure_is_never_under_the_real_interpreter(name: str) -> None:
    """The tracer's figures on the wheel (tests/data/litert_heap.json) + the file: what the
    app needs, never above check's figure under either delegate."""
    path = SHARED_MODELS / name
    if not path.is_file():
        pytest.skip("the shared models are not here")
    measured = CACHE["models"][name]
    analysis = analyze(path, runtime="litert")
    for mode, delegate in (("builtin", "none"), ("xnnpack", "xnnpack")):
        figure = litert_memory(analysis, delegate)
        assert figure.required_bytes >= path.stat().st_size + measured[mode]["peak"], mode
    exact = litert_memory(analysis, "none")
    assert exact.status in (Status.EXACT, Status.ESTIMATE)


def test_the_python_api_gives_the_same_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    verdict = arenalens.check("example:kws_ds_cnn", target=PI, delegate="none")
    assert verdict.runtime == "litert"
    code, document = check_json(capsys, "example:kws_ds_cnn", "--target", PI, "--delegate", "none")
    assert verdict.as_dict()["required_bytes"] == document["required_bytes"]
    assert verdict.exit_code == code == 0


def test_threads_size_the_heap_and_the_commands_repeat_them(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """--threads N: the heap of Interpreter(num_threads=N) (XNNPACK's threadpool, the builtin
    kernels' pool); every check command printed repeats it; a float CONV_2D on x86-64 (Eigen's
    multithreaded kernel) is sized with its pool and contraction (refused with exit 2 before
    session 16, a labelled bound in 16); on an arm64 device (ruy, no such kernel) it is sized
    too."""
    path = write_example("vww_mobilenet_v1", tmp_path)
    analysis = analyze(path, runtime="litert")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    heap = interpreter_heap(analysis.model, sizes, delegate="xnnpack", threads=4)
    budget = path.stat().st_size + heap.peak - 1
    code, document = check_json(
        capsys, str(path), "--runtime", "litert", "--threads", "4", "--budget", str(budget)
    )
    assert code == 1 and document["required_bytes"] == budget + 1
    assert "4 threads" in document["declare"]["device"]
    commands = [step["command"] for step in document["next_steps"] if step["command"]]
    checks = [command for command in commands if command.startswith("arenalens check")]
    assert checks and all("--threads 4" in command for command in checks)
    assert main(["check", str(path), "--budget", "1MB", "--threads", "2"]) == 2  # TFLM
    float_model = SHARED_MODELS / "mlperf_tiny__vww_96_float.tflite"
    if float_model.is_file():
        arguments = ["check", str(float_model), "--budget", "1GB", "--delegate", "none"]
        code, document = check_json(capsys, *arguments[1:], "--runtime", "litert", "--threads", "4")
        assert code == 0 and document["declare"]["status"] == "estimate"
        # conv.cc's multi-threaded kernel is replayed (since session 17): Eigen's thread pool
        # among the kept parts, its parallel contraction among the first invoke's transients.
        meanings = " ".join(part["meaning"] for part in document["declare"]["parts"])
        assert "Eigen's thread pool" in meanings and "Eigen's parallel contraction" in meanings
        device = ["check", str(float_model), "--target", PI, "--delegate", "none"]
        assert main([*device, "--threads", "4"]) == 0


def test_max_input_compares_the_same_figure_as_the_check_it_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--max-input under LiteRT searches with the model file + peak heap at each size; the
    check at the size it found gives that figure again."""
    base = ["example:kws_ds_cnn", "--runtime", "litert", "--budget", "1MB"]
    code, document = check_json(capsys, *base, "--max-input")
    assert code == 0
    shape = "x".join(str(dim) for dim in document["max_input_shape"])
    name = document["max_input_name"]
    code, again = check_json(capsys, *base, "--input-shape", f"{name}={shape}")
    assert code == 0 and again["required_bytes"] == document["max_input_required_bytes"]
    assert again["declare"]["symbol"] == "LiteRT memory (XNNPACK)"


README_COMMAND = "$ arenalens check mlperf_tiny__vww_96_int8.tflite --target raspberry-pi-zero-2-w"


def test_the_readme_example_is_what_check_prints(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """README's 'LiteRT on a Linux device' example: its lines are check's first lines today
    (the heap's figures move as its parts are replayed: remake the block from the command)."""
    path = SHARED_MODELS / "mlperf_tiny__vww_96_int8.tflite"
    if not path.is_file():
        pytest.skip("the shared models are not here")
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = readme.split(README_COMMAND + "\n", 1)[1].split("```", 1)[0]
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["check", str(path), "--target", PI, "--no-color"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert block.splitlines() == printed[: len(block.splitlines())]


def test_a_model_xnnpack_fails_to_create_cannot_run_under_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Held-out flow (seed 550001 flow 210, --wide): a FULLY_CONNECTED whose requantization scale
    (input x filter / output scale) is 28,497: the XNNPACK delegate takes it, xnn_create_runtime
    refuses it (fully-connected-nc.c: 256 or more), and allocate_tensors() fails with LiteRT's
    default XNNPACK; check said FITS with 210,720 B. It is now CANNOT RUN under XNNPACK, with the
    builtin kernels as the way (they run it)."""
    from flows.flow import random_flow

    path = tmp_path / "model.tflite"
    path.write_bytes(random_flow(550001, 210, split=True, wide=True).subject.data)
    code, document = check_json(capsys, str(path), "--runtime", "litert", "--budget", "1GB")
    assert code == 1 and document["verdict"] == "CANNOT RUN"
    (refusal,) = document["cannot_run"]
    assert refusal["opcode"] == "FULLY_CONNECTED" and "--delegate none" in refusal["fix"]
    code, builtin = check_json(
        capsys, str(path), "--runtime", "litert", "--budget", "1GB", "--delegate", "none"
    )
    assert code == 0 and builtin["required_bytes"] is not None
    interpreter = pytest.importorskip("ai_edge_litert.interpreter")
    data = path.read_bytes()
    kinds = interpreter.OpResolverType
    with pytest.raises(RuntimeError, match="XNNPACK"):
        interpreter.Interpreter(
            model_content=data, experimental_op_resolver_type=kinds.AUTO
        ).allocate_tensors()
    interpreter.Interpreter(
        model_content=data, experimental_op_resolver_type=kinds.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    ).allocate_tensors()


def _add_with_relu6(scale: float) -> bytes:
    """One int8 ADD with a fused RELU6, every tensor at `scale`."""
    from arenalens.tflite.builder import ModelBuilder, quantization

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    tensors = [
        graph.add_tensor(name, [1, 8, 8, 4], "INT8", quantization=quantization(scale, 0))
        for name in ("a", "b", "y")
    ]
    graph.add_operator("ADD", tensors[:2], tensors[2:], options={"fused_activation_function": 3})
    graph.set_inputs(tensors[:2])
    graph.set_outputs(tensors[2:])
    return builder.build()


def test_an_activation_bound_that_overflows_stops_the_builtin_kernels_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Held-out flow (seed 550101 flow 332, --wide): a fused RELU6 whose 6 / output scale
    overflows int32 fails the builtin kernel's Prepare (kernel_util.cc Quantize,
    `no_integer_overflow_from_quantization`), and check --delegate none said FITS. An operator
    XNNPACK takes never runs that Prepare: with XNNPACK the same model runs."""
    path = tmp_path / "add.tflite"
    path.write_bytes(_add_with_relu6(1e-9))
    none = ("--runtime", "litert", "--budget", "4MB", "--delegate", "none")
    code, builtin = check_json(capsys, str(path), *none)
    assert code == 1 and builtin["verdict"] == "CANNOT RUN"
    (refusal,) = builtin["cannot_run"]
    assert refusal["opcode"] == "ADD" and "no_integer_overflow_from_quantization" in str(refusal)
    code, delegated = check_json(capsys, str(path), "--runtime", "litert", "--budget", "4MB")
    assert code == 0 and delegated["required_bytes"] is not None
    path.write_bytes(_add_with_relu6(0.05))
    code, calibrated = check_json(capsys, str(path), *none)
    assert code == 0 and calibrated["required_bytes"] is not None


@pytest.mark.runtime
def test_the_interpreter_agrees_on_an_overflowing_activation_bound() -> None:
    interpreter = pytest.importorskip("ai_edge_litert.interpreter")
    kinds = interpreter.OpResolverType
    data = _add_with_relu6(1e-9)
    builtin = kinds.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    with pytest.raises(RuntimeError, match="no_integer_overflow_from_quantization"):
        interpreter.Interpreter(
            model_content=data, experimental_op_resolver_type=builtin
        ).allocate_tensors()
    delegated = interpreter.Interpreter(
        model_content=data, experimental_op_resolver_type=kinds.AUTO
    )
    delegated.allocate_tensors()
    delegated.invoke()


@pytest.mark.parametrize(
    ("data", "errors", "warnings"),
    [
        # Flow 28 of seed 600201 (--wide)'s model: XNNPACK fails to create a CONV_2D.
        ("flow", 1, 0),
        # An ADD + RELU6 at scale 1e-9: the builtin kernels refuse it, XNNPACK runs it.
        ("builtin-only", 0, 1),
    ],
)
def test_diagnose_judges_litert_with_xnnpack_as_check_does(
    data: str, errors: int, warnings: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """diagnose --runtime litert's cannot-run errors are check's CANNOT RUN (XNNPACK, LiteRT's
    default delegate): held-out flows 15 and 28 of seed 600201 (--wide): check said CANNOT RUN
    (an operator XNNPACK takes and fails to create) and diagnose found nothing; a builtin
    kernel's refusal of an operator XNNPACK takes was an error though check says it runs. It is
    a warning now, for apps without the delegate."""
    from flows.flow import random_flow

    path = tmp_path / "model.tflite"
    if data == "flow":
        path.write_bytes(random_flow(600201, 28, split=True, wide=True).subject.data)
    else:
        path.write_bytes(_add_with_relu6(1e-9))
    _code, verdict = check_json(capsys, str(path), "--runtime", "litert", "--budget", "1GB")
    assert (verdict["verdict"] == "CANNOT RUN") == bool(errors)
    assert main(["diagnose", str(path), "--runtime", "litert", "--json"]) == (1 if errors else 0)
    findings = json.loads(capsys.readouterr().out)["findings"]
    severities = [finding["severity"] for finding in findings if finding["rule"] == "cannot-run"]
    assert (severities.count("error"), severities.count("warning")) == (errors, warnings)


def test_optimize_on_a_linux_device_names_the_check_that_sizes_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """optimize --target PI said `use --runtime litert`, an option optimize does not have
    (flows6, by hand): the one-line error names the check that sizes the model there, which
    runs as printed."""
    asked = ["example:kws_ds_cnn", "--input-shape", "input=1x49x10x1", "--target", PI]
    assert main(["optimize", *asked, "-o", "optimized.tflite"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "--runtime" not in error
    quoted = error.split("`")[1]
    assert quoted == "arenalens check " + " ".join(asked)
    assert main(shlex.split(quoted)[1:]) in (0, 1)


@pytest.mark.parametrize(
    "asked",
    [
        ("example:vww_mobilenet_v1", "--runtime", "litert"),
        ("example:kws_ds_cnn", "--target", PI),
        ("flow", "--runtime", "litert"),
    ],
)
def test_diagnose_leads_with_checks_figure_under_litert(
    asked: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """diagnose --runtime litert led with the builtin kernels' arenas (vww: LiteRT arenas =
    108,288 B) while its cannot-run findings, and check, follow XNNPACK (LiteRT memory (XNNPACK)
    = 1,178,000 B): one answer now, check's, on the device's ISA for a Linux device, and
    check's `none` when XNNPACK cannot run the model (held-out flow 28 of seed 600201)."""
    from flows.flow import random_flow

    model, *options = asked
    if model == "flow":
        path = tmp_path / "model.tflite"
        path.write_bytes(random_flow(600201, 28, split=True, wide=True).subject.data)
        model = str(path)
    budget = [] if "--target" in options else ["--budget", "1GB"]
    _code, verdict = check_json(capsys, model, *options, *budget)
    main(["diagnose", model, *options, "--no-color"])
    lines = capsys.readouterr().out.splitlines()
    declared = verdict["declare"]
    if verdict["verdict"] == "CANNOT RUN":
        assert lines[0].startswith(f"{declared['symbol']}: none")
    else:
        assert lines[0].startswith(f"{declared['symbol']} = {declared['required_bytes']:,} B")
        assert lines[1] == f"figure for: {declared['device']}"


@pytest.mark.parametrize(
    "options",
    [(), ("--delegate", "none", "--isa", "arm64"), ("--target", PI, "--threads", "2")],
)
def test_a_litert_header_carries_the_apps_memory_not_a_tflm_arena(
    options: tuple[str, ...], tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`export -f c-header --runtime litert` defined kTensorArenaSize and <PREFIX>_ARENA_SIZE
    (the arenas alone, a TFLM notion) while check says the app needs the model file + the
    interpreter's peak heap under its delegate, ISA and threads. The header now carries that
    figure with what it is for, and nothing a TFLM build would take for its arena."""
    model = "example:kws_ds_cnn"
    runtime = () if "--target" in options else ("--runtime", "litert")
    budget = () if "--target" in options else ("--budget", "64M")
    _code, checked = check_json(capsys, model, *runtime, *options, *budget)
    header = tmp_path / "kws.h"
    assert main(["export", model, *runtime, *options, "-f", "c-header", "-o", str(header)]) == 0
    text = header.read_text()
    assert "kTensorArenaSize" not in text and "_ARENA_SIZE" not in text
    assert f"#define EXAMPLE_KWS_DS_CNN_LITERT_MEMORY_BYTES {checked['required_bytes']}u" in text
    delegate = options[options.index("--delegate") + 1] if "--delegate" in options else "xnnpack"
    assert f'#define EXAMPLE_KWS_DS_CNN_LITERT_DELEGATE "{delegate}"' in text
    threads = options[options.index("--threads") + 1] if "--threads" in options else "1"
    assert f"#define EXAMPLE_KWS_DS_CNN_LITERT_THREADS {threads}u" in text
    assert f" * Memory for: {checked['declare']['device']}." in " ".join(text.split("\n *   "))
    if shutil.which("gcc"):
        flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-x", "c", "-c"]
        subprocess.run(["gcc", *flags, str(header), "-o", str(tmp_path / "kws.o")], check=True)


def test_a_litert_header_batch_row_is_the_apps_memory(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A batch of LiteRT headers headed its figures "arena (B)" while each header carries the
    app's memory: the row says "memory (B)" and gives that figure."""
    for name in ("kws_ds_cnn", "fc_autoencoder"):
        write_example(name, tmp_path / "models")
    arguments = ["export", str(tmp_path / "models"), "--runtime", "litert", "-j", "1"]
    assert main([*arguments, "-f", "c-header", "-o", str(tmp_path / "headers")]) == 0
    table = capsys.readouterr().out
    assert "memory (B)" in table and "arena (B)" not in table
    _code, checked = check_json(capsys, str(tmp_path / "models" / "kws_ds_cnn.tflite"),
                                "--runtime", "litert", "--budget", "64M")  # fmt: skip
    assert f"{checked['required_bytes']:,}" in next(
        line for line in table.splitlines() if "kws_ds_cnn" in line
    )
