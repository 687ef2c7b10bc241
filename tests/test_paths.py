"""The paths users walk through several commands give one answer (issue 20's repros, each kept).

Each test walks a path as a new user would (check → optimize → check at another size, report on a
model that cannot run, --max-input on a PyTorch export, ...) and checks every claim: the verdict,
the exit code, the commands suggested (run as printed), and, where the real interpreter is
installed, that a FITS at N means the model sets up at N.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from arenalens.builds.build import HOST
from arenalens.builds.kernel_paths import overlap_rules
from arenalens.cli import main
from arenalens.optimization import offline_plan_for
from arenalens.runtimes import get_runtime
from arenalens.tflite.reader import load_model, parse_model
from arenalens.tflite.rewriter import rewrite_model
from tests.conftest import SHARED_MODELS, SHARED_REASON
from tests.fixtures import path_models

MOBILENET_V2 = SHARED_MODELS / "tflite_micro__mobilenet_v2_quantized_1x3x224x224.tflite"


def _write(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, *argv, "--json")
    document: dict[str, Any] = json.loads(out)
    return code, document


def commands(document: dict[str, Any]) -> Iterator[str]:
    """Every command a document's next steps print."""
    for step in document["next_steps"]:
        if step["command"]:
            yield step["command"]


def run_command(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, str, str]:
    """A printed command, run as printed (the `arenalens` word is the program)."""
    words = shlex.split(command)
    assert words[0] == "arenalens"
    return run(capsys, *words[1:])


def sets_up(path: str | Path, arena_size: int) -> bool:
    """Does the real TFLM (the x86-64 wheel) set the model up in an arena of this size?"""
    from arenalens.runtimes.tflm.probe import probe

    return bool(probe(str(path), arena_size).fits)


def _needs_runtime() -> None:
    pytest.importorskip("ai_edge_litert")
    pytest.importorskip("tflite_micro")


# ---------------------------------------------------------------------------------------------
# Repro 1: the seed's own next step at another input size crashed in the rewrite prediction.


@pytest.mark.runtime
def test_check_at_another_size_then_optimize_then_check_agree_with_real_tflm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _needs_runtime()
    monkeypatch.chdir(tmp_path)
    asked = ("example:vww_mobilenet_v1", "--budget", "160KB", "--input-shape", "input=1x144x144x3")
    code, document = run_json(capsys, "check", *asked)
    assert code == 1 and document["verdict"] == "FITS AFTER OPTIMIZE"
    promised = document["optimized_required_bytes"]
    optimize, check = list(commands(document))
    assert optimize.startswith("arenalens optimize example:vww_mobilenet_v1 --input-shape ")
    code, _, err = run_command(capsys, optimize)
    assert code == 0, err
    written = tmp_path / "optimized.tflite"
    assert load_model(written).subgraphs[0].tensors[0].shape == (1, 144, 144, 3)
    code, out, _ = run_command(capsys, check)
    assert code == 0 and out.splitlines()[1].startswith("FITS")
    code, after = run_json(capsys, *shlex.split(check)[1:])
    assert after["required_bytes"] <= promised
    # FITS at N: the real interpreter sets the written model up at N, and not 16 bytes below.
    assert sets_up(written, after["required_bytes"])
    assert not sets_up(written, after["required_bytes"] - 16)


@pytest.mark.runtime
@pytest.mark.parametrize("side", [193, 194, 196])
def test_optimize_at_the_sizes_that_crashed_writes_what_it_predicts(
    side: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 224x224 MobileNet at 193, 194 and 196 px: the rewrite predicted another head and
    crashed; now the file written at that size declares what optimize said, on the board."""
    _needs_runtime()
    monkeypatch.chdir(tmp_path)
    shape = ("--input-shape", f"input=1x{side}x{side}x3")
    board = ("--target", "stm32f746")
    code, written = run_json(
        capsys, "optimize", "example:mobilenet_v1_224", *shape, *board, "-o", "o.tflite"
    )
    assert code == 0 and written["written"], written["notes"]
    assert written["real_tflm"]["outputs_identical"]
    code, document = run_json(capsys, "check", "o.tflite", *board)
    assert document["plan_holds"] and document["shape_known"]
    assert document["required_bytes"] == written["new_required_bytes"]
    assert load_model("o.tflite").subgraphs[0].tensors[0].shape == (1, side, side, 3)


# ---------------------------------------------------------------------------------------------
# Repro 2: an offline plan made at a placeholder size gave FITS (and garbage) at the real size.


def _placeholder_with_a_plan_for_its_stored_size(folder: Path) -> str:
    """The placeholder model with TFLM's own plan written for its stored 48x48 size, as an
    optimize that did not know better wrote it."""
    data = path_models.placeholder_image_model()
    model = parse_model(data, "placeholder")
    arena = get_runtime("tflm").arenas(model, HOST)[0]
    from arenalens.planning.registry import run_planner

    plan = run_planner(arena.runtime_planner, arena.problem)
    offline = offline_plan_for(model, arena, plan.offsets)
    return _write(folder, "planned_at_48.tflite", rewrite_model(data, offline_plan=offline))


def test_optimize_refuses_an_input_of_unknown_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _write(tmp_path, "placeholder.tflite", path_models.placeholder_image_model())
    output = tmp_path / "optimized.tflite"
    code, _out, err = run(capsys, "optimize", model, "-o", str(output))
    assert code == 2 and not output.exists()
    assert len(err.strip().splitlines()) == 1
    assert "'image'" in err and "--input-shape" in err


def test_a_plan_for_other_shapes_cannot_run_correctly_and_never_fits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ai_edge_litert")
    model = _placeholder_with_a_plan_for_its_stored_size(tmp_path)
    shape = ("--input-shape", "image=1x96x96x3")
    code, out, _ = run(capsys, "check", model, "--budget", "1MB", *shape)
    assert code == 1
    first, second = out.splitlines()[:2]
    assert "offline plan would corrupt tensors" in first
    assert second.startswith("CANNOT RUN CORRECTLY")
    assert "FITS" not in out.replace("CANNOT RUN CORRECTLY", "")
    code, document = run_json(capsys, "check", model, "--budget", "1MB", *shape)
    assert (code, document["verdict"], document["fits"]) == (1, "CANNOT RUN CORRECTLY", False)
    assert document["required_bytes"] is None and document["plan_conflicts"]
    (step,) = document["next_steps"]
    assert "--input-shape image=1x96x96x3" in step["command"]
    code, out, _ = run(capsys, "report", model, "--target", "nucleo-f401re", *shape)
    assert code == 1 and out.splitlines()[0].startswith("kTensorArenaSize: none")
    assert "CANNOT RUN CORRECTLY" in out
    code, out, _ = run(capsys, "plan", model, *shape)
    assert code == 1 and "offline plan would corrupt tensors" in out.splitlines()[0]
    code, document = run_json(capsys, "plan", model, *shape)
    assert code == 1 and document["plan_holds"] is False
    # At the size the plan was made for, it holds.
    code, document = run_json(
        capsys, "check", model, "--budget", "1MB", "--input-shape", "image=1x48x48x3"
    )
    assert (code, document["verdict"]) == (0, "FITS")


@pytest.mark.runtime
def test_a_plan_for_a_placeholder_size_is_refused_where_the_real_runtime_computes_garbage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repro's own path: audio stored as 1x1 (signature 1x-1), an offline plan made at 1x1,
    then checked at 1x1280. The real interpreter, given that plan at 1x1280, computes other
    outputs than without it: CANNOT RUN CORRECTLY is the answer, never FITS."""
    _needs_runtime()
    from arenalens.optimization import prove_outputs
    from arenalens.planning.registry import run_planner
    from arenalens.runtimes.litert.shapes import resize_model_inputs
    from arenalens.tflite.rewriter import model_bytes, shape_changes

    monkeypatch.chdir(tmp_path)
    data = path_models.placeholder_audio_model()
    stored = parse_model(data, "audio")
    arena = get_runtime("tflm").arenas(stored, HOST)[0]
    plan = run_planner(arena.runtime_planner, arena.problem)
    offline = offline_plan_for(stored, arena, plan.offsets)
    planned = _write(tmp_path, "planned_at_1.tflite", rewrite_model(data, offline_plan=offline))
    asked = ("--budget", "1MB", "--input-shape", "audio=1x1280")
    code, document = run_json(capsys, "check", planned, *asked)
    assert (code, document["verdict"], document["required_bytes"]) == (
        1,
        "CANNOT RUN CORRECTLY",
        None,
    )
    # The real runtime: the 1x1 plan at 1x1280 gives other outputs than TFLM's own plan.
    resized = resize_model_inputs(load_model(planned), {"audio": (1, 1280)})
    with_plan = rewrite_model(resized.data, tensor_shapes=shape_changes(resized))
    without_plan = model_bytes(resized, drop_offline_plan=True)
    assert not prove_outputs(without_plan, with_plan, resized).identical
    # The step it suggests plans again for 1x1280 and writes that file, even though TFLM's own
    # plan is the best there (nothing beats it, but the file's plan must go): FITS there, and the
    # real runtime sets it up at that number.
    (step,) = document["next_steps"]
    assert step["command"] == (
        f"arenalens optimize {planned} --input-shape audio=1x1280 -o optimized.tflite"
    )
    code, written = run_json(capsys, *shlex.split(step["command"])[1:])
    assert code == 0 and written["written"] and written["replaces_plan"]
    code, document = run_json(capsys, "check", "optimized.tflite", "--budget", "1MB")
    assert (code, document["verdict"]) == (0, "FITS")
    assert sets_up("optimized.tflite", document["required_bytes"])
    assert not sets_up("optimized.tflite", document["required_bytes"] - 16)


@pytest.mark.runtime
def test_optimize_at_a_named_size_writes_that_size_and_the_real_runtime_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _needs_runtime()
    monkeypatch.chdir(tmp_path)
    model = _write(tmp_path, "placeholder.tflite", path_models.placeholder_image_model())
    # --kernels reference: the wheel's own kernels (without it, overlaps must hold on CMSIS-NN
    # too, and none of those saves a byte on this model: nothing to save, nothing written).
    code, _, err = run(
        capsys,
        "optimize",
        model,
        "--input-shape",
        "image=1x96x96x3",
        "-o",
        "o.tflite",
        "--overlap",
        "--kernels",
        "reference",
    )
    assert code == 0, err
    written = load_model("o.tflite")
    assert written.subgraphs[0].tensors[0].shape == (1, 96, 96, 3)
    code, document = run_json(capsys, "check", "o.tflite", "--budget", "1MB")
    assert (code, document["verdict"]) == (0, "FITS")
    assert sets_up("o.tflite", document["required_bytes"])
    assert not sets_up("o.tflite", document["required_bytes"] - 16)
    code, document = run_json(
        capsys, "check", "o.tflite", "--budget", "1MB", "--input-shape", "image=1x128x128x3"
    )
    assert (code, document["verdict"]) == (1, "CANNOT RUN CORRECTLY")


# ---------------------------------------------------------------------------------------------
# Repro 3: INPUT SHAPE UNKNOWN, then steps that presume a number.


def test_an_unknown_input_size_suppresses_every_step_that_presumes_a_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _write(tmp_path, "placeholder.tflite", path_models.placeholder_image_model())
    for command in ("report", "check"):
        code, out, _ = run(capsys, command, model, "--target", "nucleo-f401re")
        assert code == 1
        assert "INPUT SHAPE UNKNOWN" in out
        assert " short" not in out and "to spare" not in out and "--max-input" not in out
        assert "Declare" not in out
        assert "--input-shape 'image=SHAPE'" in out
    code, document = run_json(capsys, "check", model, "--target", "nucleo-f401re")
    assert document["required_bytes"] is None and document["headroom_bytes"] is None
    # Every board: no board count as if it did not fit, and the one step that helps.
    code, out, _ = run(capsys, "check", model, "--target", "all")
    assert code == 1 and "INPUT SHAPE UNKNOWN on every board" in out and " fits 0 of" not in out
    assert "--input-shape 'image=SHAPE'" in out


# ---------------------------------------------------------------------------------------------
# Repro 4: a model TFLM cannot run got a number to declare and a largest input that fits.


def test_cannot_run_says_so_and_nothing_that_presumes_a_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _write(tmp_path, "float16.tflite", path_models.float16_image_model())
    code, out, _ = run(capsys, "report", model)
    assert code == 1
    assert out.startswith("kTensorArenaSize: none")
    assert "Declare" not in out
    code, out, _ = run(capsys, "report", model, "--target", "nucleo-f401re")
    assert code == 1 and "CANNOT RUN" in out and "to spare" not in out and " short" not in out
    code, out, _ = run(capsys, "check", model, "--budget", "320KB", "--max-input")
    assert code == 1 and "CANNOT RUN" in out
    assert "largest input that fits: none" in out
    assert "input=1x" not in out
    code, document = run_json(capsys, "check", model, "--budget", "320KB", "--max-input")
    assert document.get("max_input_shape") is None and document["required_bytes"] is None


# ---------------------------------------------------------------------------------------------
# Repro 5: 74 identical refusals printed 74 times, with a fix that did not say the real fix.


def test_refusals_are_grouped_with_the_conversion_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _write(tmp_path, "float16.tflite", path_models.float16_weights_model())
    code, out, _ = run(capsys, "check", model, "--budget", "64KB")
    assert code == 1
    assert out.count("dequantize_common.cc") == 1
    assert "74 DEQUANTIZE operators" in out
    assert "float16" in out and "int8" in out and "float32" in out
    code, document = run_json(capsys, "check", model, "--budget", "64KB")
    (refusal,) = document["cannot_run"]
    assert refusal["count"] == 74 and refusal["opcode"] == "DEQUANTIZE"
    code, out, _ = run(capsys, "report", model, "--target", "stm32f746")
    assert len(out.splitlines()) <= 60
    code, document = run_json(capsys, "diagnose", model)
    findings = [f for f in document["findings"] if f["rule"] == "cannot-run"]
    assert len(findings) == 1 and findings[0]["details"]["count"] == 74
    page = tmp_path / "report.html"
    run(capsys, "report", model, "-o", str(page))
    # Once per place that shows it (summary, notes, findings, the document's fields), never once
    # per operator.
    assert page.read_text().count("dequantize_common.cc") < 10


def test_each_reason_once_with_its_own_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _write(tmp_path, "mixed.tflite", path_models.unregistered_operators_model())
    code, document = run_json(capsys, "check", model, "--budget", "64KB")
    assert (code, document["verdict"]) == (1, "CANNOT RUN")
    refusals = {r["opcode"]: r for r in document["cannot_run"]}
    assert {name: r["count"] for name, r in refusals.items()} == {
        "CUSTOM:MyNorm": 3,
        "GELU": 2,
        "TILE": 1,
    }
    assert 'resolver.AddCustom("MyNorm"' in refusals["CUSTOM:MyNorm"]["fix"]
    assert "convert it away" in refusals["CUSTOM:MyNorm"]["fix"]
    assert "nearest it runs" in refusals["GELU"]["fix"]
    assert "BROADCAST_TO" in refusals["TILE"]["fix"]
    # One step per reason, naming its operators; nothing that presumes a number.
    texts = [step["text"] for step in document["next_steps"]]
    assert len(texts) == 3 and texts[0].startswith("3 CUSTOM:MyNorm operators (0, 1, 2)")
    assert not [step for step in document["next_steps"] if step["command"]]
    _code, out, _ = run(capsys, "check", model, "--budget", "64KB")
    assert out.count("cannot run:") == 3
    if importlib.util.find_spec("tflite_micro") is not None:
        assert not sets_up(model, 1 << 20)  # the real interpreter refuses it at any size


VELA_MODEL = SHARED_MODELS / "tflite_micro__person_detect_vela.tflite"


@pytest.mark.skipif(not VELA_MODEL.is_file(), reason=SHARED_REASON)
def test_a_model_compiled_for_an_npu_is_refused_with_the_npu_fix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, document = run_json(capsys, "check", str(VELA_MODEL), "--target", "nucleo-f401re")
    assert (code, document["verdict"]) == (1, "CANNOT RUN")
    (refusal,) = document["cannot_run"]
    assert refusal["opcode"] == "CUSTOM:ethos-u"
    assert "--npu ethos-u55-256" in refusal["fix"]  # the NPU its command stream is for
    assert "before Vela" in document["next_steps"][0]["text"]


# ---------------------------------------------------------------------------------------------
# Repro 6: optimize said the original does not run (its arena was sized by the file) and wrote.


@pytest.mark.runtime
def test_optimize_proves_models_whose_arena_dwarfs_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("tflite_micro")
    model = _write(tmp_path, "wide.tflite", path_models.wide_activation_model())
    output = tmp_path / "o.tflite"
    # --kernels reference: the wheel's kernels (the safe default saves nothing on this model).
    code, document = run_json(
        capsys, "optimize", model, "-o", str(output), "--overlap", "--kernels", "reference"
    )
    assert code == 0 and document["written"]
    assert "does not run" not in " ".join(document["notes"])
    assert document["real_tflm"]["outputs_identical"]
    assert document["saved_bytes"] > 300_000


def test_a_command_that_says_it_failed_writes_nothing() -> None:
    from arenalens.cli.optimize import _accept
    from arenalens.optimization import OutputProof

    failed = OutputProof(False, None, None, 3, "original does not run: setup failed")
    accepted, reason = _accept(100, 200, failed)
    assert not accepted and "not written" in reason


# ---------------------------------------------------------------------------------------------
# Repro 7: diagnose suggested a command with a literal MODEL that saves nothing when run.


@pytest.mark.runtime
def test_every_saving_diagnose_promises_is_what_its_command_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tflite_micro")
    monkeypatch.chdir(tmp_path)
    chain = _write(tmp_path, "chain.tflite", path_models.relu_chain_model())
    for model in (chain, "example:kws_ds_cnn"):
        code, document = run_json(capsys, "diagnose", model)
        for finding in document["findings"]:
            assert "MODEL" not in finding["fix"]
            if finding["rule"] not in ("overlap-savings", "planner-waste"):
                continue
            command = finding["fix"].split("`")[1]
            assert model in command
            code, written = run_json(capsys, *shlex.split(command)[1:])
            assert code == 0 and written["saved_bytes"] >= finding["saving_bytes"]
    code, document = run_json(capsys, "diagnose", chain)
    assert not [f for f in document["findings"] if f["rule"] == "overlap-savings"]


# ---------------------------------------------------------------------------------------------
# Repro 8: --max-input failed on an NCHW model named 'input.5', and mixed the network's limits
# with memory's.


@pytest.mark.runtime
@pytest.mark.skipif(not MOBILENET_V2.is_file(), reason=SHARED_REASON)
def test_max_input_on_a_pytorch_export_with_a_dotted_input_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("ai_edge_litert")
    # The runtime's own planner named: the search resizes by the input's name as without it,
    # but no remedy ladder (a split search at each size, ~90 s) is climbed for this question.
    _code, document = run_json(
        capsys,
        "check",
        str(MOBILENET_V2),
        "--budget",
        "320KB",
        "--max-input",
        "--planner",
        "tflm_greedy",
    )
    assert document["max_input_name"] == "input.5"
    assert not any("out of range" in (size["error"] or "") for size in document["input_sizes"])
    largest = document["max_input_shape"]
    assert largest[:2] == [1, 3] and largest[2] == largest[3]
    assert document["max_input_required_bytes"] <= 320 * 1024


PERSON_DETECT = SHARED_MODELS / "tflite_micro__person_detect.tflite"


@pytest.mark.runtime
@pytest.mark.skipif(not PERSON_DETECT.is_file(), reason=SHARED_REASON)
def test_max_input_sizes_person_detect_and_the_real_tflm_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """TFLM's own person_detect declares quantized_dimension 3 on its rank-1 biases: LiteRT's
    loader refuses that, TFLM never reads it. The shapes are propagated from a copy with the axis
    the scales describe, so --max-input sizes the model; the real TFLM sets the resized model up
    at the figure, and not a byte below."""
    _needs_runtime()
    from arenalens.runtimes.litert.shapes import resize_model_inputs
    from arenalens.tflite.rewriter import shape_changes

    argv = ("check", str(PERSON_DETECT), "--target", "nucleo-f401re", "--max-input")
    code, document = run_json(capsys, *argv)
    assert (code, document["verdict"], document["max_input_unavailable"]) == (0, "FITS", None)
    accepted = document["accepted_input_shapes"]
    assert (accepted["smallest"], accepted["largest"]) == ([1, 65, 65, 1], [1, 128, 128, 1])
    assert document["max_input_required_bytes"] <= document["available_bytes"]
    resized = resize_model_inputs(load_model(PERSON_DETECT.read_bytes()), {"input": (1, 65, 65, 1)})
    path = _write(
        tmp_path,
        "person_65.tflite",
        rewrite_model(resized.data, tensor_shapes=shape_changes(resized)),
    )
    code, plan = run_json(capsys, "plan", path)
    assert code == 0 and sets_up(path, plan["required_bytes"])
    assert not sets_up(path, plan["required_bytes"] - 1)


def test_max_input_says_when_no_other_size_can_be_sized(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bias whose quantized_dimension is negative: LiteRT (which propagates shapes) refuses to
    load the model, TFLM runs it. The check answers at its own size, and the search says it could
    try nothing, without a word about the network refusing sizes."""
    pytest.importorskip("ai_edge_litert")
    model = _write(tmp_path, "negative_axis.tflite", path_models.conv_with_bias_axis(-1))
    argv = ("check", model, "--target", "nucleo-f401re", "--max-input")
    code, document = run_json(capsys, *argv)
    assert (code, document["verdict"]) == (0, "FITS")
    assert "LiteRT cannot load the model" in document["max_input_unavailable"]
    assert "Was -1. Tensor 2 has" in document["max_input_unavailable"]
    assert document["max_input_shape"] is None and document["input_sizes"] == []
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "largest input that fits: unknown" in out
    assert "refuses every" not in out and "network accepts" not in out


@pytest.mark.runtime
def test_max_input_tells_the_networks_limits_from_memorys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ai_edge_litert")
    model = _write(tmp_path, "pooled.tflite", path_models.pooled_image_model())
    code, document = run_json(capsys, "check", model, "--budget", "64KB", "--max-input")
    assert code == 0
    accepted = document["accepted_input_shapes"]
    assert accepted["smallest"] == [1, 65, 65, 3] and accepted["largest"] == [1, 160, 160, 3]
    fitting = document["max_input_shape"]
    assert 65 <= fitting[1] < 160 and document["max_input_required_bytes"] <= 64 * 1024
    step = document["next_steps"][1]
    assert "The network accepts 1x65x65x3 to 1x160x160x3" in step["text"]
    assert "memory is the limit" in step["text"]
    # Within the network's limits everything fits: that is the network's limit, said so.
    _, document = run_json(capsys, "check", model, "--budget", "1MB", "--max-input")
    assert document["max_input_shape"] == [1, 160, 160, 3]
    assert "the network's own limit" in document["next_steps"][1]["text"]
    # The search stopped with every size fitting: the search's limit, not the network's (flows6:
    # "up to at least 1x160x160x4 (the search stops there)" beside "the network's own limit").
    wide = _write(tmp_path, "wide.tflite", path_models.wide_activation_model(16))
    _, out, _ = run(capsys, "check", wide, "--budget", "64MB", "--max-input")
    assert "(the search stops there)" in out and "the network's own limit" not in out
    assert out.count("the search's limit: every size tried fits") == 2
    # Nothing fits: never "not even a 1-pixel-high input", and the smallest it accepts is named.
    _, out, _ = run(capsys, "check", model, "--budget", "8KB", "--max-input")
    assert "1-pixel" not in out and "the network accepts input=1x65x65x3 to 1x160x160x3" in out
    # What optimize adds is said in the search's own lines too, not only in the steps.
    scenario = ("check", "example:mobilenet_v1_224", "--target", "stm32f746", "--max-input")
    _, scenario_out, _ = run(capsys, *scenario)
    _, scenario_document = run_json(capsys, *scenario)
    after = "x".join(str(d) for d in scenario_document["max_input_after_optimize_shape"])
    assert f"largest after `arenalens optimize`: input={after}" in scenario_out
    assert "none of them fits" in out
    nchw = _write(tmp_path, "nchw.tflite", path_models.nchw_image_model())
    _code, document = run_json(capsys, "check", nchw, "--budget", "64KB", "--max-input")
    assert document["max_input_name"] == "input.1"
    shape = document["max_input_shape"]
    assert shape[:2] == [1, 3] and document["max_input_required_bytes"] <= 64 * 1024


# ---------------------------------------------------------------------------------------------
# Repro 9: an output path that cannot be written was an internal error.


@pytest.mark.parametrize(
    "argv",
    [
        ("report", "example:kws_ds_cnn", "-o", "/proc/nope/r.html"),
        ("export", "example:kws_ds_cnn", "--format", "json", "-o", "/proc/nope/r.json"),
        ("report", "example:kws_ds_cnn", "--images", "/proc/nope/images"),
    ],
)
def test_an_output_path_that_cannot_be_written_is_bad_input(
    argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(capsys, *argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "/proc/nope" in err
    assert "internal error" not in err


def test_an_output_that_is_a_folder_or_a_full_disk_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = run(capsys, "report", "example:kws_ds_cnn", "-o", str(tmp_path))
    assert code == 2 and str(tmp_path) in err
    target = tmp_path / "out" / "r.html"

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.fsync", full)
    code, out, err = run(capsys, "report", "example:kws_ds_cnn", "-o", str(target))
    assert code == 2 and "No space left on device" in err and str(target) in err
    assert out == ""  # nothing printed as if it had worked
    assert [p.name for p in target.parent.iterdir()] == []  # no partial file, no temporary


# ---------------------------------------------------------------------------------------------
# A plan valid on one kernel library only: CANNOT RUN CORRECTLY on the other's build.


@pytest.mark.runtime
def test_a_plan_for_the_reference_kernels_cannot_run_correctly_on_cmsis_nn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from arenalens.examples import example_bytes
    from arenalens.optimization import optimize_model

    # The reference kernels' access order lets the 1x1 convolution's output slide over its
    # input; CMSIS-NN's re-reads the whole input (README: "Go below the lower bound").
    monkeypatch.chdir(tmp_path)
    pytest.importorskip("tflite_micro")
    written = optimize_model(
        example_bytes("vww_mobilenet_v1"),
        overlap=overlap_rules(HOST, "reference"),
        prove_inplace=False,
    )
    assert written.chosen is not None and written.chosen.shared
    model = _write(tmp_path, "overlapped.tflite", written.data)
    code, document = run_json(capsys, "check", model, "--budget", "1MB")
    assert (code, document["verdict"]) == (0, "FITS")  # the host wheel runs reference kernels
    cmsis = ("--cpu", "cortex-m7", "--kernels", "cmsis-nn")
    code, document = run_json(capsys, "check", model, "--budget", "1MB", *cmsis)
    assert (code, document["verdict"]) == (1, "CANNOT RUN CORRECTLY")
    (conflict,) = document["plan_conflicts"]
    assert conflict["kind"] == "build" and "cortex-m7/cmsis-nn" in conflict["reason"]
    (step,) = document["next_steps"]
    assert step["command"] == (
        f"arenalens optimize {model} --cpu cortex-m7 --kernels cmsis-nn -o optimized.tflite "
        "--overlap"
    )
    code, document = run_json(capsys, "check", model, "--target", "stm32f746")
    assert document["verdict"] == "CANNOT RUN CORRECTLY"
    command = document["next_steps"][0]["command"]
    assert command.endswith("--target stm32f746 -o optimized.tflite --overlap")
    # Run as printed: the board's CMSIS-NN access order, a plan that holds there.
    code, written = run_json(capsys, *shlex.split(command)[1:])
    assert code == 0 and written["written"], written["notes"]
    code, document = run_json(capsys, "check", "optimized.tflite", "--target", "stm32f746")
    assert document["verdict"] in ("FITS", "FITS, TIGHT", "DOES NOT FIT", "FITS AFTER OPTIMIZE")
    assert document["plan_holds"]


def test_no_header_for_firmware_from_a_model_without_a_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _write(tmp_path, "f16.tflite", path_models.float16_weights_model())
    header = tmp_path / "arena.h"
    code, out, err = run(capsys, "export", model, "--format", "c-header", "-o", str(header))
    assert code == 1 and not header.exists() and out == ""
    assert "not written" in err and "cannot run" in err
    code, out, err = run(capsys, "export", model, "--format", "json")
    assert code == 1 and json.loads(out)["runs"] is False


# ---------------------------------------------------------------------------------------------
# Every step: the command runs as printed, and what a step promises is what running it gives.


def _steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    """A check or report document's steps."""
    if "next_steps" in document and "reports" not in document:
        steps: list[dict[str, Any]] = document["next_steps"]
        return steps
    verdict = document["reports"][0]["verdict"] or {}
    return list(verdict.get("steps", []))


@pytest.mark.runtime
@pytest.mark.parametrize(
    "argv",
    [
        ("report", "example:vww_mobilenet_v1", "--target", "nucleo-f401re"),
        ("report", "example:vww_mobilenet_v1", "--overlap"),
        ("report", "example:resnet8_cifar", "--overlap", "--cpu", "cortex-m7"),
        ("check", "example:mobilenet_v1_224", "--target", "stm32f746", "--max-input"),
        # A budget and a core (the split path of mobilenet_v1_224 under a 320 KB budget is the
        # --target stm32f746 row's; tests/test_ladder_cases.py caches both with each rung).
        ("check", "example:resnet8_cifar", "--budget", "48KB", "--cpu", "cortex-m4"),
        ("check", "example:kws_ds_cnn", "--budget", "20KB", "--reserve", "1KB"),
        ("check", "example:kws_ds_cnn", "--budget", "8KB", "--runtime", "litert"),
    ],
)
def test_every_step_runs_as_printed_and_gives_what_it_promises(
    argv: tuple[str, ...],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _needs_runtime()
    monkeypatch.chdir(tmp_path)
    _code, document = run_json(capsys, *argv)
    steps = _steps(document)
    assert steps and any(step["command"] for step in steps)
    for step in steps:
        command = step["command"]
        if not command:
            continue
        words = shlex.split(command)
        assert "MODEL" not in words and "NAME" not in words and "SHAPE" not in command
        if words[1] == "optimize":
            code, written = run_json(capsys, *words[1:])
            assert code == 0, command
            if step["saves_bytes"] is not None:
                # The bytes promised are the bytes the written model saves, at least.
                assert written["written"] and written["saved_bytes"] >= step["saves_bytes"]
            continue
        code, _out, err = run(capsys, *words[1:])
        assert code in (0, 1) and not err, (command, err)
        if words[1] == "check" and "--input-shape" in words and "--max-input" in argv:
            # 'the largest that fits is X, needing N B': checking X says FITS at N.
            _code, at_size = run_json(capsys, *words[1:])
            assert at_size["verdict"] in ("FITS", "FITS, TIGHT")  # the largest: often tight
            assert at_size["required_bytes"] == document["max_input_required_bytes"]


# ---------------------------------------------------------------------------------------------
# Every command a finding names: the model as typed, every option one its command takes.


def _quoted_commands(text: str) -> list[str]:
    """The `arenalens ...` commands between backticks in a finding's text."""
    return [part for part in text.split("`")[1::2] if part.startswith("arenalens ")]


def _finding_models(folder: Path) -> list[tuple[str, ...]]:
    """Models (and diagnose options) whose findings name commands: a broken offline plan, one
    with misaligned and with missing offsets, alignment asked above TFLM's, the examples."""
    from tests.diagnostics.models import chain, tensor_count, with_offline_plan

    builder, _ = chain()
    count = tensor_count(builder)
    overlapping = [-1] * count
    overlapping[3], overlapping[6] = 0, 256
    misaligned = [-1] * count
    misaligned[0] = 8
    cases = [
        (_write(folder, "overlap.tflite", with_offline_plan(builder, overlapping).build()),),
        (_write(folder, "misaligned.tflite", with_offline_plan(builder, misaligned).build()),),
        (_write(folder, "clean.tflite", chain()[0].build()), "--alignment", "32"),
        ("example:vww_mobilenet_v1", "--cpu", "cortex-m4", "--kernels", "cmsis-nn"),
        ("example:kws_ds_cnn", "--alignment", "32"),
        ("example:branchy_inception",),
    ]
    return cases


def test_every_command_a_finding_names_is_one_the_cli_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arenalens.cli import build_parser

    seen = 0
    for case in _finding_models(tmp_path):
        _code, document = run_json(capsys, "diagnose", *case)
        for finding in document["findings"]:
            for command in _quoted_commands(f"{finding['message']} {finding['fix']}"):
                words = shlex.split(command)[1:]
                assert len(words) > 1 and "MODEL" not in words, command
                assert words[1] == case[0], command  # the model as the user typed it
                if words[0] == "optimize":
                    assert "-o" in words, command
                build_parser(words).parse_args(words)  # argparse exits 2 on an unknown option
                seen += 1
    assert seen >= 4


def test_no_size_fits_as_it_is_says_what_a_rewrite_reaches() -> None:
    """With --max-input, a model none of whose sizes fits as it is, but which a rewrite gets onto
    the budget, must not be told that only a smaller network helps."""
    from arenalens.max_input import InputSearch, InputSize

    own = InputSize((1, 32, 32, 3), 46_680, fits=False)
    search = InputSearch(
        input_name="input",
        input_index=0,
        input_position=0,
        original_shape=own.shape,
        height_axis=1,
        available_bytes=40_960,
        largest=None,
        sizes=(own,),
        smallest_accepted=own,
        largest_accepted=own,
    )
    assert search.none_fits_text().endswith(
        "the smallest needs 46,680 B, so only a smaller network (or a larger board) helps"
    )
    rewritten = replace(search, largest_after_optimize=replace(own, required_bytes=38_024))
    assert rewritten.none_fits_text() == (
        "the network accepts 1x32x32x3 to 1x32x32x3; none fits as it is (the smallest needs "
        "46,680 B); rewritten, its own size fits (the first step)"
    )
    larger = replace(search, largest_after_optimize=InputSize((1, 40, 40, 3), 40_000, fits=True))
    assert larger.none_fits_text().endswith("rewritten, a larger one fits")
