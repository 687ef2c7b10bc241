"""Kernel rules by opcode, each family module imported when one of its rules is first asked for.

A command checks one model, which uses a handful of operators: importing every family module (and
each kernel library's variants) was most of `arenalens check`'s start. The registry and each
library package list which module holds which operators (`Families`); a module's `RULES` must
name exactly the operators listed for it (checked when it loads; `test_kernel_registry` loads all).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import Protocol, TypeVar


class _Rule(Protocol):
    @property
    def opcode(self) -> str: ...


RuleT = TypeVar("RuleT", bound=_Rule)


class Families(Mapping[str, RuleT]):
    """A read-only table opcode → rule over the modules of `package`: `families` maps a module's
    name to the opcodes of its `RULES`. Asking whether an opcode has a rule imports nothing;
    reading a rule imports its module once."""

    def __init__(self, package: str, families: Mapping[str, tuple[str, ...]]) -> None:
        self._package = package
        self._families = dict(families)
        self._module_of: dict[str, str] = {}
        for module, opcodes in families.items():
            for opcode in opcodes:
                if opcode in self._module_of:
                    raise ValueError(f"two kernel rules for {opcode}")
                self._module_of[opcode] = module
        self._rules: dict[str, RuleT] = {}

    def __getitem__(self, opcode: str) -> RuleT:
        rule = self._rules.get(opcode)
        if rule is None:
            self._load(self._module_of[opcode])  # KeyError: no rule
            rule = self._rules[opcode]
        return rule

    def get(self, opcode: str, default: RuleT | None = None) -> RuleT | None:  # type: ignore[override]
        """The opcode's rule, or `default` when there is none: one look-up once its module is
        loaded (Mapping's own `get` goes through `__getitem__` and a KeyError); the stages ask
        it for every operator."""
        rule = self._rules.get(opcode)
        if rule is not None:
            return rule
        return self[opcode] if opcode in self._module_of else default

    def __contains__(self, opcode: object) -> bool:
        return opcode in self._module_of

    def __iter__(self) -> Iterator[str]:
        return iter(self._module_of)

    def __len__(self) -> int:
        return len(self._module_of)

    def __repr__(self) -> str:
        return f"Families({self._package!r}, {len(self)} rules)"

    def module_of(self, opcode: str) -> str:
        """The module (under the package) that holds the opcode's rule."""
        return f"{self._package}.{self._module_of[opcode]}"

    def _load(self, module: str) -> None:
        rules = import_module(f"{self._package}.{module}").RULES
        found = tuple(rule.opcode for rule in rules)
        if sorted(found) != sorted(self._families[module]) or len(set(found)) != len(found):
            raise ValueError(
                f"{self._package}.{module}.RULES has {found}; the table lists "
                f"{self._families[module]}"
            )
        self._rules.update((rule.opcode, rule) for rule in rules)
