"""LiteRT kernel rules: builtin name → its source file, temporaries, shape and folding inputs."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from arenalens.runtimes.litert.prepare.conv import (
    conv_2d,
    conv_3d,
    conv_3d_transpose,
    depthwise_conv_2d,
    transpose_conv,
)
from arenalens.runtimes.litert.prepare.matmul import batch_matmul, fully_connected
from arenalens.runtimes.litert.prepare.other import (
    add_n,
    broadcast_args,
    delegate_variables,
    densify,
    dequantize,
    detection_postprocess,
    dilate,
    numeric_verify,
    read_variable,
    reshape,
    rfft2d,
    var_handle,
)
from arenalens.runtimes.litert.prepare.recurrent import (
    bidirectional_sequence_lstm,
    bidirectional_sequence_rnn,
    lstm,
    rnn,
    svdf,
    unidirectional_sequence_lstm,
    unidirectional_sequence_rnn,
)
from arenalens.runtimes.litert.prepare.reduce import (
    reduce_mean_or_sum,
    reduce_prod,
    reduce_simple,
    stablehlo_reduce_window,
)
from arenalens.runtimes.litert.prepare.state import KernelRule

_REDUCE_SOURCE = "tflite/kernels/reduce.cc"
_REDUCE_TEMPS = "index [rank], resolved axes [axes], accumulator, normalized dims (4 tensors)"

# One row per builtin whose optimized kernel changes memory planning. Builtins not listed keep
# their flatbuffer shapes and types, add no temporaries and never make outputs Dynamic.
KERNEL_RULES: Mapping[str, KernelRule] = MappingProxyType(
    {
        "CONV_2D": KernelRule(
            "tflite/kernels/conv.cc",
            "im2col [N,oh,ow,kh·kw·Cin] unless 1×1/stride 1/undilated; hybrid: quantized input, "
            "scaling factors, int32 accumulator [Cout, N·oh·ow], per-channel: input offsets, "
            "row sums (persistent)",
            prepare=conv_2d,
            verified=True,
        ),
        "DEPTHWISE_CONV_2D": KernelRule(
            "tflite/kernels/depthwise_conv.cc",
            "hybrid only: quantized input, scaling factors [N], input offsets [N]",
            prepare=depthwise_conv_2d,
            verified=True,
        ),
        "FULLY_CONNECTED": KernelRule(
            "tflite/kernels/fully_connected.cc",
            "6 tensors added in Prepare (typeless unless hybrid); hybrid: quantized input, "
            "scaling factors [B], accumulator [units, B], input offsets [B], row sums (persistent)",
            prepare=fully_connected,
            verified=True,
        ),
        "MEAN": KernelRule(
            _REDUCE_SOURCE, _REDUCE_TEMPS, prepare=reduce_mean_or_sum, verified=True
        ),
        "SUM": KernelRule(_REDUCE_SOURCE, _REDUCE_TEMPS, prepare=reduce_mean_or_sum, verified=True),
        "REDUCE_MAX": KernelRule(
            _REDUCE_SOURCE, _REDUCE_TEMPS, prepare=reduce_simple, verified=True
        ),
        "REDUCE_MIN": KernelRule(_REDUCE_SOURCE, _REDUCE_TEMPS, prepare=reduce_simple),
        "REDUCE_ANY": KernelRule(_REDUCE_SOURCE, _REDUCE_TEMPS, prepare=reduce_simple),
        "REDUCE_ALL": KernelRule(_REDUCE_SOURCE, _REDUCE_TEMPS, prepare=reduce_simple),
        "REDUCE_PROD": KernelRule(_REDUCE_SOURCE, _REDUCE_TEMPS, prepare=reduce_prod),
        "STABLEHLO_REDUCE_WINDOW": KernelRule(
            "tflite/kernels/stablehlo_reduce_window.cc",
            "dilated and padded input (2 added in Init), input type",
            init_tensors=2,
            prepare=stablehlo_reduce_window,
            verified=True,
        ),
        "UNIDIRECTIONAL_SEQUENCE_LSTM": KernelRule(
            "tflite/kernels/unidirectional_sequence_lstm.cc",
            "float: scratch [B, 4|5·cell + 16]; integer: 6 × [B, cell]; hybrid: 12",
            init_tensors=12,
            prepare=unidirectional_sequence_lstm,
            verified=True,
        ),
        "LSTM": KernelRule(
            "tflite/kernels/lstm.cc",
            "float: scratch [B, 4|5·cell]; integer: 6 or 8 × [B, cell]; hybrid: 12 (+9 ledgers)",
            init_tensors=12 + 9,
            prepare=lstm,
            verified=True,
        ),
        "SVDF": KernelRule(
            "tflite/kernels/svdf.cc",
            "scratch [B, filters]; full-integer: + output_temp [units, B]; hybrid: + 5",
            init_tensors=6,
            prepare=svdf,
            verified=True,
        ),
        "TRANSPOSE_CONV": KernelRule(
            "tflite/kernels/transpose_conv.cc",
            "col2im (Dynamic), transposed weights (Dynamic), quantized: scratch [output] "
            "int32/int64; hybrid: + 3",
            prepare=transpose_conv,
            verified=True,
        ),
        "BATCH_MATMUL": KernelRule(
            "tflite/kernels/batch_matmul.cc",
            "transposed LHS, transposed RHS (persistent if constant); hybrid: + 5",
            prepare=batch_matmul,
            verified=True,
        ),
        "CONV_3D": KernelRule(
            "tflite/kernels/conv3d.cc",
            "im2col [N,od,oh,ow,kd·kh·kw·Cin] unless 1×1×1/stride 1/undilated",
            prepare=conv_3d,
            verified=True,
        ),
        "CONV_3D_TRANSPOSE": KernelRule(
            "tflite/kernels/conv3d_transpose.cc",
            "col2im [D·H·W, kd·kh·kw·Cout] float32 (Dynamic) unless dilated; non-constant "
            "output shape → Dynamic output",
            prepare=conv_3d_transpose,
            verified=True,
        ),
        "ADD_N": KernelRule(
            "tflite/kernels/add_n.cc",
            "scratch [elements]",
            init_tensors=1,
            prepare=add_n,
            verified=True,
        ),
        "DEQUANTIZE": KernelRule(
            "tflite/kernels/dequantize.cc",
            "constant input → output in the persistent arena",
            prepare=dequantize,
            verified=True,
        ),
        "DENSIFY": KernelRule(
            "tflite/kernels/densify.cc", "output in the persistent arena", prepare=densify
        ),
        "RFFT2D": KernelRule(
            "tflite/kernels/rfft2d.cc",
            "int32 [2+√L], int64 [L/2+W/4], int64 [H], int64 [H, W+2] (L = max(H, W/2)); "
            "Dynamic with a non-constant fft_length",
            prepare=rfft2d,
            verified=True,
        ),
        "RESHAPE": KernelRule(
            "tflite/kernels/reshape.cc",
            "constant input → PersistentRo; unknown shape ends the chunk",
            prepare=reshape,
            verified=True,
        ),
        "RNN": KernelRule(
            "tflite/kernels/basic_rnn.cc",
            "hybrid: quantized input and hidden state, scaling factors [B], accumulator "
            "[units, B], zero points [B], row sums [2, units] (persistent); 6 added in Init",
            init_tensors=6,
            prepare=rnn,
            verified=True,
        ),
        "UNIDIRECTIONAL_SEQUENCE_RNN": KernelRule(
            "tflite/kernels/unidirectional_sequence_rnn.cc",
            "hybrid: as RNN (6 added in Init)",
            init_tensors=6,
            prepare=unidirectional_sequence_rnn,
            verified=True,
        ),
        "BIDIRECTIONAL_SEQUENCE_RNN": KernelRule(
            "tflite/kernels/bidirectional_sequence_rnn.cc",
            "hybrid: 8 of 9 added in Init (9 with auxiliary weights), forward and backward "
            "row sums persistent",
            init_tensors=9,
            prepare=bidirectional_sequence_rnn,
            verified=True,
        ),
        "BIDIRECTIONAL_SEQUENCE_LSTM": KernelRule(
            "tflite/kernels/bidirectional_sequence_lstm.cc",
            "float: forward scratch [B, 4|5·cell + 16], backward [B, 4|5·cell]; hybrid: 18 of "
            "19 added in Init (19 with auxiliary weights), row sums persistent",
            init_tensors=19,
            prepare=bidirectional_sequence_lstm,
            verified=True,
        ),
        "CUSTOM:TFLite_Detection_PostProcess": KernelRule(
            "tflite/kernels/detection_postprocess.cc",
            "decoded boxes [boxes, 4], scores [boxes, classes + 1] (added in Init); outputs "
            "resized to max_detections × max_classes_per_detection",
            init_tensors=2,
            prepare=detection_postprocess,
            verified=True,
        ),
        "DILATE": KernelRule(
            "tflite/kernels/dilate.cc",
            "dilations not a model constant → Dynamic output",
            prepare=dilate,
            verified=True,
        ),
        # The XNNPACK delegate's kernel node in the plan once it took its subsets
        # (runtimes/litert/heap_xnnpack.delegated_view; heap_kernels.DELEGATE_OPCODE).
        "CUSTOM:TfLiteXNNPackDelegate": KernelRule(
            "tflite/delegates/xnnpack/xnnpack_delegate.cc",
            "resource inputs and outputs: 4-byte ids in the persistent arena",
            prepare=delegate_variables,
        ),
        "VAR_HANDLE": KernelRule(
            "tflite/kernels/var_handle.cc",
            "output: 4-byte resource id in the persistent arena",
            prepare=var_handle,
            verified=True,
        ),
        "READ_VARIABLE": KernelRule(
            "tflite/kernels/read_variable.cc",
            "rank-0 output → Dynamic",
            prepare=read_variable,
            verified=True,
        ),
        "CUSTOM:NumericVerify": KernelRule(
            "tflite/kernels/numeric_verify.cc",
            "dequantized input (Dynamic); float32 output in the persistent arena",
            prepare=numeric_verify,
            verified=True,
        ),
        # Outputs that become Dynamic when a shape-defining input is not constant.
        "ARG_MAX": KernelRule("tflite/kernels/arg_min_max.cc", shape_inputs=(1,)),
        "ARG_MIN": KernelRule("tflite/kernels/arg_min_max.cc", shape_inputs=(1,)),
        "BATCH_TO_SPACE_ND": KernelRule("tflite/kernels/batch_to_space_nd.cc", shape_inputs=(1, 2)),
        "SPACE_TO_BATCH_ND": KernelRule("tflite/kernels/space_to_batch_nd.cc", shape_inputs=(1, 2)),
        "BROADCAST_TO": KernelRule(
            "tflite/kernels/broadcast_to.cc", shape_inputs=(1,), verified=True
        ),
        "EXPAND_DIMS": KernelRule(
            "tflite/kernels/expand_dims.cc", shape_inputs=(1,), verified=True
        ),
        "FILL": KernelRule("tflite/kernels/fill.cc", shape_inputs=(0,)),
        "MIRROR_PAD": KernelRule("tflite/kernels/mirror_pad.cc", shape_inputs=(1,)),
        "ONE_HOT": KernelRule("tflite/kernels/one_hot.cc", shape_inputs=(1,)),
        "PAD": KernelRule("tflite/kernels/pad.cc", shape_inputs=(1,), verified=True),
        "PADV2": KernelRule("tflite/kernels/pad.cc", shape_inputs=(1,)),
        "RESIZE_BILINEAR": KernelRule(
            "tflite/kernels/resize_bilinear.cc", shape_inputs=(1,), verified=True
        ),
        "RESIZE_NEAREST_NEIGHBOR": KernelRule(
            "tflite/kernels/resize_nearest_neighbor.cc", shape_inputs=(1,)
        ),
        "SCATTER_ND": KernelRule("tflite/kernels/scatter_nd.cc", shape_inputs=(2,)),
        "SEGMENT_SUM": KernelRule("tflite/kernels/segment_sum.cc", shape_inputs=(0, 1)),
        "SLICE": KernelRule("tflite/kernels/slice.cc", shape_inputs=(1, 2), verified=True),
        "SPARSE_TO_DENSE": KernelRule("tflite/kernels/sparse_to_dense.cc", shape_inputs=(1,)),
        "SPLIT": KernelRule("tflite/kernels/split.cc", shape_inputs=(0,), verified=True),
        "SPLIT_V": KernelRule("tflite/kernels/split_v.cc", shape_inputs=(1, 2), verified=True),
        "TOPK_V2": KernelRule("tflite/kernels/topk_v2.cc", shape_inputs=(1,)),
        "TRANSPOSE": KernelRule("tflite/kernels/transpose.cc", shape_inputs=(1,), verified=True),
        "UNSORTED_SEGMENT_SUM": KernelRule(
            "tflite/kernels/unsorted_segment.cc", shape_inputs=(1, 2)
        ),
        "UNSORTED_SEGMENT_MAX": KernelRule(
            "tflite/kernels/unsorted_segment.cc", shape_inputs=(1, 2)
        ),
        "UNSORTED_SEGMENT_MIN": KernelRule(
            "tflite/kernels/unsorted_segment.cc", shape_inputs=(1, 2)
        ),
        "UNSORTED_SEGMENT_PROD": KernelRule(
            "tflite/kernels/unsorted_segment.cc", shape_inputs=(1, 2)
        ),
        "WHERE": KernelRule("tflite/kernels/where.cc", shape_inputs=(0,)),
        "RANDOM_STANDARD_NORMAL": KernelRule("tflite/kernels/random_ops.cc", shape_inputs=(0,)),
        "RANDOM_UNIFORM": KernelRule(
            "tflite/kernels/random_ops.cc", shape_inputs=(0,), verified=True
        ),
        "MULTINOMIAL": KernelRule(
            "tflite/kernels/random_ops.cc", shape_inputs=(0, 1), verified=True
        ),
        "NON_MAX_SUPPRESSION_V4": KernelRule(
            "tflite/kernels/non_max_suppression.cc", shape_inputs=(2,)
        ),
        "NON_MAX_SUPPRESSION_V5": KernelRule(
            "tflite/kernels/non_max_suppression.cc", shape_inputs=(2,)
        ),
        "UNIQUE": KernelRule("tflite/kernels/unique.cc", always_dynamic=True),
        # Constant folding in Prepare: output 0 becomes PersistentRo (heap).
        "SHAPE": KernelRule("tflite/kernels/shape.cc", always_folds=True, verified=True),
        "RANK": KernelRule("tflite/kernels/rank.cc", always_folds=True),
        "BROADCAST_ARGS": KernelRule(
            "tflite/kernels/broadcast_args.cc",
            "output [max(len)]: PersistentRo when both shapes are constant or folded",
            prepare=broadcast_args,
            verified=True,
        ),
        "GATHER": KernelRule("tflite/kernels/gather.cc", folding_inputs=(0, 1), verified=True),
        "MUL": KernelRule("tflite/kernels/mul.cc", folding_inputs=(0, 1), verified=True),
        "RANGE": KernelRule(
            "tflite/kernels/range.cc",
            shape_inputs=(0, 1, 2),
            folding_inputs=(0, 1, 2),
            verified=True,
        ),
        "STRIDED_SLICE": KernelRule(
            "tflite/kernels/strided_slice.cc",
            shape_inputs=(1, 2, 3),
            folding_inputs=(0, 1, 2),
            verified=True,
        ),
        "TILE": KernelRule(
            "tflite/kernels/tile.cc", shape_inputs=(1,), folding_inputs=(0, 1), verified=True
        ),
        "CONCATENATION": KernelRule(
            "tflite/kernels/concatenation.cc",
            folding_inputs=(-1,),
            verified=True,
        ),  # -1: every input
    }
)
