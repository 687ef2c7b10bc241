"""The kernel registry's completeness, generated from the registry itself: every kernel a build
registers has one rule that states every fact about it, and every kernel a library replaces has a
variant that embeds the reference rule and says where the library's kernel differs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from arenalens.builds.build import HOST, REFERENCE
from arenalens.runtimes.tflm.kernels.base import KernelRule
from arenalens.runtimes.tflm.kernels.registry import (
    LIBRARIES,
    REFERENCE_KERNELS,
    REGISTERED,
    library_rule,
    stands_in,
)


def test_every_registered_kernel_has_a_reference_rule() -> None:
    assert sorted(REGISTERED - set(REFERENCE_KERNELS)) == []
    for opcode, rule in REFERENCE_KERNELS.items():
        assert rule.opcode == opcode and rule.library == REFERENCE and rule.reference is None


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_every_replaced_kernel_is_a_variant_of_the_reference_rule(library: str) -> None:
    kernels = LIBRARIES[library]
    assert kernels.name == library
    assert sorted(kernels.replaces - REGISTERED) == []
    assert sorted(set(kernels.rules) - kernels.replaces) == []
    for opcode in sorted(kernels.replaces):
        rule = kernels.rules.get(opcode)
        if rule is None:
            continue  # an estimate until the library's rule exists (stands_in)
        assert rule.opcode == opcode and rule.library == library
        assert rule.reference is REFERENCE_KERNELS[opcode], opcode
        # The library's kernel runs its own loops: it must say how they read and write, even
        # where the answer is "not analysed" (inheriting the reference order would be a guess).
        assert rule.access is not rule.reference.access, opcode


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_a_build_takes_the_variant_where_there_is_one(library: str) -> None:
    kernels = LIBRARIES[library]
    for opcode in sorted(REGISTERED):
        rule = library_rule(opcode, library)
        assert isinstance(rule, KernelRule)
        expected = kernels.rules.get(opcode, REFERENCE_KERNELS[opcode])
        assert rule is expected, opcode
    assert library_rule("CONV_2D", REFERENCE) is REFERENCE_KERNELS["CONV_2D"]


def test_stands_in_names_replaced_kernels_without_a_variant() -> None:
    for library, kernels in LIBRARIES.items():
        build = replace(HOST, kernels=library)
        for opcode in sorted(REGISTERED):
            missing = opcode in kernels.replaces and opcode not in kernels.rules
            assert stands_in(opcode, build) == missing, opcode
