"""The built-in ``ros2-tax`` scenario end to end, cut to one payload, 0.2 s points and two rounds:
raw Fast DDS of each distribution's own Fast DDS, rcl + rmw_fastrtps_cpp and a real rclpy echo,
Jazzy and Kilted (mwperf's managed environments; missing, this fails naming the command).

- The structure: the rounds interleave (round 1 of every point before round 2), and the report's
  tax table has each distribution's three stacks over both rounds.
- Every figure comes from a real run: each point's echo counted every message the ping sent
  (the pong agent's own count, or the rclpy relay's "relayed N" in its log: the other side of the
  stream, not the ping's report; benchmarks/bench_ros2_tax.py), and the table's p50s are the
  points' own.
- The raw Fast DDS points ran on the distribution's Fast DDS: the shim the agent compiled for it
  links that distribution's libfastrtps (Jazzy) or libfastdds (Kilted), not Debian's."""

import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import run_mwperf
from mwperf import ros2
from mwperf.errors import UsageError
from mwperf.report import build, tax
from mwperf.report.data import load_runs
from mwperf.scenario.catalog import built_in_text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_ros2_tax import consistent  # noqa: E402

pytestmark = pytest.mark.agent

DISTROS = ("jazzy", "kilted")
FAST_DDS = {"jazzy": "libfastrtps.so.2.14", "kilted": "libfastdds.so.3.2"}


@pytest.fixture(scope="module")
def distributions() -> dict[str, ros2.Distribution]:
    found = {}
    for name in DISTROS:
        try:
            found[name] = ros2.pick(name, env={})
        except UsageError as exc:
            pytest.fail(f"{exc} (make setup installs it)")
    return found


def test_the_ros2_tax_scenario(distributions: dict[str, ros2.Distribution],
                               leased_env: dict[str, str], tmp_path: Path) -> None:
    doc = yaml.safe_load(built_in_text("ros2-tax"))
    doc.pop("quick")
    doc.update(payload=[64], duration="200ms", warmup="200ms", repeat=2)
    scenario = tmp_path / "tax.yaml"
    scenario.write_text(yaml.safe_dump(doc, sort_keys=False))
    results = tmp_path / "results"
    done = run_mwperf("run", str(scenario), "--results", str(results), env=leased_env,
                      timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    (run,) = load_runs(results, ["latest"])
    points = run.points
    assert len(points) == 2 * 3 * 2
    assert [p.get("repetition") for p in points] == [1] * 6 + [2] * 6
    assert all(p.status == "complete" for p in points)

    for point in points:  # the other side of each stream counted what the ping sent
        ok, text = consistent(results / str(point.get("folder")))
        assert ok, f"{point.point_id}: {text}"

    found = tax.ratios([run])
    assert sorted((r.distro, r.stack, len(r.p50_ratios)) for r in found) == sorted(
        (d, s, 2) for d in DISTROS for s in tax.STACKS)
    by_id = {p.point_id: p for p in points}
    for r in found:
        assert r.p50_ns == [float(by_id[i].get("latency_p50_ns")) for i in r.points]
        assert statistics.median(r.p50_ns) > 0
    table = build(results, ["latest"], "markdown")
    for name in DISTROS:
        for stack in tax.STACKS:
            assert re.search(rf"\| {name} \| 64 B \| 100 Hz \| {re.escape(stack)} \| 2 \| ",
                             table), (name, stack)

    cache = Path.home() / ".cache" / "mwperf" / "fastdds-shim"
    for name, dist in distributions.items():
        (shim,) = sorted(cache.glob(f"{name}-*.so"), key=lambda p: p.stat().st_mtime)[-1:]
        linked = subprocess.run(["ldd", str(shim)], capture_output=True, text=True,
                                check=True).stdout
        line = next(li for li in linked.splitlines() if FAST_DDS[name] in li)
        assert str(dist.prefix) in line, line
