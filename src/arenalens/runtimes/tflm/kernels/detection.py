"""TFLite_Detection_PostProcess (detection_postprocess.cc) → its setup allocations."""

from __future__ import annotations

from arenalens.runtimes.tflm.kernels.base import (
    Events,
    KernelContext,
    KernelRule,
    Scratch,
    inputs_then_outputs,
)
from arenalens.runtimes.tflm.kernels.common import dim, op_data


def _detection_postprocess(context: KernelContext) -> Events:
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
    return [*inputs_then_outputs(context), *(Scratch(n, label) for n, label in sizes)]


RULES = (
    KernelRule(
        "CUSTOM:TFLite_Detection_PostProcess",
        "detection_postprocess.cc",
        None,
        op_data(112),
        _detection_postprocess,
        derived=False,
    ),
)
