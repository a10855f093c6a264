"""`mwperf run --transport ros2` with the real agent as a real ROS 2 node (rcl and
rmw_fastrtps_cpp of mwperf's managed Kilted, and Jazzy with ``--opt distro=jazzy``): a round
trip and a one-way stream complete with every message, and nothing of Fast DDS's is left in
/dev/shm; a built-in graph (iRobot's Mont Blanc: 20 nodes, each a ROS 2 node of its own) runs with
every edge delivering; ``--pong relay`` echoes through a real rclpy relay node
(python/mwperf/ros2/relay.py, under the distribution's own Python); a distribution that is not
installed is one line naming it, exit 2, before any agent
starts. Without the managed Kilted environment these fail with mwperf's own line naming the
install command (python3 -m mwperf.ros2.install kilted)."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from test_fastdds_e2e import mapped
from conftest import read_saved, run_mwperf_own_shm, run_mwperf

SHM = Path("/dev/shm")


def fastdds_files() -> set[str]:
    """Fast DDS 3's shared-memory files (the wheels' rmw_fastrtps_cpp)."""
    return {p.name for p in SHM.iterdir() if p.name.startswith(("fastdds_", "sem.fastdds_"))}


def leftovers(before: set[str], any_domain: bool = False) -> set[str]:
    """What appeared since ``before`` and nobody uses (a lock file goes with its segment; a
    port's semaphore with its port), of this test's DDS domain: a port's file (``fastdds_port<P>``,
    P an RTPS port: 7400 + 250 x domain + offset) of another domain is another pytest worker's
    (tests/conftest.py gives each its own domain), created or released beside this test.
    ``any_domain``: every port's (a test that runs alone; a killed participant's unicast ports
    are no domain's)."""
    in_use = mapped()
    return {n for n in fastdds_files() - before
            if n not in in_use and n.removesuffix("_el") not in in_use
            and n.removeprefix("sem.").removesuffix("_mutex") not in in_use
            and (any_domain or _this_domain(n))}


def _this_domain(name: str) -> bool:
    match = re.search(r"fastdds_port(\d+)", name)
    if match is None:
        return True
    domain = int(os.environ.get("ROS_DOMAIN_ID", "0"))
    return 7400 + 250 * domain <= int(match.group(1)) < 7400 + 250 * (domain + 1)


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return run_mwperf("run", "--no-save", "--transport", "ros2", "--duration", "1s", "--warmup",
                      "200ms", *args, timeout=120)


@pytest.mark.agent
@pytest.mark.parametrize("mode,payload,opts", [
    ("roundtrip", "64", []), ("oneway", "64", []), ("roundtrip", "64", ["--opt", "distro=jazzy"]),
    ("roundtrip", "PointCloud512k", []),  # in a sensor_msgs/msg/PointCloud2
    ("roundtrip", "64", ["--pong", "relay"]), ("roundtrip", "PointCloud512k", ["--pong", "relay"])])
def test_a_stream_completes_and_leaves_nothing(tmp_path: Path, mode: str, payload: str,
                                               opts: list[str]) -> None:
    out = tmp_path / "result.json"
    big = payload.startswith("PointCloud")
    # a keep-last queue as deep as the run is long (1.2 s at 50 or 200 Hz): every message
    # counted, whatever the machine's load (ROS 2's default keep-last 10 dropped 7 of 50 and 1 of
    # 200 in CI beside other tests), so received == sent checks the transport, not the scheduler
    done, left = run_mwperf_own_shm(
        "run", "--no-save", "--transport", "ros2", "--duration", "1s", "--warmup", "200ms",
        "--mode", mode, "--rate", "50" if big else "200", "--depth", "100" if big else "300",
        "--payload", payload, "--json-out", str(out), *opts)
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] > 20, accounting
    assert result["status"] == "complete", result["status"]
    assert left == [], f"left in /dev/shm: {left}"


@pytest.mark.agent
def test_a_distribution_not_installed_is_a_usage_error() -> None:
    done = mwperf("--opt", "distro=rolling")
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert "--opt distro=rolling: ROS 2 distribution 'rolling' is not installed" in line
    assert "installed: kilted (managed," in line


@pytest.mark.agent
def test_a_built_in_graph_runs_on_ros2(tmp_path: Path) -> None:
    before = fastdds_files()
    out = tmp_path / "graph.json"
    done = mwperf("--graph", "mont_blanc", "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "complete", result["status_reason"]
    edges = result["edges"]
    assert len(edges) == 35
    assert all(e["received"] > 0 and e["corrupted"] == 0 for e in edges), edges
    assert not leftovers(before)
