"""mwperf bag info / bag example: real recordings read by rosbags (ROS 1 bag, MCAP, rosbag2
folder), the example written by Debian's rosbag, and bad input as one line with exit 2.

tests/fixtures/bags/small.{bag,mcap} were made with
'mwperf bag example tests/fixtures/bags --duration 1s --image 80x60 --name small --seed 1'.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_inprocess import run_inprocess

from mwperf.bags.info import inspect, nearest_rank

FIXTURES = Path(__file__).parent / "fixtures" / "bags"
HAS_ROSBAG = subprocess.run(["/usr/bin/python3", "-c", "import rosbag, sensor_msgs.msg"],
                            capture_output=True).returncode == 0 if Path("/usr/bin/python3").exists() else False


def mwperf(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``mwperf ARGS`` (run in this process, as a child would run it: cli_inprocess)."""
    return run_inprocess(args, cwd=cwd)


@pytest.fixture(scope="module")
def rosbag2_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rosbags.convert import convert
    from rosbags.typesys import Stores, get_typestore

    out = tmp_path_factory.mktemp("r2") / "small-ros2"
    convert(srcs=[FIXTURES / "small.bag"], dst=out, dst_storage="sqlite3", dst_version=8,
            compress=None, compress_mode="file",
            default_typestore=get_typestore(Stores.ROS1_NOETIC), typestore=None,
            exclude_topics=[], include_topics=[], exclude_msgtypes=[], include_msgtypes=[])
    return out


@pytest.mark.parametrize("name", ["small.bag", "small.mcap", "rosbag2"])
def test_info_reads_every_format_alike(name: str, rosbag2_folder: Path) -> None:
    path = rosbag2_folder if name == "rosbag2" else FIXTURES / name
    info = inspect(path)
    assert info.format == {"small.bag": "ros1-bag", "small.mcap": "mcap"}.get(name, "rosbag2")
    by_topic = {t.topic: t for t in info.topics}
    assert set(by_topic) == {"/scan", "/camera/image_raw"}
    scan, image = by_topic["/scan"], by_topic["/camera/image_raw"]
    assert (scan.msgtype, scan.count) == ("sensor_msgs/msg/LaserScan", 40)
    assert (image.msgtype, image.count) == ("sensor_msgs/msg/Image", 30)
    assert 4000 <= scan.size_p50 <= 4100  # 1000 float32 ranges + the scan's fields
    assert 80 * 60 <= image.size_p50 <= 80 * 60 + 100
    assert scan.rate_hz == pytest.approx(40, rel=0.03)
    assert image.rate_hz == pytest.approx(30, rel=0.03)
    # recorded jitter: the gaps spread around the period, and none is 3x the median
    assert scan.gap_p50_ns == pytest.approx(25e6, rel=0.1)
    assert scan.gap_max_ns > scan.gap_p50_ns + 1e6 and scan.gaps == 0
    assert info.duration_ns == pytest.approx(1e9, rel=0.1)
    # header.stamp parsed from the raw bytes (ROS 1 and CDR alike): the writer records scans
    # 2 ms and images 5 ms after their stamp, plus jitter (sigma 1 ms and 2 ms)
    assert scan.age_p50_ns == pytest.approx(2e6, abs=1e6)
    assert image.age_p50_ns == pytest.approx(5e6, abs=2e6)


def test_info_cli_text_and_json() -> None:
    done = mwperf("bag", "info", str(FIXTURES / "small.bag"))
    assert done.returncode == 0, done.stderr
    assert "/camera/image_raw" in done.stdout and "sensor_msgs/msg/LaserScan" in done.stdout
    assert "ros1-bag" in done.stdout.splitlines()[0]
    done = mwperf("bag", "info", str(FIXTURES / "small.mcap"), "--topics", "/scan", "--json")
    doc = json.loads(done.stdout)
    assert [t["topic"] for t in doc["topics"]] == ["/scan"] and doc["count"] == 40


def test_gaps_counted_beyond_three_medians() -> None:
    from mwperf.bags.info import summarise

    times = [i * 10 for i in range(10)] + [200, 210]  # one 110-unit hole in a 10-unit stream
    info = summarise("/t", "x/msg/Y", times, [1] * len(times), 0)
    assert info.gaps == 1 and info.gap_max_ns == 110 and info.gap_p50_ns == 10
    assert nearest_rank([1, 2, 3, 4], 0.5) == 2 and nearest_rank([1, 2, 3, 4], 0.99) == 4


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "missing.bag", "missing.bag: no such file or folder"),
    (lambda d: _write(d / "notes.bag", b"hello world, not a bag"), "notes.bag: unknown format"),
    (lambda d: _write(d / "cut.bag", (FIXTURES / "small.bag").read_bytes()[:60000]),
     "cut.bag: cannot read this ros1-bag recording"),
    (lambda d: _write(d / "cut.mcap", (FIXTURES / "small.mcap").read_bytes()[:60000]),
     "cut.mcap: cannot read this mcap recording"),
    (lambda d: d, "a folder without metadata.yaml is not a rosbag2 recording"),
])
def test_bad_recording_is_one_line_exit_2(tmp_path: Path, make, message: str) -> None:
    done = mwperf("bag", "info", str(make(tmp_path)))
    assert done.returncode == 2 and done.stdout == ""
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_topic_not_recorded_names_it_and_the_topics_there() -> None:
    done = mwperf("bag", "info", str(FIXTURES / "small.mcap"), "--topics", "/scan,/odom")
    assert done.returncode == 2
    assert "'/odom' is not in" in done.stderr and "/camera/image_raw, /scan" in done.stderr


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def example_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not HAS_ROSBAG:
        pytest.fail("/usr/bin/python3 lacks python3-rosbag: run scripts/system-deps.sh")
    out = tmp_path_factory.mktemp("example")
    done = mwperf("bag", "example", str(out), "--duration", "2s")
    assert done.returncode == 0, done.stderr
    return out


def test_example_is_seed_000s_recording(example_dir: Path) -> None:
    assert sorted(p.name for p in example_dir.iterdir()) == ["example.bag", "example.mcap"]
    for name in ("example.bag", "example.mcap"):
        topics = {t.topic: t for t in inspect(example_dir / name).topics}
        image, scan = topics["/camera/image_raw"], topics["/scan"]
        assert 307_200 < image.size_p50 < 307_400  # 640x480 mono8: seed 000's 308 KB frames
        assert 4000 <= scan.size_p50 <= 4100  # ~4 KB scans
        assert (image.count, scan.count) == (60, 80)
        assert image.rate_hz == pytest.approx(30, rel=0.03)
        assert scan.rate_hz == pytest.approx(40, rel=0.03)
    # Debian's rosbag reads what it wrote, and sees a ROS 1 bag of the sensor_msgs types
    done = subprocess.run(["/usr/bin/python3", "-c",
                           "import rosbag,sys; b=rosbag.Bag(sys.argv[1]); "
                           "print(sorted(b.get_type_and_topic_info().msg_types))",
                           str(example_dir / "example.bag")], capture_output=True, text=True)
    assert done.stdout.strip() == "['sensor_msgs/Image', 'sensor_msgs/LaserScan']", done.stderr


def test_example_refuses_to_overwrite_and_bad_flags_write_nothing(example_dir: Path,
                                                                  tmp_path: Path) -> None:
    done = mwperf("bag", "example", str(example_dir), "--duration", "1s")
    assert done.returncode == 2 and "example.bag: already exists" in done.stderr
    for flags, word in ((["--duration", "0"], "--duration"), (["--duration", "-1s"], "--duration"),
                        (["--image", "640"], "--image"), (["--ranges", "0"], "--ranges")):
        done = mwperf("bag", "example", str(tmp_path / "out"), *flags)
        assert done.returncode == 2 and word in done.stderr, (flags, done.stderr)
        assert not (tmp_path / "out").exists()
    shutil.rmtree(tmp_path, ignore_errors=True)
