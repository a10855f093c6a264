"""The ros2 transport's services against real rclpy peers of mwperf's managed Kilted
(tests/ros2peers/rclpy_service.py: an rclpy service server and an rclpy client of
rcl_interfaces/srv/GetParameters; missing, these fail naming the install command):

- mwperf's ros2 client calls a real rclpy server (which answers each request with its own
  bytes): every call answered with the call's header and payload intact (checked, none
  foreign), as many data calls as the server itself counted;
- a real rclpy client calls mwperf's ros2 server: every reply is mwperf's echo of that call
  (header checksum, seq, FLAG_ECHO, the size), as many as the server counted; asking for a
  parameter by name (a foreign call) is answered and counted foreign;
- an rclpy server killed mid-run: the client's result is partial with the reason, in a bounded
  time, and no process or Fast DDS file of the run is left."""

import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import REAL_AGENT
from mwperf import ros2
from mwperf.errors import UsageError
from ros2peers import peers
from ros2peers.peers import Peer
from test_probe_ros2_rclpy_e2e import shell
from test_ros2_services_e2e import remove_crashed
from test_ros2_transport_e2e import fastdds_files, leftovers

pytestmark = pytest.mark.agent

SERVICE_PEER = Path(__file__).resolve().parent / "ros2peers" / "rclpy_service.py"
HEADER_LEN = 56
PARAMETER = "use_sim_time"
"""what a foreign caller asks for (every ROS 2 node has it)"""



class RclpyService(Peer):
    """tests/ros2peers/rclpy_service.py with the distribution's python and environment."""

    def __init__(self, dist: ros2.Distribution, env: dict[str, str], *args: str) -> None:
        super().__init__(f"rclpy service {' '.join(args)}",
                         [str(dist.python), str(SERVICE_PEER), *args],
                         env=dist.child_env(base=env))
        self.ready = self.json_line("ready", 60)


def place(offset: int) -> tuple[dict[str, str], int, str]:
    dom, base = peers.domain(offset), f"rclpy_srv_{uuid.uuid4().hex[:8]}"
    return shell(dom), dom, base


@pytest.mark.parametrize("distro,payload,rate", [("kilted", 64, 200), ("kilted", 65536, 50),
                                                ("jazzy", 64, 200)])
def test_mwperfs_client_calls_a_real_rclpy_server(distro: str, payload: int, rate: int) -> None:
    try:
        dist = ros2.pick(distro, env={})  # the server's and the client's distribution
    except UsageError as exc:
        pytest.fail(f"{exc} (make setup installs it)")
    env, dom, base = place(8)
    count = 200
    server = RclpyService(dist, env, "--role", "server", "--node", "echo_server",
                          "--service", f"/mwperf/{base}")
    try:
        done = subprocess.run([str(REAL_AGENT), "client", "--transport", "ros2", "--connect",
                               f"{dom}/{base}", "--rate", str(rate), "--count", str(count),
                               "--payload", str(payload), "--json", "-", "--quiet"],
                              capture_output=True, text=True, timeout=120,
                              env=dist.child_env(base=env))
        server.stop()  # it prints its counts as it ends
        counts = server.json_line("answered", 5)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    m = json.loads(done.stdout)["measurement"]
    calls = m["calls"]
    assert m["accounting"]["sent"] == m["accounting"]["received"] == calls["answered"] == count
    assert m["accounting"]["corrupted"] == calls["unchecked"] == 0  # the echo checked, intact
    assert calls["timeouts"] == calls["unmatched"] == 0
    # the rclpy server's own count of the measured calls (probes and warm-up aside)
    assert counts["data"] == count, counts
    assert counts["answered"] >= count


@pytest.mark.parametrize("payload,foreign", [(64, False), (65536, False), (64, True)])
def test_a_real_rclpy_client_calls_mwperfs_server(kilted: ros2.Distribution, tmp_path: Path,
                                                  payload: int, foreign: bool) -> None:
    env, dom, base = place(9)
    count = 50
    server = subprocess.Popen([str(REAL_AGENT), "server", "--transport", "ros2", "--listen",
                               f"{dom}/{base}", "--json", str(tmp_path / "server.json"),
                               "--quiet"], stdout=subprocess.PIPE, text=True,
                              env=kilted.child_env(base=env))
    try:
        assert server.stdout is not None
        assert server.stdout.readline().split()[:2] == ["READY", "ros2"]
        client = RclpyService(kilted, env, "--role", "client", "--node", "caller", "--service",
                              f"/mwperf/{base}", "--count", str(count), "--payload",
                              str(payload), *(("--name", PARAMETER) if foreign else ()))
        result = client.json_line("calls", 120)
        client.stop()
    finally:
        server.terminate()
        assert server.wait(timeout=10) == 0
    assert result["answered"] == result["echoed"] == count, result
    # a reply of the request's size (--reply-payload's default); a foreign call's request is the
    # parameter name's text
    assert result["reply_bytes"] == [HEADER_LEN + (len(PARAMETER) if foreign else payload)], result
    serving = json.loads((tmp_path / "server.json").read_text())["serving"]
    # the server's own count: every call of the rclpy client, foreign or not
    assert serving["requests"] == serving["answered"] == count, serving
    assert serving["foreign"] == (count if foreign else 0), serving
    assert serving["reply_errors"] == 0, serving


# serial: the killed peer's Fast DDS files stay in /dev/shm, unmapped, until the test removes
# them; another test's "nothing left" check running meanwhile would count them as its own
@pytest.mark.serial
def test_an_rclpy_server_killed_mid_run_is_a_partial_result(kilted: ros2.Distribution,
                                                            tmp_path: Path) -> None:
    env, dom, base = place(8)
    first = fastdds_files()
    server = RclpyService(kilted, env, "--role", "server", "--node", "dying_server",
                          "--service", f"/mwperf/{base}")
    before = fastdds_files()  # the rclpy server's own are there: a crash leaves them
    client = subprocess.Popen([str(REAL_AGENT), "client", "--transport", "ros2", "--connect",
                               f"{dom}/{base}", "--rate", "100", "--duration", "30s",
                               "--call-timeout", "300ms", "--peer-timeout", "500ms", "--json",
                               str(tmp_path / "client.json"), "--quiet"], text=True,
                              env=kilted.child_env(base=env))
    try:
        time.sleep(4.0)
        server.proc.kill()  # SIGKILL: no goodbye to the client's RMW
        server.proc.wait()
        killed = time.monotonic()
        code = client.wait(timeout=20)
        ended = time.monotonic() - killed
    finally:
        client.kill()
        client.wait()
        server.stop()
    assert code == 3, code  # partial
    assert 0.3 + 0.5 <= ended < 0.3 + 0.5 + 3.0, ended  # call timeout + peer timeout, then out
    report = json.loads((tmp_path / "client.json").read_text())
    assert report["status"] == "partial" and "silent" in report["status_reason"], report[
        "status_reason"]
    calls = report["measurement"]["calls"]
    assert calls["answered"] > 50 and calls["timeouts"] > 0, calls
    assert calls["answered"] + calls["timeouts"] == report["measurement"]["accounting"]["sent"]
    # nothing running, and the client left none of its Fast DDS files
    assert server.proc.poll() is not None and client.poll() is not None
    assert not leftovers(before)
    remove_crashed(first)
