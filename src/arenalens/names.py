"""Tensor names in one line of text: a converter's long name → its first part, cuts marked '…'.

Converters join every fused op's name with ';' (`model/act/Relu;model/bn/...;model/conv`); the
first part names the tensor. A path longer than the limit keeps its tail, the most specific part.
Whatever is left out is marked with '…', and the result never exceeds the limit.
"""

from __future__ import annotations

# Characters of a name in a finding's message (diagnose); tables pass their own column width.
MESSAGE_NAME_CHARS = 60


def short_name(name: str, *, limit: int = MESSAGE_NAME_CHARS) -> str:
    """A tensor name cut to at most `limit` characters: the first ';'-joined part, then its tail."""
    first, _, rest = name.partition(";")
    if len(first) > limit:
        return "…" + first[-(limit - 1) :]
    if rest:
        return first + "…" if len(first) < limit else first[: limit - 1] + "…"
    return first
