"""The doctor's kernel and machine checks: root, network namespaces, netem, TUN, cgroups,
real-time priority, clock source, CPU frequency governor.

What can only be known by trying (a namespace, a netem qdisc, SCHED_FIFO) is tried, in a
namespace of the doctor's own lease (so the host's devices are never touched) or in a child.
Paths and commands are module constants, so the tests can point them at a missing thing.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..emulation import cgroups
from ..errors import RunError
from ..leases import Lease
from .finding import Finding

TUN_DEVICE = Path("/dev/net/tun")
CLOCKSOURCE = Path("/sys/devices/system/clocksource/clocksource0")
CPUS = Path("/sys/devices/system/cpu")
GOOD_CLOCKSOURCES = ("tsc", "arch_sys_counter")
"""counters read in user space (vDSO): timestamps cost tens of ns, not a system call"""
COMMAND_TIMEOUT_S = 10.0
NO_ROOT = "needs root: run 'sudo mwperf doctor'"


def is_root() -> bool:
    return os.geteuid() == 0


def check_root() -> list[Finding]:
    if is_root():
        return [Finding("root", "ok", "running as root (emulated links and CPU limits possible)")]
    return [Finding("root", "missing", "not root: --link, --cpu-quota and --rt-priority are "
                    "refused; loopback runs work", "run mwperf as root (sudo) for those")]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
                          check=False)


def _last(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def check_netns_and_netem() -> list[Finding]:
    """Create a namespace (leased), then a netem qdisc on its loopback."""
    if shutil.which("ip") is None or shutil.which("tc") is None:
        hint = "apt-get install iproute2"
        return [Finding("netns", "missing", "'ip' or 'tc' not found", hint),
                Finding("netem", "missing", "'tc' not found", hint)]
    if not is_root():
        return [Finding("netns", "missing", "cannot be tried without root", NO_ROOT),
                Finding("netem", "missing", "cannot be tried without root", NO_ROOT)]
    with Lease.take("doctor") as lease:
        name = f"{lease.prefix}-doctor"
        lease.add("netns", name)
        done = _run("ip", "netns", "add", name)
        if done.returncode != 0:
            return [Finding("netns", "missing", f"'ip netns add' failed: {_last(done.stderr)}",
                            "the kernel needs CONFIG_NET_NS; in a container, run it with "
                            "--privileged or CAP_SYS_ADMIN"),
                    Finding("netem", "missing", "not tried (no namespace)", None)]
        netns = Finding("netns", "ok", "'ip netns add' works")
        done = _run("ip", "netns", "exec", name, "tc", "qdisc", "add", "dev", "lo", "root",
                    "netem", "delay", "1ms")
        if done.returncode == 0:
            return [netns, Finding("netem", "ok", "the kernel's netem qdisc works")]
        return [netns, Finding(
            "netem", "warn", f"no netem qdisc ({_last(done.stderr)}); links use mwperf's "
            "userspace emulator", f"modprobe sch_netem (Debian/Ubuntu: apt-get install "
            f"linux-modules-extra-{os.uname().release} if the module is missing)")]


def check_tun() -> list[Finding]:
    try:
        handle = os.open(TUN_DEVICE, os.O_RDWR)
    except FileNotFoundError:
        return [Finding("tun", "missing", f"{TUN_DEVICE} does not exist (the userspace link "
                        "emulator needs it)", "modprobe tun, or: mkdir -p /dev/net && "
                        "mknod /dev/net/tun c 10 200")]
    except OSError as exc:
        return [Finding("tun", "missing", f"cannot open {TUN_DEVICE}: {exc.strerror}",
                        NO_ROOT if not is_root() else "check the device's permissions")]
    os.close(handle)
    return [Finding("tun", "ok", f"{TUN_DEVICE} opens")]


def check_cgroups() -> list[Finding]:
    try:
        found = cgroups.hierarchies()
    except RunError:  # read by mwperf-agent (one implementation with its supervisor)
        return [Finding("cgroups", "warn", "not checked: mwperf-agent reads the cgroup "
                        "hierarchies and did not answer (see its own line)", "make build")]
    by_version = {version: [c for h in found if h.version == version for c in h.controllers]
                  for version in (1, 2) if any(h.version == version for h in found)}
    described = "; ".join(f"v{version}: {', '.join(names) or 'no controllers'}"
                          for version, names in by_version.items())
    cpu = cgroups.cpu_hierarchy()
    if cpu is None:
        return [Finding("cgroups", "missing", f"no hierarchy with the cpu controller "
                        f"({described or 'no cgroup mounted'}); --cpu-quota is refused",
                        "mount -t cgroup2 none /sys/fs/cgroup (or cgroup v1: mount -t cgroup "
                        "-o cpu,cpuacct none /sys/fs/cgroup/cpu)")]
    detail = f"cpu controller in cgroup v{cpu.version} at {cpu.mount} ({described})"
    writable = os.access(cpu.mount, os.W_OK)
    if not writable:
        return [Finding("cgroups", "warn", detail + "; not writable by this user",
                        "run mwperf as root for --cpu-quota")]
    return [Finding("cgroups", "ok", detail)]


def check_rt_priority() -> list[Finding]:
    """Try SCHED_FIFO priority 1 in a child."""
    probe = "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))"
    done = _run(sys.executable, "-c", probe)
    try:
        found = cgroups.hierarchies()
    except RunError:  # no agent binary: check_cgroups says so
        found = []
    rt_groups = any((h.mount / "cpu.rt_runtime_us").exists() for h in found)
    if done.returncode == 0:
        note = (" (RT group scheduling: with --cpu-quota the quota becomes the real-time budget)"
                if rt_groups else "")
        return [Finding("rt-priority", "ok", "SCHED_FIFO permitted" + note)]
    return [Finding("rt-priority", "missing", "SCHED_FIFO refused: --rt-priority runs will "
                    "warn and run SCHED_OTHER", "run as root, or give the user an rtprio "
                    "limit (/etc/security/limits.conf: '@user - rtprio 99')")]


def check_clocksource() -> list[Finding]:
    try:
        current = (CLOCKSOURCE / "current_clocksource").read_text().strip()
        available = (CLOCKSOURCE / "available_clocksource").read_text().split()
    except OSError:
        return [Finding("clocksource", "warn", "unknown (no sysfs clocksource)", None)]
    if current in GOOD_CLOCKSOURCES:
        return [Finding("clocksource", "ok", f"{current} (read in user space)")]
    better = [name for name in available if name in GOOD_CLOCKSOURCES]
    hint = (f"echo {better[0]} > {CLOCKSOURCE / 'current_clocksource'}" if better else
            "none better is available on this machine")
    return [Finding("clocksource", "warn", f"{current}: every timestamp may cost a system call "
                    f"(available: {', '.join(available)})", hint)]


def check_governor() -> list[Finding]:
    governors = sorted({path.read_text().strip() for path in
                        CPUS.glob("cpu[0-9]*/cpufreq/scaling_governor")})
    if not governors:
        return [Finding("cpu-governor", "ok", "no cpufreq control (fixed clock or a VM)")]
    if governors == ["performance"]:
        return [Finding("cpu-governor", "ok", "performance")]
    return [Finding("cpu-governor", "warn", f"{', '.join(governors)}: clock changes add "
                    "latency noise", "cpupower frequency-set -g performance (apt-get install "
                    "linux-cpupower)")]
