"""Bridges mwperf compiles itself, on demand: mwperf-bridge-zenoh (zenoh-plugin-ros2dds in a
zenoh runtime, crates/mwperf-bridge-zenoh). It builds Cyclone DDS from source through
``cyclors`` (cmake; bindgen needs libclang), so it is not part of the workspace build: ``make
bridges`` builds it, or the first run that needs it does, with one line while it builds.

Where it is looked for: ``$MWPERF_BRIDGE_ZENOH`` (a path), else the release folder of
``$MWPERF_BRIDGE_TARGET_DIR``, ``$CARGO_TARGET_DIR`` or target/ in the checkout (where the build
puts it). It is built again when its sources change: the digest of those it was built from is
kept beside it (``<binary>.sources``). ``$MWPERF_CARGO`` replaces ``cargo`` (tests use it to
make a build fail).
"""

import hashlib
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


def _sources() -> list[Path]:
    return [MANIFEST, MANIFEST.with_name("Cargo.lock"), *sorted(MANIFEST.parent.glob("src/*.rs"))]


def sources_digest() -> str:
    """What the bridge is built from (its manifest, lock file and sources), as one hash."""
    digest = hashlib.sha256()
    for source in _sources():
        digest.update(source.relative_to(MANIFEST.parent).as_posix().encode() + b"\0")
        digest.update(source.read_bytes() if source.exists() else b"(absent)")
    return digest.hexdigest()


def stamp_path(path: Path) -> Path:
    """Where the digest of the sources a built binary came from is kept (beside it)."""
    return path.with_name(path.name + ".sources")


def _stale(path: Path) -> bool:
    """The binary was built from other sources: by their digest when mwperf built it (a fresh
    clone's files are all new, its sources the same: cargo relinked the whole zenoh stack with
    thin LTO, 7.5 min of a CI run's one worker), else by the files' times (``make bridges``)."""
    try:
        return stamp_path(path).read_text().strip() != sources_digest()
    except OSError:
        built = path.stat().st_mtime
        return any(s.stat().st_mtime > built for s in _sources() if s.exists())


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
    stamp_path(path).write_text(sources_digest() + "\n")
    return path
