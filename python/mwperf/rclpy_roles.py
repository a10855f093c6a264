"""``--opt client=rclpy``: the side of a single stream that a real rclpy node plays instead of
mwperf's agent (issue 40), by mode:

- roundtrip: the echo, rclpy's relay node (``--pong relay``: ros2/relay.py, a daemon);
- oneway: each sub (``--subscribers N``: each an rclpy node of its own), an rclpy subscriber
  whose arrivals the agent's sub measures with its own collector (ros2/stream_sub.py,
  parts/rclpy_sub.py);
- service: the server, an rclpy service server answering each call as mwperf's server does
  (ros2/service_server.py, a daemon);
- throughput: the publisher, an rclpy publisher as fast as rclpy publishes, into the agent's
  rcl subscriber, which measures (ros2/throughput_pub.py, parts/ros2.py).

Otherwise the sender (ping, pub, client) stays the agent: it keeps the schedule, and the ping
and the client measure. The agents never see the option. A graph file names each node's client
instead (graph/clients.py)."""

from typing import Any

from .errors import UsageError
from .graph.clients import CLIENTS, RCLPY_EXECUTORS, RCLPY_TRANSPORTS
from .point import Point

OPT = "client"
ROLE = {"roundtrip": "pong", "oneway": "sub", "service": "server", "throughput": "pub"}
"""mode -> the role an rclpy node plays"""
EXECUTORS = RCLPY_EXECUTORS


def take(opts: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
    """``--opt client=...`` taken out of the options the agents get: (its value, the rest)."""
    given = [o.split("=", 1)[1].strip() for o in opts if o.split("=", 1)[0].strip() == OPT]
    if not given:
        return None, opts
    if len(given) > 1 or given[0] not in CLIENTS:
        raise UsageError(f"--opt {OPT}={given[-1]}: allowed: "
                         f"{', '.join(f'{OPT}={c}' for c in CLIENTS)} (once)")
    return given[0], tuple(o for o in opts if o.split("=", 1)[0].strip() != OPT)


def check(client: str | None, transport: str, mode: str, rate: float = 0.0) -> None:
    """``--opt client=rclpy`` on a transport and mode where an rclpy node plays a side (a
    throughput stream's rclpy publisher: as fast as it publishes, no ``--rate``)."""
    if client != "rclpy":
        return
    if transport not in RCLPY_TRANSPORTS:
        raise UsageError(f"--opt {OPT}=rclpy: only with --transport "
                         f"{' or '.join(RCLPY_TRANSPORTS)} (a real rclpy node on its RMW), not "
                         f"--transport {transport}; allowed on {transport}: {OPT}=agent")
    if mode not in ROLE:
        plays = ", ".join(f"--mode {m} (its {r})" for m, r in ROLE.items())
        raise UsageError(f"--opt {OPT}=rclpy: not for --mode {mode}; an rclpy node plays "
                         f"{plays}")
    if mode == "throughput" and rate:
        raise UsageError(f"--opt {OPT}=rclpy --mode throughput: the rclpy publisher sends as "
                         f"fast as rclpy publishes; --rate {rate:g} is not allowed (allowed: "
                         "--rate max, the default)")


def refuse(p: Point, options: dict[str, Any]) -> None:
    """What the rclpy side of a one-way or service point cannot do with the rest of the point
    (``options``: the user's): a usage error naming the flag."""
    if p.client != "rclpy" or p.mode not in ("oneway", "service"):
        return
    role = ROLE[p.mode]
    what = f"--opt {OPT}=rclpy"
    refused = [
        (p.topics != 1, f"--topics {p.topics}", "one topic"),
        (p.clock_sync or bool(p.test_clock), "--clock-sync / --test-clock",
         f"the rclpy {role} runs on this machine's clock"),
        (p.count_allocs or p.alloc_sites, "--count-allocs / --alloc-sites",
         "the agent's allocation preloads are not in rclpy's Python"),
        (p.layers, "--layers", "the agent's preload is not in rclpy's Python"),
        (p.link is not None or p.topology is not None, "--link / a scenario's hosts",
         f"the rclpy {role} runs on this machine's loopback"),
        (p.remote is not None, "--host", f"the rclpy {role} runs on this machine"),
        (bool(p.restarts), "--restart", f"the rclpy {role} is not restarted"),
        (p.bridge is not None, "--bridge", "a bridge joins two agents"),
        (options.get("replay") is not None, "--replay", "the replay's topic names are the agents'"),
        (p.profile, "--profile", "perf samples the agents"),
    ]
    for given, flag, why in refused:
        if given:
            raise UsageError(f"{what}: not with {flag} ({why}); drop {flag} or use "
                             f"--opt {OPT}=agent")
