"""Shape cases: PAD, PADV2, MIRROR_PAD, BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, DEPTH_TO_SPACE,
SPACE_TO_DEPTH, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tests.conformance.cases import Case
from tests.conformance.cases.shape.common import (
    Q,
    data_input,
    data_output,
    data_quantization,
    i32,
    one_operator,
    shape_case,
)
from tests.conformance.models import INT8_Q, Const, In, Out, per_channel

# -- PAD, PADV2, MIRROR_PAD ----------------------------------------------------------------------


def _pad(
    opcode: str,
    dtype: str,
    source: tuple[int, ...],
    paddings: Sequence[tuple[int, int]],
    *,
    constant: In | Const | str | None = "none",
    q: Q = "data",
    runtime_paddings: bool = False,
) -> Callable[[], bytes]:
    quantized = data_quantization(dtype) if q == "data" else q
    result = tuple(
        dim + before + after for dim, (before, after) in zip(source, paddings, strict=True)
    )
    amounts: In | Const = (
        In((len(source), 2), "INT32")
        if runtime_paddings
        else Const(np.array(paddings, np.int32), "INT32")
    )
    inputs: list[In | Const | None] = [In(source, dtype, quantized), amounts]
    if constant != "none":
        inputs.append(constant)  # type: ignore[arg-type]
    return one_operator(opcode, inputs, [Out(result, dtype, quantized)])


_IMAGE_PADS = ((0, 0), (1, 1), (2, 2), (0, 0))


def pad_cases() -> list[Case]:
    found = [
        shape_case("PAD", dtype, "rank2", _pad("PAD", dtype, (4, 16), ((1, 0), (2, 3))))
        for dtype in ("INT8", "INT16", "FLOAT32", "INT32", "INT64", "BOOL")
    ]
    found += [
        shape_case(
            "PAD",
            "INT8",
            "per_tensor_image",
            _pad("PAD", "INT8", (1, 4, 4, 8), _IMAGE_PADS, q="default"),
        ),
        shape_case("PAD", "FLOAT32", "rank1", _pad("PAD", "FLOAT32", (16,), ((3, 5),))),
        shape_case(
            "PAD",
            "INT8",
            "rank5",
            _pad("PAD", "INT8", (1, 2, 2, 2, 4), ((0, 0), (1, 0), (0, 1), (0, 0), (1, 1))),
        ),
        shape_case(
            "PAD",
            "FLOAT32",
            "three_inputs",
            _pad(
                "PAD",
                "FLOAT32",
                (4, 16),
                ((1, 1), (0, 0)),
                constant=Const(np.array(0.5, np.float32), "FLOAT32"),
            ),
        ),
        shape_case(
            "PAD",
            "FLOAT32",
            "refused_rank6",
            _pad("PAD", "FLOAT32", (1, 1, 1, 2, 2, 2), ((0, 0),) * 5 + ((1, 1),)),
        ),
        shape_case(
            "PAD",
            "FLOAT32",
            "refused_runtime_paddings",
            _pad("PAD", "FLOAT32", (4, 16), ((1, 1), (0, 0)), runtime_paddings=True),
        ),
    ]
    return found


def padv2_cases() -> list[Case]:
    def value(dtype: str) -> Const:
        numpy_type = {"INT8": np.int8, "INT16": np.int16, "FLOAT32": np.float32}[dtype]
        return Const(
            np.array(0, numpy_type),
            dtype,
            data_quantization(dtype) if dtype != "INT8" else per_channel(32),
        )

    return [
        *(
            shape_case(
                "PADV2",
                dtype,
                "constant",
                _pad("PADV2", dtype, (1, 4, 4, 8), _IMAGE_PADS, constant=value(dtype)),
            )
            for dtype in ("INT8", "INT16", "FLOAT32")
        ),
        shape_case(
            "PADV2", "FLOAT32", "two_inputs", _pad("PADV2", "FLOAT32", (4, 16), ((1, 1), (2, 2)))
        ),
        shape_case(
            "PADV2",
            "INT8",
            "omitted_constant",
            _pad("PADV2", "INT8", (4, 16), ((1, 1), (2, 2)), constant=None),
        ),
        shape_case(
            "PADV2",
            "INT8",
            "refused_zero_point",
            _pad(
                "PADV2",
                "INT8",
                (4, 16),
                ((1, 1), (2, 2)),
                q=INT8_Q,
                constant=Const(np.array(0, np.int8), "INT8", per_channel(1, zero_point=3)),
            ),
        ),
    ]


def mirror_pad_cases() -> list[Case]:
    def build(
        dtype: str,
        source: tuple[int, ...],
        paddings: Sequence[tuple[int, int]],
        mode: str,
        amounts: str = "const32",
    ) -> Callable[[], bytes]:
        result = tuple(d + a + b for d, (a, b) in zip(source, paddings, strict=True))
        matrix: In | Const = {
            "const32": Const(np.array(paddings, np.int32), "INT32"),
            "const64": Const(np.array(paddings, np.int64), "INT64"),
            "runtime": In((len(source), 2), "INT32"),
        }[amounts]
        return one_operator(
            "MIRROR_PAD",
            [data_input(source, dtype), matrix],
            [data_output(result, dtype)],
            {"mode": mode},
        )

    return [
        shape_case(
            "MIRROR_PAD",
            "INT8",
            "reflect_rank4",
            build("INT8", (1, 4, 4, 8), _IMAGE_PADS, "REFLECT"),
        ),
        shape_case(
            "MIRROR_PAD",
            "INT8",
            "symmetric_rank2",
            build("INT8", (4, 16), ((1, 2), (3, 0)), "SYMMETRIC"),
        ),
        shape_case(
            "MIRROR_PAD", "FLOAT32", "reflect_rank1", build("FLOAT32", (16,), ((2, 2),), "REFLECT")
        ),
        shape_case(
            "MIRROR_PAD",
            "FLOAT32",
            "int64_paddings",
            build("FLOAT32", (4, 16), ((1, 1), (1, 1)), "SYMMETRIC", "const64"),
        ),
        shape_case(
            "MIRROR_PAD",
            "FLOAT32",
            "runtime_paddings",
            build("FLOAT32", (4, 16), ((1, 1), (1, 1)), "REFLECT", "runtime"),
        ),
        shape_case(
            "MIRROR_PAD",
            "INT16",
            "invoke_refused",
            build("INT16", (4, 16), ((1, 1), (1, 1)), "REFLECT"),
        ),
    ]


# -- BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, DEPTH_TO_SPACE, SPACE_TO_DEPTH ------------------------


def batch_space_cases() -> list[Case]:
    def build(
        opcode: str,
        dtype: str,
        source: tuple[int, ...],
        result: tuple[int, ...],
        quantized_constants: bool = False,
    ) -> Callable[[], bytes]:
        spatial = len(source) - 2
        q = per_channel(4) if quantized_constants else None
        block = Const(np.full((spatial,), 2, np.int32), "INT32", q)
        crops = Const(np.zeros((spatial, 2), np.int32), "INT32", q)
        return one_operator(
            opcode, [data_input(source, dtype), block, crops], [data_output(result, dtype)]
        )

    found: list[Case] = []
    for opcode, big, small in (
        ("BATCH_TO_SPACE_ND", (4, 2, 2, 8), (1, 4, 4, 8)),
        ("SPACE_TO_BATCH_ND", (1, 4, 4, 8), (4, 2, 2, 8)),
    ):
        found += [
            shape_case(opcode, "INT8", "rank4", build(opcode, "INT8", big, small)),
            shape_case(
                opcode,
                "FLOAT32",
                "rank4",
                build(opcode, "FLOAT32", big, small, quantized_constants=True),
            ),
            shape_case(opcode, "INT16", "invoke_refused", build(opcode, "INT16", big, small)),
        ]
    found += [
        shape_case(
            "BATCH_TO_SPACE_ND",
            "INT8",
            "rank3",
            build("BATCH_TO_SPACE_ND", "INT8", (4, 4, 8), (2, 8, 8)),
        ),
        shape_case(
            "SPACE_TO_BATCH_ND",
            "FLOAT32",
            "rank3",
            build("SPACE_TO_BATCH_ND", "FLOAT32", (2, 8, 8), (4, 4, 8)),
        ),
        shape_case(
            "SPACE_TO_BATCH_ND",
            "FLOAT32",
            "refused_rank5",
            build("SPACE_TO_BATCH_ND", "FLOAT32", (1, 4, 4, 4, 2), (8, 2, 2, 2, 2)),
        ),
    ]
    return found


def depth_space_cases() -> list[Case]:
    def build(
        opcode: str, dtype: str, source: tuple[int, ...], block: int, result: tuple[int, ...]
    ) -> Callable[[], bytes]:
        return one_operator(
            opcode, [data_input(source, dtype)], [data_output(result, dtype)], {"block_size": block}
        )

    return [
        shape_case(
            "DEPTH_TO_SPACE",
            "INT8",
            "block2",
            build("DEPTH_TO_SPACE", "INT8", (1, 4, 4, 16), 2, (1, 8, 8, 4)),
        ),
        shape_case(
            "DEPTH_TO_SPACE",
            "FLOAT32",
            "block4",
            build("DEPTH_TO_SPACE", "FLOAT32", (1, 2, 2, 32), 4, (1, 8, 8, 2)),
        ),
        shape_case(
            "DEPTH_TO_SPACE",
            "INT16",
            "refused_type",
            build("DEPTH_TO_SPACE", "INT16", (1, 4, 4, 16), 2, (1, 8, 8, 4)),
        ),
        shape_case(
            "DEPTH_TO_SPACE",
            "FLOAT32",
            "refused_block0",
            build("DEPTH_TO_SPACE", "FLOAT32", (1, 4, 4, 16), 0, (1, 8, 8, 4)),
        ),
        shape_case(
            "DEPTH_TO_SPACE",
            "FLOAT32",
            "refused_rank3",
            build("DEPTH_TO_SPACE", "FLOAT32", (4, 4, 16), 2, (8, 8, 4)),
        ),
        shape_case(
            "SPACE_TO_DEPTH",
            "INT8",
            "block2",
            build("SPACE_TO_DEPTH", "INT8", (1, 8, 8, 4), 2, (1, 4, 4, 16)),
        ),
        shape_case(
            "SPACE_TO_DEPTH",
            "FLOAT32",
            "block4",
            build("SPACE_TO_DEPTH", "FLOAT32", (1, 8, 8, 2), 4, (1, 2, 2, 32)),
        ),
        shape_case(
            "SPACE_TO_DEPTH",
            "INT16",
            "refused_type",
            build("SPACE_TO_DEPTH", "INT16", (1, 8, 8, 4), 2, (1, 4, 4, 16)),
        ),
    ]


# -- RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR ----------------------------------------------------


def resize_cases() -> list[Case]:
    def build(
        opcode: str,
        dtype: str,
        size: In | Const | None = None,
        source: tuple[int, ...] = (1, 4, 4, 8),
        **options: bool,
    ) -> Callable[[], bytes]:
        target = Const(i32(8, 8), "INT32") if size is None else size
        result = (*source[:-3], 8, 8, source[-1]) if len(source) == 4 else (8, 8, source[-1])
        return one_operator(
            opcode, [data_input(source, dtype), target], [data_output(result, dtype)], dict(options)
        )

    found: list[Case] = []
    for opcode, types, refused in (
        ("RESIZE_BILINEAR", ("INT8", "FLOAT32"), "INT16"),
        ("RESIZE_NEAREST_NEIGHBOR", ("INT8", "INT16", "FLOAT32"), "INT32"),
    ):
        found += [shape_case(opcode, dtype, "plain", build(opcode, dtype)) for dtype in types]
        found += [
            shape_case(opcode, refused, "invoke_refused", build(opcode, refused)),
            shape_case(opcode, "INT8", "align_corners", build(opcode, "INT8", align_corners=True)),
            shape_case(
                opcode,
                "FLOAT32",
                "half_pixel_centers",
                build(opcode, "FLOAT32", half_pixel_centers=True),
            ),
            shape_case(
                opcode,
                "FLOAT32",
                "refused_runtime_size",
                build(opcode, "FLOAT32", In((2,), "INT32")),
            ),
            shape_case(
                opcode, "FLOAT32", "refused_rank3", build(opcode, "FLOAT32", source=(4, 4, 8))
            ),
        ]
    found += [
        shape_case(
            "RESIZE_BILINEAR",
            "FLOAT32",
            "refused_both_options",
            build("RESIZE_BILINEAR", "FLOAT32", align_corners=True, half_pixel_centers=True),
        ),
        shape_case(
            "RESIZE_NEAREST_NEIGHBOR",
            "INT8",
            "both_options",
            build("RESIZE_NEAREST_NEIGHBOR", "INT8", align_corners=True, half_pixel_centers=True),
        ),
    ]
    return found
