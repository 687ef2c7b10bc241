"""C struct layouts: field lists → sizeof and alignof under the ABIs TFLM is built for.

TFLM's memory figures are sums of C structs (kernel OpData, parsed builtin options, the runtime's
own bookkeeping), so the same model needs different bytes on a 64-bit host and on a 32-bit
microcontroller. Writing each struct down as its fields, in the order the source declares them,
lets one definition give every ABI's size (`arenalens.builds.abi`: LP64, ILP32 Arm EABI) by the
usual C rules: each field at the next multiple of its alignment, the struct padded to a multiple
of its largest alignment.

Field types are the scalar names an `Abi` sizes (`int8` ... `double`, `bool`, `int`, `pointer`,
`size_t`, `enum`, `enum16`, `enum32`) or nested structs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from arenalens.builds.abi import Abi
from arenalens.records import record


@record(slots=True)
class Field:
    """One member: a scalar type name or a nested struct, optionally an array, optionally present
    only in builds with a feature (e.g. `USE_TFLM_COMPRESSION`)."""

    name: str
    ctype: str | Struct
    count: int = 1
    only_with: str | None = None


@record(slots=True)
class Struct:
    """A C struct (or, with `union=True`, a union) as its ordered fields."""

    name: str
    fields: tuple[Field, ...]
    union: bool = False

    def layout(self, abi: Abi, features: frozenset[str] = frozenset()) -> tuple[int, int]:
        """(sizeof, alignof) on this ABI with these build features."""
        key = (id(self), id(abi), features)
        found = _LAYOUTS.get(key)
        if found is not None and found[0] is self and found[1] is abi:
            return found[2]
        computed = self._layout(abi, features)
        if len(_LAYOUTS) >= _LAYOUT_CACHE_ENTRIES:
            _LAYOUTS.clear()
        _LAYOUTS[key] = (self, abi, computed)
        return computed

    def _members(self, abi: Abi, features: frozenset[str]) -> Iterator[tuple[Field, int, int]]:
        """(field, sizeof, alignof of one element) of each member this build compiles."""
        for field in self.fields:
            if field.only_with is not None and field.only_with not in features:
                continue
            if isinstance(field.ctype, Struct):
                member_size, member_alignment = field.ctype.layout(abi, features)
            else:
                member_size, member_alignment = abi.scalar(field.ctype)
            yield field, member_size, member_alignment

    def _layout(self, abi: Abi, features: frozenset[str]) -> tuple[int, int]:
        offset = 0
        size = 0
        alignment = 1
        for field, member_size, member_alignment in self._members(abi, features):
            alignment = max(alignment, member_alignment)
            if self.union:
                size = max(size, member_size * field.count)
                continue
            offset = _align_up(offset, member_alignment) + member_size * field.count
        total = size if self.union else offset
        return _align_up(max(total, 0), alignment), alignment

    def size(self, abi: Abi, features: frozenset[str] = frozenset()) -> int:
        """sizeof on this ABI."""
        return self.layout(abi, features)[0]

    def member(
        self, path: str, abi: Abi, features: frozenset[str] = frozenset()
    ) -> tuple[int, int]:
        """'quantization.type' → (offsetof, sizeof) of that member on this ABI (a whole array
        for an array member)."""
        name, _, rest = path.partition(".")
        offset = 0
        for field, member_size, member_alignment in self._members(abi, features):
            start = 0 if self.union else _align_up(offset, member_alignment)
            if field.name == name:
                if not rest:
                    return start, member_size * field.count
                if not isinstance(field.ctype, Struct):
                    raise KeyError(f"{self.name}.{name} is not a struct")
                inner, size = field.ctype.member(rest, abi, features)
                return start + inner, size
            offset = start + member_size * field.count
        raise KeyError(f"{self.name} has no member '{name}'")


# (id of a struct, id of an ABI, features) → (that struct, that ABI, its layout). Kernel rules ask
# for the same few structs once per operator (10,000 times for a 10,000-operator model), and a
# layout walks every member of every nested struct. The entry keeps both objects, so their ids
# cannot be reused while it lives; the structs are module constants, so the table stays small.
_LAYOUTS: dict[tuple[int, int, frozenset[str]], tuple[Struct, Abi, tuple[int, int]]] = {}
_LAYOUT_CACHE_ENTRIES = 4096


def struct(name: str, *fields: tuple[str, str | Struct] | Field) -> Struct:
    """Shorthand: struct("OpData", ("zero_point", "int32"), Field("data", "pointer", 3), ...)."""
    return Struct(name, tuple(f if isinstance(f, Field) else Field(f[0], f[1]) for f in fields))


def union(name: str, *fields: tuple[str, str | Struct] | Field) -> Struct:
    """A C union of these members."""
    return Struct(name, struct(name, *fields).fields, union=True)


def array_bytes(abi: Abi, ctype: str, count: int) -> int:
    """Bytes of `count` scalars of one type (a persistent array a kernel allocates)."""
    return abi.scalar(ctype)[0] * count


def _align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def sizes(structs: Sequence[Struct], abi: Abi) -> dict[str, int]:
    """Struct names → sizeof on one ABI (for docs and tests)."""
    return {item.name: item.size(abi) for item in structs}
