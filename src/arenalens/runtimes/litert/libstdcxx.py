"""libstdc++ behaviour LiteRT's planner order rests on: `unordered_set<int>` order, `std::sort`.

LiteRT (Linux x86-64 builds, libstdc++) collects the tensors to place from per-node
`std::unordered_set<int32_t>`s and orders them with `std::sort`, which is not stable. When the
comparator ties (equal sizes and equal first steps), the result depends on both containers'
exact behaviour, so this module re-implements them (docs/runtime-rules.md §L5):

* `UnorderedIntSet`: the singly linked node list of libstdc++'s `_Hashtable` with identity
  hashing (`bits/hashtable.h`: `_M_insert_unique_node`, `_M_insert_bucket_begin`,
  `_M_rehash_aux`; growth from `_Prime_rehash_policy`).
* `libstdcxx_sort`: introsort as in `bits/stl_algo.h` (`__introsort_loop`,
  `__move_median_to_first`, `__unguarded_partition`, `__final_insertion_sort`) with the heap sort
  fallback of `bits/stl_heap.h`.

Builds on libc++ (Android, Apple) or MSVC hash and sort differently and are not modelled.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, MutableSequence
from typing import TypeVar

Item = TypeVar("Item")
LessThan = Callable[[Item, Item], bool]

# Bucket counts an unordered_set<int> passes through while it grows by single insertions
# (default max_load_factor 1.0): the first insertion makes 13 buckets, and each rehash takes the
# smallest entry of libstdc++'s prime table that is >= twice the old count. Measured with
# g++ 12 / libstdc++.so.6 by printing bucket_count() after each insertion and after rehash(2·n).
BUCKET_COUNT_CHAIN: tuple[int, ...] = (
    13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229, 172933, 351061,
    712697, 1447153, 2938679, 5967347, 12117689, 24607243, 49969847,
)  # fmt: skip

# _Prime_rehash_policy::_M_next_bkt(n), the bucket count of a container built for n elements:
# 1 (the single inline bucket, nothing allocated) for none, its fast table below 14, then the
# smallest entry of libstdc++'s prime table from 17 up that is >= n. Measured with g++ 12 /
# libstdc++.so.6 by printing `unordered_set<int>(n).bucket_count()` for n = 0..2400. The
# wheel's unordered_set built from a range of n ints (the XNNPACK delegate's inputs set) asks
# for that count: 2 buckets (16 B) for 2 inputs in the trace of var10_341, 3 (24 B) for 3 in
# cf11_3's.
_FAST_BUCKET_COUNTS = (1, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)
_PRIME_BUCKET_COUNTS: tuple[int, ...] = (
    17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 103, 109, 113,
    127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293, 313, 337, 359,
    383, 409, 439, 467, 503, 541, 577, 619, 661, 709, 761, 823, 887, 953, 1031, 1109, 1193,
    1289, 1381, 1493, 1613, 1741, 1879, 2029, 2179, 2357, 2549,
)  # fmt: skip


def sized_bucket_count(count: int) -> int:
    """The bucket count of an unordered container made for `count` elements (`_M_next_bkt`);
    past the measured table, the growth chain's next entry (never fewer buckets)."""
    if count < len(_FAST_BUCKET_COUNTS):
        return _FAST_BUCKET_COUNTS[max(count, 0)]
    position = bisect.bisect_left(_PRIME_BUCKET_COUNTS, count)
    if position < len(_PRIME_BUCKET_COUNTS):
        return _PRIME_BUCKET_COUNTS[position]
    return next((b for b in BUCKET_COUNT_CHAIN if b >= count), BUCKET_COUNT_CHAIN[-1])


# Ranges of at most this many elements are left to the final insertion sort (`_S_threshold`).
INSERTION_SORT_THRESHOLD = 16


class UnorderedIntSet:
    """An `std::unordered_set<int>` that remembers libstdc++'s iteration order.

    All elements sit in one list in which each bucket's elements are contiguous. A new element
    goes just before the first element of its bucket, or, if its bucket is empty, to the very
    front of the list. Before an insertion that would exceed the bucket count (max load 1.0),
    the set rehashes: elements are re-inserted in old list order by the same two rules.

    The list is doubly linked, with each bucket's first element remembered, so an insertion
    costs O(1) as in libstdc++ (a Python list made a 20,000-tensor node set take minutes).
    """

    def __init__(self, values: Iterable[int] = ()) -> None:
        self._head: int | None = None  # first element in iteration order
        self._next: dict[int, int | None] = {}
        self._previous: dict[int, int | None] = {}
        self._bucket_first: dict[int, int] = {}  # bucket → its first element in the list
        self._bucket_count = 1  # an empty libstdc++ table has one (static) bucket
        self._next_resize = 0
        for value in values:
            self.add(value)

    @property
    def bucket_count(self) -> int:
        """Current number of buckets (1 for a set that never held an element)."""
        return self._bucket_count

    def __len__(self) -> int:
        return len(self._next)

    def __contains__(self, value: object) -> bool:
        return value in self._next

    def __iter__(self) -> Iterator[int]:
        node = self._head
        while node is not None:
            yield node
            node = self._next[node]

    def add(self, value: int) -> None:
        """Insert value unless present (`insert`), rehashing first when the table is full."""
        if value in self._next:
            return
        if len(self._next) + 1 > self._next_resize:
            self._grow()
        self._link(value)

    def _link(self, value: int) -> None:
        """Insert into the node list: before its bucket's first node, else at the front."""
        bucket = value % self._bucket_count
        following = self._bucket_first.get(bucket, self._head)
        preceding = None if following is None else self._previous[following]
        self._next[value] = following
        self._previous[value] = preceding
        if following is not None:
            self._previous[following] = value
        if preceding is None:
            self._head = value
        else:
            self._next[preceding] = value
        self._bucket_first[bucket] = value

    def _grow(self) -> None:
        # From one bucket (never used) the first insertion jumps to 13; afterwards each rehash
        # moves one step along the chain (libstdc++: at least max(n + 2, 2 × buckets)).
        if self._next_resize == 0 and self._bucket_count == 1:
            new_count = BUCKET_COUNT_CHAIN[0]
        else:
            position = bisect.bisect_right(BUCKET_COUNT_CHAIN, self._bucket_count)
            if position >= len(BUCKET_COUNT_CHAIN):
                raise OverflowError(
                    f"unordered_set emulation supports at most {BUCKET_COUNT_CHAIN[-1]} elements"
                )
            new_count = BUCKET_COUNT_CHAIN[position]
        old_order = list(self)
        self._head = None
        self._next.clear()
        self._previous.clear()
        self._bucket_first.clear()
        self._bucket_count = new_count
        self._next_resize = new_count
        for value in old_order:
            self._link(value)


def libstdcxx_sort(items: MutableSequence[Item], less: LessThan[Item]) -> None:
    """Sort items in place exactly as libstdc++'s `std::sort(first, last, comp)` does."""
    count = len(items)
    if count < 2:
        return
    _introsort_loop(items, 0, count, 2 * (count.bit_length() - 1), less)
    _final_insertion_sort(items, 0, count, less)


def _introsort_loop(
    items: MutableSequence[Item], first: int, last: int, depth_limit: int, less: LessThan[Item]
) -> None:
    while last - first > INSERTION_SORT_THRESHOLD:
        if depth_limit == 0:
            _heap_sort(items, first, last, less)
            return
        depth_limit -= 1
        cut = _unguarded_partition_pivot(items, first, last, less)
        _introsort_loop(items, cut, last, depth_limit, less)
        last = cut


def _unguarded_partition_pivot(
    items: MutableSequence[Item], first: int, last: int, less: LessThan[Item]
) -> int:
    middle = first + (last - first) // 2
    _move_median_to_first(items, first, first + 1, middle, last - 1, less=less)
    return _unguarded_partition(items, first + 1, last, first, less)


def _move_median_to_first(
    items: MutableSequence[Item], result: int, a: int, b: int, c: int, *, less: LessThan[Item]
) -> None:
    # The comparison cascade decides which of equal elements becomes the pivot; keep it exact.
    # After `a < b` both of libstdc++'s branches ask the same two questions, in the same order,
    # of the larger of a and b (`high`: b when a < b, else a) and then of the other (`low`).
    low, high = (a, b) if less(items[a], items[b]) else (b, a)
    if less(items[high], items[c]):
        chosen = high
    elif less(items[low], items[c]):
        chosen = c
    else:
        chosen = low
    items[result], items[chosen] = items[chosen], items[result]


def _unguarded_partition(
    items: MutableSequence[Item], first: int, last: int, pivot: int, less: LessThan[Item]
) -> int:
    pivot_value = items[pivot]
    while True:
        while less(items[first], pivot_value):
            first += 1
        last -= 1
        while less(pivot_value, items[last]):
            last -= 1
        if not first < last:
            return first
        items[first], items[last] = items[last], items[first]
        first += 1


def _final_insertion_sort(
    items: MutableSequence[Item], first: int, last: int, less: LessThan[Item]
) -> None:
    if last - first > INSERTION_SORT_THRESHOLD:
        _insertion_sort(items, first, first + INSERTION_SORT_THRESHOLD, less)
        for position in range(first + INSERTION_SORT_THRESHOLD, last):
            _unguarded_linear_insert(items, position, less)
    else:
        _insertion_sort(items, first, last, less)


def _insertion_sort(
    items: MutableSequence[Item], first: int, last: int, less: LessThan[Item]
) -> None:
    for position in range(first + 1, last):
        value = items[position]
        if less(value, items[first]):
            # Smaller than the first element: shift the whole prefix right by one.
            items[first + 1 : position + 1] = items[first:position]
            items[first] = value
        else:
            _unguarded_linear_insert(items, position, less)


def _unguarded_linear_insert(
    items: MutableSequence[Item], position: int, less: LessThan[Item]
) -> None:
    value = items[position]
    previous = position - 1
    while less(value, items[previous]):
        items[position] = items[previous]
        position = previous
        previous -= 1
    items[position] = value


def _heap_sort(items: MutableSequence[Item], first: int, last: int, less: LessThan[Item]) -> None:
    """`std::__partial_sort(first, last, last)`: make_heap, then sort_heap."""
    length = last - first
    if length >= 2:
        parent = (length - 2) // 2
        while True:
            _adjust_heap(items, first, parent, length, items[first + parent], less=less)
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:
        last -= 1
        value = items[last]
        items[last] = items[first]
        _adjust_heap(items, first, 0, last - first, value, less=less)


def _adjust_heap(
    items: MutableSequence[Item],
    first: int,
    hole: int,
    length: int,
    value: Item,
    *,
    less: LessThan[Item],
) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(items[first + child], items[first + child - 1]):
            child -= 1
        items[first + hole] = items[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        items[first + hole] = items[first + child - 1]
        hole = child - 1
    # __push_heap: sift value up from hole, no higher than top.
    parent = (hole - 1) // 2
    while hole > top and less(items[first + parent], value):
        items[first + hole] = items[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    items[first + hole] = value
