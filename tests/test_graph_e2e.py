"""Graph runs with the real agent (issue 24): counts against the publishers' own ground truth,
a chain's end-to-end age against its stages' known work, a node killed mid-run, and bad input
refused before anything starts."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_AGENT, alive, run_mwperf, run_mwperf_own_shm

SHORT = ("--duration", "2s", "--warmup", "300ms", "--no-save")


def graph_run(env: dict[str, str], tmp_path: Path, graph: str, *args: str,
              code: int = 0) -> dict[str, Any]:
    out = tmp_path / "graph.json"
    done = run_mwperf("run", "--graph", graph, *SHORT, *args, "--json-out", str(out), env=env,
                      timeout=120)
    assert done.returncode == code, done.stderr
    return json.loads(out.read_text())


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "g.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


# rustdds: 30 endpoints, 10 nodes: on loopback only with a participant per node, not per endpoint;
# ros2: each node a real rcl node (rmw_fastrtps_cpp of the managed Kilted)
@pytest.mark.parametrize("transport", ["udp", "cyclonedds", "rustdds", "ros2"])
def test_sierra_nevada_every_edge_gets_what_its_publisher_sent(real_env: dict[str, str],
                                                               tmp_path: Path,
                                                               transport: str) -> None:
    # every message counted: a deep keep-last queue (rustdds' keep-last 10 writer overwrote 11
    # of montreal's 200 /amazon messages to lyon in a CI run beside other tests)
    result = graph_run(real_env, tmp_path, "sierra_nevada", "--transport", transport,
                       "--depth", "1000")
    assert result["status"] == "complete", result["status_reason"]
    assert len(result["edges"]) == 17 and result["graph"]["nodes"] == 10
    for edge in result["edges"]:
        # ground truth: the publisher's own count, which the schedule fixes (2 s / period)
        expected = 2e9 / edge["period_ns"]
        assert abs(edge["sent"] - expected) <= 1, edge
        assert edge["received"] == edge["sent"] and edge["lost"] == 0, edge
        assert edge["latency"]["count"] == edge["received"]
        assert 0 < edge["latency"]["p50_ns"] < edge["period_ns"], edge
    nodes = {n["name"]: n for n in result["nodes"]}
    assert nodes["montreal"]["sent"] == {"amazon": 200, "nile": 200, "ganges": 200,
                                         "danube": 200}
    assert all(n["max_rss_kib"] > 0 and n["cpu_s"] >= 0 for n in nodes.values())


@pytest.mark.parametrize("transport", ["cyclonedds", "fastdds", "rustdds", "iceoryx2"])
def test_a_node_opens_one_middleware_session_for_all_its_endpoints(real_env: dict[str, str],
                                                                   tmp_path: Path,
                                                                   transport: str) -> None:
    # hub: two publishers and a stage (3 endpoints), leaf: a publisher and three subscriptions
    graph = write(tmp_path, """
        name: one-session
        nodes:
          - name: hub
            publishers: [{topic: /a, rate: 20, payload: 64}, {topic: /b, rate: 20, payload: 64}]
            subscribers: [{topic: /c, publish: /d}]
          - name: leaf
            publishers: [{topic: /c, rate: 20, payload: 64}]
            subscribers: [{topic: /a}, {topic: /b}, {topic: /d}]
        """)
    result = graph_run(real_env, tmp_path, graph, "--transport", transport)
    assert result["status"] == "complete", result["status_reason"]
    assert {n["name"]: n["sessions"] for n in result["nodes"]} == {"hub": 1, "leaf": 1}
    for edge in result["edges"]:
        # every message: a publisher's endpoint stays open through the node's linger (a
        # middleware writing in the background delivers its last message after the write)
        assert edge["received"] == edge["sent"] > 0, edge


def test_a_chain_is_measured_end_to_end_through_its_stages(real_env: dict[str, str],
                                                           tmp_path: Path) -> None:
    graph = write(tmp_path, """
        name: chain3
        nodes:
          - name: sensor
            publishers: [{topic: /raw, rate: 50, payload: 1KiB}]
          - name: filter
            subscribers: [{topic: /raw, busy_loop: 2ms, publish: /clean, publish_payload: 256}]
          - name: planner
            subscribers: [{topic: /clean, busy_loop: 3ms, publish: /cmd}]
          - name: actuator
            subscribers: [{topic: /cmd}]
        chains:
          sense_to_act: {topics: [/raw, /clean, /cmd], deadline: 100ms}
        """)
    result = graph_run(real_env, tmp_path, graph, "--transport", "udp")
    assert result["status"] == "complete", result["status_reason"]
    (chain,) = result["chains"]
    e2e = chain["end_to_end"]
    assert e2e["count"] == 100  # every sensor message reached the actuator
    # at least the stages' 5 ms of injected work. No upper bound from this machine's speed
    # (beside two busy loops the p50 was 10.2 ms: scheduling delays, not mwperf): instead the
    # ages grow along the chain, each hop by at least the work of the stage before it, and the
    # chain's end to end is the last hop's age
    assert 5_000_000 <= e2e["p50_ns"], e2e
    # over the 100 ms deadline: exactly the end-to-end samples above it (none on a quiet machine;
    # 4 of 100 beside two busy loops), within the histogram's resolution (3 significant digits)
    above = sum(n for v, n in e2e["histogram"] if v > 100_100_000)
    at_or_above = sum(n for v, n in e2e["histogram"] if v >= 99_900_000)
    assert above <= chain["over_deadline"] <= at_or_above, (chain["over_deadline"], e2e)
    assert [h["topic"] for h in chain["hops"]] == ["/raw", "/clean", "/cmd"]
    ages = [h["age_p50_ns"] for h in chain["hops"]]
    assert ages[1] >= ages[0] + 2_000_000 and ages[2] >= ages[1] + 3_000_000, chain["hops"]
    assert ages[2] == e2e["p50_ns"], (ages, e2e)
    # each stage's own time (callback start to send) holds its busy loop: at least its injected
    # work. Not bounded above: a spinning thread is preempted like any CPU hog, and a preemption
    # across the loop's end adds to it (3.95 ms for the 3 ms loop beside two busy loops), which
    # the result cannot tell from mwperf's own time
    assert 2_000_000 <= chain["hops"][1]["stage_p50_ns"]
    assert 3_000_000 <= chain["hops"][2]["stage_p50_ns"]
    edges = {(e["topic"], e["to"]): e for e in result["edges"]}
    assert edges[("/clean", "planner")]["payload_bytes"] == 256
    assert edges[("/cmd", "actuator")]["payload_bytes"] == 256  # a stage passes its input's size
    assert edges[("/cmd", "actuator")]["sent"] == 100


def test_a_node_killed_mid_run_gives_a_partial_result_naming_it(real_env: dict[str, str],
                                                               tmp_path: Path) -> None:
    graph = write(tmp_path, """
        name: victim
        nodes:
          - name: talker
            publishers: [{topic: /a, rate: 100, payload: 64}, {topic: /b, rate: 100, payload: 64}]
          - name: doomed
            subscribers: [{topic: /a}]
          - name: survivor
            subscribers: [{topic: /b}]
        """)
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--graph", graph,
                             "--transport", "udp", "--duration", "3s", "--warmup", "200ms",
                             "--no-save", "--json-out", str(out)], env=real_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = None
    for _ in range(200):
        found = subprocess.run(["pgrep", "-f", "node.doomed.spec.json"], capture_output=True,
                               text=True).stdout.split()
        if found:
            victim = int(found[0])
            break
        time.sleep(0.02)
    assert victim is not None, "the doomed node never started"
    time.sleep(1.5)
    os.kill(victim, signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    result = json.loads(out.read_text())
    assert result["status"] == "partial"
    assert "node 'doomed'" in result["status_reason"]
    edges = {e["to"]: e for e in result["edges"]}
    assert edges["survivor"]["received"] == edges["survivor"]["sent"] == 300
    assert edges["doomed"]["received"] is None  # it never reported
    nodes = {n["name"]: n for n in result["nodes"]}
    assert nodes["doomed"]["status"] == "failed" and nodes["survivor"]["status"] == "complete"
    leftover = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True)
    assert [p for p in leftover.stdout.split() if alive(int(p))] == []


def test_a_large_message_over_a_unix_socket_arrives_when_sent_not_with_the_next(
        real_env: dict[str, str], tmp_path: Path) -> None:
    """A byte stream takes a 256 kB message in parts: the publisher pushes out the rest at once
    (it was delivered one period late, with the next message's send, before)."""
    graph = write(tmp_path, """
        name: big
        nodes:
          - name: camera
            publishers: [{topic: /image, rate: 5, payload: 256000}]
          - name: viewer
            subscribers: [{topic: /image}]
        """)
    result = graph_run(real_env, tmp_path, graph, "--transport", "uds")
    (edge,) = result["edges"]
    assert edge["received"] == edge["sent"] == 10
    assert edge["latency"]["p50_ns"] < 20_000_000, edge["latency"]  # the period is 200 ms


@pytest.mark.parametrize(("args", "expected"), [
    (("--graph", "mobile-robot", "--transport", "udp"),
     "node 'lidar_driver' publishes '/scan' with 300000 B payloads; --transport udp carries at "
     "most"),
    (("--graph", "sierra_nevada", "--transport", "udp", "--rate", "100"),
     "--rate: not with --graph"),
    (("--graph", "mont_blanc", "--transport", "rustdds"),
     "20 nodes make 20 RustDDS participants (one per node); on loopback RustDDS discovers only "
     "13"),
    (("--graph", "nowhere.yaml", "--transport", "udp"), "--graph: no file nowhere.yaml"),
    (("--graph", "latched.yaml", "--transport", "foxglove"),
     "--graph latched --transport foxglove: node 'map_server' publishes '/map' with qos "
     "durability: transient-local; foxglove supports durability volatile"),
])
def test_a_graph_that_cannot_run_is_refused_before_anything_starts(
        real_env: dict[str, str], tmp_path: Path, args: tuple[str, ...], expected: str) -> None:
    (tmp_path / "latched.yaml").write_text(textwrap.dedent("""
        name: latched
        nodes:
          - name: map_server
            publishers: [{topic: /map, rate: 1, payload: 64, qos: {durability: transient-local}}]
          - name: planner
            subscribers: [{topic: /map}]
        """))
    args = tuple(str(tmp_path / a) if a == "latched.yaml" else a for a in args)
    done = run_mwperf("run", *args, "--no-save", env=real_env, timeout=60)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    assert "Traceback" not in done.stderr


def test_baseline_measures_a_topic_alone_then_inside_the_graph(real_env: dict[str, str],
                                                               tmp_path: Path) -> None:
    result = graph_run(real_env, tmp_path, "sierra_nevada", "--transport", "udp",
                       "--baseline", "danube")
    base = result["baseline"]
    assert base["what"] == "danube" and base["alone_status"] == "complete"
    # danube (montreal, 100 Hz) has four subscribers: each edge both ways
    assert sorted(e["to"] for e in base["edges"]) == ["geneva", "hamburg", "mandalay", "ponce"]
    for edge in base["edges"]:
        assert edge["alone"]["count"] == edge["in_graph"]["count"] == 200, edge
        assert edge["alone"]["lost"] == edge["in_graph"]["lost"] == 0


def test_a_graph_over_an_emulated_link_places_nodes_on_their_hosts(real_env: dict[str, str],
                                                                    tmp_path: Path) -> None:
    graph = write(tmp_path, """
        name: two-hosts
        nodes:
          - name: robot
            host: a
            publishers: [{topic: /state, rate: 100, payload: 256}]
          - name: base
            host: b
            subscribers: [{topic: /state, publish: /ack}]
          - name: echo_back
            host: a
            subscribers: [{topic: /ack}]
        chains:
          there_and_back: [/state, /ack]
        """)
    result = graph_run(real_env, tmp_path, graph, "--transport", "udp", "--link",
                       "delay=5ms")
    assert result["status"] == "complete", result["status_reason"]
    (chain,) = result["chains"]
    # a -> b -> a over a link of 5 ms each way: at least 10 ms, and the median message is not
    # held a whole sender period (10 ms at 100 Hz) beyond the injected delay on any hop
    period = 10_000_000
    assert 10_000_000 <= chain["end_to_end"]["p50_ns"] < 10_000_000 + period, chain
    edges = {e["topic"]: e for e in result["edges"]}
    assert 5_000_000 <= edges["/state"]["latency"]["p50_ns"] < 5_000_000 + period
    assert result["link"] is not None


def test_a_topic_nobody_subscribes_to_is_sent_and_counted(real_env: dict[str, str],
                                                          tmp_path: Path) -> None:
    """Without its motor driver the control stage's /wheel_cmd has no reader: the node still
    starts (a middleware publisher does not wait for a reader that never comes)."""
    result = graph_run(real_env, tmp_path, "mobile-robot", "--transport", "cyclonedds",
                       "--without", "motor_driver")
    assert result["status"] == "complete", result["status_reason"]
    assert "/wheel_cmd" not in {e["topic"] for e in result["edges"]}
    (chain,) = result["chains"] or [None]
    assert chain is None  # the chain's last topic is no longer received


@pytest.mark.parametrize("transport", ["iceoryx2", "fastdds"])
def test_a_graph_leaves_nothing_in_shared_memory(real_env: dict[str, str], tmp_path: Path,
                                                 transport: str) -> None:
    out = tmp_path / "graph.json"
    done, left = run_mwperf_own_shm("run", "--graph", "sierra_nevada", *SHORT, "--transport",
                                    transport, "--json-out", str(out), env=real_env)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "complete", result["status_reason"]
    assert all(e["received"] for e in result["edges"])
    # its /dev/shm was its own: whatever is there is what it left
    assert left == [], f"left in /dev/shm: {left}"


FAN_IN = """
    name: fan-in
    nodes:
      - name: left
        host: a
        publishers: [{topic: /raw, rate: 100, payload: 1KiB}]
      - name: right
        host: b
        publishers: [{topic: /raw, rate: 100, payload: 1KiB}]
      - name: filter
        host: b
        subscribers: [{topic: /raw, publish: /clean, publish_payload: 256, qos: {history: keep-all}}]
      - name: logger
        host: a
        subscribers: [{topic: /raw, qos: {history: keep-all}}, {topic: /clean, qos: {history: keep-all}}]
    chains:
      filtered: [/raw, /clean]
    """
"""two publishers of one topic (in two nodes), a stage, a node subscribing to both; every
message counted, so no subscription keeps only the last few (zenoh's default keep-last 10 lost 1
of 200 to a subscriber thread stalled under load)"""


def every_message_arrived(result: dict[str, Any]) -> dict[tuple[str, str, str], Any]:
    assert result["status"] == "complete", result["status_reason"]
    edges = {(e["topic"], e["from"], e["to"]): e for e in result["edges"]}
    assert len(edges) == 5
    for edge in edges.values():
        assert edge["received"] == edge["sent"] and edge["lost"] == 0, edge
        assert edge["duplicated"] == 0 and edge["corrupted"] == 0, edge
    # ground truth: each timer's own count, which the schedule fixes (2 s at 100 Hz); the stage
    # sends what it received from both
    for node in ("left", "right"):
        assert edges[("/raw", node, "logger")]["sent"] == 200
    assert edges[("/clean", "filter", "logger")]["sent"] == 400
    return edges


@pytest.mark.parametrize("transport", [("tcp",), ("uds",), ("zenoh",),
                                       ("zenoh", "--opt", "mode=client"), ("foxglove",)],
                         ids=["tcp", "uds", "zenoh-peer", "zenoh-client", "foxglove"])
def test_a_topic_of_two_publishers_arrives_whole_on_each_transport(
        real_env: dict[str, str], tmp_path: Path, transport: tuple[str, ...]) -> None:
    result = graph_run(real_env, tmp_path, write(tmp_path, FAN_IN), "--transport", *transport)
    edges = every_message_arrived(result)
    # the sender's schedule: each timer sends every 10 ms; a median message later than that
    # waited behind the next one (a backlog, not a hop)
    latencies = {k: (e["latency"]["p50_ns"], e["latency"]["max_ns"]) for k, e in edges.items()}
    assert all(0 < p50 < 10_000_000 for p50, _ in latencies.values()), latencies
    if transport[0] == "foxglove":  # a server per publishing node, on its host
        assert sorted(d["name"] for d in result["daemons"]) == \
            ["foxglove-server.filter", "foxglove-server.left", "foxglove-server.right"]


@pytest.mark.parametrize("transport", ["tcp", "zenoh", "foxglove"])
def test_a_topic_of_two_publishers_crosses_an_emulated_link(
        real_env: dict[str, str], tmp_path: Path, transport: str) -> None:
    result = graph_run(real_env, tmp_path, write(tmp_path, FAN_IN), "--transport", transport,
                       "--link", "delay=5ms")
    edges = every_message_arrived(result)
    assert result["link"] is not None
    # a -> b and b -> a cross the 5 ms link; a -> a and b -> b stay on their host
    for key in (("/raw", "left", "filter"), ("/raw", "right", "logger"),
                ("/clean", "filter", "logger")):
        assert edges[key]["latency"]["p50_ns"] >= 5_000_000, (key, edges[key]["latency"])
    # the local ones arrive before the crossing ones, which carry the injected 5 ms more (not
    # "under 5 ms": foxglove's relay, a Python server, fell 5.4 ms behind on a local edge once
    # on a busy machine)
    crossing = min(edges[key]["latency"]["p50_ns"] for key in (
        ("/raw", "left", "filter"), ("/raw", "right", "logger"), ("/clean", "filter", "logger")))
    for key in (("/raw", "left", "logger"), ("/raw", "right", "filter")):
        assert edges[key]["latency"]["p50_ns"] < crossing, (key, edges[key]["latency"], crossing)


def test_a_varying_payload_arrives_byte_for_byte(real_env: dict[str, str],
                                                 tmp_path: Path) -> None:
    from mwperf.graph.plan import phase_ns

    sizes = [64, 1500, 9000, 300]
    graph = write(tmp_path, f"""
        name: varying
        nodes:
          - name: sender
            publishers: [{{topic: /mix, rate: 50, payload: {{sizes: {sizes}}}}}]
          - name: receiver
            subscribers: [{{topic: /mix}}]
        """)
    result = graph_run(real_env, tmp_path, graph, "--transport", "udp")
    edge = result["edges"][0]
    assert edge["received"] == edge["sent"] == 100, edge
    # ground truth: message k carries sizes[k mod 4], k counted from the first (warm-up) one
    period, warmup = 20_000_000, 300_000_000
    first = -(-(warmup - phase_ns("sender", "/mix", period, "spread")) // period)
    expected = sum(sizes[(first + i) % len(sizes)] for i in range(edge["sent"]))
    assert edge["received_bytes"] == expected, (edge, first)


def test_count_allocs_counts_each_nodes_messages_and_its_allocations(real_env: dict[str, str],
                                                                     tmp_path: Path) -> None:
    result = graph_run(real_env, tmp_path, "sierra_nevada", "--transport", "udp",
                       "--count-allocs")
    assert result["status"] == "complete", result["status_reason"]
    received: dict[str, int] = {}
    for edge in result["edges"]:
        received[edge["to"]] = received.get(edge["to"], 0) + edge["received"]
    for node in result["nodes"]:
        # the steady phase runs from a node's first measured message (sent or received) to its
        # last: every one of them but the first, which the publishers' and subscribers' own
        # counts fix
        handled = sum(node["sent"].values()) + received.get(node["name"], 0)
        assert node["alloc_messages"] == handled - 1, node
    # a node that only sends over UDP allocates nothing per message (the UDP send path is
    # allocation-free, as ping's and pub's are: BENCHMARKS.md "Allocations by call site")
    montreal = next(n for n in result["nodes"] if n["name"] == "montreal")
    assert montreal["allocs_per_msg"] == 0.0, montreal


def run_nodes(tmp_path: Path, specs: list[dict[str, Any]],
              transport: str = "uds") -> list[dict[str, Any]]:
    """``mwperf-agent node`` for each spec as the graph run starts them (all READY, then one
    go instant in the go file); their reports, each checked against the schema."""
    from mwperf.schema import validation_error
    go = tmp_path / "go"
    procs = []
    try:
        for spec in specs:
            path = tmp_path / f"{spec['name']}.spec.json"
            path.write_text(json.dumps(spec))
            procs.append(subprocess.Popen(
                [str(REAL_AGENT), "node", "--transport", transport, "--node-spec", str(path),
                 "--go-file", str(go), "--run-id", "7", "--quiet",
                 "--json", str(tmp_path / f"{spec['name']}.json")],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("READY node"), (line, proc.wait(30), proc.stderr.read())
        go.write_text(f"{time.monotonic_ns() + 100_000_000}\n")
        exited: dict[int, int] = {}
        deadline = time.monotonic() + 60
        while len(exited) < len(procs) and time.monotonic() < deadline:
            for k, proc in enumerate(procs):
                if k not in exited and proc.poll() is not None:
                    exited[k] = time.monotonic_ns()
            time.sleep(0.01)
        for proc in procs:
            assert proc.wait(1) == 0, proc.stderr.read() if proc.stderr else ""
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    reports = [json.loads((tmp_path / f"{s['name']}.json").read_text()) for s in specs]
    for k, report in enumerate(reports):
        assert validation_error(report, "node-report") is None, validation_error(report,
                                                                                 "node-report")
        report["exited_ns"] = exited[k]  # the test's, after the check: when its process ended
    return reports


def talker_listener(tmp_path: Path, talker_has: dict[str, Any] | None = None,
                    listener_has: dict[str, Any] | None = None,
                    **node: Any) -> list[dict[str, Any]]:
    """A talker publishing /t every 20 ms over a unix socket to a listener writing samples;
    ``talker_has``/``listener_has``: more keys of its publisher/subscription."""
    sock = str(tmp_path / "t.sock")
    common = {"executor": "single", "warmup_ns": 100_000_000, "duration_ns": 200_000_000,
              "linger_ns": 300_000_000, **node}
    talker = {**common, "name": "talker", "index": 1, "publishers": [
        {"topic": "/t", "id": 0, "payload_bytes": 64, "addresses": [sock],
         "period_ns": 20_000_000, "subscribers": 1, **(talker_has or {})}]}
    listener = {**common, "name": "listener", "index": 2, "subscriptions": [
        {"topic": "/t", "id": 0, "address": sock, "period_ns": 20_000_000,
         "late_ns": 20_000_000, "too_late_ns": 40_000_000,
         "samples": str(tmp_path / "t.csv"), **(listener_has or {})}]}
    return run_nodes(tmp_path, [listener, talker])


def test_a_subscription_ends_on_its_publishers_end_marker_not_after_the_linger(
        real_env: dict[str, str], tmp_path: Path) -> None:
    linger_ns = 5_000_000_000
    listener, talker = talker_listener(tmp_path, {"end_marker": True}, {"end_markers": 1},
                                       linger_ns=linger_ns)
    sub = listener["subscriptions"][0]
    assert sub["end_markers"] == 1 and sub["foreign"] == 0
    assert sub["edges"][0]["measurement"]["accounting"]["received"] == \
        talker["publishers"][0]["sent"] == 10
    # the window would have run 5 s past the measured end: the marker ended it (the talker
    # itself keeps its endpoint open until its linger ends)
    measured_end = listener["go_ns"] + 300_000_000
    assert listener["exited_ns"] < measured_end + linger_ns, (listener["exited_ns"],
                                                             measured_end)
    assert talker["exited_ns"] >= measured_end + linger_ns
    assert listener["exited_ns"] < talker["exited_ns"]


def test_a_node_paces_with_the_pacer_writes_samples_per_edge_and_stretches_to_min_count(
        real_env: dict[str, str], tmp_path: Path) -> None:
    # 200 ms at 50 Hz is 10 messages; min_count 25 makes it 500 ms (max(duration, 25 periods))
    listener, talker = talker_listener(tmp_path, min_count=25)
    sent = talker["publishers"][0]
    assert (sent["sent"], sent["warmup_sent"]) == (25, 5), sent
    schedule = sent["schedule"]
    assert schedule["period_ns"] == 20_000_000 and schedule["lateness"]["count"] == 25
    edge = listener["subscriptions"][0]["edges"][0]
    assert edge["source"] == 1 and edge["measurement"]["accounting"]["received"] == 25
    # the edge's samples file: one row per message, against the talker's own count and schedule
    samples = Path(edge["measurement"]["samples_file"])
    assert samples == tmp_path / "t.from1.csv"
    rows = [line.split(",") for line in samples.read_text().splitlines()[1:]]
    assert [int(r[0]) for r in rows] == list(range(25))
    intended = [int(r[1]) for r in rows]
    assert {b - a for a, b in zip(intended, intended[1:])} == {20_000_000}
    assert intended[-1] - intended[0] == 24 * 20_000_000  # the stretch: 480 ms, not 180
    # the pacer's lateness (exact min and max) is each message's send - due as its header
    # carried them to the listener; the largest lag counts the warm-up's sends too
    late = [int(r[2]) - int(r[1]) for r in rows]
    assert (schedule["lateness"]["min_ns"], schedule["lateness"]["max_ns"]) == (min(late),
                                                                                max(late))
    assert schedule["lateness"]["max_ns"] <= sent["max_send_lag_ns"]


def test_a_node_without_min_count_keeps_its_duration(real_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    listener, talker = talker_listener(tmp_path)
    assert talker["publishers"][0]["sent"] == 10
    assert listener["subscriptions"][0]["edges"][0]["measurement"]["accounting"][
        "received"] == 10


def test_min_count_with_a_saturating_publisher_is_refused_naming_it(real_env: dict[str, str],
                                                                    tmp_path: Path) -> None:
    spec = {"name": "flood", "index": 1, "executor": "single", "warmup_ns": 0,
            "duration_ns": 1, "linger_ns": 1, "min_count": 5, "publishers": [
                {"topic": "/f", "id": 0, "payload_bytes": 8, "addresses": [],
                 "period_ns": 0}]}
    path = tmp_path / "flood.json"
    path.write_text(json.dumps(spec))
    done = subprocess.run([str(REAL_AGENT), "node", "--transport", "uds", "--node-spec",
                           str(path), "--go-file", str(tmp_path / "go")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert f"--node-spec {path}: min_count 5 with the publisher of '/f'" in done.stderr


def free_udp_address() -> str:
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize("transport", ["udp", "uds"])
def test_a_closed_loop_against_an_echo_outlet_has_one_message_in_flight(
        real_env: dict[str, str], tmp_path: Path, transport: str) -> None:
    address = free_udp_address() if transport == "udp" else str(tmp_path / "rt.sock")
    common = {"executor": "single", "warmup_ns": 100_000_000, "duration_ns": 300_000_000,
              "linger_ns": 300_000_000}
    ponger = {**common, "name": "ponger", "index": 2, "subscriptions": [
        {"topic": "/rt", "id": 0, "address": address, "period_ns": 0,
         "late_ns": 10**12, "too_late_ns": 10**12, "echo": True,
         "samples": str(tmp_path / "pong.csv")}]}
    pinger = {**common, "name": "pinger", "index": 1, "publishers": [
        {"topic": "/rt", "id": 0, "payload_bytes": 64, "addresses": [address],
         "period_ns": 0, "round_trip": True, "subscribers": 1}]}
    pong, ping = run_nodes(tmp_path, [ponger, pinger], transport)
    sent = ping["publishers"][0]
    rt = sent["round_trip"]
    echo = pong["subscriptions"][0]["echo"]
    edge = pong["subscriptions"][0]["edges"][0]
    # loopback loses nothing: every message reached the echo, was answered, came back; the
    # echo's own count is the ground truth for both directions
    assert sent["sent"] > 100, sent
    assert echo["sent"] == edge["measurement"]["accounting"]["received"] == sent["sent"]
    assert rt["accounting"]["received"] == sent["sent"] and rt["accounting"]["lost"] == 0
    assert echo["warmup_sent"] == sent["warmup_sent"] == rt["accounting"]["warmup_received"]
    assert rt["response"]["count"] == sent["sent"]
    # closed loop: each message left after the one before had come back, so after the echo
    # took it (one clock on one host: the echo's samples against the next message's send)
    rows = [line.split(",") for line in
            Path(edge["measurement"]["samples_file"]).read_text().splitlines()[1:]]
    assert len(rows) == sent["sent"]
    for before, after in zip(rows, rows[1:]):
        assert int(after[2]) > int(before[4]), (before, after)
    # a round trip is at least the one way there (the echo's service latency is its part)
    assert rt["service"]["min_ns"] >= edge["measurement"]["service"]["min_ns"]


def test_min_samples_gives_the_slowest_topic_n_messages_and_the_rest_as_long(
        real_env: dict[str, str], tmp_path: Path) -> None:
    graph = write(tmp_path, """
        name: two-rates
        nodes:
          - name: fast
            publishers: [{topic: /fast, rate: 100, payload: 64}]
          - name: slow
            publishers: [{topic: /slow, rate: 20, payload: 64}]
          - name: both
            subscribers: [{topic: /fast}, {topic: /slow}]
        """)
    out = tmp_path / "graph.json"
    done = run_mwperf("run", "--graph", graph, "--transport", "udp", "--duration", "500ms",
                      "--warmup", "300ms", "--min-samples", "40", "--no-save", "--json-out",
                      str(out), env=real_env, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "complete", result["status_reason"]
    assert result["config"]["measure_ns"] == 40 * 50_000_000  # 40 periods of the 20 Hz topic
    for edge in result["edges"]:
        # ground truth: the publisher's own count over the stretched measured phase
        assert abs(edge["sent"] - 2e9 / edge["period_ns"]) <= 1, edge
        assert edge["received"] == edge["sent"] and edge["lost"] == 0, edge
    slow = next(e for e in result["edges"] if e["topic"] == "/slow")
    assert slow["received"] >= 40
