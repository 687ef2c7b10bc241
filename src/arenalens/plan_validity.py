"""Does a model's offline plan hold? Model + build → every reason its OfflineMemoryAllocation would
make the runtime corrupt tensors.

An offline plan fixes each planned tensor's offset for the tensor sizes it was made for, and TFLM
applies the offsets unchecked (docs/runtime-rules.md §T9). Planned for one input size and run at
a larger one, the tensors grow in place: tensors live at the same step share bytes, kernels
overwrite each other's data (garbage outputs), and the highest offset plus size says nothing about
what the device needs. So such a model gets no size and no FITS: CANNOT RUN CORRECTLY, first.

Two kinds of reason, each a `PlanConflict`:

* `shapes`: at the model's tensor sizes (its own, or `--input-shape`'s) two tensors live
  together share bytes, other than the overlaps their kernels' access order allows and Vela's
  ethos-u operators' own (`diagnostics.offline_rules.shared_bytes` judges each pair).
* `build`: the plan holds only on some builds: an overlap that TFLM's reference kernels' access
  order allows and the build's kernel library's (CMSIS-NN's, ESP-NN's) does not, checked on a
  build with that library (`_build_conflicts`, where a record of the builds a written plan was
  proven on also belongs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from arenalens.builds.build import HOST, KERNEL_LIBRARY_TITLES, REFERENCE, Build
from arenalens.ir import Model

if TYPE_CHECKING:  # the offline-plan rules load only for models that carry a plan
    from arenalens.diagnostics.offline_rules import SharedBytes

SHAPES = "shapes"
BUILD = "build"
# Pairs of tensors one conflict names before it counts the rest.
PAIRS_NAMED = 2


@dataclass(frozen=True, slots=True)
class PlanConflict:
    """One reason the model's offline plan would corrupt tensors as the runtime runs it."""

    kind: str  # SHAPES or BUILD
    reason: str  # one sentence: what shares bytes, or which builds the plan holds on
    fix: str  # what to do instead

    def as_dict(self) -> dict[str, str]:
        """JSON form."""
        return {"kind": self.kind, "reason": self.reason, "fix": self.fix}


def plan_conflicts(model: Model, build: Build = HOST) -> tuple[PlanConflict, ...]:
    """Model (at the tensor sizes it will run with) + build → why its offline plan does not hold;
    empty when it has no plan or the plan holds."""
    if model.offline_plan is None:
        return ()
    # The offline-plan rules read the execution timeline; they load only for planned models.
    from arenalens.diagnostics.context import DiagnoseContext  # noqa: PLC0415
    from arenalens.diagnostics.offline_rules import shared_bytes  # noqa: PLC0415

    context = DiagnoseContext(model=model, runtime="tflm", analysis=None, required_alignment=1)
    found = shared_bytes(context)
    return (*_shape_conflicts(model, found), *_build_conflicts(found, build))


def _shape_conflicts(model: Model, found: SharedBytes) -> tuple[PlanConflict, ...]:
    """The plan's tensors live together that share bytes at the model's tensor sizes."""
    from arenalens.diagnostics.offline_rules import shared_bytes_text  # noqa: PLC0415

    corrupting = found.corrupting
    if not corrupting:
        return ()
    named = "; ".join(shared_bytes_text(model, *pair) for pair in corrupting[:PAIRS_NAMED])
    more = len(corrupting) - PAIRS_NAMED
    count = f"{len(corrupting)} pairs of tensors live" if len(corrupting) > 1 else "two tensors"
    return (
        PlanConflict(
            kind=SHAPES,
            reason=f"the offline plan (OfflineMemoryAllocation) puts {count} at the same step in "
            f"common bytes at these tensor sizes: {named}"
            + (f"; and {more} more" if more > 0 else "")
            + ". TFLM applies offline offsets unchecked, so kernels overwrite live tensors "
            "(garbage outputs); a plan made for one input size holds for that size only",
            fix="plan again for the input size the application feeds: `arenalens optimize` "
            "with --input-shape writes a plan for that size (or run the model without the "
            "offline plan)",
        ),
    )


def _build_conflicts(found: SharedBytes, build: Build) -> tuple[PlanConflict, ...]:
    """Overlaps the plan relies on that the build's kernel library does not allow.

    Each shared pair is judged by the reference kernels' access order and every library's; a
    plan that needs the reference kernels' order computes garbage on a build whose library
    (CMSIS-NN, ESP-NN) walks those operators otherwise."""
    if build.kernels == REFERENCE:
        return ()
    unsafe = sorted(
        {
            f"{pair.opcode} (op {pair.operator})"
            for pair, on in found.safe
            if build.kernels not in on
        }
    )
    if not unsafe:
        return ()
    listed = ", ".join(unsafe[:6]) + (f", ... {len(unsafe) - 6} more" if len(unsafe) > 6 else "")
    title = KERNEL_LIBRARY_TITLES[build.kernels]
    return (
        PlanConflict(
            kind=BUILD,
            reason=f"the offline plan lets outputs start below inputs they consume as TFLM's "
            f"reference kernels allow, but the {title} kernels of {listed} may read input bytes "
            f"back after writing there: on the {build.name} build they compute garbage",
            fix="write the plan for this build: `arenalens optimize` on the original model "
            f"with --overlap --kernels {build.kernels} (only overlaps safe with both kernel sets)",
        ),
    )
