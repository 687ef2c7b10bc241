"""Exports: the plan JSON validates against its schema, the C header compiles, the MiniMalloc CSV
round-trips, the CSV and Model Explorer data agree with the plan."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from arenalens.analysis.lifetimes import NEVER_FREED
from arenalens.errors import UsageError
from arenalens.exports import FORMATS, ExportOptions, export, select_arena
from arenalens.exports.c_header import c_identifier
from arenalens.exports.minimalloc import from_minimalloc_csv, to_minimalloc_csv
from arenalens.exports.model_explorer import graph_id, node_data
from arenalens.exports.plan_json import plan_document, plan_schema_text
from arenalens.pipeline import Analysis, analyze
from arenalens.planning import Buffer, Problem, check_plan
from arenalens.tflite.reader import load_model
from tests.conftest import SHARED_MODELS, shared_params
from tests.diagnostics.models import chain, load

jsonschema = pytest.importorskip("jsonschema")


def small_analysis() -> Analysis:
    builder, _ = chain()
    return analyze(load(builder))


def shared_analysis(name: str) -> Analysis:
    return analyze(load_model(SHARED_MODELS / name))


def test_plan_json_validates_against_schema() -> None:
    schema = json.loads(plan_schema_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    document = json.loads(export(small_analysis(), "json"))
    jsonschema.validate(document, schema)
    assert document["schema_version"] == 1
    head = document["arenas"][0]
    assert head["arena_bytes"] == max(b["offset"] + b["size"] for b in head["buffers"])


@pytest.mark.parametrize("runtime", ["tflm", "litert"])
@pytest.mark.parametrize("name", shared_params())
def test_plan_json_validates_on_real_models(name: str, runtime: str) -> None:
    schema = json.loads(plan_schema_text())
    analysis = analyze(load_model(SHARED_MODELS / name), runtime=runtime)
    jsonschema.validate(json.loads(export(analysis, "json")), schema)


def test_schema_rejects_a_broken_document() -> None:
    schema = json.loads(plan_schema_text())
    document = plan_document(small_analysis())
    document["arenas"][0]["buffers"][0]["offset"] = -4
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, schema)


def test_csv_has_one_row_per_buffer_with_plan_offsets() -> None:
    analysis = small_analysis()
    rows = list(csv.DictReader(io.StringIO(export(analysis, "csv"))))
    result = analysis.primary
    assert len(rows) == len(result.arena.problem.buffers)
    for row in rows:
        assert int(row["offset"]) == result.plan.offsets[int(row["buffer"])]
        assert int(row["end"]) == int(row["offset"]) + int(row["size"])
    assert rows[0]["name"] == "input" and rows[0]["shape"] == "1x8x8x3"


def test_c_identifier_is_valid_and_unreserved() -> None:
    assert c_identifier("mlperf_tiny__vww_96_int8") == "mlperf_tiny_vww_96_int8"
    assert c_identifier("9lives-model") == "model_9lives_model"
    assert c_identifier("*/") == "model"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
@pytest.mark.parametrize("name", ["small", *[p.values[0] for p in shared_params()][:3]])
def test_c_header_compiles(tmp_path: Path, name: str | None) -> None:
    if name is None:
        pytest.skip("no corpus")
    analysis = small_analysis() if name == "small" else shared_analysis(name)
    header = export(analysis, "c-header", ExportOptions(prefix="demo"))
    (tmp_path / "plan.h").write_text(header)
    (tmp_path / "use.c").write_text(
        '#include "plan.h"\n'
        "#include <stdalign.h>\n"
        "static alignas(DEMO_ARENA_ALIGNMENT) unsigned char arena[DEMO_ARENA_SIZE];\n"
        "unsigned char *arena_start(void) { return arena; }\n"
        "size_t buffer_count(void) { return sizeof demo_tensor_offsets / "
        "sizeof demo_tensor_offsets[0]; }\n"
        "size_t declared(void) { return kTensorArenaSize; }\n"
    )
    flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c"]
    for source in ("plan.h", "use.c"):
        language = ["-x", "c"] if source.endswith(".h") else []
        subprocess.run(
            ["gcc", *flags, *language, source, "-o", f"{source}.o"],
            cwd=tmp_path,
            check=True,
            capture_output=True,
        )
    if shutil.which("g++"):
        subprocess.run(
            ["g++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-x", "c++", "-c", "plan.h",
             "-o", "plan_cpp.o"],
            cwd=tmp_path,
            check=True,
            capture_output=True,
        )  # fmt: skip
    assert f"#define DEMO_ARENA_SIZE {analysis.budget.required_bytes}u" in header


def test_c_header_comment_cannot_be_closed_by_a_tensor_name() -> None:
    from arenalens.tflite.builder import ModelBuilder

    builder = ModelBuilder()
    graph = builder.add_subgraph("main")
    source = graph.add_tensor("in */ int x; /*", (1, 4), "INT8")
    out = graph.add_tensor("out", (1, 4), "INT8")
    graph.add_operator("RELU", [source], [out])
    graph.set_inputs([source])
    graph.set_outputs([out])
    header = export(analyze(load(builder)), "c-header")
    body = header.split("*/", 1)[1]  # after the opening comment block
    assert "int x;" not in body.replace("/* in ?/ int x; /? */", "")


def conflicts(problem: Problem) -> set[tuple[int, int]]:
    pairs = set()
    buffers = sorted(problem.buffers, key=lambda b: b.id)
    for index, first in enumerate(buffers):
        for second in buffers[index + 1 :]:
            if first.conflicts_with(second):
                pairs.add((first.id, second.id))
    return pairs


def test_minimalloc_round_trip_keeps_conflicts_sizes_and_offsets() -> None:
    result = small_analysis().primary
    problem, offsets = result.arena.problem, result.plan.offsets
    text = to_minimalloc_csv(problem, offsets)
    assert text.splitlines()[0] == "id,lower,upper,size,offset"
    parsed = from_minimalloc_csv(text)
    assert {b.id: b.size for b in parsed.problem.buffers} == {b.id: b.size for b in problem.buffers}
    assert conflicts(parsed.problem) == conflicts(problem)
    assert parsed.offsets == dict(offsets)
    check_plan(parsed.problem, parsed.offsets)
    assert parsed.problem.lower_bound() == problem.lower_bound()
    # Exported again, it is the same text: the format is a fixed point.
    assert to_minimalloc_csv(parsed.problem, parsed.offsets) == text


def test_minimalloc_maps_unbounded_and_unwritten_steps() -> None:
    problem = Problem(
        (
            Buffer(0, -1, 2, 16),  # TFLM: read but never written
            Buffer(1, 0, NEVER_FREED, 32),  # LiteRT: kept to the end
            Buffer(2, 3, 4, 8),
        ),
        alignment=64,
    )
    text = to_minimalloc_csv(problem)
    assert text.splitlines() == [
        "id,lower,upper,size,alignment",
        "0,0,4,16,64",
        "1,1,7,32,64",
        "2,4,6,8,64",
    ]
    parsed = from_minimalloc_csv(text)
    assert conflicts(parsed.problem) == conflicts(problem)
    assert parsed.problem.alignment == 64 and parsed.offsets is None


def test_minimalloc_reader_reports_bad_files() -> None:
    with pytest.raises(UsageError, match="lacks column"):
        from_minimalloc_csv("id,lower,size\n0,0,4\n")
    with pytest.raises(UsageError, match="integers"):
        from_minimalloc_csv("id,lower,upper,size\nb1,0,3,4\n")


@pytest.mark.parametrize("name", shared_params())
def test_minimalloc_round_trip_on_real_models(name: str) -> None:
    result = shared_analysis(name).primary
    parsed = from_minimalloc_csv(to_minimalloc_csv(result.arena.problem, result.plan.offsets))
    assert parsed.offsets is not None
    assert conflicts(parsed.problem) == conflicts(result.arena.problem)
    unfixed = Problem(tuple(b for b in parsed.problem.buffers))
    fixed_ids = {b.id for b in result.arena.problem.buffers if b.fixed_offset is not None}
    if not fixed_ids:  # offline plans may overlap on purpose (Vela); the checker skips those
        check_plan(unfixed, parsed.offsets)


def test_model_explorer_node_data_shape() -> None:
    analysis = small_analysis()
    document = node_data(analysis)
    assert list(document) == ["main"]
    graph = document["main"]
    assert set(graph) == {"results", "gradient"}
    assert [item["stop"] for item in graph["gradient"]] == [0, 0.5, 1]
    # Operator k runs at step k + 1 (TFLM): input+conv0, conv0+conv1, conv1+conv2.
    assert graph["results"] == {
        "0": {"value": 192 + 512},
        "1": {"value": 512 + 1024},
        "2": {"value": 1024 + 512},
    }


def test_model_explorer_graph_ids_follow_the_adapter() -> None:
    builder, _ = chain()
    builder.subgraphs[0].name = ""
    model = load(builder)
    assert graph_id(model, 0) == "main"


def test_select_arena() -> None:
    analysis = small_analysis()
    assert select_arena(analysis, None) is analysis.primary
    assert select_arena(analysis, "0") is analysis.primary
    with pytest.raises(UsageError, match="no such arena"):
        select_arena(analysis, "nope")


def test_every_format_renders() -> None:
    analysis = small_analysis()
    for name in FORMATS:
        assert export(analysis, name).strip()
    with pytest.raises(UsageError, match="unknown format"):
        export(analysis, "xml")
