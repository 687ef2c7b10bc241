"""TFLM kernel scratch requests: model → the `RequestScratchBufferInArena` calls Prepare makes.

TFLM plans kernel scratch in the head like tensors (docs/runtime-semantics.md §2.5, §2.12). Which
buffers a kernel requests, and their sizes, depend on the kernel set; this table describes the
reference kernels the `tflite_micro` pip package ships. Each row names its kernel source (relative
to tflite-micro's `tensorflow/lite/micro/kernels/` unless a path says otherwise) and computes the
requests, in the order the kernel makes them, from the operator's tensors and options.

Requests come in Prepare order: subgraph 0 first, each subgraph's operators in FlatBuffer order
(*MicroInterpreterGraph::PrepareSubgraphs*), every subgraph included, reachable or not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.analysis.lifetimes import ScratchRequest
from arenalens.errors import ModelError
from arenalens.ir import Model, Operator, Subgraph, Tensor
from arenalens.tflite.custom_options import custom_options

# TFLM fails a Prepare that requests more than this (kMaxScratchBuffersPerOp, micro_allocator.cc).
MAX_SCRATCH_PER_OPERATOR = 12
# sizeof(void*) in the kernel that stores pointers in scratch (ADD_N); 8 on the 64-bit host.
HOST_POINTER_BYTES = 8


@dataclass(frozen=True, slots=True)
class OperatorView:
    """One operator with its model and subgraph, so rules can read tensors and options."""

    model: Model
    subgraph: Subgraph
    operator: Operator

    def input(self, position: int) -> Tensor | None:
        """Input tensor at position, or None when omitted (-1) or absent."""
        inputs = self.operator.inputs
        if position >= len(inputs) or inputs[position] < 0:
            return None
        return self.subgraph.tensors[inputs[position]]

    def output(self, position: int) -> Tensor | None:
        """Output tensor at position, or None when absent."""
        outputs = self.operator.outputs
        if position >= len(outputs) or outputs[position] < 0:
            return None
        return self.subgraph.tensors[outputs[position]]

    def input_type(self, position: int) -> str:
        """Type name of an input ('' when omitted)."""
        tensor = self.input(position)
        return "" if tensor is None else tensor.dtype.name

    def input_element_bytes(self, position: int, default: int) -> int:
        """Element size of an input, or default when it is omitted or unsized."""
        tensor = self.input(position)
        size = None if tensor is None else tensor.dtype.element_bytes
        return default if size is None else size

    def option(self, name: str, default: int = 0) -> int:
        """An integer builtin option, with a default when the model leaves it out."""
        value = self.operator.options.get(name, default)
        return int(value) if isinstance(value, int | bool) else default

    def checked_size(self, nbytes: int, what: str) -> int:
        """nbytes of a kernel allocation, or ModelError when the model's shapes make it
        negative (the kernel's Prepare would reject those shapes before allocating)."""
        if nbytes < 0:
            operator = self.operator
            raise ModelError(
                self.model.source,
                f"subgraph {self.subgraph.index} operator {operator.index} ({operator.opcode}): "
                f"its tensor shapes give the kernel's {what} a negative size ({nbytes:,} bytes)",
            )
        return nbytes


ScratchFunction = Callable[[OperatorView], Sequence[tuple[int, str]]]


@dataclass(frozen=True, slots=True)
class ScratchRule:
    """One kernel's scratch requests: its source file and (bytes, label) per request."""

    opcode: str
    kernel_file: str
    requests: ScratchFunction


def _dim(tensor: Tensor | None, axis: int, default: int = 1) -> int:
    if tensor is None or not -len(tensor.shape) <= axis < len(tensor.shape):
        return default
    return tensor.shape[axis]


def _elements(tensor: Tensor | None) -> int:
    return 0 if tensor is None else tensor.element_count


def _type(tensor: Tensor | None) -> str:
    return "" if tensor is None else tensor.dtype.name


def _lstm(view: OperatorView) -> list[tuple[int, str]]:
    # CreateLstmSizeInfo: batch from the input (dim 1 when time-major), state size from the
    # output-state input #18; element size from the cell-state input #19.
    source = view.input(0)
    batch = _dim(source, 1) if view.option("time_major") else _dim(source, 0)
    state_dimension = _dim(view.input(18), 1)
    size = batch * state_dimension * view.input_element_bytes(19, 2)
    return [(size, f"lstm buffer {i}") for i in range(4)]


def _svdf(view: OperatorView) -> list[tuple[int, str]]:
    batch = _dim(view.input(0), 0)
    num_filters = _dim(view.input(1), 0)
    rank = max(1, view.option("rank", 1))
    requests = [(batch * num_filters * 4, "svdf scratch")]
    if _type(view.input(0)) == "INT8":
        requests.append((batch * (num_filters // rank) * 4, "svdf output scratch"))
    return requests


def _transpose_conv(view: OperatorView) -> list[tuple[int, str]]:
    # Inputs: output_shape, weights, input, optional bias.
    input_type = _type(view.input(2))
    output_elements = _elements(view.output(0))
    if input_type == "INT8":
        return [(output_elements * 4, "transpose_conv accumulators")]
    if input_type == "INT16":
        requests = [(output_elements * 8, "transpose_conv accumulators")]
        bias = view.input(3)
        if bias is not None and bias.dtype.name == "INT16":
            requests.append((bias.element_count * 8, "transpose_conv converted bias"))
        return requests
    return []


def _mean_or_sum(view: OperatorView) -> list[tuple[int, str]]:
    requests = []
    if _type(view.input(0)) in ("INT8", "INT16"):
        requests.append((_elements(view.output(0)) * 4, "reduce accumulators"))
    requests.append((4 * len(_shape(view.input(0))), "reduce input iterator"))
    requests.append((4 * _elements(view.input(1)), "reduce resolved axes"))
    return requests


def _min_max_all(view: OperatorView) -> list[tuple[int, str]]:
    return [
        (4 * len(_shape(view.input(0))), "reduce input iterator"),
        (4 * _elements(view.input(1)), "reduce resolved axes"),
    ]


def _shape(tensor: Tensor | None) -> tuple[int, ...]:
    return () if tensor is None else tensor.shape


def _add_n(view: OperatorView) -> list[tuple[int, str]]:
    if _type(view.output(0)) not in ("FLOAT32", "INT8"):
        return []
    return [(HOST_POINTER_BYTES * len(view.operator.inputs), "add_n input pointers")]


def _mirror_pad(view: OperatorView) -> list[tuple[int, str]]:
    rank = len(_shape(view.input(0)))
    return [(4 * rank, "mirror_pad output dims"), (4 * rank, "mirror_pad input dims")]


def _detection_postprocess(view: OperatorView) -> list[tuple[int, str]]:
    options = custom_options(view.model, view.subgraph.index, view.operator.position_in_file)
    options = options if isinstance(options, dict) else {}
    max_detections = int(options.get("max_detections", 0))
    num_classes = int(options.get("num_classes", 0))
    boxes = _dim(view.input(0), 1)
    scores = view.input(1)
    return [
        (boxes, "active candidates"),
        (boxes * 4 * 4, "decoded boxes"),
        (_dim(scores, 1) * _dim(scores, 2) * 4, "scores"),
        (boxes * 4, "score buffer"),
        (boxes * 4, "keep scores"),
        (max_detections * boxes * 4, "scores after regular nms"),
        (max_detections * boxes * 4, "sorted values"),
        (boxes * 4, "keep indices"),
        (max_detections * boxes * 4, "sorted indices"),
        (max(num_classes, max_detections) * boxes * 4, "nms buffer"),
        (min(boxes, max_detections) * boxes * 4, "selected"),
    ]


def _int4_filter(filter_position: int) -> ScratchFunction:
    def requests(view: OperatorView) -> list[tuple[int, str]]:
        weights = view.input(filter_position)
        if weights is None or weights.dtype.name != "INT4":
            return []
        return [(weights.element_count, "unpacked int4 filter")]

    return requests


def _signal_rfft(view: OperatorView) -> list[tuple[int, str]]:
    options = custom_options(view.model, view.subgraph.index, view.operator.position_in_file)
    fft_length = int(options.get("fft_length", 0)) if isinstance(options, dict) else 0
    return [(fft_length * view.input_element_bytes(0, 2), "rfft work area")]


def _ethos_u(view: OperatorView) -> list[tuple[int, str]]:
    count = len(view.operator.inputs) + len(view.operator.outputs)
    return [(8 * count, "base addresses"), (8 * count, "base address sizes")]


SCRATCH_RULES: Mapping[str, ScratchRule] = MappingProxyType(
    {
        rule.opcode: rule
        for rule in (
            ScratchRule("UNIDIRECTIONAL_SEQUENCE_LSTM", "unidirectional_sequence_lstm.cc", _lstm),
            ScratchRule("SVDF", "svdf_common.cc", _svdf),
            ScratchRule("TRANSPOSE_CONV", "transpose_conv.cc", _transpose_conv),
            ScratchRule("MEAN", "reduce_common.cc", _mean_or_sum),
            ScratchRule("SUM", "reduce_common.cc", _mean_or_sum),
            ScratchRule("REDUCE_MAX", "reduce_common.cc", _min_max_all),
            ScratchRule("REDUCE_MIN", "reduce_common.cc", _min_max_all),
            ScratchRule("REDUCE_ALL", "reduce_common.cc", _min_max_all),
            ScratchRule("ADD_N", "add_n.cc", _add_n),
            ScratchRule("MIRROR_PAD", "mirror_pad.cc", _mirror_pad),
            ScratchRule(
                "CUSTOM:TFLite_Detection_PostProcess",
                "detection_postprocess.cc",
                _detection_postprocess,
            ),
            ScratchRule("CONV_2D", "conv_common.cc", _int4_filter(1)),
            ScratchRule("DEPTHWISE_CONV_2D", "depthwise_conv_common.cc", _int4_filter(1)),
            ScratchRule("FULLY_CONNECTED", "fully_connected.cc", _int4_filter(1)),
            ScratchRule("CUSTOM:SignalRfft", "signal/micro/kernels/rfft.cc", _signal_rfft),
            ScratchRule("CUSTOM:ethos-u", "ethos_u/ethosu.cc", _ethos_u),
        )
    }
)


def scratch_requests(model: Model) -> tuple[ScratchRequest, ...]:
    """Model → every kernel scratch request, in the order TFLM's Prepare makes them."""
    requests: list[ScratchRequest] = []
    for subgraph in model.subgraphs:
        for operator in subgraph.operators:
            requests.extend(operator_scratch(model, subgraph, operator))
    return tuple(requests)


def operator_scratch(
    model: Model, subgraph: Subgraph, operator: Operator
) -> tuple[ScratchRequest, ...]:
    """One operator → its scratch requests (none for kernels without a rule)."""
    rule = SCRATCH_RULES.get(operator.opcode)
    if rule is None:
        return ()
    view = OperatorView(model, subgraph, operator)
    return tuple(
        ScratchRequest(subgraph.index, operator.index, view.checked_size(nbytes, label), label)
        for nbytes, label in rule.requests(view)
    )
