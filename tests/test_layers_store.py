"""The catalogue's layer columns (schema 11, issue 27): a point with a ``layers`` section fills
each layer's p50/p99/share, the method and the counts; shared memory's unobservable layers and
the points without --layers stay NULL; a version-10 catalogue is migrated and its points'
layers filled from their results."""

from pathlib import Path

import duckdb
import pytest
from layers_support import none_section, section
from report_support import latencies, result, write_point
from test_store_support import catalogue_rows

from mwperf.store import ingest_point, schema
from mwperf.store.catalogue import connect
from mwperf.store.rows import layer_columns

SPLIT = "20261126T100000Z-udp-roundtrip-0001"
SHM = "20261126T100100Z-iceoryx2-roundtrip-0002"
PLAIN = "20261126T100200Z-udp-roundtrip-0003"


def add(root: Path, run_id: str, layers: object) -> dict:
    document = result(run_id, latencies(100))
    if layers is not ...:
        document["layers"] = layers
    ingest_point(write_point(root / run_id, document))
    return document


def columns(root: Path, point_id: str, *names: str) -> tuple:
    return catalogue_rows(root, f"SELECT {', '.join(names)} FROM points WHERE point_id = ?",
                          [point_id])[0]


def test_every_layer_has_its_columns() -> None:
    names = {name for name, _ in schema.LAYER_COLUMNS}
    for layer in ("app_send", "middleware_send", "kernel_network", "middleware_receive",
                  "executor_callback", "middleware_transport"):
        assert {f"layer_{layer}_p50_ns", f"layer_{layer}_p99_ns",
                f"layer_{layer}_share"} <= names
    assert {"layers_method", "layers_split", "layers_messages"} <= names


def test_a_split_point_fills_the_layer_columns(tmp_path: Path) -> None:
    root = tmp_path / "r"
    sec = section(unsplit={"other_pattern": 10})
    add(root, SPLIT, sec)
    by_name = {layer["name"]: layer for layer in sec["layers"]}
    row = columns(root, SPLIT, "layer_middleware_send_p50_ns", "layer_middleware_send_p99_ns",
                  "layer_kernel_network_share", "layer_middleware_transport_p50_ns",
                  "layers_method", "layers_split", "layers_messages")
    assert row[:2] == (by_name["middleware_send"]["p50_ns"], by_name["middleware_send"]["p99_ns"])
    assert row[2] == pytest.approx(by_name["kernel_network"]["share"])
    assert row[3:] == (None, "ld_preload", 1000, 1010)
    shares = catalogue_rows(root, "SELECT " + " + ".join(
        f"coalesce(layer_{n}_share, 0)" for n in ("app_send", "middleware_send",
                                                  "kernel_network", "middleware_receive",
                                                  "executor_callback", "middleware_transport"))
        + " FROM points")
    assert shares[0][0] == pytest.approx(1.0)


def test_shared_memory_leaves_the_unobservable_layers_null(tmp_path: Path) -> None:
    root = tmp_path / "r"
    add(root, SHM, section(shm=True))
    row = columns(root, SHM, "layer_kernel_network_p50_ns", "layer_middleware_send_share",
                  "layer_middleware_transport_p50_ns", "layer_app_send_share")
    assert row[:2] == (None, None) and row[2] > 0 and 0 < row[3] < 1


def test_without_layers_or_with_none_the_columns_say_so(tmp_path: Path) -> None:
    root = tmp_path / "r"
    add(root, PLAIN, ...)
    add(root, SPLIT, none_section())
    assert set(columns(root, PLAIN, *(n for n, _ in schema.LAYER_COLUMNS))) == {None}
    row = columns(root, SPLIT, "layers_method", "layers_split", "layer_app_send_p50_ns")
    assert row == ("none", None, None)


def test_a_layer_name_this_version_does_not_know_is_left_in_the_result() -> None:
    sec = section()
    sec["layers"][0]["name"] = "future_layer"
    row = layer_columns({"layers": sec})
    assert row["layer_app_send_p50_ns"] is None and row["layer_kernel_network_p50_ns"] > 0


def test_a_version_10_catalogue_gains_the_layer_columns(tmp_path: Path) -> None:
    root = tmp_path / "r"
    sec = section()
    add(root, SPLIT, sec)
    add(root, PLAIN, ...)
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:
        for column, _ in schema.LAYER_COLUMNS:
            con.execute(f"ALTER TABLE points DROP COLUMN {column}")
        con.execute("UPDATE schema_version SET version = 10")
    with connect(root, views=False) as con:
        assert schema.version_of(con) == schema.SCHEMA_VERSION >= 11
    rows = catalogue_rows(root, "SELECT point_id, layers_method, layer_kernel_network_p50_ns "
                                "FROM points ORDER BY point_id")
    assert rows == [(SPLIT, "ld_preload", sec["layers"][2]["p50_ns"]), (PLAIN, None, None)]
