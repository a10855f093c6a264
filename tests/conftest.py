"""Shared test helpers: the fake agent, the real agent (when built), and process checks."""

import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mwperf import ros2
    from ssh_support import Robot

# The tests test this checkout's code, in this process (pyproject's pytest `pythonpath`) and in
# every `python -m mwperf` they start, whichever clone the installed package points at (an
# editable install of another clone would otherwise be what runs).
_CHECKOUT_PYTHON = str(Path(__file__).resolve().parent.parent / "python")
os.environ["PYTHONPATH"] = os.pathsep.join(
    [_CHECKOUT_PYTHON, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])

from mwperf.agent import built_agent  # noqa: E402  (after the path is set)
from cli_inprocess import can_run_inprocess, fake_agent_answers, run_inprocess  # noqa: E402

# A test run started in the background by a non-interactive shell (`cmd &`, nohup) inherits
# SIGINT ignored, and an ignored signal stays ignored across exec: every mwperf the tests start
# would ignore the Ctrl-C the interrupt tests send, and those tests would fail for the harness's
# sake. Give the children the default disposition back (Python's: KeyboardInterrupt).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The DDS transports run in the domain of $ROS_DOMAIN_ID (transports/dds_domain.py). Each
# pytest-xdist worker gets a domain of its own, and a run without workers one more: RustDDS on
# loopback reaches only the participants with ids 0..12 of a domain, and those are machine-wide,
# so DDS tests of several workers in one domain took each other's ids ("no peer matched"). A
# user's own ROS_DOMAIN_ID is not used: the tests stay out of a live robot's domain. (The probe's
# peers take domains of their own from 150 up: tests/ros2peers/peers.py.) Two test runs at once
# on one machine (a stress run beside a developer's) each set MWPERF_TEST_DOMAIN_FIRST apart.
TEST_DOMAIN_FIRST = int(os.environ.get("MWPERF_TEST_DOMAIN_FIRST") or 9)
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
os.environ["ROS_DOMAIN_ID"] = str(TEST_DOMAIN_FIRST + 1 + int(_WORKER[2:]) % 100
                                  if _WORKER.startswith("gw") and _WORKER[2:].isdigit()
                                  else TEST_DOMAIN_FIRST)

FAKE_AGENT = Path(__file__).parent / "fakes" / "fake_agent.py"
REAL_AGENT = Path(os.environ.get("MWPERF_AGENT") or built_agent())
"""the agent the end-to-end tests use: $MWPERF_AGENT, else the one 'make build' produced"""


def real_agent_answers() -> bool:
    """True when the real agent exists and answers --version per the contract."""
    try:
        done = subprocess.run([str(REAL_AGENT), "--version"], capture_output=True, text=True,
                              timeout=10, check=False)
    except OSError:
        return False
    return done.returncode == 0 and done.stdout.startswith("mwperf-agent ")


# Running side by side (`make test`: pytest-xdist, `-n N --dist loadgroup -m "not serial"`, then
# `-m serial` alone). The end-to-end tests mostly wait, and share nothing by design: every run
# takes free ports (port 0, daemons on free_port()), a topic base / iceoryx2 domain / DDS topic of
# its own, namespaces, devices and cgroups named after its lease tag, its own scratch folder; a
# test that looks for its processes among all of the machine's asks started_here(). What does
# not hold that is listed here, by node id prefix.
SHARED = {
    # a robot (ssh_support.py): an sshd in a namespace of its own, its 10.254.N.0/24 routed
    # from this one; several at once were seen to disturb each other's runs
    "robot": ("tests/test_remote_e2e.py", "tests/test_graph_hosts_e2e.py"),
}
"""group -> tests that share something: one worker runs them one after another (work_unit), and
each holds the group's lock while it runs (_one_at_a_time), should they ever meet"""
ONE_WORKER = ("tests/test_bag.py", "tests/test_bridges_e2e.py", "tests/test_encodings.py",
              "tests/test_wheel_install.py")
"""modules with a costly module-scoped fixture (a wheel built, a bridge, recordings converted):
on one worker, so it is made once"""
SERIAL = (
    # saturating streams take both CPUs: timing-sensitive tests beside them would suffer (the
    # module's usage errors run side by side)
    "tests/test_throughput_e2e.py::test_a_",
    "tests/test_throughput_e2e.py::test_best_effort_is_offered_the_rate_given",
    "tests/test_throughput_e2e.py::test_large_payloads_are_checked_in_full_every_nth_message",
    "tests/test_throughput_e2e.py::test_several_subscribers_each_get_every_message",
    # ROS 2 streams as fast as they go (an rclpy publisher's, a windowed 1 MiB one): beside
    # other tests they took the CPU a ROS 2 point of the default suite needed (CI: its 512 KiB
    # ping at 1 kHz failed, "the receiver did not make room in time"); their /dev/shm checks
    # would run side by side (conftest.in_own_shm)
    "tests/test_ros2_rclpy_throughput_e2e.py::test_an_rclpy_publishers_stream_is_delivered_as_it",
    "tests/test_ros2_pacing_e2e.py::test_a_windowed_1mib_throughput_stream_delivers_every_message",
    # --layers: injected truths within 5 % (a 2 ms busy callback, a 1 ms late application)
    "tests/test_layers_e2e.py",
    "tests/test_graph_layers_e2e.py",
    # the round trip through a 10 ms link within 2 ms (the link emulator waits for a CPU too)
    "tests/test_linkem_e2e.py::test_delay_each_way_adds_twice_to_the_rtt",
    # every mwperf cgroup of the machine before == after (other tests' --cpu-quota runs)
    "tests/test_teardown.py::test_after_success",
    "tests/test_teardown.py::test_after_a_failure",
    # a quota must throttle, or an unlimited process must get more than it: a spinner pinned to
    # a CPU that other tests' processes share may not get its quota's worth
    "tests/test_cpu.py::test_a_busy_agent_gets_its_quota_and_is_throttled",
    "tests/test_cpu.py::test_a_host_quota_is_shared_by_its_agents_and_daemons",
    "tests/test_remote_e2e.py::test_cpu_quota_on_the_robot_throttles_its_pong",
    # rates within 1 %, pauses within 10 % (publishers in Python: a busy machine stretches them):
    # the tests of the module fixture that probes them (bad input and absent peers run side by
    # side)
    "tests/test_probe_mqtt_e2e.py::test_mqtt_rate_and_pause",
    "tests/test_probe_ros1_e2e.py::test_rate_within_one_percent_and_age_only_with_a_header",
    "tests/test_probe_ros1_e2e.py::test_a_500_ms_pause_is_one_gap_of_500_ms",
    "tests/test_probe_ros1_e2e.py::test_the_probe_subscribes_and_publishes_nothing",
    "tests/test_probe_ros1_e2e.py::test_nodes_come_from_the_master_and_the_graph_file_loads",
    "tests/test_probe_zenoh_e2e.py::test_rates_within_one_percent",
    "tests/test_probe_zenoh_e2e.py::test_the_pause_is_one_gap",
    # ROS 2: 1 MB at 30 Hz + 100 B at 1 kHz within 1 % of what python publishers sent, a 500 ms
    # pause within 10 %, ages of 7 ms within 3 ms: the tests of the fixtures that probe those
    # peers and the bridges (an empty domain, bad input and a burst of announcements run side
    # by side, as does ddsperf's listing: a name, no figure)
    "tests/test_probe_ros2_e2e.py::test_rates_within_one_percent_of_what_was_sent",
    "tests/test_probe_ros2_e2e.py::test_header_ages_are_the_stamp_offset",
    "tests/test_probe_ros2_e2e.py::test_nodes_come_from_ros_discovery_info",
    "tests/test_probe_ros2_e2e.py::test_a_500_ms_pause_is_one_gap",
    "tests/test_probe_ros2_e2e.py::test_fastdds_writer_is_seen_with_its_qos",
    "tests/test_probe_ros2_e2e.py::test_best_effort_writer_reliable_reader_is_incompatible",
    "tests/test_probe_ros2_e2e.py::test_the_probe_creates_no_writer",
    "tests/test_probe_ros2_e2e.py::test_bridged_topic_has_ros_names_and_the_bridges_node",
    "tests/test_probe_ros2_e2e.py::test_peers_",
    # a topic inside a multi-topic run as fast as alone "when nothing contends"
    "tests/test_topic_alone_e2e.py",
    # --link every=: each flap loses ~rate x its length within 20 %, recovery within 100 ms
    "tests/test_link_flaps_e2e.py",
    # a graph edge's outage within two periods of the publisher's schedule
    "tests/test_graph_outages_e2e.py",
    # the killed bridge half's exit must be seen before the sender's failure it causes (its
    # socket closes before the process is reaped: a loaded machine can widen that gap)
    "tests/test_bridges_e2e.py::test_a_bridge_killed_mid_run_gives_a_partial_result",
    # the single executor's topic order under a 2 ms busy loop per callback at 100 Hz (60 % of a
    # CPU): with other tests on both CPUs a topic's receive thread may not run before the
    # callback ahead of it ends, and the order is then the scheduler's
    "tests/test_scenario_e2e.py::test_a_workload_sweep_with_the_real_agent",
    "tests/test_workload_e2e.py::test_single_executor_makes_later_topics_wait",
    # the robot (an sshd in a namespace) and its agents over SSH: the tests whose figures depend
    # on the scheduler run alone (the rest of the module runs side by side, on one worker: SHARED
    # "robot"; passed twice so beside two busy loops and other sessions' tests, load ~10; the
    # transports' zero loss (rustdds lost 9 of 100 once) is checked with a deep keep-last queue):
    # 2000 foreign datagrams in a burst beside the run's own into the pong's socket buffer; the
    # ros1 relay (a Python daemon) delivering > 80 %; a graph's p50 under 5 ms and its clock
    # offset within its fit
    "tests/test_remote_e2e.py::test_foreign_datagrams_to_the_robots_pong_are_counted_and_said",
    "tests/test_remote_e2e.py::test_ros1_relay_on_the_robot",
    "tests/test_graph_hosts_e2e.py",
    # a graph's chain through a 5 ms link within 3 ms; a node killed 1.5 s into a 3 s run
    "tests/test_graph_e2e.py::test_a_graph_over_an_emulated_link_places_nodes_on_their_hosts",
    "tests/test_graph_e2e.py::test_a_node_killed_mid_run_gives_a_partial_result_naming_it",
    # latencies across a 1 ms emulated link compared between two runs within 0.3 ms
    "tests/test_graph_clock_e2e.py",
    # a node held to 10 % of a CPU must be throttled in most periods; its publisher not at all
    "tests/test_graph_sweep_e2e.py::test_a_nodes_cpu_quota_throttles_it_and_only_it",
    # every message counted exactly: zenoh's subscriber ring (keep-last 10) drops the oldest
    # when a node is not scheduled for 50 ms (two publishers at 100 Hz), as under a load of 9
    "tests/test_graph_e2e.py::test_a_topic_of_two_publishers_arrives_whole_on_each_transport",
    "tests/test_graph_e2e.py::test_a_topic_of_two_publishers_crosses_an_emulated_link",
    # a saturating stream (rate: max) takes both CPUs: beside it other tests' timings and
    # exact counts would flake, and its own rate would depend on theirs
    "tests/test_graph_load_e2e.py",
    # each packet to the byte in its phase: a warm-up reply held past the first measured
    # message's due time (a pong not scheduled for a period) counts as steady
    "tests/test_wire_bytes_e2e.py::test_udp_is_payload_plus_84_bytes_per_message_to_the_byte",
    # the power cut lands at a random moment after a point completes: a loaded machine
    # stretches the setup it must fall into; it also counts the shared CPU cgroup parent
    "tests/test_power_cut_e2e.py",
)
"""tests that need the machine to themselves: marked ``serial``; `make test` runs them after the
parallel pass, alone"""


def shared_group(nodeid: str) -> str | None:
    """The SHARED group of test ``nodeid``, if any."""
    return next((group for group, prefixes in SHARED.items() if nodeid.startswith(prefixes)),
                None)


def work_unit(nodeid: str) -> str:
    """What one worker runs, one test after another: a SHARED group, a module of ONE_WORKER, or
    the test alone (any worker, as one comes free)."""
    if group := shared_group(nodeid):
        return group
    return nodeid.split("::")[0] if nodeid.startswith(ONE_WORKER) else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """--dist loadgroup by work_unit(). pytest-xdist's own reads xdist_group marks through the
    node ids, which it can no longer change on pytest >= 9.2 (pytest-xdist issue 1386): its groups
    are silently ignored there."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return WorkUnits(config, log)


@pytest.fixture(autouse=True)
def _one_at_a_time(request: pytest.FixtureRequest,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A SHARED group's test holds the group's lock (all workers of this run) while it runs."""
    group = shared_group(request.node.nodeid)
    if group is None or "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    with open(tmp_path_factory.getbasetemp().parent / f"{group}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


END_TO_END = (
    # real daemons, a browser, the machine's cgroups
    "tests/test_agent_binary.py", "tests/test_report_browser.py", "tests/test_daemons.py",
    "tests/test_teardown.py",
    # fault injection through whole mwperf processes: a loop of runs on a disk filled step by
    # step, Ctrl-C at every catalogue statement and at random moments, SIGKILL mid-write and
    # mid-sweep (3-8 s of CPU each: a third of the unit tier's; issue 37)
    "tests/test_disk.py::test_a_full_disk_keeps_the_measurement_names_the_folder_and_spares_",
    "tests/test_disk.py::test_ctrl_c_at_every_catalogue_statement_leaves_each_point_all_or_",
    "tests/test_disk.py::test_ctrl_c_at_random_moments_leaves_the_catalogue_whole",
    "tests/test_store_kill.py",
    "tests/test_scenario_run.py::test_resume_after_sigkill_measures_only_the_missing_points",
)
"""node ids (prefixes) of the end-to-end tier besides tests/test_*_e2e.py: marked ``e2e``, like
every ``agent`` and ``serial`` test"""


def end_to_end(item: pytest.Item) -> bool:
    """The end-to-end tier (marker ``e2e``): a real agent, daemon, middleware or browser, or the
    machine to itself. `make test-fast` runs the rest (the unit tier, against the fake agent);
    scripts/stress-e2e.sh runs this tier under load."""
    path = item.nodeid.split("::")[0]
    return (item.nodeid.startswith(END_TO_END) or Path(path).name.endswith("_e2e.py")
            or "agent" in item.keywords or "serial" in item.keywords)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SERIAL):
            item.add_marker(pytest.mark.serial)
        if end_to_end(item):
            item.add_marker(pytest.mark.e2e)
    if any("agent" in item.keywords for item in items) and not real_agent_answers():
        skip = pytest.mark.skip(reason=f"{REAL_AGENT} absent or not answering --version "
                                       "(run 'make build')")
        for item in items:
            if "agent" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _python3_is_this_interpreter(tmp_path_factory: pytest.TempPathFactory) -> None:
    """`python3` in PATH (the fake agent's `#!/usr/bin/env python3`) is the interpreter running
    the tests: a version manager's shim first in PATH (pyenv's runs ~25 bash processes per start,
    ~70 ms of CPU) cost more than the fake agent itself, some 300 times per run."""
    folder = tmp_path_factory.mktemp("python3")
    (folder / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (folder / "python3").chmod(0o755)
    os.environ["PATH"] = os.pathsep.join([str(folder), os.environ.get("PATH", "")])


@pytest.fixture
def fake_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """Use the fake agent (in this process and in children); traces go to tmp_path/trace. In the
    unit tier it runs on virtual time (fake_agent.py: FAKE_AGENT_CLOCK); the end-to-end tier's
    fault injection through whole mwperf processes signals runs while they measure, on the
    wall clock."""
    trace = tmp_path / "trace"
    trace.mkdir()
    # scratch dirs land in a folder of this test's own, not in /tmp itself; a short one (not
    # under tmp_path, which pytest-xdist makes long): a uds socket path in it stays < 108 bytes
    scratch = Path(tempfile.mkdtemp(prefix="mwt-", dir="/tmp"))
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setenv("MWPERF_LEASE_DIR", str(tmp_path / "leases"))  # not other runs' leases
    monkeypatch.setenv("MWPERF_AGENT", str(FAKE_AGENT))
    monkeypatch.setenv("FAKE_AGENT_TRACE", str(trace))
    monkeypatch.delenv("FAKE_AGENT", raising=False)
    if end_to_end(request.node):
        monkeypatch.delenv("FAKE_AGENT_CLOCK", raising=False)
    else:
        monkeypatch.setenv("FAKE_AGENT_CLOCK", "virtual")
    with fake_agent_answers():  # its catalogues asked once per worker (cli_inprocess.py)
        yield dict(os.environ)
    shutil.rmtree(scratch, ignore_errors=True)


TEST_TAG = "MWPERF_TEST_TAG"
"""an environment variable naming the running test, inherited by every process it starts"""


@pytest.fixture
def real_env(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> dict[str, str]:
    """Use the real agent built by 'make build'; tag this test's processes (started_here)."""
    monkeypatch.setenv("MWPERF_AGENT", str(REAL_AGENT))
    monkeypatch.setenv(TEST_TAG, f"{os.getpid()} {request.node.nodeid}")
    return dict(os.environ)


def recording_agent(folder: Path) -> tuple[Path, Path]:
    """An MWPERF_AGENT for a run that records what each agent process was given at its exec,
    then execs the real agent (a poll of /proc while a run goes on missed processes that lived
    seconds under load): ``folder``/calls holds one file per process (nodes start at once) with
    its command line; a node's spec is copied into ``folder``, and the daemons' files of its
    run (written before any node starts) into ``folder``/daemons. Returns (the wrapper, the
    calls folder)."""
    calls = folder / "calls"
    calls.mkdir(parents=True)
    (folder / "daemons").mkdir()
    wrapper = folder / "agent"
    wrapper.write_text(f"""#!/bin/sh
printf '%s ' "$@" > {calls}/$$
prev=
for arg in "$@"; do
  if [ "$prev" = --node-spec ]; then
    cp "$arg" {folder}/
    cp -r "$(dirname "$arg")/daemons/." {folder}/daemons/ 2>/dev/null
  fi
  prev=$arg
done
exec {REAL_AGENT} "$@"
""")
    wrapper.chmod(0o755)
    return wrapper, calls


def children_with_commands(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of ``pid``'s children."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            out.append((int(entry.name), cmdline))
    return out


def measuring_since_ns(pid: int) -> int | None:
    """When sender ``pid``'s measured phase began (CLOCK_MONOTONIC ns): its ``MEASURING <ns>``
    line on stdout (a file in the run's work folder), None before it."""
    try:
        text = Path(f"/proc/{pid}/fd/1").read_text(errors="replace")
    except OSError:
        return None
    found = [line.split()[1] for line in text.splitlines() if line.startswith("MEASURING ")]
    return int(found[0]) if found else None


def wait_into_measurement(run_pid: int, seconds: float, deadline: float) -> None:
    """Wait until the sender agent of the ``mwperf run`` process ``run_pid`` (its ping or pub
    child) is ``seconds`` into its measured phase on its own timeline (its MEASURING line):
    first contact and warm-up behind it however long a loaded machine took (a fixed sleep
    after something appeared was, beside two busy loops, before anything was measured)."""
    since = None
    while since is None:
        assert time.monotonic() < deadline, "the sender never began measuring"
        sender = next((pid for pid, cmd in children_with_commands(run_pid)
                       if "mwperf-agent" in cmd and (" ping " in cmd or " pub " in cmd)), None)
        since = measuring_since_ns(sender) if sender is not None else None
        time.sleep(0.05)
    while time.monotonic_ns() < since + int(seconds * 1e9):
        time.sleep(0.05)


def started_here(pid: int) -> bool:
    """True if process ``pid`` belongs to the running test: its environment carries the test's
    tag (real_env; daemons and agents inherit it), not another test's running beside it. Every
    process does when the test has no tag."""
    tag = os.environ.get(TEST_TAG)
    if tag is None:
        return True
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"{TEST_TAG}={tag}".encode() in environ


def processes_here(matches: Callable[[str], bool]) -> list[int]:
    """Processes whose command line (NUL-separated) ``matches``, of this test's runs
    (started_here: not those of another test, or another user, running beside it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if matches(cmdline) and started_here(int(entry.name)):
                found.append(int(entry.name))
    return found


def bridge_processes() -> list[int]:
    """This test's processes that run a bridge half (their command line names its
    configuration)."""
    return processes_here(lambda cmd: "/daemons/bridge-a." in cmd or "/daemons/bridge-b." in cmd)


def require_emulation(what: str, *programs: str) -> None:
    """Skip unless emulated hosts can be made here (root, mwperf-linkem, ``programs``); in CI
    (CI=true) fail instead: there, ``what`` must run."""
    from mwperf.emulation.userspace import find_linkem
    from mwperf.errors import RunError

    missing = "needs root (network namespaces, TUN devices)" if os.geteuid() != 0 else None
    for program in programs:
        if missing is None and shutil.which(program) is None:
            missing = f"{program} is not installed"
    try:
        find_linkem()
    except RunError as exc:
        missing = missing or str(exc)
    if missing and os.environ.get("CI") == "true":
        pytest.fail(f"{what} must run in CI: {missing}")
    if missing:
        pytest.skip(missing)


@pytest.fixture
def leased_env(real_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The real agent, and a lease folder of this test's own (others' runs stay out of it)."""
    return {**real_env, "MWPERF_LEASE_DIR": str(tmp_path / "leases")}


def run_mwperf(*args: str, env: dict[str, str] | None = None, timeout: float = 120,
               process: bool = False) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user would (python -m mwperf.cli) and capture everything: in this
    process (tests/cli_inprocess.py: as the child would; a child's start, importing duckdb,
    click and mwperf, is ~0.6 s of CPU and of wall time, some 500 times in the end-to-end tier:
    -12 % of its CPU, measured 2026-12-02); ``process=True`` asks for a child all the same: a
    test that looks at the process itself (its tree, signals, exit, what it leaves behind),
    patched mwperf in this one, or stands for a user's own command (`make run`'s suite). So do
    $MWPERF_TEST_INPROCESS=0 and a call from another thread than the main one."""
    if not process and can_run_inprocess():
        return run_inprocess(args, env, timeout)
    return subprocess.run([sys.executable, "-m", "mwperf.cli", *args], capture_output=True,
                          text=True, env=env, timeout=timeout, check=False)


_OWN_SHM = ('mount -t tmpfs -o mode=1777 mwperf-test-shm /dev/shm || exit 97; list="$1"; shift; '
            '"$@"; code=$?; ls -A /dev/shm > "$list"; exit $code')


def in_own_shm(argv: list[str], listing: Path) -> list[str]:
    """``argv`` in a mount namespace of its own with an empty /dev/shm (a tmpfs of its own):
    everything the run creates there is the run's, so what is left when it ends (written to
    ``listing``, one name per line) is exactly what it left behind, whatever other tests beside
    it map or leave (the /dev/shm checks run side by side that way; they ran alone when
    /dev/shm was the machine's)."""
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", _OWN_SHM, "sh",
            str(listing), *argv]


def run_mwperf_own_shm(*args: str, env: dict[str, str] | None = None, timeout: float = 120
                       ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``mwperf *args`` (a child) in a /dev/shm of its own (in_own_shm): its completed process
    and what it left in /dev/shm."""
    with tempfile.NamedTemporaryFile(prefix="mwperf-shm-", suffix=".txt") as listing:
        done = subprocess.run(in_own_shm([sys.executable, "-m", "mwperf.cli", *args],
                                         Path(listing.name)),
                              capture_output=True, text=True, env=env, timeout=timeout,
                              check=False)
        assert done.returncode != 97, f"no /dev/shm of its own: {done.stderr}"
        left = Path(listing.name).read_text().split()
    return done, [name for name in left if not LTTNG_WAIT.fullmatch(name)]


LTTNG_WAIT = re.compile(r"lttng-ust-wait-\d+(-\d+)?")
"""LTTng-UST's wait files (``lttng-ust-wait-<abi>`` and ``-<uid>``): any process with the ROS 2
wheels' tracetools creates them once per machine and user, and every traced process after it
reuses them (a fixed name, never more than one per user): the machine's, not a run's"""


def alive(pid: int) -> bool:
    """True if ``pid`` is a process that still runs (zombies count as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def traced_pids(trace: Path) -> dict[str, int]:
    """role -> pid of every fake agent that started (FAKE_AGENT_TRACE)."""
    return {p.stem: int(p.read_text()) for p in trace.glob("*.pid")}


def descendants(pid: int) -> list[int]:
    """The pids of every running process below ``pid`` (children, grandchildren, ...), from one
    reading of /proc (a reading per process of the tree took seconds beside two busy loops:
    polls that use it missed processes that lived for seconds)."""
    below: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            below.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        here = below.get(todo.pop(), [])
        found += here
        todo += here
    return found


def children(pid: int) -> list[int]:
    """The pids of the running children of ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


@pytest.fixture
def robot(tmp_path: Path) -> Iterator["Robot"]:
    """A robot for the --host tests: a real sshd in an emulated host (ssh_support.py)."""
    from ssh_support import Robot

    require_emulation("the --host tests (a real sshd in an emulated host)", "ssh", "/usr/sbin/sshd")
    folder = tmp_path / "robot"
    folder.mkdir()
    made = Robot(folder)
    yield made
    made.close()


@pytest.fixture(scope="module")
def kilted() -> "ros2.Distribution":
    """The managed Kilted environment (the ROS 2 tests' peers); a failure, not a skip, naming the
    command that installs it when it is not there."""
    from mwperf import ros2
    from mwperf.errors import UsageError
    try:
        return ros2.pick("kilted", env={})
    except UsageError as exc:
        pytest.fail(f"{exc} (make setup installs it)")


def read_saved(path: Path) -> dict:
    """A result mwperf saved (a point's result.json, a --json-out file), read as the product
    reads it (python/mwperf/result/load.py): v3, with a stream run's figures (measurement,
    per_topic, per_subscriber, agents, discovery: its ``stream`` view) beside."""
    from mwperf.result.load import as_stream, load_result
    return as_stream(load_result(path))


def read_printed(text: str) -> dict:
    """The result ``mwperf run --json`` printed, read as :func:`read_saved` reads a file."""
    import json
    from mwperf.result.load import as_stream, parse_result
    return as_stream(parse_result(json.loads(text), "--json"))


V3_ONLY = ("nodes", "edges", "chains", "calls", "pools", "upgraded_from", "stream")
"""a v3 result's keys a v2 run-result has not"""


def as_v2(result: dict) -> dict:
    """A stream point's result as read (:func:`read_saved`, :func:`read_printed`) as the v2
    run-result it stands for: its stream figures and run sections, v2's kind and version (to
    check them against the v2 schema, or to save a template by its v2 fields)."""
    v2 = {key: value for key, value in result.items() if key not in V3_ONLY}
    v2.update(schema_version=2, kind="run-result",
              config={k: v for k, v in result["config"].items() if k != "kind"})
    return v2
