"""A service's server as a real rclpy node (``mwperf run --mode service --opt client=rclpy``,
rclpy_roles.py): the ros2 transport's service ``/mwperf/<base>`` of
rcl_interfaces/srv/GetParameters, the type mwperf's ros2 services carry their bytes in
(crates/mwperf-transports/src/middleware/ros2/service.rs: the request's bytes base64 in
``names[0]``, the reply's in ``values[0].byte_array_value``), answered inside rclpy's real
executor as the agent's server answers (crates/mwperf-agent/src/roles/server.rs): the request's
header with FLAG_ECHO and ``peer_rx_ns`` = its arrival (taken when the callback starts), then
``--reply-payload`` bytes of mwperf's pattern (default: the request's size), after
``--server-work-ns`` of CPU work (a spin); a request that is not mwperf's (another run's, a
foreign caller) is answered with a header of seq 0 and counted foreign. The agent's client
checks and measures every reply.

Prints ``ready`` once the service exists, and on SIGTERM/SIGINT one JSON line of its own
counts: ``{"requests": N, "answered": A, "measured": M, "foreign": F}`` (M: mwperf's requests
of this run that were neither warm-up nor probes), the count a test checks against the
client's. Run by the ROS 2 distribution's Python in its environment, never by mwperf's.

    python service_server.py --service /mwperf/b --executor multi --reply-payload 64
"""

import argparse
import base64
import binascii
import json
import signal
import time

import wire
from rclpy_parts import EXECUTORS, executor

stop = False


def on_signal(*_: object) -> None:
    global stop
    stop = True




class Server:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.counts = {"requests": 0, "answered": 0, "measured": 0, "foreign": 0}
        self.patterns: dict[int, wire.Pattern] = {}
        self.run_id: int | None = args.run_id

    def reply(self, data: bytes, rx_ns: int) -> bytes:
        """server.rs ``encode_reply``: the reply to request ``data`` that arrived at ``rx_ns``."""
        args = self.args
        h = wire.decode(data)
        if h is not None and self.run_id is None:
            self.run_id = h.run_id  # the first run id it answers (the agent's, without one)
        if h is not None and h.run_id != self.run_id:
            h = None
        size = args.reply_payload if args.reply_payload is not None else \
            h.payload_len if h is not None else len(data)
        if h is None:
            self.counts["foreign"] += 1
            h = wire.Header(wire.FLAG_ECHO, self.run_id or 0, 0, 0, 0, 0, rx_ns, size)
        else:
            if not h.flags & (wire.FLAG_WARMUP | wire.FLAG_PROBE):
                self.counts["measured"] += 1
            h = wire.Header(h.flags | wire.FLAG_ECHO, h.run_id, h.topic, h.seq, h.intended_ns,
                            h.sent_ns, rx_ns, size)
        pattern = self.patterns.get(size)
        if pattern is None:
            pattern = self.patterns[size] = wire.Pattern(size)
        return wire.encode(h) + pattern.payload(h.seq)

    def answer(self, request, response):  # type: ignore[no-untyped-def]
        from rcl_interfaces.msg import ParameterType, ParameterValue
        rx_ns = time.monotonic_ns()  # the callback's start, as the agent's server takes it
        self.counts["requests"] += 1
        try:
            data = base64.b64decode(request.names[0], validate=True) if request.names else b""
        except (binascii.Error, ValueError):
            data = b""
        if self.args.server_work_ns:
            end = time.monotonic_ns() + self.args.server_work_ns
            while time.monotonic_ns() < end:
                pass
        response.values = [ParameterValue(type=ParameterType.PARAMETER_BYTE_ARRAY,
                                          byte_array_value=self.reply(data, rx_ns))]
        self.counts["answered"] += 1
        return response

    def run(self) -> None:
        import rclpy
        from rcl_interfaces.srv import GetParameters
        rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
        node = rclpy.create_node("mwperf_server")
        runner = executor(self.args.executor)
        try:
            node.create_service(GetParameters, self.args.service, self.answer)
            runner.add_node(node)
            print("ready", flush=True)
            while not stop:
                runner.spin_once(timeout_sec=0.05)
            print(json.dumps(self.counts), flush=True)
        finally:
            runner.shutdown()
            node.destroy_node()
            rclpy.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--service", required=True)
    ap.add_argument("--run-id", type=int, help="this run's (default: the first one answered)")
    ap.add_argument("--reply-payload", type=int)
    ap.add_argument("--server-work-ns", type=int, default=0)
    ap.add_argument("--executor", choices=EXECUTORS, default="single")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    Server(args).run()


if __name__ == "__main__":
    main()
