"""Build hook of the wheel: it carries the Rust binaries (docs/design-notes.md, "Packaging").

``pip install .`` / ``pipx install .`` / ``python -m build`` run ``cargo build --release`` — the
very command ``make build`` runs, so a warm target folder (``$CARGO_TARGET_DIR`` or target/)
makes it a no-op — and put mwperf-agent, mwperf-linkem, libmwperf_alloc.so and libmwperf_layers.so into the package
as ``mwperf/bin/``, with the result schema as ``mwperf/data/result.v2.json``. The wheel is then
platform-specific (``py3-none-<platform>``). An editable install (``pip install -e .``) builds
nothing: the package then finds the checkout's own build (see python/mwperf/agent.py).
All metadata lives in pyproject.toml.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BINARIES = ("mwperf-agent", "mwperf-linkem", "libmwperf_alloc.so", "libmwperf_layers.so")
"""what the control plane runs: the agent, the userspace link emulator, the allocation counter,
the system-call interposer of --layers"""
SCHEMA = ROOT / "schema" / "result.v2.json"


def target_dir() -> Path:
    given = os.environ.get("CARGO_TARGET_DIR")
    root = Path(given) if given else ROOT / "target"
    return root if root.is_absolute() else ROOT / root


class BuildWithAgent(build_py):
    """build_py, then the Rust binaries and the schema into the package (not when editable)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        if shutil.which("cargo") is None:
            sys.exit("mwperf: building the wheel needs cargo (Rust): https://rustup.rs")
        command = ["cargo", "build", "--release"]  # as 'make build': same features, same cache
        print("mwperf: " + " ".join(command), flush=True)
        subprocess.run(command, cwd=ROOT, check=True)
        binaries = Path(self.build_lib) / "mwperf" / "bin"
        binaries.mkdir(parents=True, exist_ok=True)
        for name in BINARIES:
            shutil.copy2(target_dir() / "release" / name, binaries / name)
        data = Path(self.build_lib) / "mwperf" / "data"
        data.mkdir(parents=True, exist_ok=True)
        shutil.copy2(SCHEMA, data / SCHEMA.name)


class PlatformWheel(bdist_wheel):
    """A wheel for this platform (it holds native binaries) but any Python 3."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        return "py3", "none", platform


class BinaryDistribution(Distribution):
    """Installed as platform code (platlib), as a package with native parts is."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildWithAgent, "bdist_wheel": PlatformWheel},
      distclass=BinaryDistribution)
