"""libstdc++ emulation: unordered_set<int> iteration order and std::sort, against the real thing.

`tests/data/libstdcxx_golden.json` was printed by `tests/data/libstdcxx_golden.cc` built with
g++ 12 / libstdc++.so.6; when g++ is installed, the last test rebuilds it and compares live.
"""

from __future__ import annotations

import functools
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from arenalens.runtimes.litert.libstdcxx import (
    BUCKET_COUNT_CHAIN,
    UnorderedIntSet,
    _heap_sort,
    libstdcxx_sort,
)

DATA = Path(__file__).parents[2] / "data"


@functools.cache
def golden() -> dict[str, Any]:
    """The recorded libstdc++ behaviour."""
    result: dict[str, Any] = json.loads((DATA / "libstdcxx_golden.json").read_text())
    return result


def by_key(first: tuple[int, int], second: tuple[int, int]) -> bool:
    """Compare (key, id) pairs by key only, so ties expose the algorithm's permutation."""
    return first[0] < second[0]


def keyed(keys: list[int]) -> list[tuple[int, int]]:
    """Keys → (key, original position) pairs."""
    return [(key, position) for position, key in enumerate(keys)]


def test_hash_set_example_from_the_spec() -> None:
    # docs/runtime-rules.md §L5: inserting 5, 18, 3 into 13 buckets iterates as 3, 18, 5
    # (18 and 5 share bucket 5; 18 goes before 5; 3 opens a new bucket and goes to the front).
    assert list(UnorderedIntSet([5, 18, 3])) == [3, 18, 5]
    assert UnorderedIntSet([5, 18, 3]).bucket_count == 13


def test_empty_set_has_one_bucket_and_first_insert_makes_thirteen() -> None:
    empty = UnorderedIntSet()
    assert empty.bucket_count == 1
    assert list(empty) == []
    empty.add(7)
    assert empty.bucket_count == 13


def test_duplicates_are_ignored_without_rehashing() -> None:
    values = UnorderedIntSet(range(13))
    assert values.bucket_count == 13
    values.add(5)  # present: no growth even though the table is full
    assert values.bucket_count == 13 and len(values) == 13


def test_rehash_growth_follows_the_prime_chain() -> None:
    values = UnorderedIntSet()
    seen = []
    for value in range(3000):
        values.add(value)
        if not seen or seen[-1] != values.bucket_count:
            seen.append(values.bucket_count)
    assert seen == [13, 29, 59, 127, 257, 541, 1109, 2357, 5087]
    assert tuple(seen) == BUCKET_COUNT_CHAIN[: len(seen)]


def test_rehash_reinserts_in_list_order() -> None:
    # 13 values fill 13 buckets; the 14th insertion rehashes to 29 first. With values < 29 each
    # bucket holds one value and every re-insertion goes to the front, so the old order reverses
    # before 13 joins at the front.
    values = UnorderedIntSet(range(13))
    assert list(values) == list(range(12, -1, -1))
    values.add(13)
    assert values.bucket_count == 29
    assert list(values) == [13, *range(13)]


@pytest.mark.parametrize("case", range(40))
def test_hash_set_order_matches_recorded_libstdcxx(case: int) -> None:
    record = golden()["sets"][case]
    values = UnorderedIntSet(record["inserted"])
    assert list(values) == record["order"]
    assert values.bucket_count == record["buckets"]


@pytest.mark.parametrize("case", range(60))
def test_sort_matches_recorded_libstdcxx(case: int) -> None:
    record = golden()["sorts"][case]
    items = keyed(record["keys"])
    libstdcxx_sort(items, by_key)
    assert [position for _, position in items] == record["sort"]


@pytest.mark.parametrize("case", range(60))
def test_heap_sort_fallback_matches_partial_sort(case: int) -> None:
    # Introsort's depth-limit fallback is std::__partial_sort(first, last, last).
    record = golden()["sorts"][case]
    items = keyed(record["keys"])
    _heap_sort(items, 0, len(items), by_key)
    assert [position for _, position in items] == record["partial_sort"]


def test_sort_with_ties_above_sixteen_is_not_stable() -> None:
    # 20 equal keys: libstdc++'s introsort partitions once and permutes the ties; a stable sort
    # would keep 0..19. The recorded run shows the same permutation (case with one key value).
    items = keyed([0] * 20)
    libstdcxx_sort(items, by_key)
    order = [position for _, position in items]
    assert sorted(order) == list(range(20))
    assert order != list(range(20))


def test_sort_up_to_sixteen_is_stable_insertion_sort() -> None:
    keys = [3, 1, 3, 2, 1, 3, 2, 2, 1, 3, 1, 2, 3, 1, 2, 3]
    items = keyed(keys)
    libstdcxx_sort(items, by_key)
    assert items == sorted(keyed(keys), key=lambda item: item[0])


def test_sort_orders_random_inputs() -> None:
    generator = random.Random(7)
    for length in (0, 1, 2, 17, 100, 1000):
        values = [generator.randrange(50) for _ in range(length)]
        copy = list(values)
        libstdcxx_sort(copy, lambda a, b: a < b)
        assert copy == sorted(values)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed: no live comparison")
def test_recorded_golden_data_is_what_this_libstdcxx_prints(tmp_path: Path) -> None:
    binary = tmp_path / "golden"
    subprocess.run(
        ["g++", "-O2", "-std=c++17", str(DATA / "libstdcxx_golden.cc"), "-o", str(binary)],
        check=True,
        capture_output=True,
    )
    printed = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    assert json.loads(printed) == golden()
