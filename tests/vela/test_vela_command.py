"""`plan` on a Vela-compiled model with --npu (runs, the NPU memories in JSON), and the `vela`
command's settings sweep on a small generated model (real Vela, extra `npu`)."""

from __future__ import annotations

import importlib.util
import json
import random
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arenalens.cli import main
from tests.ethos_u.cases import MODELS

DEDICATED = MODELS / "example-kws_ds_cnn@u65-256-dedicated.tflite"
HAS_VELA = importlib.util.find_spec("ethosu") is not None


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_plan_with_the_npu_runs_and_gives_every_npu_memory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, document = _json(
        capsys, "plan", str(DEDICATED), "--cpu", "cortex-m55", "--npu", "ethos-u65-256", "--json"
    )
    assert code == 0 and document["runs"] and document["build"]["npu"] == "ethos-u65-256"
    # The probe measured 22,552 B (tests/data/ethos_u/development.json).
    assert document["min_arena_bytes"] == 22552
    npu = document["npu_memory"]
    assert (npu["fast_memory_bytes"], npu["vela_sram_bytes"]) == (22080, 22080)
    assert npu["arena_over_vela_sram_bytes"] == 472


def test_plan_on_another_npu_is_the_drivers_config_mismatch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, document = _json(
        capsys, "plan", str(DEDICATED), "--cpu", "cortex-m55", "--npu", "ethos-u65-512", "--json"
    )
    assert code == 1 and not document["runs"]
    (refusal,) = document["cannot_run"]
    assert "NPU config mismatch" in refusal["reason"] and refusal["phase"] == "invoke"


@pytest.mark.slow
@pytest.mark.skipif(not HAS_VELA, reason="Vela is not installed (extra 'npu')")
def test_vela_sweep_marks_the_fastest_setting_that_fits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from flows import models

    source = tmp_path / "cnn.tflite"
    source.write_bytes(models.cnn(random.Random(1)).data)
    written = tmp_path / "chosen.tflite"
    code, document = _json(
        capsys,
        *("vela", str(source), "--cpu", "cortex-m55", "--npu", "ethos-u55-128"),
        *("--budget", "5KiB", "--memory-mode", "Shared_Sram", "-o", str(written), "--json"),
    )
    rows = document["candidates"]
    # Performance needs 5,980 B (too much), Size 3,020 B.
    assert [(row["optimise"], row["fits"]) for row in rows] == [
        ("Performance", False),
        ("Size", True),
    ]
    fitting = [row for row in rows if row["fits"]]
    chosen = document["chosen"]
    assert code == 0 and chosen["fits"] and chosen["arena_bytes"] <= 5 * 1024
    assert chosen["inference_seconds"] == min(row["inference_seconds"] for row in fitting)
    assert chosen["vela_command"].startswith(f"vela {source} --accelerator-config ethos-u55-128")
    # The file written is the chosen compilation, and plan agrees with the table.
    code, planned = _json(
        capsys, "plan", str(written), "--cpu", "cortex-m55", "--npu", "ethos-u55-128", "--json"
    )
    assert planned["min_arena_bytes"] == chosen["arena_bytes"]


def test_the_fast_memory_beside_the_arena_is_part_of_the_one_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ("check", str(DEDICATED), "--cpu", "cortex-m55", "--npu", "ethos-u65-256", "--json")
    # The arena (22,552 B) fits 30 KiB; with the fast memory (22,080 B) beside it, it does not,
    # and no optimized arena could change that (the arena's lower bound + 22,080 B > 30 KiB).
    code, document = _json(capsys, *argv, "--budget", "30KiB")
    assert (code, document["verdict"], document["fits"]) == (1, "DOES NOT FIT", False)
    assert document["headroom_bytes"] == 30720 - 22552 and not document["fits_after_optimize"]
    fit = document["npu_memory"]["fit"]
    assert fit["pieces"] == [
        {"piece": "arena", "bytes": 22552},
        {"piece": "fast memory", "bytes": 22080},
    ]
    assert (fit["sram_bytes"], fit["available_bytes"], fit["banks"]) == (44632, 30720, None)
    assert (fit["placement"], fit["fits"]) == (None, False)
    assert "44,632 B of SRAM together" in document["next_steps"][0]["text"]
    code, document = _json(capsys, *argv, "--budget", "44632")
    assert (code, document["verdict"]) == (0, "FITS") and document["npu_memory"]["fit"]["fits"]
    # One byte less: the pieces, not the arena, decide.
    code, document = _json(capsys, *argv, "--budget", "44631")
    assert (code, document["verdict"]) == (1, "DOES NOT FIT")


def test_every_view_renders_the_npu_shortfall(capsys: pytest.CaptureFixture[str]) -> None:
    """Text, the board table row, the report's verdict and the Python API agree."""
    import arenalens

    build = ("--cpu", "cortex-m55", "--npu", "ethos-u65-256")
    assert main(["check", str(DEDICATED), *build, "--budget", "30KiB"]) == 1
    text = capsys.readouterr().out
    assert "DOES NOT FIT" in text and "the arena fits (8,168 B to spare)" in text
    assert "FITS " not in text.replace("DOES NOT FIT", "")
    code, report = _json(capsys, "report", str(DEDICATED), *build, "--budget", "30KiB", "--json")
    assert code == 1
    verdict = report["reports"][0]["verdict"]
    assert (verdict["verdict"], verdict["fits"]) == ("DOES NOT FIT", False)
    assert "44,632 B of SRAM together" in verdict["npu_short"]
    checked = arenalens.check(DEDICATED, build="cortex-m55+ethos-u65-256", budget="30KiB")
    assert (checked.answer, checked.exit_code, checked.npu_short) == ("DOES NOT FIT", 1, True)
    assert arenalens.check(DEDICATED, build="cortex-m55+ethos-u65-256", budget=44632).fits
    # A fast memory given that the driver accepts, sized on its own: 22,080 B is enough.
    assert not arenalens.check(
        DEDICATED, build="cortex-m55+ethos-u65-256", budget="1MiB", fast_memory=22079
    ).fits


def test_an_npu_board_implies_its_npu(capsys: pytest.CaptureFixture[str]) -> None:
    person = MODELS / "example-kws_ds_cnn@u55-128.tflite"
    code, document = _json(capsys, "check", str(person), "--target", "grove-vision-ai-v2", "--json")
    # Compiled for a U55-128; the Grove's WiseEye2 has a U55-64: the driver refuses it.
    assert code == 1 and document["verdict"] == "CANNOT RUN"
    assert "NPU config mismatch" in document["cannot_run"][0]["reason"]


@pytest.mark.slow
@pytest.mark.skipif(not HAS_VELA, reason="Vela is not installed (extra 'npu')")
def test_optimize_vela_writes_what_check_then_declares_on_the_board(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The path: optimize --vela for a board, then check of the file it wrote on that board."""
    from flows import models

    source = tmp_path / "cnn.tflite"
    source.write_bytes(models.cnn(random.Random(3)).data)  # a CPU-fallback operator before the NPU
    written = tmp_path / "cnn_vela.tflite"
    board = ("--target", "grove-vision-ai-v2")
    argv = ("optimize", str(source), *board, "--vela", "-o", str(written))
    code, swept = _json(capsys, *argv, "--json")
    assert code == 0 and swept["written"] == str(written) and swept["chosen"]["cpu_operators"] == 1
    code, checked = _json(capsys, "check", str(written), *board, "--json")
    # Vela's offline plan puts the NPU operator's output over the CPU operator's output it reads
    # (its schedule finished reading it): no conflict. The generated input's size is a
    # placeholder (its signature is -1), which check says before FITS.
    assert not checked["plan_conflicts"] and checked["verdict"] == "INPUT SHAPE UNKNOWN"
    assert checked["declare"]["required_bytes"] == swept["chosen"]["arena_bytes"]
    assert main(["optimize", str(source), *board, "--vela", "--overlap", "-o", str(written)]) == 2
    assert "--vela compiles for the NPU" in capsys.readouterr().err


def test_check_on_an_npu_board_suggests_compiling_an_uncompiled_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, document = _json(
        capsys, "check", "example:kws_ds_cnn", "--target", "grove-vision-ai-v2", "--json"
    )
    commands = [step.get("command") for step in document["next_steps"]]
    assert code == 0 and (
        "arenalens optimize example:kws_ds_cnn --target grove-vision-ai-v2 -o optimized.tflite "
        "--vela" in commands
    )
    compiled = MODELS / "example-kws_ds_cnn@u55-128.tflite"
    _, document = _json(
        capsys,
        "check",
        str(compiled),
        "--cpu",
        "cortex-m55",
        "--npu",
        "ethos-u55-128",
        "--budget",
        "1MiB",
        "--json",
    )
    assert not any("--vela" in (step.get("command") or "") for step in document["next_steps"])


def test_check_predicts_the_drivers_fast_memory_refusal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ("check", str(DEDICATED), "--cpu", "cortex-m55", "--npu", "ethos-u65-256")
    code, document = _json(capsys, *argv, "--budget", "1MiB", "--fast-memory", "22079", "--json")
    refusal = document["npu_memory"]["fast_memory_refusal"]
    assert code == 1 and refusal.startswith("Fast memory area too small. fast_memory_size=22079")
    assert document["verdict"] == "DOES NOT FIT" and not document["fits_after_optimize"]
    # The step's command runs as printed and gives the answer it promises.
    command = document["next_steps"][1]["command"]
    assert command.endswith("--budget 1MiB --fast-memory 22080")
    code, document = _json(capsys, *command.split()[1:], "--json")
    assert (code, document["verdict"]) == (0, "FITS")
    assert document["npu_memory"]["fast_memory_refusal"] == ""


def test_sram_only_weights_count_when_the_model_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A compiled model does not record its memory mode: --weights-in-sram says Sram_Only."""
    sram_only = MODELS / "example-kws_ds_cnn@u55-64-sram-only.tflite"
    argv = ("check", str(sram_only), "--cpu", "cortex-m55", "--npu", "ethos-u55-64", "--json")
    code, document = _json(capsys, *argv, "--budget", "48KiB")
    assert (code, document["verdict"]) == (0, "FITS")
    weights = (
        document["npu_memory"]["read_only_bytes"] + document["npu_memory"]["command_stream_bytes"]
    )
    code, document = _json(capsys, *argv, "--budget", "48KiB", "--weights-in-sram")
    assert (code, document["verdict"]) == (1, "DOES NOT FIT")
    pieces = {piece["piece"]: piece["bytes"] for piece in document["npu_memory"]["fit"]["pieces"]}
    assert pieces["SRAM weights"] == weights
    all_boards = document["next_steps"][-1]["command"]
    # Each board with the NPU it implies (no --cpu: the model runs only with its NPU).
    assert all_boards.endswith(".tflite --target all --weights-in-sram")


@pytest.mark.slow
@pytest.mark.skipif(not HAS_VELA, reason="Vela is not installed (extra 'npu')")
def test_optimize_vela_compiles_a_planned_model_at_the_size_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Held-out flow 99 of seed 700401 (--wide): `optimize optimized.tflite --input-shape ...
    --target kit-pse84-eval --vela`, a step report printed for a model `optimize --split` wrote,
    exited 2: Vela carried the file's offline plan into the compiled model, whose tensors it no
    longer names ('Nbr of offline buffer offsets (159) in metadata not equal nbr tensors (5)'),
    and it compiled the file's stored size, not the one given. Vela now gets the model at the
    size given without that plan; the compiled model runs (plan exits 0)."""
    from flows import models

    from arenalens.ir import OfflinePlan
    from arenalens.tflite.reader import parse_model
    from arenalens.tflite.rewriter import rewrite_model

    data = models.cnn(random.Random(1)).data
    tensors = sum(len(subgraph.tensors) for subgraph in parse_model(data, "cnn").subgraphs)
    planned = tmp_path / "planned.tflite"
    planned.write_bytes(rewrite_model(data, offline_plan=OfflinePlan(0, 1, (-1,) * tensors)))
    written = tmp_path / "compiled.tflite"
    side = parse_model(data, "cnn").subgraphs[0].tensors[0].shape[1] + 4
    shape = f"image=1x{side}x{side}x{parse_model(data, 'cnn').subgraphs[0].tensors[0].shape[3]}"
    argv = ("optimize", str(planned), "--input-shape", shape, "--target", "kit-pse84-eval")
    code, _document = _json(capsys, *argv, "-o", str(written), "--vela", "--json")
    assert code == 0 and written.is_file()
    code, compiled = _json(capsys, "plan", str(written), "--target", "kit-pse84-eval", "--json")
    assert code == 0 and compiled["runs"]
    model = parse_model(written.read_bytes(), "compiled")
    image = model.subgraphs[0].tensors[model.subgraphs[0].inputs[0]]
    assert "x".join(map(str, image.shape)) == shape.removeprefix("image=")


@pytest.mark.slow
@pytest.mark.skipif(not HAS_VELA, reason="Vela is not installed (extra 'npu')")
def test_the_reproduce_command_compiles_what_was_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`optimize --vela --input-shape` compiles the model at that size (without an offline
    plan), yet its "reproduce:" line named the user's file: Vela run as printed compiled the
    other size. It now names the bytes Vela compiled, written beside the output, and run as
    printed Vela writes the very model arenalens wrote."""
    from flows import models

    monkeypatch.chdir(tmp_path)
    source = tmp_path / "cnn.tflite"
    source.write_bytes(models.cnn(random.Random(1)).data)
    code, document = _json(
        capsys,
        *("optimize", str(source), "--cpu", "cortex-m55", "--npu", "ethos-u55-128", "--vela"),
        *("--input-shape", "image=1x40x40x1"),
        *("-o", "chosen.tflite", "--json"),
    )
    assert code == 0 and document["vela_input"] == "chosen_vela_input.tflite"
    command = shlex.split(document["chosen"]["vela_command"])
    assert command[:2] == ["vela", "chosen_vela_input.tflite"]
    vela = [sys.executable, "-m", "ethosu.vela"]  # the `vela` script of this environment
    subprocess.run([*vela, *command[1:], "--output-dir", "out"], check=True, capture_output=True)
    compiled = (tmp_path / "out" / "chosen_vela_input_vela.tflite").read_bytes()
    assert compiled == (tmp_path / "chosen.tflite").read_bytes()
