"""Real ROS 2 / DDS peers for `mwperf probe --ros2`, started as processes on loopback: what the
end-to-end tests (tests/test_probe_ros2_e2e.py) and the benchmark (benchmarks/bench_probe_ros2.py)
probe. None of them is mwperf code on the DDS side:

- ``python_peer``: publisher.py, a python ``cyclonedds`` ROS 2 publisher (or subscriber) with its
  node on ros_discovery_info, known stamps (age = latency + the stamp offset, 7 ms by default),
  rate, size, QoS and an optional pause, and the send times as ground truth;
- ``ddsperf_pub``: Cyclone DDS's own ``ddsperf pub`` (a plain DDS topic, DDSPerfRDataKS);
- ``fastdds_pub``: benchmarks/fastdds_ref/rospub.cpp, a Fast DDS 2.x publisher of ``rt/...``
  (built here with g++ against Debian's libfastrtps, as the benchmarks' Fast DDS programs);
- ``BridgePair``: two zenoh-plugin-ros2dds bridges (mwperf-bridge-zenoh) joined by zenoh, from a
  "robot" DDS domain into the probe's: the far bridge writes the robot's topics into the probe's
  domain as its own node's publishers;
- ``checker``: checker.py, a second participant's view of the domain (every writer/reader per
  participant, the nodes): what the probe created, seen from outside;
- ``announcer``: announcer.py, a burst of ros_discovery_info announcements (a launch's).

Every peer runs with the agents' own Cyclone loopback configuration (CYCLONEDDS_URI, unicast
discovery on 127.0.0.1, as ``--interface lo`` of the probe) in a domain of the caller's own
(``domain()``), so tests side by side never see each other.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PUBLISHER = HERE / "publisher.py"
CHECKER = HERE / "checker.py"
ANNOUNCER = HERE / "announcer.py"
ROSPUB_SRC = ROOT / "benchmarks" / "fastdds_ref" / "rospub.cpp"
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

FIRST_DOMAIN = 150
DOMAINS_PER_WORKER = 10
"""worker gwN uses domains 150 + 10N .. 159 + 10N (N < 8: at most 229, below DDS's 232, and the
ports of domains >= 150 are 44900+: not where another test's zenoh/mqtt daemons listen)"""


def domain(offset: int = 0) -> int:
    """A DDS domain id of this test process's own (pytest-xdist worker gwN, else from the pid):
    ``offset`` 0..9 picks one of its ten."""
    assert 0 <= offset < DOMAINS_PER_WORKER
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    slot = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else os.getpid()
    return FIRST_DOMAIN + DOMAINS_PER_WORKER * (slot % 8) + offset


def cyclone_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment with the agents' Cyclone loopback configuration (needs the agent: the
    configuration is its descriptor's)."""
    from mwperf.transports.cyclonedds import loopback_config
    return {**os.environ, "CYCLONEDDS_URI": loopback_config(), **(extra or {})}


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the process that started it dies (a test killed
    mid-fixture leaves no publisher running)."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Peer:
    """A peer process: its stdout lines collected by a thread; ``wait_for`` a line, ``stop`` it
    (SIGTERM, then its last lines)."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.name, self.argv = name, argv
        self.lines: list[str] = []
        self._seen = threading.Condition()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env=env if env is not None else cyclone_env(),
                                     start_new_session=True, preexec_fn=_die_with_parent)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._err: list[str] = []
        self._err_reader = threading.Thread(target=self._read_err, daemon=True)
        self._err_reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._seen:
                self.lines.append(line.rstrip("\n"))
                self._seen.notify_all()
        with self._seen:
            self._seen.notify_all()

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._err.append(line)
            del self._err[:-200]

    @property
    def stderr(self) -> str:
        return "".join(self._err)

    def wait_for(self, match: Callable[[str], bool], timeout: float = 20.0) -> str:
        """The first stdout line ``match`` accepts; RuntimeError (with stderr) if none came."""
        end = time.monotonic() + timeout
        with self._seen:
            while True:
                hit = next((ln for ln in self.lines if match(ln)), None)
                if hit is not None:
                    return hit
                if self.proc.poll() is not None and not self._reader.is_alive():
                    raise RuntimeError(f"{self.name} exited ({self.proc.returncode}) before the "
                                       f"line expected: {self.stderr[-800:]}")
                left = end - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"{self.name}: no such line in {timeout:g} s "
                                       f"(got {self.lines[-3:]}): {self.stderr[-800:]}")
                self._seen.wait(min(left, 0.2))

    def json_line(self, key: str, timeout: float = 20.0) -> dict:
        """The first stdout JSON object with ``key``."""
        return json.loads(self.wait_for(lambda ln: ln.startswith("{") and f'"{key}"' in ln,
                                        timeout))

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (the peers print their totals on it), then wait; SIGKILL if it hangs."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(5)

    def wait(self, timeout: float = 30.0) -> int:
        code = self.proc.wait(timeout)
        self._reader.join(5)
        return code


class PythonPeer(Peer):
    """publisher.py: ``ready`` = its READY object (participant, endpoint GUIDs, size, ...)."""

    def __init__(self, dom: int, *args: str, sends: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        argv = [sys.executable, str(PUBLISHER), "--domain", str(dom), *args]
        if sends is not None:
            argv += ["--sends", str(sends)]
        self.sends_file = sends
        super().__init__(f"publisher.py {' '.join(args)}", argv, env)
        self.ready = self.json_line("ready")

    def summary(self) -> dict:
        """Stop it and return its last line: {"sent": N, ...} or {"received": N}."""
        self.stop()
        return self.json_line("sent" if "--role" not in self.argv or
                              self.argv[self.argv.index("--role") + 1] == "pub" else "received", 5)

    def sends(self) -> list[int]:
        """Every send time (unix ns), after summary()."""
        assert self.sends_file is not None
        return [int(t) for t in self.sends_file.read_text().split()]


def python_peer(dom: int, *args: str, sends: Path | None = None) -> PythonPeer:
    return PythonPeer(dom, *args, sends=sends)


def ddsperf_pub(dom: int, rate: str = "100Hz", size: str = "1k", seconds: float = 0) -> Peer:
    """``ddsperf [-D S] -i DOM pub RATE size SIZE``: writes DDSPerfRDataKS (type KeyedSeq), and
    has DDSPerfCPUStats/DDSPerfRPingKS writers too (no ROS 2 names: ros false). Needs
    Debian's cyclonedds-tools."""
    if shutil.which("ddsperf") is None:
        raise FileNotFoundError("ddsperf is not installed (Debian cyclonedds-tools)")
    argv = ["ddsperf", *(["-D", f"{seconds:g}"] if seconds else []), "-i", str(dom), "pub",
            rate, "size", size]
    return Peer("ddsperf pub", argv)


def target_release() -> Path:
    given = os.environ.get("CARGO_TARGET_DIR")
    root = Path(given) if given else ROOT / "target"
    return (root if root.is_absolute() else ROOT / root) / "release"


def build_fastdds_rospub() -> Path:
    """g++ benchmarks/fastdds_ref/rospub.cpp into $CARGO_TARGET_DIR/release/fastdds-rospub
    (again only when a source is newer); FileNotFoundError naming what is missing."""
    out = target_release() / "fastdds-rospub"
    sources = [ROSPUB_SRC, ROSPUB_SRC.with_name("ref_common.hpp")]
    if out.exists() and all(s.stat().st_mtime <= out.stat().st_mtime for s in sources):
        return out
    if shutil.which("g++") is None or not Path("/usr/include/fastdds").is_dir():
        raise FileNotFoundError("building the Fast DDS peer needs g++ and Debian's "
                                "libfastrtps-dev")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".fastdds-rospub.{os.getpid()}")
    cmd = ["g++", "-std=c++17", "-O2", "-o", str(tmp), str(ROSPUB_SRC), "-lfastrtps",
           "-lfastcdr"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr[-2000:]}")
    tmp.replace(out)  # atomic: a parallel build never leaves a half-written binary
    return out


class FastddsPub(Peer):
    """rospub: ``participant``/``writer`` GUIDs from its READY line; ``sent()`` after stop."""

    def __init__(self, dom: int, topic: str, hz: float, seconds: float = 0,
                 reliability: str = "reliable", durability: str = "volatile", depth: int = 10,
                 deadline_ms: float = 0, size: int = 64) -> None:
        argv = [str(build_fastdds_rospub()), str(dom), topic, f"{hz:g}", f"{seconds:g}",
                reliability, durability, str(depth), f"{deadline_ms:g}", str(size)]
        super().__init__("fastdds-rospub", argv)
        fields = dict(f.split("=", 1) for f in self.wait_for(
            lambda ln: ln.startswith("READY")).split()[1:])
        self.participant, self.writer = fields["participant"], fields["writer"]

    def sent(self) -> int:
        self.stop()
        return int(self.wait_for(lambda ln: ln.startswith("sent "), 5).split()[1])


def fastdds_pub(dom: int, topic: str, hz: float, **qos: object) -> FastddsPub:
    return FastddsPub(dom, topic, hz, **qos)  # type: ignore[arg-type]


def announcer(dom: int, count: int) -> Peer:
    """announcer.py: ``json_line("sent")`` once its burst of ``count`` went out (after a reader
    matched); it stays until stopped."""
    peer = Peer("announcer.py", [sys.executable, str(ANNOUNCER), "--domain", str(dom),
                                 "--count", str(count)])
    peer.json_line("ready")
    return peer


def checker(dom: int, seconds: float) -> Peer:
    """checker.py for ``seconds``: ``json_line("self")`` is its report once it ends."""
    peer = Peer("checker.py", [sys.executable, str(CHECKER), "--domain", str(dom), "--seconds",
                               f"{seconds:g}"])
    peer.json_line("ready")
    return peer


ROBOT_NODE = "zenoh_bridge_robot"
BASE_NODE = "zenoh_bridge_base"
"""the bridges' node names (plugin option nodename; namespace "/"): the probe sees the base one,
/zenoh_bridge_base, as the node of every topic the bridges route into its domain"""


class BridgePair:
    """Two zenoh-plugin-ros2dds bridges (mwperf-bridge-zenoh; python/mwperf/bridges): the robot's
    in DDS domain ``robot`` (ROS_DISTRO=humble: reads publisher.py's 24-byte GIDs) listening for
    zenoh on a free TCP port, the base's in ``base`` (the probe's domain; ROS_DISTRO=jazzy: it
    announces itself with 16-byte GIDs) connected to it. A ROS 2 node's publisher in ``robot``
    is announced over zenoh; the base bridge then creates a DDS writer of the same topic and type
    in ``base`` as its node /zenoh_bridge_base, and data flows once a ROS 2 node there (its
    ros_discovery_info in the layout the base bridge reads: ``--gid 16``) subscribes."""

    def __init__(self, robot: int, base: int, workdir: Path) -> None:
        from mwperf.bridges.build import ensure_zenoh_bridge
        from mwperf.bridges.zenoh_ros2dds import zenoh_config
        from mwperf.daemons.base import free_port
        binary = ensure_zenoh_bridge("zenoh-ros2dds")
        endpoint = f"tcp/127.0.0.1:{free_port()}"
        self.halves: list[Peer] = []
        for half, dom, node, distro, listen, connect in (
                ("robot", robot, ROBOT_NODE, "humble", endpoint, None),
                ("base", base, BASE_NODE, "jazzy", None, endpoint)):
            path = workdir / f"bridge-{half}.json5"
            path.write_text(zenoh_config(dom, node, listen, connect))
            self.halves.append(Peer(f"bridge {half}", [str(binary), str(path)], cyclone_env({
                "ROS_DISTRO": distro, "RUST_LOG": os.environ.get("MWPERF_BRIDGE_LOG", "warn")})))
            self.halves[-1].wait_for(lambda ln: ln.strip() == "ready", 30)

    def stop(self) -> None:
        for half in reversed(self.halves):
            half.stop()


def probe_ros2_missing(agent: Path) -> str | None:
    """Why `mwperf probe --ros2` cannot run here yet, or None: the agent must have
    ``probe-ros2`` and this checkout's ``mwperf probe`` its ``--ros2`` (issue 28)."""
    shown = subprocess.run([sys.executable, "-m", "mwperf", "probe", "--help"],
                           capture_output=True, text=True, timeout=60, check=False)
    if "--ros2" not in shown.stdout:
        return "'mwperf probe' has no --ros2 yet (issue 28)"
    try:
        done = subprocess.run([str(agent), "probe-ros2", "--help"], capture_output=True,
                              text=True, timeout=20, check=False)
    except OSError as exc:
        return f"{agent}: {exc.strerror}"
    if done.returncode != 0:
        return (f"{agent} has no 'probe-ros2' subcommand yet (probe-ros2 --help: exit "
                f"{done.returncode}); build it with 'make build'")
    return None


def probe(dom: int, *args: str, duration: str = "5s", timeout: float = 120,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``mwperf probe --ros2 --domain DOM --interface lo ARGS --duration D --json``, as a user
    runs it (the loopback configuration is the probe's own --interface lo)."""
    return subprocess.run([sys.executable, "-m", "mwperf", "probe", "--ros2", "--domain",
                           str(dom), "--interface", "lo", *args, "--duration", duration,
                           "--json"], capture_output=True, text=True, timeout=timeout,
                          env=env, check=False)


def window_truth(sends: list[int], start_ns: int, end_ns: int) -> tuple[int, float]:
    """The publisher's own (count, rate) over [start_ns, end_ns): the sends inside, and
    (count - 1) / (last - first) as the probe computes its rate from arrivals."""
    inside = [t for t in sends if start_ns <= t < end_ns]
    span = inside[-1] - inside[0] if len(inside) > 1 else 0
    return len(inside), ((len(inside) - 1) * 1e9 / span if span else 0.0)
