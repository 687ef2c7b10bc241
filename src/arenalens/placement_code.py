"""Placement → the C++ that realises it on the board's toolchain: each buffer in its bank (a
static array with its linker section, `heap_caps_aligned_alloc` on ESP-IDF, Arduino's
`SDRAM.malloc`), 16-byte aligned, and the allocator and interpreter built with its sizes.

The sizes are the minima of `runtimes/tflm/two_buffers.py` for one build; the buffers start
16-byte aligned because the minima assume it (TFLM aligns a buffer's start up and its persistent
end down to 16 bytes, and the bytes lost to that are not counted).
"""

from __future__ import annotations

from arenalens.placement import ARENA, NON_PERSISTENT, PERSISTENT, VARIABLES, BankUse, Placement
from arenalens.targets import EXTERNAL, Target

_NAMES = {
    ARENA: ("tensor_arena", "kTensorArenaSize"),
    PERSISTENT: ("persistent_arena", "kPersistentArenaSize"),
    NON_PERSISTENT: ("non_persistent_arena", "kNonPersistentArenaSize"),
    VARIABLES: ("variable_arena", "kVariableArenaSize"),
}
HEAP_CAPS = "heap_caps_malloc"
ARDUINO_SDRAM = "arduino-sdram"


def placement_code(
    placement: Placement, target: Target, *, model: str, variable_count: int = 0
) -> str:
    """The C++ to paste: buffers, then `SetUpInterpreter(model, resolver)` that builds the
    allocator and interpreter with those buffers and returns the interpreter (nullptr when
    AllocateTensors fails)."""
    uses = placement.uses
    lines = [
        f"// {_safe(model)} on {_safe(target.title)}: {_safe(placement.summary())}.",
        "// Sizes from arenalens for the build it names; each buffer must start 16-byte aligned.",
        "#include <cstddef>",
        "#include <cstdint>",
        "",
        '#include "tensorflow/lite/micro/micro_allocator.h"',
        '#include "tensorflow/lite/micro/micro_interpreter.h"',
    ]
    if placement.variables_apart:
        lines.append('#include "tensorflow/lite/micro/micro_resource_variable.h"')
    allocations = {use.block.banks[0].allocate for use in uses if not _static(use)}
    if HEAP_CAPS in allocations:
        lines.append('#include "esp_heap_caps.h"')
    if ARDUINO_SDRAM in allocations:
        lines.append('#include "SDRAM.h"')
    lines += ["", "namespace {"]
    for use in uses:
        name, size = _NAMES[use.part]
        lines.append(f"constexpr size_t {size} = {use.nbytes};  // {_where(use)}")
    if placement.variables_apart:
        lines.append(f"constexpr int kResourceVariableCount = {variable_count};")
    for use in uses:
        if _static(use):
            name, size = _NAMES[use.part]
            lines.append(f"alignas(16) uint8_t {name}[{size}]{_attribute(use)};")
    lines += [
        "}  // namespace",
        "",
        "tflite::MicroInterpreter* SetUpInterpreter(const tflite::Model* model,",
        "                                           const tflite::MicroOpResolver& resolver) {",
    ]
    for use in uses:
        if not _static(use):
            lines.extend(f"  {line}" for line in _allocated(use))
    lines.extend(f"  {line}" for line in _interpreter(placement))
    lines += [
        "  if (interpreter.AllocateTensors() != kTfLiteOk) return nullptr;",
        "  return &interpreter;",
        "}",
        "",
    ]
    notes = _section_notes(placement)
    return "\n".join(lines + notes)


def _static(use: BankUse) -> bool:
    """True when the buffer is a static array (in a linker section or the default .bss)."""
    return not use.block.banks[0].allocate


def _attribute(use: BankUse) -> str:
    """The section attribute; none when the block holds the SDK's default data region."""
    if any(bank.static_array for bank in use.block.banks):
        return ""
    section = use.block.banks[0].section
    return f' __attribute__((section("{section}")))' if section else ""


def _where(use: BankUse) -> str:
    return f"{use.block.name} ({use.block.speed})"


def _allocated(use: BankUse) -> list[str]:
    name, size = _NAMES[use.part]
    how = use.block.banks[0].allocate
    if how == HEAP_CAPS:
        caps = (
            "MALLOC_CAP_SPIRAM | MALLOC_CAP_8BIT"
            if use.block.speed == EXTERNAL
            else "MALLOC_CAP_INTERNAL | MALLOC_CAP_8BIT"
        )
        return [
            f"static uint8_t* {name} =",
            f"    static_cast<uint8_t*>(heap_caps_aligned_alloc(16, {size}, {caps}));",
            f"if ({name} == nullptr) return nullptr;",
        ]
    # Arduino's SDRAM library (Portenta H7, GIGA R1): SDRAM.malloc, aligned up by hand.
    return [
        "SDRAM.begin();",
        f"static uint8_t* {name} = reinterpret_cast<uint8_t*>(",
        f"    (reinterpret_cast<uintptr_t>(SDRAM.malloc({size} + 15)) + 15) & ~uintptr_t{{15}});",
        f"if ({name} == reinterpret_cast<uint8_t*>(0)) return nullptr;",
    ]


def _interpreter(placement: Placement) -> list[str]:
    lines: list[str] = []
    variables = "nullptr"
    if placement.variables_apart:
        lines += [
            "tflite::MicroAllocator* variable_allocator =",
            "    tflite::MicroAllocator::Create(variable_arena, kVariableArenaSize);",
            "tflite::MicroResourceVariables* variables = tflite::MicroResourceVariables::Create(",
            "    variable_allocator, kResourceVariableCount);",
        ]
        variables = "variables"
    if placement.use(ARENA) is not None:
        lines += [
            "tflite::MicroAllocator* allocator =",
            "    tflite::MicroAllocator::Create(tensor_arena, kTensorArenaSize);",
        ]
    else:
        lines += [
            "tflite::MicroAllocator* allocator = tflite::MicroAllocator::Create(",
            "    persistent_arena, kPersistentArenaSize, non_persistent_arena, "
            "kNonPersistentArenaSize);",
        ]
    lines.append(
        f"static tflite::MicroInterpreter interpreter(model, resolver, allocator, {variables});"
    )
    return lines


def _section_notes(placement: Placement) -> list[str]:
    notes: list[str] = []
    for use in placement.uses:
        attribute = _attribute(use)
        if not attribute:
            continue
        section = use.block.banks[0].section
        if use.block.speed == EXTERNAL:
            notes.append(
                f"// Map {section} (NOLOAD) to {use.block.name} in the linker script, and "
                "initialise the memory controller before SetUpInterpreter()."
            )
        else:
            notes.append(f"// Map {section} to {use.block.name} in the linker script (NOLOAD).")
        notes.extend(_linker_lines(use))
    return notes


def _linker_lines(use: BankUse) -> list[str]:
    """The GNU ld lines that map a buffer's section to its bank, where the catalogue gives the
    bank's address (a vendor script may declare the region already: then only the section)."""
    first = use.block.banks[0]
    if first.address is None:
        return []
    section = first.section
    region = "".join(char if char.isalnum() else "_" for char in use.block.name.upper())
    length = sum(bank.size_bytes for bank in use.block.banks)
    return [
        "// GNU ld, unless the script declares them already:",
        f"//   MEMORY   {{ {region} (rw) : ORIGIN = 0x{first.address:08X}, LENGTH = {length} }}",
        f"//   SECTIONS {{ {section} (NOLOAD) : {{ . = ALIGN(16); *({section}) }} > {region} }}",
    ]


def _safe(text: str) -> str:
    """Printable ASCII for a // comment."""
    return "".join(char if " " <= char <= "~" else "?" for char in text)
