"""A probe's arrival log: one line per message, ``<arrival unix time, s.fraction> <payload bytes>
<topic>`` — what ``mosquitto_sub -F '%U %l %t'`` prints for the MQTT probe and what
``mwperf-agent probe`` prints for the zenoh one — summarised per topic."""

from pathlib import Path

from .listen import ProbeResult
from .stats import summarise_topic


def summarise_log(system: str, kind: str, log: Path, start: int, end: int, cpu_s: float,
                  gap_factor: float) -> ProbeResult:
    """Every topic that carried a message between ``start`` and ``end`` (unix ns); no header
    stamps in these logs, so no age."""
    arrivals: dict[str, list[int]] = {}
    sizes: dict[str, list[int]] = {}
    for line in log.read_text(errors="replace").splitlines():
        parts = line.split(" ", 2)
        if len(parts) != 3 or "." not in parts[0] or not parts[1].isdigit():
            continue
        secs, _, frac = parts[0].partition(".")
        if not (secs.isdigit() and frac.isdigit()):
            continue
        t = int(secs) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])
        if start <= t <= end:
            arrivals.setdefault(parts[2], []).append(t)
            sizes.setdefault(parts[2], []).append(int(parts[1]))
    topics = [summarise_topic(name, kind, arrivals[name], sizes[name], [-1] * len(sizes[name]),
                              start, end, gap_factor) for name in sorted(arrivals)]
    return ProbeResult(system, start, end - start, cpu_s, gap_factor, topics)
