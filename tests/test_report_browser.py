"""The HTML report as a person sees it: opened from disk in headless Chromium (Debian's
chromium, driven by Playwright without any browser download), no console error, every
expected chart drawn with visible data elements, hover read-outs working, and a screenshot
saved (MWPERF_SCREENSHOT=path keeps it). At 1400 x 900 the ranking of the transports must be
visible whole without scrolling (docs/report.png: the first screen of a real run's report)."""

import os
import shutil
from pathlib import Path

import pytest
from test_layers_report import NONE, PLAIN, SHM, UDP, collection
from test_report import SINGLE, SWEEP, results  # noqa: F401  (the fixture)

from mwperf.durations import format_ns
from mwperf.report import build

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
EXPECTED = ("latency-rate", "distribution", "timeline-seconds", "timeline-messages",
            "loss-rate", "jitter-rate", "topics", "cpu", "rss")



def _driver():  # type: ignore[no-untyped-def]
    """Playwright's sync API; skipped when Playwright or chromium is missing, except in CI
    (CI=true), where .ci/run installs both and a missing one is a failure."""
    why = None
    try:
        from playwright import sync_api
    except ImportError:
        why = "Playwright is not installed (pip install -e '.[test]'; no browser download)"
    if why is None and not Path(CHROMIUM).exists():
        why = "Debian's chromium is not installed (scripts/system-deps.sh installs it)"
    if why is not None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)(why)
    return sync_api


def test_report_renders_in_chromium(results: Path, tmp_path: Path) -> None:  # noqa: F811
    page_file = tmp_path / "report.html"
    page_file.write_text(build(results, [SWEEP, SINGLE]), encoding="utf-8")
    screenshot = Path(os.environ.get("MWPERF_SCREENSHOT") or tmp_path / "report.png")
    problems: list[str] = []
    with _driver().sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS[1:],
                                         headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page = context.new_page()
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                    if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("request", lambda r: problems.append(f"request: {r.url}")
                    if not r.url.startswith(("file:", "data:")) else None)
            page.goto(page_file.as_uri())
            page.wait_for_load_state("load")
            # the first screen answers the question: the ranking, whole, without scrolling
            ranking = page.locator("#ranking-table").bounding_box()
            assert ranking and ranking["y"] >= 0 and ranking["x"] >= 0, ranking
            assert ranking["y"] + ranking["height"] <= 900, ranking
            assert ranking["x"] + ranking["width"] <= 1400, ranking
            assert page.locator("#ranking-table tr.p50").count() >= 2
            assert page.locator("#warnings details").first.is_visible()
            assert not page.locator("#warnings details li").first.is_visible()  # folded
            for name in EXPECTED:
                charts = page.locator(f'svg.chart[data-chart="{name}"]')
                assert charts.count() >= 1, name
                first = charts.first
                box = first.bounding_box()
                assert box and box["width"] > 300 and box["height"] > 200, name
                drawn = first.locator(".datum, .trace")
                assert drawn.count() >= 1, f"{name}: no data drawn"
                visible = drawn.first.bounding_box()
                assert visible and (visible["width"] > 0 or visible["height"] > 0), name
            marker = page.locator('svg.chart[data-chart="latency-rate"] .datum').first
            marker.hover()
            tip = page.locator("#tip")
            assert tip.is_visible() and "p50" in tip.inner_text()
            assert page.locator("#attention").inner_text().count("pong crashed") == 1
            page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    assert not problems, problems
    assert screenshot.stat().st_size > 10_000


def test_the_layers_section_in_chromium(tmp_path: Path) -> None:
    """--layers (tests/test_layers_report.py's points), opened from disk in headless Chromium: the bars drawn and visible, a segment's hover
    read-out names its layer and time, no console error."""
    root = tmp_path / "r"
    layers = collection(root)
    page_file = tmp_path / "report.html"
    page_file.write_text(build(root, [UDP, SHM, NONE, PLAIN]), encoding="utf-8")
    problems: list[str] = []
    with _driver().sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS[1:],
                                         headless=True)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                    if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.goto(page_file.as_uri())
            page.wait_for_load_state("load")
            chart = page.locator('svg.chart[data-chart="layers-stack"]')
            box = chart.bounding_box()
            assert box and box["width"] > 700 and box["height"] > 80, box
            segments = chart.locator(".datum")
            assert segments.count() == 8
            kernel = segments.nth(2)
            assert (kernel.bounding_box() or {}).get("width", 0) > 100
            kernel.scroll_into_view_if_needed()
            kernel.hover()
            tip = page.locator("#tip")
            value = layers["udp"]["layers"][2]["share"] * layers["udp"]["total"]["mean_ns"]
            assert tip.is_visible() and f"kernel and network: {format_ns(value)}" in \
                tip.inner_text()
            assert page.locator('svg.chart[data-chart="layers-distribution"]').count() == 2
        finally:
            browser.close()
    assert not problems, problems
