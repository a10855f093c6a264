"""``mwperf bag example``: write seed 000's kind of recording with real tools, not hand-made bytes.

The ROS 1 bag is written by Debian's rosbag Python API (python3-rosbag, python3-sensor-msgs) under
the system interpreter (``ros1_writer.py`` beside this file); the ROS 2 MCAP is the same recording
converted by ``rosbags`` (ROS 1 messages to their ROS 2 types, CDR, MCAP storage). Both are
written into a hidden folder in the output folder and renamed into place only when both
succeeded, so a failure leaves nothing half-written.
"""

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import RunError, UsageError
from ..usercache import cache_dir

SYSTEM_PYTHON = "/usr/bin/python3"
DEBIAN_PACKAGES = "python3-rosbag python3-sensor-msgs"
WRITER = Path(__file__).with_name("ros1_writer.py")


@dataclass(frozen=True)
class ExampleSpec:
    """What to write: seconds, camera image size (mono8), laser ranges, jitter seed."""

    duration_s: float = 10.0
    width: int = 640
    height: int = 480
    ranges: int = 1000
    seed: int = 0
    name: str = "example"


def parse_image(text: str) -> tuple[int, int]:
    """'640x480' -> (640, 480); UsageError naming --image otherwise."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise UsageError(f"--image: expected WIDTHxHEIGHT such as 640x480, got {text!r}")
    return int(parts[0]), int(parts[1])


def write_example(out_dir: Path, spec: ExampleSpec, force: bool = False) -> tuple[Path, Path]:
    """Write OUT/NAME.bag and OUT/NAME.mcap; return their paths."""
    if spec.duration_s <= 0:
        raise UsageError(f"--duration: must be > 0, got {spec.duration_s:g} s")
    bag, mcap = out_dir / f"{spec.name}.bag", out_dir / f"{spec.name}.mcap"
    for target in (bag, mcap):
        if target.exists() and not force:
            raise UsageError(f"{target}: already exists (use --force to replace it)")
    out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{spec.name}.partial-", dir=out_dir))
    try:
        _write_ros1(work / "recording.bag", spec)
        _convert_to_mcap(work / "recording.bag", work / "ros2")
        (work / "recording.bag").replace(bag)
        next((work / "ros2").glob("*.mcap")).replace(mcap)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return bag, mcap


def _write_ros1(path: Path, spec: ExampleSpec) -> None:
    if not Path(SYSTEM_PYTHON).exists():
        raise RunError(f"{SYSTEM_PYTHON}: not found; the example bag is written by Debian's "
                       f"rosbag (apt-get install {DEBIAN_PACKAGES})")
    args = [SYSTEM_PYTHON, str(WRITER), str(path), repr(spec.duration_s), str(spec.width),
            str(spec.height), str(spec.ranges), str(spec.seed)]
    done = subprocess.run(args, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        if "No module named" in last:
            raise RunError(f"{SYSTEM_PYTHON} lacks ROS 1's Python API ({last}); install it with "
                           f"scripts/system-deps.sh or apt-get install {DEBIAN_PACKAGES}")
        raise RunError(f"writing the example bag failed: {last}")


def _convert_to_mcap(bag: Path, folder: Path) -> None:
    from rosbags.convert import convert
    from rosbags.typesys import Stores, get_typestore

    convert(srcs=[bag], dst=folder, dst_storage="mcap", dst_version=8, compress=None,
            compress_mode="file", default_typestore=get_typestore(Stores.ROS1_NOETIC),
            typestore=None, exclude_topics=[], include_topics=[], exclude_msgtypes=[],
            include_msgtypes=[])


def example_bag() -> Path:
    """The example ROS 1 bag, written (with its MCAP twin) on first use."""
    bag = cache_dir() / f"{ExampleSpec().name}.bag"
    if not bag.is_file():
        write_example(cache_dir(), ExampleSpec(), force=True)
    return bag
