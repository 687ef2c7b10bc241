"""Cases for the neural-network kernels: convolutions, fully connected, batch matmul, recurrent
layers, pooling, softmax, normalisation, embedding lookup, PRELU, CUMSUM, the custom detection,
circular-buffer, Ethos-U and DECODE operators.

Each case is one operator exercising one memory path of its kernel: the types the kernel accepts
(and one it refuses), per-tensor vs per-channel quantization (per-channel arrays in the tail), the
options that add buffers (transposed copies, lookup tables, scratch), and the shapes that size
them. `scan_bytes` marks the kernels whose Prepare writes tail buffers over their own live temp
tensors, where fitting is not monotone in the arena size (tests/conformance/measure.py).

One module per group of kernels (`fully_connected`, `conv`, `recurrent`, `pooling`, `custom`;
shared pieces in `common`); `CASES` joins them in the order the measurements list them.
"""

from __future__ import annotations

from tests.conformance.cases.nn.conv import conv_cases
from tests.conformance.cases.nn.custom import custom_cases, decode_cases
from tests.conformance.cases.nn.fully_connected import fc_cases
from tests.conformance.cases.nn.pooling import misc_cases, pool_softmax_cases
from tests.conformance.cases.nn.recurrent import bmm_cases, recurrent_cases

CASES = tuple(
    fc_cases()
    + conv_cases()
    + bmm_cases()
    + recurrent_cases()
    + pool_softmax_cases()
    + misc_cases()
    + custom_cases()
    + decode_cases()
)
