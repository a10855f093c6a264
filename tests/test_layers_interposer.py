"""The system-call interposer of --layers (crates/mwperf-layers, issue 27): a Python program
with libmwperf_layers.so preloaded sends and receives real mwperf headers over loopback, and the
events the library dumps at exit (MWPERF_LAYERS_DUMP) say which call carried which message.

The headers are encoded here (same layout and checksum as crates/mwperf-core/src/wire.rs); the
interposer logging them at all is the cross-check: it only logs headers whose checksum
`decode_header` accepts.
"""

import csv
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REAL_AGENT
from mwperf.agent import LAYERS_LIBRARY

pytestmark = pytest.mark.agent

LIBRARY = REAL_AGENT.resolve().parent / LAYERS_LIBRARY

if not LIBRARY.is_file():
    pytestmark = [pytestmark, pytest.mark.skip(reason=f"{LIBRARY} not built ('make build')")]

ENCODER = textwrap.dedent('''
    import errno, os, socket, struct, time
    M = (1 << 64) - 1

    def checksum(b):
        h = 0xcbf29ce484222325
        for i in range(0, 48, 8):
            h = ((h ^ int.from_bytes(b[i:i + 8], "little")) * 0x100000001b3) & M
            h = ((h << 29) | (h >> 35)) & M
        h = ((h ^ int.from_bytes(b[48:52] + bytes(4), "little")) * 0x9E3779B97F4A7C15) & M
        return (h ^ (h >> 32)) & 0xffffffff

    def message(seq, payload=64, run_id=77, topic=3, flags=0):
        h = struct.pack("<4sBBHIHHQQQQI", b"MWPF", 1, flags, 56, run_id, topic, 0, seq, 1, 2, 0, payload)
        return h + struct.pack("<I", checksum(h)) + bytes((seq + i) & 0xff for i in range(payload))

    def udp_pair():
        rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        rx.bind(("127.0.0.1", 0))
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        tx.connect(rx.getsockname())
        return tx, rx

    def tcp_pair():
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        tx = socket.create_connection(srv.getsockname())
        rx, _ = srv.accept()
        srv.close()
        return tx, rx

    def recv_exactly(s, n, chunk):
        got = b""
        while len(got) < n:
            got += s.recv(min(chunk, n - len(got)))
        return got
''')


def run_preloaded(tmp_path: Path, body: str, **env: str) -> tuple[list[dict], str]:
    """Run `body` (after the encoder) with the library preloaded; its dump's rows and trailer."""
    dump = tmp_path / "events.csv"
    done = subprocess.run([sys.executable, "-c", ENCODER + textwrap.dedent(body)],
                          env={**os.environ, "LD_PRELOAD": str(LIBRARY),
                               "MWPERF_LAYERS_DUMP": str(dump), **env},
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = dump.read_text().splitlines()
    assert lines[-1].startswith("# events="), lines[-3:]
    rows = list(csv.DictReader(lines[:-1]))
    for r in rows:
        for k in ("t_ns", "first", "last", "run_id", "topic", "seq", "flags", "bytes", "fd"):
            r[k] = int(r[k])
    return rows, lines[-1]


def ours(rows: list[dict], direction: str) -> list[tuple]:
    return [(r["seq"], r["first"], r["last"], r["bytes"]) for r in rows
            if r["dir"] == direction and r["run_id"] == 77]


def test_udp_messages_are_stamped_on_both_sides(tmp_path: Path) -> None:
    rows, trailer = run_preloaded(tmp_path, '''
        tx, rx = udp_pair()
        for seq in range(3):
            tx.send(message(seq, payload=100 * seq))
            assert rx.recv(65536) == message(seq, payload=100 * seq)
        tx.sendto(message(3), rx.getsockname())
        rx.recvfrom(65536)
    ''')
    assert ours(rows, "send") == [(0, 1, 1, 56), (1, 1, 1, 156), (2, 1, 1, 256), (3, 1, 1, 120)]
    assert ours(rows, "recv") == ours(rows, "send")
    assert all(r["topic"] == 3 and r["flags"] == 0 for r in rows)
    sends = {r["seq"]: r for r in rows if r["dir"] == "send"}
    for r in rows:
        if r["dir"] == "recv":
            assert sends[r["seq"]]["t_ns"] <= r["t_ns"]
            assert sends[r["seq"]]["fd"] != r["fd"]
    assert trailer == "# events=8 dropped=0"


def test_several_headers_in_one_datagram_and_a_fragment(tmp_path: Path) -> None:
    rows, _ = run_preloaded(tmp_path, '''
        tx, rx = udp_pair()
        tx.send(b"batch" + message(10) + message(11, 0) + message(12, 7))
        rx.recv(65536)
        tx.send(message(13, 1000)[:300])   # a datagram with only the start of a message
        rx.recv(65536)
        tx.send(message(14, 1000)[300:])   # a fragment after it: not tracked
        rx.recv(65536)
    ''')
    want = [(10, 1, 1, 120), (11, 1, 1, 56), (12, 1, 1, 63), (13, 1, 0, 300)]
    assert ours(rows, "send") == want
    assert ours(rows, "recv") == want


def test_a_tcp_message_read_in_pieces_is_first_then_last(tmp_path: Path) -> None:
    rows, _ = run_preloaded(tmp_path, '''
        tx, rx = tcp_pair()
        tx.sendall(message(1, 10_000 - 56))
        assert recv_exactly(rx, 10_000, 1000) == message(1, 10_000 - 56)
        # a header cut by the reads: 30 bytes, then the rest
        tx.sendall(message(2, 100) + message(3, 0))
        assert recv_exactly(rx, 30, 30) + recv_exactly(rx, 126 + 56, 4096) == message(2, 100) + message(3, 0)
        # the same message through readv into two buffers the header straddles
        tx.sendall(message(4, 50))
        a, b = bytearray(20), bytearray(86)
        time.sleep(0.1)  # all 106 bytes arrived
        assert os.readv(rx.fileno(), [a, b]) == 106
        assert bytes(a + b) == message(4, 50)
    ''')
    assert ours(rows, "send") == [(1, 1, 1, 10_000), (2, 1, 1, 156), (3, 1, 1, 56), (4, 1, 1, 106)]
    recv = ours(rows, "recv")
    assert recv[0] == (1, 1, 0, 1000) and recv[1] == (1, 0, 1, 1000)
    # seq 2: its header was cut after 30 bytes; the call that completed it carried it
    assert recv[2:4] == [(2, 1, 1, 126), (3, 1, 1, 56)]
    assert recv[4] == (4, 1, 1, 106)


def test_a_pipe_is_a_byte_stream(tmp_path: Path) -> None:
    rows, _ = run_preloaded(tmp_path, '''
        r, w = os.pipe()
        os.writev(w, [message(5, 200)[:10], message(5, 200)[10:]])   # straddling iovecs
        assert os.read(r, 100) + os.read(r, 1000) == message(5, 200)
    ''')
    assert ours(rows, "send") == [(5, 1, 1, 256)]
    assert ours(rows, "recv") == [(5, 1, 0, 100), (5, 0, 1, 156)]


def test_errno_is_what_the_real_call_left(tmp_path: Path) -> None:
    run_preloaded(tmp_path, '''
        import ctypes
        tx, rx = udp_pair()
        rx.setblocking(False)
        try:
            rx.recv(100)
            raise SystemExit("recv on an empty non-blocking socket returned")
        except BlockingIOError as e:
            assert e.errno == errno.EAGAIN
        # a successful header-bearing call leaves errno alone, even where the interposer's
        # own bookkeeping fails (a pipe: getsockopt says ENOTSOCK)
        libc = ctypes.CDLL(None, use_errno=True)
        r, w = os.pipe()
        m = message(9)
        ctypes.set_errno(1234)
        assert libc.write(w, m, len(m)) == len(m)
        assert ctypes.get_errno() == 1234
        buf = ctypes.create_string_buffer(200)
        ctypes.set_errno(4321)
        assert libc.read(r, buf, 200) == len(m)
        assert ctypes.get_errno() == 4321
        os.close(w)
        try:
            os.write(w, m)
        except OSError as e:
            assert e.errno == errno.EBADF
    ''')


def test_a_peek_is_not_a_receive(tmp_path: Path) -> None:
    rows, _ = run_preloaded(tmp_path, '''
        tx, rx = udp_pair()
        tx.send(message(6))
        rx.recv(65536, socket.MSG_PEEK)
        rx.recv(65536)
    ''')
    assert ours(rows, "recv") == [(6, 1, 1, 120)]


def test_a_full_ring_drops_and_counts(tmp_path: Path) -> None:
    rows, trailer = run_preloaded(tmp_path, '''
        tx, rx = udp_pair()
        for seq in range(10):
            tx.send(message(seq))
            rx.recv(65536)
    ''', MWPERF_LAYERS_CAPACITY="4")
    assert len(rows) == 4
    assert trailer == "# events=4 dropped=16"


def test_a_dump_path_names_each_process(tmp_path: Path) -> None:
    """`%p` in MWPERF_LAYERS_DUMP: a parent and the child it starts write a file each."""
    body = ENCODER + textwrap.dedent('''
        import subprocess, sys
        tx, rx = udp_pair()
        tx.send(message(1))
        rx.recv(65536)
        subprocess.run([sys.executable, "-c", "print()"], check=True)
        print(os.getpid())
    ''')
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True,
                          timeout=60, check=True,
                          env={**os.environ, "LD_PRELOAD": str(LIBRARY),
                               "MWPERF_LAYERS_DUMP": str(tmp_path / "ev-%p.csv")})
    files = sorted(tmp_path.glob("ev-*.csv"))
    assert len(files) == 2, files
    parent = (tmp_path / f"ev-{done.stdout.strip()}.csv").read_text().splitlines()
    assert parent[-1] == "# events=2 dropped=0" and len(parent) == 4


def test_the_encoder_here_matches_the_agents_header() -> None:
    """The checksum above is the agent's: a probe the real agent sends checks out with it."""
    import socket
    namespace: dict = {}
    exec(ENCODER, namespace)  # noqa: S102  (the encoder the preloaded programs use)
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(10)
    agent = subprocess.Popen([str(REAL_AGENT), "ping", "--transport", "udp", "--connect",
                              "%s:%d" % rx.getsockname(), "--rate", "100", "--duration", "1s",
                              "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        packet = rx.recv(65536)
    finally:
        agent.kill()
        agent.wait()
    assert packet[:4] == b"MWPF"
    assert namespace["checksum"](packet[:52]) == int.from_bytes(packet[52:56], "little")
