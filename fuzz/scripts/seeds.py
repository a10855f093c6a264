#!/usr/bin/env python3
"""Write the fuzz targets' seed corpora (fuzz/corpus/<target>/): small, real protocol samples.

    python3 fuzz/scripts/seeds.py        # rewrites fuzz/corpus/*/seed-* (committed)

Each seed is what the parser meets on the wire: MQTT CONNACK/PUBLISH/SUBACK from a broker (3.1.1
and 5), a TCPROS connection header and data frame, XML-RPC calls and responses as rosmaster
sends them, WebSocket frames carrying Foxglove serverInfo/advertise/message data, supervisor
control lines, link emulator specs with packets, and a ros_discovery_info sample. Standard library
only. Inputs found by fuzzing (AFL's queue) are not committed: see docs/fuzzing.md.
"""

import hashlib
import json
import struct
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
HEADER_LEN = 56


def checksum(b: bytes) -> int:
    m = (1 << 64) - 1
    h = 0xCBF29CE484222325
    full = len(b) // 8 * 8
    for i in range(0, full, 8):
        h = ((h ^ int.from_bytes(b[i:i + 8], "little")) * 0x00000100000001B3) & m
        h = ((h << 29) | (h >> 35)) & m
    tail = b[full:].ljust(8, b"\0")
    h = ((h ^ int.from_bytes(tail, "little")) * 0x9E3779B97F4A7C15) & m
    return (h ^ (h >> 32)) & 0xFFFFFFFF


def pattern(seq: int, n: int) -> bytes:
    m = (1 << 64) - 1
    out = b""
    for k in range((n + 7) // 8):
        w = (((seq ^ 0x6D77706572660001) * 0x9E3779B97F4A7C15) & m) ^ ((k * 0xD6E8FEB86659FD93) & m)
        out += w.to_bytes(8, "little")
    return out[:n]


def message(seq=1, payload=16, flags=0, run_id=7) -> bytes:
    head = b"MWPF" + struct.pack("<BBHIHHQQQQI", 1, flags, HEADER_LEN, run_id, 0, 0, seq,
                                 1000, 2000, 0, payload)
    return head + struct.pack("<I", checksum(head)) + pattern(seq, payload)


def varint(n: int) -> bytes:
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def mqtt(kind_flags: int, body: bytes) -> bytes:
    return bytes([kind_flags]) + varint(len(body)) + body


def mstr(s: bytes) -> bytes:
    return struct.pack(">H", len(s)) + s


def tcpros_header(fields: dict) -> bytes:
    body = b"".join(struct.pack("<I", len(f)) + f for f in
                    (f"{k}={v}".encode() for k, v in fields.items()))
    return struct.pack("<I", len(body)) + body


def ws(op: int, payload: bytes, fin=True, mask=None) -> bytes:
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | op])
    m = 0x80 if mask else 0
    if n < 126:
        head += bytes([m | n])
    elif n < 65536:
        head += bytes([m | 126]) + struct.pack(">H", n)
    else:
        head += bytes([m | 127]) + struct.pack(">Q", n)
    if mask:
        head += mask
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + payload


def xml_response(inner: str) -> str:
    return ("<?xml version='1.0'?>\n<methodResponse>\n<params>\n<param>\n" + inner
            + "\n</param>\n</params>\n</methodResponse>\n")


def seeds() -> dict[str, list[bytes]]:
    msg = message()
    publish_v311 = mqtt(0x30, mstr(b"mwperf/demo/ping") + msg)
    publish_q1 = mqtt(0x32, mstr(b"mwperf/demo/pong") + b"\x00\x07" + msg)
    props = b"\x08" + mstr(b"mwperf/demo/reply") + b"\x09" + mstr(b"\x00\x00\x00\x2a")
    publish_v5 = mqtt(0x32, mstr(b"mwperf/demo/req") + b"\x00\x09" + varint(len(props)) + props
                      + msg)
    connack_v5 = mqtt(0x20, b"\x00\x00" + varint(3) + b"\x21\x00\x14")
    ok = "<value><array><data><value><i4>1</i4></value><value>ok</value>"
    sys_state = xml_response(
        ok + "<value><array><data><value><array><data><value><array><data>"
        "<value>/chatter</value><value><array><data><value>/talker</value></data></array></value>"
        "</data></array></value></data></array></value></data></array></value>"
        "</data></array></value>")
    request_topic = ("<?xml version=\"1.0\"?>\n<methodCall><methodName>requestTopic</methodName>"
                     "<params><param><value><string>/listener</string></value></param>"
                     "<param><value><string>/chatter</string></value></param><param><value>"
                     "<array><data><value><array><data><value><string>TCPROS</string></value>"
                     "</data></array></value></data></array></value></param></params>"
                     "</methodCall>\n")
    fault = ("<?xml version=\"1.0\"?><methodResponse><fault><value><struct><member><name>"
             "faultCode</name><value><int>-1</int></value></member><member><name>faultString"
             "</name><value><string>no such method &amp; &#x41;</string></value></member>"
             "</struct></value></fault></methodResponse>")
    server_info = json.dumps({"op": "serverInfo", "name": "mwperf", "capabilities":
                              ["clientPublish", "connectionGraph"], "supportedEncodings": ["json"],
                              "metadata": {}, "sessionId": "1"}).encode()
    advertise = json.dumps({"op": "advertise", "channels": [
        {"id": 3, "topic": "/mwperf/demo/ping", "encoding": "mwperf",
         "schemaName": "mwperf_msgs/msg/Bytes", "schema": ""},
        {"id": 4, "topic": "/mwperf/demo/ready/x1", "encoding": "mwperf",
         "schemaName": "mwperf_msgs/msg/Bytes", "schema": ""}]}).encode()
    unadvertise = json.dumps({"op": "unadvertise", "channelIds": [3, 4]}).encode()
    data = b"\x01" + struct.pack("<IQ", 1, 123456789) + msg
    gid = bytes(range(16))
    ros_info_16 = (b"\x00\x01\x00\x00" + gid + struct.pack("<I", 1) + struct.pack("<I", 2) + b"/\0"
                   + b"\0\0" + struct.pack("<I", 7) + b"talker\0" + b"\0"
                   + struct.pack("<I", 1) + gid + struct.pack("<I", 0))
    ros_info_24_be = (b"\x00\x00\x00\x00" + gid + bytes(8) + struct.pack(">I", 1)
                      + struct.pack(">I", 4) + b"/ns\0" + struct.pack(">I", 5) + b"node\0"
                      + b"\0\0\0" + struct.pack(">I", 0) + struct.pack(">I", 1) + gid + bytes(8))

    def packet(gap: int, p: bytes) -> bytes:
        return bytes([gap]) + struct.pack("<H", len(p)) + p

    udp = bytes([0x45]) + bytes(8) + b"\x11" + bytes(18) + msg  # IPv4 + UDP header + message
    return {
        "wire": [msg, message(seq=0, payload=0, flags=1), message(seq=5, payload=100, flags=4),
                 msg[:40], bytes(60)],
        "mqtt": [b"\x00" + mqtt(0x20, b"\x00\x00") + publish_v311 + mqtt(0xD0, b""),
                 b"\x00" + publish_q1 + mqtt(0x40, b"\x00\x07") + mqtt(0x90, b"\x00\x01\x00\x01"),
                 b"\x01" + connack_v5 + publish_v5 + mqtt(0x50, b"\x00\x09\x00\x00"),
                 b"\x01" + mqtt(0x90, b"\x00\x01\x00\x01") + mqtt(0xE0, b"\x8e"),
                 b"\x01" + mqtt(0x62, b"\x00\x05")],
        "tcpros": [b"\x00" + tcpros_header({"callerid": "/talker", "topic": "/chatter",
                                            "md5sum": "e1a733a0a653955956d11097f8512c59",
                                            "type": "mwperf_msgs/Bytes", "tcp_nodelay": "1"})[4:],
                   b"\x01" + struct.pack("<II", len(msg) + 20, len(msg)) + msg + bytes(16)
                   + struct.pack("<I", 5) + b"hello",
                   b"\x02" + struct.pack("<I", len(msg)) + msg + bytes(16),
                   b"\x00" + tcpros_header({"error": "topic not found"})[4:]],
        "xmlrpc": [sys_state.encode(), request_topic.encode(), fault.encode(),
                   xml_response("<value><array><data><value><i4>1</i4></value><value></value>"
                                "<value><array><data><value>TCPROS</value><value>host</value>"
                                "<value><i4>40001</i4></value></data></array></value></data>"
                                "</array></value>").encode(),
                   b"POST /RPC2 HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/xml\r\n"
                   b"Content-Length: " + str(len(request_topic)).encode() + b"\r\n\r\n"
                   + request_topic.encode()],
        "websocket": [ws(1, server_info) + ws(1, advertise),
                      ws(2, data) + ws(9, b"ping") + ws(1, unadvertise),
                      ws(2, data[:5], fin=False) + ws(0, data[5:], mask=b"\x01\x02\x03\x04"),
                      ws(2, b"\x01" + struct.pack("<IQ", 1, 0) + bytes(200)),
                      ws(1, json.dumps({"op": "connectionGraphUpdate"}).encode()) + ws(8, b"\x03\xe8")],
        "supervise": [b"sample\nsignal TERM\nsignal INT\n", b"signal KILL\r\nbogus line\n",
                      json.dumps({"supervisor_pid": 12, "supervisor_start": 345,
                                  "child_pid": 13}).encode(),
                      b"1234 (mwperf-agent) S 1 1234 1234 0 -1 4194304 100 0 0 0 12 3 0 0 20 0 "
                      b"1 0 5678 1000000 200 18446744073709551615",
                      b"0-1,3", b"50000 100000\n100000", b"usage_usec 1000\nuser_usec 600\n"
                      b"system_usec 400\nnr_throttled 2\nthrottled_usec 50\n"],
        "linkem": [b"delay_ns=10000000,jitter_ns=1000000,loss=0.01\n" + packet(1, udp) * 3,
                   b"rate_bps=115200,bits_per_byte=10,queue_bytes=4096,mtu=1500\n"
                   + packet(0, udp) + packet(0, udp) + packet(200, udp),
                   b"ge=0.01:0.3:0:1,corrupt=0.1,dup=0.1,reorder=0.2,jitter_dist=pareto,"
                   b"jitter_ns=500000\n" + packet(3, udp) * 4,
                   b"frame_bytes=127,frame_overhead_bytes=25,backoff_ns=100000,rate_bps=250000,"
                   b"outage_at_ns=64000,outage_ns=128000\n" + packet(1, udp) * 4,
                   b"\n" + packet(0, bytes([0x45]) + bytes(8) + b"\x01" + bytes(18) + msg)],
        "node_info": [ros_info_16, ros_info_24_be],
    }


def main() -> None:
    for target, items in seeds().items():
        folder = CORPUS / target
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("seed-*"):
            old.unlink()
        for i, b in enumerate(items):
            name = f"seed-{i:02d}-{hashlib.sha256(b).hexdigest()[:8]}"
            (folder / name).write_bytes(b)
        print(f"{folder}: {len(items)} seeds")


if __name__ == "__main__":
    main()
