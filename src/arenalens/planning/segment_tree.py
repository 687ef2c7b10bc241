"""A segment tree for stabbing queries over positions 0..n-1.

An item given for positions [low, high] is stored at the O(log n) nodes that tile that range, so
the items whose range holds one position are those stored on its path from leaf to root. The
breadth order (`greedy_by_breadth`) reads each step's buffers once and empties the lists it
read; the interval index of placed buffers (`offset_index.IntervalIndex`) reads them again and
again.
"""

from __future__ import annotations

from typing import Generic, TypeVar

Item = TypeVar("Item")


class SegmentTree(Generic[Item]):
    """Items stored at the segment-tree nodes that tile their range of positions."""

    __slots__ = ("nodes", "width")

    def __init__(self, positions: int) -> None:
        self.width = 1  # leaves: the smallest power of two that holds every position
        while self.width < positions:
            self.width *= 2
        self.nodes: dict[int, list[Item]] = {}

    def add(self, low: int, high: int, item: Item) -> None:
        """Store `item` for positions low..high (both included)."""
        nodes = self.nodes
        left, right = low + self.width, high + self.width + 1
        while left < right:
            if left & 1:
                nodes.setdefault(left, []).append(item)
                left += 1
            if right & 1:
                right -= 1
                nodes.setdefault(right, []).append(item)
            left //= 2
            right //= 2

    def at(self, position: int, *, take: bool = False) -> list[Item]:
        """Every item whose range holds `position` (leaf first, then up to the root); `take`:
        empty the nodes read, so that an item is handed out once, at the first position read
        that its range holds."""
        read = self.nodes.pop if take else self.nodes.get
        found: list[Item] = []
        node = position + self.width
        while node:
            found.extend(read(node, ()))
            node //= 2
        return found
