"""A real ROS 2 service server or client (rclpy, on the RMW of the managed environment) of
rcl_interfaces/srv/GetParameters, the type mwperf's ros2 services carry their bytes in
(crates/mwperf-transports/src/middleware/ros2/service.rs: the request's bytes base64 in
names[0], the reply's in values[0].byte_array_value). Run with the distribution's python in its
environment (mwperf.ros2: ``child_env``):

    python rclpy_service.py --role server --node echo --service /mwperf/b
    python rclpy_service.py --role client --node caller --service /mwperf/b --count 50 --payload 64
    python rclpy_service.py --role client --service /mwperf/b --count 300 --rate 100 --warmup 100
    python rclpy_service.py --role client --service /mwperf/b --count 5 --name use_sim_time

The server answers every request with the request's own bytes (an mwperf call comes back with
its header and payload as they were: the caller checks both). The client makes ``--count``
calls one at a time (``--rate`` per second on absolute deadlines, 0: back to back; after
``--warmup`` calls it does not time or count), each an mwperf request (tests/mwperf_header.py) of ``--payload`` bytes, and
checks each reply: an mwperf message (magic, header length, checksum) of the call's seq with
FLAG_ECHO (what mwperf's server sends back). With ``--name`` it asks for that parameter instead
(a foreign call, as ``ros2 param get`` makes): a reply counts as echoed when it is an mwperf
message with FLAG_ECHO (mwperf's answer to a foreign request). stdout, one JSON object per line:
{"ready": true, ...} once the entity exists; a server on SIGTERM/SIGINT {"answered": N, "data":
D} (D: the mwperf requests without a flag: not warm-up, probe or end); a client at its end
{"calls": N, "answered": A, "echoed": E, "reply_bytes": [...sizes seen], "p50_ns": P} (P: its
own call round trips, send to reply, median).
"""

import argparse
import base64
import json
import signal
import statistics
import sys
import time
from pathlib import Path

import rclpy
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import mwperf_header  # noqa: E402  (tests/, beside this folder)

stop = False


def on_signal(*_: object) -> None:
    global stop
    stop = True


def say(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def serve(node: object, name: str) -> None:
    counts = {"answered": 0, "data": 0}

    def answer(request: GetParameters.Request, response: GetParameters.Response
               ) -> GetParameters.Response:
        try:
            data = base64.b64decode(request.names[0], validate=True) if request.names else b""
        except ValueError:
            data = b""
        if data[:4] == b"MWPF" and len(data) >= mwperf_header.HEADER_LEN and data[5] == 0:
            counts["data"] += 1
        response.values = [ParameterValue(type=ParameterType.PARAMETER_BYTE_ARRAY,
                                          byte_array_value=data)]
        counts["answered"] += 1
        return response

    node.create_service(GetParameters, name, answer)
    say(ready=True, node=node.get_fully_qualified_name(), service=name)
    while not stop:
        rclpy.spin_once(node, timeout_sec=0.05)
    say(**counts)


def echoed(reply: bytes, seq: int | None) -> bool:
    """An mwperf reply to call ``seq`` (None: to a foreign call, any seq): whole, checksum
    right, FLAG_ECHO set."""
    if len(reply) < mwperf_header.HEADER_LEN or reply[:4] != b"MWPF":
        return False
    fields = mwperf_header.LAYOUT.unpack(reply[:52])
    check = int.from_bytes(reply[52:56], "little")
    return (fields[3] == mwperf_header.HEADER_LEN and seq in (None, fields[7])
            and fields[2] & mwperf_header.FLAG_ECHO != 0
            and check == mwperf_header.checksum(reply[:52])
            and len(reply) == mwperf_header.HEADER_LEN + fields[11])


def call(node: object, name: str, count: int, payload: int, timeout: float, rate: float,
         warmup: int, parameter: str | None) -> None:
    client = node.create_client(GetParameters, name)
    say(ready=True, node=node.get_fully_qualified_name(), service=name)
    if not client.wait_for_service(timeout_sec=timeout):
        say(calls=0, answered=0, echoed=0, reply_bytes=[], p50_ns=None)
        return
    answered = good = 0
    sizes: set[int] = set()
    took: list[int] = []
    period = 1.0 / rate if rate > 0 else 0.0
    next_at = time.monotonic()
    for seq in range(warmup + count):
        if stop:
            break
        if period:
            left = next_at - time.monotonic()
            if left > 0:
                time.sleep(left)
            next_at += period
        request = GetParameters.Request(names=[parameter] if parameter else [
            base64.b64encode(mwperf_header.encode(run_id=1, topic=0, seq=seq,
                                                  payload=bytes(payload))).decode()])
        sent = time.monotonic_ns()
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future, timeout_sec=timeout)
        if not future.done() or seq < warmup:
            continue
        took.append(time.monotonic_ns() - sent)
        values = future.result().values
        reply = b"".join(values[0].byte_array_value) if values else b""
        answered += 1
        good += echoed(reply, None if parameter else seq)
        sizes.add(len(reply))
    say(calls=count, answered=answered, echoed=good, reply_bytes=sorted(sizes),
        p50_ns=int(statistics.median(took)) if took else None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--role", choices=("server", "client"), required=True)
    ap.add_argument("--node", default="mwperf_peer")
    ap.add_argument("--service", required=True)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--payload", type=int, default=64)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--rate", type=float, default=0.0)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--name", help="ask for this parameter (a foreign call)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = rclpy.create_node(args.node)
    try:
        if args.role == "server":
            serve(node, args.service)
        else:
            call(node, args.service, args.count, args.payload, args.timeout, args.rate,
                 args.warmup, args.name)
    finally:
        node.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    main()
