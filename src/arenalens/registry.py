"""A named registry (planners, reorderers): entries by name, built-ins imported on first use."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any, Generic, Protocol, TypeVar

from arenalens.errors import UsageError


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def function(self) -> Callable[..., Any]: ...


EntryT = TypeVar("EntryT", bound=_Named)


class Registry(Generic[EntryT]):
    """Entries of one kind by name. The module that registers the built-ins is imported on first
    use, and before a user's entry is added, so a user's name that clashes with a built-in is
    refused; built-in modules (in the registry's own package) register without that import,
    so importing one of them directly cannot import it again half-initialised."""

    def __init__(self, kind: str, builtin_module: str) -> None:
        self.kind = kind
        self.builtin_module = builtin_module
        self.package = builtin_module.rpartition(".")[0]
        self.entries: dict[str, EntryT] = {}
        self._builtins_loaded = False

    def _load_builtins(self) -> None:
        if not self._builtins_loaded:
            self._builtins_loaded = True
            import_module(self.builtin_module)  # each module registers itself on import

    def add(self, entry: EntryT, *, replace: bool = False) -> None:
        """Register entry under its name; ValueError when the name is taken (unless replace)."""
        module = getattr(entry.function, "__module__", "") or ""
        if not module.startswith(self.package + "."):
            self._load_builtins()
        if entry.name in self.entries and not replace:
            raise ValueError(f"a {self.kind} named '{entry.name}' is already registered")
        self.entries[entry.name] = entry

    def names(self) -> list[str]:
        """Registered names, sorted."""
        self._load_builtins()
        return sorted(self.entries)

    def get(self, name: str) -> EntryT:
        """Name → entry, or UsageError listing the known names."""
        self._load_builtins()
        try:
            return self.entries[name]
        except KeyError:
            known = ", ".join(sorted(self.entries))
            raise UsageError(f"unknown {self.kind} '{name}' (known: {known})") from None
