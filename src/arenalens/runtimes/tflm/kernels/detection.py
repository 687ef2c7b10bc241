"""TFLite_Detection_PostProcess → its setup allocations and refusals.

Source (tflite-micro tensorflow/lite/micro/kernels/): detection_postprocess.cc (`OpData`,
`DetectionPostProcessInit` reading the flexbuffer options, `DetectionPostProcessPrepare`).
Prepare takes temp views of the three inputs only (never of the four outputs) and requests
eleven scratch buffers sized by the box count, the class-prediction shape, max_detections and
num_classes.
"""

from __future__ import annotations

from arenalens.runtimes.tflm.abi import Field, struct
from arenalens.runtimes.tflm.kernels import base
from arenalens.runtimes.tflm.kernels.common import dim, op_data
from arenalens.runtimes.tflm.kernels.refusals import not_equal, unsupported_at_invoke
from arenalens.runtimes.tflm.structs import TF_LITE_QUANTIZATION_PARAMS

OP_DATA_DETECTION = struct(
    "OpData",
    ("max_detections", "int"),
    ("max_classes_per_detection", "int"),
    ("detections_per_class", "int"),
    ("non_max_suppression_score_threshold", "float"),
    ("intersection_over_union_threshold", "float"),
    ("num_classes", "int"),
    ("use_regular_non_max_suppression", "bool"),
    ("scale_values", struct("CenterSizeEncoding", Field("yxhw", "float", 4))),
    Field("scratch_indices", "int", 11),
    Field("input_quantization", TF_LITE_QUANTIZATION_PARAMS, 3),
)
_FILE = "detection_postprocess.cc"


def _prepare(context: base.KernelContext) -> base.Events:
    found: list[base.Event] = []
    inputs = len(context.operator.inputs)
    if inputs != 3:
        return [not_equal(_FILE, "NumInputs(node)", "3", inputs, 3)]
    found += base.temps(context, ("in", 0), ("in", 1), ("in", 2))
    for position, rank in ((0, 3), (1, 3), (2, 2)):
        tensor = context.input(position)
        found_rank = 0 if tensor is None else len(tensor.shape)
        if found_rank != rank:
            return [*found, not_equal(_FILE, "NumDimensions(input)", str(rank), found_rank, rank)]
    outputs = len(context.operator.outputs)
    if outputs != 4:
        return [*found, not_equal(_FILE, "NumOutputs(node)", "4", outputs, 4)]
    max_detections = context.custom_int("max_detections")
    num_classes = context.custom_int("num_classes")
    boxes = dim(context.input(0), 1)
    scores = context.input(1)
    sizes = [
        (boxes, "active candidates"),
        (boxes * 4 * 4, "decoded boxes"),
        (dim(scores, 1) * dim(scores, 2) * 4, "scores"),
        (boxes * 4, "score buffer"),
        (boxes * 4, "keep scores"),
        (max_detections * boxes * 4, "scores after regular nms"),
        (max_detections * boxes * 4, "sorted values"),
        (boxes * 4, "keep indices"),
        (max_detections * boxes * 4, "sorted indices"),
        (max(num_classes, max_detections) * boxes * 4, "nms buffer"),
        (min(boxes, max_detections) * boxes * 4, "selected"),
    ]
    found += [base.Scratch(n, label) for n, label in sizes]
    if context.input_type(0) != "FLOAT32" or context.input_type(1) != "FLOAT32":
        # DecodeCenterSizeBoxes / the score conversion return kTfLiteError without a message.
        found.append(
            unsupported_at_invoke(
                "TFLite_Detection_PostProcess Invoke accepts only float32 box encodings and "
                "class predictions (it returns an error without a message)"
            )
        )
    return found


RULES = (
    base.KernelRule(
        "CUSTOM:TFLite_Detection_PostProcess",
        "detection_postprocess.cc",
        None,
        op_data(OP_DATA_DETECTION),
        _prepare,
        access=base.NoOverlap("not analysed"),
        operands=base.operands("box_encodings", "class_predictions", "anchors", outputs=(4, 4)),
    ),
)
