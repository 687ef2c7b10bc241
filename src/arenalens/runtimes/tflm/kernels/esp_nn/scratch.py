"""Where an ESP-NN kernel's Prepare requests esp-nn's scratch buffer.

esp-tflite-micro's CONV_2D, DEPTHWISE_CONV_2D and SOFTMAX ask esp-nn for a size after the
reference setup steps (`esp_nn_get_*_scratch_size`) and request it with
`RequestScratchBufferInArena` when it is positive (`buffer_idx = -1` otherwise).
"""

from __future__ import annotations

from collections.abc import Callable

from arenalens.runtimes.tflm.kernels.base import INVOKE, Event, Events, Refusal, Scratch


def with_scratch(found: Events, size: Callable[[], int], what: str) -> list[Event]:
    """The reference steps, then the ESP-NN scratch request where Prepare makes it: after every
    setup step, before what only Invoke refuses, when esp-nn's size is positive; none when setup
    fails first (then Prepare returned before asking: the shapes failed the reference checks)."""
    events = list(found)
    if any(isinstance(event, Refusal) and event.phase != INVOKE for event in events):
        return events
    nbytes = size()
    if nbytes <= 0:
        return events
    at = next(
        (i for i, e in enumerate(events) if isinstance(e, Refusal) and e.phase == INVOKE),
        len(events),
    )
    return [*events[:at], Scratch(nbytes, what), *events[at:]]
