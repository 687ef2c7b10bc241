"""Builtin operator codes ↔ names, and option-table decoding, from the `tflite` schema package."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import re
import struct
import sys
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from typing import Any

from arenalens.errors import ModelError


def _schema_class(name: str) -> type:
    """The `tflite` package's generated class `name` (an enum of ints or an option table).

    Read from its own module file: importing `tflite.<name>` runs the package's __init__, which
    imports all ~190 generated modules (about 0.1 s, as long as reading a 10,000-operator
    model), where a model needs the enums and the option tables of its own operators.
    """
    loaded = sys.modules.get(f"tflite.{name}")
    if loaded is None:
        package = importlib.util.find_spec("tflite")
        locations = package.submodule_search_locations if package is not None else None
        spec = importlib.machinery.PathFinder.find_spec(name, locations)
        if spec is None or spec.loader is None:
            raise ImportError(f"the tflite package has no module {name}")
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
    found = getattr(loaded, name, None)
    if not isinstance(found, type):
        raise ImportError(f"tflite.{name} defines no class {name}")
    return found


BuiltinOperator = _schema_class("BuiltinOperator")
BuiltinOptions = _schema_class("BuiltinOptions")
BuiltinOptions2 = _schema_class("BuiltinOptions2")


def _enum_names(enum_class: type) -> dict[int, str]:
    return {
        value: name
        for name, value in vars(enum_class).items()
        if not name.startswith("_") and isinstance(value, int)
    }


BUILTIN_NAMES: dict[int, str] = _enum_names(BuiltinOperator)
BUILTIN_CODES: dict[str, int] = {name: code for code, name in BUILTIN_NAMES.items()}
_OPTIONS_NAMES: dict[int, str] = _enum_names(BuiltinOptions)
_OPTIONS2_NAMES: dict[int, str] = _enum_names(BuiltinOptions2)


def builtin_name(code: int) -> str:
    """Builtin operator code → schema name ('CONV_2D'), or 'BUILTIN_<code>' if unknown."""
    return BUILTIN_NAMES.get(code, f"BUILTIN_{code}")


def snake_case(camel: str) -> str:
    """CamelCase schema accessor name → snake_case option key (StrideW → stride_w)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", camel).lower()


# Vector helpers only. Fields named "...Type" are real options (SHAPE's out_type, LSTM's
# kernel_type, the convolutions' quantized_bias_type): option tables hold no unions.
_SKIPPED_SUFFIXES = ("AsNumpy", "Length", "IsNone")
_SKIPPED_NAMES = {"Init", "GetRootAs"}


@cache
def _accessors(options_class: type) -> tuple[tuple[str, str, bool], ...]:
    """Option class → (method, snake_case key, is_vector) for every scalar or numeric vector."""
    found = []
    for method_name, method in vars(options_class).items():
        if method_name.startswith("_") or method_name in _SKIPPED_NAMES:
            continue
        if not callable(method) or method_name.startswith("GetRootAs"):
            continue
        if method_name.endswith(_SKIPPED_SUFFIXES) or "BufferHasIdentifier" in method_name:
            continue
        code = getattr(method, "__code__", None)
        if code is None:
            continue
        is_vector = code.co_argcount == 2 and hasattr(options_class, method_name + "AsNumpy")
        if code.co_argcount == 1 or is_vector:
            found.append((method_name, snake_case(method_name), is_vector))
    return tuple(found)


@cache
def _options_class(union_names: tuple[tuple[int, str], ...], type_code: int) -> type | None:
    name = dict(union_names).get(type_code)
    if name is None or name == "NONE":
        return None
    try:
        return _schema_class(name)
    except ImportError:
        return None


_OPTIONS_KEY = tuple(sorted(_OPTIONS_NAMES.items()))
_OPTIONS2_KEY = tuple(sorted(_OPTIONS2_NAMES.items()))


def decode_options(
    data: Any, options: tuple[int, int], options2: tuple[int, int]
) -> dict[str, Any]:
    """(union type, table position) of both option unions → their fields as a snake_case dict."""
    decoded: dict[str, Any] = {}
    for (type_code, position), key in ((options, _OPTIONS_KEY), (options2, _OPTIONS2_KEY)):
        options_class = _options_class(key, type_code)
        if options_class is None or not position:
            continue
        instance = options_class()
        instance.Init(data, position)
        decoded.update(_read_fields(instance, options_class))
    return decoded


OptionsKey = tuple[tuple[int, int], tuple[int, int]]


class LazyOptions(Mapping[str, Any]):
    """An operator's builtin options, decoded on first use (most are never read).

    Decoding through the generated option classes costs tens of microseconds per operator, and
    only control flow, scratch and temporary rules read options, so the reader defers it.
    Operators of one file share `cache`, keyed by the tables' positions: a table that many
    operators point at (writers share identical tables) is decoded once, not once per operator.
    """

    __slots__ = ("_cache", "_data", "_decoded", "_label", "_options", "_options2")

    def __init__(
        self,
        data: Any,
        options: tuple[int, int],
        options2: tuple[int, int],
        cache: dict[OptionsKey, dict[str, Any]] | None = None,
        label: str = "<bytes>",
    ) -> None:
        self._data = data
        self._label = label
        self._options = options
        self._options2 = options2
        self._decoded: dict[str, Any] | None = None
        self._cache = cache

    def _fields(self) -> dict[str, Any]:
        if self._decoded is None:
            key = (self._options, self._options2)
            cached = self._cache.get(key) if self._cache is not None else None
            if cached is None:
                try:
                    cached = decode_options(self._data, self._options, self._options2)
                except (struct.error, IndexError, TypeError, ValueError, OverflowError) as error:
                    # Decoded on first use, after loading: still the file's fault, so the same
                    # error type as the reader's (callers catch ModelError, nothing else).
                    raise ModelError(
                        self._label, f"malformed operator options ({type(error).__name__}: {error})"
                    ) from None
                if self._cache is not None:
                    self._cache[key] = cached
            self._decoded = cached
        return self._decoded

    def __getitem__(self, key: str) -> Any:
        return self._fields()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields())

    def __len__(self) -> int:
        return len(self._fields())

    def __repr__(self) -> str:
        return f"LazyOptions({self._fields()!r})"


def _read_fields(instance: Any, options_class: type) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for method_name, key, is_vector in _accessors(options_class):
        method: Callable[..., Any] = getattr(instance, method_name)
        if is_vector:
            array = getattr(instance, method_name + "AsNumpy")()
            fields[key] = tuple(array.tolist()) if hasattr(array, "tolist") else ()
            continue
        value = method()
        if isinstance(value, bytes):
            value = value.decode("utf-8", errors="replace")
        if isinstance(value, bool | int | float | str) or value is None:
            fields[key] = value
    return fields
