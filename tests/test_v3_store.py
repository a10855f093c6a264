"""Before the writers write v3 (docs/one-path-plan.md step 7): the document a result will be
saved as (result/save.py: v3 with its stream view in ``stream``) is a valid v3 result, reads
back (result/load.py) to the figures it was made from, and a results folder holding it is
catalogued exactly as one holding the result it was made from: every row of every table the
same, but the ``result`` column, which keeps each document as it was written. Each golden
result (tests/vectors/results/) is both."""

import json
from pathlib import Path
from typing import Any

import pytest

from mwperf.result.load import as_stream, load_result
from mwperf.result.save import written
from mwperf.result.stream import CLAIMS
from mwperf.schema import validation_error
from mwperf.store.catalogue import connect
from mwperf.store.layout import GRAPH_RESULT_NAME, RESULT_NAME
from mwperf.store.rebuild import rebuild
from mwperf.store.schema import TABLES

GOLDEN = Path(__file__).parent / "vectors" / "results"
NAMES = sorted(p.name for p in GOLDEN.glob("*.json"))
KEPT_AS_WRITTEN = {"result"}
"""the columns that hold the document as it was written (different by design)"""


def golden(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / name).read_text())


@pytest.mark.parametrize("name", NAMES)
def test_the_saved_document_is_a_valid_v3_result_that_reads_back_to_its_figures(
        name: str, tmp_path: Path) -> None:
    old = golden(name)
    document = written(old)
    assert validation_error(document, "result") is None
    assert document["schema_version"] == 3 and document["kind"] == "result"
    stream = old["kind"] == "run-result"
    assert ("stream" in document) == stream
    (tmp_path / RESULT_NAME).write_text(json.dumps(document))
    read = as_stream(load_result(tmp_path / RESULT_NAME))
    if stream:
        for claim in CLAIMS:
            assert read.get(claim) == old.get(claim), claim
            assert document["stream"].get(claim) == old.get(claim), claim
    else:
        assert [e["latency"] for e in read["edges"]] == [e["latency"] for e in old["edges"]]
    assert written(document) == document  # saving it again changes nothing


def catalogue(root: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every catalogue table, without the columns kept as written, sorted."""
    found = {}
    with connect(root, read_only=True, views=False) as con:
        for table, columns in TABLES.items():
            names = [c for c, _ in columns if c not in KEPT_AS_WRITTEN]
            found[table] = sorted(
                con.execute(f"SELECT {', '.join(names)} FROM {table}").fetchall(), key=repr)
    return found


def test_a_folder_of_saved_v3_documents_is_catalogued_as_the_results_they_came_from(
        tmp_path: Path) -> None:
    """One results folder of the goldens as they were written (graph-result.json for the graph
    run), one of their v3 documents (result.json for every run): the same catalogue."""
    old_root, new_root = tmp_path / "as-written", tmp_path / "v3"
    for name in NAMES:
        old = golden(name)
        for root, file_name, document in (
                (old_root, GRAPH_RESULT_NAME if old["kind"] == "graph-result" else RESULT_NAME,
                 old), (new_root, RESULT_NAME, written(old))):
            (root / old["run_id"]).mkdir(parents=True)
            (root / old["run_id"] / file_name).write_text(json.dumps(document))
    reports = [rebuild(root) for root in (old_root, new_root)]
    assert [(r.points, r.graphs, r.skipped) for r in reports] == [(7, 1, [])] * 2
    before, after = catalogue(old_root), catalogue(new_root)
    assert sum(len(rows) for rows in before.values()) > 100  # the tables are not empty
    for table in TABLES:
        assert after[table] == before[table], table
    with connect(new_root, read_only=True, views=False) as con:
        kept = dict(con.execute("SELECT point_id, result FROM points").fetchall())
    assert {json.loads(text)["schema_version"] for text in kept.values()} == {3}
