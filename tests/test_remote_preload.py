"""remote/preload.py: a preload library copied to a real host once, checked to load there, and
put in front of the agent's command by the runner's environment.

The "host" here runs commands on this machine (its remote mwperf folder a temporary one), so
the copy, install and load-check scripts run for real; the agent is a shell script printing
its version line, and the library a tiny one compiled here."""

import platform
import shutil
import subprocess
from pathlib import Path

import pytest

from mwperf.errors import RunError
from mwperf.remote.deploy import RemoteAgent, checksum
from mwperf.remote.hosts import PointHosts, RealHost
from mwperf.remote.preload import ensure_library, remote_library_path, remote_preload


class LocalConnection:
    """What preload.py and PointHosts.spawn use of an SshConnection, run on this machine."""

    def __init__(self, cache: Path, machine: str | None = None) -> None:
        self.name, self.target, self.cache = "b", "user@robot", str(cache)
        self.machine = machine or platform.machine()
        self.commands: list[list[str]] = []

    def run(self, argv: list[str], stdin: bytes | None = None, timeout_s: float = 30):
        self.commands.append(argv)
        if argv == ["uname", "-m"]:
            return subprocess.CompletedProcess(argv, 0, self.machine.encode() + b"\n", b"")
        return subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout_s)

    def text(self, argv: list[str], timeout_s: float = 30) -> str:
        done = self.run(argv, timeout_s=timeout_s)
        assert done.returncode == 0, done.stderr
        return done.stdout.decode().strip()

    def popen(self, argv: list[str]) -> subprocess.Popen:
        """The supervisor's channel: just its last line (the command is recorded)."""
        self.commands.append(argv)
        return subprocess.Popen(["sh", "-c", "echo exit 0"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)


PRELOADED = b"mwperf-test: preloaded"
"""what the test library writes to stderr when it is loaded into a process"""
PRELOADED_SOURCE = ("#include <unistd.h>\n__attribute__((constructor)) static void hello(void) "
                    "{ write(2, \"mwperf-test: preloaded\\n\", 23); }\n")


def build_library(tmp_path: Path) -> Path:
    """A library that says so on stderr when a process loads it (skip without a compiler)."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to build a library to preload")
    source = tmp_path / "preloaded.c"
    source.write_text(PRELOADED_SOURCE)
    built = tmp_path / "build" / "libmwperf_layers.so"
    built.parent.mkdir()
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(built), str(source)], check=True)
    return built


@pytest.fixture
def library(tmp_path: Path) -> Path:
    return build_library(tmp_path)


VERSION = "mwperf-agent 0.1.0 (test)"


def robot(tmp_path: Path, machine: str | None = None) -> RealHost:
    agent = tmp_path / "mwperf-agent"
    agent.write_text(f"#!/bin/sh\necho '{VERSION}'\n")
    agent.chmod(0o755)
    conn = LocalConnection(tmp_path / "remote", machine)
    return RealHost(conn, RemoteAgent(str(agent), VERSION, False), "10.0.0.2", "10.0.0.1", {})


def test_copied_once_checked_then_cached(tmp_path: Path, library: Path) -> None:
    host, said = robot(tmp_path), []
    path = ensure_library(host, library, said.append)
    assert path == f"{tmp_path}/remote/lib/{checksum(library)[:16]}/libmwperf_layers.so"
    assert path == remote_library_path(host.conn.cache, library)
    assert Path(path).read_bytes() == library.read_bytes() and len(said) == 1
    assert "copying libmwperf_layers.so" in said[0] and "user@robot" in said[0]
    assert ["env", f"LD_PRELOAD={path}", host.agent.path, "--version"] in host.conn.commands
    host.conn.commands.clear()
    assert ensure_library(host, library, said.append) == path
    assert host.conn.commands == [] and len(said) == 1  # known: nothing asked of the host
    again = robot(tmp_path)  # a new connection (another mwperf): no copy, but checked
    assert ensure_library(again, library, said.append) == path and len(said) == 1
    assert any(c[0] == "env" for c in again.conn.commands)


def test_a_library_the_loader_refuses_is_not_used(tmp_path: Path) -> None:
    broken = tmp_path / "libmwperf_layers.so"
    broken.write_bytes(b"not an ELF file")
    with pytest.raises(RunError, match="does not run with .* preloaded .*cannot be preloaded"):
        ensure_library(robot(tmp_path), broken, lambda _: None)


def test_missing_library_and_other_architecture(tmp_path: Path, library: Path) -> None:
    with pytest.raises(RunError, match="missing: it is built with the agent"):
        ensure_library(robot(tmp_path), tmp_path / "nowhere.so", lambda _: None)
    with pytest.raises(RunError, match="is riscv64 and .* riscv64gc-unknown-linux-gnu"):
        ensure_library(robot(tmp_path, "riscv64"), library, lambda _: None)


def test_the_remote_agent_starts_with_the_remote_library_preloaded(tmp_path: Path,
                                                                    library: Path) -> None:
    host = robot(tmp_path)
    hosts = PointHosts({"b": host}, {"pong": "b", "ping": "local"}, "mwtest")
    env = remote_preload(hosts, "pong", library, lambda _: None)
    assert env == {"LD_PRELOAD": remote_library_path(host.conn.cache, library)}
    workdir = tmp_path / "work"
    workdir.mkdir()
    proc = hosts.spawn("pong", ["mwperf-agent", "pong", "--listen", "x"], workdir, "pong",
                       {"ROS_IP": "10.0.0.2", **env}, ["pong.json"])
    assert proc.wait(10) == 0
    supervise = host.conn.commands[-1]
    child = supervise[supervise.index("--") + 1:]
    assert child == ["env", "ROS_IP=10.0.0.2", f"LD_PRELOAD={env['LD_PRELOAD']}",
                     host.agent.path, "pong", "--listen", "x"]
