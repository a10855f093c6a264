"""The README's commands install what they need; CI installs nothing more (lint tools aside).

A green CI must mean the README works: if .ci/run installed a package that `make test` does not,
the tests needing it would pass in CI and fail for a user who runs `make test` (issue 22: the
Foxglove bridge tests failed on a fresh machine because only CI installed the `bridges` extra).
"""

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_TOOLS = {"ruff", "mypy"}


def pip_installs(script: str) -> list[str]:
    """What the `pip install` commands of a shell script install (flags and redirections dropped)."""
    found = []
    for line in script.splitlines():
        if line.lstrip().startswith("#") or "pip install" not in line:
            continue
        words = shlex.split(line.split("pip install", 1)[1].split("<")[0].split("#")[0])
        found += [w for w in words if not w.startswith("-")]
    return found


def test_ci_installs_only_lint_tools_itself():
    installs = pip_installs((ROOT / ".ci" / "run").read_text())
    assert set(installs) <= LINT_TOOLS, (
        f".ci/run installs {sorted(set(installs) - LINT_TOOLS)} itself: make test must install "
        "them (Makefile EXTRAS), or CI passes where the README's command fails")


def test_make_test_installs_every_extra():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    # the sub-make's view: run `make -n setup` with the target's EXTRAS as make expands them
    out = subprocess.run(["make", "-n", "-C", str(ROOT), "test"], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"python-deps\.py (\S*)", out)
    assert m, out
    assert set(m.group(1).split(",")) == set(extras), (
        f"make test installs extras {m.group(1)!r}; pyproject.toml has {sorted(extras)}")


def test_make_run_installs_the_bridges_its_suite_uses():
    out = subprocess.run(["make", "-n", "-C", str(ROOT), "run"], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"python-deps\.py (\S*)", out)
    assert m and "bridges" in m.group(1).split(","), out


def test_the_dependency_check_names_what_is_missing(tmp_path):
    script = ROOT / "scripts" / "python-deps.py"
    done = subprocess.run([sys.executable, str(script), "no-such-extra"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 2 and "no-such-extra" in done.stderr and "known:" in done.stderr


def test_pip_installs_parser():
    assert pip_installs("python3 -m pip install -q ruff mypy </dev/null  # lint\n"
                        "# pip install foo\n") == ["ruff", "mypy"]
    assert pip_installs("pip install -q -e '.[test,bridges]' ruff\n") == [".[test,bridges]",
                                                                          "ruff"]


def test_make_setup_installs_the_ros2_distributions():
    """make setup (so make run and make test) installs the managed ROS 2 environments: the
    end-to-end tests against real rclpy nodes need them and fail, not skip, without them."""
    out = subprocess.run(["make", "-n", "-C", str(ROOT), "setup"], capture_output=True,
                         text=True, check=True).stdout
    assert "-m mwperf.ros2.install kilted jazzy" in out, out
