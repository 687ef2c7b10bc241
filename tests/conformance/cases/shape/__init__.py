"""Cases for the shape family: reshaping, joining, splitting, slicing, gathering, padding, layout
and resizing kernels, control flow and resource variables (kernels/shape.py, slicing.py,
layout.py, control_flow.py, variables.py).

Every kernel gets each type it accepts and one it refuses (at setup, or only at Invoke), and the
options and shapes that change its memory. int8 operands are mostly quantized per channel
(`PC`, 32 scales): each temp TfLiteTensor then carries a 140-byte zero-point copy, so the Prepare
temp phase sets the minimal arena and a missing or extra temp tensor shows.

One module per group of kernels (`reshaping`, `slicing`, `layout`, `control_flow`; shared pieces in
`common`); `CASES` joins them in the order the measurements list them.
"""

from __future__ import annotations

from tests.conformance.cases.shape.control_flow import control_flow_cases, variable_cases
from tests.conformance.cases.shape.layout import (
    batch_space_cases,
    depth_space_cases,
    mirror_pad_cases,
    pad_cases,
    padv2_cases,
    resize_cases,
)
from tests.conformance.cases.shape.reshaping import (
    concatenation_cases,
    expand_dims_cases,
    pack_cases,
    reshape_cases,
    shape_cases,
    split_cases,
    split_v_cases,
    squeeze_cases,
    unpack_cases,
)
from tests.conformance.cases.shape.slicing import (
    broadcast_args_cases,
    broadcast_to_cases,
    dynamic_update_slice_cases,
    gather_cases,
    gather_nd_cases,
    reverse_cases,
    slice_cases,
    strided_slice_cases,
    transpose_cases,
)

CASES = (
    *reshape_cases(),
    *squeeze_cases(),
    *expand_dims_cases(),
    *shape_cases(),
    *pack_cases(),
    *unpack_cases(),
    *split_cases(),
    *split_v_cases(),
    *concatenation_cases(),
    *slice_cases(),
    *strided_slice_cases(),
    *gather_cases(),
    *gather_nd_cases(),
    *dynamic_update_slice_cases(),
    *transpose_cases(),
    *reverse_cases(),
    *broadcast_args_cases(),
    *broadcast_to_cases(),
    *pad_cases(),
    *padv2_cases(),
    *mirror_pad_cases(),
    *batch_space_cases(),
    *depth_space_cases(),
    *resize_cases(),
    *control_flow_cases(),
    *variable_cases(),
)
