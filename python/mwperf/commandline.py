"""An agent's command line for one role of a point (docs/agent-contract.md), and the times
the runner gives it: pure functions of the point's configuration."""

from datetime import datetime
from decimal import Decimal
from pathlib import Path

from .agent import Agent
from .config import MEASURING_ROLE, ROLES, SENDERS, PointConfig
from .roles import ONE_WAY
from .durations import format_duration_arg
from .subscribers import names
from .topicnames import SAMPLES_NAME, names_given, samples_files  # noqa: F401 (the runner's)
from .transports import profile

READY_TIMEOUT_S = 10.0
SLACK_S = 10.0
COUNT_PACE_S = 0.001
"""assumed worst time per message for --count at rate 0 (closed loop), to bound the wait"""


def ready_timeout_s(cfg: PointConfig) -> float:
    """How long a pong/sub may take to print READY (middleware may discover before it is ready)."""
    if not profile(cfg.transport).discovery:
        return READY_TIMEOUT_S
    return max(READY_TIMEOUT_S, cfg.discovery_timeout_ns / 1e9)


def sender_args(cfg: PointConfig) -> list[str]:
    """The ping/pub options that define the measurement."""
    amount = (["--count", str(cfg.count)] if cfg.count is not None
              else ["--duration", format_duration_arg(cfg.duration_ns or 0)]
              + (["--min-count", str(cfg.min_samples)] if cfg.min_samples else []))
    return ["--rate", format(Decimal(repr(cfg.rate)).normalize(), "f"), "--payload", cfg.payload,
            *amount, "--warmup", format_duration_arg(cfg.warmup_ns),
            "--peer-timeout", format_duration_arg(cfg.peer_timeout_ns),
            "--spin-margin", format_duration_arg(cfg.spin_margin_ns),
            *(["--subscribers", str(cfg.subscribers)] if cfg.subscribers > 1 else []),
            *(["--idle", format_duration_arg(cfg.idle_ns)] if cfg.idle_ns else []),
            *(["--replay-trace", cfg.replay_trace] if cfg.replay_trace else []),
            *(["--replay-loop", f"{cfg.replay['loop_span_ns']}ns"]
              if cfg.replay_trace and cfg.replay and "loop_span_ns" in cfg.replay else [])]


def sender_timeout_s(cfg: PointConfig) -> float:
    """How long the sender may take: discovery + warm-up + measurement + twice the peer timeout
    (a throughput sender blocked that long by a reader, then, at a planned end, as long again
    for its readers' acknowledgements) + slack. With --min-samples at rate 0 the measurement is
    its duration plus what --count would get."""
    if cfg.count is not None:
        per_message_s = 1 / cfg.rate if cfg.rate > 0 else COUNT_PACE_S
        measure_s = 2 * cfg.count * per_message_s
    else:
        measure_s = (cfg.measure_ns or 0) / 1e9
        if cfg.min_samples and cfg.rate <= 0:
            measure_s += 2 * cfg.min_samples * COUNT_PACE_S
    discovery_ns = cfg.discovery_timeout_ns if profile(cfg.transport).discovery else 0
    calls_ns = cfg.service.call_timeout_ns if cfg.service is not None else 0
    return ((discovery_ns + cfg.warmup_ns + 2 * cfg.peer_timeout_ns + cfg.idle_ns + calls_ns) / 1e9
            + measure_s + SLACK_S)


def make_run_id(cfg: PointConfig, tag: int, started: datetime) -> str:
    """A sortable id: ``20261121T224501Z-udp-roundtrip-1a2b`` (suffix = low bits of the tag)."""
    return f"{started:%Y%m%dT%H%M%SZ}-{cfg.transport}-{cfg.mode}-{tag & 0xFFFF:04x}"


def role_argv(agent: Agent, role: str, cfg: PointConfig, workdir: Path, tag: int,
              address: str, name: str | None = None) -> list[str]:
    """The full agent command line for ``role`` (docs/agent-contract.md); ``name`` tells apart
    several agents of one role (their report files)."""
    sender = role in SENDERS
    argv = [str(agent.path), role, "--transport", cfg.transport,
            "--connect" if sender else "--listen", address, "--run-id", str(tag),
            "--json", str(workdir / f"{name or role}.json"), "--quiet"]
    argv += ["--busy-poll"] * cfg.busy_poll + ["--prevent-cpu-idle"] * cfg.prevent_cpu_idle
    argv += qos_args(cfg) + workload_args(cfg, sender)
    if sender:
        argv += sender_args(cfg)
    if cfg.service is not None:
        argv += cfg.service.client_args() if sender else cfg.service.server_args()
    if cfg.samples and role == MEASURING_ROLE[cfg.mode]:
        argv += ["--samples", str(workdir / SAMPLES_NAME)]
    return argv


def workload_args(cfg: PointConfig, sender: bool) -> list[str]:
    """--topics (and a replay's topic names) for both agents; --executor and --busy-loop for
    the callback side (pong, sub).

    Passed only when not the default, so a single-topic point's command lines stay as before.
    """
    args = ["--topics", str(cfg.topics)] if cfg.topics != 1 else []
    args += [f"--topic-name={name}" for name in names_given(cfg.topics, cfg.replay)]
    if not sender:
        args += ["--executor", cfg.executor] if cfg.topics != 1 else []
        args += ["--busy-loop", format_duration_arg(cfg.busy_loop_ns)] if cfg.busy_loop_ns else []
    return args


def qos_args(cfg: PointConfig) -> list[str]:
    """The QoS flags the user gave, and every --opt, for both agents (same values both sides)."""
    values = {"reliability": cfg.reliability, "history": cfg.history, "depth": str(cfg.depth),
              "durability": cfg.durability,
              "discovery_timeout": format_duration_arg(cfg.discovery_timeout_ns)}
    args = []
    for key in cfg.qos_given:
        args += ["--" + key.replace("_", "-"), values[key]]
    for item in cfg.opts:
        args += ["--opt", item]
    return args


def server_names(cfg: PointConfig) -> list[str]:
    """The pong, or the subs (``sub.0`` ... with several subscribers)."""
    return names(cfg.subscribers) if cfg.mode in ONE_WAY else [ROLES[cfg.mode][0]]
