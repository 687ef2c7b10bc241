"""Bugs the flow campaign (`python -m flows`) found where a runtime refuses the model, at a size
or at any size, each minimised to the path that broke: the command a user runs, what it claimed
or named, and what the real runtime (or the command run as printed) answered. The other
findings are in tests/test_flow_regressions.py.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from arenalens.cli import main
from tests.fixtures import path_models


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    _code, out, _err = _run(capsys, *argv, "--json")
    document: dict[str, Any] = json.loads(out)
    return document


@pytest.mark.runtime
def test_optimize_on_a_linux_device_says_the_refused_input_size_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`optimize example:branchy_inception --input-shape input=1x24x24x3 --target
    coral-dev-board` refused the device (LiteRT plans its own arenas) and named `arenalens check
    ... --input-shape input=1x24x24x3 --target coral-dev-board`, which exits 2 too: the network's
    RESHAPE refuses that size. The refused size is now said first, with no command; at a size
    the network takes, the command named runs. Found by flow 61 of
    `python -m flows --wide --litert-only --seed 1100201`."""
    pytest.importorskip("ai_edge_litert")
    monkeypatch.chdir(tmp_path)
    words = (
        "optimize",
        "example:branchy_inception",
        "--target",
        "coral-dev-board",
        "-o",
        "o.tflite",
    )
    code, _out, err = _run(capsys, *words, "--input-shape", "input=1x24x24x3")
    assert code == 2 and "cannot run the model with input shape" in err and "`" not in err
    code, _out, err = _run(capsys, *words, "--input-shape", "input=1x40x40x3")
    (command,) = err.split("`")[1::2]
    assert code == 2 and command.startswith("arenalens check")
    code, _out, err = _run(capsys, *shlex.split(command)[1:])
    assert code in (0, 1), err
    assert not (tmp_path / "o.tflite").exists()


@pytest.mark.runtime
def test_verify_of_a_model_tflm_refuses_holds_the_prediction_to_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`verify` of a model with float16 weights (DEQUANTIZE refuses them) ended in a one-line
    error, exit 2, though check calls it CANNOT RUN and the real interpreter agrees; and a
    prediction with a number for a model the interpreter refuses would have been the same
    error, not a mismatch. verify now compares the two answers: agreed (exit 0, the refusal said
    first), or MISMATCH (exit 1). Found by verify over flow models of seed 1100901."""
    pytest.importorskip("tflite_micro")
    from arenalens import declared
    from arenalens.cli import verify

    model = tmp_path / "float16.tflite"
    model.write_bytes(path_models.float16_image_model())
    checked = _json(capsys, "check", str(model), "--budget", "1GB")
    assert checked["verdict"] == "CANNOT RUN"
    code, out, err = _run(capsys, "verify", str(model), "--json")
    document = json.loads(out)
    assert code == 0 and not err and document["agrees"]
    assert "could not set up this model" in document["cannot_run"]
    (row,) = document["rows"]
    assert row["agrees"] and "predicted: CANNOT RUN" in row["note"]
    # A prediction of a number for the same refusal is a mismatch.
    monkeypatch.setattr(verify, "Status", type("Status", (), {"CANNOT_RUN": object()}))
    assert declared.Status.CANNOT_RUN is not verify.Status.CANNOT_RUN
    code, out, _err = _run(capsys, "verify", str(model), "--json")
    assert code == 1 and not json.loads(out)["agrees"]


def _variable_read_model(read_shape: list[int]) -> bytes:
    """x [1, 64] assigned to variable 's', then read into an output of `read_shape` and added
    back (a read of another size is what a model made for LiteRT may hold: LiteRT resizes it)."""
    from arenalens.tflite.builder import ModelBuilder

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 64])
    handle = graph.add_tensor("s/handle", [1], "RESOURCE")
    graph.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": "s"})
    graph.add_operator("ASSIGN_VARIABLE", [handle, x], [])
    read, out = graph.add_tensor("read", read_shape), graph.add_tensor("out", [1, 64])
    graph.add_operator("READ_VARIABLE", [handle], [read])
    graph.add_operator("ADD", [x, read], [out])
    graph.set_inputs([x])
    graph.set_outputs([out])
    return builder.build()


@pytest.mark.parametrize("build", [(), ("--cpu", "cortex-m7"), ("--cpu", "esp32s3")])
def test_a_variable_read_into_a_smaller_output_cannot_run_on_tflm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], build: tuple[str, ...]
) -> None:
    """Seed 1200301 flow 3 (`--family stateful`): a rank-0 READ_VARIABLE of a [2, 64] variable
    got FITS at 6,192 B; the wheel crashed there (SIGSEGV fetching the output: Invoke's memcpy of
    the variable's 512 B into the 4-B output wrote past it) and ran at 7,000 B only by luck.
    micro_resource_variable.cc Read: DCHECK(EvalTensorBytes == variable.bytes), then memcpy of
    variable.bytes; TFLM never resizes the output. Same-sized reads still run."""
    path = tmp_path / "read.tflite"
    path.write_bytes(_variable_read_model([]))
    document = _json(capsys, "check", str(path), "--budget", "1MB", *build)
    assert document["verdict"] == "CANNOT RUN" and document["required_bytes"] is None
    (refusal,) = document["cannot_run"]
    assert refusal["phase"] == "invoke" and refusal["opcode"] == "READ_VARIABLE"
    assert "4 B, the variable 256 B" in refusal["reason"] and "shape" in refusal["fix"]
    path.write_bytes(_variable_read_model([1, 64]))
    document = _json(capsys, "check", str(path), "--budget", "1MB", *build)
    assert document["verdict"] == "FITS" and document["cannot_run"] == []


@pytest.mark.runtime
def test_vela_promises_no_arena_for_a_compilation_check_calls_cannot_run_correctly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 1200201 flow 10 (`--family stateful --builds`): `vela MODEL --target
    corstone-320-fvp` of a WHILE + IF model with resource variables promised kTensorArenaSize =
    3,712 B for its chosen setting, and wrote it; `check` of the written model said CANNOT RUN
    CORRECTLY (Vela's offline plan starts each subgraph at offset 0, and TFLM applies those
    offsets unchecked in one arena: the WHILE's condition overwrites the caller's live inputs).
    vela now judges each compilation as check does: no arena, nothing written, exit 1."""
    pytest.importorskip("ethosu.vela")
    from tests.litert_heap_measure import held_out_model

    path = tmp_path / "model.tflite"
    path.write_bytes(held_out_model("control_flow_variables", 124795))
    written = tmp_path / "compiled.tflite"
    code, out, _err = _run(
        capsys, "vela", str(path), "--target", "corstone-320-fvp", "--memory-mode",
        "Shared_Sram", "-o", str(written), "--json",
    )  # fmt: skip
    document = json.loads(out)
    assert code == 1 and document["chosen"] is None and not written.exists()
    for row in document["candidates"]:
        assert row["arena_bytes"] is None
        assert any("CANNOT RUN CORRECTLY" in reason for reason in row["cannot_run"])
    from arenalens.report.vela_output import render_vela

    text = " ".join(render_vela(document, "", color=False, width=100).split())
    assert "no setting runs: its offline plan would corrupt tensors" in text  # said whole


def _add_with_relu6(scale: float) -> bytes:
    """One int8 ADD with a fused RELU6, every tensor at `scale` (at 1e-9, 6 / scale overflows
    int32: the builtin ADD's Prepare refuses it at every size; XNNPACK takes the ADD)."""
    from arenalens.tflite.builder import ModelBuilder, quantization

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    tensors = [
        graph.add_tensor(name, [1, 4, 4, 4], "INT8", quantization=quantization(scale, 0))
        for name in ("a", "b", "y")
    ]
    graph.add_operator("ADD", tensors[:2], tensors[2:], options={"fused_activation_function": 3})
    graph.set_inputs(tensors[:2])
    graph.set_outputs(tensors[2:])
    return builder.build()


@pytest.mark.runtime
def test_a_refusal_at_every_size_is_not_blamed_on_the_input_shape_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 1200501 pair 36 (`python -m flows.devices`): `check MODEL --cpu esp32s3 --kernels
    esp-nn@1.1.2 --input-shape image=1x4x4x1` of a quant model whose CONV_2D has a fused RELU6
    bound that overflows int32 said "LiteRT cannot run the model with input shape
    'image'=1x4x4x1", and so at every other size, its own included: the builtin kernels that
    propagate the shapes refuse the model whatever its size (kernel_util.cc, a check on
    quantization parameters), and check at its own size says CANNOT RUN (TFLM) or FITS (LiteRT
    under XNNPACK, which takes the ADD). The error now says the refusal is the model's."""
    pytest.importorskip("ai_edge_litert")
    path = tmp_path / "add.tflite"
    path.write_bytes(_add_with_relu6(1e-9))
    sizes = ("--input-shape", "a=1x8x8x4", "--input-shape", "b=1x8x8x4")
    for build, own_size_code in (("--runtime", "litert"), 0), (("--cpu", "cortex-m7"), 1):
        code, _out, _err = _run(capsys, "check", str(path), *build, "--budget", "4MB")
        assert code == own_size_code
        code, _out, err = _run(capsys, "check", str(path), *build, "--budget", "4MB", *sizes)
        assert code == 2 and "refuses the model at its own size too" in err, err
        assert "no_integer_overflow_from_quantization" in err and "input shape 'a'" in err
    path.write_bytes(_add_with_relu6(0.05))  # calibrated: that size is sized
    code, _out, err = _run(
        capsys, "check", str(path), "--cpu", "cortex-m7", "--budget", "4MB", *sizes
    )
    assert code == 0, err


@pytest.mark.runtime
def test_optimize_on_a_linux_device_names_no_check_that_cannot_size_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 1300201 flow 34 (`python -m flows --replay 34 --seed 1300201 --family stateful
    --wide`): `optimize MODEL --target raspberry-pi-4-b-2gb` of a WHILE whose body reshapes a
    loop value refused the Linux device and named `arenalens check MODEL --target
    raspberry-pi-4-b-2gb`, which exits 2: LiteRT runs that WHILE with Eval_dynamic, so its heap
    follows the number of turns and check gives no figure. optimize now says check's reason,
    without the command; a model check sizes there still gets the command, which runs."""
    pytest.importorskip("ai_edge_litert")
    from tests.litert_control_flow_heap_cases import reshaping_while

    path = tmp_path / "model.tflite"
    path.write_bytes(reshaping_while(1, 64))
    words = ("--target", "raspberry-pi-4-b-2gb")
    output = str(tmp_path / "o.tflite")
    code, _out, err = _run(capsys, "optimize", str(path), *words, "-o", output)
    assert code == 2 and "`" not in err, err
    assert "check cannot size the model there" in err and "Eval_dynamic" in err
    code, _out, err = _run(capsys, "optimize", "example:branchy_inception", *words, "-o", output)
    (command,) = err.split("`")[1::2]
    assert code == 2 and command.startswith("arenalens check")
    code, _out, err = _run(capsys, *shlex.split(command)[1:])
    assert code in (0, 1), err


def _doubled_image(scale: float) -> bytes:
    """One image input added to itself by an int8 ADD with a fused RELU6 at `scale` (at 1e-9
    LiteRT's builtin ADD refuses it at every size, as `_add_with_relu6`)."""
    from arenalens.tflite.builder import ModelBuilder, quantization

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    image, output = (
        graph.add_tensor(name, [1, 32, 32, 4], "INT8", quantization=quantization(scale, 0))
        for name in ("image", "y")
    )
    graph.add_operator("ADD", [image, image], [output], options={"fused_activation_function": 3})
    graph.set_inputs([image])
    graph.set_outputs([output])
    return builder.build()


@pytest.mark.runtime
def test_no_input_shape_is_suggested_for_a_model_litert_refuses_at_every_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`report MODEL` of a model LiteRT's builtin kernels refuse at every size (a fused RELU6
    bound overflowing int32) gave the input-resolution hint "measure it first with
    --input-shape 'image=1x16x16x4'", and `check MODEL --input-shape image=1x16x16x4` exits 2:
    --input-shape sizes the new input with those kernels. The hint now says the refusal first
    and names no --input-shape; a calibrated model still gets it, and it runs."""
    pytest.importorskip("ai_edge_litert")
    path = tmp_path / "image.tflite"
    path.write_bytes(_doubled_image(1e-9))
    resized = ("--input-shape", "image=1x16x16x4", "--budget", "4MB")
    code, _out, err = _run(capsys, "check", str(path), *resized)
    assert code == 2 and "at its own size too" in err, err
    for words in (("--runtime", "litert"), ("--runtime", "litert", "--what-if"), ("--cpu", "m7")):
        (hint,) = [
            finding
            for finding in _json(capsys, "diagnose", str(path), *words)["findings"]
            if finding["details"].get("hint") == "input-resolution"
        ]
        assert "refuses the model at every size" in hint["message"], words
        assert "no_integer_overflow_from_quantization" in hint["message"]
        assert "--input-shape '" not in hint["fix"] and hint["fix"].startswith("first make")
    _code, out, _err = _run(capsys, "report", str(path), "--no-color")
    assert "first make LiteRT's builtin kernels take the model" in " ".join(out.split())
    assert "measure it first" not in out
    path.write_bytes(_doubled_image(0.05))
    _code, out, _err = _run(capsys, "report", str(path), "--no-color")
    assert "measure it first with --input-shape 'image=1x16x16x4'" in " ".join(out.split())
    code, _out, err = _run(capsys, "check", str(path), *resized)
    assert code == 0, err


def test_a_max_input_the_model_cannot_take_is_said_before_a_build_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 1400201 flow 60 (`python -m flows --replay 60 --seed 1400201 --wide --builds`):
    `report MODEL --cpu cortex-m3 --kernels cmsis-nn --tflm 2025-10 --budget 65KB --max-input`
    of an audio model refused the build (CMSIS-NN is modelled from TFLM bc0e8c6 on) and named
    two commands that kept --max-input, and each exited 2: the model has no image input. That
    refusal is now said first, with no command; without --max-input the build's commands run."""
    from flows.flow import random_flow

    monkeypatch.chdir(tmp_path)
    Path("model.tflite").write_bytes(random_flow(1400201, 60, wide=True, builds=True).subject.data)
    words = ["model.tflite", "--input-shape", "audio=1x160", "--cpu", "cortex-m3"]
    words += ["--kernels", "cmsis-nn", "--tflm", "2025-10", "--budget", "65KB"]
    for command in ("report", "check"):
        code, _out, err = _run(capsys, command, *words, "--max-input")
        assert code == 2 and "needs exactly one image input" in err and "`" not in err, err
        code, _out, err = _run(capsys, command, *words)
        commands = err.split("`")[1::2]
        assert code == 2 and len(commands) == 2, err
        for suggested in commands:
            code, _out, err = _run(capsys, *shlex.split(suggested)[1:])
            assert code in (0, 1), err
