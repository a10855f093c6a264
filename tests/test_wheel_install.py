"""`pip install .` (not editable) works from any directory: the wheel carries the agent, the
link emulator, the allocation counter, the schema and the scenarios (setup.py). Built with the
same `cargo build --release` as `make build`, so a warm target folder ($CARGO_TARGET_DIR)
makes the build a matter of seconds; installed into a fresh virtual environment (no access to
this checkout's packages) and run from an empty directory with no hint where the checkout is."""

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.agent,  # builds it (warm: seconds), so not in 'make test-fast'
              pytest.mark.skipif(shutil.which("cargo") is None and not os.environ.get("CI"),
                                 reason="building the wheel needs cargo")]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin/ folder of a fresh venv with the wheel built from this checkout installed."""
    where = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(where / "dist"), str(REPO)], check=True, timeout=900)
    (wheel,) = (where / "dist").glob("mwperf-*.whl")
    assert wheel.name.endswith("-py3-none-linux_x86_64.whl") or "-py3-none-" in wheel.name
    venv.create(where / "venv", with_pip=True)
    bin_dir = where / "venv" / "bin"
    # without conftest's PYTHONPATH: pip would take this checkout's python/ (with its
    # egg-info) for an installed mwperf and skip the wheel
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q",
                    "--disable-pip-version-check", str(wheel)], check=True, timeout=600,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    return bin_dir


def clean_env(bin_dir: Path) -> dict[str, str]:
    """No variable that points at this checkout or its build."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MWPERF_AGENT", "MWPERF_LINKEM", "CARGO_TARGET_DIR", "PYTHONPATH")}
    env["PATH"] = f"{bin_dir}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    return env


def test_the_installed_package_carries_its_binaries_and_data(installed: Path) -> None:
    done = subprocess.run([str(installed / "python"), "-c",
                           "import mwperf, mwperf.schema as s, mwperf.agent as a;"
                           "print(mwperf.__file__); print(s.SCHEMA_PATH);"
                           "print(a.find_agent().path)"],
                          capture_output=True, text=True, cwd="/", env=clean_env(installed),
                          check=True, timeout=60)
    package, schema, agent = done.stdout.split()
    venv_root = str(installed.parent)
    assert all(p.startswith(venv_root) for p in (package, schema, agent)), done.stdout
    assert Path(agent).name == "mwperf-agent"
    for sibling in ("libmwperf_alloc.so", "libmwperf_layers.so", "mwperf-linkem"):
        assert (Path(agent).parent / sibling).is_file(), sibling


def test_mwperf_run_from_an_empty_directory(installed: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    done = subprocess.run([str(installed / "mwperf"), "run", "--transport", "udp", "--duration",
                           "1s"], capture_output=True, text=True, cwd=empty,
                          env=clean_env(installed), timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "udp" in done.stdout
    (result,) = (empty / "results").glob("*/result.json")
    assert '"status": "complete"' in result.read_text()
    scenarios = subprocess.run([str(installed / "mwperf"), "run", "default", "--dry-run"],
                               capture_output=True, text=True, cwd=empty,
                               env=clean_env(installed), timeout=60, check=False)
    assert scenarios.returncode == 0, scenarios.stderr  # the scenarios are package data
