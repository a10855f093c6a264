"""Bridges mwperf compiles itself, on demand: mwperf-bridge-zenoh (zenoh-plugin-ros2dds in a
zenoh runtime, crates/mwperf-bridge-zenoh). It builds Cyclone DDS from source through
``cyclors`` (cmake; bindgen needs libclang), so it is not part of the workspace build: ``make
bridges`` builds it, or the first run that needs it does, with one line while it builds.

Where it is looked for: ``$MWPERF_BRIDGE_ZENOH`` (a path), else the release folder of
``$MWPERF_BRIDGE_TARGET_DIR``, ``$CARGO_TARGET_DIR`` or target/ in the checkout (where the build
puts it). ``$MWPERF_CARGO`` replaces ``cargo`` (tests use it to make a build fail).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .. import REPO_ROOT
from ..errors import RunError

BINARY = "mwperf-bridge-zenoh"
MANIFEST = REPO_ROOT / "crates" / "mwperf-bridge-zenoh" / "Cargo.toml"
MAKE_LINE = "make bridges"
NEEDS = {"cmake": "cmake", "libclang": "libclang-dev"}
"""what the build needs besides cargo: program or library -> the Debian package"""
_failed: dict[str, str] = {}
"""builds that failed in this process (a sweep does not retry one per point)"""


def target_dir() -> Path:
    given = os.environ.get("MWPERF_BRIDGE_TARGET_DIR") or os.environ.get("CARGO_TARGET_DIR")
    root = Path(given) if given else REPO_ROOT / "target"
    return root if root.is_absolute() else REPO_ROOT / root


def binary_path() -> Path:
    configured = os.environ.get("MWPERF_BRIDGE_ZENOH")
    return Path(configured) if configured else target_dir() / "release" / BINARY


def _stale(path: Path) -> bool:
    """The binary is older than its sources (a checkout changed them): cargo rebuilds."""
    sources = [MANIFEST, MANIFEST.with_name("Cargo.lock"), *MANIFEST.parent.glob("src/*.rs")]
    built = path.stat().st_mtime
    return any(source.stat().st_mtime > built for source in sources if source.exists())


def build_command() -> list[str]:
    cargo = os.environ.get("MWPERF_CARGO", "cargo")
    return ["nice", "-n", "10", cargo, "build", "--release", "--manifest-path", str(MANIFEST)]


def missing_tools() -> list[str]:
    missing = [] if shutil.which("cmake") else [NEEDS["cmake"]]
    libclang = any(Path(p).glob("libclang*.so*") for p in
                   ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib",
                    *sorted(str(d / "lib") for d in Path("/usr/lib").glob("llvm-*"))))
    return missing + ([] if libclang else [NEEDS["libclang"]])


def ensure_zenoh_bridge(name: str) -> Path:
    """The bridge binary, built now if missing (one line on stderr while it builds); RunError
    naming the bridge and the command that builds it when that fails."""
    path = binary_path()
    if path.is_file() and os.access(path, os.X_OK) and (
            os.environ.get("MWPERF_BRIDGE_ZENOH") or not _stale(path)):
        return path
    how = (f"'{MAKE_LINE}' (nice -n 10 cargo build --release --manifest-path "
           f"{MANIFEST.relative_to(REPO_ROOT)})")
    if name in _failed:
        raise RunError(_failed[name])
    if os.environ.get("MWPERF_BRIDGE_ZENOH"):
        raise RunError(f"--bridge {name}: MWPERF_BRIDGE_ZENOH={path}: no executable file there; "
                       f"unset it, or build the bridge with {how}")
    missing = missing_tools()
    if missing:
        _failed[name] = (f"--bridge {name}: its build needs {', '.join(missing)}; install "
                         f"with 'bash scripts/system-deps.sh bridges' (apt-get install "
                         f"{' '.join(missing)}), then build it with {how}")
        raise RunError(_failed[name])
    print(f"mwperf: building the {name} bridge ({BINARY}: zenoh-plugin-ros2dds and Cyclone "
          f"DDS from source, several minutes the first time) ...", file=sys.stderr, flush=True)
    env = {**os.environ, "CARGO_TARGET_DIR": str(target_dir())}
    try:
        done = subprocess.run(build_command(), stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, env=env, check=False)
    except OSError as exc:
        _failed[name] = (f"--bridge {name}: cannot run the build ({exc.strerror}); build it with "
                         f"{how}")
        raise RunError(_failed[name]) from None
    if done.returncode != 0 or not path.is_file():
        lines = [ln for ln in (done.stderr or done.stdout).splitlines() if ln.strip()]
        error = next((ln for ln in lines if ln.startswith("error")), lines[-1] if lines else "")
        _failed[name] = (f"--bridge {name}: building {BINARY} failed (exit code "
                         f"{done.returncode}: {error.strip() or 'no output'}); build it with "
                         f"{how}")
        raise RunError(_failed[name])
    return path
