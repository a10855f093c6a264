"""Cyclone DDS 0.10.2 and Fast DDS 2.9.1 (Debian's, each with its own DDS-Security plugins)
secured with one PKI (python/mwperf/security/): whether they interoperate depends on which side
begins the authentication handshake. Measured here (BENCHMARKS.md, "Security"): with a Fast DDS
participant up first and a Cyclone one joining, Cyclone begins, Fast DDS replies, and every
message the publisher counts sending arrives; with Cyclone up first and Fast DDS joining, Fast
DDS begins and Cyclone refuses its request ("Failed to convert octet sequence to ASN1 integer":
it reads the request's Diffie-Hellman public key as an ASN.1 INTEGER, which Fast DDS 2.9 does
not send), so they never match. RustDDS 0.15.1 (its own plugins) and Fast DDS match either way
round; RustDDS and Cyclone DDS never do, either way round, and RustDDS's own log (the agent's
MWPERF_AGENT_LOG) says why: when Cyclone begins, RustDDS refuses its request's key-agreement
name, which Cyclone sends with its C string's NUL ("ECDH+prime256v1-CEUM\0"); when RustDDS
begins, it refuses Cyclone's reply for lacking `dh1` (optional in the spec's reply token, and
Cyclone leaves it out), and every reply after that for the state its first failure left
behind ("Unexpected handshake state: PendingRequestSend"). Should any library change, these
tests say so."""

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import REAL_AGENT

from mwperf.security.cyclonedds import merged_config
from mwperf.security.identity_opt import security_opt
from mwperf.security.files import Identity, make_run_pki
from mwperf.transports.cyclonedds import loopback_config

pytestmark = pytest.mark.agent

REFUSAL = "Failed to convert octet sequence to ASN1 integer"
HANDSHAKE_LOG = "rustdds::discovery::secure_discovery=error"
"""RustDDS's own log of its handshakes' failures (the agent's MWPERF_AGENT_LOG)"""
NUL_NAME = 'Unexpected c_kagree_algo in handshake request: b"ECDH+prime256v1-CEUM\\0"'
NO_DH1 = "Validating handshake reply message failed. Error: Security exception: dh1 not found"


def identity_opt(transport: str, identity: Identity) -> str:
    if transport in ("fastdds", "rustdds"):
        return security_opt(identity)
    return "config=" + merged_config(loopback_config(), identity)


def agent(transport: str, role: str, wait: str, *args: str) -> list[str]:
    return [str(REAL_AGENT), role, "--transport", transport, "--quiet", "--depth", "1000",
            "--discovery-timeout", wait, *args]


def pair(tmp_path: Path, first: str, joining: str, wait: str, log: str | None = None
         ) -> tuple[subprocess.CompletedProcess[str], int, str, Path]:
    """A secured sub of ``first`` up and ready, then a secured pub of ``joining`` (each waits
    ``wait`` to match; ``log``: both with MWPERF_AGENT_LOG=log): the pub's run, the sub's exit
    code and its log, and the folder of their reports."""
    env = {**os.environ, **({"MWPERF_AGENT_LOG": log} if log else {})}
    ids = make_run_pki(tmp_path / "pki", "encrypt", ("pub", "sub"))
    address = f"{os.environ['ROS_DOMAIN_ID']}/mwperf-interop-{os.getpid()}"
    sub_log = tmp_path / "sub.log"  # a file: a full pipe would stall a logging sub
    with sub_log.open("w") as err:
        sub = subprocess.Popen(agent(first, "sub", wait, "--listen", address, "--json",
                                     str(tmp_path / "sub.json"), "--opt",
                                     identity_opt(first, ids["sub"])),
                               stdout=subprocess.PIPE, stderr=err, text=True, env=env)
    try:
        assert sub.stdout is not None
        assert sub.stdout.readline().startswith(f"READY {first}")
        pub = subprocess.run(agent(joining, "pub", wait, "--connect", address, "--rate", "100",
                                   "--payload", "256", "--duration", "1s", "--json",
                                   str(tmp_path / "pub.json"), "--opt",
                                   identity_opt(joining, ids["pub"])),
                             capture_output=True, text=True, timeout=120, env=env)
        if pub.returncode != 0:
            sub.terminate()
        code = sub.wait(60)
    finally:
        if sub.poll() is None:
            sub.kill()
            sub.wait()
    return pub, code, sub_log.read_text(), tmp_path


def test_fast_dds_first_cyclone_joining_interoperate_secured(tmp_path: Path) -> None:
    # a secured match takes ~1 s here idle: 30 s is no guess at a loaded machine's speed but
    # the point where waiting longer would not change the answer either
    pub, code, log, folder = pair(tmp_path, "fastdds", "cyclonedds", "30s")
    assert pub.returncode == 0 and code == 0, (pub.stderr, log[-500:])
    sent = json.loads((folder / "pub.json").read_text())["sent"]
    got = json.loads((folder / "sub.json").read_text())["measurement"]["accounting"]
    assert sent == 100 and got["received"] == sent and got["lost"] == 0, got


def test_cyclone_first_fast_dds_joining_never_match_cyclone_refuses_the_handshake(
        tmp_path: Path) -> None:
    # they never match: Cyclone refuses the request outright (its log says so at once); 8 s
    # holds several of Fast DDS's handshake resends
    pub, _, log, _ = pair(tmp_path, "cyclonedds", "fastdds", "8s")
    assert pub.returncode != 0 and "no peer matched" in pub.stderr, pub.stderr
    assert "Begin handshake reply failed" in log and REFUSAL in log, log[-800:]


@pytest.mark.parametrize(("first", "joining"), [("rustdds", "fastdds"), ("fastdds", "rustdds")])
def test_rustdds_and_fast_dds_interoperate_secured_either_way(tmp_path: Path, first: str,
                                                                joining: str) -> None:
    pub, code, log, folder = pair(tmp_path, first, joining, "30s")  # as the test above
    assert pub.returncode == 0 and code == 0, (pub.stderr, log[-500:])
    sent = json.loads((folder / "pub.json").read_text())["sent"]
    got = json.loads((folder / "sub.json").read_text())["measurement"]["accounting"]
    assert sent == 100 and got["received"] == sent and got["lost"] == 0, got


@pytest.mark.parametrize(("first", "joining"), [("rustdds", "cyclonedds"),
                                                ("cyclonedds", "rustdds")])
def test_rustdds_and_cyclone_never_match_secured(tmp_path: Path, first: str,
                                                 joining: str) -> None:
    # each side resends its handshake message every second: 8 s holds several rounds of both
    pub, _, log, _ = pair(tmp_path, first, joining, "8s", HANDSHAKE_LOG)
    assert pub.returncode != 0 and "no peer matched" in pub.stderr, pub.stderr
    if first == "rustdds":  # Cyclone (the pub) begins: RustDDS (the sub) refuses its request
        assert NUL_NAME in log, log[-800:]
    else:  # RustDDS (the pub) begins and refuses Cyclone's reply
        assert NO_DH1 in pub.stderr, pub.stderr[-800:]
