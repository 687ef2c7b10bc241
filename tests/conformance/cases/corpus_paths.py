"""Cases for memory paths the shared corpus reaches: scratch, per-channel arrays, variables,
control flow, resource variables (the synthetic models of tests/tflm_synthetic.py)."""

from __future__ import annotations

from tests import tflm_synthetic as synthetic
from tests.conformance.cases import Case

CASES = (
    Case("ADD_N.FLOAT32.three", "ADD_N", "FLOAT32", synthetic.add_n_float),
    Case("ADD_N.INT8.three", "ADD_N", "INT8", synthetic.add_n_int8),
    Case("MIRROR_PAD.FLOAT32.reflect", "MIRROR_PAD", "FLOAT32", synthetic.mirror_pad),
    Case("MEAN.INT8.axes12", "MEAN", "INT8", synthetic.reduce("MEAN", "INT8")),
    Case("MEAN.FLOAT32.axes12", "MEAN", "FLOAT32", synthetic.reduce("MEAN", "FLOAT32")),
    Case("SUM.INT8.axes12", "SUM", "INT8", synthetic.reduce("SUM", "INT8")),
    Case("REDUCE_MAX.INT8.axes12", "REDUCE_MAX", "INT8", synthetic.reduce("REDUCE_MAX", "INT8")),
    Case("SOFTMAX.INT16.lut", "SOFTMAX", "INT16", synthetic.softmax_int16),
    Case("TRANSPOSE_CONV.INT8.stride2", "TRANSPOSE_CONV", "INT8", synthetic.transpose_conv_int8),
    Case(
        "FULLY_CONNECTED.INT8.per_channel16",
        "FULLY_CONNECTED",
        "INT8",
        synthetic.fully_connected_per_channel,
    ),
    Case(
        "DEPTHWISE_CONV_2D.INT8.per_channel16",
        "DEPTHWISE_CONV_2D",
        "INT8",
        synthetic.depthwise_per_channel,
    ),
    Case("CONV_2D.INT8.int4_filter", "CONV_2D", "INT8", synthetic.conv_int4),
    Case("IF.FLOAT32.unreachable", "IF", "FLOAT32", synthetic.if_with_unreachable_subgraph),
    Case("SVDF.INT8.variable_state", "SVDF", "INT8", synthetic.svdf_with_variable_state),
    Case(
        "CUSTOM:TFLite_Detection_PostProcess.FLOAT32.fast_nms",
        "CUSTOM:TFLite_Detection_PostProcess",
        "FLOAT32",
        synthetic.detection_postprocess,
    ),
    Case(
        "VAR_HANDLE.INT8.mixed",
        "VAR_HANDLE",
        "RESOURCE",
        synthetic.resource_variables_mixed,
    ),
    Case(
        "WHILE.FLOAT32.resource_in_body",
        "WHILE",
        "FLOAT32",
        synthetic.resource_variable_in_while_body,
    ),
)
