"""One-way latency across two clocks: the agents' clock-sync flags, and the test-only clocks.

With ``--clock-sync`` (scenario key ``clock_sync``) a one-way point's pub serves NTP-style probes
on a UDP side channel (``--clock-serve``) and each sub probes it (``--clock-peer``) before, during
and after the stream, fits the pub clock's offset and drift and corrects every one-way sample
(docs/agent-contract.md, "Clock sync"). The probes go to the pub's host address on
``CLOCK_PORT`` (an emulated or real host), or to a free loopback port when both agents share
mwperf's host (offset ~0 then: a self-check).

TEST ONLY, ground truth for the tests: ``--test-clock HOST=OFFSET_S[,DRIFT_PPM]`` starts the
agents of an emulated host in a time namespace whose CLOCK_MONOTONIC is OFFSET_S whole seconds
ahead (``unshare --time --monotonic``) and makes them add DRIFT_PPM to every timestamp
(``--test-clock-drift-ppm``). ``true_offset_ns`` gives the offset that the estimate must match.
"""

import shutil
import socket
from typing import TYPE_CHECKING, Protocol

from .errors import UsageError
from .result_types import RunResult

if TYPE_CHECKING:
    from .point import Point

CLOCK_PORT = 47999
"""the pub's probe port on its own host (an emulated host's namespace has it free)"""
MAX_OFFSET_S = 1_000_000
MAX_DRIFT_PPM = 1000.0


class Hosts(Protocol):
    """Where roles run (emulation/network.py's Network, remote/'s PointHosts)."""

    def address_of(self, name: str) -> str: ...


def clock_address(cfg: "Point", hosts: Hosts | None) -> str | None:
    """Where the pub answers probes (``IP:PORT`` as the subs reach it); None without
    ``--clock-sync`` or for a round trip. Loopback: a free port, picked now."""
    if not cfg.clock_sync or cfg.mode != "oneway":
        return None
    if hosts is None:
        return f"127.0.0.1:{free_udp_port()}"
    host = hosts.address_of("pub")
    return f"[{host}]:{CLOCK_PORT}" if ":" in host else f"{host}:{CLOCK_PORT}"


def clock_args(role: str, cfg: "Point", peer_address: str | None) -> list[str]:
    """The clock-sync flags of ``role`` for the pub's probe address ``peer_address`` (from
    ``clock_address``): the pub serves on that port on every interface of its host, a sub
    probes the address; nothing for other roles or without clock sync."""
    if peer_address is None or not cfg.clock_sync or cfg.mode != "oneway":
        return []
    if role == "pub":
        port = peer_address.rsplit(":", 1)[1]
        return ["--clock-serve", f"[::]:{port}" if peer_address.startswith("[") else f"0.0.0.0:{port}"]
    if role == "sub":
        return ["--clock-peer", peer_address]
    return []


def free_udp_port() -> int:
    """A UDP port free on loopback right now (the pub binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_test_clock(text: str | None, hosts: tuple[str, ...] | None
                     ) -> tuple[tuple[str, int, float], ...]:
    """TEST ONLY ``--test-clock HOST=OFFSET_S[,DRIFT_PPM][;HOST=...]`` -> ((host, offset_s,
    drift_ppm), ...); ``hosts`` = the emulated hosts (None: there are none)."""
    if text is None or not str(text).strip():
        return ()
    if hosts is None:
        raise UsageError("--test-clock: only with emulated hosts (--link or a scenario's hosts); "
                         "it shifts an emulated host's clock for the clock-sync tests")
    if shutil.which("unshare") is None:
        raise UsageError("--test-clock: needs util-linux 'unshare' (time namespaces)")
    out: list[tuple[str, int, float]] = []
    for item in str(text).split(";"):
        host, sep, value = item.strip().partition("=")
        parts = value.split(",")
        bad = (f"--test-clock: '{item.strip()}' is not HOST=OFFSET_S[,DRIFT_PPM] with HOST one of "
               f"{', '.join(hosts)}, OFFSET_S whole seconds 0..{MAX_OFFSET_S} and DRIFT_PPM "
               f"-{MAX_DRIFT_PPM:g}..{MAX_DRIFT_PPM:g}")
        if not sep or host.strip() not in hosts or len(parts) > 2:
            raise UsageError(bad)
        try:
            offset = int(parts[0])
            drift = float(parts[1]) if len(parts) == 2 else 0.0
        except ValueError:
            raise UsageError(bad) from None
        if not 0 <= offset <= MAX_OFFSET_S or not abs(drift) <= MAX_DRIFT_PPM:
            raise UsageError(bad)
        if any(h == host.strip() for h, _, _ in out):
            raise UsageError(f"--test-clock: host '{host.strip()}' given twice")
        out.append((host.strip(), offset, drift))
    return tuple(out)


def test_clock_of(cfg: "Point", role: str) -> tuple[int, float] | None:
    """(offset_s, drift_ppm) of the emulated host ``role`` runs on, if its clock is shifted."""
    if not cfg.test_clock:
        return None
    from .emulation.topology import two_hosts
    host = (cfg.topology or two_hosts()).host_of(role)
    return next(((o, d) for h, o, d in cfg.test_clock if h == host), None)


def in_test_clock(cfg: "Point", role: str, argv: list[str]) -> list[str]:
    """TEST ONLY: ``argv`` started in a time namespace with its host's offset, with its drift."""
    shift = test_clock_of(cfg, role.split(".")[0])
    if shift is None:
        return argv
    return shifted(argv, *shift)


def shifted(argv: list[str], offset_s: int, drift_ppm: float) -> list[str]:
    """TEST ONLY: ``argv`` in a time namespace ``offset_s`` ahead, adding ``drift_ppm``."""
    extra = ["--test-clock-drift-ppm", repr(drift_ppm)] if drift_ppm else []
    return ["unshare", "--time", f"--monotonic={offset_s}", "--fork", "--kill-child", "--",
            *argv, *extra]


def true_offset_ns(cfg: "Point", t_sub_ns: int) -> float | None:
    """TEST ONLY: the pub clock minus the sub clock at sub time ``t_sub_ns``, from the injected
    offsets and drifts (an agent's clock = (CLOCK_MONOTONIC + offset)·(1 + drift)); None when
    neither clock is shifted."""
    pub, sub = test_clock_of(cfg, "pub"), test_clock_of(cfg, "sub")
    if pub is None and sub is None:
        return None
    (op, dp), (os_, ds) = pub or (0, 0.0), sub or (0, 0.0)
    raw = t_sub_ns / (1 + ds * 1e-6) - os_ * 1e9  # mwperf's own CLOCK_MONOTONIC then
    return (raw + op * 1e9) * (1 + dp * 1e-6) - t_sub_ns


def true_drift_ppm(cfg: "Point") -> float | None:
    """TEST ONLY: d(pub − sub)/d(sub time) in ppm from the injected drifts."""
    pub, sub = test_clock_of(cfg, "pub"), test_clock_of(cfg, "sub")
    if pub is None and sub is None:
        return None
    dp, ds = (pub or (0, 0.0))[1], (sub or (0, 0.0))[1]
    return ((1 + dp * 1e-6) / (1 + ds * 1e-6) - 1) * 1e6


def annotate(result: RunResult, cfg: "Point") -> None:
    """TEST ONLY: add the injected truth (``test_truth``) to the measurement's clock_sync."""
    m = result.get("measurement") or {}
    cs = m.get("clock_sync")
    if not cs or not cfg.test_clock or cs.get("t0_ns") is None:
        return
    truth = true_offset_ns(cfg, cs["t0_ns"])
    if truth is None:
        return
    cs["test_truth"] = {"offset_ns": round(truth), "drift_ppm": true_drift_ppm(cfg),
                        "offset_error_ns": cs["offset_ns"] - round(truth),
                        "within_bound": abs(cs["offset_ns"] - truth) <= cs["error_bound_ns"]}

