"""TFLM's arena alignment: MicroArenaBufferAlignment() (micro_arena_constants.h), 16 bytes.

One number with several consequences, all defined by it:

* the memory planner's buffer sizes are rounded up to it (micro_allocation_info.cc), so two
  planned buffers never share an aligned block;
* the head starts at it, and every tail allocation (persistent buffers, variables, runtime
  structs) and temporary is aligned to it (single_arena_buffer_allocator.cc);
* offline offsets are not aligned by TFLM at all, so the offsets arenalens writes (`optimize`,
  the overlap plan) are aligned to it, because kernels expect their data aligned as the runtime's
  own planner would place it.

It is not the FlatBuffer's `force_align: 16` on weight data (`tflite.reader.BUFFER_DATA_ALIGNMENT`),
a rule of the file layout that happens to be the same number.
"""

from __future__ import annotations

ARENA_ALIGNMENT = 16
