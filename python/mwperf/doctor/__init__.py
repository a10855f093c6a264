"""``mwperf doctor``: what this machine can and cannot do for mwperf, each with a fix.

Every check yields findings: a name, ok / missing / warn, what was found, a fix hint when it is
not ok, and whether the default suite (``mwperf run default``) needs it. The exit code is 0
when everything the default suite needs is there, 1 otherwise; emulated links, CPU limits and
the benchmarks' reference tools are reported but not needed for that. The checks that need
probing (a network namespace, a qdisc) create their resources in a lease like a run does.
"""

from collections.abc import Callable

from . import leftovers, programs, ros2, system
from .finding import Finding

__all__ = ["Finding", "checks", "examine", "exit_code", "render"]

Check = Callable[[], list[Finding]]


def checks() -> list[Check]:
    """Every check, in report order."""
    return [leftovers.check_leftovers, system.check_root, system.check_netns_and_netem,
            system.check_tun, system.check_cgroups, system.check_rt_priority,
            system.check_clocksource, system.check_governor, programs.check_agent_and_transports,
            programs.check_tools, ros2.check_ros2, _bridges]


def _bridges() -> list[Finding]:
    from ..bridges.doctor import check_bridges  # the bridges import the daemons, which import us
    return check_bridges()


def examine(run: list[Check] | None = None) -> list[Finding]:
    """Run the checks; a check that fails unexpectedly becomes a 'missing' finding, not a crash."""
    findings: list[Finding] = []
    for check in run if run is not None else checks():
        try:
            findings += check()
        except Exception as exc:  # a probe broke: report it as such and go on
            findings.append(Finding(check.__name__.removeprefix("check_"), "missing",
                                    f"the check itself failed: {type(exc).__name__}: {exc}",
                                    "please report this with the output of 'mwperf doctor'"))
    return findings


def render(findings: list[Finding]) -> str:
    """One line per finding (status, name, detail), the hint indented below it."""
    width = max((len(f.name) for f in findings), default=0)
    lines = []
    for finding in findings:
        mark = f"{finding.status:<7}"
        needed = " (needed)" if finding.blocking else ""
        lines.append(f"{mark} {finding.name.ljust(width)}  {finding.detail}{needed}")
        if finding.hint and finding.status != "ok":
            lines.append(f"{'':7} {'':{width}}  fix: {finding.hint}")
    blocking = [f.name for f in findings if f.blocking]
    lines.append("")
    lines.append("everything the default suite needs is here" if not blocking else
                 f"the default suite cannot run: missing {', '.join(blocking)}")
    return "\n".join(lines) + "\n"


def exit_code(findings: list[Finding]) -> int:
    """0 when the default suite can run, 1 otherwise."""
    return 1 if any(f.blocking for f in findings) else 0
