"""A named registry (planners, reorderers): entries by name, built-ins imported on first use, and
the settings each entry takes.

A registered function is `(problem, *, setting=default, ...)`. Its settings are read once from its
signature, here and nowhere else, so callers offer settings by name and the registry passes on
the ones the function takes (`Settings.select`).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any, Generic, Protocol, TypeVar

from arenalens.errors import UsageError
from arenalens.records import record

# Settings any planner or reorderer may be offered (a seed, a search effort, a user's wall-clock
# cap: `arenalens.effort`): one that draws no random numbers or does not search has no use for
# them and is run without them. Any other setting an entry
# does not take is a usage error (a misspelt setting must not be dropped silently).
COMMON_SETTINGS = frozenset({"seed", "effort", "time_limit_s"})


@record()
class Settings:
    """The keyword settings a registered function takes (every parameter after the problem)."""

    names: frozenset[str]
    takes_any: bool = False  # the function has **settings: every setting given is passed on
    # The search effort it takes when offered none (`arenalens.effort`); None: it takes none.
    default_effort: float | None = None

    @classmethod
    def of(cls, function: Callable[..., Any]) -> Settings:
        """Read a function's settings from its signature."""
        parameters = list(inspect.signature(function).parameters.values())[1:]
        named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        effort = next((p.default for p in parameters if p.name == "effort"), None)
        return cls(
            names=frozenset(p.name for p in parameters if p.kind in named),
            takes_any=any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters),
            default_effort=float(effort) if isinstance(effort, int | float) else None,
        )

    def takes(self, name: str) -> bool:
        """True when the function takes the setting `name`."""
        return self.takes_any or name in self.names

    def select(self, given: Mapping[str, Any], *, owner: str) -> dict[str, Any]:
        """The given settings the function takes; common ones it does not take are dropped, any
        other is a UsageError naming `owner` and the settings it has."""
        unknown = sorted(name for name in given if not self.takes(name))
        refused = [name for name in unknown if name not in COMMON_SETTINGS]
        if refused:
            has = ", ".join(sorted(self.names)) or "none"
            raise UsageError(f"{owner} has no setting {', '.join(refused)} (its settings: {has})")
        return {name: value for name, value in given.items() if self.takes(name)}


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def function(self) -> Callable[..., Any]: ...

    @property
    def settings(self) -> Settings: ...


EntryT = TypeVar("EntryT", bound=_Named)


class Registry(Generic[EntryT]):
    """Entries of one kind by name. The built-ins are listed by name with the module that
    registers each (`BUILTINS` in `builtin_module`): asking for one by name imports its module
    only; listing them, or adding a user's entry (a name that clashes with a built-in is
    refused), imports them all. Built-in modules (in the registry's own package) register without
    that import, so importing one of them directly cannot import it again half-initialised."""

    def __init__(self, kind: str, builtin_module: str) -> None:
        self.kind = kind
        self.builtin_module = builtin_module
        self.package = builtin_module.rpartition(".")[0]
        self.entries: dict[str, EntryT] = {}
        self._builtins_loaded = False

    def _builtins(self) -> Mapping[str, str]:
        """Built-in name → the module that registers it."""
        builtins: Mapping[str, str] = import_module(self.builtin_module).BUILTINS
        return builtins

    def _load_builtins(self) -> None:
        if not self._builtins_loaded:
            self._builtins_loaded = True
            for module in self._builtins().values():
                import_module(module)  # each registers itself on import

    def _load_builtin(self, name: str) -> None:
        """Import the module that registers the built-in `name` (all of them if none does)."""
        module = None if self._builtins_loaded else self._builtins().get(name)
        if module is None:
            self._load_builtins()
        else:
            import_module(module)

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

    def known_names(self) -> list[str]:
        """The built-ins' and the registered names, sorted, importing no built-in (help texts)."""
        return sorted({*self._builtins(), *self.entries})

    def get(self, name: str) -> EntryT:
        """Name → entry, or UsageError listing the known names."""
        if name not in self.entries:
            self._load_builtin(name)
        try:
            return self.entries[name]
        except KeyError:
            known = ", ".join(sorted(self.entries))
            raise UsageError(f"unknown {self.kind} '{name}' (known: {known})") from None

    def run(self, name: str, problem: Any, settings: Mapping[str, Any]) -> tuple[Any, float]:
        """Run the entry named `name` on a problem with the settings it takes → (what it
        returned, seconds it took); the caller checks the result."""
        entry = self.get(name)
        # No settings (the runtime's own planner, every check): nothing to select or refuse.
        taken = entry.settings.select(settings, owner=f"{self.kind} '{name}'") if settings else {}
        started = time.perf_counter()
        result = entry.function(problem, **taken)
        return result, time.perf_counter() - started
