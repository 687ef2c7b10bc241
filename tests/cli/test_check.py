"""`arenalens check`: exit 0 when the declared arena fits, 1 when not, 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arenalens.cli import main
from arenalens.pipeline import analyze
from arenalens.targets import TARGETS, get_target
from arenalens.tflite.reader import load_model
from tests.conftest import SHARED_MODELS, shared_params
from tests.diagnostics.models import chain


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    builder, _ = chain()
    path = tmp_path / "small.tflite"
    path.write_bytes(builder.build())
    return path


def required(path: Path, runtime: str = "tflm") -> int:
    return analyze(load_model(path), runtime=runtime).budget.required_bytes


@pytest.mark.parametrize("runtime", ["tflm", "litert"])
@pytest.mark.parametrize("name", shared_params())
def test_exit_codes_around_the_prediction_on_real_models(
    name: str, runtime: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(SHARED_MODELS / name)
    predicted = required(SHARED_MODELS / name, runtime)
    base = ["check", path, "--runtime", runtime, "--budget"]
    assert main([*base, str(predicted + 1)]) == 0
    assert main([*base, str(predicted)]) == 0
    assert main([*base, str(predicted - 1)]) == 1
    assert main([*base, str(predicted + 100), "--reserve", "101"]) == 1
    output = capsys.readouterr().out
    assert "DOES NOT FIT" in output and "FITS" in output


def test_json_document(model_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    predicted = required(model_file)
    code = main(["check", str(model_file), "--budget", "1MiB", "--reserve", "1K", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert document["fits"] is True
    assert document["required_bytes"] == predicted
    assert document["budget_bytes"] == 1024 * 1024
    assert document["available_bytes"] == 1024 * 1024 - 1024
    assert document["headroom_bytes"] == 1024 * 1024 - 1024 - predicted
    assert document["target"] is None


def test_shortfall_is_reported(model_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    predicted = required(model_file)
    assert main(["check", str(model_file), "--budget", str(predicted - 10), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["headroom_bytes"] == -10 and document["fits"] is False
    assert main(["check", str(model_file), "--budget", str(predicted - 10)]) == 1
    assert "shortfall" in capsys.readouterr().out


@pytest.mark.parametrize("size", ["300KiB", "0.5MiB", "307200", "256K"])
def test_sizes_with_units(model_file: Path, size: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(model_file), "--budget", size, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["budget_bytes"] in {307200, 524288, 262144}


def test_target_preset(model_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(model_file), "--target", "STM32F746", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["target"]["name"] == "stm32f746"
    assert document["budget_bytes"] == 320 * 1024


def test_required_targets_are_documented() -> None:
    for name in (
        "stm32f746", "stm32h743", "esp32", "esp32-s3", "nrf52840", "rp2040",
        "arduino-nano-33-ble", "apollo3",
    ):  # fmt: skip
        target = get_target(name)
        assert target.sram_bytes >= target.arena_limit_bytes > 0
        assert target.source
    assert get_target("esp32s3") is TARGETS["esp32-s3"]


def test_list_targets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--list-targets", "--json"]) == 0
    names = [t["name"] for t in json.loads(capsys.readouterr().out)]
    assert names == list(TARGETS)
    assert main(["check", "--list-targets", "--no-color"]) == 0
    assert "nrf52840" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ([], "give --budget SIZE or --target NAME"),
        (["--budget", "lots"], "is not a size"),
        (["--budget", "0"], "must be positive"),
        (["--target", "z80"], "unknown target 'z80'"),
        (["--budget", "1KiB", "--reserve", "2KiB"], "leaves nothing"),
    ],
)
def test_bad_options_exit_2(
    model_file: Path, arguments: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(model_file), *arguments]) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1


def test_budget_and_target_are_exclusive(
    model_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["check", str(model_file), "--budget", "1K", "--target", "esp32"])
    assert raised.value.code == 2


def test_missing_model_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "nope.tflite"), "--budget", "1K"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_batch_exit_code_is_the_worst(
    tmp_path: Path, model_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small = required(model_file)
    big_builder, _ = chain(size=32)
    big = tmp_path / "big.tflite"
    big.write_bytes(big_builder.build())
    arguments = ["check", str(tmp_path), "--budget", str(small), "-j", "1"]
    assert main(arguments) == 1
    table = capsys.readouterr().out
    assert "small.tflite" in table and "big.tflite" in table
    assert main([*arguments, "--json"]) == 1
    entries = json.loads(capsys.readouterr().out)
    assert [(Path(e["path"]).name, e["exit_code"], e["fits"]) for e in entries] == [
        ("big.tflite", 1, False),
        ("small.tflite", 0, True),
    ]
    broken = tmp_path / "broken.tflite"
    broken.write_bytes(b"not a model")
    assert main([*arguments, "--json"]) == 2
    entries = json.loads(capsys.readouterr().out)
    assert entries[1]["exit_code"] == 2 and "not a TFLite model" in entries[1]["error"]
