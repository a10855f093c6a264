"""mwperf-linkem ``--layer-log`` between two emulated hosts, read back by layers_link.py: every
mwperf message the link forwards has its read and release times, absolute CLOCK_MONOTONIC, and
release - read is the link's configured delay; a packet without a header is not logged.

Needs root and mwperf-linkem (skipped without them, a failure in CI)."""

import subprocess
import sys
import time
from pathlib import Path

from conftest import require_emulation
from mwperf_header import FLAG_ECHO, encode

from mwperf.emulation.network import emulated_network
from mwperf.emulation.topology import two_hosts
from mwperf.layers_link import read_link_layers, read_many

RUN_ID = 0x5EED
DELAY_NS = 5_000_000
PORT = 47_123
SENDER = """
import socket, sys, time
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for line in sys.stdin.buffer.read().split(b"\\n\\n\\n"):
    sock.sendto(bytes.fromhex(line.decode()), (sys.argv[1], int(sys.argv[2])))
    time.sleep(0.01)
"""


def send_from(netns: str, address: str, messages: list[bytes]) -> None:
    """Send each message as one UDP datagram from inside ``netns``."""
    data = b"\n\n\n".join(m.hex().encode() for m in messages)
    subprocess.run(["ip", "netns", "exec", netns, sys.executable, "-c", SENDER, address,
                    str(PORT)], input=data, check=True, timeout=30)


def test_layer_log_times_each_message_across_the_link(tmp_path: Path, monkeypatch) -> None:
    require_emulation("the link emulator's layer log")
    monkeypatch.setenv("MWPERF_LEASE_DIR", str(tmp_path / "leases"))
    before = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    pings = [encode(RUN_ID, 1, seq, payload=bytes(32)) for seq in range(5)]
    batch = encode(RUN_ID, 2, 7, payload=b"x" * 8) + encode(RUN_ID, 2, 8)  # two in one packet
    pongs = [encode(RUN_ID, 1, seq, FLAG_ECHO) for seq in range(3)]
    with emulated_network(two_hosts(), f"delay={DELAY_NS // 1_000_000}ms", "userspace",
                          tmp_path, "layers test", layer_log=True) as net:
        a, b = net.hosts["a"].netns, net.hosts["b"].netns
        addr_a, addr_b = net.addressing.addresses["a"], net.addressing.addresses["b"]
        send_from(a, addr_b, [*pings, batch, encode(RUN_ID + 1, 1, 0), b"no header here" * 4])
        send_from(b, addr_a, pongs)
        time.sleep(3 * DELAY_NS / 1e9)  # the last ones released before the link stops
    after = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    logs = net.layer_logs()
    assert len(logs) == 1 and set(logs[0]) == {"up", "down"}, net.reports
    assert logs[0]["up"] == tmp_path / "linkem-up.layers.csv"
    up = read_link_layers(logs[0]["up"], RUN_ID)
    assert set(up) == {(1, s, False) for s in range(5)} | {(2, 7, False), (2, 8, False)}
    assert up[(2, 7, False)] == up[(2, 8, False)]  # one packet, one passage
    everyone = read_link_layers(logs[0]["up"])
    assert (1, 0, False) in everyone and len(everyone) == 7  # the other run's shares a key
    down = read_link_layers(logs[0]["down"], RUN_ID)
    assert set(down) == {(1, s, True) for s in range(3)}
    both = read_many([logs[0]["up"], logs[0]["down"]], RUN_ID)
    assert len(both) == 10
    for key, (read_ns, release_ns) in both.items():
        assert before < read_ns < release_ns < after, key  # absolute CLOCK_MONOTONIC
        # never before its delay (the emulator's wait is to read + delay); later only by when
        # its thread ran again, which a loaded machine decides (255 µs beside a Rust build):
        # the delay itself is the one the fastest passage took, within 5 %
        assert release_ns - read_ns >= DELAY_NS, (key, release_ns - read_ns)
    fastest = min(release_ns - read_ns for read_ns, release_ns in both.values())
    assert fastest <= 1.05 * DELAY_NS, fastest
    report = net.reports[0]
    assert report["layer_log"]["up"]["rows"] == 8 and report["layer_log"]["up"]["truncated"] == 0
    assert report["up"]["received"] >= 8  # the header-less packet was forwarded, not logged


def test_a_missing_or_foreign_file_reads_as_nothing(tmp_path: Path) -> None:
    assert read_link_layers(tmp_path / "absent.layers.csv") == {}
    odd = tmp_path / "odd.csv"
    odd.write_text("something,else\n1,2\n")
    assert read_link_layers(odd) == {}
    damaged = tmp_path / "damaged.csv"
    damaged.write_text("run_id,topic,seq,flags,read_ns,release_ns\n"
                       "1,0,5,8,1,2\n1,0,5,2,3,4\n1,0,5,5,6,7\n"  # probe, FIN, warm-up echo
                       "1,0,5,4,10,20\n1,0,5,4,30,40\n1,0,x\n2,0,5,0,50,60\n")
    assert read_link_layers(damaged) == {(0, 5, True): (10, 20), (0, 5, False): (50, 60)}
    assert read_link_layers(damaged, 1) == {(0, 5, True): (10, 20)}

