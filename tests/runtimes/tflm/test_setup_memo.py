"""The kernel-event memo (`setup_memo`): remembered events are the rules' own, on every build, and
a rule that reads beyond the operator's key is never remembered."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from operator import eq
from typing import Any

import pytest

from arenalens.builds.build import Build, as_build
from arenalens.examples import example_bytes
from arenalens.ir import Model, Tensor
from arenalens.runtimes.tflm.kernels import base, setup_memo
from arenalens.runtimes.tflm.kernels import setups as kernel_setups
from arenalens.tflite.reader import parse_model
from tests.conformance.cases import FAMILIES, all_cases

BUILDS = ("host", "cortex-m55/cmsis-nn", "esp32s3/esp-nn")


@pytest.fixture(autouse=True)
def _fresh_memo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An empty memo that never rests (`_Gate`: these tests are about what it answers)."""
    setup_memo.clear()
    monkeypatch.setattr(setup_memo._Gate, "count", lambda gate, found: None)
    monkeypatch.setattr(setup_memo, "_gate", setup_memo._Gate())
    yield
    setup_memo.clear()


def _fresh(data: bytes) -> Model:
    return parse_model(bytes(bytearray(data)), "case.tflite")


def _setups(data: bytes, build: Build) -> Any:
    """Every operator's setup on a newly read model (no per-model cache), or the error."""
    try:
        found = kernel_setups._operator_setups.__wrapped__(_fresh(data), build)  # type: ignore[attr-defined]
    except Exception as error:  # the error is the answer to compare
        return ("raised", type(error).__name__, str(error))
    return tuple((s.registered, s.rule, s.builtin_data, s.init, s.prepare) for s in found)


@pytest.mark.parametrize("name", BUILDS)
@pytest.mark.parametrize("family", FAMILIES)
def test_remembered_events_are_the_rules_own(
    family: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every conformance case on a build of each kernel library: the plain rules' events (memo
    off), then the same with the memo twice, in one process, so that operators of earlier cases
    are recalled (cases share most operators) and every case's own on the second read. (The
    session that added the memo ran the same over every case, shared model and example on 16
    builds: 17,984 model-builds, no difference.)"""
    models = [case.model() for case in all_cases() if case.family == family]
    build = as_build(name)
    with monkeypatch.context() as patched:
        patched.setattr(setup_memo, "recalled", lambda context, compute: compute(context))
        plain = [_setups(data, build) for data in models]
    assert [_setups(data, build) for data in models] == plain
    assert [_setups(data, build) for data in models] == plain


def test_an_operator_seen_before_is_not_set_up_again() -> None:
    """The second model's operators come from the memo: its rules do not run."""
    data = next(c for c in all_cases() if c.id.startswith("CONV_2D.INT8")).model()
    build = as_build("cortex-m7/cmsis-nn")
    calls: list[str] = []
    for _ in range(2):
        model = _fresh(data)
        for subgraph in model.subgraphs:
            for operator in subgraph.operators:
                context = base.KernelContext(model, subgraph, operator, build)

                def counted(context: base.KernelContext) -> setup_memo.KernelEvents:
                    calls.append(context.opcode)
                    return kernel_setups.kernel_events(context)

                setup_memo.recalled(context, counted)
    operators = sum(len(s.operators) for s in _fresh(data).subgraphs)
    assert len(calls) == operators


def test_a_rule_that_reads_the_model_is_not_remembered() -> None:
    """Reads the key does not hold (the model's buffers, another tensor, the operator's index)
    make the result a plain one, every time."""
    build = as_build("host")
    model = _fresh(example_bytes("kws_ds_cnn"))
    subgraph = model.subgraphs[0]
    operator = subgraph.operators[0]
    context = base.KernelContext(model, subgraph, operator, build)
    operands = {*operator.inputs, *operator.outputs, *operator.intermediates}
    outside = next(i for i in range(len(subgraph.tensors)) if i not in operands)
    reads = {
        "buffers": lambda view: len(view.model.buffers),
        "another tensor": lambda view: view.subgraph.tensors[outside].name,
        "the last tensor": lambda view: view.subgraph.tensors[-1].name,
        "the tensor count": lambda view: len(view.subgraph.tensors),
        "every tensor": lambda view: [t.name for t in view.subgraph.tensors],
        "index": lambda view: view.operator.index,
        "position": lambda view: view.operator.position_in_file,
        "subgraph": lambda view: view.subgraph.index,
    }
    for what, read in reads.items():
        setup_memo.clear()
        runs: list[str] = []

        def reading(
            view: base.KernelContext, read: Any = read, runs: list[str] = runs
        ) -> setup_memo.KernelEvents:
            runs.append(str(read(view)))
            return kernel_setups.kernel_events(view)

        for _ in range(3):
            setup_memo.recalled(context, reading)
        # The watched run and the plain one, then only plain runs: never recalled.
        assert len(runs) == 4, what
        assert len(set(runs)) == 1, what  # every view answered as the real objects do
    # What the key holds is read through the views without a note, as the real objects give it.
    watch = setup_memo._Watch()
    view = setup_memo._watched(context, watch)
    assert view.operator.inputs == operator.inputs and view.operator.options == operator.options
    assert view.operator.is_custom == operator.is_custom and view.opcode == operator.opcode
    rule_facts = [
        [getattr(tensor, name) for name in (*setup_memo.RULE_FIELDS, "nbytes", "is_constant")]
        for tensor in (view.input(0), view.input(1), view.output(0))
    ]
    assert rule_facts == [
        [getattr(tensor, name) for name in (*setup_memo.RULE_FIELDS, "nbytes", "is_constant")]
        for tensor in (context.input(0), context.input(1), context.output(0))
    ]
    assert isinstance(view.output(0), Tensor) and view.output(0) is view.output(0)
    assert not watch.beyond


def _an_operand_view() -> tuple[Tensor, Tensor, setup_memo._Watch]:
    """The first operator's first input as its rule sees it on a watched run, the real tensor,
    and the watch."""
    model = _fresh(example_bytes("kws_ds_cnn"))
    subgraph = model.subgraphs[0]
    context = base.KernelContext(model, subgraph, subgraph.operators[0], as_build("host"))
    watch = setup_memo._Watch()
    view = setup_memo._watched(context, watch).input(0)
    real = context.input(0)
    assert view is not None and real is not None
    return view, real, watch


def _field_read(name: str) -> Callable[[Tensor], object]:
    return lambda tensor: getattr(tensor, name)


UNKEYED_READS: dict[str, Callable[[Tensor], object]] = {
    **{name: _field_read(name) for name in Tensor._fields if name not in setup_memo.RULE_FIELDS},
    "has_dynamic_dims": lambda tensor: tensor.has_dynamic_dims,
    "==": lambda tensor: eq(tensor, tensor),
    "hash": hash,
    "subscript": lambda tensor: tensor[1],
    "unpacking": lambda tensor: [*tensor],
    "_replace": lambda tensor: tensor._replace(shape=()),
    "_asdict": lambda tensor: tensor._asdict(),
    "repr": repr,
    "f-string": lambda tensor: f"{tensor}",
    "len": len,
}


@pytest.mark.parametrize("what", sorted(UNKEYED_READS))
def test_a_rule_reading_a_tensor_beyond_the_key_is_noted(what: str) -> None:
    """The key holds an operand's `RULE_FIELDS` only: any other field, or the tensor used as a
    whole (compared, hashed, indexed, printed), is a read beyond it, and answers as the real
    tensor does. (A field added to `Tensor` is noted until it joins `RULE_FIELDS`.)"""
    view, real, watch = _an_operand_view()
    read = UNKEYED_READS[what]
    assert read(view) == read(real)
    assert watch.beyond, what


def test_what_the_key_holds_is_read_without_a_note() -> None:
    view, real, watch = _an_operand_view()
    for name in (*setup_memo.RULE_FIELDS, "element_count", "nbytes", "packed_nbytes"):
        assert getattr(view, name) == getattr(real, name), name
    assert view.is_constant == real.is_constant and not watch.beyond


def _renamed(model: Model, prefix: str) -> Model:
    """The model with every tensor renamed and its shape signature dropped: the same operators
    to every kernel rule."""
    subgraphs = tuple(
        replace(
            subgraph,
            tensors=tuple(
                tensor._replace(name=f"{prefix}{tensor.index}", shape_signature=tensor.shape)
                for tensor in subgraph.tensors
            ),
        )
        for subgraph in model.subgraphs
    )
    return replace(model, subgraphs=subgraphs)


def test_names_are_not_in_the_key_and_recalled_events_hold_the_own_tensors() -> None:
    """A model alike but for its tensors' names gets every operator from the memo (its rules do
    not run), and its temp tensors are its own (names included), as the plain run gives them."""
    build = as_build("cortex-m7/cmsis-nn")
    first = _fresh(example_bytes("kws_ds_cnn"))
    second = _renamed(_fresh(example_bytes("kws_ds_cnn")), "other_")
    calls: list[str] = []

    def counted(context: base.KernelContext) -> setup_memo.KernelEvents:
        calls.append(context.opcode)
        return kernel_setups.kernel_events(context)

    for model in (first, second):
        subgraph = model.subgraphs[0]
        for operator in subgraph.operators:
            context = base.KernelContext(model, subgraph, operator, build)
            events = setup_memo.recalled(context, counted)
            plain = kernel_setups.kernel_events(context)
            assert (events.init, events.prepare) == (plain.init, plain.prepare)
            temps = base.fetched_temps(events.prepare)
            assert temps and all(tensor is subgraph.tensors[tensor.index] for tensor in temps), (
                operator.opcode
            )
    assert len(calls) == len(first.subgraphs[0].operators)


def test_a_rule_that_reads_a_name_gets_its_own_model_s() -> None:
    """A rule whose events name a tensor (a refusal's reason) is not recalled for a model whose
    names differ: the second model's events name its own tensor."""
    build = as_build("host")
    reasons = []
    for model in (
        _renamed(_fresh(example_bytes("kws_ds_cnn")), "first_"),
        _renamed(_fresh(example_bytes("kws_ds_cnn")), "second_"),
    ):
        subgraph = model.subgraphs[0]
        context = base.KernelContext(model, subgraph, subgraph.operators[0], build)

        def naming(view: base.KernelContext) -> setup_memo.KernelEvents:
            found = kernel_setups.kernel_events(view)
            tensor = view.input(0)
            reason = base.Refusal(f"{tensor and tensor.name} refused")
            return found._replace(prepare=(*found.prepare, reason))

        events = setup_memo.recalled(context, naming)
        reasons.append(events.prepare[-1].reason)  # type: ignore[union-attr]
    assert reasons == ["first_0 refused", "second_0 refused"]


def test_pad_reads_its_paddings_and_is_never_remembered() -> None:
    """PAD's output and temp sizes come from the paddings tensor's data (a model read): two
    models alike but for the paddings get their own events."""
    cases = [c for c in all_cases() if c.opcode == "PAD"]
    build = as_build("cortex-m7/reference")
    for case in cases:
        assert _setups(case.model(), build) == _setups(case.model(), build)
    table = setup_memo._table(build)
    assert "PAD" in table.reads_beyond


def test_the_memo_rests_while_operators_do_not_repeat(monkeypatch: pytest.MonkeyPatch) -> None:
    """A window of operators almost never found sends the next ones straight to their rules;
    then a window is tried again, and one where operators repeat keeps the memo on."""
    monkeypatch.undo()  # the real gate
    gate = setup_memo._Gate()
    for found in [True] * 7 + [False] * 57:  # 7 of 64 found: under one in 8
        gate.count(found)
    assert gate.resting == setup_memo._Gate.RESTING
    gate = setup_memo._Gate()
    for found in [True] * 8 + [False] * 56:
        gate.count(found)
    assert gate.resting == 0
    monkeypatch.setattr(setup_memo, "_gate", gate)
    gate.resting = 2
    model = _fresh(example_bytes("kws_ds_cnn"))
    subgraph = model.subgraphs[0]
    context = base.KernelContext(model, subgraph, subgraph.operators[0], as_build("host"))
    runs: list[int] = []

    def counted(view: base.KernelContext) -> setup_memo.KernelEvents:
        runs.append(1)
        return kernel_setups.kernel_events(view)

    for _ in range(4):
        setup_memo.recalled(context, counted)
    # Two plain runs while resting, then a watched one that is remembered, then found.
    assert len(runs) == 3 and gate.resting == 0
