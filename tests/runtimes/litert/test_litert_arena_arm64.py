"""LiteRT's arenas on Linux arm64 are the x86-64 wheel's, byte for byte: the aarch64 wheel's
tensor addresses (tests/data/litert_arena_arm64.json, `python -m tests.litert_arena_arm64`
remakes it under qemu-aarch64) agree with the prediction on every arena size and tensor offset,
which is what `plan` / `export --target <Linux device>` say of the figure they label for the
device (`litert_memory.arenas_on_device`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arenalens.cli import main
from arenalens.pipeline import analyze
from arenalens.runtimes.litert.rules import RealTensor, compare_with_real
from tests.litert_arena_arm64 import COMMAND, DATA, ROW, digest, models

CACHE: dict[str, Any] = json.loads(DATA.read_text())
MODELS = models()
PI = "raspberry-pi-4-b-2gb"


def _real(subgraphs: list[list[list[Any]]]) -> tuple[tuple[RealTensor, ...], ...]:
    return tuple(
        tuple(
            RealTensor(
                subgraph=number,
                **{
                    key: tuple(value) if key == "shape" and value is not None else value
                    for key, value in zip(ROW, row, strict=True)
                },
            )
            for row in rows
        )
        for number, rows in enumerate(subgraphs)
    )


def test_cache_says_how_it_was_made() -> None:
    assert CACHE["command"] == COMMAND
    assert CACHE["environment"]["ai_edge_litert"]
    measured = [name for name, entry in CACHE["models"].items() if "subgraphs" in entry]
    assert len(measured) >= 80


@pytest.mark.parametrize("name", sorted(CACHE["models"]))
def test_arm64_arenas_equal_the_prediction(name: str) -> None:
    entry = CACHE["models"][name]
    if "subgraphs" not in entry:
        pytest.skip(f"the aarch64 wheel refused it: {entry['error']}")
    data = MODELS[name]()
    assert digest(data) == entry["structure"], "the model's generator changed: remake the cache"
    analysis = analyze(data, runtime="litert")
    result = compare_with_real(
        analysis.model,
        [arena.arena for arena in analysis.arenas],
        [arena.runtime_plan for arena in analysis.arenas],
        _real(entry["subgraphs"]),
    )
    assert result.rows
    assert [row.label for row in result.rows if not row.agrees] == []


def test_plan_and_export_label_a_devices_arenas_for_it(capsys: pytest.CaptureFixture[str]) -> None:
    """plan (text, --json) and export (json, c-header) on a Linux device name it and say the
    arenas are x86-64's, where they are checked; without a device they stay the x86-64 wheel's."""
    model = "example:kws_ds_cnn"
    assert main(["plan", model, "--target", PI, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    device = document["declare"]["device"]
    assert device.startswith("LiteRT CPU runtime on Raspberry Pi 4 Model B, 2 GB (Linux arm64")
    assert any("Linux arm64 libstdc++" in line for line in document["budget"]["assumptions"])
    assert not any("x86-64 libstdc++" in line for line in document["budget"]["assumptions"])
    assert main(["plan", model, "--target", PI]) == 0
    assert "figure for: LiteRT CPU runtime on Raspberry Pi 4" in capsys.readouterr().out
    assert main(["export", model, "--target", PI, "-f", "c-header"]) == 0
    assert " * For: LiteRT CPU runtime on Raspberry Pi 4" in capsys.readouterr().out
    assert main(["export", model, "--target", PI, "-f", "json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert any("Linux arm64 libstdc++" in line for line in exported["budget"]["assumptions"])
    assert exported["required_bytes"] == document["required_bytes"]
    assert main(["plan", model, "--runtime", "litert", "--json"]) == 0
    host = json.loads(capsys.readouterr().out)
    assert host["declare"]["device"] == "LiteRT CPU runtime, Linux x86-64"
    assert host["required_bytes"] == document["required_bytes"]


def test_android_and_armv7_arenas_say_what_they_are(capsys: pytest.CaptureFixture[str]) -> None:
    """Android builds LiteRT with libc++ (its tie order is not modelled): an estimate; a 32-bit
    OS (--isa armv7) packs a 4-bit FULLY_CONNECTED's input in 1 row: at most x86-64's bytes."""
    model = "example:kws_ds_cnn"
    assert main(["plan", model, "--target", "pixel-7a", "--json"]) == 0
    android = json.loads(capsys.readouterr().out)
    assert "Android arm64" in android["declare"]["device"]
    assert android["declare"]["status"] == "estimate"
    assert any("libc++" in reason for reason in android["budget"]["estimates"])
    assert main(["plan", model, "--target", PI, "--isa", "armv7", "--json"]) == 0
    armv7 = json.loads(capsys.readouterr().out)
    assert "Linux armv7; at most the arenas of Linux x86-64" in armv7["declare"]["device"]
    assert armv7["required_bytes"] == android["required_bytes"]
