"""C ABIs: the sizes and alignments a compiler target gives C scalars.

* **LP64** (x86-64 System V, the `tflite_micro` wheel): pointers and `size_t` are 8 bytes.
* **ILP32 Arm EABI** (Cortex-M, `arm-none-eabi-gcc`): pointers and `size_t` are 4 bytes; 64-bit
  integers and doubles stay 8-aligned (AAPCS), unlike i386; and enums are *short*
  (`-fshort-enums` is the bare-metal default): an enum takes the smallest integer that holds its
  values, one byte for TfLiteType, TfLitePadding, TfLiteFusedActivation and the like.
* **ILP32 with int-sized enums** (the ESP32 family: `xtensa-esp*-elf-gcc` on the Xtensa chips,
  `riscv32-esp-elf-gcc` on the RISC-V ones): 4-byte pointers and `size_t`, 8-aligned 64-bit
  integers and doubles, and enums as large as an `int` (neither toolchain defaults to
  `-fshort-enums`, and ESP-IDF does not pass it): a `TfLiteTensor` is 40 bytes there, 32 under
  the Arm EABI.

Scalar type names: the fixed-size scalars by name (`int8` ... `double`, `bool`, `int`), `pointer`,
`size_t`, and `enum` (an enum whose values fit a byte), `enum16` (values fit 16 bits), `enum32`
(int-sized on every ABI). `runtimes/tflm/abi.py` lays C structs out from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from arenalens.builds.data import records_document
from arenalens.records import record


@record(slots=True)
class Abi:
    """The sizes and alignments a compiler target gives C scalars (and how it converts a
    non-finite double to an integer, which C++ leaves undefined). A row of `build_records.json`'s
    "abis"."""

    name: str  # the record's key: 'lp64', 'ilp32-arm-eabi', 'ilp32-int-enums'
    title: str  # as documents name it: 'ILP32 (Arm EABI)'
    pointer_bytes: int
    int64_alignment: int
    short_enums: bool
    # A +inf or NaN double converted to int64 saturates to INT64_MAX: the ESP toolchains'
    # soft-float doubles (libgcc's soft-fp on RISC-V, its ieee754-df.S on Xtensa). x86-64's
    # cvttsd2si gives INT64_MIN, and arm-none-eabi's conversion passes TFLM's range checks too
    # (measured: a MUL with an unquantized int8 output sets up on the wheel and the Cortex-M
    # probes, and aborts on the ESP ones).
    saturating_conversions: bool = False

    def scalar(self, ctype: str) -> tuple[int, int]:
        """A scalar C type name → (size, alignment) on this ABI."""
        if ctype in _POINTER_SIZED:
            return self.pointer_bytes, self.pointer_bytes
        if ctype in _SHORT_ENUM_BYTES:
            enum_bytes = _SHORT_ENUM_BYTES[ctype] if self.short_enums else 4
            return enum_bytes, enum_bytes
        size = _FIXED_SIZES.get(ctype)
        if size is None:
            raise KeyError(f"unknown C scalar type '{ctype}'")
        return size, (self.int64_alignment if size == 8 else size)


ABIS: Mapping[str, Abi] = MappingProxyType(
    {
        row["name"]: Abi(
            row["name"],
            row["title"],
            pointer_bytes=row["pointer_bytes"],
            int64_alignment=row["int64_alignment"],
            short_enums=row["short_enums"],
            saturating_conversions=row["saturating_conversions"],
        )
        for row in records_document()["abis"]
    }
)
LP64 = ABIS["lp64"]
ILP32 = ABIS["ilp32-arm-eabi"]
ILP32_INT_ENUMS = ABIS["ilp32-int-enums"]

_FIXED_SIZES: Mapping[str, int] = MappingProxyType(
    {
        "bool": 1, "char": 1, "int8": 1, "uint8": 1,
        "int16": 2, "uint16": 2,
        "int": 4, "int32": 4, "uint32": 4, "float": 4, "enum32": 4,
        "int64": 8, "uint64": 8, "double": 8,
    }
)  # fmt: skip
# Enum sizes under -fshort-enums (int-sized without it).
_SHORT_ENUM_BYTES: Mapping[str, int] = MappingProxyType({"enum": 1, "enum16": 2})
_POINTER_SIZED = frozenset({"pointer", "size_t", "intptr"})
