"""Plots: CPU (% of one core over the process's wall time) and peak RSS of every process of
each point — the agents and the daemons a transport needed (broker, master, router, relay),
because a broker's cost is real cost. Points are numbered as in the summary table (#)."""

from collections.abc import Sequence

from ..sizes import format_bytes
from .data import Point, Run
from .labels import describe
from .section import Section
from .svg import Axis, Chart, colour

MAX_POINTS = 40
MAX_TICKS = 16


def processes(point: Point) -> list[tuple[str, float | None, int | None]]:
    """(name, CPU %, peak RSS KiB) of each agent and daemon of ``point``."""
    found = []
    for role, proc in point.processes.items():
        cpu = (proc.get("cpu_user_s") or 0) + (proc.get("cpu_sys_s") or 0)
        wall = proc.get("wall_s")
        found.append((str(role), 100 * cpu / wall if wall else None, proc.get("max_rss_kib")))
    for daemon in point.daemons:
        cpu = (daemon.get("cpu_user_s") or 0) + (daemon.get("cpu_sys_s") or 0)
        wall = daemon.get("wall_s")
        found.append((f"daemon {daemon.get('name')}", 100 * cpu / wall if wall else None,
                      daemon.get("peak_rss_kib")))
    return found


def section(runs: Sequence[Run], numbers: dict[str, int]) -> Section:
    """The CPU/RSS section; ``numbers``: point id -> its number (#) in the summary table."""
    out = Section("resources", "CPU and memory per process")
    measured = [p for run in runs for p in run.points if processes(p)]
    points = measured[:MAX_POINTS]
    if not points:
        return out
    if len(measured) > MAX_POINTS:
        out.note = f"The first {MAX_POINTS} of {len(measured)} points are drawn."
    names: list[str] = []
    for point in points:
        names += [n for n, _, _ in processes(point) if n not in names]
    width = 0.8 / len(names)
    every = -(-len(points) // MAX_TICKS)  # label every n-th point when there are many
    ticks = [(float(numbers[p.point_id]), f"#{numbers[p.point_id]}") for p in points[::every]]
    cpu = Chart("CPU per process (% of one core)", Axis("point (#, as in the summary table)",
                                                         ticks=ticks),
                Axis("CPU (%)"), "cpu")
    rss = Chart("Peak RSS per process", Axis("point (#, as in the summary table)", ticks=ticks),
                Axis("peak RSS (MiB)"), "rss")
    for point in points:
        number = numbers[point.point_id]
        for name, cpu_pct, rss_kib in processes(point):
            k = names.index(name)
            x = number - 0.4 + width * (k + 0.5)
            col = colour(k)
            tip = f"#{number} {describe(point)}\n{name}"
            if cpu_pct is not None:
                cpu.bar(x, width, cpu_pct, col, f"{tip}: CPU {cpu_pct:.3g} %")
            if rss_kib is not None:
                rss.bar(x, width, rss_kib / 1024, col,
                        f"{tip}: peak RSS {format_bytes(int(rss_kib) * 1024)}")
    for k, name in enumerate(names):
        cpu.legend(name, colour(k))
        rss.legend(name, colour(k))
    out.add(cpu, rss)
    return out
