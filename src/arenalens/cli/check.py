"""`arenalens check MODEL --budget SIZE | --target NAME|all [--max-input]`: will it fit, on which
boards, and how large an input can it take? Exit 0 yes, 1 no, 2 error."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

# The lists of every board, chip and Linux device through the module: each is built when first
# read (targets.__getattr__), and a check on one board builds that board only.
from arenalens import targets
from arenalens.builds.build import Build, with_kernels_named
from arenalens.cli.batch import ModelResult, add_models_argument, run_command, working
from arenalens.cli.command_line import rerun, with_option, without_options
from arenalens.cli.common import (
    add_build_options,
    add_delegate_option,
    add_input_shape_option,
    add_isa_option,
    add_output_options,
    add_reserve_option,
    add_runtime_option,
    add_threads_option,
    build_after_model_refusals,
    isa_option,
    load_with_input_shapes,
    print_json,
    print_text,
    reserve_option,
    runtime_for,
    selected_build,
    terminal_width,
    threads_option,
    use_color,
    with_table,
)
from arenalens.declared import Status, declared_arena
from arenalens.effort import OPTIMIZE_EFFORT
from arenalens.errors import ModelError, UnplacedValueError, UsageError
from arenalens.fit import FitCheck, board_fits, check_fit, with_ladder
from arenalens.ir import Model
from arenalens.next_steps import Asked
from arenalens.pipeline import Analysis, analyze
from arenalens.target_build import rewrite_rules, target_build
from arenalens.targets import ALL_TARGETS, Target, get_target, target_document
from arenalens.units import SIZE_HELP, parse_size
from arenalens.verdict import Verdict, board_row, verdict_for

if TYPE_CHECKING:  # the remedy ladder and the input search load when a check needs them
    from arenalens.max_input import InputSearch
    from arenalens.optimization import Optimization

EXIT_FITS = 0
EXIT_DOES_NOT_FIT = 1
_COLUMNS = (
    ("required", "needs (B)"),
    ("available", "available (B)"),
    ("headroom", "headroom (B)"),
    ("verdict", "verdict"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `check` command's options (its help texts: `cli.COMMAND_TEXTS`)."""
    add_models_argument(parser, required=False)
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--budget", metavar="SIZE", help=f"RAM for the arena: {SIZE_HELP}")
    budget.add_argument(
        "--target",
        metavar="NAME",
        help="a board or chip preset: its largest static block is the budget "
        "(see --list-targets); 'all' checks every board and prints one row per board",
    )
    add_reserve_option(parser)
    add_runtime_option(parser, default=None)
    add_delegate_option(parser)
    add_threads_option(parser)
    add_isa_option(parser)
    add_build_options(parser)
    parser.add_argument(
        "--planner",
        default=None,
        metavar="NAME",
        help="check the plan of this planner (e.g. the one `optimize` wrote) instead of the "
        "runtime's own",
    )
    add_npu_options(parser)
    parser.add_argument(
        "--max-input",
        action="store_true",
        help="search the largest input height x width (same aspect ratio and channels; shapes "
        "propagated by the real LiteRT interpreter, extra 'runtime') whose arena fits",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help=f"with --target all: list every board (default: the {12} most useful)",
    )
    parser.add_argument(
        "--list-targets",
        action="store_true",
        help="list the board and chip presets with their core, RAM and sources",
    )
    add_input_shape_option(parser)
    add_output_options(parser)


def add_npu_options(parser: argparse.ArgumentParser) -> None:
    """--fast-memory and --weights-in-sram: what firmware gives a Vela-compiled model's NPU."""
    parser.add_argument(
        "--fast-memory",
        metavar="SIZE",
        help="the fast_memory_size your firmware gives ethosu_init() (Ethos-U, a model compiled "
        "for Dedicated_Sram): smaller than the model's fast scratch, the driver refuses every "
        "inference (DOES NOT FIT); default: what the model needs",
    )
    parser.add_argument(
        "--weights-in-sram",
        action="store_true",
        help="the model was compiled with Vela's Sram_Only memory mode: its weights and command "
        "stream sit in SRAM too and need a place in a bank the NPU reaches",
    )


def run(args: argparse.Namespace) -> int:
    """List targets, or check one model (verdict / board table) or many (summary table)."""
    if args.list_targets:
        return _list_targets(args)
    if not args.models:
        raise UsageError("check: give at least one MODEL (or --list-targets)")
    args.runtime = runtime_for(args)
    threads_option(args)
    isa_option(args)
    _budget_options(args)  # fail fast, before any model is read
    build_after_model_refusals(args, args.models)
    if _all_boards(args) and args.max_input:
        raise UsageError("--max-input needs one budget: give --target NAME or --budget SIZE")
    return run_command(args, check_worker, _single, _batch_columns(args), title="arenalens check")


def _batch_columns(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    """The batch table's columns; on a board with RAM banks, where each row's headroom is."""
    target = None if args.target is None or _all_boards(args) else get_target(args.target)
    if target is None or len(target.banks) < 2:
        return _COLUMNS
    return (*_COLUMNS[:2], ("in", "in"), *_COLUMNS[2:])


def litert_options(args: argparse.Namespace) -> dict[str, Any]:
    """--delegate, --threads and --isa as check_fit takes them (LiteRT's figure)."""
    return {
        "delegate": getattr(args, "delegate", None),
        "threads": getattr(args, "threads", 1),
        "isa": getattr(args, "isa", "") or "",
    }


def _all_boards(args: argparse.Namespace) -> bool:
    return args.target is not None and args.target.strip().lower() == ALL_TARGETS


def _budget_options(args: argparse.Namespace) -> tuple[int | None, Target | None, int | None]:
    if args.budget is None and args.target is None:
        raise UsageError("check: give --budget SIZE or --target NAME (see --list-targets)")
    budget = None if args.budget is None else parse_size(args.budget)
    target = None if args.target is None or _all_boards(args) else get_target(args.target)
    if budget is not None and budget <= 0:
        raise UsageError(f"--budget must be positive, got '{args.budget}'")
    return budget, target, reserve_option(args)


def _analysis(args: argparse.Namespace, model: Model, build: Build | None = None) -> Analysis:
    return analyze(
        model, runtime=args.runtime, build=build or selected_build(args), planner=args.planner
    )


def optimized(
    args: argparse.Namespace, model: Model, build: Build | None = None
) -> Optimization | None:
    """What `arenalens optimize` writes (TFLM, runtime plan only), else None: its
    `new_required_bytes` is the number to declare after it, computed as the suggested command
    computes it (`optimize_model` at optimize's own effort), so running the command declares
    this."""
    planner = args.planner[0] if isinstance(args.planner, list) else args.planner
    if args.runtime != "tflm" or planner is not None:
        return None
    from arenalens.optimization import optimize_model  # noqa: PLC0415 - only when it decides

    # The command check suggests names the build's kernels (`build_flags`): the number is that
    # build's alone.
    chosen = with_kernels_named(build or selected_build(args))
    with working(args, "optimizing to see what fits"):
        return optimize_model(model, effort=OPTIMIZE_EFFORT, build=chosen)


def asked(args: argparse.Namespace, argument: str, *, findings: int = 0) -> Asked:
    """What the user asked, for the commands the next steps print."""
    return Asked(
        argument=argument,
        input_shapes=tuple(getattr(args, "input_shape", None) or ()),
        runtime=args.runtime,
        delegate=getattr(args, "delegate", None),
        threads=getattr(args, "threads", 1),
        isa=getattr(args, "isa", "") or "",
        cpu=getattr(args, "cpu", None),
        kernels=getattr(args, "kernels", None),
        findings=findings,
    )


def npu_options(args: argparse.Namespace) -> dict[str, Any]:
    """--fast-memory and --weights-in-sram as check_fit takes them (commands without them: the
    defaults)."""
    fast_memory = getattr(args, "fast_memory", None)
    return {
        "fast_memory_bytes": None if fast_memory is None else parse_size(fast_memory),
        "weights_in_sram": bool(getattr(args, "weights_in_sram", False)),
    }


def fit_check(args: argparse.Namespace, model: Model, analysis: Analysis) -> FitCheck:
    """One model's FitCheck under the options (the remedy ladder climbed when it does not fit)."""
    budget, target, reserve = _budget_options(args)
    return fit_under(args, model, analysis, budget=budget, target=target, reserve=reserve)


def fit_under(
    args: argparse.Namespace,
    model: Model,
    analysis: Analysis,
    *,
    budget: int | None,
    target: Target | None,
    reserve: int | None,
) -> FitCheck:
    """The FitCheck of a budget or board (as check and report take them), the remedy ladder
    climbed when it does not fit."""
    check = check_fit(
        analysis,
        budget_bytes=budget,
        target=target,
        reserve_bytes=reserve,
        budget_text=args.budget or "",
        **npu_options(args),
        **litert_options(args),
    )
    return climbed(args, check, model, analysis.build)


def climbed(
    args: argparse.Namespace,
    check: FitCheck,
    model: Model,
    build: Build | None,
    rewrites: dict[tuple[Any, ...], dict[tuple[str, ...], Any]] | None = None,
) -> FitCheck:
    """The check with its remedy ladder, when it does not fit as given (TFLM, the runtime's own
    plan): each rung computed as the `optimize` command the verdict prints computes it.
    `rewrites`: the rewrites already made, by `ladder.rewrite_class` then options (`--target
    all` climbs for many boards)."""
    planner = args.planner[0] if isinstance(args.planner, list) else args.planner
    if not check.optimize_decides or planner is not None or build is None:
        return check
    from arenalens.ladder import rewrite_class  # noqa: PLC0415 - only a model that does not fit

    rules = rewrite_rules(build, kernels=getattr(args, "kernels", None), target=check.target)
    shared = None if rewrites is None else rewrites.setdefault(rewrite_class(build, rules), {})
    with working(args, "trying the rewrites that could make it fit (offline plan ... split)"):
        # One board's check also checks the model its first step writes (`FitCheck.written`:
        # the step's promise); `--target all` rows say only which rung fits.
        return with_ladder(
            check,
            model,
            build=build,
            rules=rules,
            effort=OPTIMIZE_EFFORT,
            cache=shared,
            written=rewrites is None,
        )


def check_verdict(args: argparse.Namespace, path: str) -> Verdict:
    """One model → its Verdict under the options (with --max-input, the input search too)."""
    model = load_with_input_shapes(path, args)
    analysis = _analysis(args, model)
    check = fit_check(args, model, analysis)
    verdict = verdict_for(analysis, asked=asked(args, path), fit=check)
    if not args.max_input or not verdict.has_number:
        return verdict
    search = input_search(args, model, check)
    return verdict_for(analysis, asked=asked(args, path), fit=check, search=search)


def board_build(args: argparse.Namespace, board: Target) -> Build:
    """The build one board's row is for: --cpu / --kernels when given, else the board's core
    and default kernels, at the --tflm release (TFLM only; LiteRT has one figure)."""
    if args.runtime != "tflm":
        return selected_build(args)
    build = target_build(board, cpu=args.cpu, kernels=args.kernels, tflm=args.tflm)
    return with_table(build, getattr(args, "resource_variables", None))


def modelled_boards(
    args: argparse.Namespace,
) -> tuple[tuple[Target, ...], tuple[dict[str, Any], ...]]:
    """The boards whose build arenalens models under the options, and the others grouped by
    why: at a --tflm release its CMSIS-NN rules do not cover, the boards whose default kernels
    are CMSIS-NN have no figure (no other build's number stands in for theirs, which could be
    lower), each group with commands that give one. UsageError when no board is left."""
    if args.runtime == "litert":
        return targets.LINUX_DEVICES, ()  # LiteRT runs on Linux-class devices, each with one figure
    kept: list[Target] = []
    groups: dict[str, tuple[UnplacedValueError, list[str]]] = {}
    undriven: dict[str, list[str]] = {}  # why --cpu cannot drive their NPU → the boards
    for board in targets.BOARDS:
        try:
            board_build(args, board)
        except UnplacedValueError as error:
            groups.setdefault(error.reason, (error, []))[1].append(board.name)
            continue
        except UsageError as error:
            if board.npu is None or args.cpu is None:
                raise
            # --cpu names a core that cannot drive this board's NPU (an ESP32 chip beside an
            # Ethos-U): no such firmware exists, and the other boards still have their rows.
            undriven.setdefault(str(error).split(": ", 1)[-1], []).append(board.name)
            continue
        kept.append(board)
    if not kept and groups:
        raise next(iter(groups.values()))[0]
    words = list(getattr(args, "argv", []))
    left_out = [
        {
            "boards": names,
            "reason": reason,
            # One of them on its own core (and the kernels it implies).
            "commands": [
                rerun(without_options(words, "--cpu", "--kernels"), ("--target", names[0]))
            ],
        }
        for reason, names in undriven.items()
    ]
    for reason, (refusal, names) in groups.items():
        # The whole list again at a release that models them, or one of them with the other
        # kernels (--kernels on --target all would also ask it of boards without a 32-bit model).
        commands = [
            rerun(words, (option, value))
            for option, value, _ in refusal.instead
            if option != "--kernels"
        ]
        commands += [
            rerun(with_option(words, "--target", names[0]), (option, value))
            for option, value, _ in refusal.instead
            if option == "--kernels"
        ]
        left_out.append({"boards": names, "reason": reason, "commands": commands})
    return tuple(kept), tuple(left_out)


def left_out_text(left_out: tuple[dict[str, Any], ...]) -> str:
    """One line per group of boards `modelled_boards` left out."""
    lines = []
    for group in left_out:
        names = group["boards"]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        commands = " or ".join(f"`{command}`" for command in group["commands"])
        lines.append(f"left out {len(names)} boards ({shown}): {group['reason']}; run {commands}\n")
    return "".join(lines)


def board_verdicts(args: argparse.Namespace, path: str) -> tuple[Verdict, ...]:
    """One model against every board arenalens models under the options (`modelled_boards`),
    most useful first; each board with its own core's number (one analysis per distinct
    build)."""
    _, _, reserve = _budget_options(args)
    model = load_with_input_shapes(path, args)
    analyses: dict[str, Analysis] = {}
    # The rewrites made for each build and its overlap rules, shared by the ladders of every
    # board whose build reaches the same figures (`ladder.rewrite_class`).
    rewrites: dict[tuple[Any, ...], dict[tuple[str, ...], Any]] = {}

    def check_for(board: Target) -> FitCheck:
        build = board_build(args, board)
        if build.name not in analyses:
            analyses[build.name] = _analysis(args, model, build)
        check = check_fit(
            analyses[build.name],
            target=board,
            reserve_bytes=reserve,
            **npu_options(args),
            **litert_options(args),
        )
        return climbed(args, check, model, build, rewrites)

    checks = board_fits(check_for, modelled_boards(args)[0])
    return tuple(
        verdict_for(
            analyses[board_build(args, check.target).name],  # type: ignore[arg-type]
            asked=asked(args, path),
            fit=check,
        )
        for check in checks
    )


def input_search(args: argparse.Namespace, model: Model, check: FitCheck) -> InputSearch:
    """The sizes one model's network accepts, the largest that fits the available bytes, and
    (TFLM, the runtime's plan) the largest that fits after `arenalens optimize` with the best
    rung of the remedy ladder that applies: the one that fits at the model's own size, else the
    one that gets closest (`ladder.py`); the offline plan alone when it fits as given."""
    from arenalens.ladder import rewrite  # noqa: PLC0415 - --max-input only
    from arenalens.litert_memory import target_isa  # noqa: PLC0415 - LiteRT only
    from arenalens.max_input import InputSize, search_max_input  # noqa: PLC0415

    planner = args.planner[0] if isinstance(args.planner, list) else args.planner
    optimizes = args.runtime == "tflm" and planner is None
    available_bytes = check.available_bytes
    ladder = check.ladder
    options = ladder.answer.options if ladder is not None and len(ladder.rungs) > 1 else ()
    if "--split" in options and ladder is not None and not ladder.fits:
        # A split search per size tried would take minutes: below the model's own size the
        # search rewrites with the rungs before it (the step names the options it used).
        options = tuple(option for option in options if option != "--split")
    build = selected_build(args)
    rules = rewrite_rules(build, kernels=getattr(args, "kernels", None), target=check.target)
    whole_tensors = not {"--overlap", "--split"} & set(options)

    def optimized_at(resized: Model) -> InputSize | None:
        if ladder is not None and resized.subgraphs[0].tensors == model.subgraphs[0].tensors:
            # The model's own size: climbed already.
            answer = ladder.answer
            return InputSize((), answer.required_bytes, True, missing_extra=answer.missing_extra)
        if whole_tensors:
            analysis = _analysis(args, resized)
            best_case = check_fit(analysis, budget_bytes=available_bytes + 1).best_case_bytes
            if best_case > available_bytes:
                # No plan of whole tensors fits there (a lower bound: the exact search would
                # not change it): optimize need not run.
                return InputSize((), best_case, True)
        optimization = rewrite(
            resized, options, build=build, rules=rules, effort=OPTIMIZE_EFFORT, target=check.target
        )
        if not optimization.runs:
            return None
        return InputSize(
            (), optimization.new_required_bytes, True, missing_extra=optimization.missing_extra
        )

    return search_max_input(
        model,
        available_bytes=available_bytes,
        required_at=lambda resized: required_at_size(
            resized,
            lambda m: _analysis(args, m),
            model.source,
            delegate=getattr(args, "delegate", None),
            isa=target_isa(check.target, getattr(args, "isa", "") or ""),
            threads=getattr(args, "threads", 1),
        ),
        optimized_at=optimized_at if optimizes else None,
        optimize_options=options,
        optimize_up_to_own="--split" in options,
    )


def required_at_size(
    resized: Model,
    analyze_at: Any,
    source: str,
    *,
    delegate: str | None = None,
    isa: str = "",
    threads: int = 1,
) -> int:
    """The number to declare for the model at another input size (under LiteRT: what the app
    needs with `delegate`, `litert_memory`); ModelError when the runtime refuses it there (a
    kernel's Prepare check) or its offline plan would corrupt tensors."""
    analysis = analyze_at(resized)
    declared = declared_arena(analysis)
    if analysis.runtime == "litert" and declared.status.gives_a_number:
        from arenalens.litert_memory import DEFAULT_DELEGATE, litert_memory  # noqa: PLC0415

        figure = litert_memory(analysis, delegate or DEFAULT_DELEGATE, isa=isa, threads=threads)
        if not figure.status.gives_a_number:  # the delegate refuses it at this size
            raise ModelError(
                source, f"the runtime cannot run the model at this size: {figure.reasons[0]}"
            )
        return figure.required_bytes
    if declared.status in (Status.CANNOT_RUN, Status.WRONG_OUTPUTS):
        raise ModelError(
            source,
            f"the runtime cannot run the model at this size: {declared.reasons[0]}",
        )
    return int(analysis.budget.required_bytes)


def _single(args: argparse.Namespace, path: str) -> int:
    if _all_boards(args):
        return _single_boards(args, path)
    verdict = check_verdict(args, path)
    if args.json:
        print_json(verdict.as_dict())
    else:
        from arenalens.report.verdict_lines import render_check  # noqa: PLC0415 - text only

        text = render_check(verdict, color=use_color(args), width=terminal_width())
        if verdict.search is not None or (args.max_input and not verdict.has_number):
            text += _search_text(args, verdict)
        print_text(text)
    return verdict.exit_code


def _search_text(args: argparse.Namespace, verdict: Verdict) -> str:
    if verdict.search is None:
        return (
            "\nlargest input that fits: none — no size is compared: "
            f"{verdict.answer.value if verdict.answer else ''} at the model's own size\n"
        )
    from arenalens.report.check_output import render_input_search  # noqa: PLC0415 - rich, for text only

    return render_input_search(verdict, color=use_color(args), width=terminal_width())


def _single_boards(args: argparse.Namespace, path: str) -> int:
    verdicts = board_verdicts(args, path)
    left_out = modelled_boards(args)[1]
    fitting = sum(1 for verdict in verdicts if verdict.fits)
    if args.json:
        first = verdicts[0]
        assert first.fit is not None
        print_json(
            {
                "schema": "arenalens.boards",
                "schema_version": 2,
                "model": first.model,
                "file": first.source,
                "runtime": first.runtime,
                "planner": first.declared.planner,
                "declare": first.declared.as_dict(),
                "reserve_bytes": first.fit.reserve_bytes,
                "boards_fitting": fitting,
                "boards": [board_row(verdict) for verdict in verdicts],
                "boards_left_out": list(left_out),
            }
        )
    else:
        from arenalens.report.check_output import render_boards  # noqa: PLC0415 - rich, for text only

        text = render_boards(
            verdicts,
            color=use_color(args),
            width=terminal_width(),
            every_row=getattr(args, "all", False),
        )
        print_text(text + left_out_text(left_out))
    return EXIT_FITS if fitting else EXIT_DOES_NOT_FIT


def check_worker(args: argparse.Namespace, path: str) -> ModelResult:
    """One model of a batch → its summary row and JSON document."""
    if _all_boards(args):
        verdicts = board_verdicts(args, path)
        fitting = [verdict for verdict in verdicts if verdict.fits]
        return ModelResult(
            model=path,
            exit_code=EXIT_FITS if fitting else EXIT_DOES_NOT_FIT,
            row={
                "required": verdicts[0].required_bytes,
                "available": None,
                "headroom": None,
                "verdict": f"{len(fitting)} of {len(verdicts)} boards",
            },
            document={
                "boards": [board_row(verdict) for verdict in verdicts],
                "boards_left_out": list(modelled_boards(args)[1]),
            },
        )
    verdict = check_verdict(args, path)
    fit = verdict.fit
    assert fit is not None
    # One pair per row, as the model's check says it: on a board with RAM banks the headroom is
    # counted in the bank of the buffer with the least to spare, so "available" is that bank's
    # (named in its own column), not the largest block.
    return ModelResult(
        model=path,
        exit_code=verdict.exit_code,
        row={
            "required": verdict.required_bytes,
            "available": fit.spare_available_bytes if verdict.has_number else fit.available_bytes,
            "headroom": verdict.headroom_bytes,
            "in": fit.spare_where if verdict.has_number else None,
            "verdict": verdict.answer.value if verdict.answer else "",
        },
        document=verdict.as_dict(),
    )


def _list_targets(args: argparse.Namespace) -> int:
    if args.json:
        every = (*targets.BOARDS, *targets.CHIPS, *targets.LINUX_DEVICES)
        print_json([target_document(target) for target in every])
        return EXIT_FITS
    from arenalens.report.check_output import render_targets  # noqa: PLC0415 - rich, for text only

    print_text(
        render_targets(
            targets.BOARDS,
            targets.CHIPS,
            targets.LINUX_DEVICES,
            color=use_color(args),
            width=terminal_width(),
        )
    )
    return EXIT_FITS
