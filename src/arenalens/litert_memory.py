"""LiteRT as deployed: the memory an app needs for one model on a Linux-class device.

A LiteRT app holds the model file (memory-mapped or read: the interpreter reads every weight,
and XNNPACK repacks them) and the interpreter's heap, whose peak comes during the first invoke
(`runtimes/litert/heap.py`: the interpreter's structures, its arenas, the kernels' first-invoke
buffers, with XNNPACK its packed weights and workspace). `check --runtime litert` compares their
sum with the device's RAM less what the operating system and the rest of the app keep (the
device's profile in `targets.json`), under the delegate the app runs: XNNPACK unless told
otherwise, as LiteRT applies it by default.

The figures are for one ISA (`runtimes/litert/isa.py`): `--isa`, else a Linux device's ISA and
core, else the machine arenalens runs on, detected from its CPU as cpuinfo and XNNPACK would
(`ARENALENS_ISA` pins it). Two profiles are replays checked against the real wheel on a CPU of
their class (x86-64 with AVX-512 and AMX; AVX2 on a first-generation AMD Zen); on the others
XNNPACK and ruy pack to tiles the figure takes the largest of and XNNPACK's operator objects
differ: the figure is then an estimate that errs high, checked against the real wheel under
qemu-user where one exists (tests/data/litert_heap_isa.json), and says so (`heap.machine`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from arenalens.cannot_run import Refusal
from arenalens.declared import (
    LITERT_MEMORY,
    DeclaredArena,
    DeclaredPart,
    Status,
    declared_arena,
)
from arenalens.errors import UsageError

if TYPE_CHECKING:
    from arenalens.ir import Model, Subgraph
    from arenalens.pipeline import Analysis
    from arenalens.runtimes import MemoryBudget, Obstacle
    from arenalens.runtimes.litert.heap import InterpreterHeap
    from arenalens.runtimes.litert.heap_xnnpack import CreateFailure, XnnpackPartition
    from arenalens.runtimes.litert.isa import IsaProfile
    from arenalens.runtimes.litert.xnnpack_zero_points import ZeroPointFailure
    from arenalens.targets import Target

DEFAULT_DELEGATE = "xnnpack"  # LiteRT applies XNNPACK unless the app says otherwise
DELEGATE_TITLES = {"xnnpack": "XNNPACK", "none": "builtin kernels"}
_PHASE_WORDS = {
    "setup": "after setup",
    "first_invoke": "kept from the first invoke",
    "transient": "held during the first invoke only",
}


def delegate_title(delegate: str) -> str:
    """'XNNPACK' | 'builtin kernels'."""
    return DELEGATE_TITLES[delegate]


def threads_words(threads: int) -> str:
    """', N threads' above one thread (Interpreter(num_threads=N)), '' at the default 1: every
    LiteRT heap figure's label says it (the memory's symbol, the heap tables' titles)."""
    return f", {threads} threads" if threads > 1 else ""


def memory_assumptions(declared: DeclaredArena) -> tuple[str, ...]:
    """What a LiteRT memory figure (`litert_memory`) assumes: its delegate, threads, wheel and
    machine as its `device` names them, not the arena budget's (builtin kernels, one thread,
    the measuring machine), which hold for the arenas alone."""
    return (
        f"{declared.device}: the model file plus the interpreter's peak heap",
        "the app holds the model file (memory-mapped or read) for as long as the interpreter",
        "each arena is its own heap block of its high-water mark (aligned_alloc, 64 B)",
    )


def isa_profile(isa: str) -> IsaProfile:
    """An --isa name ('' for the machine the heap was measured on) → its profile; UsageError
    naming the choices for another."""
    from arenalens.runtimes.litert.isa import profile  # noqa: PLC0415 - LiteRT only

    try:
        return profile(isa)
    except ValueError as error:
        raise UsageError(f"--isa: {error}") from None


def target_isa(target: Target | None, isa: str = "") -> str:
    """The ISA a figure is for: --isa when given, else a Linux device's (its ISA refined by
    its core: dot product, i8mm), else '' (the measuring machine)."""
    if isa or target is None or not target.isa:
        return isa
    from arenalens.runtimes.litert.isa import device_isa  # noqa: PLC0415 - LiteRT only

    return device_isa(target.isa, target.cpu)


def arenas_on_device(analysis: Analysis, target: Target | None, isa: str = "") -> Analysis:
    """LiteRT's arenas for a Linux device (--target; `isa` an --isa that overrides its ISA): the
    same bytes, labelled for the device.

    On Linux the arenas do not follow the ISA (LiteRT's sources): ArenaPlanner and
    SimpleMemoryArena are one code, offsets aligned to kDefaultTensorAlignment (64) everywhere;
    an arena tensor's bytes are its shape times its element size (no pointer is stored in one);
    libstdc++'s unordered_set and sort order the placement alike; IsMobilePlatform() (the
    oversized im2col fallback) is false on Linux; at one thread CONV_2D plans the same im2col
    under Eigen's kernel (x86-64) and ruy's (Arm), and the one temporary sized by the ISA, the
    optimized 4-bit FULLY_CONNECTED's packed input rows, packs 4 rows on aarch64 NEON as on
    x86-64's SSE (1 on armv7's NEON: fewer bytes). So the figure checked on the x86-64 wheel is
    an arm64 device's: on 98 models the aarch64 wheel's tensor addresses equal the prediction,
    arena by arena and tensor by tensor (tests/data/litert_arena_arm64.json, `python -m
    tests.litert_arena_arm64`). Android builds LiteRT with libc++, whose hashing and sort break
    ties between tensors otherwise (not modelled): there the figure is an estimate."""
    if analysis.runtime != "litert" or target is None or not target.isa:
        return analysis
    from arenalens.runtimes.litert.rules import CHECKED_BUILD  # noqa: PLC0415 - LiteRT only

    family = isa_profile(isa).family if isa else target.isa
    android = "android" in target.os.lower()
    system = "Android" if android else "Linux"
    same = "the same arenas as" if family != "armv7" else "at most the arenas of"
    device = (
        f"LiteRT CPU runtime on {target.title} ({system} {family}; {same} Linux x86-64, where "
        "they are checked" + (", estimated)" if android else ")")
    )
    if android:
        assumption = (
            f"num_threads = 1; Android {family}, libc++ build: the arenas of Linux x86-64's "
            "libstdc++ build, whose hash order and sort place tensors of equal size and "
            "lifetime; libc++ breaks those ties otherwise (not modelled)"
        )
    else:
        rows = (
            "byte for byte (one planner, 64 B alignment, the kernels' Prepare; a 4-bit "
            "FULLY_CONNECTED packs 4 input rows on both)"
            if family != "armv7"
            else "or fewer bytes (one planner, 64 B alignment, the kernels' Prepare; a 4-bit "
            "FULLY_CONNECTED packs 1 input row on armv7, 4 on x86-64)"
        )
        assumption = (
            f"num_threads = 1; Linux {family} libstdc++ build ({target.os}): its arenas are "
            f"x86-64's {rows}"
        )
    estimate = (
        (
            "Android's libc++ orders tensors of equal size and lifetime otherwise than the "
            "libstdc++ build the arenas are replayed for: the placement may differ",
        )
        if android
        else ()
    )

    def relabel(budget: MemoryBudget) -> MemoryBudget:
        assumptions = tuple(
            assumption if line == CHECKED_BUILD else line for line in budget.assumptions
        )
        return replace(
            budget,
            device=device,
            assumptions=assumptions,
            estimate_reasons=(*budget.estimate_reasons, *estimate),
        )

    return replace(
        analysis,
        budget=relabel(analysis.budget),
        runtime_budget=relabel(analysis.runtime_budget),
    )


def interpreter_heap_of(
    analysis: Analysis, delegate: str, threads: int = 1, isa: str = ""
) -> InterpreterHeap:
    """The analysis's model and LiteRT arenas → the interpreter's heap under `delegate` with
    `threads` threads on `isa`; UsageError when an operator's heap is not modelled that way."""
    from arenalens.runtimes.litert.heap import (  # noqa: PLC0415 - LiteRT only
        interpreter_heap,
        xnnpack_unsized,
    )

    profile = isa_profile(isa)
    model = analysis.model
    if delegate == "xnnpack" and xnnpack_unsized(model):
        raise UsageError(
            f"{model.name}: the XNNPACK heap is not modelled for "
            f"{', '.join(xnnpack_unsized(model))}; check it with --delegate none (the builtin "
            "kernels, OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)"
        )
    unsized = heap_unsized(analysis)
    if unsized:
        raise UsageError(f"{model.name}: {unsized}")
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    try:
        return interpreter_heap(model, sizes, delegate=delegate, threads=threads, isa=profile)
    except ValueError as error:  # threads > 1 with a kernel whose threaded heap is not modelled
        raise UsageError(f"{model.name}: {error}; check it with --threads 1") from None


def heap_unsized(analysis: Analysis) -> str:
    """Why the model gets no interpreter heap under any delegate, '' when it gets one: an IF
    or WHILE that runs Eval_dynamic (`heap_control_flow.control_flow_refusal`). check says it
    as its one-line error; plan, report and their JSON (`interpreter_heap_unsized`) say it
    where the heap would be."""
    from arenalens.runtimes.litert.heap_control_flow import (  # noqa: PLC0415 - LiteRT only
        control_flow_refusal,
        control_flow_unsized,
    )

    model = analysis.model
    return control_flow_refusal(model) if control_flow_unsized(model) else ""


def xnnpack_refusals(model: Model) -> tuple[Refusal, ...]:
    """The operators the XNNPACK delegate takes and then fails to create: allocate_tensors()
    fails under it (`heap_xnnpack.create_failures`), one refusal per opcode; the builtin kernels
    may still run the model (--delegate none). XNNPACK's partition of each subgraph is
    computed once here, for the creation and zero-point checks alike."""
    from arenalens.runtimes.litert.heap_xnnpack import (  # noqa: PLC0415
        create_failures,
        partition,
    )

    partitions = tuple(partition(subgraph, model) for subgraph in model.subgraphs)
    by_opcode: dict[str, list[CreateFailure]] = {}
    for failure in create_failures(model, partitions):
        by_opcode.setdefault(failure.opcode, []).append(failure)
    return (
        _value_refusals(model)
        + _variable_refusals(model)
        + _blockwise_refusals(model)
        + _attention_refusals(model)
        + _zero_point_refusals(model, partitions)
        + tuple(_refusal(opcode, failures) for opcode, failures in by_opcode.items())
    )


def _blockwise_refusals(model: Model) -> tuple[Refusal, ...]:
    """int4 blockwise FULLY_CONNECTEDs whose scales XNNPACK's datatype check refuses after the
    delegate took them (xnnpack_blockwise.datatype_failures)."""
    from arenalens.runtimes.litert.xnnpack_blockwise import datatype_failures  # noqa: PLC0415

    return tuple(
        _taken_then_refused(
            subgraph,
            operator,
            what,
            fix="write one fp16 scale per block of each output channel, or check it with "
            "--delegate none (the builtin kernels run it)",
        )
        for subgraph in model.subgraphs
        for operator, what in datatype_failures(model, subgraph)
    )


def _attention_refusals(model: Model) -> tuple[Refusal, ...]:
    """Attentions the delegate takes whose key heads do not divide the query's
    (xnnpack_attention.head_failures)."""
    from arenalens.runtimes.litert.xnnpack_attention import head_failures  # noqa: PLC0415

    return tuple(
        _taken_then_refused(
            subgraph,
            operator,
            "its key heads do not divide its query heads "
            "('query_proj.dims->data[2] % key_proj.dims->data[2] != 0')",
            fix="convert the attention with as many key heads as query heads, one, or a "
            "divisor of them",
        )
        for subgraph in model.subgraphs
        for operator in head_failures(subgraph)
    )


def _zero_point_refusals(
    model: Model, partitions: tuple[XnnpackPartition, ...]
) -> tuple[Refusal, ...]:
    """Per-channel int8 tensors with a non-zero zero point in operators the delegate takes
    (xnnpack_zero_points.zero_point_failures; `partitions`: heap_xnnpack.partition's, one per
    subgraph)."""
    from arenalens.runtimes.litert.xnnpack_zero_points import zero_point_failures  # noqa: PLC0415

    fix = (
        "quantize it symmetrically (every zero point 0, as the converter writes filters), or "
        "check it with --delegate none (the builtin kernels run it)"
    )
    return tuple(
        _taken_then_refused(subgraph, failure.operator, _zero_point_words(failure), fix)
        for subgraph in model.subgraphs
        for failure in zero_point_failures(model, subgraph, partitions[subgraph.index].delegated)
    )


def _zero_point_words(failure: ZeroPointFailure) -> str:
    point, tensor, channel = failure.zero_point, failure.tensor, failure.channel
    if channel < 0:
        return (
            f"its int8 filter (tensor {tensor}) has zero point {point}, which XNNPACK's "
            f"definition of the operator refuses ('unsupported quantization zero point {point} "
            "for datatype qint8')"
        )
    return (
        f"its INT8 tensor {tensor} is quantized per channel with zero point {point} in channel "
        f"{channel} ('unsupported zero-point value ({point}) in channel {channel} of INT8 "
        f"tensor {tensor}')"
    )


def _variable_refusals(model: Model) -> tuple[Refusal, ...]:
    """8-bit variable accesses the delegate takes whose value is quantized otherwise than
    the variable's first access (xnnpack_variables.quantization_failures)."""
    from arenalens.runtimes.litert.xnnpack_variables import quantization_failures  # noqa: PLC0415

    return tuple(
        _taken_then_refused(
            subgraph,
            operator,
            f"its value (tensor {value}) is quantized otherwise than the variable's (tensor "
            f"{resource}) first access: 'failed to delegate "
            f"{subgraph.operators[operator].opcode} node #{operator}'",
            fix="give every value read from or assigned to a variable the same scale and zero "
            "point, or check it with --delegate none (the builtin kernels)",
        )
        for subgraph in model.subgraphs
        for operator, resource, value in quantization_failures(subgraph)
    )


def _taken_then_refused(subgraph: Subgraph, operator: int, why: str, fix: str) -> Refusal:
    """An operator the XNNPACK delegate takes, then refuses at its Prepare for `why`: setup
    fails under XNNPACK, and LiteRT does not fall back to the builtin kernel."""
    return Refusal(
        reason=f"the XNNPACK delegate takes it but {why}, so the delegate's Prepare and "
        "allocate_tensors() fail; LiteRT does not fall back",
        phase="setup",
        opcode=subgraph.operators[operator].opcode,
        operators=((subgraph.index, operator),),
        fix=fix,
    )


def _refusal(opcode: str, failures: list[CreateFailure]) -> Refusal:
    scale = f"{max(f.scale for f in failures):,.6g}"
    if failures[0].phase == "invoke":  # an int8 BATCH_MATMUL with a constant B
        reason = (
            "XNNPACK fails to create it (requantization scale, A's scale x B's scale / "
            f"output scale, {scale} is over 255), yet allocate_tensors() succeeds and the "
            "first invoke() crashes the process (segmentation fault); LiteRT does not fall back"
        )
        limit = "A's scale x B's scale / 255"
    else:
        reason = (
            "XNNPACK fails to create it (requantization scale, input scale x filter scale / "
            f"output scale, {scale} is 256 or more), so the delegate's Prepare and "
            "allocate_tensors() fail; LiteRT does not fall back"
        )
        limit = "input scale x filter scale / 256"
    return Refusal(
        reason=reason,
        phase=failures[0].phase,
        opcode=opcode,
        operators=tuple((f.subgraph, f.operator) for f in failures),
        fix="check it with --delegate none (the builtin kernels, "
        "OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES), or requantize the layer so that "
        f"its output scale is above {limit}",
    )


def _value_refusals(model: Model) -> tuple[Refusal, ...]:
    """Custom poolings the delegate takes whose indices XNNPACK has no value type for
    (xnnpack_custom.value_failures): allocate_tensors() fails under it."""
    from arenalens.runtimes.litert.xnnpack_custom import value_failures  # noqa: PLC0415

    return tuple(
        Refusal(
            reason=f"the XNNPACK delegate takes it but has no value type for its {failure.dtype} "
            f"indices (tensor {failure.tensor}): 'failed to create XNNPACK Value', so the "
            "delegate's Prepare and allocate_tensors() fail; LiteRT does not fall back, and its "
            "builtin kernels have no kernel for it",
            phase="setup",
            opcode=failure.opcode,
            operators=((failure.subgraph, failure.operator),),
            fix="write the indices as float32 (as MediaPipe's kernels do), or register a kernel "
            "for the custom operator in the application's op resolver",
        )
        for failure in value_failures(model)
    )


def builtin_only_obstacles(analysis: Analysis) -> tuple[Obstacle, ...]:
    """The obstacles that stop the builtin kernels only: a builtin kernel's Prepare check on an
    operator the XNNPACK delegate takes never runs under it (its Prepare is the delegate's).
    A READ_VARIABLE before any assignment is moot too when the delegate proxies its resource
    though the read stays builtin (a rank-0 read): the delegate kernel holding the resource's
    VAR_HANDLE makes the variable first (the 2.3.0 wheel runs scalar_read_model's orders)."""
    obstacles = analysis.budget.obstacles
    if not any(obstacle.builtin_prepare for obstacle in obstacles):
        return ()
    from arenalens.runtimes.litert import xnnpack_custom, xnnpack_variables  # noqa: PLC0415
    from arenalens.runtimes.litert.heap_xnnpack import partition  # noqa: PLC0415

    model = analysis.model
    taken = {
        (subgraph.index, operator)
        for subgraph in model.subgraphs
        for operator in (
            *partition(subgraph, model).delegated,
            *xnnpack_custom.taken(model, subgraph),
        )
    }
    for obstacle in obstacles:
        if obstacle.subgraph is None or obstacle.operator is None:
            continue
        subgraph = model.subgraphs[obstacle.subgraph]
        if xnnpack_variables.proxied_read(subgraph, obstacle.operator):
            taken.add((obstacle.subgraph, obstacle.operator))
    return tuple(
        obstacle
        for obstacle in obstacles
        if obstacle.builtin_prepare and (obstacle.subgraph, obstacle.operator) in taken
    )


@dataclass(frozen=True)
class DelegateVerdict:
    """Whether LiteRT runs the model under one delegate, computed once (`delegate_verdict`) and
    rendered by every command: plan, check, diagnose, report, export and their batches."""

    delegate: str  # "xnnpack" | "none"
    # What stops LiteRT under it (empty: it runs): the builtin kernels' refusals the delegate
    # leaves to them, then the delegate's own refusals, one per operator.
    obstacles: tuple[Obstacle, ...]
    # The builtin kernels' refusals of operators the delegate takes (XNNPACK): they stop an app
    # without it only (`--delegate none`).
    builtin_only: tuple[Obstacle, ...]
    refusals: tuple[Refusal, ...]  # the delegate's own (XNNPACK fails to create the operator)
    # The arenas' figure under it (plan's and export's headline): always the builtin kernels'
    # arenas; where only the builtin kernels refuse the model, it says so.
    declared: DeclaredArena

    @property
    def runs(self) -> bool:
        """False when LiteRT cannot set the model up or invoke it under this delegate."""
        return not self.obstacles


def delegate_verdict(analysis: Analysis, delegate: str) -> DelegateVerdict:
    """The analysis's LiteRT model under `delegate` ('xnnpack' | 'none'): what stops it, and
    the arenas' figure as that delegate's answer. With XNNPACK the builtin kernels' refusals of
    operators it takes stop nothing (`builtin_only_obstacles`) and the operators it takes and
    then fails to create stop it (`xnnpack_refusals`)."""
    if delegate != "xnnpack":
        return DelegateVerdict(
            delegate, analysis.budget.obstacles, (), (), declared_arena(analysis)
        )
    moot = builtin_only_obstacles(analysis)
    kept = tuple(obstacle for obstacle in analysis.budget.obstacles if obstacle not in moot)
    arenas = declared_arena(
        replace(analysis, budget=replace(analysis.budget, obstacles=kept)) if moot else analysis
    )
    refused = xnnpack_refusals(analysis.model)
    if refused and not kept:  # the builtin kernels' own refusals, when left, are said first
        arenas = replace(
            arenas,
            device=f"LiteRT with {delegate_title(delegate)}",
            status=Status.CANNOT_RUN,
            reasons=tuple(refusal.text() for refusal in refused),
            refusals=refused,
        )
    elif moot:
        arenas = replace(
            arenas,
            device=f"{arenas.device}; the builtin kernels' arenas: they cannot run the model "
            "(--delegate none), XNNPACK (LiteRT's default) takes the operators they refuse",
        )
    return DelegateVerdict(delegate, kept + _refusal_obstacles(refused), moot, refused, arenas)


def _refusal_obstacles(refusals: tuple[Refusal, ...]) -> tuple[Obstacle, ...]:
    """A delegate's refusals as obstacles, one per operator (JSON's `cannot_run` rows)."""
    from arenalens.runtimes import Obstacle  # noqa: PLC0415

    return tuple(
        Obstacle(
            reason=refusal.reason,
            phase=refusal.phase,
            subgraph=subgraph,
            operator=operator,
            opcode=refusal.opcode,
            fix=refusal.fix,
        )
        for refusal in refusals
        for subgraph, operator in refusal.operators or ((None, None),)
    )


def heap_documents_of(
    analysis: Analysis, *, threads: int = 1, isa: str = "", first: str = DEFAULT_DELEGATE
) -> list[dict[str, object]]:
    """The interpreter's heap under each delegate that runs the model (`delegate_verdict`),
    `first` first, as JSON (plan, export, report); a delegate under which LiteRT cannot run the
    model gets no figures, and the others' notes say so."""
    from arenalens.runtimes.litert.heap import DELEGATES  # noqa: PLC0415
    from arenalens.runtimes.litert.heap_json import heap_documents  # noqa: PLC0415

    running, notes = [], []
    for delegate in DELEGATES:
        verdict = delegate_verdict(analysis, delegate)
        if verdict.runs:
            running.append(delegate)
        else:
            notes.append(
                f"with {'XNNPACK' if delegate == 'xnnpack' else 'the builtin kernels only'} "
                f"(--delegate {delegate}) LiteRT cannot run the model, so no heap: "
                + "; ".join(verdict.declared.reasons)
            )
    sizes = [result.runtime_plan.arena_size for result in analysis.arenas]
    documents = heap_documents(
        analysis.model,
        sizes,
        threads=threads,
        isa=isa_profile(isa),
        delegates=tuple(running),
        absent=tuple(notes),
    )
    return sorted(documents, key=lambda document: document["delegate"] != first)


def heap_fields(
    analysis: Analysis, *, threads: int = 1, isa: str = "", first: str = DEFAULT_DELEGATE
) -> dict[str, object]:
    """The JSON documents' heap fields (plan --json, export --format json): `interpreter_heap`
    (`heap_documents_of`), and `interpreter_heap_unsized`, why there is none, when there is
    none for that reason (`heap_unsized`)."""
    fields: dict[str, object] = {
        "interpreter_heap": heap_documents_of(analysis, threads=threads, isa=isa, first=first)
    }
    unsized = heap_unsized(analysis)
    if unsized:
        fields["interpreter_heap_unsized"] = unsized
    return fields


def litert_memory(
    analysis: Analysis, delegate: str, *, isa: str = "", threads: int = 1
) -> DeclaredArena:
    """The memory a LiteRT app needs for the model: the model file + the interpreter's peak
    heap under `delegate` with `threads` threads, part by part, on `isa` (an --isa name, '' for
    the default: isa.default_isa). A model LiteRT cannot run, or whose input size is
    unknown, keeps its arena verdict (no number)."""
    verdict = delegate_verdict(analysis, delegate)
    arenas = verdict.declared
    if not arenas.status.gives_a_number:
        if arenas.refusals and arenas.refusals is verdict.refusals:  # the delegate's own
            symbol = f"{LITERT_MEMORY} ({delegate_title(delegate)}{threads_words(threads)})"
            return replace(arenas, symbol=symbol)
        return arenas
    heap = interpreter_heap_of(analysis, delegate, threads, isa)
    parts = (
        DeclaredPart(
            "model file",
            analysis.model.file_bytes,
            "the .tflite the app maps or reads: the interpreter reads every weight from it",
        ),
        *(
            DeclaredPart(part.name, part.nbytes, f"{_PHASE_WORDS[part.phase]}: {part.meaning}")
            for part in heap.parts
            if part.nbytes
        ),
    )
    reasons = list(arenas.reasons)
    if not heap.exact and heap.estimate:
        reasons.append(heap.estimate)
    status = arenas.status
    if status is Status.EXACT and reasons:
        status = Status.ESTIMATE
    return replace(
        arenas,
        symbol=f"{LITERT_MEMORY} ({delegate_title(delegate)}{threads_words(threads)})",
        required_bytes=sum(part.nbytes for part in parts),
        parts=parts,
        device=f"LiteRT with {delegate_title(delegate)}"
        + threads_words(threads)
        + ", "
        + heap.machine,
        status=status,
        reasons=tuple(reasons),
    )
