"""Does a model's offline plan hold? Model + build → every reason its OfflineMemoryAllocation would
make the runtime compute wrong outputs.

An offline plan fixes each planned tensor's offset, and TFLM applies the offsets unchecked
(docs/runtime-rules.md §T9). Two tensors the plan gives common bytes while both are live are
right only where a kernel reads every input byte it needs before its output overwrites it, and
that depends on the kernel code path the build runs (`builds.kernel_paths`). The bytes shared,
each judged per code path by the kernels' access orders and narrowed by arenalens' record of the
builds a written plan was made for, are `runtimes.tflm.plan_validity`'s; this module turns them
into the verdict's answer. Such a model gets no size and no FITS: CANNOT RUN CORRECTLY, first.

Two kinds of reason, each a `PlanConflict`:

* `shapes`: tensors share bytes that no kernel code path tolerates: tensors live together, or an
  output over an input its kernel reads later on every build; a plan made for other tensor sizes
  (planned at one input size, run with `--input-shape` at another) is the usual cause.
* `build`: the plan holds only on some builds, not on the one asked about: an overlap the
  reference kernels' access order allows and CMSIS-NN's does not (or the reverse), or a record
  that vouches for other builds only.
"""

from __future__ import annotations

from collections.abc import Sequence

from arenalens.builds.build import HOST, Build
from arenalens.builds.kernel_paths import KernelPath, path_of
from arenalens.ir import Model
from arenalens.records import record
from arenalens.runtimes.door import tflm_runtime

SHAPES = "shapes"
BUILD = "build"
SPLIT_SIZE = "split"
# Problems one conflict names before it counts the rest.
PAIRS_NAMED = 2


@record(slots=True)
class PlanConflict:
    """One reason the model's offline plan makes the runtime compute wrong outputs."""

    kind: str  # SHAPES, BUILD or SPLIT_SIZE
    reason: str  # one sentence: what shares bytes, or which builds the plan holds on
    fix: str  # what to do instead

    def as_dict(self) -> dict[str, str]:
        """JSON form."""
        return {"kind": self.kind, "reason": self.reason, "fix": self.fix}


def plan_conflicts(
    model: Model, build: Build = HOST, *, paths: Sequence[KernelPath] | None = None
) -> tuple[PlanConflict, ...]:
    """Model (at the tensor sizes it will run with) + build → why its offline plan does not hold;
    empty when it has no plan or the plan holds. `paths`: the kernel code paths the firmware may
    run (default: the build's own; a chip that may run vendor kernels has more)."""
    split = split_conflict(model)
    found = [split] if split is not None else []
    if model.offline_plan is None:
        return tuple(found)
    # The access rules (and numpy under them) load only for models that carry a plan.
    everywhere = tflm_runtime().wrong_everywhere(model)
    if everywhere:
        found.append(_shape_conflict(everywhere))
    asked = (path_of(build),) if paths is None else tuple(paths)
    on_paths = {
        path: [
            r for r in tflm_runtime().wrong_outputs(model, path, limit=None) if r not in everywhere
        ]
        for path in asked
    }
    wrong = {path: reasons for path, reasons in on_paths.items() if reasons}
    if wrong:
        found.append(_build_conflict(wrong, build))
    return tuple(found)


def input_shapes(model: Model) -> tuple[tuple[int, ...], ...]:
    """The main subgraph's input shapes, in input order (what a split record names)."""
    main = model.subgraphs[0]
    return tuple(main.tensors[index].shape for index in main.inputs if index >= 0)


def split_conflict(model: Model) -> PlanConflict | None:
    """A model arenalens split at one input size, asked about at another: its bands slice the
    rows of that size, so here it computes other outputs than the model it was split from,
    whatever the plan (None when not split, or at its own size)."""
    record = model.plan_record
    if record is None or not record.split_input_shapes:
        return None
    asked = input_shapes(model)
    if asked == record.split_input_shapes:
        return None
    made = ", ".join("x".join(map(str, shape)) for shape in record.split_input_shapes)
    given = ", ".join("x".join(map(str, shape)) for shape in asked)
    return PlanConflict(
        kind=SPLIT_SIZE,
        reason=f"arenalens split this model at input {made} (its bands slice the rows of that "
        f"size): at {given} it computes other outputs than the model it was split from, "
        "whatever the plan",
        # No command is quoted: the original file is not this one, and a quoted command is one
        # a user may paste as it stands (diagnose's findings are run as printed).
        fix=f"split the original model (the file given to optimize --split) at {given}: "
        "optimize that file with --input-shape at that size and --split",
    )


def _shape_conflict(problems: Sequence[str]) -> PlanConflict:
    named = "; ".join(problems[:PAIRS_NAMED])
    more = len(problems) - PAIRS_NAMED
    return PlanConflict(
        kind=SHAPES,
        reason="the offline plan (OfflineMemoryAllocation) gives tensors common bytes that no "
        f"kernel tolerates: {named}"
        + (f"; and {more} more" if more > 0 else "")
        + ". TFLM applies offline offsets unchecked, so kernels overwrite live tensors "
        "(garbage outputs); a plan made for one input size holds for that size only",
        fix="plan again for the input size the application feeds: `arenalens optimize` "
        "with --input-shape writes a plan for that size (or run the model without the "
        "offline plan)",
    )


def _build_conflict(wrong: dict[KernelPath, list[str]], build: Build) -> PlanConflict:
    first_path, reasons = next(iter(wrong.items()))
    where = ", ".join(path.title for path in wrong)
    named = "; ".join(reasons[:PAIRS_NAMED])
    more = len(reasons) - PAIRS_NAMED
    return PlanConflict(
        kind=BUILD,
        reason=f"the offline plan does not hold on {where} ({build.name} build): {named}"
        + (f"; and {more} more" if more > 0 else ""),
        fix="flash it only with a build it is right on, or run `arenalens optimize --overlap` on "
        f"the original model for the {build.name} build (without --kernels its overlaps hold on "
        "every kernel library the core may run)"
        if first_path.has_rules
        else "no overlap is known to be right on these kernels: run the original model, or one "
        "optimized without --overlap",
    )


__all__ = [
    "BUILD",
    "SHAPES",
    "SPLIT_SIZE",
    "PlanConflict",
    "input_shapes",
    "plan_conflicts",
    "split_conflict",
]
