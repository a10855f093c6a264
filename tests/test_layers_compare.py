"""compare's ``layer.NAME`` budgets (issue 27): a layer's p50 against a relative or duration
budget; no significance test for single runs (a layers section holds quantiles, not samples:
the method says so), the exact test over repetitions when there are enough; rows only where a
side has the layer, a verdict only where both do; layer names checked."""

import json
import re
from pathlib import Path

import pytest
from layers_support import section
from report_support import latencies, result, write_point

from mwperf.compare import Comparison, compare, render
from mwperf.compare.budget import LAYER_METRICS, parse_budget, resolve
from mwperf.compare.verdict import Row
from mwperf.errors import UsageError
from mwperf.store import ingest_point

SLOW_SEND = {"app_send": 2_000, "middleware_send": 12_000, "kernel_network": 30_000,
             "middleware_receive": 6_000, "executor_callback": 4_000}


def add(root: Path, run_id: str, layers: object = ..., folder: Path | None = None,
        **ingest: object) -> None:
    document = result(run_id, latencies(2000, seed=3))
    if layers is not ...:
        document["layers"] = layers
    ingest_point(write_point((folder or root) / run_id, document), **ingest)  # type: ignore[arg-type]


def layer_rows(done: Comparison) -> dict[str, Row]:
    return {r.metric: r for r in done.rows if r.metric.startswith("layer.")}


@pytest.mark.parametrize(("text", "relative", "absolute"), [
    ("+10%", 0.10, None), ("10%", 0.10, None), ("+50us", None, 50_000.0), ("2ms", None, 2e6)])
def test_a_layer_budget_is_relative_or_a_duration(text: str, relative: float | None,
                                                  absolute: float | None) -> None:
    budget = parse_budget("layer.middleware_send", text, "--budget")
    assert (budget.relative, budget.absolute) == (relative, absolute)


@pytest.mark.parametrize(("metric", "text", "said"), [
    ("layer.serialize", "+10%", "unknown layer 'serialize' in 'layer.serialize'; the layers are "
                                "app_send, middleware_send, kernel_network"),
    ("layer.kernel_network", "+1pp", "percentage points (pp) apply to loss"),
    ("layer.kernel_network", "-10%", "write +10%"),
    ("layers", "+10%", "layer.NAME (NAME: app_send, middleware_send"),
])
def test_a_wrong_layer_budget_is_a_usage_error(metric: str, text: str, said: str) -> None:
    with pytest.raises(UsageError) as error:
        parse_budget(metric, text, "--budget")
    assert said in str(error.value)


def test_every_layer_can_have_a_budget() -> None:
    assert len(LAYER_METRICS) == 6 and "layer.middleware_transport" in LAYER_METRICS


def test_a_slower_send_path_is_over_its_budget_and_the_rest_within(tmp_path: Path) -> None:
    root = tmp_path / "r"
    add(root, "20261126T100000Z-base", section())
    add(root, "20261126T110000Z-new", section(SLOW_SEND))
    budgets = resolve(("layer.middleware_send=+10%", "layer.kernel_network=+10%"), None)
    done = compare(root, "20261126T100000Z-base", "20261126T110000Z-new", budgets)
    rows = layer_rows(done)
    assert set(rows) == {"layer.app_send", "layer.middleware_send", "layer.kernel_network",
                         "layer.middleware_receive", "layer.executor_callback"}
    send = rows["layer.middleware_send"]
    assert send.verdict == "regression" and done.exit_code == 1
    assert send.delta_pct == pytest.approx(50, abs=5)
    assert send.method.startswith("none: a layer's figures are quantiles, not samples")
    assert send.p_value is None
    assert rows["layer.kernel_network"].verdict == "ok"
    assert rows["layer.app_send"].verdict == "info"  # no budget: shown, never fails
    text = render(done)
    assert re.search(r"layer\.middleware_send\s+\S+ µs\s+\S+ µs\s+\+\S+ µs \(\+\d+\.\d %\)\s+"
                     r"\+10%\s+REGRESSION", text), text
    data = json.loads(render(done, "json"))
    assert {r["metric"] for r in data["rows"]} >= {"layer.middleware_send"}


def test_a_duration_budget_allows_that_much(tmp_path: Path) -> None:
    root = tmp_path / "r"
    add(root, "20261126T100000Z-base", section())
    add(root, "20261126T110000Z-new", section(SLOW_SEND))
    within = compare(root, "20261126T100000Z-base", "20261126T110000Z-new",
                     resolve(("layer.middleware_send=+10us",), None))
    assert layer_rows(within)["layer.middleware_send"].verdict == "ok"
    over = compare(root, "20261126T100000Z-base", "20261126T110000Z-new",
                   resolve(("layer.middleware_send=+1us",), None))
    assert layer_rows(over)["layer.middleware_send"].verdict == "regression"


def test_layers_on_one_side_only_are_shown_never_decided(tmp_path: Path) -> None:
    root = tmp_path / "r"
    add(root, "20261126T100000Z-base", section())
    add(root, "20261126T110000Z-new")  # NEW ran without --layers
    add(root, "20261126T120000Z-plain")
    budgets = resolve(("layer.middleware_send=+10%",), None)
    one = compare(root, "20261126T100000Z-base", "20261126T110000Z-new", budgets)
    row = layer_rows(one)["layer.middleware_send"]
    assert (row.verdict, row.method) == ("info", "not measured on both sides")
    assert one.exit_code == 0
    neither = compare(root, "20261126T110000Z-new", "20261126T120000Z-plain", budgets)
    assert layer_rows(neither) == {}


def test_shared_memory_is_compared_on_its_combined_layer(tmp_path: Path) -> None:
    root = tmp_path / "r"
    add(root, "20261126T100000Z-base", section(shm=True))
    add(root, "20261126T110000Z-new", section(shm=True, seed=2))
    done = compare(root, "20261126T100000Z-base", "20261126T110000Z-new",
                   resolve(("layer.middleware_transport=+20%",), None))
    rows = layer_rows(done)
    assert set(rows) == {"layer.app_send", "layer.executor_callback",
                         "layer.middleware_transport"}
    assert rows["layer.middleware_transport"].verdict == "ok"


def test_repetitions_on_both_sides_get_the_exact_test(tmp_path: Path) -> None:
    root = tmp_path / "r"
    for run, medians in (("20261126T100000Z-base", None), ("20261126T110000Z-new", SLOW_SEND)):
        sweep = root / run
        entries = []
        for rep in range(1, 5):
            point_id = f"{run}-p{rep}"
            entries.append({"index": 1, "label": point_id, "result": f"points/{point_id}"})
            add(root, point_id, section(medians, seed=rep), folder=sweep / "points", index=1,
                repetition=rep)
            (sweep / "sweep.json").write_text(json.dumps({"scenario": "s", "entries": entries}))
    done = compare(root, "20261126T100000Z-base", "20261126T110000Z-new",
                   resolve(("layer.middleware_send=+10%",), None))
    row = layer_rows(done)["layer.middleware_send"]
    assert row.verdict == "regression"
    assert row.method == "exact Mann-Whitney U over repetitions (4 vs 4)"
    assert row.p_value is not None and row.p_value <= 0.05
