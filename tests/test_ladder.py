"""The remedy ladder, the firmware reserve and FITS, TIGHT, and what the firmware must register."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import arenalens
from arenalens.firmware import FirmwareNeeds, resolver_method
from arenalens.ladder import Remedy
from arenalens.targets import get_target
from arenalens.verdict import Answer


def test_the_ladder_stops_at_the_first_rung_that_fits() -> None:
    """VWW on a NUCLEO-F401RE after its firmware's reserve: the offline plan fits, so nothing
    costlier is tried, and the first step is that rewrite's command."""
    verdict = arenalens.check("example:vww_mobilenet_v1", target="nucleo-f401re")
    assert verdict.answer is Answer.FITS_AFTER_OPTIMIZE
    ladder = verdict.fit.ladder if verdict.fit else None
    assert ladder is not None
    assert [rung.remedy for rung in ladder.rungs] == [Remedy.AS_GIVEN, Remedy.OFFLINE_PLAN]
    assert ladder.first_fit is ladder.rungs[-1] and ladder.first_fit.options == ()
    first = verdict.steps[0]
    assert first.command.startswith("arenalens optimize example:vww_mobilenet_v1")
    assert "--overlap" not in first.command and "--split" not in first.command
    assert verdict.as_dict()["remedies"][1]["remedy"] == "offline plan"


def test_the_in_place_rung_prints_the_command_that_reaches_its_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--cpu without --kernels: the ladder keeps in-place outputs valid on every library the
    core may link, so the printed optimize names no library and, run as printed, declares the
    figure promised (with --kernels reference it wrote a plan valid there only, 27,628 B)."""
    from tests.ladder_cases import run_json

    monkeypatch.chdir(tmp_path)
    asked = ("example:branchy_inception", "--budget", "32KB", "--cpu", "cortex-m7")
    code, check = run_json("check", *asked)
    assert (code, check["verdict"]) == (1, "FITS AFTER OPTIMIZE")
    assert check["remedies"][-1]["remedy"] == Remedy.REORDER.value
    command = check["next_steps"][0]["command"]
    assert command.endswith("--cpu cortex-m7 -o optimized.tflite --reorder --inplace")
    code, written = run_json(*shlex.split(command)[1:])
    assert code == 0 and written["new_required_bytes"] == check["optimized_required_bytes"]


def test_a_reserve_other_than_the_boards_is_said_again_in_the_check_it_suggests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--reserve 0` on a board whose firmware keeps 8 KB: the optimize command and the check of
    the written model must answer for the same bytes, so both repeat --reserve 0 (without it,
    optimize --target would end with DOES NOT FIT where this check promised a fit, as it did on
    mobilenet_v2_035_96 on the NUCLEO-F429ZI)."""
    from tests.ladder_cases import run_json

    verdict = arenalens.check("example:vww_mobilenet_v1", target="nucleo-f401re", reserve=0)
    assert verdict.answer is Answer.FITS_AFTER_OPTIMIZE
    then = verdict.steps[1].command
    assert then.startswith("arenalens check optimized.tflite --target nucleo-f401re")
    assert then.endswith(" --reserve 0")
    command = verdict.steps[0].command
    assert " --target nucleo-f401re --reserve 0 -o optimized.tflite" in command
    monkeypatch.chdir(tmp_path)
    code, written = run_json(*shlex.split(command)[1:])
    promised = verdict.as_dict()["after_optimize"]
    assert code == 0 and written["fit"]["fits"] is True
    assert written["fit"]["reserve_bytes"] == 0
    assert written["fit"]["required_bytes"] == promised["required_bytes"]
    assert written["fit"]["headroom_bytes"] == promised["spare_bytes"]
    assert f"{promised['spare_bytes']:,} B to spare" in verdict.steps[0].text


def test_a_model_that_fits_as_given_climbs_nothing() -> None:
    verdict = arenalens.check("example:kws_ds_cnn", target="stm32f746")
    assert verdict.answer is Answer.FITS
    assert verdict.fit is not None and verdict.fit.ladder is None
    assert verdict.as_dict()["remedies"] == []


def test_a_board_keeps_its_firmwares_share_unless_told_otherwise() -> None:
    board = get_target("arduino-nano-33-ble")
    assert board.firmware is not None and board.firmware.name == "mbed-os-ble"
    assert board.reserve_bytes == sum(board.firmware.parts.values()) > 0
    kept = arenalens.check("example:kws_ds_cnn", target=board)
    assert kept.fit is not None and kept.fit.reserve_bytes == board.reserve_bytes
    assert kept.as_dict()["reserve_from"] == "firmware"
    given = arenalens.check("example:kws_ds_cnn", target=board, reserve=0)
    assert given.fit is not None and given.fit.reserve_bytes == 0
    assert given.as_dict()["reserve_from"] == "given"
    # A plain budget keeps nothing unless asked.
    budget = arenalens.check("example:kws_ds_cnn", budget="320KB")
    assert budget.fit is not None and budget.fit.reserve_bytes == 0


@pytest.mark.parametrize(("spare", "tight"), [(0, True), (1, True), (10_000, False)])
def test_fits_with_less_than_the_margin_is_tight(spare: int, tight: bool) -> None:
    needed = arenalens.check("example:kws_ds_cnn").required_bytes
    assert needed is not None
    verdict = arenalens.check("example:kws_ds_cnn", budget=needed + spare)
    assert verdict.fits and verdict.exit_code == 0
    assert (verdict.answer is Answer.FITS_TIGHT) is tight
    if tight:
        assert any("--reserve" in step.command for step in verdict.steps)


@pytest.mark.parametrize(
    ("opcode", "method"),
    [
        # micro_mutable_op_resolver.h spells them so.
        ("CONV_2D", "AddConv2D"),
        ("DEPTHWISE_CONV_2D", "AddDepthwiseConv2D"),
        ("STRIDED_SLICE", "AddStridedSlice"),
        ("L2_POOL_2D", "AddL2Pool2D"),
        ("BATCH_MATMUL", "AddBatchMatMul"),
        ("UNIDIRECTIONAL_SEQUENCE_LSTM", "AddUnidirectionalSequenceLSTM"),
        ("SPACE_TO_BATCH_ND", "AddSpaceToBatchNd"),
        ("PADV2", "AddPadV2"),
        # TFLM's own custom kernels have methods too (an export's REGISTER_OPERATORS wrote
        # `resolver.AddCustom("SignalRfft", /* its TFLMRegistration */);`, which a firmware
        # cannot compile, for a model of the signal library's audio front end).
        ("CUSTOM:SignalRfft", "AddRfft"),
        ("CUSTOM:SignalFilterBankSpectralSubtraction", "AddFilterBankSpectralSubtraction"),
        ("CUSTOM:SignalPCAN", "AddPCAN"),
        ("CUSTOM:CIRCULAR_BUFFER", "AddCircularBuffer"),
        ("CUSTOM:TFLM_DECODE", "AddDecode"),
        ("CUSTOM:TFLite_Detection_PostProcess", "AddDetectionPostprocess"),
    ],
)
def test_resolver_methods_are_tflms(opcode: str, method: str) -> None:
    assert resolver_method(opcode) == method


def test_every_custom_kernel_tflm_registers_has_its_resolver_method() -> None:
    """Every custom operator a TFLM kernel rule covers is registered by its own method of
    micro_mutable_op_resolver.h (TFLM 90b983c), not by a placeholder AddCustom line."""
    from arenalens.runtimes.tflm.kernels.registry import REFERENCE_KERNELS

    customs = [opcode for opcode in REFERENCE_KERNELS if opcode.startswith("CUSTOM:")]
    assert len(customs) >= 16
    assert all(resolver_method(opcode) for opcode in customs), customs


def test_resolver_lines_count_the_operators() -> None:
    needs = FirmwareNeeds(("CONV_2D", "PAD", "CONCATENATION"), resource_variables=0)
    assert needs.resolver_lines == (
        "static tflite::MicroMutableOpResolver<3> resolver;",
        "resolver.AddConv2D();",
        "resolver.AddPad();",
        "resolver.AddConcatenation();",
    )
    assert needs.resource_line == ""


def test_the_resource_variable_table_the_firmware_creates_is_what_the_wheel_needs() -> None:
    """`--resource-variables N` against the wheel given a table of N entries (cached by
    `python -m tests.resource_table`): every figure exact; a table too small cannot run."""
    import hashlib

    from arenalens.builds.build import HOST
    from tests.resource_table import cached, models

    measured = cached()["models"]
    for name, data in models().items():
        assert hashlib.sha256(data).hexdigest() == measured[name]["sha256"], name
        for key, needed in measured[name]["tables"].items():
            build = HOST if key == "wheel" else replace(HOST, resource_variables=int(key))
            budget = arenalens.analyze(data, build=build).budget
            assert budget.runs and budget.required_bytes == needed, (name, key)
    too_small = replace(HOST, resource_variables=2)
    assert not arenalens.analyze(models()["resource_variables_mixed"], build=too_small).runs


def test_resource_variables_is_an_option_of_every_sizing_command() -> None:
    from arenalens.cli import build_parser

    parser = build_parser()
    extra = {"optimize": ["-o", "x.tflite"], "export": ["--format", "json"]}
    for command in ("plan", "check", "report", "optimize", "export", "diagnose", "compare"):
        argv = [command, "m.tflite", "--resource-variables", "20", *extra.get(command, [])]
        assert parser.parse_args(argv).resource_variables == 20, command


def test_optimizing_an_optimized_model_leaves_no_orphaned_plan() -> None:
    """The plan (and record) buffers a re-optimize replaces go: the new ones take their place."""
    from arenalens.examples import example_bytes
    from arenalens.optimization import optimize_model
    from arenalens.tflite.reader import parse_model
    from arenalens.tflite.rewriter import rewrite_model

    first = optimize_model(example_bytes("vww_mobilenet_v1"), effort=1.0)
    assert first.chosen is not None
    once = parse_model(first.data, "once")
    again = rewrite_model(first.data, offline_plan=first.chosen.offline)
    twice = parse_model(again, "twice")
    assert len(twice.buffers) == len(once.buffers) - 1  # the old record's buffer is gone too
    assert [entry.name for entry in twice.metadata] == ["OfflineMemoryAllocation"]
    assert twice.offline_plan == once.offline_plan


def test_a_firmware_built_from_the_printed_resolver_and_table_sets_up_at_the_printed_figure() -> (
    None
):
    """Real TFLM for a Cortex-M3 with CMSIS-NN under QEMU, its op resolver exactly the lines
    arenalens printed and its variable table the size it assumed (cached by
    `python -m tests.firmware_probe`): it sets up at the printed number, not one byte below; the
    resolver of the model as given fails at setup (the split added an operator)."""
    import json

    from arenalens.builds.build import as_build
    from arenalens.firmware import firmware_needs
    from tests.firmware_probe import BUILD, CACHE, cases

    document = json.loads(CACHE.read_text())
    measured = document["cases"]
    for name, record in measured.items():
        assert record["status"] == "ok" and record["min_arena"] == record["required_bytes"], name
    split = measured["vww split"]
    assert split["as_given_status"] == "fail" and "CONCATENATION" in split["as_given_detail"]
    assert "resolver.AddConcatenation();" in split["resolver"]
    table = measured["resource variables, table 20"]
    data = cases()["resource variables, table 20"]["data"]
    build = replace(as_build(BUILD), resource_variables=20)
    assert arenalens.analyze(data, build=build).budget.required_bytes == table["min_arena"]
    model = arenalens.load_model(data)
    assert list(firmware_needs(model, 20).resolver_lines) == table["resolver"]


def test_a_rewrite_asked_again_in_the_process_is_not_searched_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """check's text then its JSON, or a report after a check, ask the ladder the same rewrites:
    answered once per model (bytes and shapes), options, build, rules and board."""
    import arenalens.optimization
    from arenalens import ladder
    from arenalens.builds.build import HOST
    from arenalens.examples import example_bytes
    from arenalens.runtimes.litert.shapes import resize_model_inputs
    from arenalens.target_build import rewrite_rules

    calls: list[tuple[str, ...]] = []

    def counted(model: object, **options: object) -> str:
        calls.append(tuple(sorted(name for name, value in options.items() if value is True)))
        return f"optimization {len(calls)}"

    monkeypatch.setattr(arenalens.optimization, "optimize_model", counted)
    monkeypatch.setattr(ladder, "_REWRITES", type(ladder._REWRITES)())
    model = arenalens.load_model(example_bytes("kws_ds_cnn"))
    again = arenalens.load_model(example_bytes("kws_ds_cnn"))
    rules = rewrite_rules(HOST)

    def rewrite(of: Any, options: tuple[str, ...], effort: float = 1.0) -> object:
        return ladder.rewrite(of, options, build=HOST, rules=rules, effort=effort)

    first = rewrite(model, ("--overlap",))
    assert rewrite(again, ("--overlap",)) is first  # the same bytes, loaded again
    assert len(calls) == 1
    assert rewrite(model, ("--overlap", "--split")) is not first
    image = model.subgraphs[0].tensors[model.subgraphs[0].inputs[0]]
    resized = resize_model_inputs(model, {0: (1, image.shape[1] * 2, *image.shape[2:])})
    assert rewrite(resized, ("--overlap",)) is not first  # another input size
    assert rewrite(model, ("--overlap",), effort=8.0) is not first  # searched further
    assert len(calls) == 4
