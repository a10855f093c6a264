"""mwperf doctor: one real run on this machine, and each missing thing (probes pointed at
nothing) reported with its fix and the right exit code."""

import json
from pathlib import Path

import pytest
from conftest import run_mwperf

from mwperf import doctor
from mwperf.doctor import Finding, leftovers, programs, system


@pytest.fixture(autouse=True)
def lease_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "leases"
    monkeypatch.setenv("MWPERF_LEASE_DIR", str(folder))
    return folder


class StubAgent:
    path = Path("/opt/mwperf-agent")

    def __init__(self, transports: list[str]) -> None:
        self._transports = transports

    def version(self) -> str:
        return "mwperf-agent 9.9.9 (git stub)"

    def transports(self) -> list[str]:
        return self._transports


def by_name(findings: list[Finding]) -> dict[str, Finding]:
    return {f.name: f for f in findings}


def test_real_run_on_this_machine(fake_env: dict[str, str]) -> None:
    done = run_mwperf("doctor", "--json", env=fake_env)
    report = json.loads(done.stdout)
    names = [f["name"] for f in report["findings"]]
    for name in ("stale leases", "root", "netns", "netem", "tun", "cgroups", "rt-priority",
                 "clocksource", "cpu-governor", "agent", "udp", "zenoh", "ddsperf", "sockperf",
                 "iperf3", "chromium"):
        assert name in names
    assert all(f["status"] in ("ok", "missing", "warn") for f in report["findings"])
    assert all(f["hint"] for f in report["findings"] if f["status"] == "missing")
    assert report["ok"] is (done.returncode == 0) and report["ok"]  # the fake agent: udp/tcp/uds
    assert done.stderr == ""
    text = run_mwperf("doctor", env=fake_env)
    assert text.returncode == 0 and "everything the default suite needs is here" in text.stdout


def test_missing_agent_fails_with_the_build_hint(fake_env: dict[str, str],
                                                 tmp_path: Path) -> None:
    done = run_mwperf("doctor", env={**fake_env, "MWPERF_AGENT": str(tmp_path / "nowhere")})
    assert done.returncode == 1
    line = next(ln for ln in done.stdout.splitlines() if " agent " in ln)
    assert line.startswith("missing") and line.endswith("(needed)")
    assert "fix: make build" in done.stdout
    assert "the default suite cannot run: missing agent" in done.stdout


def test_missing_daemons_of_built_in_transports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(programs, "find_agent",
                        lambda: StubAgent(["udp", "mqtt", "ros1", "cyclonedds", "zenoh"]))
    monkeypatch.setattr(programs, "which", lambda program: None)
    monkeypatch.setattr(programs, "find_library", lambda name: None)
    found = by_name(programs.check_agent_and_transports())
    assert found["agent"].detail.startswith("mwperf-agent 9.9.9")
    assert (found["mqtt"].status, found["mqtt"].hint) == (
        "missing", "apt-get install mosquitto (or make setup)")
    assert found["mqtt"].blocking and found["ros1"].blocking and found["cyclonedds"].blocking
    assert found["ros1"].hint == "apt-get install python3-rosmaster (or make setup)"
    assert found["ros1 relay"].status == "missing" and not found["ros1 relay"].blocking
    assert "libddsc0debian" in found["cyclonedds"].hint
    assert found["zenoh"].status == "ok"
    assert (found["iceoryx2"].status, found["iceoryx2"].blocking) == ("warn", False)
    assert doctor.exit_code(list(found.values())) == 1


def test_tools_missing_are_hints_not_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(programs, "which", lambda program: None)
    found = by_name(programs.check_tools())
    assert found["sockperf"].hint == "apt-get install sockperf"
    assert found["chromium"].hint == "apt-get install chromium"
    assert doctor.exit_code(list(found.values())) == 0


def test_not_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system, "is_root", lambda: False)
    found = by_name(system.check_root() + system.check_netns_and_netem())
    assert found["root"].status == "missing" and "sudo" in found["root"].hint
    assert found["netns"].hint == found["netem"].hint == system.NO_ROOT


def test_missing_tun(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(system, "TUN_DEVICE", tmp_path / "tun")
    (finding,) = system.check_tun()
    assert finding.status == "missing" and finding.hint.startswith("modprobe tun")


def test_no_cpu_cgroup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system.cgroups, "hierarchies", lambda: [])
    monkeypatch.setattr(system.cgroups, "cpu_hierarchy", lambda: None)
    (finding,) = system.check_cgroups()
    assert finding.status == "missing" and "no cgroup mounted" in finding.detail
    assert "mount -t cgroup2" in finding.hint


def test_slow_clocksource_and_governor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "current_clocksource").write_text("hpet\n")
    (tmp_path / "available_clocksource").write_text("tsc hpet acpi_pm \n")
    monkeypatch.setattr(system, "CLOCKSOURCE", tmp_path)
    (clock,) = system.check_clocksource()
    assert clock.status == "warn" and clock.hint == f"echo tsc > {tmp_path}/current_clocksource"
    governor = tmp_path / "cpu0" / "cpufreq" / "scaling_governor"
    governor.parent.mkdir(parents=True)
    governor.write_text("powersave\n")
    monkeypatch.setattr(system, "CPUS", tmp_path)
    (finding,) = system.check_governor()
    assert finding.status == "warn" and "cpupower frequency-set -g performance" in finding.hint


def test_leftovers_are_reaped_and_orphans_named(lease_folder: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    left = tmp_path / "left-behind"
    left.write_text("x")
    lease_folder.mkdir()
    (lease_folder / "abcdef.json").write_text(json.dumps({
        "tag": "abcdef", "purpose": "udp roundtrip point", "owner": "999999999:1",
        "taken_at": 0, "resources": [["path", str(left)]]}))
    devices = tmp_path / "net"
    (devices / "mwp123456-a").mkdir(parents=True)
    monkeypatch.setattr(leftovers, "NET_DEVICES", devices)
    monkeypatch.setattr(leftovers, "NETNS_DIR", tmp_path / "no-netns")
    monkeypatch.setattr(leftovers.cgroups, "cpu_hierarchy", lambda: None)
    findings = leftovers.check_leftovers()
    stale = [f for f in findings if f.name == "stale leases"]
    assert [f.status for f in stale] == ["warn"] and f"path {left}" in stale[0].detail
    assert not left.exists() and not list(lease_folder.glob("*.json"))
    (orphan,) = [f for f in findings if f.name == "orphan"]
    assert orphan.hint == "ip link delete mwp123456-a"
    assert leftovers.check_leftovers()[0].status == "ok"  # reaped: the next look is clean


def test_a_broken_check_is_a_finding_not_a_crash() -> None:
    def check_broken() -> list[Finding]:
        raise RuntimeError("probe exploded")
    (finding,) = doctor.examine([check_broken])
    assert (finding.name, finding.status) == ("broken", "missing")
    assert "probe exploded" in finding.detail


def test_render_marks_what_blocks() -> None:
    text = doctor.render([Finding("agent", "missing", "not found", "make build", needed=True),
                          Finding("tun", "ok", "/dev/net/tun opens")])
    assert "missing agent  not found (needed)\n" in text
    assert "fix: make build" in text and text.endswith("cannot run: missing agent\n")
