"""ROS 1 services against ROS 1's own tools: `rosservice` (Debian python3-rosservice) lists,
types and calls mwperf's ROS 1 service server, with the srv class `mwperf_msgs/Bytes` generated
by genpy. (A rospy server answering mwperf's client, and a rospy ServiceProxy calling mwperf's
server: crates/mwperf-transports/tests/transports/ros1_services.rs.)"""

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REAL_AGENT

pytestmark = pytest.mark.agent

GENERATE = """
import os, sys, genpy.generator, genpy.genpy_main as m
d = sys.argv[1]; out = os.path.join(d, 'mwperf_msgs', 'srv')
def gen(argv):
    try: m.genmain(argv, 'gensrv_py.py', genpy.generator.SrvGenerator())
    except SystemExit as e: assert not e.code, e.code
gen(['gensrv', '-p', 'mwperf_msgs', '-o', out, '-Imwperf_msgs:' + d, os.path.join(d, 'srv', 'Bytes.srv')])
gen(['gensrv', '--initpy', '-p', 'mwperf_msgs', '-o', out])
open(os.path.join(d, 'mwperf_msgs', '__init__.py'), 'w').close()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_rosservice_calls_mwperfs_ros1_server(tmp_path: Path) -> None:
    for program in ("rosservice", "rosmaster"):
        if shutil.which(program) is None:
            pytest.fail(f"{program} is not installed: make setup installs it (scripts/system-deps.sh)")
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "Bytes.srv").write_text("uint8[] data\n---\nuint8[] data\n")
    subprocess.run(["/usr/bin/python3", "-c", GENERATE, str(tmp_path)], check=True, timeout=60)
    port = free_port()
    uri = f"http://127.0.0.1:{port}/"
    env = {**os.environ, "ROS_MASTER_URI": uri, "ROS_IP": "127.0.0.1", "ROS_HOME": str(tmp_path),
           "PYTHONPATH": str(tmp_path)}
    master = subprocess.Popen(["rosmaster", "--core", "-p", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = None
    try:
        deadline = time.monotonic() + 20
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert time.monotonic() < deadline, "rosmaster did not start"
            time.sleep(0.1)
        server = subprocess.Popen([str(REAL_AGENT), "server", "--transport", "ros1", "--listen",
                                   f"{uri}#rossrv", "--reply-payload", "4", "--quiet", "--json",
                                   str(tmp_path / "server.json")], env=env,
                                  stdout=subprocess.PIPE, text=True)
        assert server.stdout is not None
        assert server.stdout.readline().split()[:2] == ["READY", "ros1"]

        def rosservice(*args: str) -> str:
            done = subprocess.run(["rosservice", *args], env=env, capture_output=True,
                                  text=True, timeout=30)
            assert done.returncode == 0, done.stderr
            return done.stdout

        assert "/mwperf/rossrv" in rosservice("list").split()
        assert rosservice("type", "/mwperf/rossrv").strip() == "mwperf_msgs/Bytes"
        reply = rosservice("call", "/mwperf/rossrv", "data: [1, 2, 3]")
        data = [int(v) for v in reply.split("[", 1)[1].split("]", 1)[0].split(",")]
        assert bytes(data[:4]) == b"MWPF" and len(data) == 56 + 4  # an mwperf reply, 4 B payload
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        master.terminate()
        master.wait(timeout=10)
    serving = json.loads((tmp_path / "server.json").read_text())["serving"]
    assert (serving["requests"], serving["answered"], serving["foreign"]) == (1, 1, 1)
