"""`--secure auth|sign|encrypt` with the real agent and Debian's Cyclone DDS (its DDS-Security
plugins, Debian's Fast DDS 2.9 with its own, and RustDDS 0.15.1's built in): a secured run delivers every message the publisher counts sending, each agent with its
own identity from the run's PKI, which is gone afterwards (Ctrl-C included); an unsecured
subscriber on the same domain and topic beside a secured pair receives nothing while the secured
one gets every message (cyclonedds, fastdds, rustdds); --secure on a transport without it is one usage line (exit 2)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REAL_AGENT, read_saved, run_mwperf
from secured_runs import every_message_delivered
from mwperf.security.cyclonedds import merged_config
from mwperf.security.identity_opt import security_opt
from mwperf.security.files import Identity, make_run_pki
from mwperf.transports.cyclonedds import loopback_config

pytestmark = pytest.mark.agent


def mwperf(*args: str, transport: str = "cyclonedds") -> subprocess.CompletedProcess[str]:
    return run_mwperf("run", "--no-save", "--transport", transport, "--duration", "1s", "--warmup",
                      "200ms", *args, timeout=120)


@pytest.mark.parametrize(("secure", "mode"), [("auth", "roundtrip"), ("sign", "roundtrip"),
                                             ("encrypt", "roundtrip"), ("encrypt", "oneway")])
@pytest.mark.parametrize("transport", ["cyclonedds", "fastdds", "rustdds"])
def test_a_secured_run_delivers_every_message(tmp_path: Path, transport: str, secure: str,
                                              mode: str) -> None:
    out = tmp_path / "result.json"
    # every message counted: a deep keep-last queue (cyclonedds encrypt one-way lost 5 of 200 in
    # CI beside other tests, as a keep-last 10 history does while the sub is not scheduled)
    done = mwperf("--secure", secure, "--mode", mode, "--rate", "200", "--payload", "256",
                  "--depth", "1000", "--json-out", str(out), transport=transport)
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    every_message_delivered(result, secure, mode)
    # each agent ran with its own identity: the certificate its --opt config/security named
    configs = {a["role"]: json.dumps(a["config"]) for a in result["agents"]}
    for role, text in configs.items():
        assert f"{role}.cert.pem" in text, (role, text[:300])


@pytest.mark.parametrize("transport", ["cyclonedds", "fastdds"])
def test_a_secured_run_across_a_link_keeps_both_the_links_settings_and_its_identity(
        tmp_path: Path, transport: str) -> None:
    """Across --link each agent's transport settings come from its place (unicast peers, its
    interface) and go last on its command line: the identity must be merged into them, or the
    place's unsecured configuration would win and the run measure plain DDS."""
    from conftest import require_emulation
    require_emulation("--secure across --link")
    out = tmp_path / "result.json"
    done = mwperf("--secure", "encrypt", "--link", "delay=1ms", "--rate", "100", "--payload",
                  "256", "--depth", "1000", "--json-out", str(out), transport=transport)
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] > 50, accounting
    for report in result["agents"]:
        config = json.dumps(report["config"])
        assert f"{report['role']}.cert.pem" in config, config[-400:]
        if transport == "cyclonedds":  # one configuration: the link's peers, then <Security>
            assert "<Peer address=" in config and "<Security>" in config, config[-600:]
        else:  # its identity and the link's unicast peers, side by side
            opts = dict(report["config"]["opt"])
            assert "pong.cert.pem" in opts["security"] or "ping.cert.pem" in opts["security"]
            # both hosts' addresses (the emulated subnet is drawn per run: 10.179.110.1 holds
            # "10." twice, so count addresses, not substrings)
            peers = opts["peers"].split(",")
            assert len(peers) == 2 and all(p.startswith("10.") for p in peers), opts


def test_the_pki_is_gone_after_the_run(tmp_path: Path) -> None:
    done = mwperf("--secure", "encrypt", "--rate", "100", "--json-out", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    config = read_saved(tmp_path / "r.json")["agents"][0]["config"]
    cert = json.dumps(config).split("file:")[2].split("<")[0]  # IdentityCA, then the cert
    assert cert.endswith(".pem") and not Path(cert).exists(), cert
    assert not Path(cert).parent.parent.exists()  # the run's scratch folder, PKI and all


def test_secure_on_another_transport_is_one_usage_line() -> None:
    done = run_mwperf("run", "--no-save", "--transport", "udp", "--secure", "sign", timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "mwperf: error: --secure sign: not with --transport udp; --secure sign works with "
        "--transport cyclonedds, fastdds, rustdds"]


def agent(transport: str, role: str, *args: str) -> list[str]:
    """An agent of ``role``; a deep keep-last queue on both sides, as every test that counts
    each message has (keep-last 10 lost 1 of 200 once beside two busy loops, fastdds encrypt)."""
    return [str(REAL_AGENT), role, "--transport", transport, "--quiet", "--depth", "1000",
            *args]


def identity_opt(transport: str, identity: Identity) -> str:
    """What --secure gives an agent of ``transport`` for ``identity`` (parts/secure.py)."""
    if transport in ("fastdds", "rustdds"):
        return security_opt(identity)
    return "config=" + merged_config(loopback_config(), identity)


@pytest.mark.parametrize(("transport", "secure"), [("cyclonedds", "encrypt"),
                                                   ("fastdds", "auth"), ("fastdds", "encrypt"),
                                                   ("rustdds", "auth"), ("rustdds", "encrypt")])
def test_an_unsecured_subscriber_beside_a_secured_pair_gets_nothing(
        tmp_path: Path, transport: str, secure: str) -> None:
    """A secured sub and an unsecured sub listen on one domain and topic; a secured pub
    sends: the secured sub counts every message the pub counts sending, the unsecured none."""
    ids = make_run_pki(tmp_path / "pki", secure, ("pub", "sub"))
    domain = os.environ["ROS_DOMAIN_ID"]
    address = f"{domain}/mwperf-secure-{os.getpid()}"
    plain = subprocess.Popen(agent(transport, "sub", "--listen", address, "--json",
                                   str(tmp_path / "plain.json")),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    secured = subprocess.Popen(agent(transport, "sub", "--listen", address, "--json",
                                     str(tmp_path / "sub.json"), "--opt",
                                     identity_opt(transport, ids["sub"])),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for proc in (plain, secured):
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith(f"READY {transport}"), (line, proc.stderr.read()
                                                         if proc.poll() is not None else "")
        pub = subprocess.run(agent(transport, "pub", "--connect", address, "--rate", "200",
                                   "--payload", "256", "--duration", "1s", "--json",
                                   str(tmp_path / "pub.json"), "--opt",
                                   identity_opt(transport, ids["pub"])),
                             capture_output=True, text=True, timeout=60)
        assert pub.returncode == 0, pub.stderr
        assert secured.wait(30) == 0, secured.stderr.read() if secured.stderr else ""
    finally:
        for proc in (plain, secured):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(10)
    sent = json.loads((tmp_path / "pub.json").read_text())["sent"]
    got = json.loads((tmp_path / "sub.json").read_text())["measurement"]["accounting"]
    assert sent > 100 and got["received"] == sent, (sent, got)
    plain_report = json.loads((tmp_path / "plain.json").read_text())
    # the unsecured sub ran until stopped and never saw a sample (nor a foreign one)
    assert plain_report["counters"]["received"] == 0, plain_report["counters"]
    assert plain_report["counters"]["foreign"] == 0, plain_report["counters"]
    assert plain_report["measurement"] is None


def security_folder_of(pid: int) -> Path | None:
    """The PKI folder an agent child of ``pid`` was given (from its command line), if one runs."""
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) != pid:
                continue
            argv = (entry / "cmdline").read_bytes().decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if "pong.cert.pem" in argv:
            return Path(argv.split("<IdentityCertificate>file:")[1].split("<")[0]).parent
    return None


def test_ctrl_c_mid_point_removes_the_pki(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "mwperf", "run", "--no-save", "--transport",
                             "cyclonedds", "--secure", "sign", "--rate", "100", "--duration",
                             "60s", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    folder = None
    deadline = time.monotonic() + 60
    while folder is None and proc.poll() is None and time.monotonic() < deadline:
        folder = security_folder_of(proc.pid)
        time.sleep(0.05)
    assert folder is not None and (folder / "pong.key.pem").exists(), proc.poll()
    time.sleep(1.0)  # the point under way
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert not folder.exists() and not folder.parent.exists(), sorted(folder.parent.rglob("*"))
    result = json.loads(out)
    assert result["status"] == "partial", (result["status"], result["status_reason"], err[-300:])
    assert result["config"]["secure"] == "sign"


def test_a_certificate_of_another_ca_stops_the_point_in_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The PKI is checked before any agent starts: pong's certificate swapped for one of another
    CA (with its key) is one line naming the file and the fault, exit 2, no agent started."""
    from cli_inprocess import run_inprocess
    import mwperf.security.files as files  # where the part takes it from (parts/secure.py)
    from mwperf.security.pki import issue, make_ca

    made = files.make_run_pki

    def with_a_stranger(folder: Path, mode: str, names: tuple[str, ...]) -> dict:
        ids = made(folder, mode, names)
        issue(make_ca("another CA"), "pong").write(ids["pong"].cert, ids["pong"].key)
        return ids

    monkeypatch.setattr(files, "make_run_pki", with_a_stranger)
    done = run_inprocess(["run", "--no-save", "--transport", "cyclonedds", "--secure", "auth",
                          "--duration", "1s"], env=dict(os.environ))
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("mwperf: measuring")]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("mwperf: error: --secure: ") and "/security/pong.cert.pem: the " \
        "identity certificate of pong is not signed by the CA " in lines[0], lines[0]
    assert "(O=mwperf,CN=another CA issued it)" in lines[0]


GRAPH = """\
name: secured
nodes:
  - name: lidar
    publishers: [{topic: /scan, rate: 100, payload: 1024}]
  - name: planner
    subscribers: [{topic: /scan, publish: /cmd, publish_payload: 64}]
  - name: base
    subscribers: [{topic: /cmd}]
"""


@pytest.mark.parametrize("transport", ["cyclonedds", "fastdds", "rustdds"])
def test_a_secured_graph_gives_every_node_its_own_identity(tmp_path: Path,
                                                           transport: str) -> None:
    """Each node is a participant with its own certificate and permissions (its command line
    names them: recorded by a wrapper that execs the real agent, so none can be missed as a
    poll of /proc missed them under load), and every edge delivers what its publisher counts
    sending."""
    from mwperf.graph.node_files import file_name
    names = {file_name(n): n for n in ("lidar", "planner", "base")}
    graph = tmp_path / "g.yaml"
    graph.write_text(GRAPH)
    out = tmp_path / "g.json"
    from conftest import recording_agent
    wrapper, calls = recording_agent(tmp_path / "kept")
    proc = subprocess.Popen([sys.executable, "-m", "mwperf", "run", "--no-save", "--graph",
                             str(graph), "--transport", transport, "--secure", "encrypt",
                             "--depth", "1000", "--duration", "1s", "--warmup", "500ms",
                             "--json-out", str(out)],
                            env={**os.environ, "MWPERF_AGENT": str(wrapper)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: dict[str, str] = {}
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    for argv in (call.read_text() for call in calls.iterdir()):
        if argv.startswith("node ") and "--node-spec" in argv:
            node = argv.split("--node-spec ")[1].split()[0]
            seen[names[Path(node).name.removesuffix(".spec.json")]] = argv
    assert set(seen) == {"lidar", "planner", "base"}, sorted(seen)
    for name, argv in seen.items():
        assert f"/{file_name(name)}.cert.pem" in argv, argv[-400:]
        others = set(names) - {file_name(name)}
        assert not any(f"/{other}.cert.pem" in argv for other in others), argv[-400:]
    result = json.loads(out.read_text())
    assert result["config"]["secure"] == "encrypt" and result["status"] == "complete"
    for edge in result["edges"]:
        assert edge["received"] == edge["sent"] == 100, edge
