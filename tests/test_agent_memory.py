"""The memory an agent or daemon reports is its own, not the control plane's.

getrusage's ru_maxrss is carried over fork and exec: an agent started by a Python process that
once held 400 MB would report >= 400 MB. The control plane here holds a 400 MB ballast while it
runs the point; every agent and daemon must report a peak far below it (VmHWM of its own pid).
"""

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import read_saved

pytestmark = pytest.mark.agent

BALLAST_MB = 400
CONTROL_PLANE = """
import re, runpy, sys
ballast = bytearray(b"\\x01") * ({mb} * 1000 * 1000)  # touched: all of it is resident
hwm = int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1))
print(f"control-plane VmHWM {{hwm}}", file=sys.stderr)
sys.argv = ["mwperf", *sys.argv[1:]]
runpy.run_module("mwperf.cli", run_name="__main__")
"""


def run_with_ballast(env: dict[str, str], tmp_path: Path, *args: str) -> tuple[dict, int]:
    out = tmp_path / "result.json"
    done = subprocess.run([sys.executable, "-c", CONTROL_PLANE.format(mb=BALLAST_MB), "run",
                           *args, "--duration", "0.5s", "--json-out", str(out),
                           "--results", str(tmp_path / "r")],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    parent_hwm = int(done.stderr.split("control-plane VmHWM ")[1].split()[0])
    return read_saved(out), parent_hwm


@pytest.mark.parametrize("transport", ["udp", "mqtt"])
def test_agents_and_daemons_report_their_own_peak(real_env: dict[str, str], tmp_path: Path,
                                                  transport: str) -> None:
    result, parent_kib = run_with_ballast(real_env, tmp_path, "--transport", transport)
    assert parent_kib > BALLAST_MB * 1000 * 0.9  # the ballast really is resident in the parent
    for agent in result["agents"]:
        process = agent["process"]
        assert process["rss_source"] == "VmHWM"
        assert 0 < process["max_rss_kib"] < 100 * 1024, (agent["role"], process)
        split = [process[k] for k in ("rss_anon_kib", "rss_file_kib", "rss_shmem_kib")]
        assert all(v is not None for v in split)
        assert sum(split) <= process["max_rss_kib"] + 64  # now <= peak (4 KiB page rounding)
    for daemon in result["daemons"]:
        assert 0 < daemon["peak_rss_kib"] < 100 * 1024, daemon
        assert daemon["rss_anon_kib"] <= daemon["peak_rss_kib"]
    assert (transport == "mqtt") == bool(result["daemons"])
