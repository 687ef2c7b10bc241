"""Operand specs: the tensors a kernel takes, by role per input slot → how many inputs and outputs
it accepts and which may be omitted. Runtime-neutral: TFLM's kernel rules state theirs
(`KernelRule.operands`), `diagnose` checks models against them and LiteRT's own table."""

from __future__ import annotations

from arenalens.records import record


@record(slots=True)
class Operands:
    """The tensors a kernel takes, from its Prepare and Eval (the inputs and outputs they fetch,
    `NumInputs` / `NumOutputs` checks, `GetOptionalInputTensor`): a role per input slot, how many
    inputs and outputs it accepts, and which input slots may hold -1 (omitted). Where LiteRT's
    kernel for the builtin accepts more, the looser count is kept: `diagnose` reads these for
    both runtimes and flags only what both reject."""

    inputs: tuple[str, ...]  # the role of each input slot; a variadic kernel's last role repeats
    min_inputs: int
    max_inputs: int | None  # None: any number
    optional: frozenset[int]
    min_outputs: int
    max_outputs: int | None  # None: any number

    def role(self, slot: int) -> str:
        """The role of an input slot ('' past the last one)."""
        if slot < len(self.inputs):
            return self.inputs[slot]
        return self.inputs[-1] if self.inputs and self.max_inputs is None else ""


def operands(*roles: str, outputs: tuple[int, int | None] = (1, 1)) -> Operands:
    """Input roles in slot order → Operands. 'bias?' may be -1 (or left off when no required
    role follows); a last 'input+' repeats, at least once, a last 'input*' any number of times
    (none included)."""
    names = [role.rstrip("?+*") for role in roles]
    optional = frozenset(i for i, role in enumerate(roles) if role.endswith("?"))
    variadic = bool(roles) and roles[-1][-1] in "+*"
    required = [i for i, role in enumerate(roles) if not role.endswith(("?", "*"))]
    minimum = required[-1] + 1 if required else 0
    maximum = None if variadic else len(roles)
    return Operands(tuple(names), minimum, maximum, optional, outputs[0], outputs[1])
