"""verdict.py: one computed answer, rendered by every view; next steps that are real commands."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

import arenalens
from arenalens.cli import build_parser, main
from arenalens.examples import write_example
from arenalens.next_steps import Steps
from arenalens.pipeline import ArenaResult
from arenalens.verdict import Answer, Verdict
from tests.fixtures import path_models


def _write(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return str(path)


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    code = main(["check", *argv, "--json"])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    main(["check", *argv, "--no-color"])
    text = capsys.readouterr().out
    return code, document, text


def _parses(command: str) -> None:
    """The command is `arenalens` with options its command takes (argparse exits 2 otherwise)."""
    words = shlex.split(command)
    assert words[0] == "arenalens"
    build_parser(words[1:]).parse_args(words[1:])


@pytest.mark.parametrize(
    "options",
    [
        ("--budget", "96KB"),
        ("--budget", "1MB"),
        ("--budget", "8KB"),
        ("--target", "nucleo-f401re"),
        ("--target", "nucleo-f401re", "--kernels", "reference"),
        ("--target", "esp32"),
        ("--budget", "96KB", "--cpu", "cortex-m7", "--kernels", "cmsis-nn"),
        ("--budget", "96KB", "--runtime", "litert"),
        ("--budget", "96KB", "--reserve", "8KB"),
    ],
)
def test_every_step_is_a_command_of_the_cli_and_the_views_agree(
    options: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, document, text = _check(capsys, "example:vww_mobilenet_v1", *options)
    assert code == (0 if document["fits"] else 1)
    assert text.splitlines()[1].startswith(document["verdict"])
    for step in document["next_steps"]:
        if step["command"]:
            _parses(step["command"])
            # Printed on lines of its own, a long one continued with ' \' (it pastes whole).
            assert step["command"] in re.sub(r" \\\n +", " ", text)
            assert "example:vww_mobilenet_v1" in step["command"] or "optimized" in step["command"]
    verdict = arenalens.check(_example(tmp_path), **_api_options(options))
    assert verdict.answer is not None and verdict.answer.value == document["verdict"]
    assert verdict.required_bytes == document["required_bytes"]
    assert verdict.fits == document["fits"]


def _example(folder: Path, name: str = "vww_mobilenet_v1") -> str:
    return str(write_example(name, folder))


def _api_options(options: tuple[str, ...]) -> dict[str, Any]:
    """CLI options → arenalens.check() keywords."""
    names = dict(zip(options[::2], options[1::2], strict=True))
    found: dict[str, Any] = {}
    if "--budget" in names:
        found["budget"] = names["--budget"]
    if "--target" in names:
        found["target"] = names["--target"]
    if "--reserve" in names:
        found["reserve"] = names["--reserve"]
    if "--runtime" in names:
        found["runtime"] = names["--runtime"]
    if "--cpu" in names:
        found["build"] = f"{names['--cpu']}/{names.get('--kernels', 'reference')}"
    elif "--kernels" in names:
        found["build"] = f"cortex-m4/{names['--kernels']}"
    return found


def test_without_a_budget_the_number_is_the_answer(tmp_path: Path) -> None:
    verdict = arenalens.check(_example(tmp_path, "kws_ds_cnn"))
    assert verdict.answer is None and verdict.exit_code == 0
    assert verdict.required_bytes == verdict.declared.required_bytes
    assert verdict.next_steps[0].startswith("Declare kTensorArenaSize = ")


def test_cannot_run_has_no_number_in_python_either(tmp_path: Path) -> None:
    model = _write(tmp_path, "f16.tflite", path_models.float16_weights_model())
    verdict = arenalens.check(model, budget="1MB")
    assert verdict.answer is Answer.CANNOT_RUN and not verdict.runs
    assert verdict.required_bytes is None and dict(verdict.parts) == {}
    assert verdict.fits is False and verdict.fits_after_optimize is False
    assert verdict.exit_code == 1
    (refusal,) = verdict.refusals
    assert refusal.count == 74 and "float16" in refusal.fix
    analysis = arenalens.analyze(model)
    assert not analysis.runs and analysis.budget.obstacles


def test_input_shapes_in_python_name_the_size(tmp_path: Path) -> None:
    pytest.importorskip("ai_edge_litert")
    model = _write(tmp_path, "placeholder.tflite", path_models.placeholder_image_model())
    unknown = arenalens.check(model, budget="1MB")
    assert unknown.answer is Answer.INPUT_SHAPE_UNKNOWN and unknown.required_bytes is None
    known = arenalens.check(model, budget="1MB", input_shapes={"image": (1, 96, 96, 3)})
    assert known.answer is Answer.FITS and known.required_bytes is not None
    assert known.input_shapes == ("image=1x96x96x3",)
    same = arenalens.check(model, budget="1MB", input_shapes=["image=1x96x96x3"])
    assert same.required_bytes == known.required_bytes


def test_a_check_that_fits_makes_one_verdict_and_leaves_what_only_views_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a search loop only the answer is read: the Verdict is made once, and its next steps and
    the lower bound behind `best_case_bytes` are worked out when a view first reads them (the
    same figures then: the views' goldens hold them)."""
    asked: list[str] = []
    made = Verdict.__init__
    all_steps = Steps.all
    bound = ArenaResult.lower_bound

    def counted_init(self: Verdict, *args: Any, **kwargs: Any) -> None:
        asked.append("verdict")
        made(self, *args, **kwargs)

    def counted_steps(self: Steps) -> Any:
        asked.append("steps")
        return all_steps(self)

    def counted_bound(self: ArenaResult) -> int:
        asked.append("lower bound")
        return bound.fget(self)  # type: ignore[no-any-return, attr-defined]

    monkeypatch.setattr(Verdict, "__init__", counted_init)
    monkeypatch.setattr(Steps, "all", counted_steps)
    monkeypatch.setattr(ArenaResult, "lower_bound", property(counted_bound))
    arenalens.clear_caches()
    verdict = arenalens.check("example:kws_ds_cnn", budget="1MB", build="cortex-m7/cmsis-nn")
    assert verdict.fits and verdict.required_bytes and asked == ["verdict"]
    document = verdict.as_dict()
    assert sorted(asked) == ["lower bound", "steps", "verdict"]
    assert document["best_case_bytes"] <= document["required_bytes"]
    assert document["next_steps"] and verdict.next_steps  # made once, then kept
    assert sorted(asked) == ["lower bound", "steps", "verdict"]
