"""Small models for LiteRT's recurrent kernels — RNN, UNIDIRECTIONAL_SEQUENCE_RNN,
BIDIRECTIONAL_SEQUENCE_RNN / LSTM, integer LSTM — one case per memory path (float, hybrid int8 /
uint8 weights, CIFG, auxiliary inputs, projection, 8x8→8 or 8x8→16), built with
arenalens.tflite.builder and checked against the real interpreter."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arenalens.tflite.builder import ModelBuilder, SubgraphBuilder, quantization
from tests import litert_cases
from tests.litert_cases import _floats, _int8, _single

# ---------------------------------------------------------------------------------------------
# RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN: float, or hybrid (float
# activations, int8 / uint8 weights).


def _rnn_weights(g: SubgraphBuilder, name: str, rows: int, columns: int, weights: str) -> int:
    if weights == "FLOAT32":
        return g.add_constant(name, _floats(rows, columns))
    if weights == "UINT8":
        data = np.random.default_rng(2).integers(0, 256, size=(rows, columns)).astype(np.uint8)
        return g.add_constant(name, data, "UINT8", quantization=quantization(0.02, 128))
    return g.add_constant(name, _int8(rows, columns), "INT8", quantization=quantization(0.02, 0))


def _rnn_cell(
    g: SubgraphBuilder, prefix: str, *, n_input: int, units: int, batch: int, weights: str
) -> list[int]:
    """weights, recurrent weights, bias, hidden state (a variable) of one direction."""
    return [
        _rnn_weights(g, f"{prefix}w", units, n_input, weights),
        _rnn_weights(g, f"{prefix}r", units, units, weights),
        g.add_constant(f"{prefix}b", _floats(units)),
        g.add_tensor(f"{prefix}hidden", [batch, units], is_variable=True),
    ]


def _rnn(weights: str) -> bytes:
    """RNN (batch 2, input 5, 6 units), its output feeding a RELU."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [2, 5])
        y = g.add_tensor("y", [2, 6])
        g.add_operator(
            "RNN",
            [x, *_rnn_cell(g, "", n_input=5, units=6, batch=2, weights=weights)],
            [y],
            options={"fused_activation_function": "TANH"},
        )
        z = g.add_tensor("z", [2, 6])
        g.add_operator("RELU", [y], [z])
        return [x], [z]

    return _single(build)


def _sequence_rnn(weights: str, *, time_major: bool) -> bytes:
    """UNIDIRECTIONAL_SEQUENCE_RNN over 3 steps (batch 2, input 5, 6 units)."""
    batch, steps = 2, 3
    sequence = [steps, batch] if time_major else [batch, steps]

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [*sequence, 5])
        y = g.add_tensor("y", [*sequence, 6])
        g.add_operator(
            "UNIDIRECTIONAL_SEQUENCE_RNN",
            [x, *_rnn_cell(g, "", n_input=5, units=6, batch=batch, weights=weights)],
            [y],
            options={"fused_activation_function": "TANH", "time_major": time_major},
        )
        z = g.add_tensor("z", [*sequence, 6])
        g.add_operator("RELU", [y], [z])
        return [x], [z]

    return _single(build)


def _bidirectional_rnn(weights: str, *, merge_outputs: bool, aux: bool) -> bytes:
    """BIDIRECTIONAL_SEQUENCE_RNN, batch-major, 3 steps, batch 2, input 5, 6 forward and 4
    backward units; `aux` adds an auxiliary input with its own weights."""
    batch, steps, n_input = 2, 3, 5

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [batch, steps, n_input])
        inputs = [x, *_rnn_cell(g, "fw_", n_input=n_input, units=6, batch=batch, weights=weights)]
        inputs += _rnn_cell(g, "bw_", n_input=n_input, units=4, batch=batch, weights=weights)
        graph_inputs = [x]
        if aux:
            aux_input = g.add_tensor("aux", [batch, steps, 3])
            graph_inputs.append(aux_input)
            inputs += [
                aux_input,
                _rnn_weights(g, "fw_aux_w", 6, 3, weights),
                _rnn_weights(g, "bw_aux_w", 4, 3, weights),
            ]
        else:
            inputs += [-1, -1, -1]
        if merge_outputs:
            outputs = [g.add_tensor("y", [batch, steps, 10])]
        else:
            outputs = [
                g.add_tensor("fw_y", [batch, steps, 6]),
                g.add_tensor("bw_y", [batch, steps, 4]),
            ]
        g.add_operator(
            "BIDIRECTIONAL_SEQUENCE_RNN",
            inputs,
            outputs,
            options={
                "fused_activation_function": "TANH",
                "time_major": False,
                "merge_outputs": merge_outputs,
            },
        )
        results = []
        for output in outputs:
            results.append(g.add_tensor(f"relu{output}", g.shape(output)))
            g.add_operator("RELU", [output], [results[-1]])
        return graph_inputs, results

    return _single(build)


# ---------------------------------------------------------------------------------------------
# BIDIRECTIONAL_SEQUENCE_LSTM: 48 inputs, batch-major [2, 3, 5] input, 6 cells per direction
# (Prepare checks both directions against each direction's sizes: they must be equal).


def _bilstm_direction(
    g: SubgraphBuilder,
    prefix: str,
    *,
    n_input: int,
    cell: int,
    output: int,
    weights: str,
    cifg: bool,
    projection: bool,
) -> list[int]:
    """The 17 inputs of one direction: input and recurrent weights per gate, no peepholes,
    gate biases, optional projection."""

    def gate(rows: int, columns: int, skip: bool) -> int:
        return -1 if skip else _rnn_weights(g, f"{prefix}w", rows, columns, weights)

    tensors = [gate(cell, n_input, cifg and i == 0) for i in range(4)]
    tensors += [gate(cell, output, cifg and i == 0) for i in range(4)]
    tensors += [-1, -1, -1]
    tensors += [
        -1 if cifg and i == 0 else g.add_constant(f"{prefix}b", _floats(cell)) for i in range(4)
    ]
    if projection:
        tensors += [gate(output, cell, False), g.add_constant(f"{prefix}pb", _floats(output))]
    else:
        tensors += [-1, -1]
    return tensors


def _bidirectional_lstm(
    weights: str,
    *,
    cifg: bool = False,
    aux: bool = False,
    projection: bool = False,
    merge: bool = False,
) -> bytes:
    """Forward and backward LSTM over 3 steps; `aux` adds an auxiliary input [2, 3, 3] with
    its own weights per direction, `projection` projects both directions to 3 units."""
    batch, steps, n_input = 2, 3, 5
    cells = (6, 6)
    outputs = (3, 3) if projection else (6, 6)

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [batch, steps, n_input])
        inputs = [x]
        for prefix, cell, output in (("fw_", cells[0], outputs[0]), ("bw_", cells[1], outputs[1])):
            inputs += _bilstm_direction(
                g,
                prefix,
                n_input=n_input,
                cell=cell,
                output=output,
                weights=weights,
                cifg=cifg,
                projection=projection,
            )
        for prefix, cell, output in (("fw_", cells[0], outputs[0]), ("bw_", cells[1], outputs[1])):
            inputs.append(g.add_tensor(f"{prefix}activation", [batch, output], is_variable=True))
            inputs.append(g.add_tensor(f"{prefix}cell", [batch, cell], is_variable=True))
        # The states are inputs 35..38 in the order fw activation, fw cell, bw activation, bw cell.
        graph_inputs = [x]
        if aux:
            aux_input = g.add_tensor("aux", [batch, steps, 3])
            graph_inputs.append(aux_input)
            inputs.append(aux_input)
            for prefix, cell in (("fw_aux_", cells[0]), ("bw_aux_", cells[1])):
                inputs += [
                    -1 if cifg and i == 0 else _rnn_weights(g, f"{prefix}w", cell, 3, weights)
                    for i in range(4)
                ]
        else:
            inputs += [-1] * 9
        if merge:
            results = [g.add_tensor("y", [batch, steps, outputs[0] + outputs[1]])]
        else:
            results = [
                g.add_tensor("fw_y", [batch, steps, outputs[0]]),
                g.add_tensor("bw_y", [batch, steps, outputs[1]]),
            ]
        g.add_operator(
            "BIDIRECTIONAL_SEQUENCE_LSTM",
            inputs,
            results,
            options={
                "fused_activation_function": "TANH",
                "time_major": False,
                "merge_outputs": merge,
            },
        )
        relus = []
        for result in results:
            relus.append(g.add_tensor(f"relu{result}", g.shape(result)))
            g.add_operator("RELU", [result], [relus[-1]])
        return graph_inputs, relus

    return _single(build)


def integer_lstm(*, eight_bit_matmul: bool, cifg: bool) -> bytes:
    """Full-kernel integer LSTM (int8 input, int16 cell state, layer norm): the number of op
    intermediates picks the kernel, 5 → 8x8→16 (six scratches: int16 ×4, int8, int32), 12 →
    8x8→8 (eight: int8 ×2, int16 ×6), all [batch, cell]."""
    batch, n_input, cell = 2, 5, 6
    activation = quantization(0.05, 0)

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [batch, n_input], "INT8", quantization=activation)

        def gate_weights(rows: int, columns: int, skip: bool) -> int:
            if skip:
                return -1
            return g.add_constant(
                "w", _int8(rows, columns), "INT8", quantization=quantization(0.02, 0)
            )

        def per_gate(make: Callable[[], int]) -> list[int]:
            return [-1 if cifg and gate == 0 else make() for gate in range(4)]

        tensors = [x]
        tensors += [gate_weights(cell, n_input, cifg and gate == 0) for gate in range(4)]
        tensors += [gate_weights(cell, cell, cifg and gate == 0) for gate in range(4)]
        tensors += [-1, -1, -1]  # peepholes
        tensors += per_gate(
            lambda: g.add_constant(
                "bias", np.zeros(cell, np.int32), "INT32", quantization=quantization(0.001, 0)
            )
        )
        tensors += [-1, -1]  # projection
        tensors.append(
            g.add_tensor(
                "output_state", [batch, cell], "INT8", quantization=activation, is_variable=True
            )
        )
        tensors.append(
            g.add_tensor(
                "cell_state",
                [batch, cell],
                "INT16",
                quantization=quantization(2**-11, 0),
                is_variable=True,
            )
        )
        tensors += per_gate(
            lambda: g.add_constant(
                "layer_norm",
                np.full(cell, 1000, np.int16),
                "INT16",
                quantization=quantization(0.001, 0),
            )
        )
        count, dtype = (12, "INT8") if eight_bit_matmul else (5, "INT16")
        intermediates = [
            g.add_tensor(f"intermediate{i}", [], dtype, quantization=quantization(0.004, 0))
            for i in range(count)
        ]
        y = g.add_tensor("y", [batch, cell], "INT8", quantization=activation)
        g.add_operator(
            "LSTM",
            tensors,
            [y],
            intermediates=intermediates,
            options={"fused_activation_function": "TANH"},
        )
        z = g.add_tensor("z", [batch, cell], "INT8", quantization=activation)
        g.add_operator("ABS", [y], [z])
        return [x], [z]

    return _single(build)


def sequence_lstm_integer(*, cifg: bool, projection: bool, cell: int = 20) -> bytes:
    """Integer UNIDIRECTIONAL_SEQUENCE_LSTM (int8 input, int16 cell state, layer norm, five
    quantized intermediates: the 8x8→16 kernel), whose Prepare precomputes one int32 vector
    per gate weight (and projection) of zero point × weights + bias."""
    batch, steps, n_input = 1, 4, 12
    output_size = 8 if projection else cell
    activation = quantization(0.05, 0)

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        x = g.add_tensor("x", [batch, steps, n_input], "INT8", quantization=activation)

        def weights(rows: int, columns: int) -> int:
            return g.add_constant(
                "w", _int8(rows, columns), "INT8", quantization=quantization(0.02, 0)
            )

        def per_gate(make: Callable[[], int]) -> list[int]:
            return [-1 if cifg and gate == 0 else make() for gate in range(4)]

        tensors = [x]
        tensors += per_gate(lambda: weights(cell, n_input))
        tensors += per_gate(lambda: weights(cell, output_size))
        tensors += [-1, -1, -1]  # peepholes
        tensors += per_gate(
            lambda: g.add_constant(
                "bias", np.zeros(cell, np.int32), "INT32", quantization=quantization(0.001, 0)
            )
        )
        if projection:
            tensors += [weights(output_size, cell), -1]
        else:
            tensors += [-1, -1]
        tensors.append(
            g.add_tensor(
                "output_state", [batch, output_size], "INT8", quantization=activation,
                is_variable=True,
            )
        )  # fmt: skip
        tensors.append(
            g.add_tensor(
                "cell_state", [batch, cell], "INT16", quantization=quantization(2**-11, 0),
                is_variable=True,
            )
        )  # fmt: skip
        tensors += per_gate(
            lambda: g.add_constant(
                "layer_norm", np.full(cell, 1000, np.int16), "INT16",
                quantization=quantization(0.001, 0),
            )
        )  # fmt: skip
        intermediates = [
            g.add_tensor(f"intermediate{i}", [], "INT16", quantization=quantization(0.004, 0))
            for i in range(5)
        ]
        y = g.add_tensor("y", [batch, steps, output_size], "INT8", quantization=activation)
        g.add_operator(
            "UNIDIRECTIONAL_SEQUENCE_LSTM",
            tensors,
            [y],
            intermediates=intermediates,
            options={"fused_activation_function": "TANH", "time_major": False},
        )
        return [x], [y]

    return _single(build)


RECURRENT_CASES: dict[str, Callable[[], bytes]] = {
    "rnn_float": lambda: _rnn("FLOAT32"),
    "rnn_hybrid": lambda: _rnn("INT8"),
    "rnn_hybrid_uint8": lambda: _rnn("UINT8"),
    "sequence_rnn_float": lambda: _sequence_rnn("FLOAT32", time_major=False),
    "sequence_rnn_hybrid": lambda: _sequence_rnn("INT8", time_major=False),
    "sequence_rnn_hybrid_time_major": lambda: _sequence_rnn("INT8", time_major=True),
    "bidirectional_rnn_float": lambda: _bidirectional_rnn(
        "FLOAT32", merge_outputs=False, aux=False
    ),
    "bidirectional_rnn_hybrid": lambda: _bidirectional_rnn("INT8", merge_outputs=False, aux=False),
    "bidirectional_rnn_hybrid_merged_aux": lambda: _bidirectional_rnn(
        "INT8", merge_outputs=True, aux=True
    ),
    "bidirectional_lstm_float": lambda: _bidirectional_lstm("FLOAT32"),
    "bidirectional_lstm_float_cifg": lambda: _bidirectional_lstm("FLOAT32", cifg=True),
    "bidirectional_lstm_hybrid": lambda: _bidirectional_lstm("INT8"),
    "bidirectional_lstm_hybrid_aux_projection": lambda: _bidirectional_lstm(
        "INT8", aux=True, projection=True, merge=True
    ),
    "bidirectional_lstm_hybrid_cifg_aux": lambda: _bidirectional_lstm("UINT8", cifg=True, aux=True),
    "lstm_integer_8x8_16": lambda: integer_lstm(eight_bit_matmul=False, cifg=False),
    "lstm_integer_8x8_16_cifg": lambda: integer_lstm(eight_bit_matmul=False, cifg=True),
    "lstm_integer_8x8_8": lambda: integer_lstm(eight_bit_matmul=True, cifg=False),
    "lstm_integer_8x8_8_cifg": lambda: integer_lstm(eight_bit_matmul=True, cifg=True),
}


# ---------------------------------------------------------------------------------------------
# SVDF, integer: several layers, so that tensors_ grows while allocate_tensors() runs.


def svdf_integer_stack(layers: int = 9, activation: str = "RELU") -> bytes:
    """Integer SVDF (int8 input and feature weights, int16 time weights and state, int32 bias:
    two temporaries of the six its Init adds) alternating with int8 FULLY_CONNECTED (six tensors
    added in Prepare each): enough tensors that tensors_ grows during allocate_tensors(), once
    the Init additions are counted at creation."""

    def build(_: ModelBuilder, g: SubgraphBuilder) -> tuple[list[int], list[int]]:
        batch, width, filters, memory, rank = 1, 12, 8, 5, 2
        scale = quantization([0.05], [0])
        first = x = g.add_tensor("x", [batch, width], "INT8", quantization=scale)
        for layer in range(layers):
            feature = g.add_constant(
                f"feature_{layer}", _int8(filters, width), "INT8",
                quantization=quantization([0.01], [0]),
            )  # fmt: skip
            generator = litert_cases.RANDOM  # the cases' generator, reseeded per case
            time_weights = generator.integers(-3000, 3000, size=(filters, memory)).astype(np.int16)
            time = g.add_constant(
                f"time_{layer}", time_weights, "INT16", quantization=quantization([0.0001], [0])
            )
            bias = g.add_constant(
                f"bias_{layer}",
                litert_cases.RANDOM.integers(-100, 100, size=(filters // rank,)).astype(np.int32),
                "INT32",
                quantization=quantization([0.0005], [0]),
            )
            state = g.add_tensor(
                f"state_{layer}", [batch, memory * filters], "INT16",
                quantization=quantization([0.002], [0]), is_variable=True,
            )  # fmt: skip
            y = g.add_tensor(f"svdf_{layer}", [batch, filters // rank], "INT8", quantization=scale)
            # The integer kernel runs only with a fused RELU (svdf.cc Eval refuses any other).
            g.add_operator(
                "SVDF",
                [x, feature, time, bias, state],
                [y],
                options={"rank": rank, "fused_activation_function": activation},
            )
            weights = g.add_constant(
                f"fc_{layer}", _int8(width, filters // rank), "INT8",
                quantization=quantization([0.02], [0]),
            )  # fmt: skip
            x = g.add_tensor(f"fc_out_{layer}", [batch, width], "INT8", quantization=scale)
            g.add_operator("FULLY_CONNECTED", [y, weights, -1], [x])
        return [first], [x]

    return _single(build)
