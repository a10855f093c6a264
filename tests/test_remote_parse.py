"""--host / --place / the ssh command line / the supervisor's line protocol, without a network."""

import hashlib
import base64
import io
import shlex
import subprocess
from pathlib import Path

import pytest

from mwperf.errors import UsageError
from mwperf.remote.plan import parse_remote
from mwperf.remote.ssh import SshConnection, SshOptions
from mwperf.remote.supervised import LOST, Channel
from mwperf.remote.target import SshTarget, parse_hosts, parse_place, parse_target


@pytest.mark.parametrize("text, target", [
    ("ssh://pi@robot.local:2222", SshTarget("robot.local", "pi", 2222)),
    ("ssh://robot", SshTarget("robot")),
    ("pi@10.0.0.5", SshTarget("10.0.0.5", "pi")),
    ("ssh://root@[fe80::1]:22", SshTarget("fe80::1", "root", 22)),
])
def test_targets(text: str, target: SshTarget) -> None:
    assert parse_target(text) == target


@pytest.mark.parametrize("text, words", [
    ("http://robot", "only ssh://"), ("ssh://pi@robot:0", "1..65535"),
    ("ssh://pi@robot:x", "1..65535"), ("ssh://-oProxyCommand=x", "not a host"),
    ("ssh://p i@robot", "not a user"), ("ssh://robot;rm", "not a host"),
])
def test_bad_targets_name_the_flag(text: str, words: str) -> None:
    with pytest.raises(UsageError, match=f"--host: .*{words}"):
        parse_target(text)


def test_hosts_and_default_placement() -> None:
    hosts = parse_hosts("b=ssh://pi@robot,c=ssh://base")
    assert [n for n, _ in hosts] == ["b", "c"]
    place = dict(parse_place(None, ("b", "c"), ("pong", "ping")))
    assert place["ping"] == "local" and place["pong"] == "b" and place["rosmaster"] == "b"
    place = dict(parse_place("pong=c,rosmaster=local", ("b", "c"), ("pong", "ping")))
    assert place["pong"] == "c" and place["rosmaster"] == "local"
    for bad, words in (("b=ssh://x,b=ssh://y", "twice"), ("local=ssh://x", "not a host name"),
                       ("B=ssh://x", "not a host name"), ("b", "NAME=ssh://")):
        with pytest.raises(UsageError, match=words):
            parse_hosts(bad)
    for bad, words in (("pong=z", "no host 'z'"), ("relay=b", "cannot be placed"),
                       ("pong", "ROLE=HOST")):
        with pytest.raises(UsageError, match=f"--place: .*{words}"):
            parse_place(bad, ("b",), ("pong", "ping"))


def test_remote_plan_refuses_what_cannot_work(tmp_path: Path) -> None:
    roles = ("pong", "ping")
    assert parse_remote({}, roles, "udp") is None
    with pytest.raises(UsageError, match="--place: only together with --host"):
        parse_remote({"remote_place": "pong=b"}, roles, "udp")
    with pytest.raises(UsageError, match="real host cannot be on an emulated link.*local and b"):
        parse_remote({"host": "b=ssh://robot", "link": "delay=1ms"}, roles, "udp")
    with pytest.raises(UsageError, match="--transport iceoryx2 cannot cross"):
        parse_remote({"host": "b=ssh://robot"}, roles, "iceoryx2")
    with pytest.raises(UsageError, match="--ssh-config: no file"):
        parse_remote({"host": "b=ssh://robot", "ssh_config": str(tmp_path / "x")}, roles, "udp")
    assert parse_remote({"host": "b=ssh://robot", "cpu_quota": "b=50%"}, roles, "udp") is not None
    plan = parse_remote({"host": "b=ssh://pi@robot:2200"}, roles, "ros1")
    assert plan.to_dict()["hosts"] == {"b": "ssh://pi@robot:2200"}


def test_remote_commands_are_quoted_argument_vectors(tmp_path: Path) -> None:
    conn = SshConnection("b", SshTarget("robot", "pi", 2200), SshOptions(), tmp_path / "c")
    hostile = ["mwperf-agent", "sub", "--opt", "topic=a; rm -rf / $(reboot) `x` 'q' \"d\""]
    argv = conn.command(hostile)
    assert argv[-2:] == ["robot", shlex.join(hostile)]  # one word: the remote shell's input
    assert shlex.split(argv[-1]) == hostile
    assert ["-o", "BatchMode=yes"] == argv[argv.index("BatchMode=yes") - 1:][:2]
    assert "StrictHostKeyChecking=yes" in argv and "-p" in argv and "pi" in argv
    accept = SshConnection("b", SshTarget("robot"), SshOptions(accept_new_host_key=True),
                           tmp_path / "c").command(["true"])
    assert "StrictHostKeyChecking=accept-new" in accept


class _FakePopen:
    """What Channel reads: a supervisor's stdout as bytes, ssh's stderr, a stdin to write."""

    def __init__(self, stdout: bytes, stderr: bytes = b"") -> None:
        self.stdout, self.stderr = io.BytesIO(stdout), io.BytesIO(stderr)
        self.stdin = io.BytesIO()

    def wait(self, timeout: float | None = None) -> int:
        return 0


def test_channel_demultiplexes_the_supervisor_protocol(tmp_path: Path) -> None:
    report = b'{"role": "pong"}\n' * 5000
    chunks = [report[i:i + 30000] for i in range(0, len(report), 30000)]
    lines = [b"started 4242", b"out READY udp 10.0.0.2:5000", b"err warming up",
             b"usage {\"peak_rss_kib\": 6000}", b"bogus line", b"file pong.json"]
    lines[-1:] = [b"file pong.json " + base64.b64encode(c) for c in chunks]
    lines += [f"fileend pong.json {len(report)} {hashlib.sha256(report).hexdigest()}".encode(),
              b"file bad.json " + base64.b64encode(b"abc"), b"fileend bad.json 3 00", b"exit 3"]
    out, err = tmp_path / "pong.stdout", tmp_path / "pong.stderr"
    channel = Channel(_FakePopen(b"\n".join(lines) + b"\n"), out, err, tmp_path)
    assert channel.wait(5)
    assert channel.returncode == 3 and channel.lost is None and channel.remote_pid == 4242
    assert out.read_text() == "READY udp 10.0.0.2:5000\n"
    assert err.read_text() == "warming up\n"
    assert (tmp_path / "pong.json").read_bytes() == report
    assert not (tmp_path / "bad.json").exists()  # a checksum mismatch writes nothing


def test_a_channel_closed_without_exit_is_a_lost_connection(tmp_path: Path) -> None:
    channel = Channel(_FakePopen(b"started 1\nout READY x y\n", b"Connection reset by peer\n"),
                      tmp_path / "o", tmp_path / "e", tmp_path)
    assert channel.wait(5)
    assert channel.returncode == LOST
    assert "SSH connection closed" in channel.lost and "reset by peer" in channel.lost


SCENARIO = """description: a robot
transport: udp
rate: [100, 200]
hosts:
  robot: {ssh: pi@robot.local:2222}
place: {pong: robot, ping: local}
"""


def test_scenario_real_hosts_reach_every_point() -> None:
    from mwperf.scenario.expand import expand
    from mwperf.scenario.parse import parse_scenario
    scenario = parse_scenario(SCENARIO, "s.yaml", "s")
    points = expand(scenario, ["udp"])
    assert len(points) == 2
    for point in points:
        assert point.options["host"] == "robot=ssh://pi@robot.local:2222"
        assert point.options["remote_place"] == "pong=robot,ping=local"
        assert "topology" not in point.options


@pytest.mark.parametrize("text, words", [
    (SCENARIO.replace("pong: robot", "pong: rover"), r"s.yaml:6: field 'place': pong is placed "
                                                     r"on 'rover'"),
    (SCENARIO + "links:\n  robot<->local: wifi-80211n\n", "field 'links': real hosts"),
    (SCENARIO.replace("{ssh: pi@robot.local:2222}", "{ssh: 'pi@robot:99999'}"), "1..65535"),
    (SCENARIO.replace("{ssh: pi@robot.local:2222}", "{user: pi}"), "give {ssh: user@host"),
    (SCENARIO.replace("  robot: {ssh", "  sim: {}\n  robot: {ssh"), "cannot mix"),
])
def test_scenario_real_host_errors_name_file_line_and_field(text: str, words: str) -> None:
    from mwperf.scenario.parse import parse_scenario
    with pytest.raises(UsageError, match=words):
        parse_scenario(text, "s.yaml", "s")


class _FakeConnection:
    """What ensure_agent asks of a host: answers to --version and uname -m."""

    name, target, cache = "b", SshTarget("robot", "pi"), "/home/pi/.cache/mwperf"

    def __init__(self, machine: str) -> None:
        self.machine = machine
        self.commands: list[list[str]] = []

    def run(self, argv, stdin=None, timeout_s=0):
        self.commands.append(argv)
        return subprocess.CompletedProcess(argv, 127, b"", b"not found")

    def text(self, argv, timeout_s=0):
        self.commands.append(argv)
        return self.machine


def test_another_architecture_gets_one_line_with_the_cargo_target(tmp_path: Path) -> None:
    from mwperf.errors import RunError
    from mwperf.remote.deploy import ensure_agent

    class Local:
        path = tmp_path / "mwperf-agent"

        @staticmethod
        def version() -> str:
            return "mwperf-agent 0.1.0 (git abc) transports: udp"

    Local.path.write_bytes(b"\x7fELF fake")
    conn = _FakeConnection("aarch64")
    with pytest.raises(RunError) as caught:
        ensure_agent(conn, Local, lambda _: None)
    message = str(caught.value)
    assert "\n" not in message and "aarch64" in message
    assert "cargo build --release --target aarch64-unknown-linux-gnu" in message
    assert not any(c[:2] == ["sh", "-c"] for c in conn.commands)  # nothing was copied


class _Lease:
    prefix = "mwp1a2b3c"


class _Channel:
    def __init__(self, report, throttling=None) -> None:
        self.cgroup, self.throttling, self.lost = report, throttling, None

    def wait_limits(self, timeout_s: float = 30.0):
        return self.cgroup

    def refused(self):
        return None if self.cgroup else "--cpu-quota: cannot create cgroup X: Permission denied; connect as root"


def test_cpu_limits_on_real_hosts() -> None:
    from mwperf.emulation.cpu import CpuPlacement, parse_limits
    from mwperf.errors import RunError
    roles = ("pong", "ping")
    plan = parse_remote({"host": "b=ssh://robot", "remote_place": "pong=b,rosmaster=b"}, roles, "ros1")
    away, remote = plan.away(), ("b",)
    assert dict(away)["pong"] == "b" and "ping" not in dict(away)
    # A host's quota: everything placed there shares one cgroup <prefix>-<host>; the CPUs are
    # the host's (checked there, not against this machine's).
    limits = parse_limits("b=20%", "b=7", None, roles, away, remote)
    placement = CpuPlacement(limits, _Lease())
    assert placement.supervise_args("pong") == ["--cgroup", "mwp1a2b3c-b", "--cpu-quota", "20", "--cpu-pin", "7-7"]
    assert placement.supervise_args("rosmaster", daemon=True) == placement.supervise_args("pong")
    assert placement.supervise_args("ping") == []
    report = {"path": "/sys/fs/cgroup/cpu/mwperf/mwp1a2b3c-b", "version": 1, "quota_pct": 20.0, "cpus": [7]}
    placement.confirm_remote("rosmaster", "rosmaster", _Channel(report, {"periods": 30, "throttled_periods": 20, "throttled_s": 1.2}), daemon=True)
    placement.confirm_remote("pong", "pong", _Channel(report, {"periods": 10, "throttled_periods": 9, "throttled_s": 0.5}))
    cpu = placement.describe()
    assert cpu["cgroup_version"] == 1 and cpu["period_us"] == 100_000
    assert cpu["agents"]["pong"]["host"] == "b" and cpu["agents"]["pong"]["quota_pct"] == 20.0
    host = cpu["hosts"]["b"]
    assert host["members"] == ["rosmaster", "pong"] and host["cgroup"] == report["path"]
    assert host["throttling"]["periods"] == 30 and host["cpus"] == [7]
    # A role's own quota on a real host: a cgroup of its own, daemons there unlimited.
    placement = CpuPlacement(parse_limits("pong=50%", None, None, roles, away, remote), _Lease())
    assert placement.supervise_args("pong") == ["--cgroup", "mwp1a2b3c-pong", "--cpu-quota", "50"]
    assert placement.supervise_args("rosmaster", daemon=True) == []
    with pytest.raises(RunError, match="Permission denied; connect as root"):
        placement.confirm_remote("pong", "pong", _Channel(None))
    # Refused: a real-time priority on a real host, a role's limit on a limited host.
    with pytest.raises(UsageError, match="--rt-priority: not for pong on real host b.*--place pong=local"):
        parse_limits(None, None, "50", roles, away, remote)
    with pytest.raises(UsageError, match="pong runs on host b, which has a limit of its own"):
        parse_limits("b=20%,pong=50%", None, None, roles, away, remote)
    with pytest.raises(UsageError, match="no agent 'c'.*hosts: b"):
        parse_limits("c=20%", None, None, roles, away, remote)
