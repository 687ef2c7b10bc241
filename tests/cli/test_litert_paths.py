"""One LiteRT verdict on every path (issue 32): plan, check, diagnose, report, export and a batch
give the same answer for the same delegate (`litert_memory.delegate_verdict`), and the wheel
confirms it.

Found by hand (note7): on a model only the builtin kernels refuse (a READ_VARIABLE before any
assignment whose variable the XNNPACK delegate proxies), `plan --runtime litert` printed CANNOT
RUN, exited 1 and then printed heap figures, `report` said CANNOT RUN, while `check --runtime
litert` (XNNPACK, LiteRT's default) said FITS. Each model below is run by each command under
each delegate; the expected verdicts are the wheel's (`test_the_wheel_gives_each_verdict`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arenalens.cli import main
from arenalens.tflite.builder import ModelBuilder, quantization
from tests.litert_variable_cases import read_order_model, scalar_read_model


def _add_relu6(scale: float) -> bytes:
    """An int8 ADD with a fused RELU6, every tensor at `scale`: at 1e-9, 6 / scale overflows
    int32 and the builtin ADD's Prepare refuses it; XNNPACK takes the ADD and runs it."""
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


def _fully_connected(output_scale: float) -> bytes:
    """An int8 FULLY_CONNECTED, input and filter at scale 1: its requantization scale is
    1 / output_scale, which XNNPACK refuses at 256 or more (fully-connected-nc.c) while the
    builtin kernels run it."""
    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    x = graph.add_tensor("x", [1, 8], "INT8", quantization=quantization(1.0, 0))
    weights = graph.add_constant("w", np.ones((4, 8), np.int8), quantization=quantization(1.0, 0))
    bias = graph.add_constant("b", np.zeros(4, np.int32), quantization=quantization(1.0, 0))
    y = graph.add_tensor("y", [1, 4], "INT8", quantization=quantization(output_scale, 0))
    graph.add_operator("FULLY_CONNECTED", [x, weights, bias], [y])
    graph.set_inputs([x])
    graph.set_outputs([y])
    return builder.build()


# name → (model, runs with XNNPACK, runs with the builtin kernels only), as the wheel says.
MODELS: dict[str, tuple[Callable[[], bytes], bool, bool]] = {
    "scalar_read_first": (lambda: scalar_read_model(("read", "relu", "assign")), True, False),
    "read_first": (lambda: read_order_model("read_first"), True, False),
    "read_first_int32": (lambda: read_order_model("read_first", "INT32"), False, False),
    "assign_first": (lambda: read_order_model("assign_first"), True, True),
    "relu6_overflow": (lambda: _add_relu6(1e-9), True, False),
    "fc_scale_300": (lambda: _fully_connected(1 / 300), False, True),
}
DELEGATES = ("xnnpack", "none")


def _runs(name: str, delegate: str) -> bool:
    return MODELS[name][1 if delegate == "xnnpack" else 2]


def _json(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, Any]:
    code = main(list(arguments))
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("litert_paths")
    paths = {}
    for name, (make, _, _) in MODELS.items():
        paths[name] = folder / f"{name}.tflite"
        paths[name].write_bytes(make())
    return paths


@pytest.mark.parametrize("delegate", DELEGATES)
@pytest.mark.parametrize("name", list(MODELS))
def test_every_command_gives_the_delegates_verdict(
    name: str, delegate: str, models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path, runs = str(models[name]), _runs(name, delegate)
    litert = ("--runtime", "litert", "--delegate", delegate)
    code, plan = _json(capsys, "plan", path, *litert, "--json")
    assert (code == 0, plan["runs"], plan["delegate"]) == (runs, runs, delegate)
    assert (plan["declare"]["status"] != "cannot-run") == runs
    # No heap figure under a delegate that cannot run the model; the chosen one's first.
    heaps = [heap["delegate"] for heap in plan["interpreter_heap"]]
    assert heaps == sorted((d for d in DELEGATES if _runs(name, d)), key=lambda d: d != delegate)

    code, check = _json(capsys, "check", path, *litert, "--budget", "1GB", "--json")
    assert (code == 0, check["runs"], check["required_bytes"] is not None) == (runs,) * 3

    code, diagnosis = _json(capsys, "diagnose", path, *litert, "--json")
    errors = [
        finding
        for finding in diagnosis["findings"]
        if finding["rule"] == "cannot-run" and finding["severity"] == "error"
    ]
    assert (code == 0, not errors) == (runs, runs)

    code, report = _json(capsys, "report", path, *litert, "--json")
    (shown,) = report["reports"]
    assert (code == 0, shown["verdict"]["runs"]) == (runs, runs)
    assert [heap["delegate"] for heap in shown.get("interpreter_heap", [])][:1] == heaps[:1]

    code, exported = _json(capsys, "export", path, *litert, "--format", "json")
    assert (code == 0, exported["runs"], exported["delegate"]) == (runs, runs, delegate)
    assert exported["interpreter_heap"] == plan["interpreter_heap"]
    header = main(["export", path, *litert, "--format", "c-header"])
    assert (header == 0) == runs
    capsys.readouterr()


@pytest.mark.parametrize("delegate", DELEGATES)
def test_a_batch_gives_each_models_verdict(
    delegate: str, models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(next(iter(models.values())).parent)
    litert = ("--runtime", "litert", "--delegate", delegate, "--jobs", "1")
    for command in (("plan",), ("check", "--budget", "1GB")):
        _code, rows = _json(capsys, *command, folder, *litert, "--json")
        for row in rows:
            name = Path(row["path"]).stem
            assert (row["exit_code"] == 0, row["runs"]) == (_runs(name, delegate),) * 2, row


def test_where_only_the_builtin_kernels_refuse_the_plan_says_whose_arenas(
    models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Under XNNPACK the plan's arenas are still the builtin kernels' (the delegate's heap is in
    interpreter_heap): where those kernels cannot run the model the figure says so, and the
    heap's notes say why --delegate none has no figure."""
    path = str(models["scalar_read_first"])
    code, plan = _json(capsys, "plan", path, "--runtime", "litert", "--json")
    assert code == 0 and "the builtin kernels' arenas" in plan["declare"]["device"]
    ((heap),) = plan["interpreter_heap"]
    assert any("--delegate none) LiteRT cannot run" in note for note in heap["notes"])
    code, plan = _json(capsys, "plan", str(models["assign_first"]), "--runtime", "litert", "--json")
    assert code == 0 and "builtin" not in plan["declare"]["device"]


@pytest.mark.runtime
@pytest.mark.parametrize("name", list(MODELS))
def test_the_wheel_gives_each_verdict(name: str) -> None:
    """The expected verdicts are the ai_edge_litert wheel's: Interpreter + allocate_tensors +
    one invoke, with XNNPACK (OpResolverType.AUTO, LiteRT's default) and without it."""
    interpreter = pytest.importorskip("ai_edge_litert.interpreter")
    kinds = interpreter.OpResolverType
    data = MODELS[name][0]()
    for delegate, kind in (
        ("xnnpack", kinds.AUTO),
        ("none", kinds.BUILTIN_WITHOUT_DEFAULT_DELEGATES),
    ):
        try:
            runner = interpreter.Interpreter(model_content=data, experimental_op_resolver_type=kind)
            runner.allocate_tensors()
            runner.invoke()
        except RuntimeError:
            ran = False
        else:
            ran = True
        assert ran == _runs(name, delegate), (name, delegate)


def test_every_heap_figure_says_its_threads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--threads N's figures are Interpreter(num_threads=N)'s: plan's heap tables, check's
    figure (one board or every Linux device, where the builds' headline replaces 'figure for')
    and its --json symbol say N threads (`litert_memory.threads_words`); one thread, LiteRT's
    Python default, says nothing. Found walking check --target all --threads 4 (session 18):
    its headline and build column named no thread count."""
    from tests.litert_conv_threads import conv_case

    model = tmp_path / "conv.tflite"
    model.write_bytes(conv_case(1701))
    litert = (str(model), "--runtime", "litert", "--no-color")
    for threads, words in ((2, ", 2 threads"), (1, "")):
        flag = ("--threads", str(threads))
        assert main(["plan", *litert, *flag]) == 0
        titles = [line for line in capsys.readouterr().out.splitlines() if "heap, " in line]
        assert len(titles) == 2
        assert all((", 2 threads (" in title) is bool(words) for title in titles), titles
        assert main(["check", *litert, *flag, "--target", "all"]) == 0
        headline = capsys.readouterr().out.splitlines()[0]
        assert headline.startswith(f"LiteRT memory (XNNPACK{words}) "), headline
        code, check = _json(capsys, "check", *litert, *flag, "--budget", "1GB", "--json")
        assert code == 0 and check["declare"]["symbol"] == f"LiteRT memory (XNNPACK{words})"
        code, report = _json(capsys, "report", *litert, *flag, "--json")
        heaps = report["reports"][0]["interpreter_heap"]
        assert code == 0 and {heap["threads"] for heap in heaps} == {threads}


def test_every_linux_device_where_litert_cannot_run(
    models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """`check --runtime litert --target all` on a model LiteRT cannot run lists Linux devices,
    as for a model it runs: the devices' table and footnote, no 'after optimize' column (found
    walking a blockwise FC under int16 input, session 18: the microcontrollers' title, column and
    'on every board', since the refusal has only the arenas' verdict, not a process-memory one)."""
    path = str(models["read_first_int32"])
    assert main(["check", path, "--runtime", "litert", "--target", "all", "--no-color"]) == 1
    out = capsys.readouterr().out
    assert "CANNOT RUN on every Linux device\n" in out
    assert "Linux devices (available = RAM minus" in out and "after optimize" not in out
    assert "the interpreter's peak heap" in out and "boards (available" not in out
