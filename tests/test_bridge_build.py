"""bridges/build.py: the zenoh bridge is built again only when its sources changed. A binary
mwperf built carries the digest of its sources beside it, so a fresh clone (every file new, the
sources the same) uses the built one; one without the digest (``make bridges``) is judged by the
files' times. A stand-in cargo counts the builds."""

import os
import stat
from pathlib import Path

import pytest

from mwperf.bridges import build

FAKE_CARGO = """#!/bin/sh
mkdir -p "$CARGO_TARGET_DIR/release"
printf '#!/bin/sh\\n' > "$CARGO_TARGET_DIR/release/mwperf-bridge-zenoh"
chmod +x "$CARGO_TARGET_DIR/release/mwperf-bridge-zenoh"
echo built >> "$CARGO_TARGET_DIR/builds"
"""


@pytest.fixture
def target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cargo = tmp_path / "cargo"
    cargo.write_text(FAKE_CARGO)
    cargo.chmod(cargo.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("MWPERF_CARGO", str(cargo))
    monkeypatch.setenv("MWPERF_BRIDGE_TARGET_DIR", str(tmp_path / "target"))
    monkeypatch.delenv("MWPERF_BRIDGE_ZENOH", raising=False)
    monkeypatch.setattr(build, "missing_tools", lambda: [])
    monkeypatch.setattr(build, "_failed", {})
    return tmp_path / "target"


def builds(target: Path) -> int:
    return len((target / "builds").read_text().split())


def test_built_once_then_reused_whatever_the_files_times(target: Path) -> None:
    path = build.ensure_zenoh_bridge("zenoh-ros2dds")
    assert builds(target) == 1
    assert build.stamp_path(path).read_text().strip() == build.sources_digest()
    os.utime(path, (1, 1))  # older than every source, as in a fresh clone of the same sources
    assert build.ensure_zenoh_bridge("zenoh-ros2dds") == path
    assert builds(target) == 1


def test_other_sources_or_no_digest_and_older_than_the_sources_build_again(target: Path) -> None:
    path = build.ensure_zenoh_bridge("zenoh-ros2dds")
    build.stamp_path(path).write_text("0" * 64 + "\n")  # built from other sources
    build.ensure_zenoh_bridge("zenoh-ros2dds")
    assert builds(target) == 2
    build.stamp_path(path).unlink()  # built by `make bridges`: the files' times decide
    build.ensure_zenoh_bridge("zenoh-ros2dds")
    assert builds(target) == 2  # newer than its sources
    os.utime(path, (1, 1))
    build.ensure_zenoh_bridge("zenoh-ros2dds")
    assert builds(target) == 3
