"""`arenalens report` and `arenalens demo` from the command line, on built-in examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arenalens.cli import main
from tests.conftest import SHARED_MODELS
from tests.readme_examples import lines_not_printed, shown_under


def test_report_prints_summary_plans_tensors_and_memory_plan(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["report", "example:kws_ds_cnn", "--no-color", "--all"]) == 0
    out = capsys.readouterr().out
    assert "kws_ds_cnn" in out
    assert "lower bound" in out and "overhead" in out and "peak" in out
    assert "tflm_greedy (runtime)" in out and "naive" in out
    assert "buffers, largest first" in out
    assert "PrintMemoryPlan" in out and "(id=0)" in out
    assert "\x1b[" not in out  # plain: not a terminal, and --no-color


@pytest.mark.parametrize(
    "arguments",
    [
        ("example:kws_ds_cnn",),
        ("example:vww_mobilenet_v1", "--target", "nucleo-f401re"),
        ("example:branchy_inception", "--budget", "8KB"),
        ("example:resnet8_cifar", "--compare", "example:kws_ds_cnn"),
    ],
)
def test_the_terminal_report_fits_one_screen_and_leads_with_the_answer(
    arguments: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    main(["report", *arguments, "--no-color"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) <= 60
    assert lines[0].startswith("kTensorArenaSize")
    assert any(line == "what to do next:" for line in lines[:8])
    assert lines[-1].startswith("--all prints every plan")
    main(["report", *arguments, "--no-color", "--all"])
    assert len(capsys.readouterr().out.splitlines()) > len(lines)


def test_report_writes_html_and_images(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    html = tmp_path / "report.html"
    images = tmp_path / "images"
    code = main(
        [
            "report",
            "example:resnet8_cifar",
            "-o",
            str(html),
            "--images",
            str(images),
            "--budget",
            "40KiB",
            "--planner",
            "tflm_greedy",
            "--planner",
            "naive",
        ]
    )
    assert code == 1  # 40 KiB is not enough: the verdict's exit code
    out = capsys.readouterr().out
    assert f"wrote {html}" in out
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert '"budget":40960' in page
    written = sorted(p.name for p in images.iterdir())
    assert "resnet8_cifar.memory_map.png" in written and "resnet8_cifar.live_bytes.svg" in written
    assert len(written) == 8


def test_report_is_deterministic(tmp_path: Path) -> None:
    for name in ("a.html", "b.html"):
        assert main(["report", "example:fc_autoencoder", "-o", str(tmp_path / name)]) == 0
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()


def test_report_compare_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["report", "example:kws_ds_cnn", "--compare", "example:fc_autoencoder", "--json"])
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in document["reports"]] == ["kws_ds_cnn", "fc_autoencoder"]
    arena = document["reports"][0]["arenas"][0]
    assert arena["plans"][0]["is_runtime"] is True
    assert {p["planner"] for p in arena["plans"]} >= {"tflm_greedy", "naive"}


def test_report_compare_prints_where_the_bytes_went(capsys: pytest.CaptureFixture[str]) -> None:
    arguments = ["report", "example:kws_ds_cnn", "--compare", "example:resnet8_cifar"]
    assert main(arguments) == 0
    out = capsys.readouterr().out
    assert "compare" in out and "largest changes per tensor" not in out  # totals on one screen
    assert main([*arguments, "--all"]) == 0
    out = capsys.readouterr().out
    assert "compare" in out and "largest changes per tensor" in out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--budget", "lots"], "is not a size"),
        (["--planner", "no_such_planner"], "unknown planner"),
    ],
)
def test_bad_options_are_usage_errors(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["report", "example:kws_ds_cnn", *arguments])
    except SystemExit as exit_:  # argparse rejects a bad --budget while parsing
        code = exit_.code  # type: ignore[assignment]
    assert code == 2
    assert message in capsys.readouterr().err


def test_missing_output_folders_are_created_for_every_command(tmp_path: Path) -> None:
    # -o and --images create missing folders, the same for every command (issue 13).
    assert main(["report", "example:kws_ds_cnn", "-o", str(tmp_path / "a" / "r.html")]) == 0
    assert (tmp_path / "a" / "r.html").is_file()
    out = tmp_path / "b" / "p.json"
    assert main(["export", "example:kws_ds_cnn", "--format", "json", "-o", str(out)]) == 0
    assert out.is_file()
    folder = tmp_path / "c" / "many"
    code = main(
        ["export", "example:kws_ds_cnn", "example:fc_autoencoder", "-f", "csv", "-o", str(folder)]
    )
    assert code == 0 and len(list(folder.iterdir())) == 2


def test_outputs_that_name_files_as_folders_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = tmp_path / "existing.png"
    existing.write_bytes(b"png")
    assert main(["report", "example:kws_ds_cnn", "--images", str(existing)]) == 2
    assert "is a file" in capsys.readouterr().err
    assert existing.read_bytes() == b"png"
    nested = existing / "r.html"
    assert main(["report", "example:kws_ds_cnn", "-o", str(nested)]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_report_refuses_to_overwrite_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = SHARED_MODELS / "tflite_micro__hello_world_int8.tflite"
    if not model.is_file():
        pytest.skip("real-model corpus not found")
    copy = tmp_path / "model.tflite"
    copy.write_bytes(model.read_bytes())
    assert main(["report", str(copy), "-o", str(copy)]) == 2
    assert "refusing to overwrite the input file" in capsys.readouterr().err
    assert copy.read_bytes() == model.read_bytes()


def test_demo_writes_model_report_and_images(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # as a new user runs it: the default folder, arenalens-demo
    folder = Path("arenalens-demo")
    assert main(["demo", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert (folder / "vww_mobilenet_v1.tflite").is_file()
    assert (folder / "report.html").is_file()
    assert f"wrote {folder / 'report.html'}" in out
    assert "lower bound" in out
    assert "open file://" in out
    # The number for a microcontroller first: the board's core and kernels, and its verdict.
    assert out.startswith("kTensorArenaSize = 100,712 B")
    assert "figure for: Cortex-M7 (Armv7E-M, DSP), CMSIS-NN kernels" in out
    # After what the board's usual firmware keeps (targets.json: bare-metal, 8 KiB).
    assert (
        "FITS  vww_mobilenet_v1 on ST NUCLEO-F746ZG (Cortex-M7 216 MHz; 8,192 B kept for its "
        "firmware)" in out
    )
    assert "arenalens demo --target nucleo-f401re" in out
    assert "arenalens check example:vww_mobilenet_v1 --target all" in out
    # The README's demo example shows what the demo prints (the README says `arenalens demo`).
    shown = shown_under("arenalens demo")
    assert not lines_not_printed(shown, out), lines_not_printed(shown, out)
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert '"name":"cortex-m7/cmsis-nn"' in page and '"verdict":"FITS"' in page
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert len(list((folder / "images").glob("*.png"))) == 4


def test_demo_for_another_board_runs_as_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first command the demo suggests, pasted as it is: the board it names, its verdict."""
    import shlex

    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--no-color", "-o", "first"]) == 0
    suggested = next(
        line for line in capsys.readouterr().out.splitlines() if "arenalens demo --target" in line
    )
    command = shlex.split(suggested.partition("#")[0])
    assert command[:2] == ["arenalens", "demo"]
    assert main([*command[1:], "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "FITS AFTER OPTIMIZE  vww_mobilenet_v1 on ST NUCLEO-F401RE" in out
    # What to do there, runnable as printed.
    assert "arenalens optimize example:vww_mobilenet_v1 --target nucleo-f401re" in out
    assert "figure for: Cortex-M4 (Armv7E-M, DSP), CMSIS-NN kernels" in out
    assert (tmp_path / "arenalens-demo" / "report.html").is_file()
    assert "arenalens demo --target nucleo-f746zg" in out  # and back


def test_demo_of_another_example_suggests_the_same_example_for_another_board(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`demo --example kws_ds_cnn` suggested `arenalens demo --target nucleo-f401re` ("the same
    for another board"), which demos VWW instead (found walking the README)."""
    import shlex

    monkeypatch.chdir(tmp_path)
    arguments = ["demo", "--no-color", "--example", "kws_ds_cnn", "--planner", "tflm_greedy"]
    assert main([*arguments, "-o", "kws"]) == 0
    suggested = next(
        line for line in capsys.readouterr().out.splitlines() if "arenalens demo " in line
    )
    command = shlex.split(suggested.partition("#")[0])
    assert command[1:] == ["demo", *arguments[2:], "--target", "nucleo-f401re"], command
    assert main([*command[1:], "--no-color"]) == 0
    assert "kws_ds_cnn on ST NUCLEO-F401RE" in capsys.readouterr().out


def test_demo_refuses_an_unknown_board_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--target", "nucleo-zz"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "check --list-targets" in err


def test_demo_on_a_linux_device_names_the_check_that_answers_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shlex

    folder = tmp_path / "demo"
    assert main(["demo", "--target", "raspberry-pi-5-8gb", "-o", str(folder)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and not folder.exists()
    # The command in the message runs as printed and answers for the device under LiteRT.
    command = shlex.split(err[err.index("arenalens check") :])
    assert main([*command[1:], "--no-color"]) == 0
    assert "LiteRT memory" in capsys.readouterr().out


def test_written_files_get_the_usual_permissions(tmp_path: Path) -> None:
    import os
    import stat

    from arenalens.atomic import write_atomic

    umask = os.umask(0o022)
    try:
        fresh = write_atomic(tmp_path / "fresh.html", "x")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644  # not mkstemp's private 0600
        kept = tmp_path / "kept.html"
        kept.write_text("old")
        kept.chmod(0o640)
        write_atomic(kept, "new")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    finally:
        os.umask(umask)


@pytest.mark.runtime
def test_compare_input_shape_compares_a_model_with_itself_resized(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ai_edge_litert", reason="--input-shape needs the 'runtime' extra")
    model = SHARED_MODELS / "tflite_micro__mobilenet_v2_quantized_1x3x224x224.tflite"
    if not model.is_file():
        pytest.skip("real-model corpus not found")
    html = tmp_path / "shapes.html"
    code = main(
        [
            "report",
            str(model),
            "--compare-input-shape",
            "input.5=1x3x128x128",
            "--planner",
            "tflm_greedy",
            "-o",
            str(html),
            "--json",
        ]
    )
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    left, right = document["reports"]
    assert right["model"].endswith("[input.5=1x3x128x128]")
    left_arena = left["arenas"][0]["plans"][0]["arena_size"]
    right_arena = right["arenas"][0]["plans"][0]["arena_size"]
    assert right_arena < left_arena / 2  # (128/224)² ≈ 0.33 of the activations
    assert html.is_file()


def test_report_leads_with_the_number_then_the_verdict_then_what_to_do(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The "done when": the number for kTensorArenaSize, whether it fits, what to do.
    code = main(["report", "example:vww_mobilenet_v1", "--target", "nucleo-f401re", "--no-color"])
    assert code == 1  # it fits only after optimize: the verdict's exit code, as check's
    lines = capsys.readouterr().out.splitlines()
    # The board implies its core and kernels: a Cortex-M4 with CMSIS-NN.
    assert lines[0].startswith("kTensorArenaSize = 100,712 B")
    assert "head 72 KiB + tail" in lines[0] and "inside the tensor" in lines[0]
    assert any(line.startswith("figure for: Cortex-M4 (Armv7E-M, DSP), CMSIS-NN") for line in lines)
    verdict = next(line for line in lines if line.startswith("FITS"))
    assert verdict.startswith("FITS AFTER OPTIMIZE  vww_mobilenet_v1 on ST NUCLEO-F401RE")
    text = " ".join(line.strip("│ ") for line in lines)
    assert text.index("what to do next") < text.index("lower bound")
    optimize = (
        "arenalens optimize example:vww_mobilenet_v1 --target nucleo-f401re -o optimized.tflite"
    )
    assert optimize in [line.strip() for line in lines]  # on a line of its own, as it pastes
    # The remedy ladder's first rung that fits (an offline plan), after the firmware's reserve.
    assert "rewritten with an offline plan it fits at this size: it declares 82,280 B" in text
    assert "WARNING planner-waste" in text


def test_report_json_carries_the_number_verdict_findings_and_steps(
    capsys: pytest.CaptureFixture[str],
) -> None:
    arguments = ["report", "example:vww_mobilenet_v1", "--budget", "320KB", "--json"]
    assert main(arguments) == 0
    (report,) = json.loads(capsys.readouterr().out)["reports"]
    assert report["declare"]["symbol"] == "kTensorArenaSize"
    assert report["declare"]["required_bytes"] == report["required_bytes"] == 103_672
    assert [part["name"] for part in report["declare"]["parts"]] == ["head", "tail"]
    assert sum(part["bytes"] for part in report["declare"]["parts"]) == 103_672
    assert report["verdict"]["verdict"] == "FITS"
    assert report["verdict"]["where"] == "320KB = 327,680 B"
    assert report["budget"] == 327_680
    assert {f["rule"] for f in report["findings"]} >= {"planner-waste", "design-hints"}
    assert all(
        set(f) >= {"rule", "severity", "where", "fix", "saving_bytes"} for f in report["findings"]
    )
    assert report["next_steps"][0].startswith("Declare kTensorArenaSize = 103,672 B")
    plans = {p["planner"]: p for p in report["arenas"][0]["plans"]}
    assert plans["tflm_greedy"]["required_bytes"] == 103_672
    assert plans["first_fit"]["required_bytes"] == 85_240


def test_report_is_the_same_bytes_twice(tmp_path: Path) -> None:
    # Findings are computed without a time-limited search, so the page is deterministic.
    pages = []
    for index in range(2):
        out = tmp_path / f"r{index}.html"
        arguments = ["report", "example:kws_ds_cnn", "--target", "esp32", "-o", str(out)]
        assert main([*arguments, "--planner", "tflm_greedy", "--planner", "first_fit"]) == 0
        pages.append(out.read_bytes())
    assert pages[0] == pages[1]


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        (["--target", "z80"], "unknown target 'z80'"),
        (["--target", "esp32", "--budget", "1MB"], "not both"),
        (["--max-input"], "--max-input needs --target NAME or --budget SIZE"),
        (["--budget", "lots"], "is not a size"),
    ],
)
def test_report_fit_options_fail_fast(
    arguments: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "example:kws_ds_cnn", *arguments]) == 2
    captured = capsys.readouterr()
    assert fragment in captured.err and captured.out == ""


def test_report_max_input_plots_the_curve(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ai_edge_litert")
    arguments = ["report", "example:vww_mobilenet_v1", "--budget", "96KB", "--max-input"]
    assert main([*arguments, "--json"]) == 1  # 96 KB: it fits only after optimize
    (report,) = json.loads(capsys.readouterr().out)["reports"]
    assert report["max_input_shape"] == [1, 92, 92, 3]
    heights = [size["height"] for size in report["input_sizes"]]
    assert heights == sorted(heights) and 96 in heights
    assert any("the largest that fits is input=1x92x92x3" in s for s in report["next_steps"])
