"""Live differential tests: arenalens's LiteRT plan against the real `ai_edge_litert` interpreter.

`verify` loads each model in a child process (optimized builtin kernels, no delegates), reads
every tensor's address after `allocate_tensors()` and compares each arena's high-water mark and
every tensor offset with the prediction. Needs the `runtime` extra; skipped cleanly without it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import pytest

from arenalens.errors import RuntimeUnavailableError
from arenalens.examples import EXAMPLES, write_example
from arenalens.pipeline import analyze
from arenalens.runtimes.litert.prepare.driver import prepare_model
from arenalens.runtimes.litert.rules import RealTensor
from arenalens.runtimes.verification import VerifyResult
from arenalens.tflite.builder import NUMPY_DTYPES
from arenalens.tflite.reader import parse_model
from tests.conftest import SHARED_MODELS, shared_reference
from tests.litert_cases import CASES
from tests.litert_kernel_cases import KERNEL_CASES

# A cross-section of the corpus: float and int8 CNNs, hybrid FC/conv, SVDF with variables,
# integer and float LSTMs, MEAN + PAD + in-place ADD, and a dynamic TRANSPOSE_CONV output.
SHARED_SAMPLE = (
    "tflite_micro__hello_world_float.tflite",
    "mlperf_tiny__vww_96_float.tflite",
    "mlperf_tiny__kws_ref_model_float32.tflite",
    "mlperf_tiny__model_ToyCar_quant.tflite",
    "mlperf_tiny__pretrainedResnet_quant.tflite",
    "tflite_micro__keyword_scrambled.tflite",
    "tflite_micro__dtln_noise_suppression.tflite",
    "tflite_micro__trained_lstm.tflite",
    "tflite_micro__micro_speech_lstm.tflite",
    "tflite_micro__mobilenet_v2_quantized_1x3x224x224.tflite",
    "tflite_micro__transpose_conv0.tflite",
)


def verify_file(path: Path) -> VerifyResult:
    """Analyze a model under LiteRT and verify it against the real interpreter."""
    pytest.importorskip("ai_edge_litert")
    from arenalens.runtimes.litert.rules import verify

    analysis = analyze(path, runtime="litert")
    arenas = [result.arena for result in analysis.arenas]
    return verify(path, analysis.model, arenas, [result.runtime_plan for result in analysis.arenas])


def assert_agrees(result: VerifyResult) -> None:
    """Every row agrees; a failure lists the disagreeing rows."""
    wrong = [row for row in result.rows if not row.agrees]
    assert result.rows, "nothing was compared"
    assert wrong == [], "\n".join(str(row) for row in wrong[:20])


@pytest.mark.runtime
@pytest.mark.parametrize("name", SHARED_SAMPLE)
def test_shared_model_offsets_match_real_interpreter(name: str) -> None:
    path = SHARED_MODELS / name
    if not path.is_file():
        pytest.skip(f"{name} not in the corpus at {SHARED_MODELS}")
    result = verify_file(path)
    assert_agrees(result)
    measured = shared_reference()[name]["litert"]["subgraphs"][0]["arena_offsets"]
    tensor_rows = [row for row in result.rows if " tensor " in row.label]
    assert len(tensor_rows) >= len(measured)


def prepared_tensor_mismatches(path: Path, real: Sequence[Sequence[RealTensor]]) -> list[str]:
    """Type and shape of every tensor a node prepared by `allocate_tensors()` (the first chunk
    of each subgraph it allocates) wrote — outputs and temporaries, heap ones included, which
    no arena offset shows — against the real interpreter's; and the runtime tensor counts."""
    problems: list[str] = []
    for prepared in prepare_model(parse_model(path.read_bytes(), path.name)):
        if not prepared.allocated_by_allocate_tensors or prepared.index >= len(real):
            continue
        tensors = real[prepared.index]
        complete = len(prepared.chunks) == 1
        if len(tensors) > len(prepared.tensors) or (
            complete and len(tensors) != len(prepared.tensors)
        ):
            problems.append(
                f"subgraph {prepared.index}: {len(tensors)} runtime tensors, "
                f"predicted {len(prepared.tensors)}"
            )
        first, last = prepared.chunks[0]
        written = {
            tensor
            for node in prepared.nodes[first : last + 1]
            for tensor in (*node.outputs, *node.temporaries)
            if 0 <= tensor < len(tensors)
        }
        for index in sorted(written):
            predicted, measured = prepared.tensors[index], tensors[index]
            if predicted.dtype == "NOTYPE":
                expected: tuple[object, object] = (None, None)
            else:
                numpy_type = NUMPY_DTYPES.get(predicted.dtype)
                expected = (numpy_type.name if numpy_type else measured.dtype, predicted.shape)
            if (measured.dtype, measured.shape) != expected:
                problems.append(
                    f"subgraph {prepared.index} tensor {index} ({predicted.name}): real "
                    f"{measured.dtype} {measured.shape}, predicted {expected[0]} {expected[1]}"
                )
    return problems


@pytest.mark.runtime
@pytest.mark.parametrize("name", sorted(CASES | KERNEL_CASES))
def test_rule_cases_match_real_interpreter(name: str, tmp_path: Path) -> None:
    pytest.importorskip("ai_edge_litert")
    from arenalens.runtimes.litert.rules import compare_with_real, probe_model

    path = tmp_path / f"{name}.tflite"
    path.write_bytes((CASES | KERNEL_CASES)[name]())
    real = probe_model(path)  # one child process for both checks
    analysis = analyze(path, runtime="litert")
    arenas = [result.arena for result in analysis.arenas]
    plans = [result.runtime_plan for result in analysis.arenas]
    assert_agrees(compare_with_real(analysis.model, arenas, plans, real))
    assert prepared_tensor_mismatches(path, real) == []


@pytest.mark.runtime
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_builtin_examples_match_real_interpreter(name: str, tmp_path: Path) -> None:
    assert_agrees(verify_file(write_example(name, tmp_path)))


@pytest.mark.runtime
@pytest.mark.slow
def test_twenty_thousand_operator_chain_matches_real_interpreter(tmp_path: Path) -> None:
    from arenalens.tflite.builder import ModelBuilder

    builder = ModelBuilder()
    graph = builder.add_subgraph()
    previous = first = graph.add_tensor("x", [1, 64])
    for index in range(20_000):
        current = graph.add_tensor(f"t{index}", [1, 64])
        graph.add_operator("RELU", [previous], [current])
        previous = current
    graph.set_inputs([first])
    graph.set_outputs([previous])
    path = tmp_path / "chain.tflite"
    path.write_bytes(builder.build())
    result = verify_file(path)
    assert_agrees(result)
    assert result.rows[0].real == 768


def test_missing_runtime_raises_with_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    from arenalens.runtimes.litert import rules as litert

    real_find_spec = importlib.util.find_spec

    def without_litert(name: str, *args: object) -> object:
        return None if name == "ai_edge_litert" else real_find_spec(name)

    monkeypatch.setattr(litert.importlib.util, "find_spec", without_litert)
    with pytest.raises(RuntimeUnavailableError, match=r"pip install 'arenalens\[runtime\]'"):
        litert.probe_model("model.tflite")
