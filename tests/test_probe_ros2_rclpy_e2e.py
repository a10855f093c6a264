"""mwperf probe --ros2 against real ROS 2 nodes: rclpy on rmw_fastrtps_cpp (Fast DDS 3.2) from
mwperf's managed Kilted environment (make setup installs it; missing, these tests fail saying
how to install it), peers started as the user's shell would start them, with the same ROS 2
variables as the probe (issue 39, item 6):

- unset (SUBNET, ROS 2's default): an Imu talker at 50 Hz with stamps 100 ms old, a best-effort
  String talker and a reliable rclpy subscription to it: names, types, QoS, the rate against the
  talker's own send times, the age against the injected stamp offset, and the incompatibility
  the real RMW has (the subscription received nothing);
- ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (Fast DDS then talks unicast to 127.0.0.1 only), with
  and without --interface lo: the reported bug, where the probe discovered nothing;
- CYCLONEDDS_URI without multicast: nothing discovered (the URI is honoured), and with
  ROS_STATIC_PEERS=127.0.0.1 besides, the talker is found by unicast (the peers are honoured).
ROS_DOMAIN_ID comes from the environment too (no --domain). OFF and bad values are usage errors
(tests/test_probe_ros2_cli.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mwperf import ros2
from ros2peers import peers
from ros2peers.peers import Peer

pytestmark = pytest.mark.agent

NODE = Path(__file__).resolve().parent / "ros2peers" / "rclpy_node.py"
ROS2_ENV = ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_STATIC_PEERS",
            "CYCLONEDDS_URI", "RMW_IMPLEMENTATION", "ROS_LOCALHOST_ONLY")
STAMP_OFFSET_MS = 100.0
RATE_HZ = 50.0
NO_MULTICAST = ("<CycloneDDS><Domain Id=\"any\"><General><AllowMulticast>false</AllowMulticast>"
                "</General></Domain></CycloneDDS>")



def shell(dom: int, **ros: str) -> dict[str, str]:
    """This environment with only the given ROS 2 variables, on domain ``dom``."""
    env = {k: v for k, v in os.environ.items() if k not in ROS2_ENV}
    return {**env, "ROS_DOMAIN_ID": str(dom), **ros}


class RclpyNode(Peer):
    """tests/ros2peers/rclpy_node.py with the distribution's python and environment."""

    def __init__(self, dist: ros2.Distribution, env: dict[str, str], *args: str,
                 sends: Path | None = None) -> None:
        self.sends_file = sends
        extra = ["--sends", str(sends)] if sends else []
        super().__init__(f"rclpy {' '.join(args)}", [str(dist.python), str(NODE), *args, *extra],
                         env=dist.child_env(base=env))
        self.ready = self.json_line("ready", 60)

    def result(self, key: str) -> int:
        self.stop()
        return int(self.json_line(key, 5)[key])

    def send_times(self) -> list[int]:
        assert self.sends_file is not None
        return [int(t) for t in self.sends_file.read_text().split()]

    def matches(self) -> list[tuple[int, int]]:
        """(unix ns, subscriptions matched) each time the talker's RMW changed its count."""
        found = [json.loads(ln) for ln in self.lines if ln.startswith('{"matched"')]
        return [(m["t_ns"], m["matched"]) for m in found]


def probe(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``mwperf probe --ros2`` as typed in that shell (the domain from ROS_DOMAIN_ID; its
    default discovery time, 3 s)."""
    return subprocess.run([sys.executable, "-m", "mwperf", "probe", "--ros2", *args,
                           "--duration", "3s", "--json", "--no-save"],
                          capture_output=True, text=True, timeout=120, env=env, check=False)


def topics_of(done: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    assert done.returncode == 0, done.stderr
    return {t["topic"]: t for t in json.loads(done.stdout)["topics"]}


def assert_rate_of_the_talker(topic: dict, doc_window: tuple[int, int], sends: list[int],
                              matches: list[tuple[int, int]], offset_ms: float = 0.0) -> None:
    """The probe's count and rate against the talker's own sends over the probe's window, from
    when the talker's RMW matched the probe's reader if that was later than the window's start
    (the RMW's discovery, not the probe's measurement). The probe counts arrivals, the truth is
    sends: each edge of the window and each end of the rate's span moves by that message's
    delivery delay, which the probe's own ages bound (age = arrival - stamp, the stamp
    ``offset_ms`` before the send: at most age_max - offset)."""
    start, end = doc_window
    before = [n for t, n in matches if t < start]
    matched = start if before and before[-1] >= 1 else next(
        (t for t, n in matches if start <= t < end and n >= 1), None)
    assert matched is not None, (
        f"the talker's RMW matched no reader in the probe's window {doc_window}: {matches}")
    first = max(start, matched)
    count, rate = peers.window_truth(sends, first, end)
    # the truth is what the talker sent, however a busy machine held its Python timer back (it
    # then sends late ones in a burst: 50.7 Hz over a window beside two busy loops)
    assert count > 1, "the talker sent nothing in the probe's window"
    delay = max(0, (topic.get("age_max_ns") or 0) - int(offset_ms * 1e6))
    shifted = [peers.window_truth(sends, first - a, end - b) for a in (0, delay)
               for b in (0, delay)]
    spans = [(n, (n - 1) * 1e9 / r) for n, r in shifted if r]  # (count, its sends' span)
    # an end of the arrivals' span is at most `delay` away from its send's
    low = min((n - 1) * 1e9 / (span + delay) for n, span in spans)
    high = max((n - 1) * 1e9 / max(span - delay, 1) for n, span in spans)
    assert low * 0.99 <= topic["rate_hz"] <= high * 1.01, (topic["rate_hz"], rate, delay)
    counts = [n for n, _ in shifted]
    # one message at each edge of the window, beyond what the delays moved
    assert min(counts) - 2 <= topic["count"] <= max(counts) + 2, (topic["count"], counts)


# ------------------------------------------------------------------ ROS 2's defaults

@pytest.fixture(scope="module")
def system(kilted: ros2.Distribution, tmp_path_factory: pytest.TempPathFactory) -> dict:
    dom = peers.domain(3)
    env = shell(dom)
    folder = tmp_path_factory.mktemp("rclpy")
    started: list[RclpyNode] = []
    try:
        imu = RclpyNode(kilted, env, "--node", "imu_driver", "--topic", "/imu", "--type", "imu",
                        "--rate", str(RATE_HZ), "--stamp-offset-ms", str(STAMP_OFFSET_MS),
                        "--depth", "5", sends=folder / "imu")
        started.append(imu)
        talker = RclpyNode(kilted, env, "--node", "talker", "--topic", "/chatter", "--type",
                           "string", "--rate", "10", "--reliability", "best-effort")
        started.append(talker)
        listener = RclpyNode(kilted, env, "--role", "sub", "--node", "listener", "--topic",
                             "/chatter", "--type", "string", "--reliability", "reliable")
        started.append(listener)
        done = probe(env)
        received = listener.result("received")
        imu.stop()
        return {"done": done, "imu_sends": imu.send_times(), "imu_matches": imu.matches(),
                "received": received}
    finally:
        for node in reversed(started):
            node.stop()


def test_names_types_qos_rate_and_age_of_a_real_rclpy_talker(system: dict) -> None:
    topics = topics_of(system["done"])
    doc = json.loads(system["done"].stdout)
    assert doc["ros2"]["domain"] == peers.domain(3)  # from ROS_DOMAIN_ID
    assert doc["ros2"]["discovery_range"] == "SUBNET"
    imu = topics["/imu"]
    assert imu["msgtype"] == "sensor_msgs/msg/Imu" and imu["ros"] is True
    [pub] = imu["publishers"]
    assert pub["node"] == "/imu_driver"  # from rmw_fastrtps_cpp's ros_discovery_info
    assert (pub["qos"]["reliability"], pub["qos"]["durability"]) == ("reliable", "volatile")
    window = (doc["start_ns"], doc["start_ns"] + doc["duration_ns"])
    assert_rate_of_the_talker(imu, window, system["imu_sends"], system["imu_matches"],
                              STAMP_OFFSET_MS)
    # header.stamp = send time - 100 ms: the age is that plus the delivery, less than a period
    assert STAMP_OFFSET_MS * 1e6 <= imu["age_p50_ns"] < (STAMP_OFFSET_MS * 1e6 + 1e9 / RATE_HZ)


def test_the_real_rmws_incompatibility_is_reported(system: dict) -> None:
    assert system["received"] == 0  # rmw_fastrtps_cpp agrees: nothing flowed
    doc = json.loads(system["done"].stdout)
    [found] = [i for i in doc["ros2"]["incompatibilities"] if i["topic"] == "/chatter"]
    assert found["writer"]["node"] == "/talker" and found["reader"]["node"] == "/listener"
    assert "no data flows" in found["text"] and any("reliab" in r for r in found["reasons"])


# ------------------------------------------------------------------ LOCALHOST (the reported bug)

@pytest.fixture(scope="module")
def localhost(kilted: ros2.Distribution, tmp_path_factory: pytest.TempPathFactory) -> dict:
    dom = peers.domain(8)
    env = shell(dom, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    imu = RclpyNode(kilted, env, "--node", "imu_driver", "--topic", "/imu", "--rate",
                    str(RATE_HZ), sends=tmp_path_factory.mktemp("localhost") / "imu")
    try:
        runs = {"default": probe(env), "lo": probe(env, "--interface", "lo")}
        imu.stop()
        return {"runs": runs, "sends": imu.send_times(), "matches": imu.matches()}
    finally:
        imu.stop()


@pytest.mark.parametrize("interface", ["default", "lo"])
def test_localhost_is_discovered_as_ros2_nodes_discover_it(localhost: dict, interface: str) -> None:
    done = localhost["runs"][interface]
    imu = topics_of(done)["/imu"]
    doc = json.loads(done.stdout)
    assert doc["ros2"]["discovery_range"] == "LOCALHOST"
    assert [p["node"] for p in imu["publishers"]] == ["/imu_driver"]
    window = (doc["start_ns"], doc["start_ns"] + doc["duration_ns"])
    assert_rate_of_the_talker(imu, window, localhost["sends"], localhost["matches"])


# ------------------------------------------------------------------ CYCLONEDDS_URI, ROS_STATIC_PEERS

@pytest.fixture(scope="module")
def unicast_only(kilted: ros2.Distribution) -> dict:
    """A talker with ROS 2's defaults (multicast discovery); the probe with multicast switched
    off by CYCLONEDDS_URI, first alone, then with ROS_STATIC_PEERS=127.0.0.1."""
    dom = peers.domain(3)
    imu = RclpyNode(kilted, shell(dom), "--node", "imu_driver", "--topic", "/imu")
    try:
        return {"alone": probe(shell(dom, CYCLONEDDS_URI=NO_MULTICAST)),
                "peered": probe(shell(dom, CYCLONEDDS_URI=NO_MULTICAST,
                                      ROS_STATIC_PEERS="127.0.0.1"))}
    finally:
        imu.stop()


def test_cyclonedds_uri_is_honoured(unicast_only: dict) -> None:
    done = unicast_only["alone"]
    assert done.returncode == 1, done.stdout
    assert "nothing discovered on DDS domain" in done.stderr
    assert "ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET" in done.stderr


def test_static_peers_are_honoured(unicast_only: dict) -> None:
    done = unicast_only["peered"]
    imu = topics_of(done)["/imu"]
    assert [p["node"] for p in imu["publishers"]] == ["/imu_driver"]
    assert json.loads(done.stdout)["ros2"]["static_peers"] == ["127.0.0.1"]
