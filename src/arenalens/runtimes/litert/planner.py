"""LiteRT's ArenaPlanner bookkeeping: prepared subgraph → lifetimes, in-place aliases and the
exact order in which tensors reach the two SimpleMemoryArenas.

Source: *tflite/arena_planner.cc* (docs/runtime-rules.md §L1, §L3–§L5):

* **PlanAllocations** (once, after the first Prepare chunk): reference counts (outputs,
  variables, inputs +1; every node input +1), in-place aliases (*IdentifyInPlaceTensors*), then
  alloc / dealloc steps in plan order, each output inserted into its node's
  `std::unordered_set` (`nodes_to_tensors_`).
* **ExecuteAllocations(first, last)** per chunk: temporaries get `alloc = dealloc = node` and
  join their node's set after the outputs; the candidates are the sets' members in hash-set
  iteration order (ArenaRw ones with bytes, and every ArenaRwPersistent one), sorted with
  libstdc++'s `std::sort` and LiteRT's comparator; live aliases are skipped.

The placement itself is `planning.litert_arena` (arena) and back-to-back packing (persistent).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from arenalens.analysis.lifetimes import NEVER_FREED
from arenalens.runtimes.litert.libstdcxx import UnorderedIntSet, libstdcxx_sort
from arenalens.runtimes.litert.lifetimes import INPLACE_DATA_UNMODIFIED, INPLACE_INPUT0_SHARED
from arenalens.runtimes.litert.prepare.state import Allocation, PreparedSubgraph, TensorState

# ArenaPlanner's kScalarTensorBytes: a modifying in-place op never reuses an input this small.
SCALAR_TENSOR_BYTES = 4
# kTfLiteMaxSharableOpInputs: only inputs 0..2 can be shared.
MAX_SHARABLE_INPUTS = 3


@dataclass(frozen=True)
class ArenaOrder:
    """What ArenaPlanner decided for one subgraph, before any offset is computed."""

    subgraph: int
    alloc: tuple[int, ...]  # per tensor: first node (NEVER_FREED: never allocated)
    dealloc: tuple[int, ...]  # per tensor: last node (NEVER_FREED: kept to the end)
    aliases: Mapping[int, int]  # in-place output → root tensor whose bytes it uses
    arena_order: tuple[int, ...]  # ArenaRw tensors in placement order
    persistent_order: tuple[int, ...]  # ArenaRwPersistent tensors in placement order
    chunk_of: Mapping[int, int]  # placed tensor → index of the chunk that placed it
    # Groups of placed tensors the comparator cannot order (equal bytes and alloc); their order
    # comes from the hash sets and std::sort, reproduced exactly here.
    tie_groups: tuple[tuple[int, ...], ...]


SortFunction = Callable[[list[int], Callable[[int, int], bool]], None]


def plan_order(
    prepared: PreparedSubgraph,
    *,
    sort: SortFunction = libstdcxx_sort,
    hash_set_order: bool = True,
) -> ArenaOrder:
    """Prepared subgraph → ArenaPlanner's lifetimes, aliases and placement order.

    `sort` and `hash_set_order` exist to measure what the exact emulation buys: pass a stable
    sort, or `hash_set_order=False` to take each node's tensors in index order instead.
    """
    planner = _ArenaPlannerReplica(prepared, sort=sort, hash_set_order=hash_set_order)
    planner.plan_allocations()
    for chunk_number, (first, last) in enumerate(prepared.chunks):
        planner.execute_allocations(first, last, chunk_number)
    return planner.result()


class _ArenaPlannerReplica:
    def __init__(
        self, prepared: PreparedSubgraph, *, sort: SortFunction, hash_set_order: bool
    ) -> None:
        self.prepared = prepared
        self.sort = sort
        self.hash_set_order = hash_set_order
        count = len(prepared.tensors)
        self.alloc = [NEVER_FREED] * count
        self.dealloc = [NEVER_FREED] * count
        self.sets = [UnorderedIntSet() for _ in range(max(len(prepared.nodes), 1))]
        self.shared: dict[int, int] = {}  # actual_tensor_id_: output → input it shares
        self.arena_order: list[int] = []
        self.persistent_order: list[int] = []
        self.persistent_placed: set[int] = set()
        self.chunk_of: dict[int, int] = {}
        self.tie_groups: list[tuple[int, ...]] = []

    # PlanAllocations --------------------------------------------------------------------------
    def allocate(self, node: int, tensor: int) -> None:
        if self.alloc[tensor] == NEVER_FREED:
            self.alloc[tensor] = node

    def deallocate(self, node: int, tensor: int) -> None:
        if self.alloc[tensor] != NEVER_FREED:
            self.dealloc[tensor] = node

    def find_shared(self, tensor: int) -> int:
        """FindSharedTensor: one lookup, not a chain (chains are collapsed when recorded)."""
        return self.shared.get(tensor, tensor)

    def plan_allocations(self) -> None:
        prepared = self.prepared
        full_counts = [0] * len(prepared.tensors)
        for tensor in prepared.outputs:
            if tensor >= 0:
                full_counts[tensor] += 1
        for tensor in prepared.variables:
            full_counts[tensor] += 1
            self.allocate(0, tensor)
            self.sets[0].add(tensor)
        for tensor in prepared.inputs:
            if tensor >= 0:
                full_counts[tensor] += 1
                self.allocate(0, tensor)
                self.sets[0].add(tensor)
        working = list(full_counts)
        for node in prepared.nodes:
            for tensor in node.inputs:
                if tensor >= 0:
                    full_counts[tensor] += 1
        self.identify_inplace_tensors(full_counts)
        for node in prepared.nodes:
            for tensor in node.inputs:
                if tensor >= 0:
                    working[self.find_shared(tensor)] += 1
        for node in prepared.nodes:
            for tensor in node.outputs:
                if tensor >= 0:
                    self.sets[node.position].add(tensor)
                    self.allocate(node.position, tensor)
            for tensor in node.inputs:
                if tensor >= 0:
                    root = self.find_shared(tensor)
                    working[root] -= 1
                    if working[root] == 0:
                        self.deallocate(node.position, root)

    def identify_inplace_tensors(self, full_counts: list[int]) -> None:
        state = self.prepared.planning_state
        for node in self.prepared.nodes:
            if not node.outputs or not node.inplace_flags or node.outputs[0] < 0:
                continue
            modifies = not node.inplace_flags & INPLACE_DATA_UNMODIFIED
            output = node.outputs[0]
            chosen = -1
            for slot in range(min(MAX_SHARABLE_INPUTS, len(node.inputs))):
                candidate = node.inputs[slot]
                if candidate < 0 or not node.inplace_flags & (INPLACE_INPUT0_SHARED << slot):
                    continue
                if self.input_can_be_shared(
                    state[candidate],
                    state[output],
                    source_index=candidate,
                    target_index=output,
                    modifies=modifies,
                    full_counts=full_counts,
                ):
                    chosen = candidate
                    break
            if chosen < 0:
                continue
            root = self.find_shared(chosen)
            if modifies and full_counts[root] > 1:
                continue
            self.shared[output] = root

    def input_can_be_shared(
        self,
        source: TensorState,
        target: TensorState,
        *,
        source_index: int,
        target_index: int,
        modifies: bool,
        full_counts: list[int],
    ) -> bool:
        """ArenaPlanner::InputTensorCanBeShared on the tensors as PlanAllocations sees them."""
        if modifies and (
            source.nbytes != target.nbytes
            or source.nbytes <= SCALAR_TENSOR_BYTES
            or full_counts[source_index] > 1
        ):
            return False
        if source_index in self.prepared.inputs or target_index in self.prepared.outputs:
            return False
        return source.allocation in (target.allocation, Allocation.ARENA_RW)

    # ExecuteAllocations -----------------------------------------------------------------------
    def execute_allocations(self, first: int, last: int, chunk_number: int) -> None:
        prepared = self.prepared
        for position in range(first, min(last, len(prepared.nodes) - 1) + 1):
            for tensor in prepared.nodes[position].temporaries:
                if tensor < 0:
                    continue
                self.alloc[tensor] = position
                self.sets[position].add(tensor)
                self.dealloc[tensor] = position
        candidates = [
            t
            for i in range(first, last + 1)
            for t in (self.sets[i] if self.hash_set_order else sorted(self.sets[i]))
        ]
        tensors = prepared.tensors
        kept = [
            t
            for t in candidates
            if (tensors[t].allocation == Allocation.ARENA_RW and tensors[t].nbytes > 0)
            or tensors[t].allocation == Allocation.ARENA_RW_PERSISTENT
        ]
        if not kept:
            return
        self.sort(kept, self.comes_before)
        self.record_ties(kept)
        for tensor in kept:
            root = self.shared.get(tensor)
            if root is not None:
                if (
                    tensors[root].allocation != Allocation.ARENA_RW
                    or tensors[root].nbytes != tensors[tensor].nbytes
                ):
                    del self.shared[tensor]  # no longer shareable: placed on its own
                else:
                    continue
            allocation = tensors[tensor].allocation
            if allocation == Allocation.ARENA_RW:
                if tensor in self.chunk_of:
                    # Written by two operators (or an input also written): it is in two nodes'
                    # sets, but one tensor has one allocation; the first placement stands.
                    continue
                self.arena_order.append(tensor)
                self.chunk_of[tensor] = chunk_number
            elif (
                allocation == Allocation.ARENA_RW_PERSISTENT
                and tensor not in self.persistent_placed
                and tensors[tensor].nbytes > 0
            ):
                self.persistent_placed.add(tensor)
                self.persistent_order.append(tensor)
                self.chunk_of[tensor] = chunk_number

    def is_whole(self, tensor: int) -> bool:
        return self.alloc[tensor] == 0 and self.dealloc[tensor] == NEVER_FREED

    def comes_before(self, first: int, second: int) -> bool:
        """CreateTensorAllocationVector's comparator."""
        if self.is_whole(first):
            return not self.is_whole(second) or first < second
        if self.is_whole(second):
            return False
        first_bytes = self.prepared.tensors[first].nbytes
        second_bytes = self.prepared.tensors[second].nbytes
        if first_bytes != second_bytes:
            return first_bytes > second_bytes
        return self.alloc[first] < self.alloc[second]

    def record_ties(self, ordered: list[int]) -> None:
        group: list[int] = [ordered[0]]
        for previous, current in itertools.pairwise(ordered):
            if not self.comes_before(previous, current) and not self.comes_before(
                current, previous
            ):
                group.append(current)
                continue
            if len(group) > 1:
                self.tie_groups.append(tuple(group))
            group = [current]
        if len(group) > 1:
            self.tie_groups.append(tuple(group))

    def result(self) -> ArenaOrder:
        return ArenaOrder(
            subgraph=self.prepared.index,
            alloc=tuple(self.alloc),
            dealloc=tuple(self.dealloc),
            aliases=MappingProxyType(dict(self.shared)),
            arena_order=tuple(self.arena_order),
            persistent_order=tuple(self.persistent_order),
            chunk_of=MappingProxyType(dict(self.chunk_of)),
            tie_groups=tuple(self.tie_groups),
        )
