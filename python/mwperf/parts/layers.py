"""The per-layer latency part (``--layers``, docs/layers.md): every measuring agent runs with
libmwperf_layers.so preloaded and writes its per-message rows (``--layers-out``); the rows of
both sides are joined per message into the result's ``layers`` section (layers.py).

An agent on a real host (``--host``) preloads a copy of the library on that host
(remote/preload.py, copied in ``start`` before any agent runs) and writes its rows in its
scratch folder; the supervisor brings them back when it exits and ``section`` files them beside
the local ones. Its stamps are on that host's clock: layers_clocks.py joins the two sides.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent import LAYERS_LIBRARY, layers_preload
from ..clocksync import test_clock_of
from ..errors import RunError, UsageError
from ..graph.layers import rows_path
from ..graph.node_files import file_name
from ..layers import Link, Moment, figures, none, oneway_chain, round_trip, section
from ..layers_clocks import (aligned_pong, aligned_sub, on_pub_clock, sync_of, two_clocks_why,
                             unknown_across)
from ..layers_link import read_many, truncated
from ..layers_rows import Row, RowsError, read_rows
from ..layers_unseen import byte_stream_notes, why_unseen
from ..merge import make_warning
from ..remote.preload import remote_preload
from ..roles import ROLES
from .base import P, Part

if TYPE_CHECKING:
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState

FOLDER = "layers"
"""the rows' folder in the point's work folder (and in its saved result)"""
REMOTE_SUFFIX = ".layers.csv"
"""an agent on a real host writes its rows as ``<name>.layers.csv`` in its scratch folder (the
supervisor sends back plain names only, into the point's work folder)"""


class Layers(Part):
    name = "layers"
    on_graphs = True
    """on a graph every node is preloaded and writes its rows (``args``); the sections per
    edge and chain are graph/layers.py's"""

    def wanted(self, cfg: "Point") -> bool:
        return cfg.layers

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        if cfg.mode not in ("roundtrip", "oneway"):
            raise UsageError(f"--layers: round trips and one-way points only (--mode roundtrip "
                             f"or oneway), not --mode {cfg.mode}")
        if cfg.bridge is not None:
            raise UsageError("--layers: not through a bridge (--bridge): the bridge's own "
                             "process is not preloaded, so its hops would be one unsplit layer")
        return cfg

    def start(self, run: "PointState") -> None:
        (run.workdir / FOLDER).mkdir(exist_ok=True)
        try:
            run.found["layers_preload"] = layers_preload(run.agent, None)
            local = run.agent.path.resolve().parent / LAYERS_LIBRARY
            run.found["layers_remote"] = {role: remote_preload(run.real, role, local)
                                          for role in ROLES[run.cfg.mode]
                                          if _remote(run, role)}
        except RunError as exc:  # not built, or a host cannot load it: no split
            run.found.pop("layers_preload", None)
            run.found["layers_missing"] = str(exc)

    def args(self, run: "PointState", role: str) -> list[str]:
        """A graph node's rows (``role``: the node's name); a stream's agents get theirs by
        ``command``, which knows each agent's name."""
        if run.cfg.graph is None or "layers_preload" not in run.found:
            return []
        return ["--layers-out", str(rows_path(run.workdir, file_name(role)))]

    def command(self, run: "PointState", role: str, argv: list[str]) -> list[str]:
        name = _agent_name(argv) or role
        if _remote(run, role):
            return argv + ["--layers-out", f"{name}{REMOTE_SUFFIX}"]
        return argv + ["--layers-out", str(run.workdir / FOLDER / f"{name}.csv")]

    def remote_env(self, run: "PointState", role: str, name: str, env: dict[str, str] | None
                   ) -> dict[str, str] | None:
        preload = (run.found.get("layers_remote") or {}).get(role)
        return env if preload is None else _ahead(env, preload["LD_PRELOAD"])

    def remote_files(self, run: "PointState", role: str, name: str) -> list[str]:
        return [f"{name}{REMOTE_SUFFIX}"]

    def env(self, run: "PointState", name: str, env: dict[str, str] | None
            ) -> dict[str, str] | None:
        library = run.found.get("layers_preload")
        return env if library is None else _ahead(env, library)

    def section(self, run: "PointState", result: "RunResult") -> None:
        if run.cfg.graph is not None:  # per edge and chain: graph/layers.py's attach
            return
        for agent in run.runs:  # the rows an agent on a real host sent back
            name = agent.name or agent.role
            sent = run.workdir / f"{name}{REMOTE_SUFFIX}"
            if _remote(run, agent.role) and sent.is_file():
                sent.replace(run.workdir / FOLDER / f"{name}.csv")
        reports = [(r.name or r.role, r.report) for r in run.runs if r.report is not None]
        links: Link = {}
        if run.emulated is not None:
            logs = run.emulated.layer_logs()
            links = read_many([p for wire in logs[:1] for p in wire.values()], run_id=run.tag)
            cut = sum(truncated(report) for report in run.emulated.reports[:1])
            if not links and run.emulated.tunnel is not None:
                result["warnings"].append(make_warning(
                    "layers-incomplete", "--layers: the link carries WireGuard's encrypted "
                    "packets (--secure wireguard): the link emulator sees no mwperf message in "
                    "them, so the kernel and network layer (the tunnel included) is not split "
                    "into sender kernel, link and receiver kernel",
                    "the same point without --secure wireguard splits it; the difference of "
                    "the two is the tunnel's"))
            elif not links or cut:
                result["warnings"].append(make_warning(
                    "layers-incomplete", "--layers: the link emulator's log of each message's "
                    f"passage is {'incomplete' if cut else 'empty'}: the kernel and network "
                    "layer is not split into sender kernel, link and receiver kernel"
                    + (" for every message" if not cut else f" ({cut} packets not logged)"),
                    "--link-backend userspace stamps each message; netem cannot"))
        apart = _apart(run)
        layers, warnings = build(run.cfg.mode, run.workdir / FOLDER, reports, result,
                                 run.found.get("layers_missing"), {} if apart else links,
                                 run.cfg.transport, apart)
        if apart and links and layers["method"] == "ld_preload":
            layers["notes"].append("the link emulator's stamps are on this machine's clock, "
                                   "one side's are not: kernel and network is not split into "
                                   "sender kernel, link and receiver kernel")
        result["layers"] = layers  # type: ignore[typeddict-unknown-key]
        result["warnings"] += warnings

    def files(self, run: "PointState") -> dict[str, Any]:
        return {"layers_dir": run.workdir / FOLDER}


def _remote(run: "PointState", role: str) -> bool:
    return run.real is not None and run.real.is_remote(role)


def _clock(run: "PointState", role: str) -> tuple[object, str]:
    """Which clock ``role``'s stamps are on (agents on one machine share CLOCK_MONOTONIC), and
    where that is, for people."""
    if run.real is not None:
        host = run.real.host_of(role)
        return host, "this machine" if not run.real.is_remote(role) else f"host '{host}'"
    shift = test_clock_of(run.cfg, role)
    return shift, "this machine's clock" if shift is None else "a clock shifted by --test-clock"


def _apart(run: "PointState") -> dict[str, str]:
    """Each receiving agent on another clock than the sender (ping, pub): name -> where the two
    clocks are (for the notes); empty when all share one."""
    server, sender = ROLES[run.cfg.mode]
    mine, here = _clock(run, sender)
    theirs, there = _clock(run, server)
    if theirs == mine:
        return {}
    return {agent.name or agent.role: f"{sender} on {here}, {agent.name or agent.role} on "
            f"{there}" for agent in run.runs if agent.role == server}


def _ahead(env: dict[str, str] | None, library: str) -> dict[str, str]:
    """``env`` with ``library`` preloaded ahead of what it preloads already (the allocation
    counter's, a user's)."""
    existing = (env or {}).get("LD_PRELOAD")
    return {**(env or {}), "LD_PRELOAD": f"{library}:{existing}" if existing else library}


def _agent_name(argv: list[str]) -> str | None:
    """The agent's name: its report's file name (``--json <workdir>/<name>.json``)."""
    if "--json" in argv:
        at = argv.index("--json") + 1
        if at < len(argv):
            return Path(argv[at]).stem
    return None


def build(mode: str, folder: Path, reports: list[tuple[str, dict[str, Any]]],
          result: "RunResult", missing: str | None, links: Link, transport: str = "",
          apart: dict[str, str] | None = None) -> tuple[dict[str, Any], list[Any]]:
    """The ``layers`` section and its warnings from the rows in ``folder`` and the agents'
    ``reports`` (name, report); ``apart``: the receivers on another clock than the sender
    (name -> where both clocks are), joined as layers_clocks.py says."""
    apart = apart or {}
    if missing is not None:
        why = f"{LAYERS_LIBRARY} is not available: {missing}"
        return none(why), [make_warning("layers-unavailable", f"--layers: {why}",
                                        "build it with 'make build'" if "missing" in missing
                                        else None)]
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
        syncs = {name: sync_of(report) for name, report in reports}
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
    unsynced: list[str] = []  # one-way receivers on another clock with no estimate of it
    for path, rows in zip(receivers, received):
        sync = syncs.get(path.stem) if path.stem in apart else None
        if path.stem in apart and mode != "roundtrip" and sync is None:
            unsynced.append(apart[path.stem])
        for key, theirs in rows.items():
            mine = sender.get(key)
            if mine is None:
                continue
            if mode == "roundtrip":
                if mine.take is None:
                    continue  # the echo never came back: lost, not measured
                if path.stem in apart:
                    theirs = aligned_pong(mine, theirs)
                chain = round_trip(mine, theirs, links)
            else:
                if path.stem in apart:
                    theirs = on_pub_clock(theirs, sync) if sync else aligned_sub(mine, theirs)
                chain = oneway_chain(mine, theirs, links)
            if {sender_role, path.stem} & full and _syscall_unseen(chain):
                held_back += 1  # its agent's ring was full: unseen is no finding
                continue
            chains.append(chain)
            per_topic.setdefault(names.get(key[0], f"topic {key[0]}"), []).append(chain)
    rows = [r for side in received for r in side.values()]
    layers = section(mode, chains, why_unseen(list(sender.values()), rows, transport), agents,
                     byte_stream_notes(rows),
                     {"events_dropped": held_back}, per_topic)
    warnings += _across(layers, mode, apart, unsynced,
                        [syncs[name] for name in apart if syncs.get(name)])
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


def _across(layers: dict[str, Any], mode: str, apart: dict[str, str], unsynced: list[str],
            syncs: list[dict[str, Any]]) -> list[Any]:
    """The section's figures that depend on how two clocks meet, withheld or bounded
    (layers_clocks.py); the warning when one way has no estimate to meet them with."""
    if not apart or layers["method"] != "ld_preload":
        return []
    where = "; ".join(sorted(set(apart.values())))
    if mode == "roundtrip":
        why = two_clocks_why(where)
        if layers.get("directions"):
            layers["directions"] = {d: unknown_across(lst, why)
                                    for d, lst in layers["directions"].items()}
        layers["notes"].append(f"two clocks ({where}): each layer is the sum of both directions "
                               "on each agent's own clock; kernel and network is both "
                               "directions' sum, clock-free, and not known per direction")
        return []
    if unsynced:
        why = (f"two clocks ({'; '.join(unsynced)}) and no estimate of their offset "
               "(--clock-sync found none)")
        layers["layers"] = unknown_across(layers["layers"], why)
        layers["total"] = figures([])
        for topic in layers.get("per_topic") or []:
            topic["layers"] = unknown_across(topic["layers"], why)
            topic["total"] = figures([])
        layers["notes"].append(f"{why}: kernel and network and the total are not known; the "
                               "other layers are each on one agent's clock")
        return [make_warning("layers-incomplete", f"--layers: {why}: the kernel and network "
                             "layer is not known", "see the clock_sync section of the result")]
    bound = max((int(s["error_bound_ns"]) for s in syncs if s.get("error_bound_ns") is not None),
                default=0)
    layers["clock_bound_ns"] = bound
    layers["notes"].append(f"two clocks ({where}): the sub's stamps are put on the pub's clock "
                           f"with the clock-sync estimate; kernel and network (and the total) "
                           f"are within ±{bound / 1e3:.1f} µs of the truth")
    return []


def _rows(folder: Path, name: str) -> dict[tuple[int, int], Row]:
    path = folder / f"{name}.csv"
    return read_rows(path) if path.is_file() else {}


def _topic_names(result: "RunResult") -> dict[int, str]:
    return {i: t.get("name") or f"topic {i}"  # type: ignore[misc]
            for i, t in enumerate(result.get("per_topic") or [])}


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in counts.items() if v) or "none"

