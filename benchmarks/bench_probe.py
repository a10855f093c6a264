"""The ROS 1 probe's cost while it listens to seed 000's load (issue 15).

A real ROS 1 system: rosmaster + Debian's 'rosbag play' of 'mwperf bag example' (LaserScan ~4 KB
at 40 Hz + Image 308 KB at 30 Hz, 9 MB/s) looping; 'mwperf probe --ros1' for DURATION on both
topics, REPEATS times. Printed per repeat: the probe's CPU (its subscriber process, wait4, as the
probe reports it) and, as the same-run reference, 'rosbag play's CPU over the same window (from
/proc/PID/stat), and the rates the probe measured. Usage: python3 benchmarks/bench_probe.py [DURATION_S] [REPEATS]
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import xmlrpc.client
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """CPU seconds of PID and its descendants ('rosbag' is a wrapper running 'rosbag play')."""
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK)
    family, grew = {pid}, True
    while grew:
        more = {p for p, (ppid, _) in stats.items() if ppid in family} - family
        family |= more
        grew = bool(more)
    return sum(stats[p][1] for p in family if p in stats)


def main() -> None:
    duration = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    work = Path(tempfile.mkdtemp(prefix="bench-probe-"))
    subprocess.run([sys.executable, "-m", "mwperf", "bag", "example", str(work), "--duration",
                    "20s"], check=True, stdout=subprocess.DEVNULL)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    uri = f"http://127.0.0.1:{port}"
    env = dict(os.environ, ROS_MASTER_URI=uri)
    master = subprocess.Popen(["rosmaster", "--core", "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    play = None
    try:
        time.sleep(1.5)
        play = subprocess.Popen(["rosbag", "play", "--loop", "--quiet", str(work / "example.bag")],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while len(xmlrpc.client.ServerProxy(uri).getSystemState("/b")[2][0]) < 2:
            time.sleep(0.1)
        time.sleep(1)
        probe_pct, play_pct = [], []
        for k in range(repeats):
            before, t0 = cpu_s(play.pid), time.monotonic()
            done = subprocess.run([sys.executable, "-m", "mwperf", "probe", "--ros1", uri,
                                   "/scan", "/camera/image_raw", "--duration", f"{duration}s",
                                   "--json"], capture_output=True, text=True, check=True)
            play_cpu, wall = cpu_s(play.pid) - before, time.monotonic() - t0
            doc = json.loads(done.stdout)
            rates = {t["topic"]: round(t["rate_hz"], 2) for t in doc["topics"]}
            probe_pct.append(doc["probe_cpu_percent"])
            play_pct.append(100 * play_cpu / wall)
            print(f"repeat {k}: probe {doc['probe_cpu_percent']:.1f} % of one core, rosbag play "
                  f"{play_pct[-1]:.1f} %, rates {rates}")
        print(f"median: probe {statistics.median(probe_pct):.1f} %, rosbag play "
              f"{statistics.median(play_pct):.1f} %, ratio "
              f"{statistics.median(probe_pct) / statistics.median(play_pct):.2f}")
    finally:
        for proc in (play, master):
            if proc:
                proc.terminate()
                proc.wait(timeout=10)
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    main()
