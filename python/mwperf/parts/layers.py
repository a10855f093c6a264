"""The per-layer latency part (``--layers``, docs/layers.md): every measuring agent runs with
libmwperf_layers.so preloaded and writes its per-message rows (``--layers-out``); the rows of
both sides are joined per message into the result's ``layers`` section (layers.py)."""

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent import LAYERS_LIBRARY, layers_preload
from ..errors import RunError, UsageError
from ..layers import Link, Moment, none, oneway_chain, round_trip, section
from ..layers_link import read_many, truncated
from ..layers_rows import Row, RowsError, read_rows
from ..merge import make_warning
from .base import P, Part

if TYPE_CHECKING:
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState

KNOWN_UNSEEN = {
    "iceoryx2": ("no system call carries the message: iceoryx2 moves it through shared memory",
                 ("middleware_send", "kernel_network", "middleware_receive")),
    "fastdds": ("no system call carries the message: Fast DDS's shared-memory transport (on by "
                "default between processes of one host) moves it",
                ("middleware_send", "kernel_network", "middleware_receive")),
    "foxglove": ("a WebSocket client masks its frames (RFC 6455): the header is not in the bytes "
                 "its send call passes", ("middleware_send", "kernel_network")),
}
"""why a transport hides a moment, where it is known (docs/layers.md)"""

FOLDER = "layers"
"""the rows' folder in the point's work folder (and in its saved result)"""


class Layers(Part):
    name = "layers"

    def wanted(self, cfg: "Point") -> bool:
        return cfg.layers

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        if cfg.mode not in ("roundtrip", "oneway"):
            raise UsageError(f"--layers: round trips and one-way points only (--mode roundtrip "
                             f"or oneway), not --mode {cfg.mode}")
        if cfg.remote is not None:
            raise UsageError("--layers: not yet for agents on real hosts (--host); split the "
                             "layers with the agents on this machine (loopback or --link)")
        if cfg.bridge is not None:
            raise UsageError("--layers: not through a bridge (--bridge): the bridge's own "
                             "process is not preloaded, so its hops would be one unsplit layer")
        return cfg

    def start(self, run: "PointState") -> None:
        (run.workdir / FOLDER).mkdir(exist_ok=True)
        try:
            run.found["layers_preload"] = layers_preload(run.agent, None)
        except RunError as exc:  # not built: the run goes on without the split
            run.found["layers_missing"] = str(exc)

    def command(self, run: "PointState", role: str, argv: list[str]) -> list[str]:
        name = _agent_name(argv) or role
        return argv + ["--layers-out", str(run.workdir / FOLDER / f"{name}.csv")]

    def env(self, run: "PointState", name: str, env: dict[str, str] | None
            ) -> dict[str, str] | None:
        library = run.found.get("layers_preload")
        if library is None:
            return env
        existing = (env or {}).get("LD_PRELOAD")
        return {**(env or {}), "LD_PRELOAD": f"{library}:{existing}" if existing else library}

    def section(self, run: "PointState", result: "RunResult") -> None:
        reports = [(r.name or r.role, r.report) for r in run.runs if r.report is not None]
        links: Link = {}
        if run.emulated is not None:
            logs = run.emulated.layer_logs()
            links = read_many([p for wire in logs[:1] for p in wire.values()], run_id=run.tag)
            cut = sum(truncated(report) for report in run.emulated.reports[:1])
            if not links or cut:
                result["warnings"].append(make_warning(
                    "layers-incomplete", "--layers: the link emulator's log of each message's "
                    f"passage is {'incomplete' if cut else 'empty'}: the kernel and network "
                    "layer is not split into sender kernel, link and receiver kernel"
                    + (" for every message" if not cut else f" ({cut} packets not logged)"),
                    "--link-backend userspace stamps each message; netem cannot"))
        layers, warnings = build(run.cfg.mode, run.workdir / FOLDER, reports, result,
                                 run.found.get("layers_missing"), links, run.cfg.transport)
        result["layers"] = layers  # type: ignore[typeddict-unknown-key]
        result["warnings"] += warnings

    def files(self, run: "PointState") -> dict[str, Any]:
        return {"layers_dir": run.workdir / FOLDER}


def _agent_name(argv: list[str]) -> str | None:
    """The agent's name: its report's file name (``--json <workdir>/<name>.json``)."""
    if "--json" in argv:
        at = argv.index("--json") + 1
        if at < len(argv):
            return Path(argv[at]).stem
    return None


def build(mode: str, folder: Path, reports: list[tuple[str, dict[str, Any]]],
          result: "RunResult", missing: str | None, links: Link, transport: str = ""
          ) -> tuple[dict[str, Any], list[Any]]:
    """The ``layers`` section and its warnings from the rows in ``folder`` and the agents'
    ``reports`` (name, report)."""
    if missing is not None:
        why = f"{LAYERS_LIBRARY} is not available: {missing}"
        return none(why), [make_warning("layers-unavailable", f"--layers: {why}",
                                        "build it with 'make build'")]
    warnings = []
    agents = []
    blind = []
    for name, report in reports:
        seen = report.get("layers") or {}
        agents.append({"name": name, "events": seen.get("events", 0),
                       "dropped": seen.get("dropped", 0)})
        if seen and not seen.get("interposer"):
            blind.append(f"{name}: {seen.get('why') or 'not loaded'}")
        if seen.get("error"):
            warnings.append(make_warning("layers-unavailable", f"--layers: {seen['error']}"))
    if blind:
        warnings.append(make_warning(
            "layers-unavailable", "--layers: the system calls of " + "; ".join(blind)
            + " were not seen; their layers are merged where they meet",
            "a static binary or a seccomp policy keeps LD_PRELOAD out"))
    sender_role = "ping" if mode == "roundtrip" else "pub"
    try:
        sender = _rows(folder, sender_role)
        receivers = sorted(p for p in folder.glob("*.csv") if p.stem != sender_role)
        received = [read_rows(p) for p in receivers]
    except (OSError, RowsError) as exc:
        why = f"the agents' per-message rows are unreadable: {exc}"
        return none(why), warnings + [make_warning("layers-unavailable", f"--layers: {why}")]
    if not sender or not received:
        why = "no agent wrote its per-message rows (did the agents start?)"
        return none(why), warnings + [make_warning("layers-unavailable", f"--layers: {why}")]
    names = _topic_names(result)
    chains: list[list[Moment]] = []
    per_topic: dict[str, list[list[Moment]]] = {}
    full = {a["name"] for a in agents if a["dropped"]}
    held_back = 0
    for path, rows in zip(receivers, received):
        for key, theirs in rows.items():
            mine = sender.get(key)
            if mine is None:
                continue
            if mode == "roundtrip":
                if mine.take is None:
                    continue  # the echo never came back: lost, not measured
                chain = round_trip(mine, theirs, links)
            else:
                chain = oneway_chain(mine, theirs, links)
            if {sender_role, path.stem} & full and _syscall_unseen(chain):
                held_back += 1  # its agent's ring was full: unseen is no finding
                continue
            chains.append(chain)
            per_topic.setdefault(names.get(key[0], f"topic {key[0]}"), []).append(chain)
    why = _why_unseen(sender, received)
    if transport in KNOWN_UNSEEN:
        reason, hidden = KNOWN_UNSEEN[transport]
        why.update({name: reason for name in hidden})
    layers = section(mode, chains, why, agents, _notes(sender, received),
                     {"events_dropped": held_back}, per_topic)
    if layers["split"] < layers["messages"]:
        warnings.append(make_warning(
            "layers-incomplete",
            f"--layers: {layers['messages'] - layers['split']} of {layers['messages']} measured "
            f"messages could not be split like the others ({_counts(layers['unsplit'])})",
            "the figures are over the messages split alike; dropped events mean the "
            "interposer's ring was full"))
    return layers, warnings


def _syscall_unseen(chain: list[Moment]) -> bool:
    """A system call of the message was not seen (the moments that end the send path and the
    kernel's part)."""
    return any(m.at is None for m in chain
               if m.layer in ("middleware_send", "kernel_network", "receiver_kernel"))


def _rows(folder: Path, name: str) -> dict[tuple[int, int], Row]:
    path = folder / f"{name}.csv"
    return read_rows(path) if path.is_file() else {}


def _topic_names(result: "RunResult") -> dict[int, str]:
    return {i: t.get("name") or f"topic {i}"  # type: ignore[misc]
            for i, t in enumerate(result.get("per_topic") or [])}


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in counts.items() if v) or "none"


def _why_unseen(sender: dict[tuple[int, int], Row],
                received: list[dict[tuple[int, int], Row]]) -> dict[str, str]:
    """Why a layer's boundary was not seen, from what was seen."""
    rows = [r for side in received for r in side.values()]
    why: dict[str, str] = {}
    if sender and all(r.send_first is None for r in sender.values()):
        why["middleware_send"] = ("no system call carried the message's bytes (the middleware "
                                  "moves it through shared memory, or the sender's calls were "
                                  "not seen)")
        why["kernel_network"] = why["middleware_send"]
        why["middleware_receive"] = why["middleware_send"]
    elif rows and all(r.recv_last is None for r in rows):
        if any(r.recv_first is not None for r in rows):
            why["kernel_network"] = ("the message is split over several datagrams: the first "
                                     "carries the header, the last cannot be recognised")
        else:
            why["kernel_network"] = "no receive system call carried the message's bytes"
        why["middleware_receive"] = why["kernel_network"]
    return why


def _notes(sender: dict[tuple[int, int], Row],
           received: list[dict[tuple[int, int], Row]]) -> list[str]:
    notes = []
    rows = [r for side in received for r in side.values()]
    if any(r.recv_first is not None and r.recv_last is not None and r.recv_last > r.recv_first
           for r in rows):
        notes.append("a message arrived over several receive calls (a byte stream): kernel and "
                     "network ends at the call that completed its bytes")
    return notes
